"""The out-of-band network's rack-local groups: which endpoints of which racks share one access switch."""

from __future__ import annotations

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.plan import Plan
from generators.stages.oob import Endpoint, oob_port
from generators.stages.placement.racks import (
    Limits,
    Rack,
    max_pdus_per_rack,
    pdu_name,
    rack_pdus,
    stack_units,
)


def oob_groups(
    racks: list[Rack], agg_rack: Rack | None, plan: Plan, catalog: Catalog, design: Design, lim: Limits
) -> tuple[list[list[Endpoint | None]], list[list[Rack]], int]:
    """Endpoint groups, one access switch each: neighbouring racks of one row, as many as the
    switch's ports (and oob.racks_per_switch) allow. A rack's endpoints are numbered so that a port
    does not change when an unrelated device comes or goes: its PDUs first (a rack always has them),
    then its devices bottom-up by unit (placement keeps the units of devices that stay). A group of
    several racks on one switch gives each rack a fixed block of ports (the switch's ports split
    evenly, rack k from port k * block), so a rack that loses a device does not renumber its
    neighbours; `None` marks a port of a block left free. The fallback, when a rack needs more than
    its even share or the group holds the aggregation switches (whose management ports are added
    last, possibly onto a second switch), numbers the racks one after the other."""
    devs = {d.name: d for d in plan.devices}
    pdu_port = catalog.pdus[design.site.rack.pdu].mgmt_port
    per_rack: dict[str, list[Endpoint]] = {}
    counts: dict[str, int] = {}
    for r in racks:
        eps: list[Endpoint] = [(pdu_name(design, r.name, k), pdu_port) for k in range(rack_pdus(design, catalog, r))]
        n_agg = 0
        for it, _u in sorted(stack_units(r, design.site.rack.units, lim), key=lambda iu: iu[1]):
            d = devs.get(it.name)
            if d is None:  # an aggregation switch, created with the OOB network
                n_agg += 1
                continue
            port = oob_port(catalog, d)
            if port is not None:
                eps.append((d.name, port))
        per_rack[r.name] = eps
        counts[r.name] = len(eps) + n_agg
    ports = lim.endpoints + max_pdus_per_rack(design, catalog)
    limit_racks = design.oob.racks_per_switch or 10**9
    ordered = sorted(racks, key=lambda r: (r.row, r.position))
    group_racks: list[list[Rack]] = []
    agg_group = 0 if agg_rack is not None else -1  # -1: no group holds aggregation switches
    cur_n = 0
    split: dict[int, list[Endpoint]] = {}  # group -> its share of a rack system's rack
    for r in ordered:
        prev = group_racks[-1][-1] if group_racks else None
        if r.role == "cdu" and prev is not None and prev.row == r.row and (len(group_racks) - 1) in split:
            # an in-row CDU's management port goes to the management switch of the rack beside it (a CDU
            # position has no access switch of its own)
            split[len(group_racks) - 1] += per_rack[r.name]
            continue
        if r.mgmt_switches:
            # its own management switches serve it alone, the endpoints dealt evenly bottom-up
            eps, n = per_rack[r.name], r.mgmt_switches
            size = -(-len(eps) // n)
            for j in range(n):
                split[len(group_racks)] = eps[j * size : (j + 1) * size]
                group_racks.append([r])
            cur_n = ports  # the next rack starts a group of its own
            continue
        if (
            not group_racks
            or group_racks[-1][-1].row != r.row
            or cur_n + counts[r.name] > ports
            or len(group_racks[-1]) >= limit_racks
            or group_racks[-1][-1].mgmt_switches
        ):
            group_racks.append([])
            cur_n = 0
        group_racks[-1].append(r)
        cur_n += counts[r.name]
        if r is agg_rack:
            agg_group = len(group_racks) - 1
    groups: list[list[Endpoint | None]] = []
    for gi, grp in enumerate(group_racks):
        if gi in split:
            groups.append(list(split[gi]))
            continue
        block = ports // len(grp)
        blocks = gi != agg_group and len(grp) > 1 and all(counts[r.name] <= block for r in grp)
        out: list[Endpoint | None] = []
        for k, r in enumerate(grp):
            if blocks:
                out += [None] * (k * block - len(out))
            out += per_rack[r.name]
        groups.append(out)
    return groups, group_racks, agg_group
