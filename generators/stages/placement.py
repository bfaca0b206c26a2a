"""Placement: the floor (rows of rack positions, aisles, keep-outs), racks by role, every device in a
rack and rack unit, PDUs, and the out-of-band network rewired rack-locally.

Where things stand decides what the cables can be, so this stage only places; `generators.stages.cabling`
measures the routes and picks the media from what it finds here. The layout is built from blocks:

* a block is one fabric's scalable units (2-tier) or one pod (3-tier): its compute rows, split in
  two halves around the block's network row;
* the network row holds the block's backend leaf racks, centred in the row, and its spine racks,
  placed by `site.spine_rack_position`: `middle` between the two halves of the leaf racks (the
  playbook's virtual modular switch), `end`/`start` at the end of the row (dedicated network racks,
  NVIDIA's reference); top-of-rack leaves stand mid-rack among their servers instead;
* central racks (backend cores, frontend spines and service leaves, OOB aggregation, storage,
  management) fill the free positions of the middle block's network row, then rows of their own.

Rows are either generated (`site.floor.row_positions` per row, blocks in columns so the hall stays
roughly square) or given in `site.rows`, filled in order. Keep-outs block the positions they cover.
"""

from __future__ import annotations

import math
import typing
from collections import defaultdict
from dataclasses import dataclass, field

from generators.model.catalog import Catalog
from generators.model.design import Design, RackRole, rack_model_key
from generators.model.errors import DesignError, Problem
from generators.model.geometry import device_size, rack_height_mm
from generators.model.plan import Device, Plan
from generators.model.sections import CduPlacement, Cooling, Floor, FloorRow, PlanWarning, RackHeat, RowHeat
from generators.model.sections import Rack as RackRecord
from generators.stages.fabric import Builder, Endpoint, build_oob, eligible, oob_port, oob_sizing

ROLES: tuple[str, ...] = typing.get_args(RackRole)


@dataclass(slots=True)
class Item:
    """Something that takes rack units and power."""

    name: str
    units: int
    kw: float


@dataclass(slots=True)
class Rack:
    role: str
    items: list[Item]
    block: int = -1  # -1: central
    name: str = ""
    row: int = -1
    position: int = -1  # 0-based
    layout: str = "centre"  # how items stack: bottom, centre, tor
    pdus: int | None = None  # None: by role (site.rack.pdus); 0: a rack system's rack, fed by its power shelves
    mgmt_switches: int = 0  # a rack system's in-rack management switches: its own OOB access switches

    @property
    def kw(self) -> float:
        return sum(i.kw for i in self.items)

    @property
    def units(self) -> int:
        return sum(i.units for i in self.items)


@dataclass(slots=True)
class RowGeom:
    name: str
    positions: int
    x_mm: float
    y_mm: float
    index: int  # in site.rows (manual) or generation order (auto)
    column: int = 0
    blocked: set[int] = field(default_factory=set)

    def free(self) -> list[int]:
        return [i for i in range(self.positions) if i not in self.blocked]


@dataclass(slots=True)
class Block:
    index: int
    compute: list[Rack]
    leaves: list[Rack]
    spines: list[Rack]
    others: list[Rack]  # frontend leaf racks serving the block


# ------------------------------------------------------------------------------------------ helpers


def rack_pdus(design: Design, catalog: Catalog, rack: Rack) -> int:
    """PDUs of this rack: a rack system's none (its power shelves are devices of the rack), else by role."""
    return pdus_per_rack(design, catalog, rack.role) if rack.pdus is None else rack.pdus


def pdus_per_rack(design: Design, catalog: Catalog, role: str) -> int:
    """PDUs of a rack of `role` (site.rack.pdus: one count, a count per role, or unset)."""
    r = design.site.rack
    if isinstance(r.pdus, int):
        return r.pdus
    if isinstance(r.pdus, dict) and role in r.pdus:
        return r.pdus[role]  # type: ignore[index]  # role is one of RackRole
    # A and B feeds, each alone carrying the rack's budget (N+N)
    return 2 * math.ceil(r.power_kw / catalog.pdus[r.pdu].capacity_kw)


def max_pdus_per_rack(design: Design, catalog: Catalog) -> int:
    """The most PDUs any rack has: what a rack's OOB port budget must leave room for."""
    return max(pdus_per_rack(design, catalog, role) for role in ROLES)


def pdu_field(design: Design, role: str) -> str:
    """The design field that set a rack's PDU count, for error messages."""
    pdus = design.site.rack.pdus
    return f"site.rack.pdus.{role}" if isinstance(pdus, dict) and role in pdus else "site.rack.pdus"


@dataclass(slots=True)
class Limits:
    units: int  # usable for devices (the top unit is kept for the OOB access switch)
    kw: float  # usable for devices (the OOB access switch's power is kept)
    endpoints: int  # OOB endpoints a rack may have, so one access switch port block covers it


def _limits(design: Design, catalog: Catalog) -> Limits:
    r = design.site.rack
    oob = catalog.switches[design.oob.switch]
    down_speed = min(g.speed_gbps for g in oob.port_groups if g.role in ("down", "any"))
    ports = len(eligible(oob, down_speed, "down"))
    return Limits(
        r.units - oob.rack_units, r.power_kw - oob.power_w / 1000, max(1, ports - max_pdus_per_rack(design, catalog))
    )


def pack(groups: list[list[Item]], lim: Limits, role: str, block: int = -1) -> list[Rack]:
    """Fill racks in order, keeping each group (e.g. one scalable unit's leaves) in one rack when it
    fits. Racks of single items are then balanced so 32 spines become 16 + 16, not 23 + 9."""
    racks: list[list[Item]] = []
    cur: list[Item] = []

    def fits(items: list[Item]) -> bool:
        return (
            sum(i.units for i in items) <= lim.units
            and sum(i.kw for i in items) <= lim.kw + 1e-9
            and len(items) <= lim.endpoints
        )

    for g in groups:
        if fits(cur + g):
            cur += g
            continue
        if cur:
            racks.append(cur)
            cur = []
        if fits(g):
            cur = list(g)
            continue
        for it in g:
            if not fits([*cur, it]):
                racks.append(cur)
                cur = []
            cur.append(it)
    if cur:
        racks.append(cur)
    if racks and all(len(g) == 1 for g in groups):
        items = [g[0] for g in groups]
        n = len(racks)
        size, extra = divmod(len(items), n)
        chunks, k = [], 0
        for i in range(n):
            step = size + (1 if i < extra else 0)
            chunks.append(items[k : k + step])
            k += step
        if all(fits(c) for c in chunks):
            racks = chunks
    return [Rack(role, r, block) for r in racks]


# ------------------------------------------------------------------------------------------ contents


@dataclass(slots=True)
class Contents:
    blocks: list[Block]
    central: list[Rack]
    agg_rack: Rack | None  # the rack of the OOB aggregation switches (None: oob.uplink: frontend)
    cdus: list[Rack] = field(default_factory=list)  # in-row CDU positions, made as the rows are filled


def _contents(plan: Plan, design: Design, catalog: Catalog, lim: Limits, n_aggs: int) -> Contents:
    devs = plan.devices
    size = {d.name: device_size(catalog, d) for d in devs if d.kind != "pdu"}

    def item(name: str) -> Item:
        u, kw = size[name]
        return Item(name, u, kw)

    be = design.backend
    tor = be.topology == "top_of_rack"
    leaves = [d for d in devs if d.kind == "switch" and d.network == "backend" and d.role == "leaf"]
    su_block: dict[int, int] = {}
    for lf in leaves:
        su_block[lf.attrs["su"]] = lf.attrs.get("pod", 1) - 1
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
    if tor:
        by_leaf: dict[str, list[str]] = defaultdict(list)
        for lk in plan.links:
            if lk.network == "backend" and lk.tier == "server-leaf" and lk.a_device in block_of_server:
                lst = by_leaf[lk.b_device]
                if not lst or lst[-1] != lk.a_device:
                    lst.append(lk.a_device)
        for lf in leaves:
            members = by_leaf[lf.name]
            items = [item(h) for h in members]
            half = (len(items) + 1) // 2
            rack_items = [*items[:half], item(lf.name), *items[half:]]
            kw = sum(i.kw for i in rack_items)
            units = sum(i.units for i in rack_items)
            if kw > lim.kw + 1e-9 or units > lim.units:
                over = "site.rack.power_kw" if kw > lim.kw + 1e-9 else "site.rack.units"
                raise DesignError.one(
                    over,
                    f"a top-of-rack rack holds leaf {lf.name} and its {len(members)} servers: {kw:.1f} kW "
                    f"and {units}U (plus the out-of-band switch), over the {design.site.rack.power_kw} kW / "
                    f"{design.site.rack.units}U rack",
                    "raise site.rack.power_kw / units, or lower backend.servers_per_leaf",
                )
            blocks[su_block.get(lf.attrs["su"], 0)].compute.append(
                Rack("compute", rack_items, su_block.get(lf.attrs["su"], 0), layout="tor")
            )
    else:
        by_su: dict[int, list[Device]] = defaultdict(list)
        for s in servers if design.compute.system is None else []:
            by_su[s.attrs["su"]].append(s)
        for su in sorted(by_su):
            members = by_su[su]
            b = su_block.get(su, 0)
            for k in range(0, len(members), cap):
                blocks[b].compute.append(
                    Rack("compute", [item(s.name) for s in members[k : k + cap]], b, layout="bottom")
                )
        # leaf racks: a scalable unit's leaves together
        by_su_leaves: dict[int, list[Item]] = defaultdict(list)
        for lf in leaves:
            by_su_leaves[lf.attrs["su"]].append(item(lf.name))
        for b in range(n_blocks):
            groups = [by_su_leaves[su] for su in sorted(by_su_leaves) if su_block[su] == b]
            blocks[b].leaves = pack(groups, lim, "leaf", b)
    spines = [d for d in devs if d.kind == "switch" and d.network == "backend" and d.role == "spine"]
    for b in range(n_blocks):
        mine = [[item(s.name)] for s in spines if s.attrs.get("pod", 1) - 1 == b]
        blocks[b].spines = pack(mine, lim, "spine", b)
    cores = [[item(d.name)] for d in devs if d.kind == "switch" and d.network == "backend" and d.role == "core"]

    # frontend: leaves serving compute servers go to their servers' block
    fe_block: dict[str, int] = {}
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier == "server-leaf" and lk.a_device in block_of_server:
            fe_block.setdefault(lk.b_device, block_of_server[lk.a_device])
    fe = [d for d in devs if d.kind == "switch" and d.network == "frontend"]
    for b in range(n_blocks):
        mine = [[item(d.name)] for d in fe if d.role == "leaf" and fe_block.get(d.name) == b]
        blocks[b].others = pack(mine, lim, "frontend", b)
    agg_model = catalog.switches[
        design.oob.aggregation_switch or design.frontend.spine_switch or design.frontend.switch
    ]
    central_fe = [[item(d.name)] for d in fe if not (d.role == "leaf" and d.name in fe_block)]
    aggs = [Item(f"oob-agg{i + 1}", agg_model.rack_units, agg_model.power_w / 1000) for i in range(n_aggs)]
    central_fe += [[a] for a in aggs]
    central: list[Rack] = pack(cores, lim, "core")
    fe_racks = pack(central_fe, lim, "frontend")
    central += fe_racks
    # a dedicated storage fabric's leaves and spines: network racks of their own, beside the storage
    # servers they serve (rack role storage, so the PDU rules of the storage racks apply)
    central += pack([[item(d.name)] for d in devs if d.kind == "switch" and d.network == "storage"], lim, "storage")
    for kind in ("storage", "management"):
        for r in pack([[item(d.name)] for d in devs if d.kind == kind], lim, kind):
            r.layout = "bottom"
            central.append(r)
    agg_rack = next((r for r in fe_racks if any(a in r.items for a in aggs)), None)
    return Contents(blocks, central, agg_rack)


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


# ------------------------------------------------------------------------------------------ floor rows


class RowSource:
    """Hands out rows in order: the design's rows, or generated ones of at least `want` positions."""

    def __init__(self, design: Design, blocked: dict[str, set[int]]) -> None:
        self.design = design
        self.manual = bool(design.site.rows)
        self.blocked = blocked
        self.rows: list[RowGeom] = []
        self.groups: list[list[int]] = []  # generated rows: row indices that must stay in one column

    def take(self, want: int = 0) -> RowGeom:
        i = len(self.rows)
        if self.manual:
            spec = self.design.site.rows
            if i >= len(spec):
                raise DesignError.one(
                    "site.rows",
                    f"the design needs more than the {len(spec)} rows given",
                    "add rows (or positions), or leave site.rows empty to generate them",
                )
            r = spec[i]
            row = RowGeom(r.name, r.positions, 0, 0, i)
        else:
            w = max(2, len(str(i + 1)))
            positions = max(self.design.site.floor.row_positions, want)
            row = RowGeom(f"r{i + 1:0{w}d}", positions, 0, 0, i)
        row.blocked = set(self.blocked.get(row.name, set()))
        self.rows.append(row)
        return row


@dataclass(slots=True)
class CduRows:
    """In-row cooling: each group of `per` system racks of a row is followed by `spares + 1` CDU positions."""

    per: int
    cdus: int
    made: list[Rack]


def cdu_rows(design: Design, catalog: Catalog) -> CduRows | None:
    cool, system = design.site.cooling, design.compute.system
    if cool is None or system is None or catalog.cdus[cool.cdu].placement != "in_row":
        return None
    cdu = catalog.cdus[cool.cdu]
    per = cool.racks_per_cdu or max(1, int(cdu.capacity_kw // catalog.rack_systems[system].liquid_kw(catalog)))
    return CduRows(per, 2 if cool.redundancy == "N+1" else 1, [])


def _fill_cooled(src: RowSource, racks: list[Rack], cool: CduRows) -> None:
    """System racks into rows in groups of `cool.per`, each group's CDUs standing at its end, so a group
    and the CDUs on its loop share a row. A group is not split across rows while a fresh row would
    take it whole."""
    k = 0
    while k < len(racks):
        row = src.take()
        free = row.free()
        i = 0
        while k < len(racks):
            g = min(cool.per, len(racks) - k)
            if g + cool.cdus > len(free) - i:
                if i > 0:
                    break  # the next row takes the group whole
                g = len(free) - cool.cdus
                if g < 1:
                    raise DesignError.one(
                        "site.rows" if src.manual else "site.floor.row_positions",
                        f"row {row.name} has {len(free)} free positions: too few for one "
                        f"rack and its {cool.cdus} in-row CDUs",
                        "use longer rows",
                    )
            for pos in free[i : i + g]:
                racks[k].row, racks[k].position = row.index, pos
                k += 1
            for pos in free[i + g : i + g + cool.cdus]:
                cdu = Rack("cdu", [], racks[k - 1].block, layout="bottom", pdus=0)
                cdu.row, cdu.position = row.index, pos
                cool.made.append(cdu)
            i += g + cool.cdus


def _fill_rows(src: RowSource, racks: list[Rack], cool: CduRows | None = None) -> None:
    """Racks into consecutive rows, in order, skipping blocked positions."""
    if cool is not None:
        _fill_cooled(src, racks, cool)
        return
    k = 0
    while k < len(racks):
        row = src.take()
        free = row.free()
        for pos in free:
            if k >= len(racks):
                break
            racks[k].row, racks[k].position = row.index, pos
            k += 1


def _network_row(src: RowSource, block: Block, mode: str, tail: list[Rack]) -> list[Rack]:
    """The block's network row; returns the racks (of block.others and tail) that did not fit."""
    leaves, spines = block.leaves, block.spines
    core = len(leaves) + len(spines)
    row = src.take(want=core + len(block.others))
    free = row.free()
    n = len(free)
    if core > n:
        raise DesignError.one(
            "site.rows" if src.manual else "site.floor.row_positions",
            f"row {row.name} has {n} free positions but block {block.index + 1} needs "
            f"{len(leaves)} leaf and {len(spines)} spine racks side by side",
            "use longer rows",
        )
    slot: dict[int, Rack] = {}
    if mode == "middle":
        h = (len(leaves) + 1) // 2
        seq = leaves[:h] + spines + leaves[h:]
        start = (n - len(seq)) // 2
        for i, r in enumerate(seq):
            slot[start + i] = r
    else:
        s0 = 0 if mode == "start" else n - len(spines)
        for i, r in enumerate(spines):
            slot[s0 + i] = r
        lo, hi = (len(spines), n) if mode == "start" else (0, n - len(spines))
        start = min(max((n - len(leaves)) // 2, lo), hi - len(leaves))
        for i, r in enumerate(leaves):
            slot[start + i] = r
    order = range(n - 1, -1, -1) if mode == "start" else range(n)
    rest = list(block.others) + list(tail)
    for i in order:
        if not rest:
            break
        if i not in slot:
            slot[i] = rest.pop(0)
    for i, r in slot.items():
        r.row, r.position = row.index, free[i]
    return rest


def _arrange(contents: Contents, design: Design, catalog: Catalog, blocked: dict[str, set[int]]) -> RowSource:
    mode = design.site.spine_rack_position or ("end" if design.backend.placement == "dedicated_racks" else "middle")
    src = RowSource(design, blocked)
    cool = cdu_rows(design, catalog)
    blocks = contents.blocks
    mid = len(blocks) // 2 if len(blocks) > 1 else 0
    for b in blocks:
        first = len(src.rows)
        comp = b.compute
        # split the compute racks in two halves at a scalable-unit boundary near the middle
        half = (len(comp) + 1) // 2
        _fill_rows(src, comp[:half], cool)
        overflow = _network_row(src, b, mode, contents.central if b.index == mid else [])
        if overflow:
            _fill_rows(src, overflow)
        _fill_rows(src, comp[half:], cool)
        src.groups.append(list(range(first, len(src.rows))))
    contents.cdus = cool.made if cool is not None else []
    return src


def _geometry(src: RowSource, design: Design) -> tuple[float, float]:
    """Coordinates of every row; returns the generated floor's (width, depth) in mm."""
    site = design.site
    w, d = site.rack.width_mm, site.rack.depth_mm
    fl = site.floor
    pitch = d + fl.aisle_mm
    if src.manual:
        for r in src.rows:
            spec = site.rows[r.index]
            if spec.x_mm is not None and spec.y_mm is not None:
                r.x_mm, r.y_mm = spec.x_mm, spec.y_mm
            else:
                r.x_mm, r.y_mm = fl.end_aisle_mm, fl.aisle_mm + r.index * pitch
        width = max(r.x_mm + r.positions * w for r in src.rows) + fl.end_aisle_mm
        depth = max(r.y_mm + d for r in src.rows) + fl.aisle_mm
        return width, depth
    # generated: blocks in columns so the hall is roughly square
    total = len(src.rows)
    col_w = max(r.positions for r in src.rows) * w + fl.end_aisle_mm
    cols = max(1, min(len(src.groups), round(math.sqrt(total * pitch / col_w))))
    target = math.ceil(total / cols)
    columns: list[list[int]] = [[]]
    for g in src.groups:
        if columns[-1] and len(columns[-1]) + len(g) > target and len(columns) < cols:
            columns.append([])
        columns[-1].extend(g)
    x = float(fl.end_aisle_mm)
    for c, rows in enumerate(columns):
        width_c = max(src.rows[i].positions for i in rows) * w
        for k, i in enumerate(rows):
            r = src.rows[i]
            r.column = c
            r.x_mm, r.y_mm = x, fl.aisle_mm + k * pitch
        x += width_c + fl.end_aisle_mm
    depth = fl.aisle_mm + max(len(c) for c in columns) * pitch
    return x, depth


@dataclass(frozen=True, slots=True)
class Rect:
    """An axis-aligned rectangle on the floor (mm). Rows, rack positions, keep-outs and the room are all
    axis-aligned boxes, so their overlaps are interval arithmetic; placement needs no geometry library
    (shapely took ~0.15 s to import, a third of a 1,024-GPU compile)."""

    minx: float
    miny: float
    maxx: float
    maxy: float

    def overlap_area(self, o: Rect) -> float:
        return max(0.0, min(self.maxx, o.maxx) - max(self.minx, o.minx)) * max(
            0.0, min(self.maxy, o.maxy) - max(self.miny, o.miny)
        )

    def contains(self, o: Rect, tol: float = 1e-6) -> bool:
        return (
            self.minx - tol <= o.minx
            and o.maxx <= self.maxx + tol
            and self.miny - tol <= o.miny
            and o.maxy <= self.maxy + tol
        )

    def corners(self) -> list[tuple[float, float]]:
        """Counter-clockwise from the bottom-right corner (the order plan.json's floor outline has kept)."""
        return [(self.maxx, self.miny), (self.maxx, self.maxy), (self.minx, self.maxy), (self.minx, self.miny)]


def _blocked(rows: list[RowGeom], design: Design) -> dict[str, set[int]]:
    w, d = design.site.rack.width_mm, design.site.rack.depth_mm
    kos = [Rect(k.x_mm, k.y_mm, k.x_mm + k.width_mm, k.y_mm + k.depth_mm) for k in design.site.floor.keepouts]
    out: dict[str, set[int]] = {}
    for r in rows:
        row_box = Rect(r.x_mm, r.y_mm, r.x_mm + r.positions * w, r.y_mm + d)
        for ko in kos:
            if row_box.overlap_area(ko) <= 0:
                continue
            for i in range(r.positions):
                if Rect(r.x_mm + i * w, r.y_mm, r.x_mm + (i + 1) * w, r.y_mm + d).overlap_area(ko) > 0:
                    out.setdefault(r.name, set()).add(i)
    return out


def outline(design: Design, width: float, depth: float) -> Rect:
    fl = design.site.floor
    return Rect(0.0, 0.0, float(fl.width_mm or width), float(fl.depth_mm or depth))


def _check_floor(src: RowSource, design: Design, room: Rect) -> None:
    w, d = design.site.rack.width_mm, design.site.rack.depth_mm
    problems: list[Problem] = []
    rects = [Rect(r.x_mm, r.y_mm, r.x_mm + r.positions * w, r.y_mm + d) for r in src.rows]
    for r, rect in zip(src.rows, rects, strict=True):
        if not room.contains(rect):
            minx, miny, maxx, maxy = rect.minx, rect.miny, rect.maxx, rect.maxy
            wide = maxx > room.maxx or minx < room.minx
            field_ = (
                f"site.rows.{r.index}" if src.manual else ("site.floor.width_mm" if wide else "site.floor.depth_mm")
            )
            problems.append(
                Problem(
                    field_,
                    f"row {r.name} ({minx:.0f}..{maxx:.0f} x {miny:.0f}..{maxy:.0f} mm) "
                    f"is off the floor ({room.maxx:.0f} x {room.maxy:.0f} mm)",
                    "move the row inside the room, or enlarge site.floor",
                )
            )
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            if rects[i].overlap_area(rects[j]) > 0:
                a, b = src.rows[i], src.rows[j]
                problems.append(
                    Problem(
                        f"site.rows.{b.index}",
                        f"row {b.name} overlaps row {a.name}",
                        "leave an aisle between rows (change x_mm / y_mm)",
                    )
                )
    if problems:
        raise DesignError(problems)


# ------------------------------------------------------------------------------------------ the stage


def _units(rack: Rack, total: int, lim: Limits) -> list[tuple[Item, int]]:
    """Lowest unit of each item. Servers stack from the bottom (heavy, and their cables short); a
    top-of-rack leaf sits mid-rack among its servers.

    Switch racks stack from a fixed anchor, the middle of the usable units, upward in the rack's
    order (index within role: spine01, spine02, ...). Technicians rack and cable by unit and NetBox
    stores it, so a switch's unit must not depend on how many others share its rack: centring the
    stack (as before) moved every spine when the 2:1 variant dropped spine03/04. The anchor keeps what
    centring was for: every switch rack of a row starts at the same height, so runs across to the
    neighbouring rack stay level (leafNN beside spineNN), and the stack grows towards the overhead
    tray. A stack that would run into the unit kept for the OOB switch continues downward below the
    anchor; each item's unit depends only on the items before it, so dropping the last ones never
    moves the others."""
    if rack.layout in ("bottom", "tor"):
        u = 1
        out = []
        for it in rack.items:
            out.append((it, u))
            u += it.units
        return out
    anchor = lim.units // 2 + 1
    up, down = anchor, anchor  # next free unit above; lowest unit taken below
    out = []
    for it in rack.items:
        if up + it.units - 1 <= lim.units:
            out.append((it, up))
            up += it.units
        else:
            down -= it.units
            out.append((it, down))
    if down < 1:
        # mixed heights left gaps above the anchor: stack compactly under the OOB unit instead (the
        # rack holds no more than its usable units, so this fits)
        u, out = lim.units - rack.units + 1, []
        for it in rack.items:
            out.append((it, u))
            u += it.units
    return out


def place(plan: Plan, catalog: Catalog) -> None:
    """The placement stage: racks on the floor, devices in racks and units, PDUs, rack-local OOB."""
    design = plan.design
    site = design.site
    # the fabric builder's OOB network served endpoints in device order; sites put the access
    # switches in the racks they serve, so it is rebuilt once the racks are known
    devices = [d for d in plan.devices if d.network != "oob"]
    links = [lk for lk in plan.links if lk.network != "oob"]
    plan.devices, plan.links = devices, links
    lim = _limits(design, catalog)

    n_aggs = 2 if design.oob.uplink == "aggregation" else 0
    for _ in range(6):
        contents = _contents(plan, design, catalog, lim, n_aggs)
        blocked: dict[str, set[int]] = {}
        for _ in range(6):
            src = _arrange(contents, design, catalog, blocked)
            while src.manual and len(src.rows) < len(site.rows):
                src.take()  # declared rows left empty still stand on the floor and carry trays
            width, depth = _geometry(src, design)
            again = _blocked(src.rows, design)
            if again == blocked:
                break
            blocked = again
        else:
            raise DesignError.one(
                "site.floor.keepouts",
                "could not lay rows out around the keep-outs",
                "give the rows explicitly in site.rows",
            )
        racks = _all_racks(contents)
        _name_racks(racks, src.rows)
        _add_cdus(plan, racks, design, catalog)
        groups, group_racks, agg_group = _oob_groups(racks, contents.agg_rack, plan, catalog, design, lim)
        need = 2 * oob_sizing(catalog, design, [len(g) for g in groups], agg_group)[1]
        if need == n_aggs:
            break
        n_aggs = need
    room = outline(design, width, depth)
    _check_floor(src, design, room)

    # devices into racks and units
    by_name = {d.name: d for d in plan.devices}
    b = Builder(catalog, plan.devices, plan.links, by_name)
    info = build_oob(b, design, groups, agg_group)
    unit_of: dict[str, tuple[str, int]] = {}
    for r in racks:
        for it, u in _units(r, site.rack.units, lim):
            unit_of[it.name] = (r.name, u)
    # each group's access switch stands in the middle rack of the group, in the unit kept free for it
    host = {gi: grp[len(grp) // 2] for gi, grp in enumerate(group_racks)}
    oob_model = catalog.switches[design.oob.switch]
    top = site.rack.units - oob_model.rack_units + 1
    hosted: dict[str, int] = defaultdict(int)  # a rack system's rack hosts several, stacked down from the top
    for d in plan.devices:
        if d.network == "oob" and d.role == "leaf":
            rk = host[d.attrs["group"]]
            unit_of[d.name] = (rk.name, top - hosted[rk.name] * oob_model.rack_units)
            hosted[rk.name] += 1
            rk.items.append(Item(d.name, oob_model.rack_units, oob_model.power_w / 1000))
    for d in plan.devices:
        if d.name in unit_of:
            d.rack, d.unit = unit_of[d.name]
            if d.kind == "cdu" and catalog.cdus[d.model].placement == "in_row":
                d.unit = None  # it is the whole position, not a unit in a rack
    # PDUs: zero-U, in the rear channels, A and B feeds alternately (a rack's PDU names do not depend
    # on its count beyond dropping the last ones: 3 PDUs are a1, b1, a2)
    pdu = catalog.pdus[site.rack.pdu]
    for r in racks:
        for k in range(rack_pdus(design, catalog, r)):
            feed = "ab"[k % 2]
            dev = Device(
                _pdu_name(r.name, k),
                "pdu",
                "pdu",
                site.rack.pdu,
                attrs={"feed": feed.upper(), "slot": f"P{feed.upper()}{k // 2 + 1}"},
            )
            dev.rack, dev.unit = r.name, None
            plan.devices.append(dev)
    _check_racks(racks, design, catalog, pdu.capacity_kw)
    plan.cooling = _cooling(racks, src.rows, design, catalog)
    if site.floor.max_load_kg_m2 is not None and plan.cooling is None:
        plan.warnings.append(
            PlanWarning(
                "site.floor.max_load_kg_m2",
                "not checked: the catalog weighs rack systems and CDUs only, and this "
                "design has neither; check the racks' weight with their vendors",
            )
        )
    _check_rows(racks, src.rows, design, catalog, plan.cooling)
    plan.networks["oob"] = info
    plan.racks = [_rack_record(r, src.rows, design, catalog) for r in sorted(racks, key=lambda r: (r.row, r.position))]
    plan.floor = _floor_record(src.rows, design, room, rack_model_key(design, catalog))


def _pdu_name(rack: str, k: int) -> str:
    return f"pdu-{rack}-{'ab'[k % 2]}{k // 2 + 1}"


def _all_racks(c: Contents) -> list[Rack]:
    out: list[Rack] = []
    for b in c.blocks:
        out += b.compute + b.leaves + b.spines + b.others
    out += c.central + c.cdus
    return out


def _name_racks(racks: list[Rack], rows: list[RowGeom]) -> None:
    for r in racks:
        row = rows[r.row]
        w = max(2, len(str(row.positions)))
        r.name = f"{row.name}-{r.position + 1:0{w}d}"


def _add_cdus(plan: Plan, racks: list[Rack], design: Design, catalog: Catalog) -> None:
    """The CDU devices, named by where they stand (as PDUs are): an in-row CDU after its row position
    (`cdu-r01-09`), an in-rack one after its rack and number (`cdu-r01-03-1`). Racks that stay where they
    are keep their CDUs' names whatever else changes in the design."""
    plan.devices = [d for d in plan.devices if d.kind != "cdu"]  # placement is retried: one set of CDUs
    cool = design.site.cooling
    if cool is None or design.compute.system is None:
        return
    cdu = catalog.cdus[cool.cdu]
    kw = cdu.power_kw if cdu.placement == "in_rack" else 0.0
    names: list[tuple[Rack, str]] = []
    for r in racks:
        if r.role == "cdu":
            names.append((r, f"cdu-{r.name}"))
        elif cdu.placement == "in_rack" and r.mgmt_switches:
            names += [(r, f"cdu-{r.name}-{j + 1}") for j in range(2 if cool.redundancy == "N+1" else 1)]
    for r, name in names:
        r.items = [it for it in r.items if it.name != name] + [Item(name, cdu.rack_units, kw)]
        plan.devices.append(Device(name, "cdu", "cdu", cool.cdu))


def _oob_groups(
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
        eps: list[Endpoint] = [(_pdu_name(r.name, k), pdu_port) for k in range(rack_pdus(design, catalog, r))]
        n_agg = 0
        for it, _u in sorted(_units(r, design.site.rack.units, lim), key=lambda iu: iu[1]):
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


def _check_racks(racks: list[Rack], design: Design, catalog: Catalog, pdu_kw: float) -> None:
    r = design.site.rack
    problems: list[Problem] = []
    for rack in racks:
        kw, units = rack.kw, rack.units
        if units > r.units:
            problems.append(
                Problem(
                    "site.rack.units",
                    f"rack {rack.name} needs {units}U, more than its {r.units}U",
                    "use taller racks or fewer devices per rack",
                )
            )
        if kw > r.power_kw + 1e-9:
            problems.append(
                Problem(
                    "site.rack.power_kw",
                    f"rack {rack.name} draws {kw:.1f} kW, over its {r.power_kw} kW budget",
                    "raise site.rack.power_kw or put fewer servers per rack (site.rack.servers_per_rack)",
                )
            )
        # N+N: feed B (the weaker one with an odd count, PDUs alternating A, B, A) alone carries the rack
        n_pdu = rack_pdus(design, catalog, rack)
        feed = (n_pdu // 2) * pdu_kw
        if rack.pdus != 0 and kw > feed + 1e-9:  # a rack system's shelves: checked with the catalog
            f = pdu_field(design, rack.role)
            need = 2 * math.ceil(kw / pdu_kw)
            problems.append(
                Problem(
                    f,
                    f"{rack.role} rack {rack.name} draws {kw:.1f} kW but with {n_pdu} PDUs "
                    f"(fed A, B, A, ...) feed B's {n_pdu // 2} x {r.pdu} carries {feed:.1f} kW, "
                    "and each feed alone must carry the rack",
                    f"set {f} to at least {need}, or use a larger PDU model (site.rack.pdu)",
                )
            )
        if len(problems) > 5:
            break
    if problems:
        raise DesignError(problems[:6])


def _rack_heat(r: Rack, design: Design, catalog: Catalog) -> tuple[float, float, float | None]:
    """(liquid kW, air kW, weight kg) of a rack: a rack system's by its liquid share and weight, plus any
    in-rack CDU (its pumps' heat goes to air); other racks are all air and unweighed."""
    system = design.compute.system
    cdus = [it for it in r.items if it.name.startswith("cdu-")]
    cdu_kw = sum(it.kw for it in cdus)
    if r.mgmt_switches and system is not None:
        rs = catalog.rack_systems[system]
        liquid = (r.kw - cdu_kw) * rs.liquid_fraction
        cool = design.site.cooling
        extra = len(cdus) * catalog.cdus[cool.cdu].weight_kg if cool is not None else 0.0
        return liquid, r.kw - liquid, rs.weight_kg + extra
    if r.role == "cdu" and design.site.cooling is not None:
        return 0.0, 0.0, catalog.cdus[design.site.cooling.cdu].weight_kg
    return 0.0, r.kw, None


def _cooling(racks: list[Rack], rows: list[RowGeom], design: Design, catalog: Catalog) -> Cooling | None:
    """The cooling section: every rack's heat and weight, the CDUs and whom they serve, per-row totals."""
    cool = design.site.cooling
    if cool is None or design.compute.system is None:
        return None
    cdu = catalog.cdus[cool.cdu]
    ordered = sorted(racks, key=lambda r: (r.row, r.position))
    area = design.site.rack.width_mm * design.site.rack.depth_mm / 1e6
    heat = {r.name: _rack_heat(r, design, catalog) for r in ordered}
    served: dict[str, list[str]] = defaultdict(list)  # rack -> its CDUs
    placements: list[CduPlacement] = []
    if cdu.placement == "in_rack":
        for r in ordered:
            for it in r.items:
                if it.name.startswith("cdu-"):
                    served[r.name].append(it.name)
                    placements.append(
                        CduPlacement(
                            it.name,
                            cool.cdu,
                            r.name,
                            [r.name],
                            round(heat[r.name][0], 3),
                            cdu.capacity_kw,
                            cdu.power_kw,
                        )
                    )
        per = 1
    else:
        # a group: the system racks of a row before its CDU positions (since the previous CDUs)
        per = cdu_rows(design, catalog).per  # type: ignore[union-attr]  # in_row: always a CduRows
        by_row: dict[int, list[Rack]] = defaultdict(list)
        for r in ordered:
            by_row[r.row].append(r)
        for row_racks in by_row.values():
            group: list[Rack] = []
            cdus: list[Rack] = []
            for r in [*row_racks, None]:
                if r is not None and r.role == "cdu":
                    cdus.append(r)
                    continue
                if cdus:
                    names = [g.name for g in group]
                    load = round(sum(heat[n][0] for n in names), 3)
                    for c in cdus:
                        placements.append(
                            CduPlacement(f"cdu-{c.name}", cool.cdu, c.name, names, load, cdu.capacity_kw, cdu.power_kw)
                        )
                    for n in names:
                        served[n] += [f"cdu-{c.name}" for c in cdus]
                    group, cdus = [], []
                if r is not None and r.mgmt_switches:
                    group.append(r)
    rack_heat = [
        RackHeat(
            r.name,
            rows[r.row].name,
            round(r.kw, 3),
            round(heat[r.name][0], 3),
            round(heat[r.name][1], 3),
            heat[r.name][2],
            None if heat[r.name][2] is None else round(heat[r.name][2] / area, 1),
            served[r.name],
        )
        for r in ordered
    ]
    fl = design.site.floor
    row_heat: list[RowHeat] = []
    for row in rows:
        mine = [h for h, r in zip(rack_heat, ordered, strict=True) if r.row == row.index]
        n_cdu = sum(1 for r in ordered if r.row == row.index and r.role == "cdu")
        row_heat.append(
            RowHeat(
                row.name,
                sum(1 for r in ordered if r.row == row.index and r.role != "cdu"),
                round(sum(h.kw for h in mine), 3),
                round(sum(h.liquid_kw for h in mine), 3),
                round(sum(h.air_kw for h in mine), 3),
                round(n_cdu * cdu.power_kw if cdu.placement == "in_row" else 0.0, 3),
                n_cdu,
                round(sum(h.weight_kg or 0.0 for h in mine), 1),
                fl.row_power_kw,
                fl.row_air_kw,
            )
        )
    kw = round(sum(h.kw for h in rack_heat), 3)
    cdu_kw = round(sum(h.cdu_kw for h in row_heat), 3)
    return Cooling(
        cool.cdu,
        cdu.placement,
        cool.redundancy,
        per,
        rack_heat,
        row_heat,
        placements,
        kw,
        round(sum(h.liquid_kw for h in rack_heat), 3),
        round(sum(h.air_kw for h in rack_heat), 3),
        cdu_kw,
        round((kw + cdu_kw) / 1000, 3),
    )


def _check_rows(
    racks: list[Rack], rows: list[RowGeom], design: Design, catalog: Catalog, cooling: Cooling | None
) -> None:
    """What the facility must carry: each row's power against its busway (site.floor.row_power_kw), its
    air-cooled heat against the row's air cooling (site.floor.row_air_kw), each CDU group's liquid heat
    against one CDU (the spare only stands in for a failed one), the weight on each footprint
    (site.floor.max_load_kg_m2), and an in-rack CDU's draw against the rack system's power shelves."""
    fl = design.site.floor
    problems: list[Problem] = []
    kw_row: dict[int, float] = defaultdict(float)
    air_row: dict[int, float] = defaultdict(float)
    for r in racks:
        _liquid, air, _w = _rack_heat(r, design, catalog)
        kw_row[r.row] += r.kw
        air_row[r.row] += air
    for i in sorted(kw_row):
        name, n = rows[i].name, sum(1 for r in racks if r.row == i and r.role != "cdu")
        if fl.row_power_kw is not None and kw_row[i] > fl.row_power_kw + 1e-9:
            problems.append(
                Problem(
                    "site.floor.row_power_kw",
                    f"row {name} draws {kw_row[i]:,.1f} kW ({n} racks), over its {fl.row_power_kw:g} kW busway",
                    "raise site.floor.row_power_kw to "
                    f"at least {math.ceil(kw_row[i])}, or spread the racks over more rows "
                    "(fewer positions per row: site.floor.row_positions)",
                )
            )
        if fl.row_air_kw is not None and air_row[i] > fl.row_air_kw + 1e-9:
            problems.append(
                Problem(
                    "site.floor.row_air_kw",
                    f"row {name} puts {air_row[i]:,.1f} kW into the air, over its {fl.row_air_kw:g} kW of air cooling",
                    f"raise site.floor.row_air_kw to at least {math.ceil(air_row[i])}, or use shorter rows",
                )
            )
    if cooling is not None:
        for c in cooling.cdus:
            if c.load_kw > c.capacity_kw + 1e-9:
                problems.append(
                    Problem(
                        "site.cooling.racks_per_cdu",
                        f"CDU {c.name} serves {len(c.serves)} racks "
                        f"with {c.load_kw:,.1f} kW of liquid heat, over one {c.model}'s "
                        f"{c.capacity_kw:g} kW",
                        "lower site.cooling.racks_per_cdu or use a larger CDU (site.cooling.cdu)",
                    )
                )
                break
        if fl.max_load_kg_m2 is not None:
            for h in cooling.racks:
                if h.load_kg_m2 is not None and h.load_kg_m2 > fl.max_load_kg_m2 + 1e-9:
                    problems.append(
                        Problem(
                            "site.floor.max_load_kg_m2",
                            f"rack {h.rack} weighs {h.weight_kg:,.0f} "
                            f"kg on {design.site.rack.width_mm} x {design.site.rack.depth_mm} mm: "
                            f"{h.load_kg_m2:,.0f} kg/m2, over the floor's {fl.max_load_kg_m2:g} "
                            "kg/m2",
                            "reinforce the floor (site.floor.max_load_kg_m2) or spread "
                            "the load (deeper racks: site.rack.depth_mm)",
                        )
                    )
                    break
        system = design.compute.system
        if system is not None and cooling.placement == "in_rack":
            rs = catalog.rack_systems[system]
            shelves = rs.power_shelves * catalog.pdus[rs.power_shelf].capacity_kw
            for h in cooling.racks:
                if h.cdus and h.kw > shelves + 1e-9:
                    problems.append(
                        Problem(
                            "site.cooling.cdu",
                            f"rack {h.rack} draws {h.kw:,.1f} kW with its "
                            f"in-rack CDUs, over its {rs.power_shelves} x {rs.power_shelf} "
                            f"({shelves:g} kW)",
                            "use an in-row CDU or redundancy: N",
                        )
                    )
                    break
    if problems:
        raise DesignError(problems[:6])


def _rack_record(r: Rack, rows: list[RowGeom], design: Design, catalog: Catalog) -> RackRecord:
    row = rows[r.row]
    w, d = design.site.rack.width_mm, design.site.rack.depth_mm
    return RackRecord(
        name=r.name,
        role=r.role,
        row=row.name,
        position=r.position + 1,
        x_mm=round(row.x_mm + r.position * w, 1),
        y_mm=round(row.y_mm, 1),
        width_mm=w,
        depth_mm=d,
        units=design.site.rack.units,
        units_used=r.units,
        power_kw=round(r.kw, 3),
        power_budget_kw=design.site.rack.power_kw,
        pdus=rack_pdus(design, catalog, r),
    )


def _floor_record(rows: list[RowGeom], design: Design, room: Rect, rack_model: str | None) -> Floor:
    site = design.site
    return Floor(
        site=site.name,
        rack_model=rack_model,
        outline_mm=[[round(x, 1), round(y, 1)] for x, y in room.corners()],
        rows=[
            FloorRow(
                name=r.name,
                x_mm=round(r.x_mm, 1),
                y_mm=round(r.y_mm, 1),
                positions=r.positions,
                blocked=sorted(p + 1 for p in r.blocked),
            )
            for r in rows
        ],
        keepouts=[k.model_dump() for k in site.floor.keepouts],
        rack_height_mm=round(rack_height_mm(site.rack.units), 1),
    )
