"""What racks a design needs, block by block: compute and leaf racks by the placement strategy, then
spine, core, frontend, storage and management racks, the same for every strategy."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.errors import DesignError
from generators.model.geometry import device_size
from generators.model.plan import Device, Plan
from generators.model.planes import device_plane, plane_order
from generators.stages.placement.racks import (
    Block,
    Item,
    Limits,
    Rack,
    pack,
    role_limits,
)
from generators.stages.placement.strategies import STRATEGIES, BackendInputs


@dataclass(slots=True)
class Contents:
    blocks: list[Block]
    central: list[Rack]
    agg_rack: Rack | None  # the rack of the OOB aggregation switches (None: oob.uplink: frontend)
    cdus: list[Rack] = field(default_factory=list)  # in-row CDU positions, made as the rows are filled
    sidecars: list[Rack] = field(default_factory=list)  # power sidecar positions, made as the rows are filled


def rack_contents(plan: Plan, design: Design, catalog: Catalog, lim: Limits, n_aggs: int) -> Contents:
    devs = plan.devices
    size = {d.name: device_size(catalog, d) for d in devs if d.kind != "pdu"}

    def item(name: str) -> Item:
        u, kw = size[name]
        return Item(name, u, kw)

    leaves = [d for d in devs if d.kind == "switch" and d.network == "backend" and d.role == "leaf"]
    # a block is a pod's units; a unit whose rails are pods of their own (backend.pods: rail_groups) is one
    # block with all its groups' spines, so the unit keeps one network row (a block per rail group would
    # leave blocks with spines and no compute)
    first_pod: dict[int, int] = {}
    for lf in leaves:
        su = lf.attrs["su"]
        first_pod[su] = min(first_pod.get(su, lf.attrs.get("pod", 1)), lf.attrs.get("pod", 1))
    rank = {p: i for i, p in enumerate(sorted(set(first_pod.values())))}
    su_block = {su: rank[p] for su, p in first_pod.items()}
    pod_block = {lf.attrs["pod"]: su_block[lf.attrs["su"]] for lf in leaves if "pod" in lf.attrs}
    n_blocks = max(su_block.values(), default=0) + 1
    servers = [d for d in devs if d.kind == "server"]
    block_of_server = {s.name: su_block.get(s.attrs["su"], 0) for s in servers}

    blocks = [Block(i, [], [], [], []) for i in range(n_blocks)]
    if design.compute.system is not None:
        _system_racks(plan, design, catalog, blocks, block_of_server)
    # compute racks
    srv = catalog.servers[design.compute.server]
    by_power = math.floor((lim.kw + 1e-9) / srv.power_kw)
    by_units = lim.units // srv.rack_units
    # a rack's endpoints (BMCs and PDUs) must fit one access switch
    cap = min(by_power, by_units, lim.endpoints, design.site.rack.servers_per_rack or by_units)
    if cap < 1 and design.compute.system is None:
        field_ = "site.rack.power_kw" if by_power < 1 else "site.rack.units"
        raise DesignError.one(
            field_,
            f"one {design.compute.server} ({srv.power_kw} kW, {srv.rack_units}U) does not "
            f"fit a rack of {design.site.rack.power_kw} kW / {design.site.rack.units}U (the top "
            f"unit and {design.site.rack.power_kw - lim.kw:.2f} kW are kept for the out-of-band "
            "switch)",
            "provision bigger racks",
        )
    STRATEGIES[design.backend.placement].racks(
        BackendInputs(plan, design, lim, item, leaves, servers, su_block, block_of_server, blocks, cap)
    )
    spines = _by_index([d for d in devs if d.kind == "switch" and d.network == "backend" and d.role == "spine"])
    # with a network row per plane, each plane's spines in racks of their own (`Rack.plane`)
    by_plane = design.site.network_rows == "per_plane"
    for b in range(n_blocks):
        block_spines = [s for s in spines if pod_block.get(s.attrs.get("pod", 1), 0) == b]
        for plane in sorted({device_plane(s) if by_plane else "" for s in block_spines}, key=plane_order):
            ones = [[item(s.name)] for s in block_spines if (device_plane(s) if by_plane else "") == plane]
            racks = pack(ones, role_limits(lim, design, catalog, "spine"), "spine", b)
            for r in racks:
                r.plane = plane
            blocks[b].spines += racks
    cores = [[item(d.name)] for d in devs if d.kind == "switch" and d.network == "backend" and d.role == "core"]

    # frontend: leaves serving compute servers go to their servers' block
    fe_block: dict[str, int] = {}
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier == "server-leaf" and lk.a_device in block_of_server:
            fe_block.setdefault(lk.b_device, block_of_server[lk.a_device])
    fe = [d for d in devs if d.kind == "switch" and d.network == "frontend"]
    for b in range(n_blocks):
        mine = [[item(d.name)] for d in fe if d.role == "leaf" and fe_block.get(d.name) == b]
        blocks[b].others = pack(mine, role_limits(lim, design, catalog, "frontend"), "frontend", b)
    agg_model = catalog.switches[
        design.oob.aggregation_switch or design.frontend.spine_switch or design.frontend.switch
    ]
    # the central frontend rack(s): service leaves, the OOB aggregation switches, then the spines and
    # cores, which grow with the site, last (so a grown site adds spines above the others)
    aggs = [Item(f"oob-agg{i + 1}", agg_model.rack_units, agg_model.power_w / 1000) for i in range(n_aggs)]
    central_fe = [[item(d.name)] for d in fe if d.role == "leaf" and d.name not in fe_block]
    central_fe += [[a] for a in aggs]
    central_fe += [[item(d.name)] for d in fe if d.role != "leaf"]
    fe_racks = pack(central_fe, role_limits(lim, design, catalog, "frontend"), "frontend")
    central: list[Rack] = list(fe_racks)
    # a dedicated storage fabric's leaves and spines: network racks of their own, beside the storage
    # servers they serve (rack role storage, so the PDU rules of the storage racks apply)
    # the storage fabric's switches: the service leaves and spines, whose counts a scalable unit does not
    # change, below the leaves (a pair per unit), which a grown site appends above them
    stor = [d for d in devs if d.kind == "switch" and d.network == "storage"]
    stor = sorted(stor, key=lambda d: 0 if d.attrs.get("service") else 1 if d.role == "spine" else 2)
    central += pack([[item(d.name)] for d in stor], role_limits(lim, design, catalog, "storage"), "storage")
    for kind in ("storage", "management"):
        for r in pack([[item(d.name)] for d in devs if d.kind == kind], role_limits(lim, design, catalog, kind), kind):
            r.layout = "bottom"
            central.append(r)
    # the backend cores last, farthest from the anchor: a pod added to a three-tier fabric adds cores, and
    # racks placed after them would move (4 one-unit pods -> 5 moved 23 frontend and storage devices)
    central += pack(cores, role_limits(lim, design, catalog, "core"), "core")
    agg_rack = next((r for r in fe_racks if any(a in r.items for a in aggs)), None)
    return Contents(blocks, central, agg_rack)


def _by_index(spines: list[Device]) -> list[Device]:
    """Spines in the order they stack: pod by pod, by their index within their plane (or rail group), the planes
    interleaved (plane1-spine01, plane2-spine01, plane1-spine02, ...). A scalable unit adds the same
    number of spines to every plane, at the end of each: plane by plane, plane1's new spines pushed
    every plane2 spine up a slot; interleaved, they come after every spine that stands."""
    first: dict[str, int] = {}
    for d in spines:
        first.setdefault(str(d.attrs.get("plane", "")), len(first))
    return sorted(
        spines,
        key=lambda d: (
            int(d.attrs.get("pod", 0)),
            int(d.attrs.get("index", 0)),
            first[str(d.attrs.get("plane", ""))],
        ),
    )


def _system_racks(
    plan: Plan, design: Design, catalog: Catalog, blocks: list[Block], block_of_server: dict[str, int]
) -> None:
    """One rack per rack-system rack, with its fixed contents bottom-up: the compute trays, the NVLink
    switch trays, the power shelves; its management switches (the OOB access switches) go on top."""
    assert design.compute.system is not None
    rs = catalog.rack_systems[design.compute.system]
    by_rack: dict[int, list[Item]] = defaultdict(list)
    servers = [d for d in plan.devices if d.kind == "server"]
    first: dict[int, str] = {}
    for i, d in enumerate(servers):
        k = i // rs.trays + 1
        first.setdefault(k, d.name)
        m = catalog.servers[d.model]
        by_rack[k].append(Item(d.name, m.rack_units, m.power_kw))
    for d in plan.devices:
        if d.network == "nvlink":
            sw = catalog.switches[d.model]
            by_rack[d.attrs["system_rack"]].append(Item(d.name, sw.rack_units, sw.power_w / 1000))
    for d in plan.devices:
        if d.role == "power-shelf":
            by_rack[d.attrs["system_rack"]].append(Item(d.name, catalog.pdus[d.model].rack_units, 0.0))
    for k in sorted(by_rack):
        b = block_of_server[first[k]]
        blocks[b].compute.append(
            Rack("compute", by_rack[k], b, layout="bottom", pdus=0, mgmt_switches=rs.mgmt_switches)
        )


def all_racks(c: Contents) -> list[Rack]:
    out: list[Rack] = []
    for b in c.blocks:
        out += b.compute + b.leaves + b.spines + b.others
    out += c.central + c.cdus + c.sidecars
    return out
