"""The out-of-band network: access switches where placement groups their racks' endpoints (BMCs, PDU,
switch and CDU management ports), their uplinks to an aggregation pair or to the frontend's service
leaves. Built once, by the placement stage, when the racks are known: sites put an access switch in
the racks it serves, so its ports follow the racks, not the device list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.plan import Device
from generators.model.sections import OobFacts
from generators.model.vocabulary import Network, Role, Tier
from generators.stages.fabric import Builder, eligible, native_speed

Endpoint = tuple[str, str]  # (device, its management port) on the out-of-band network
# a port kept in a group for an aggregation switch's management port (placement keeps them in the block
# of the rack the aggregation switches stand in; build_oob fills them)
AGG_SLOT: Endpoint = ("", "")


def sizing_group(groups: list[list[Endpoint | None]], agg_group: int) -> int:
    """The group the aggregation switches' management ports are still to be added to: -1 when placement
    already kept their ports (AGG_SLOT) in their rack's block."""
    return -1 if agg_group < 0 or AGG_SLOT in groups[agg_group] else agg_group


def oob_port(catalog: Catalog, dev: Device) -> str | None:
    """The management port a device connects to the out-of-band network with (None: it has none here).
    OOB switches are managed in-band through their uplinks."""
    if dev.kind in ("server", "management"):
        return catalog.servers[dev.model].bmc_port
    if dev.kind == "storage":
        return catalog.storage_servers[dev.model].bmc_port
    if dev.kind == "pdu":
        return catalog.pdus[dev.model].mgmt_port
    if dev.kind == "cdu":
        return catalog.cdus[dev.model].mgmt_port
    if dev.kind == "switch" and dev.network in ("backend", "frontend", "storage", "nvlink"):
        return catalog.switches[dev.model].mgmt_port
    return None


def oob_sizing(catalog: Catalog, design: Design, sizes: list[int], agg_group: int) -> tuple[int, int]:
    """(access switches per aggregation pair, aggregation pairs) for groups of `sizes` endpoints.
    Access switches hang off aggregation pairs, half their uplinks to each switch of the pair; the
    aggregation switches' own management ports need access ports too (in group `agg_group`), so the
    two are sized together."""
    oob = design.oob
    if oob.uplink == "frontend":
        return 0, 0  # the access switches uplink into the frontend's service leaves: no aggregation pair
    model = catalog.switches[oob.switch]
    agg_key = oob.aggregation_switch or design.frontend.spine_switch or design.frontend.switch
    down_speed = min(g.speed_gbps for g in model.port_groups if g.role in ("down", "any"))
    downs = len(eligible(model, down_speed, "down"))
    agg_ports = len(eligible(catalog.switches[agg_key], native_speed(model, "up"), "down"))
    per_pair = max(1, agg_ports // math.ceil(oob.uplinks_per_switch / 2))
    n_pairs = 1
    for _ in range(8):
        n_sw = sum(math.ceil((s + (2 * n_pairs if i == agg_group else 0)) / downs) for i, s in enumerate(sizes))
        if math.ceil(n_sw / per_pair) == n_pairs:
            break
        n_pairs = math.ceil(n_sw / per_pair)
    return per_pair, n_pairs


@dataclass(frozen=True, slots=True)
class Host:
    """Where a group's access switches stand: the host rack's name, and the numbers kept for them (the
    first; placement.oob.switch_numbers gives each window of the floor its own)."""

    rack: str
    first: int


def build_oob(
    b: Builder, design: Design, groups: list[list[Endpoint | None]], agg_group: int, hosts: list[Host]
) -> OobFacts:
    """Access switches and their aggregation pairs, for placement's rack-local `groups` (one or more
    access switches per group, tagged with attrs["group"]): an endpoint takes the access port of its
    position in the group, `None` leaves that port free. The aggregation switches' own management
    ports join group `agg_group`, the group of the rack they will stand in, after its endpoints.

    An access switch is named after the rack it stands in (`oob-<rack>`, the rack's second and later
    switches `oob-<rack>-2`, ...) and numbered by that rack's slot on the floor (attrs["index"]: its
    ASN, loopback and subnets follow), never by how many switches come before it: a grown site adds
    switches and renames or renumbers none (an ordinal oob07 became oob08 when a rack was added in an
    earlier row)."""
    oob = design.oob
    model = b.catalog.switches[oob.switch]
    agg_key = oob.aggregation_switch or design.frontend.spine_switch or design.frontend.switch
    agg_model = b.catalog.switches[agg_key]
    down_speed = min(g.speed_gbps for g in model.port_groups if g.role in ("down", "any"))
    up_speed = native_speed(model, "up")
    groups = [list(g) for g in groups]
    endpoints = sum(e is not None for g in groups for e in g)
    downs = eligible(model, down_speed, "down")
    ups = [i for i in eligible(model, up_speed, "up") if i not in set(downs)][: oob.uplinks_per_switch]
    agg_ports = eligible(agg_model, up_speed, "down")
    extra_group = sizing_group(groups, agg_group)
    per_pair, n_pairs = oob_sizing(b.catalog, design, [len(g) for g in groups], extra_group)
    aggs = [
        b.switch(f"oob-agg{i + 1}", agg_key, Network.OOB, Role.SPINE, index=i + 1, pair=i // 2 + 1)
        for i in range(2 * n_pairs)
    ]
    if aggs:
        mine = [(a.name, agg_model.mgmt_port) for a in aggs]
        grp = groups[agg_group]
        for k, ep in enumerate(grp):
            if ep == AGG_SLOT:
                grp[k] = mine.pop(0) if mine else None
        grp += mine
    for g in groups:  # kept slots no aggregation switch took (none when placement sized them)
        g[:] = [None if ep == AGG_SLOT else ep for ep in g]
    agg_next = [0] * len(aggs)
    leaf_ports = _service_leaf_ports(b, up_speed) if oob.uplink == "frontend" else {}
    service = list(leaf_ports)
    uplink_no = cursor = 0
    used: dict[str, int] = {}
    n = 0
    for gi, group in enumerate(groups):
        host = hosts[gi]
        for c in range(math.ceil(len(group) / len(downs))):
            j = used.get(host.rack, 0)
            used[host.rack] = j + 1
            name = f"oob-{host.rack}" if j == 0 else f"oob-{host.rack}-{j + 1}"
            sw = b.switch(name, oob.switch, Network.OOB, Role.LEAF, index=host.first + c, group=gi)
            for k, ep in enumerate(group[c * len(downs) : (c + 1) * len(downs)]):
                if ep is None:
                    continue
                dev, port = ep
                b.link(Network.OOB, Tier.MGMT_ACCESS, down_speed, dev, port, sw.name, b.port_name(sw.name, downs[k]))
            if oob.uplink == "frontend":
                # round robin over the service leaves that have a free port left, so a switch's
                # uplinks land on different leaves (both sides of a pair) and switches spread evenly
                for u in range(oob.uplinks_per_switch):
                    k = next((k for k in range(len(service)) if leaf_ports[service[(cursor + k) % len(service)]]), 0)
                    leaf = service[(cursor + k) % len(service)]
                    cursor = (cursor + k + 1) % len(service)
                    uplink_no += 1
                    free = leaf_ports[leaf]
                    lmodel = b.catalog.switches[b.by_name[leaf].model]
                    # past the free ports: an overflow port, which the invariants refuse with the fix
                    idx = free.pop(0) if free else lmodel.ports + uplink_no
                    up_idx = ups[u] if u < len(ups) else model.ports + u
                    b.link(
                        Network.OOB,
                        Tier.ACCESS_LEAF,
                        up_speed,
                        sw.name,
                        b.port_name(sw.name, up_idx),
                        leaf,
                        b.port_name(leaf, idx),
                    )
                n += 1
                continue
            pair = n // per_pair
            for u in range(oob.uplinks_per_switch):
                a = 2 * pair + u % 2
                idx = agg_ports[agg_next[a]] if agg_next[a] < len(agg_ports) else agg_model.ports + agg_next[a]
                agg_next[a] += 1
                up_idx = ups[u] if u < len(ups) else model.ports + u
                b.link(
                    Network.OOB,
                    Tier.ACCESS_AGG,
                    up_speed,
                    sw.name,
                    b.port_name(sw.name, up_idx),
                    aggs[a].name,
                    b.port_name(aggs[a].name, idx),
                )
            n += 1
    return OobFacts(
        switch=oob.switch,
        aggregation_switch=agg_key if oob.uplink == "aggregation" else None,
        access_switches=n,
        aggregation_switches=len(aggs),
        endpoints=endpoints + len(aggs),
        uplinks_per_switch=oob.uplinks_per_switch,
        uplink_speed_gbps=up_speed,
    )


def _service_leaf_ports(b: Builder, speed: int) -> dict[str, list[int]]:
    """The frontend service leaves (storage and management nodes) and their free ports that run
    `speed`, in port order: where OOB access switches uplink with oob.uplink: frontend. Service leaves
    carry every network's VLANs (storage trunks), so the infra VRF the uplinks join is on each."""
    used = {(lk.a_device, lk.a_port) for lk in b.links} | {(lk.b_device, lk.b_port) for lk in b.links}
    out: dict[str, list[int]] = {}
    for d in b.devices:
        if d.kind == "switch" and d.network == "frontend" and d.role == "leaf" and d.attrs.get("service"):
            model = b.catalog.switches[d.model]
            out[d.name] = [i for i in eligible(model, speed, "down") if (d.name, b.port_name(d.name, i)) not in used]
    return out
