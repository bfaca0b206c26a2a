"""The out-of-band network's rack-local groups: which endpoints of which racks share one access switch."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.plan import Plan
from generators.stages.oob import AGG_SLOT, Endpoint, oob_port
from generators.stages.placement.racks import (
    FLOOR_UNITS,
    Limits,
    Rack,
    max_pdus_per_rack,
    pdu_name,
    rack_pdus,
)


@dataclass(slots=True)
class OobGroups:
    groups: list[list[Endpoint | None]]  # each group's endpoints by access port, None: a port left free
    racks: list[list[Rack]]  # each group's racks
    agg_group: int  # the group of the aggregation switches' rack (-1: none)
    hosts: list[Rack]  # the rack each group's access switch stands in
    window: dict[int, int]  # row index -> positions per window (1: a switch per rack)


def oob_groups(
    racks: list[Rack], agg_rack: Rack | None, plan: Plan, catalog: Catalog, design: Design, lim: Limits
) -> OobGroups:
    """Endpoint groups, one access switch each: the racks of one window of neighbouring positions of a
    row (see below). A rack's endpoints are numbered so that a port does not change when an unrelated
    device comes or goes: its PDUs first (a rack always has them), then its devices in the rack's
    order (servers bottom-up, switches by index: the order they are added in as the site grows; an
    aggregation switch's management port, made with the OOB network, is kept as `AGG_SLOT` in its
    place and filled by `build_oob`). Each rack of a window has a fixed block of the switch's ports
    (the ports split evenly over the window's positions, position j from port j * block), so a rack
    that loses or gains a device, or a rack added beside it, does not renumber its neighbours; `None`
    marks a port of a block left free."""
    devs = {d.name: d for d in plan.devices}
    pdu_port = catalog.pdus[design.site.rack.pdu].mgmt_port
    per_rack: dict[str, list[Endpoint]] = {}
    counts: dict[str, int] = {}
    for r in racks:
        eps: list[Endpoint] = [(pdu_name(design, r.name, k), pdu_port) for k in range(rack_pdus(design, catalog, r))]
        # in the rack's order (the order its items grow in), not by unit: a full switch stack continues
        # below its anchor, so a switch added to the rack can take a lower unit than those that stand
        for it in r.items:
            d = devs.get(it.name)
            if d is None:  # an aggregation switch, created with the OOB network: its port kept in place
                eps.append(AGG_SLOT)
                continue
            port = oob_port(catalog, d)
            if port is not None:
                eps.append((d.name, port))
        per_rack[r.name] = eps
        counts[r.name] = len(eps)
    ports = lim.endpoints + max_pdus_per_rack(design, catalog)
    limit_racks = design.oob.racks_per_switch or 10**9
    ordered = sorted(racks, key=lambda r: (r.row, r.position))
    # the racks of a row share access switches by windows of `k` positions (position // k), k the most
    # racks of the row's fullest kind one switch takes: a rack's group, its port block (ports // k, from
    # its offset in the window) and so its ports and addresses depend on its own position only, and a
    # rack added to the row (a grown site) joins its window's switch or gets a new one, never renumbering
    # the racks that stand. Racks beyond one switch's ports, and the racks of rack systems (their own
    # management switches), keep a group each.
    row_max: dict[int, int] = defaultdict(int)
    for r in ordered:
        if r.role not in FLOOR_UNITS and not r.mgmt_switches:
            row_max[r.row] = max(row_max[r.row], counts[r.name])
    # a row of compute racks holds racks of one size (servers per rack is fixed by power and units), so
    # its window is as many racks as one switch takes; the other rows' racks fill as the site grows (a
    # leaf rack takes the next unit's leaves, up to a switch's ports), so each has a switch of its own
    compute_row = {r.row: True for r in ordered}
    for r in ordered:
        if r.role != "compute" and r.role not in FLOOR_UNITS:
            compute_row[r.row] = False
    window = {row: max(1, min(limit_racks, ports // m)) if m and compute_row[row] else 1 for row, m in row_max.items()}
    group_racks: list[list[Rack]] = []
    group_key: list[tuple[int, int]] = []
    agg_group = -1  # -1: no group holds aggregation switches
    split: dict[int, list[Endpoint]] = {}  # group -> its share of a rack system's rack
    for r in ordered:
        prev = group_racks[-1][-1] if group_racks else None
        if r.role in FLOOR_UNITS and prev is not None and prev.row == r.row and (len(group_racks) - 1) in split:
            # an in-row CDU's or power sidecar's management port goes to the management switch of the rack
            # beside it (such a position has no access switch of its own)
            split[len(group_racks) - 1] += per_rack[r.name]
            continue
        if r.mgmt_switches:
            # its own management switches serve it alone, the endpoints dealt evenly bottom-up
            eps, n = per_rack[r.name], r.mgmt_switches
            size = -(-len(eps) // n)
            for j in range(n):
                split[len(group_racks)] = eps[j * size : (j + 1) * size]
                group_racks.append([r])
                group_key.append((r.row, -1))
            continue
        k = window.get(r.row, 1)
        # a rack beyond its block of the window's switch: a switch of its own
        alone = counts[r.name] > ports // k
        key = (r.row, -1 if alone else r.position // k)
        if not group_racks or group_key[-1] != key or alone:
            group_racks.append([])
            group_key.append(key)
        group_racks[-1].append(r)
        if r is agg_rack:
            agg_group = len(group_racks) - 1
    groups: list[list[Endpoint | None]] = []
    for gi, grp in enumerate(group_racks):
        if gi in split:
            groups.append(list(split[gi]))
            continue
        row, w = group_key[gi]
        k = window.get(row, 1)
        block = ports // k
        out: list[Endpoint | None] = []
        for r in grp:
            if w >= 0 and k > 1:
                out += [None] * ((r.position - w * k) * block - len(out))
            out += per_rack[r.name]
        groups.append(out)
    hosts = [_host(grp, key) for grp, key in zip(group_racks, group_key, strict=True)]
    return OobGroups(groups, group_racks, agg_group, hosts, window)


def _host(grp: list[Rack], key: tuple[int, int]) -> Rack:
    """The rack a group's access switch stands in: the window's first rack of its kind (`Rack.seq`, then
    the lower position). Each kind of rack grows away from its first (compute rows from their start,
    spine racks from the row's end, ...), so a rack added to a window never takes the switch (a
    middle rack moved the switch whenever the window filled up). A group of its own (a rack
    beyond one switch, a rack system's management switch): its middle rack."""
    if key[1] < 0:
        return grp[len(grp) // 2]
    return min(grp, key=lambda r: (r.seq, r.position))


def switch_numbers(og: OobGroups, positions: list[int], ports: int) -> list[tuple[int, int]]:
    """(first number, numbers kept) of each group's access switches: the number of its host rack's
    position on the floor. Row by row, each row keeps a number per position (times the most switches
    one rack of the row hosts: 2 for a rack system's pair), so a switch's number depends on the rows
    before it and its own rack's position, never on how many switches there are nor on how racks share
    them (oob.racks_per_switch): a rack added anywhere renumbers none."""
    per_rack: dict[tuple[int, int], int] = defaultdict(int)
    for grp, host in zip(og.groups, og.hosts, strict=True):
        per_rack[(host.row, host.position)] += max(1, -(-len(grp) // ports))
    most: dict[int, int] = defaultdict(lambda: 1)
    for (row, _), n in per_rack.items():
        most[row] = max(most[row], n)
    base, total = [], 0
    for i, n in enumerate(positions):
        base.append(total)
        total += n * most[i]
    out: list[tuple[int, int]] = []
    used: dict[tuple[int, int], int] = defaultdict(int)
    for grp, host in zip(og.groups, og.hosts, strict=True):
        key = (host.row, host.position)
        n = max(1, -(-len(grp) // ports))
        out.append((base[host.row] + host.position * most[host.row] + used[key] + 1, n))
        used[key] += n
    return out
