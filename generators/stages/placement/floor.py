"""The floor: rows of rack positions (the design's rows or generated ones), the racks of each block
into rows around its network row, row coordinates, keep-outs and the room."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.errors import DesignError, Problem
from generators.model.planes import plane_order
from generators.stages.placement.contents import Contents
from generators.stages.placement.racks import (
    Block,
    CduRows,
    Rack,
    cdu_rows,
)
from generators.stages.placement.strategies import STRATEGIES


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


def _fill_cooled(src: RowSource, racks: list[Rack], cool: CduRows, max_rows: int | None = None) -> list[Rack]:
    """System racks into rows in groups of `cool.per`, each group's CDUs and then its power sidecars
    standing at its end, so a group, the CDUs on its loop and the sidecars feeding it share a row. A group
    is not split across rows while a fresh row would take it whole. At most `max_rows` rows; returns the
    racks left over."""
    k = 0
    taken = 0
    while k < len(racks) and (max_rows is None or taken < max_rows):
        row = src.take()
        taken += 1
        free = row.free()
        i = 0
        while k < len(racks):
            g = min(cool.per, len(racks) - k)
            units = cool.cdus + cool.sidecars  # the group's in-row CDUs, then its power sidecars
            if g + units > len(free) - i:
                if i > 0:
                    break  # the next row takes the group whole
                g = len(free) - units
                if g < 1:
                    what = " and ".join(
                        x
                        for x in (
                            f"{cool.cdus} in-row CDUs" if cool.cdus else "",
                            f"{cool.sidecars} power sidecars" if cool.sidecars else "",
                        )
                        if x
                    )
                    raise DesignError.one(
                        "site.rows" if src.manual else "site.floor.row_positions",
                        f"row {row.name} has {len(free)} free positions: too few for one rack and its {what}",
                        "use longer rows",
                    )
            for pos in free[i : i + g]:
                racks[k].row, racks[k].position = row.index, pos
                k += 1
            for j, pos in enumerate(free[i + g : i + g + units]):
                unit = Rack("cdu" if j < cool.cdus else "sidecar", [], racks[k - 1].block, layout="bottom", pdus=0)
                unit.row, unit.position = row.index, pos
                (cool.made if j < cool.cdus else cool.made_sidecars).append(unit)
            i += g + units
    return racks[k:]


def _fill_rows(
    src: RowSource, racks: list[Rack], cool: CduRows | None = None, max_rows: int | None = None
) -> list[Rack]:
    """Racks into consecutive rows, in order, skipping blocked positions; at most `max_rows` rows.
    Returns the racks left over."""
    if cool is not None:
        return _fill_cooled(src, racks, cool, max_rows)
    k = 0
    taken = 0
    while k < len(racks) and (max_rows is None or taken < max_rows):
        row = src.take()
        taken += 1
        free = row.free()
        for pos in free:
            if k >= len(racks):
                break
            racks[k].row, racks[k].position = row.index, pos
            k += 1
    return racks[k:]


def _claim(slot: dict[int, Rack], racks: list[Rack], start: int, step: int, n: int) -> list[Rack]:
    """Racks into the free slots from `start` on, one `step` at a time (+1 rightward, -1 leftward), up to
    the row's ends; returns the racks that found no slot. A rack's slot depends only on the racks of
    its kind before it, so growing a kind adds racks beyond the last one and moves none."""
    i = start
    rest = list(racks)
    while rest and 0 <= i < n:
        if i not in slot:
            slot[i] = rest.pop(0)
        i += step
    return rest


def _network_row(src: RowSource, block: Block, mode: str, tail: list[Rack], stretch: bool = True) -> list[Rack]:
    """The block's network row; returns the racks (of block.others and tail) that did not fit. A generated
    row is stretched to hold the leaf and spine racks and, with `stretch`, block.others too.

    Every kind of rack grows from a fixed anchor of the row, away from the others, so adding scalable
    units (more leaf racks, spine racks, frontend leaf racks) or central racks never moves a rack that
    stands: the anchor `a` is the middle of the row ((free positions - 1) // 2, counted in the free
    positions); `end` mode: leaf racks rightward from `a`, spine racks leftward from the row's end,
    the block's frontend leaf racks rightward from the row's start, the central racks leftward from
    `a - 1`; `start` mirrors the spine and frontend sides; `middle`: spine racks rightward from `a`,
    leaf racks alternately leftward from `a - 1` and rightward after the spine racks, frontend leaf
    racks from the start, central racks from the end.
    A kind that meets another continues in the free slots on its other side, then in rows of its own."""
    leaves, spines = block.leaves, block.spines
    core = len(leaves) + len(spines)
    row = src.take(want=core + (len(block.others) if stretch else 0))
    free = row.free()
    n = len(free)
    if core > n:
        raise DesignError.one(
            "site.rows" if src.manual else "site.floor.row_positions",
            f"row {row.name} has {n} free positions but block {block.index + 1} needs "
            f"{len(leaves)} leaf and {len(spines)} spine racks side by side",
            "use longer rows",
        )
    a = (n - 1) // 2
    for kind in (leaves, spines, block.others, tail):
        for i, r in enumerate(kind):
            r.seq = i
    slot: dict[int, Rack] = {}
    if mode == "middle":
        # the playbook's virtual modular switch: the spine racks between the two halves of the leaf
        # racks, leaf racks alternately left (leftward) and right (rightward) of them. Growing the leaf
        # racks moves none; a growth that adds a spine rack moves the right-hand half one position (the
        # review lists the moves): reserving empty positions would stretch the short copper runs the
        # layout is for
        left = _claim(slot, spines, a, 1, n)
        left = _claim(slot, leaves[0::2], a - 1, -1, n) + left
        left = _claim(slot, leaves[1::2], a + len(spines), 1, n) + left
        fe_start, fe_step, c_start, c_step = 0, 1, n - 1, -1
    else:
        s0, s_step = (0, 1) if mode == "start" else (n - 1, -1)
        left = _claim(slot, spines, s0, s_step, n)
        left = _claim(slot, leaves, a, 1, n) + left
        fe_start, fe_step = (n - 1, -1) if mode == "start" else (0, 1)
        c_start, c_step = a - 1, -1
    # the frontend and central racks claim their sides before a leaf or spine rack that found no slot on
    # its own side does, as far as the row has room for those (n - core): a grown block's extra leaf
    # racks then take the slots beyond the central racks, not the central racks' own (which moved them
    # one position when a unit was added to helios-576 with rows long enough)
    room = n - core
    rest: list[Rack] = []
    for kind, start, step in ((list(block.others), fe_start, fe_step), (list(tail), c_start, c_step)):
        k = min(room, len(kind))
        missed = _claim(slot, kind[:k], start, step, n)
        room -= k - len(missed)
        rest += missed + kind[k:]
    # what found no slot on its side takes the first free slots left of the anchor, then right of it
    left = _claim(slot, left, a, -1, n)
    left = _claim(slot, left, a, 1, n)
    assert not left  # core <= n: every leaf and spine rack has a slot
    rest = _claim(slot, rest, 0, 1, n)
    for i, r in slot.items():
        r.row, r.position = row.index, free[i]
    return rest


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


def blocked_positions(rows: list[RowGeom], design: Design) -> dict[str, set[int]]:
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


def check_floor(src: RowSource, design: Design, room: Rect) -> None:
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


def name_racks(racks: list[Rack], rows: list[RowGeom]) -> None:
    for r in racks:
        row = rows[r.row]
        w = max(2, len(str(row.positions)))
        r.name = f"{row.name}-{r.position + 1:0{w}d}"


def row_geometry(src: RowSource, design: Design) -> tuple[float, float]:
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


def arrange(contents: Contents, design: Design, catalog: Catalog, blocked: dict[str, set[int]]) -> RowSource:
    mode = design.site.spine_rack_position or STRATEGIES[design.backend.placement].spine_position
    src = RowSource(design, blocked)
    cool = cdu_rows(design, catalog)
    blocks = contents.blocks
    central = (design.site.central_block or 1) - 1
    if central >= len(blocks):
        raise DesignError.one(
            "site.central_block",
            f"is {central + 1} but the design has {len(blocks)} block{'s' if len(blocks) != 1 else ''} "
            "(a block is a pod of a three-tier fabric, else one per network row of scalable units)",
            f"use a number from 1 to {len(blocks)}, or leave it out (1, the first block)"
            if len(blocks) > 1
            else "leave it out: the one block holds them",
        )
    for b in blocks:
        first = len(src.rows)
        # a fixed number of compute rows before the block's network row (one by default), the rest
        # after it: the network row's place in the block does not depend on the block's size, so growing
        # the block adds compute racks after the last one (and rows at the end) and never moves the
        # network row or a rack that stands
        for i, r in enumerate(b.compute):
            r.seq = i
        after = _fill_rows(src, list(b.compute), cool, max_rows=design.site.compute_rows_before_network)
        # the central racks stand in the network row of a block the design names (the first by default):
        # a unit that adds a block adds it after the others and never moves them (a middle block
        # computed from the count moved them whenever a block was added)
        tail = contents.central if b.index == central else []
        if design.site.network_rows == "per_plane":
            # a network row per plane, in plane order, each with the plane's leaf and spine racks; the
            # block's frontend racks and the central racks take the first plane's free positions, then
            # rows of their own (the plane rows keep one length, so their cross trays line up). The rows
            # are as many as the planes, which growth does not change, so a plane's row never moves
            overflow = []
            planes = sorted({r.plane for r in b.leaves + b.spines}, key=plane_order) or [""]
            for k, plane in enumerate(planes):
                mine = Block(
                    b.index,
                    [],
                    [r for r in b.leaves if r.plane == plane],
                    [r for r in b.spines if r.plane == plane],
                    b.others if k == 0 else [],
                )
                overflow += _network_row(src, mine, mode, tail if k == 0 else [], stretch=False)
        else:
            overflow = _network_row(src, b, mode, tail)
        if overflow:
            _fill_rows(src, overflow)
        _fill_rows(src, after, cool)
        src.groups.append(list(range(first, len(src.rows))))
    contents.cdus = cool.made if cool is not None else []
    contents.sidecars = cool.made_sidecars if cool is not None else []
    return src
