"""The cable plan: every link routed through the overhead trays, measured, and given the cheapest
medium that reaches and fits both ends.

* Routes: the tray network is a graph (TrayGraph) of the trays along each row, the cross trays at the
  row ends (plus optional ones every N positions) and perimeter trays joining them; columns that reach
  the ceiling cut the segments they cross. A cable between two racks runs up from its port to the
  tray, along the shortest tray path, and down; within a rack or to the next rack it is a direct run.
  Service loops are added (`site.slack`), then the length is rounded up to a stocked length.
* Form factors: the two ports of a twin-port OSFP cage (Quantum-2, Spectrum-4) share what is plugged
  into the cage. Links are bundled by cage: a straight bundle (both cages twin, both links between the
  same two cages) can be one twin copper cable; a splitter bundle (a twin cage to single-port NICs) one
  splitter cable; either can be one twin transceiver with two fibers. Cages whose ports go to
  different switches can only take optics; such chains share one optic family. A server's own twin
  cages (DGX: two rails per cage, `backend.cages` in the catalog) send their two fibers to two rail
  leaves the same way. Transceivers are counted per cage. A splitter bundle may also be one twin
  transceiver, one 1:2 splitter fiber and two single-port optics: NVIDIA's NDR200, where a single-port
  optic runs 200G only on a splitter leg (`split_speeds_gbps`). The fabric gives each 200G host a switch
  port of its own, so the splitter's two legs are the cage's two ports (the cage's second connector stays
  dark); the two halves of one split port (four hosts per twin cage) would need port splitting.
* Lane rates: a link's lane rate is its ports' native speed / lanes, the slower end's; parts and media
  rules that name lane rates (XDR: 200G) apply only to such links, whatever the link's speed.
* Choice: the cheapest option (cable at its stocked length plus the transceivers) whose reach covers
  the stocked length, whose plugs fit both cages and which runs the link's speed and protocol, after
  the design's `cabling` knobs (forbidden media, a copper length cap, ACC preferred between switches).
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from generators.model.catalog import COPPER, Cable, Catalog, Transceiver
from generators.model.design import Design
from generators.model.errors import DesignError, Problem
from generators.model.geometry import device_size, rack_height_mm, unit_centre_mm
from generators.model.ids import cable_key, stable_ids
from generators.model.plan import Device, Link, Plan, required
from generators.model.planes import link_plane
from generators.model.ports import End, lane_rate, network_protocol, port_ends
from generators.model.sections import Cable as CableRecord
from generators.model.sections import CablingTotals, PlanWarning, TraySegment
from generators.model.sections import Trays as TraysRecord

MEDIA_ORDER = ("dac", "acc", "aoc", "mmf", "smf", "cat6")
MAX_REPORTED = 5


# ------------------------------------------------------------------------------------------ trays


class TrayGraph:
    """The tray network: nodes and undirected edges with data, no more. Nodes and edges iterate in the
    order networkx's Graph gives (nodes as first added; each edge once, from the node added first), so
    the segment ids and the Dijkstra tie-breaks are the ones railyard has always had; a plain dict
    spares the compile networkx's import (and its per-edge bookkeeping)."""

    def __init__(self) -> None:
        self.adj: dict[Any, dict[Any, dict[str, Any]]] = {}

    def add_edge(self, a: Any, b: Any, **data: Any) -> None:
        attrs = self.adj.setdefault(a, {}).get(b)
        if attrs is None:
            attrs = {}
            self.adj[a][b] = attrs
            self.adj.setdefault(b, {})[a] = attrs
        attrs.update(data)

    def has_edge(self, a: Any, b: Any) -> bool:
        return b in self.adj.get(a, {})

    def remove_edge(self, a: Any, b: Any) -> None:
        del self.adj[a][b]
        if a != b:
            del self.adj[b][a]

    @property
    def nodes(self) -> list[Any]:
        return list(self.adj)

    def edges(self) -> list[tuple[Any, Any, dict[str, Any]]]:
        seen: set[Any] = set()
        out = []
        for n, nbrs in self.adj.items():
            for m, data in nbrs.items():
                if m not in seen:
                    out.append((n, m, data))
            seen.add(n)
        return out

    def number_of_edges(self) -> int:
        return sum(len(nbrs) + (n in nbrs) for n, nbrs in self.adj.items()) // 2


@dataclass(slots=True)
class Trays:
    graph: TrayGraph
    segments: list[TraySegment]
    node_of_rack: dict[str, Any]
    z_tray_mm: float


def build_trays(plan: Plan, design: Design) -> Trays:
    site = design.site
    w, d = site.rack.width_mm, site.rack.depth_mm
    fl, tray = site.floor, site.tray
    rows = required(plan.floor, "floor").rows
    g = TrayGraph()
    pos: dict[Any, tuple[float, float]] = {}
    ext = fl.end_aisle_mm / 2

    def node_at(x: float, y: float) -> tuple[str, int, int]:
        n = ("j", round(x), round(y))
        pos[n] = (round(x), round(y))
        return n

    def edge(a: Any, b: Any) -> None:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        length = abs(xa - xb) + abs(ya - yb)
        if a != b and not g.has_edge(a, b):
            g.add_edge(a, b, weight=length / 1000)

    ends: list[Any] = []
    for ri, r in enumerate(rows):
        yc = r.y_mm + d / 2
        left = node_at(r.x_mm - ext, yc)
        prev = left
        for i in range(r.positions):
            n = ("p", ri, i)
            pos[n] = (r.x_mm + (i + 0.5) * w, yc)
            edge(prev, n)
            prev = n
        right = node_at(r.x_mm + r.positions * w + ext, yc)
        edge(prev, right)
        ends += [left, right]
    y_front = min(r.y_mm for r in rows) - fl.aisle_mm / 2
    y_back = max(r.y_mm for r in rows) + d + fl.aisle_mm / 2
    by_x: dict[float, list[Any]] = defaultdict(list)
    for n in ends:
        by_x[pos[n][0]].append(n)
    fronts, backs = [], []
    for x in sorted(by_x):
        line = sorted(set(by_x[x]), key=lambda n: pos[n][1])
        f, b = node_at(x, y_front), node_at(x, y_back)
        line = [f, *line, b]
        for a, b2 in pairwise(line):
            edge(a, b2)
        fronts.append(f)
        backs.append(b)
    for line in (fronts, backs):
        for a, b2 in pairwise(line):
            edge(a, b2)
    if tray.cross_every:
        by_col: dict[tuple[float, int], list[int]] = defaultdict(list)
        for ri, r in enumerate(rows):
            by_col[(r.x_mm, r.positions)].append(ri)
        for col in by_col.values():
            col.sort(key=lambda ri: rows[ri].y_mm)
            for r1, r2 in pairwise(col):
                for i in range(tray.cross_every - 1, rows[r1].positions, tray.cross_every):
                    edge(("p", r1, i), ("p", r2, i))
    if any(k.blocks_trays for k in fl.keepouts):
        # shapely only for a floor with tray-blocking keep-outs (its import is ~0.15 s of a small compile)
        from shapely.geometry import LineString, box

        blocking = [
            box(k.x_mm, k.y_mm, k.x_mm + k.width_mm, k.y_mm + k.depth_mm) for k in fl.keepouts if k.blocks_trays
        ]
        for a, b, _ in g.edges():
            seg = LineString([pos[a], pos[b]])
            if any(seg.intersects(ko) and not seg.touches(ko) for ko in blocking):
                g.remove_edge(a, b)
    segments = []
    edges = g.edges()
    # a segment is its two end points on the floor, so adding a row elsewhere keeps its id
    seg_ids, _ = stable_ids(
        "T", [";".join(sorted(f"{pos[n][0]:.1f},{pos[n][1]:.1f}" for n in (a, b))) for a, b, _ in edges]
    )
    for k, (a, b, data) in enumerate(edges):
        data["id"] = k
        segments.append(
            TraySegment(id=seg_ids[k], a_mm=list(pos[a]), b_mm=list(pos[b]), length_m=round(data["weight"], 3))
        )
    node_of_rack = {}
    row_index = {r.name: ri for ri, r in enumerate(rows)}
    for rk in plan.racks:
        node_of_rack[rk.name] = ("p", row_index[rk.row], rk.position - 1)
    return Trays(g, segments, node_of_rack, rack_height_mm(site.rack.units) + tray.clearance_mm)


class Router:
    """Shortest tray distances between racks: one Dijkstra per hub rack (the end of each rack pair with
    more partners, i.e. the network racks), on the tray graph's adjacency. The shortest-path trees are
    kept to charge each segment with the cables it carries."""

    def __init__(self, trays: Trays, pairs: set[tuple[str, str]]) -> None:
        self.trays = trays
        g = trays.graph
        self.index = {node: k for k, node in enumerate(g.nodes)}
        self.adj: list[list[tuple[int, float, int]]] = [[] for _ in self.index]
        for a, b, data in g.edges():
            ia, ib = self.index[a], self.index[b]
            self.adj[ia].append((ib, data["weight"], data["id"]))
            self.adj[ib].append((ia, data["weight"], data["id"]))
        self.rack_node = {r: self.index[n] for r, n in trays.node_of_rack.items()}
        partners: Counter[str] = Counter()
        for a, b in pairs:
            partners[a] += 1
            partners[b] += 1
        self.hub_of: dict[tuple[str, str], str] = {}
        targets: dict[str, set[int]] = defaultdict(set)
        for a, b in pairs:
            hub = a if (partners[a], b) >= (partners[b], a) else b
            self.hub_of[(a, b)] = hub
            targets[hub].add(self.rack_node[b if hub == a else a])
        self.trees: dict[str, tuple[list[float], list[int], list[int], list[int]]] = {}
        for hub in sorted(targets):
            self.trees[hub] = self._dijkstra(self.rack_node[hub], targets[hub])

    def _dijkstra(self, src: int, targets: set[int]) -> tuple[list[float], list[int], list[int], list[int]]:
        """(distance, predecessor, edge to predecessor, nodes in settling order) from src, stopping once
        every target is settled (an access switch's racks are a few positions away)."""
        inf = math.inf
        n = len(self.adj)
        dist = [inf] * n
        pred = [-1] * n
        via = [-1] * n
        done = [False] * n
        order: list[int] = []
        dist[src] = 0.0
        heap = [(0.0, src)]
        adj = self.adj
        left = len(targets)
        while heap and left:
            d, u = heapq.heappop(heap)
            if done[u]:
                continue
            done[u] = True
            order.append(u)
            if u in targets:
                left -= 1
            for v, w, eid in adj[u]:
                nd = d + w
                if nd < dist[v] - 1e-12:
                    dist[v] = nd
                    pred[v] = u
                    via[v] = eid
                    heapq.heappush(heap, (nd, v))
        return dist, pred, via, order

    def distance(self, a: str, b: str) -> float | None:
        key = (a, b) if a < b else (b, a)
        hub = self.hub_of[key]
        other = key[1] if hub == key[0] else key[0]
        d = self.trees[hub][0][self.rack_node[other]]
        return None if d == math.inf else d

    def path(self, a: str, b: str) -> list[int]:
        """The tray segments (indices into the trays' segments) a cable from rack a to rack b runs
        through, hub end first: the very path `distance` measured and `charge` fills."""
        key = (a, b) if a < b else (b, a)
        hub = self.hub_of[key]
        _, pred, via, _ = self.trees[hub]
        node, src = self.rack_node[key[1] if hub == key[0] else key[0]], self.rack_node[hub]
        out: list[int] = []
        while node != src and pred[node] >= 0:
            out.append(via[node])
            node = pred[node]
        return out[::-1] if node == src else []

    def charge(self, area: dict[tuple[str, str], float]) -> list[float]:
        """Cable cross-section (mm2) carried by each tray segment, given the area per rack pair."""
        per_edge = [0.0] * self.trays.graph.number_of_edges()
        by_hub: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for (a, b), mm2 in area.items():
            hub = self.hub_of[(a, b)]
            by_hub[hub][self.rack_node[b if hub == a else a]] += mm2
        for hub in sorted(by_hub):
            _, pred, via, order = self.trees[hub]
            carried = [0.0] * len(pred)
            for node, mm2 in by_hub[hub].items():
                carried[node] += mm2
            for node in reversed(order):
                c = carried[node]
                if c and pred[node] >= 0:
                    per_edge[via[node]] += c
                    carried[pred[node]] += c
        return per_edge


def tray_paths(plan: Plan) -> dict[tuple[str, str], list[int]]:
    """(rack, rack) -> the tray segments its cables run through, for every rack pair a tray cable
    joins, from the plan alone. The plan keeps per link only the kind of run (Cable.route), not the
    segments: a 64k-GPU plan would carry millions of them. The trays and the router are rebuilt as the
    cabling stage built them (same graph, same pairs, same tie-breaks), so the path is the one that
    was measured and charged to the trays."""
    if plan.trays is None or not plan.racks:
        return {}
    rack_of = {d.name: d.rack for d in plan.devices}
    pairs: set[tuple[str, str]] = set()
    for c in plan.cables or []:
        for k, kind in zip(c.links, c.route, strict=True):
            if kind == "tray":
                lk = plan.links[k]
                ra, rb = rack_of[lk.a_device], rack_of[lk.b_device]
                assert ra is not None and rb is not None
                pairs.add((ra, rb) if ra < rb else (rb, ra))
    trays = build_trays(plan, plan.design)
    if [s.id for s in trays.segments] != [s.id for s in plan.trays.segments]:
        raise ValueError("plan.trays does not match the floor it was built on (a hand-edited plan.json?)")
    router = Router(trays, pairs)
    return {p: router.path(*p) for p in sorted(pairs)}


# ------------------------------------------------------------------------------------------ media


@dataclass(frozen=True, slots=True)
class Option:
    media: str
    cable: str
    xa: str | None  # transceiver at the a-side cages (optics only)
    xb: str | None
    reach_m: float
    flip: bool = False  # direct cable plugged b_end-first
    split: bool = False  # a splitter fiber: one cable for the bundle's two links
    # a broken-out optic's fan-out cable (its stocked SKU), one per cage, at the a and b side
    fan_a: str | None = None
    fan_b: str | None = None

    @property
    def per_link(self) -> bool:
        """Whether every link has a cable of its own (a pair of optics and a straight fiber)."""
        return self.xa is not None and not self.split


@dataclass(slots=True)
class Choice:
    option: Option
    lengths: list[float]  # stocked length per link (direct cables: the one cable, repeated)
    skus: list[str]
    cost: float


def _stock(cable: Cable, need: float, reach: float) -> tuple[float, str, float] | None:
    for s in cable.lengths:
        if s.m >= need - 1e-9:
            if s.m > reach + 1e-9:
                return None
            return s.m, s.sku, s.price.usd
    return None


class Chooser:
    def __init__(self, catalog: Catalog, design: Design) -> None:
        self.catalog = catalog
        self.cab = design.cabling
        self.cache: dict[tuple[Any, ...], Choice | None] = {}
        self.opt_cache: dict[tuple[Any, ...], list[Option]] = {}
        # Two lengths between the same neighbouring breakpoints (stocked lengths, reaches, the copper
        # cap) lead to the same choice, so choices are cached per bucket, not per centimetre.
        marks = {s.m for c in catalog.cables.values() for s in c.lengths}
        marks |= {c.reach_m for c in catalog.cables.values()} | {x.reach_m for x in catalog.transceivers.values()}
        if self.cab.max_copper_m is not None:
            marks.add(self.cab.max_copper_m)
        marks |= {r.max_dac_m for r in catalog.media_rules.values() if r.max_dac_m is not None}
        marks |= {r.max_copper_flat_m for r in catalog.media_rules.values() if r.max_copper_flat_m is not None}
        self.breaks = sorted(marks)
        self.fan_price = {x.sku: x.price.usd for c in catalog.cables.values() if c.kind == "fanout" for x in c.lengths}

    def bucket(self, length: float) -> int:
        return bisect.bisect_left(self.breaks, length - 1e-9)

    def options(self, shape: str, a: End, b: End, speed: int, proto: str) -> list[Option]:
        """Every catalog option that fits the ends (length not considered yet)."""
        lane = lane_rate(a, b)
        key = (shape, a.connector, a.ppc, b.connector, b.ppc, speed, lane, proto)
        if key in self.opt_cache:
            return self.opt_cache[key]
        out: list[Option] = []

        def runs(part: Cable | Transceiver) -> bool:
            # a part that names lane rates does not run a link of another (NDR optics on XDR, and back)
            return (
                proto in part.protocols
                and speed in part.speeds_gbps
                and (not part.lane_gbps or lane is None or lane in part.lane_gbps)
            )

        for ck, c in sorted(self.catalog.cables.items()):
            if not runs(c) or c.kind != "direct":
                continue
            assert c.a_end is not None and c.b_end is not None
            for flip in (False, True):
                ea, eb = (c.b_end, c.a_end) if flip else (c.a_end, c.b_end)
                if a.connector not in ea.fits or b.connector not in eb.fits:
                    continue
                legs_ok = (
                    (shape == "straight" and c.legs == 1 and ea.ports == 2 and eb.ports == 2)
                    or (
                        shape == "single"
                        and c.legs == 1
                        and ea.ports == 1
                        and eb.ports == 1
                        and a.ppc == 1
                        and b.ppc == 1
                    )
                    or (shape == "split-a" and c.legs == 2 and not flip and ea.ports == 2 and eb.ports == 1)
                    or (shape == "split-b" and c.legs == 2 and flip and eb.ports == 2 and ea.ports == 1)
                )
                if legs_ok:
                    out.append(Option(c.media, ck, None, None, c.reach_m, flip))
                    break
        xs = self.catalog.transceivers

        def fits(x: Transceiver, e: End) -> bool:
            ports = e.ppc in x.breakout if x.breakout else x.ports == e.ppc
            return e.connector in x.fits and ports and runs(x)

        def fanout(x: Transceiver, e: End) -> str | None:
            """The SKU of the fan-out a broken-out optic's cage takes (its shortest stocked length: it
            stays in the rack), or None when the catalog has none."""
            for c in sorted(self.catalog.cables.values(), key=lambda c: (c.lengths[0].price.usd, c.lengths[0].sku)):
                if (
                    c.kind == "fanout"
                    and c.legs == e.ppc
                    and c.fiber_connector == x.fiber_connector
                    and c.leg_connector == x.breakout[e.ppc]
                    and c.media == x.media
                ):
                    return c.lengths[0].sku
            return None

        # a splitter fiber joins one connector of the twin-side optic to the two single-port optics
        splittable = (shape == "split-a" and a.ppc == 2) or (shape == "split-b" and b.ppc == 2)

        for ka, xa in sorted(xs.items()):
            if not fits(xa, a):
                continue
            for kb, xb in sorted(xs.items()):
                if not fits(xb, b) or xb.media != xa.media:
                    continue
                if xb.fiber_connector != xa.fiber_connector and not (xa.breakout or xb.breakout):
                    continue
                # a chain of alike twin cages (switch to switch) may have a cage at either end of its
                # links, so it takes one part; a server's flat-top cages and a switch's finned ones differ
                if shape == "mixed" and a.ppc == 2 and b.ppc == 2 and a.connector == b.connector and ka != kb:
                    continue
                if xa.breakout or xb.breakout:
                    # a broken-out optic: every link its own fiber between the fan-outs' legs (or a whole
                    # optic's connector), the fan-outs one per cage
                    if xb.media != xa.media:
                        continue
                    conn_a = xa.breakout[a.ppc] if xa.breakout else xa.fiber_connector
                    conn_b = xb.breakout[b.ppc] if xb.breakout else xb.fiber_connector
                    fan_a = fanout(xa, a) if xa.breakout else None
                    fan_b = fanout(xb, b) if xb.breakout else None
                    if conn_a != conn_b or (xa.breakout and fan_a is None) or (xb.breakout and fan_b is None):
                        continue
                    for ck, c in sorted(self.catalog.cables.items()):
                        if (
                            c.kind == "fiber"
                            and c.legs == 1
                            and c.media == xa.media
                            and c.fiber_connector == conn_a
                            and runs(c)
                        ):
                            reach = min(xa.reach_m, xb.reach_m, c.reach_m)
                            out.append(Option(c.media, ck, ka, kb, reach, fan_a=fan_a, fan_b=fan_b))
                    continue
                if xb.fiber_connector != xa.fiber_connector:
                    continue
                # a single-port optic runs a split speed (NDR200) only on a splitter leg, and a splitter
                # leg carries only the lanes of a split speed
                split = speed in xa.split_speeds_gbps or speed in xb.split_speeds_gbps
                if split and not splittable:
                    continue
                for ck, c in sorted(self.catalog.cables.items()):
                    if (
                        c.kind == "fiber"
                        and c.media == xa.media
                        and c.fiber_connector == xa.fiber_connector
                        and runs(c)
                        and (c.legs == 2) == split
                    ):
                        out.append(Option(c.media, ck, ka, kb, min(xa.reach_m, xb.reach_m, c.reach_m), split=split))
        self.opt_cache[key] = out
        return out

    def allowed(
        self, opts: list[Option], lengths: list[float], switch_switch: bool, knobs: bool = True
    ) -> list[Option]:
        if not knobs:
            return opts
        out = [o for o in opts if o.media not in self.cab.forbidden_media]
        if self.cab.max_copper_m is not None and max(lengths) > self.cab.max_copper_m:
            out = [o for o in out if o.media not in COPPER]
        return out

    def within_rule(self, ch: Choice, speed: int, lane: int | None, proto: str, flat_both: bool = False) -> bool:
        """Whether a choice keeps to the catalog's media rule for the speed and lane rate (`flat_both`: both
        ends' cages take flat-top plugs, which a rule may limit copper between)."""
        found = self.catalog.media_rule(speed, lane, proto)
        return found is None or found[1].allows(ch.option.media, max(ch.lengths), flat_both)

    def flat_both(self, a: End, b: End) -> bool:
        return self.catalog.flat_top(a.connector) and self.catalog.flat_top(b.connector)

    def cost(self, o: Option, lengths: list[float], cages_a: int, cages_b: int) -> Choice | None:
        c = self.catalog.cables[o.cable]
        total = 0.0
        if o.xa is not None:
            total = cages_a * self.catalog.transceivers[o.xa].price.usd
            total += cages_b * self.catalog.transceivers[o.xb or o.xa].price.usd
        for fan, cages in ((o.fan_a, cages_a), (o.fan_b, cages_b)):
            if fan is not None:
                total += cages * self.fan_price[fan]
        if not o.per_link:  # one cable for the bundle, as long as its longest run
            s = _stock(c, max(lengths), o.reach_m)
            if s is None:
                return None
            return Choice(o, [s[0]] * len(lengths), [s[1]] * len(lengths), total + s[2])
        ls, skus = [], []
        for need in lengths:
            s = _stock(c, need, o.reach_m)
            if s is None:
                return None
            ls.append(s[0])
            skus.append(s[1])
            total += s[2]
        return Choice(o, ls, skus, total)

    def choose(
        self,
        shape: str,
        a: End,
        b: End,
        speed: int,
        proto: str,
        switch_switch: bool,
        lengths: list[float],
        cages_a: int,
        cages_b: int,
        knobs: bool = True,
        rules: bool = True,
    ) -> Choice | None:
        """The cheapest fitting option; `knobs` and `rules` False drop the design's cabling knobs and the
        catalog's media rules, so an error can say which of them excluded every part."""
        lane = lane_rate(a, b)
        key = (
            shape,
            a.connector,
            a.ppc,
            b.connector,
            b.ppc,
            speed,
            lane,
            proto,
            switch_switch,
            tuple(map(self.bucket, lengths)),
            cages_a,
            cages_b,
            knobs,
            rules,
        )
        if key in self.cache:
            return self.cache[key]
        opts = self.allowed(self.options(shape, a, b, speed, proto), lengths, switch_switch, knobs)
        fits = [ch for o in opts if (ch := self.cost(o, lengths, cages_a, cages_b)) is not None]
        if rules:
            flat = self.flat_both(a, b)
            fits = [ch for ch in fits if self.within_rule(ch, speed, lane, proto, flat)]
        if (
            knobs
            and switch_switch
            and self.cab.prefer_acc_switch_to_switch
            and any(ch.option.media == "acc" for ch in fits)
        ):
            fits = [ch for ch in fits if ch.option.media != "dac"]
        best = min(
            fits,
            key=lambda ch: (
                round(ch.cost, 6),
                MEDIA_ORDER.index(ch.option.media),
                ch.option.cable,
                ch.option.xa or "",
                ch.option.xb or "",
            ),
            default=None,
        )
        self.cache[key] = best
        return best


# ------------------------------------------------------------------------------------------ the stage


@dataclass(slots=True)
class Bundle:
    links: list[int]
    shape: str  # straight, split-a, split-b, single, mixed
    key: tuple[str, int] | None  # the twin cage the links share
    routes: list[str] = field(default_factory=list)  # rack, adjacent or tray, per link
    routed: list[float] = field(default_factory=list)  # metres, per link
    choice: Choice | None = None
    component: int = -1


@dataclass(slots=True)
class Wiring:
    """plan.links with both ends resolved to the cages their plugs go into, index-aligned."""

    links: list[Link]
    a_dev: list[str]
    b_dev: list[str]
    ends_a: list[End]
    ends_b: list[End]


@dataclass(slots=True)
class Routes:
    """Where every link runs and how long it is, index-aligned with the links."""

    where: dict[str, tuple[str, str, int, float]]  # device -> (rack, row, position, port height mm)
    kind: list[str]  # rack, adjacent or tray
    routed: list[float]  # metres, rounded up to the centimetre
    trays: Trays
    router: Router


def plan_cables(plan: Plan, catalog: Catalog) -> None:
    """The cabling stage (runs after placement and the invariants)."""
    design = plan.design
    wiring = _resolve_ends(plan, catalog, design)
    bundles = _bundle(wiring)
    routes = _route(plan, catalog, design, wiring)
    _choose_media(plan, catalog, design, wiring, bundles, routes)
    _check_reach(wiring, bundles, routes)
    _check_rules(catalog, design, wiring, bundles)
    capacity = _fill_trays(catalog, design, wiring, bundles, routes)
    _record(
        plan, bundles, wiring.links, wiring.ends_a, wiring.ends_b, routes.trays, capacity, design.site.tray.fill_limit
    )


def _resolve_ends(plan: Plan, catalog: Catalog, design: Design) -> Wiring:
    maps = port_ends(plan, catalog, design)
    links = plan.links
    port_map = {d.name: maps[f"{d.kind}:{d.model}"] for d in plan.devices}
    a_dev = [lk.a_device for lk in links]
    b_dev = [lk.b_device for lk in links]
    try:
        ends_a = [port_map[d][lk.a_port] for d, lk in zip(a_dev, links, strict=True)]
        ends_b = [port_map[d][lk.b_port] for d, lk in zip(b_dev, links, strict=True)]
    except KeyError as exc:
        # the invariants already proved every port exists, so only a bug gets here
        raise DesignError.one(
            "backend.switch",
            f"a link uses port {exc} that its device does not have",
            "this is a railyard bug; please report the design",
        ) from None
    return Wiring(links, a_dev, b_dev, ends_a, ends_b)


def _bundle(w: Wiring) -> list[Bundle]:
    """Group links sharing a twin-port cage, since one cable or twin transceiver serves the cage, and
    give each bundle its shape."""
    n = len(w.links)
    ends_a, ends_b, a_dev, b_dev = w.ends_a, w.ends_b, w.a_dev, w.b_dev
    cage_use: Counter[tuple[str, int]] = Counter()
    keys: list[tuple[str, int] | None] = [None] * n
    for i in range(n):
        ea, eb = ends_a[i], ends_b[i]
        if eb.ppc > 1:
            cage_use[(b_dev[i], eb.cage)] += 1
        if ea.ppc > 1:
            cage = (a_dev[i], ea.cage)
            cage_use[cage] += 1
            keys[i] = cage
        elif eb.ppc > 1:
            keys[i] = (b_dev[i], eb.cage)
    groups: dict[tuple[str, int], list[int]] = {}
    bundles: list[Bundle] = []
    for i, key in enumerate(keys):
        if key is None:
            bundles.append(Bundle([i], "single", None))
        elif key in groups:
            groups[key].append(i)
        else:
            groups[key] = [i]
            bundles.append(Bundle(groups[key], "", key))
    for bd in bundles:
        if bd.shape:
            continue
        first = bd.links[0]
        if ends_a[first].ppc > 1:
            far = {(b_dev[i], ends_b[i].cage, ends_b[i].ppc) for i in bd.links}
            one = next(iter(far))
            if len(far) == 1 and one[2] > 1 and cage_use[one[:2]] == len(bd.links):
                bd.shape = "straight"
            elif all(ends_b[i].ppc == 1 for i in bd.links):
                bd.shape = "split-a"
            else:
                bd.shape = "mixed"
        else:
            bd.shape = "split-b" if all(ends_a[i].ppc == 1 for i in bd.links) else "mixed"
    return bundles


def _route(plan: Plan, catalog: Catalog, design: Design, w: Wiring) -> Routes:
    where = _port_heights(plan, catalog, design)
    kind, pairs = _route_kinds(w, where)
    trays = build_trays(plan, design)
    router = Router(trays, pairs)
    routed = _run_lengths(design, w, where, kind, trays, router)
    return Routes(where, kind, routed, trays, router)


def _port_heights(plan: Plan, catalog: Catalog, design: Design) -> dict[str, tuple[str, str, int, float]]:
    racks = {r.name: r for r in plan.racks}
    rack_h = rack_height_mm(design.site.rack.units)

    def z_of(d: Device) -> float:
        if d.unit is None:  # zero-U devices hang mid-rack
            return rack_h / 2
        return unit_centre_mm(d.unit, device_size(catalog, d)[0])

    where = {}
    for d in plan.devices:
        if d.rack is not None:
            r = racks[d.rack]
            where[d.name] = (d.rack, r.row, r.position, z_of(d))
    return where


def _route_kinds(w: Wiring, where: dict[str, tuple[str, str, int, float]]) -> tuple[list[str], set[tuple[str, str]]]:
    """rack, adjacent or tray per link, and the rack pairs the tray router has to connect."""
    pairs: set[tuple[str, str]] = set()
    kind: list[str] = [""] * len(w.links)
    for i in range(len(w.links)):
        ra, rowa, posa, _ = where[w.a_dev[i]]
        rb, rowb, posb, _ = where[w.b_dev[i]]
        if ra == rb:
            kind[i] = "rack"
        elif rowa == rowb and (posa - posb == 1 or posb - posa == 1):
            kind[i] = "adjacent"
        else:
            kind[i] = "tray"
            pairs.add((ra, rb) if ra < rb else (rb, ra))
    return kind, pairs


def _run_lengths(
    design: Design,
    w: Wiring,
    where: dict[str, tuple[str, str, int, float]],
    kind: list[str],
    trays: Trays,
    router: Router,
) -> list[float]:
    site = design.site
    problems: list[Problem] = []
    z_tray = trays.z_tray_mm
    slack_t, slack_d = site.slack.tray_m, site.slack.direct_m
    width_m = site.rack.width_mm / 1000
    routed = [0.0] * len(w.links)
    for i in range(len(w.links)):
        ra, _, _, za = where[w.a_dev[i]]
        rb, _, _, zb = where[w.b_dev[i]]
        if kind[i] == "rack":
            x = abs(za - zb) / 1000 + slack_d
        elif kind[i] == "adjacent":
            x = width_m + abs(za - zb) / 1000 + slack_d
        else:
            dist = router.distance(ra, rb)
            if dist is None:
                lk = w.links[i]
                problems.append(
                    Problem(
                        "site.floor.keepouts",
                        f"no tray path from rack {ra} to rack {rb} "
                        f"({lk.a_device} {lk.a_port} -> {lk.b_device} {lk.b_port})",
                        "move the keep-outs that block trays, or add cross trays (site.tray.cross_every)",
                    )
                )
                if len(problems) >= MAX_REPORTED:
                    raise DesignError(problems)
                x = 0.0
            else:
                x = (z_tray - za) / 1000 + dist + (z_tray - zb) / 1000 + slack_t
        routed[i] = math.ceil(round(x * 100, 6)) / 100  # centimetres, rounded up
    if problems:
        raise DesignError(problems)
    return routed


def _switch_field(network: str) -> str:
    """The design field naming a network's switch model, for problems with its cables."""
    return "storage.fabric.switch" if network == "storage" else f"{network}.switch"


def _choose_media(
    plan: Plan, catalog: Catalog, design: Design, w: Wiring, bundles: list[Bundle], routes: Routes
) -> None:
    links, ends_a, ends_b, routed = w.links, w.ends_a, w.ends_b, routes.routed
    problems: list[Problem] = []
    chooser = Chooser(catalog, design)
    proto_of = {net: network_protocol(design, net) for net in plan.networks}
    mixed = [bd for bd in bundles if bd.shape == "mixed"]
    _choose_mixed(mixed, links, ends_a, ends_b, routed, chooser, proto_of, plan.index(), problems)
    is_switch = {d.name for d in plan.devices if d.kind == "switch"}
    for bd in bundles:
        if bd.shape == "mixed":
            continue
        i = bd.links[0]
        lk = links[i]
        ls = [routed[k] for k in bd.links]
        ss = lk.a_device in is_switch and lk.b_device in is_switch
        proto = proto_of.get(lk.network, "ethernet")
        # a twin cable or splitter plugs one cage on its twin side; fibers need a transceiver per cage
        ca = 1 if bd.shape in ("straight", "split-a", "single") else len(bd.links)
        cb = 1 if bd.shape in ("straight", "split-b", "single") else len(bd.links)
        ch = chooser.choose(bd.shape, ends_a[i], ends_b[i], lk.speed_gbps, proto, ss, ls, ca, cb)
        if ch is None:
            problems.append(_no_part(chooser, bd.shape, lk, ends_a[i], ends_b[i], ls, ss, proto, ca, cb))
            if len(problems) >= MAX_REPORTED:
                break
        bd.choice = ch
    if problems:
        raise DesignError(problems)


def _check_reach(w: Wiring, bundles: list[Bundle], routes: Routes) -> None:
    """Every run fits its stocked cable and every stocked cable is within its medium's reach: checked
    apart from how the choice was made, so a chooser bug cannot ship a cable that does not reach."""
    problems: list[Problem] = []
    for bd in bundles:
        bd.routed = [routes.routed[k] for k in bd.links]
        bd.routes = [routes.kind[k] for k in bd.links]
        assert bd.choice is not None
        for k, need, have in zip(bd.links, bd.routed, bd.choice.lengths, strict=True):
            if not need <= have <= bd.choice.option.reach_m:
                lk = w.links[k]
                problems.append(
                    Problem(
                        _switch_field(lk.network),
                        f"{lk.a_device} {lk.a_port} -> {lk.b_device} "
                        f"{lk.b_port}: {need} m routed on a {have} m {bd.choice.option.media} "
                        f"reaching {bd.choice.option.reach_m} m",
                        "this is a railyard bug",
                    )
                )
    if problems:
        raise DesignError(problems[:MAX_REPORTED])


def _check_rules(catalog: Catalog, design: Design, w: Wiring, bundles: list[Bundle]) -> None:
    """Every chosen medium keeps to the catalog's media rule for its link's speed: checked from the
    rules themselves, apart from the chooser, so a chooser bug cannot ship e.g. multimode optics on XDR."""
    problems: list[Problem] = []
    for bd in bundles:
        assert bd.choice is not None
        i = bd.links[0]
        lk = w.links[i]
        found = catalog.media_rule(
            lk.speed_gbps, lane_rate(w.ends_a[i], w.ends_b[i]), network_protocol(design, lk.network)
        )
        if found is None:
            continue
        key, rule = found
        o = bd.choice.option
        longest = max(bd.choice.lengths)
        flat_both = catalog.flat_top(w.ends_a[i].connector) and catalog.flat_top(w.ends_b[i].connector)
        if not rule.allows(o.media, longest, flat_both):
            problems.append(
                Problem(
                    f"media_rules.{key}",
                    f"{lk.a_device} {lk.a_port} -> {lk.b_device} "
                    f"{lk.b_port}: {o.media} ({o.cable}, {longest} m) breaks media rule {key}",
                    "this is a railyard bug",
                )
            )
    if problems:
        raise DesignError(problems[:MAX_REPORTED])


def _fill_trays(catalog: Catalog, design: Design, w: Wiring, bundles: list[Bundle], routes: Routes) -> float:
    """Charge every tray segment with the cross-section of the cables it carries; returns the tray
    capacity (mm2)."""
    area: dict[tuple[str, str], float] = defaultdict(float)
    where = routes.where
    for bd in bundles:
        assert bd.choice is not None
        d_mm = catalog.cables[bd.choice.option.cable].diameter_mm
        a_mm2 = math.pi * d_mm * d_mm / 4
        # a twin cable or splitter is one cable for the whole bundle; fibers run one per link
        per_link = bd.choice.option.per_link or bd.shape in ("single", "mixed")
        for j, k in enumerate(bd.links):
            if routes.kind[k] != "tray" or (j and not per_link):
                continue
            ra, rb = where[w.a_dev[k]][0], where[w.b_dev[k]][0]
            area[(ra, rb) if ra < rb else (rb, ra)] += a_mm2
    per_edge = routes.router.charge(area)
    tray = design.site.tray
    capacity = tray.width_mm * tray.depth_mm * tray.levels
    worst = []
    for seg, mm2 in zip(routes.trays.segments, per_edge, strict=True):
        seg.cable_mm2 = round(mm2, 1)
        seg.fill = round(mm2 / capacity, 4)
        if seg.fill > tray.fill_limit:
            worst.append(seg)
    if worst:
        worst.sort(key=lambda s: (-s.fill, s.id))
        fix = (
            "use wider or deeper trays (site.tray.width_mm, depth_mm), more levels (site.tray.levels), or "
            "more cross trays (site.tray.cross_every)"
        )
        if design.backend.planes and design.site.network_rows == "per_block":
            # every plane's leaf-spine fibers in one network row's trays: a row per plane divides them
            fix += ", or give each plane a network row of its own (site.network_rows: per_plane)"
        raise DesignError(
            [
                Problem(
                    "site.tray.width_mm",
                    f"tray segment {s.id} at {s.a_mm}..{s.b_mm} mm is {s.fill:.0%} full "
                    f"(limit {tray.fill_limit:.0%} of {capacity:,} mm2)",
                    fix,
                )
                for s in worst[:MAX_REPORTED]
            ]
        )
    return capacity


def _choose_mixed(
    mixed: list[Bundle],
    links: list[Any],
    ends_a: list[End],
    ends_b: list[End],
    routed: list[float],
    chooser: Chooser,
    proto_of: dict[str, str],
    devs: dict[str, Device],
    problems: list[Problem],
) -> None:
    """Bundles whose cages lead to different devices can only take optics, and the twin transceivers
    they share must be one part with one fiber type: choose per connected chain of cages."""
    if not mixed:
        return
    parent: dict[Any, Any] = {}

    def find(x: Any) -> Any:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for bi, bd in enumerate(mixed):
        for k in bd.links:
            for cage in ((links[k].a_device, ends_a[k].cage), (links[k].b_device, ends_b[k].cage)):
                ra, rb = find(("b", bi)), find(cage)
                if ra != rb:
                    parent[rb] = ra
    comps: dict[Any, list[Bundle]] = defaultdict(list)
    for bi, bd in enumerate(mixed):
        comps[find(("b", bi))].append(bd)
    for ci, comp in enumerate(sorted(comps.values(), key=lambda c: c[0].links[0])):
        ks = [k for bd in comp for k in bd.links]
        i = ks[0]
        lk = links[i]
        kinds = {(ends_a[k].connector, ends_a[k].ppc, ends_b[k].connector, ends_b[k].ppc) for k in ks}
        if len(kinds) > 1:
            problems.append(
                Problem(
                    _switch_field(lk.network),
                    f"twin-port cages shared by {lk.a_device} {lk.a_port} "
                    "and others lead to different kinds of ports; one twin transceiver cannot "
                    "serve them",
                    "keep the two ports of a cage on links of one kind",
                )
            )
            continue
        cages_a = {(links[k].a_device, ends_a[k].cage) for k in ks}
        cages_b = {(links[k].b_device, ends_b[k].cage) for k in ks} - cages_a
        ls = [routed[k] for k in ks]
        ss = devs[lk.a_device].kind == "switch" and devs[lk.b_device].kind == "switch"
        proto = proto_of.get(lk.network, "ethernet")
        ch = chooser.choose("mixed", ends_a[i], ends_b[i], lk.speed_gbps, proto, ss, ls, len(cages_a), len(cages_b))
        if ch is None:
            if (
                chooser.choose(
                    "mixed",
                    ends_a[i],
                    ends_b[i],
                    lk.speed_gbps,
                    proto,
                    ss,
                    ls,
                    len(cages_a),
                    len(cages_b),
                    knobs=False,
                    rules=False,
                )
                is not None
            ):
                problems.append(
                    _no_part(chooser, "mixed", lk, ends_a[i], ends_b[i], ls, ss, proto, len(cages_a), len(cages_b))
                )
            else:
                problems.append(
                    Problem(
                        _switch_field(lk.network),
                        f"no optic in the catalog reaches {max(ls)} m "
                        f"for {lk.a_device} {lk.a_port} -> {lk.b_device} {lk.b_port}",
                        "bring the racks closer or add a longer-reach transceiver to the catalog",
                    )
                )
            continue
        pos = 0
        for bd in comp:
            m = len(bd.links)
            bd.choice = Choice(ch.option, ch.lengths[pos : pos + m], ch.skus[pos : pos + m], 0.0)
            bd.component = ci
            pos += m


def _no_part(
    chooser: Chooser, shape: str, lk: Link, ea: End, eb: End, ls: list[float], ss: bool, proto: str, ca: int, cb: int
) -> Problem:
    """Why no part serves a bundle: the design's cabling knobs, the catalog's media rule for the speed,
    the reach, or the connectors; tried in that order by lifting one restriction at a time."""
    what = f"{lk.a_device} {lk.a_port} -> {lk.b_device} {lk.b_port} ({lk.speed_gbps}G {proto}, {max(ls)} m routed)"

    def found(knobs: bool, rules: bool) -> bool:
        return chooser.choose(shape, ea, eb, lk.speed_gbps, proto, ss, ls, ca, cb, knobs=knobs, rules=rules) is not None

    cab = chooser.cab
    knob_field = "cabling.forbidden_media" if cab.forbidden_media else "cabling.max_copper_m"
    if found(knobs=False, rules=True):
        return Problem(
            knob_field,
            f"every part that fits {what} is ruled out by the cabling knobs",
            "allow a medium again or raise cabling.max_copper_m",
        )
    rule = chooser.catalog.media_rule(lk.speed_gbps, lane_rate(ea, eb), proto)
    if rule is not None and (found(knobs=True, rules=False) or found(knobs=False, rules=False)):
        key, r = rule
        allows = ", ".join(m + (f" (up to {r.max_dac_m:g} m)" if m == "dac" and r.max_dac_m else "") for m in r.media)
        if r.max_copper_flat_m is not None and chooser.flat_both(ea, eb):
            allows += f"; copper between two flat-top ends up to {r.max_copper_flat_m:g} m"
        barred = _barred_by_rule(chooser, shape, lk, ea, eb, ls, proto, ca, cb)
        both = "" if found(knobs=True, rules=False) else " together with the cabling knobs"
        return Problem(
            f"media_rules.{key}",
            f"no part for {what} keeps to catalog media rule {key} "
            f"({r.description}: {allows} only){both}; it excludes {barred}",
            f"add a catalog part of an allowed medium ({', '.join(r.media)}) that fits "
            f"{ea.connector} to {eb.connector} cages at {lk.speed_gbps}G, or shorten the run "
            "(site.spine_rack_position, site.floor.row_positions) so an allowed part reaches"
            + (f", or {knob_field}" if both else ""),
            where="the parts catalog",
        )  # the rule is not in the design file: no design line to name
    if not any(o.split for o in chooser.options(shape, ea, eb, lk.speed_gbps, proto)) and any(
        lk.speed_gbps in x.split_speeds_gbps and e.connector in x.fits and x.ports == 1
        for x in chooser.catalog.transceivers.values()
        for e in (ea, eb)
    ):
        fix = (
            "add a 1:2 splitter fiber (kind: fiber, legs: 2) to the catalog"
            if shape in ("split-a", "split-b")
            else "give the link's twin-port end two such ports (a splitter fiber starts at a twin-port optic)"
        )
        return Problem(
            "site.floor",
            f"no catalog part reaches {what}: a single-port optic runs "
            f"{lk.speed_gbps}G only on a splitter fiber leg, and none fits",
            fix,
        )
    if chooser.options(shape, ea, eb, lk.speed_gbps, proto):
        return Problem(
            "site.floor",
            f"no catalog part reaches {what}",
            "bring the racks closer (site.spine_rack_position, site.floor.row_positions, site.rows) "
            "or add a longer-reach part to the catalog",
        )
    return Problem(
        _switch_field(lk.network),
        f"no catalog cable or transceiver joins a {ea.connector} to a "
        f"{eb.connector} cage at {lk.speed_gbps}G for {what}",
        "pick parts whose connectors match, or add a cable to the catalog",
    )


def _barred_by_rule(
    chooser: Chooser, shape: str, lk: Link, ea: End, eb: End, ls: list[float], proto: str, ca: int, cb: int
) -> str:
    """The parts that would reach but the media rule excludes, e.g. "mmf (ndr-mmf-mpo)"."""
    out = []
    for o in chooser.options(shape, ea, eb, lk.speed_gbps, proto):
        ch = chooser.cost(o, ls, ca, cb)
        if ch is not None and not chooser.within_rule(
            ch, lk.speed_gbps, lane_rate(ea, eb), proto, chooser.flat_both(ea, eb)
        ):
            length = f" at {max(ch.lengths):g} m" if o.media == "dac" else ""
            out.append(f"{o.media}{length} ({o.cable})")
    return ", ".join(sorted(set(out))) or "nothing else"


def _loc(d: Device) -> str:
    return f"U{d.unit:02d}" if d.unit is not None else str(d.attrs.get("slot", "0U"))


def _record(
    plan: Plan,
    bundles: list[Bundle],
    links: list[Any],
    ends_a: list[End],
    ends_b: list[End],
    trays: Trays,
    capacity: float,
    limit: float,
) -> None:
    """plan.cables: one record per bundle (what one cable or one pair of optics serves), with
    per-link arrays aligned to "links" (indices into plan.links); plus tray fill and the totals."""
    cables = []
    seen_cages: set[tuple[str, int]] = set()
    counts: Counter[tuple[str, str]] = Counter()
    metres: dict[str, float] = {}  # by kind; a kind without cables reads 0 (an int, as a Counter's would)
    xcvrs: Counter[tuple[str, str]] = Counter()
    parts: Counter[str] = Counter()
    keys = [
        cable_key([(links[k].a_device, links[k].a_port, links[k].b_device, links[k].b_port) for k in bd.links])
        for bd in bundles
    ]
    ids, clashed = stable_ids("C", keys)
    if clashed:
        plan.warnings.append(
            PlanWarning(
                field="cables",
                message=f"{len(clashed)} cables got a 16-character id because their short ids "
                f"clashed (a 1-in-2,000 event at a million cables): "
                f"{', '.join(ids[keys.index(k)] for k in clashed[:4])}",
            )
        )
    prefix = {d.name: f"{d.rack}.{_loc(d)}." for d in plan.devices if d.rack is not None}
    a_dev = [lk.a_device for lk in links]
    b_dev = [lk.b_device for lk in links]
    a_port = [lk.a_port for lk in links]
    b_port = [lk.b_port for lk in links]
    fiber = {"aoc", "mmf", "smf"}
    # a NIC broken out into planes (backend.plane_split: nic_port) names the plane on every label of
    # its backend, as the legs of one NIC cage go to as many planes; other designs' labels stay as built
    devs = plan.index() if plan.design.backend.plane_split == "nic_port" else {}

    def label(k: int) -> str:
        text = f"{prefix[a_dev[k]]}{a_port[k]} -- {prefix[b_dev[k]]}{b_port[k]}"
        plane = link_plane(devs, links[k]) if devs else ""
        return f"{plane}: {text}" if plane else text

    for n, bd in enumerate(bundles):
        ch = bd.choice
        assert ch is not None
        o = ch.option
        ks = bd.links
        net = links[ks[0]].network
        physical = len(ks) if o.per_link or bd.shape in ("single", "mixed") else 1
        counts[(net, o.media)] += physical
        kind = "copper" if o.media in COPPER else ("fiber" if o.media in fiber else "cat6")
        metres[kind] = metres.get(kind, 0) + (sum(ch.lengths) if physical > 1 else ch.lengths[0])
        for j in range(physical):
            parts[ch.skus[j]] += 1
        if o.xa is not None and o.xb is not None:  # optics: an option has both ends' or neither
            for k in ks:
                for cage, part, fan in (
                    ((a_dev[k], ends_a[k].cage), o.xa, o.fan_a),
                    ((b_dev[k], ends_b[k].cage), o.xb, o.fan_b),
                ):
                    if cage not in seen_cages and not plan.catalog.transceivers[part].built_in:
                        seen_cages.add(cage)
                        xcvrs[(net, part)] += 1
                        if fan is not None:  # a broken-out optic's fan-out: one per cage, as the optic
                            parts[fan] += 1
        cables.append(
            CableRecord(
                id=ids[n],
                links=ks,
                shape=bd.shape,
                network=net,
                media=o.media,
                catalog=o.cable,
                physical=physical,
                parts=ch.skus,
                length_m=ch.lengths,
                reach_m=o.reach_m,
                routed_m=bd.routed,
                route=bd.routes,
                labels=[label(k) for k in ks],
                a_transceiver=o.xa,
                b_transceiver=o.xb,
                a_fanout=o.fan_a,
                b_fanout=o.fan_b,
            )
        )
    plan.cables = cables
    plan.trays = TraysRecord(capacity_mm2=capacity, fill_limit=limit, segments=trays.segments)
    nets = sorted({n for n, _ in counts})
    plan.cabling = CablingTotals(
        cables={f"{n}/{m}": counts[(n, m)] for n, m in sorted(counts, key=lambda k: (k[0], MEDIA_ORDER.index(k[1])))},
        copper_m=round(metres.get("copper", 0), 2),
        fiber_m=round(metres.get("fiber", 0), 2),
        cat6_m=round(metres.get("cat6", 0), 2),
        transceivers={n: sum(c for (nn, _), c in xcvrs.items() if nn == n) for n in nets},
        transceiver_parts={p: sum(c for (_, pp), c in xcvrs.items() if pp == p) for p in sorted({p for _, p in xcvrs})},
        cable_parts=dict(sorted(parts.items())),
        max_tray_fill=max((s.fill for s in trays.segments), default=0.0),
    )
