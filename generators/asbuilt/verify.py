"""As-built verification: a discovered InfiniBand fabric (``ibnetdiscover`` output) against the plan.

Devices are matched by node description, never by GUID (GUIDs come with the hardware): a switch by
its host name (MLNX-OS reports ``MF0;<hostname>:<model>/U1``; a plain name or a node-name map entry
works too), an HCA by ``<host> <ibdev>``, which rdma-core sets by default. Each difference is
reported with both ends as device, port name (and IB port number), rack and unit, plus the cable
label, so a technician can walk to it:

* missing: planned, not discovered (not cabled, wrong port, or the link is down: dirty fiber);
* extra: discovered, not planned (cabled to the wrong port, or an unknown device);
* swapped: two planned links found with their ends exchanged (the classic crossed pair), reported
  once with the two ports where the cables must trade places;
* slow: the link is up at a lower speed or width than planned (dirty or damaged optics).

Rack and unit come from placement (``Device.rack``, ``Device.unit``), cable id and printed label from
the cable plan (``plan.cables``: per link, the label on the cable and the rack sheets); a plan without
them still gets device and port. A port on a splitter or twin cable also names its plug (one plug
carrying several ports, or a numbered leg), and a swap is never to be fixed at a plug that carries both
of the swapped ports.

The Ethernet networks (frontend, out-of-band, an Ethernet backend or storage fabric) are checked the
same way from LLDP neighbour tables (`verify_lldp`), into the same report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from generators.asbuilt.ibnetdiscover import NetParseError, links_of, one_sided, parse_net
from generators.asbuilt.lldp import LldpParseError, Neighbour, parse_lldp
from generators.model.errors import DesignError
from generators.model.inputfile import DISCOVERY_LIMIT, LLDP_LIMIT, read_bytes
from generators.model.plan import Plan
from generators.model.planes import link_plane
from generators.model.vocabulary import rank
from generators.output import Written, write_tree
from generators.stages.infiniband import backend_planes, inside_planes, switch_port_numbers
from generators.text.escape import printable
from generators.views.ibnetdiscover import NetNode, ib_speed

End = tuple[str, str]  # (device, port name) as in the plan
_MLNX_DESC = re.compile(r"^MF0;([^:]+):")


# ------------------------------------------------------------------------------------ plan locations


@dataclass(frozen=True, slots=True)
class Location:
    rack: str | None = None
    unit: int | str | None = None


@dataclass(frozen=True, slots=True)
class CableRef:
    cable_id: str | None
    label: str | None


class PlanLocator:
    """Where a port is and which cable serves it: racks and units from placement (`Device.rack`,
    `Device.unit`), cable id and printed label from the cable plan (`plan.cables`, one label per link)."""

    def __init__(self, plan: Plan) -> None:
        self._dev = {d.name: Location(d.rack, d.unit) for d in plan.devices if d.rack is not None}
        self._cable: dict[frozenset[End], CableRef] = {}
        self._plug: dict[End, str] = {}
        self._shared: dict[End, str] = {}  # port -> cable id, when its plug carries other ports of the cable
        links = plan.links
        for c in plan.cables or []:
            for k, label in zip(c.links, c.labels, strict=True):
                lk = links[k]
                self._cable[frozenset(((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)))] = CableRef(c.id, label)
            # one pulled cable serving several links: a splitter or twin cable (fibers, one per link, are
            # separate plugs even in one transceiver)
            if len(c.links) > 1 and c.physical < len(c.links):
                self._plugs_of(c.id, c.shape, [links[k] for k in c.links])

    def _plugs_of(self, cable_id: str, shape: str, lks: list[Any]) -> None:
        # the cable's shape says which end is one plug: split-a its a end, split-b its b end, straight both;
        # a splitter's legs are plugs of their own even in two ports of one server
        one_plug = {"split-a": ("a",), "split-b": ("b",), "straight": ("a", "b")}.get(shape, ())
        kind = "splitter" if shape.startswith("split") else "twin cable"
        for side in ("a", "b"):
            ends = [(getattr(lk, f"{side}_device"), getattr(lk, f"{side}_port")) for lk in lks]
            for leg, (dev, port) in enumerate(ends, start=1):
                if side in one_plug:
                    self._shared[(dev, port)] = cable_id
                    others = ", ".join(p for d, p in ends if (d, p) != (dev, port))
                    self._plug[(dev, port)] = f"one plug with {others}, {kind} {cable_id}"
                elif one_plug:
                    self._plug[(dev, port)] = f"leg {leg} of {kind} {cable_id}"

    def plug(self, end: End) -> str | None:
        """Which plug of a splitter or twin cable serves the port; None on a cable of its own."""
        return self._plug.get(end)

    def shared(self, end: End) -> str | None:
        """The cable whose one plug carries this port and others (it cannot be swapped alone)."""
        return self._shared.get(end)

    def location(self, end: End) -> Location:
        return self._dev.get(end[0]) or Location()

    def cable(self, a: End, b: End) -> CableRef | None:
        return self._cable.get(frozenset((a, b)))


# ---------------------------------------------------------------------------------------- the diff


@dataclass(frozen=True, slots=True)
class Port:
    """One end of a link, as a technician finds it."""

    device: str
    port: str  # plan port name ("1/3/2", "mlx5_0"), or "port N" on a device the plan does not know
    ib_port: int | None
    rack: str | None = None
    unit: int | str | None = None
    known: bool = True
    plug: str | None = None  # on a splitter or twin cable: "leg 2 of splitter C-..." or "one plug with ..."

    def text(self) -> str:
        num = f" (IB port {self.ib_port})" if self.ib_port is not None and self.port != f"port {self.ib_port}" else ""
        where = ""
        if self.rack is not None or self.unit is not None:
            where = f" [rack {self.rack or '?'} U{self.unit if self.unit is not None else '?'}]"
        unknown = "" if self.known else " (not in the plan)"
        plug = f" ({self.plug})" if self.plug else ""
        return f"{self.device} {self.port}{num}{where}{plug}{unknown}"


@dataclass(frozen=True, slots=True)
class LinkReport:
    a: Port
    b: Port
    cable_id: str | None = None
    label: str | None = None
    planned_speed: str | None = None
    found_speed: str | None = None
    note: str | None = None  # e.g. where an extra link's cable was planned to go

    def text(self) -> str:
        cab = ""
        if self.cable_id or self.label:
            cab = f"  cable {self.cable_id or ''}{f' label {self.label!r}' if self.label else ''}".rstrip()
        return f"{self.a.text()} <-> {self.b.text()}{cab}"


@dataclass(frozen=True, slots=True)
class SwapReport:
    planned: tuple[LinkReport, LinkReport]
    found: tuple[LinkReport, LinkReport]
    at: tuple[Port, Port]  # the two ports whose cables must trade places
    advice: str | None = None  # why not elsewhere: a plug there carries both ports, or every end is shared


@dataclass(slots=True)
class VerifyReport:
    design: str
    planned_links: int
    discovered_links: int
    missing: list[LinkReport] = field(default_factory=list)
    extra: list[LinkReport] = field(default_factory=list)
    swapped: list[SwapReport] = field(default_factory=list)
    slow: list[LinkReport] = field(default_factory=list)
    unknown_nodes: list[str] = field(default_factory=list)
    one_sided: list[LinkReport] = field(default_factory=list)  # one end reports the link, the other does not
    scope: str = "backend"  # the networks checked
    source: str = "ibnetdiscover"
    not_covered: int = 0  # planned links no given table could see (LLDP: neither end's file, or a silent peer)
    no_table: list[str] = field(default_factory=list)  # devices of those links without a table
    # devices whose table hears nothing on any port while the plan cables some: LLDP is off, or the file
    # is not that device's table; a fault of the run, never "covered"
    silent: list[str] = field(default_factory=list)
    checks_speed: bool = True  # LLDP carries no link speed: its reports say so rather than "0 slow"
    # the planned links this run could judge (every one but the not covered): those not reported are as
    # planned, which `verify --progress` marks tested; left out of to_dict (a 200k-link list)
    covered: set[frozenset[End]] = field(default_factory=set)

    @property
    def faulty_links(self) -> int:
        """Planned links that are not as planned: a swapped pair counts as its two links."""
        return len(self.missing) + len(self.extra) + 2 * len(self.swapped) + len(self.slow) + len(self.one_sided)

    @property
    def ok(self) -> bool:
        return self.faulty_links == 0 and not self.silent

    def to_dict(self) -> dict[str, Any]:
        d = asdict(replace(self, covered=set()))
        del d["covered"]
        d["faulty_links"] = self.faulty_links
        d["ok"] = self.ok
        return d

    def text(self) -> str:
        lines = [
            f"railyard verify: {self.design}: {self.planned_links} planned {self.scope} links, "
            f"{self.discovered_links} discovered ({self.source})"
        ]
        if self.not_covered:
            shown = ", ".join(self.no_table[:12]) + (
                f" and {len(self.no_table) - 12} more" if len(self.no_table) > 12 else ""
            )
            lines.append(
                f"NOT COVERED: {self.not_covered} planned links (no table from a device that would see "
                f"them); no table from: {shown}"
            )
        for dev in self.silent:
            lines.append(
                f"SILENT   {dev}: its table hears nothing on any port, though the plan cables it: LLDP is not "
                "running there (or the file is not its table), so none of its links were checked"
            )
        if self.ok:
            lines.append("OK: the discovered fabric matches the plan" + (" where covered" if self.not_covered else ""))
            return printable("\n".join(lines)) + "\n"
        pairs = f"{len(self.swapped)} swapped pair{'' if len(self.swapped) == 1 else 's'}"
        slow = f", {len(self.slow)} slow" if self.checks_speed else "; speeds not checked: LLDP carries none"
        lines.append(
            f"FAULTS: {self.faulty_links} links{f' and {len(self.silent)} silent tables' if self.silent else ''} "
            f"({pairs}, {len(self.missing)} "
            f"missing, {len(self.extra)} extra{slow}"
            f"{f', {len(self.one_sided)} one-sided' if self.one_sided else ''})"
        )
        for lk in self.one_sided:
            lines.append(f"ONE-SIDED {lk.text()}: {lk.note}")
        for s in self.swapped:
            lines.append(f"SWAPPED  exchange the cables at {s.at[0].text()} and {s.at[1].text()}")
            if s.advice:
                lines.append(f"    ({s.advice})")
            lines += [f"    planned {lk.text()}" for lk in s.planned]
            lines += [f"    found   {lk.text()}" for lk in s.found]
        for lk in self.missing:
            lines.append(f"MISSING  {lk.text()}: not cabled, or the link is down (check and clean both ends)")
        for lk in self.extra:
            lines.append(f"EXTRA    {lk.text()}: not in the plan{f' ({lk.note})' if lk.note else ''}")
        for lk in self.slow:
            lines.append(
                f"SLOW     {lk.text()}: up at {lk.found_speed}, planned {lk.planned_speed} "
                "(clean or replace the optics/cable)"
            )
        if self.unknown_nodes:
            lines.append(f"unknown devices (description not in the plan): {', '.join(self.unknown_nodes)}")
        # descriptions come from the discovered file: never let it drive the terminal
        return printable("\n".join(lines)) + "\n"


def switch_name(desc: str) -> str:
    """Host name from a switch node description: MLNX-OS reports 'MF0;<hostname>:<model>/U1'."""
    m = _MLNX_DESC.match(desc)
    return m.group(1) if m else desc.strip()


def parse_node_name_map(text: str) -> dict[int, str]:
    """ibnetdiscover's --node-name-map format: '0x<guid> "name"' per line, '#' comments."""
    out: dict[int, str] = {}
    for line in text.splitlines():
        m = re.match(r'^\s*(0x[0-9a-fA-F]+)\s+"([^"]*)"', line)
        if m:
            out[int(m.group(1), 16)] = m.group(2)
    return out


Planned = dict[frozenset[End], tuple[End, End, str]]  # link -> (a, b, planned speed)
Found = dict[frozenset[End], tuple[End, End, str | None, bool, bool]]  # link -> (a, b, speed, a known, b known)


class _Namer:
    """Plan names for discovered ports, and report ports with IB number, rack and unit. Collects the
    discovered devices the plan does not know and the IB port numbers seen on them."""

    def __init__(
        self, plan: Plan, node_names: Mapping[int, str] | None, infiniband: bool = True, suffix: str = ""
    ) -> None:
        self.infiniband = infiniband
        # one plane of planes inside the switches: its nodes are "<switch> plane<k>", "<host> <ibdev> plane<k>"
        self.suffix = suffix
        self.catalog = plan.catalog
        self.idx = plan.index()
        self.locate = PlanLocator(plan)
        self.node_names = node_names
        self.numbers: dict[str, dict[str, int]] = {}
        self.names_by_number: dict[str, dict[int, str]] = {}
        self.unknown: set[str] = set()
        self.ib_found: dict[End, int] = {}

    def nums(self, model: str) -> dict[str, int]:
        if model not in self.numbers:
            self.numbers[model] = switch_port_numbers(self.catalog, model)
            self.names_by_number[model] = {v: k for k, v in self.numbers[model].items()}
        return self.numbers[model]

    def port(self, dev: str, pname: str, ib: int | None, known: bool = True) -> Port:
        loc = self.locate.location((dev, pname)) if known else Location()
        return Port(dev, pname, ib, loc.rack, loc.unit, known, self.locate.plug((dev, pname)) if known else None)

    def ib_of(self, end: End) -> int | None:
        """IB port number of a switch port (an HCA's single port needs no number)."""
        d = self.idx.get(end[0])
        if self.infiniband and d is not None and d.kind == "switch":
            return self.nums(d.model).get(end[1])
        return None

    def shown(self, a: End, b: End) -> tuple[End, End]:
        """Servers first, then up the tiers, as planned links are written."""
        ra = rank(self.idx[a[0]].role) if a[0] in self.idx else 0
        rb = rank(self.idx[b[0]].role) if b[0] in self.idx else 0
        return (b, a) if rb < ra else (a, b)

    def end_of(self, n: NetNode, p: int) -> tuple[End, bool]:
        """The plan's (device, port) for port p of a discovered node, and whether the plan knows it."""
        desc = self.node_names.get(n.guid, n.desc) if self.node_names else n.desc
        if self.suffix and desc.endswith(self.suffix):
            desc = desc.removesuffix(self.suffix)
        if n.kind == "Switch":
            name = switch_name(desc)
            d = self.idx.get(name)
            if d is not None and d.kind == "switch":
                self.nums(d.model)
                return (name, self.names_by_number[d.model].get(p, f"port {p}")), True
            self.unknown.add(f"switch {desc!r} (GUID 0x{n.guid:016x})")
            return (f"{desc} (GUID 0x{n.guid:016x})", f"port {p}"), False
        host, _, dev = desc.partition(" ")
        if host in self.idx and dev:
            return (host, dev if p == 1 else f"{dev} port {p}"), True
        self.unknown.add(f"HCA {desc!r} (GUID 0x{n.guid:016x})")
        # unknown devices may share a description (factory defaults): the GUID keeps them apart
        return (f"{desc} (GUID 0x{n.guid:016x})", f"port {p}"), False

    def report(
        self,
        a: End,
        b: End,
        known_a: bool = True,
        known_b: bool = True,
        speed: str | None = None,
        planned_speed: str | None = None,
    ) -> LinkReport:
        # planned links are written server/lower tier first; keep that order in reports
        ca = self.locate.cable(a, b)
        pa = self.port(a[0], a[1], self.ib_found.get(a) if not known_a else self.ib_of(a), known_a)
        pb = self.port(b[0], b[1], self.ib_found.get(b) if not known_b else self.ib_of(b), known_b)
        return LinkReport(pa, pb, ca.cable_id if ca else None, ca.label if ca else None, planned_speed, speed)


@dataclass(slots=True)
class _Diff:
    """Planned against found links. The two sets shrink as swaps explain their members."""

    planned: Planned
    found: Found
    missing_keys: list[frozenset[End]]
    extra_keys: list[frozenset[End]]
    missing_by_end: dict[End, list[frozenset[End]]]
    missing_set: set[frozenset[End]]
    extra_set: set[frozenset[End]]

    @classmethod
    def of(cls, planned: Planned, found: Found) -> _Diff:
        missing_keys = [k for k in planned if k not in found]
        extra_keys = [k for k in found if k not in planned]
        missing_by_end: dict[End, list[frozenset[End]]] = {}
        for k in missing_keys:
            for e in k:
                missing_by_end.setdefault(e, []).append(k)
        return cls(planned, found, missing_keys, extra_keys, missing_by_end, set(missing_keys), set(extra_keys))


def verify_fabric(
    plan: Plan,
    discovered: str,
    *,
    expect_speed: str | None = None,
    node_names: Mapping[int, str] | None = None,
    plane: str = "",
) -> VerifyReport:
    """Compare ibnetdiscover output to the plan's backend, or to one `plane` of a multi-plane backend (each
    plane its own subnet, discovered apart). `expect_speed` (e.g. '4xHDR') replaces the planned link
    speed, for a rehearsal on a simulator that cannot run the real one."""
    inside = bool(plane) and inside_planes(plan)
    namer = _Namer(plan, node_names, suffix=f" {plane}" if inside else "")
    planned = _planned_links(plan, expect_speed, plane, inside)
    found, lopsided = _discover(namer, discovered)
    rep = VerifyReport(plan.design.name, len(planned), len(found), covered=set(planned))
    diff = _Diff.of(planned, found)
    # swaps first: they explain pairs of missing and extra links, which are then not reported alone
    _report_swaps(rep, namer, diff)
    _report_missing(rep, namer, diff)
    _report_extra(rep, namer, diff)
    _report_slow(rep, namer, diff)
    _report_one_sided(rep, namer, lopsided)
    rep.unknown_nodes = sorted(namer.unknown)
    return rep


def _planned_links(plan: Plan, expect_speed: str | None, plane: str = "", inside: bool = False) -> Planned:
    """The backend's links (of `plane`: its switches' links, or every link's lane in it when the planes are
    inside the switches, one lane wide)."""
    planned: Planned = {}
    devs = plan.index()
    for lk in plan.links:
        if lk.network != "backend" or (plane and not inside and link_plane(devs, lk) != plane):
            continue
        a, b = (lk.a_device, lk.a_port), (lk.b_device, lk.b_port)
        planned[frozenset((a, b))] = (a, b, expect_speed or ib_speed(lk.speed_gbps, 1 if inside else 4))
    return planned


_Lopsided = tuple[End, End, bool, bool, int, int, str]  # a, b, a known, b known, IB ports, what b reports


def _discover(namer: _Namer, discovered: str) -> tuple[Found, list[_Lopsided]]:
    """Links both ends report, and links only one end reports, in plan names."""
    nodes = parse_net(discovered)
    found: Found = {}
    for n, p, peer, pp, speed in links_of(nodes):
        (a, ka), (b, kb) = namer.end_of(n, p), namer.end_of(peer, pp)
        if a == b:  # a port cabled to itself cannot happen; two identical unknown ends would collapse
            b = (f"{b[0]} (peer)", b[1])
        namer.ib_found[a], namer.ib_found[b] = p, pp
        found[frozenset((a, b))] = (a, b, speed, ka, kb)
    lopsided = []
    for n, p, peer, pp, _speed in one_sided(nodes):
        (a, _ka), (b, _kb) = namer.end_of(n, p), namer.end_of(peer, pp)
        back = peer.links.get(pp)
        says = f"{namer.end_of(nodes[back.peer], back.peer_port)[0][0]} port {back.peer_port}" if back else "no link"
        lopsided.append((a, b, _ka, _kb, p, pp, says))
    return found, lopsided


def _find_swap(diff: _Diff, x: End, y: End) -> tuple[End, End, frozenset[End], frozenset[End]] | None:
    """For found {x,y}: a missing {x,y1}, a missing {x1,y} and a found {x1,y1}."""
    for m1 in diff.missing_by_end.get(x, []):
        if m1 not in diff.missing_set:
            continue
        (y1,) = m1 - {x}
        for m2 in diff.missing_by_end.get(y, []):
            if m2 not in diff.missing_set or m2 == m1:
                continue
            (x1,) = m2 - {y}
            if frozenset((x1, y1)) in diff.extra_set:
                return x1, y1, m1, m2
    return None


def _report_swaps(rep: VerifyReport, namer: _Namer, diff: _Diff) -> None:
    """Planned {x,y1} and {x1,y}, found {x,y} and {x1,y1}: one crossed pair, not four faults."""
    for k in sorted(diff.extra_keys, key=lambda k: sorted(k)):
        if k not in diff.extra_set:
            continue
        x, y = sorted(k)
        hit = _find_swap(diff, x, y)
        if hit is None:
            x, y = y, x
            hit = _find_swap(diff, x, y)
        if hit is None:
            continue
        x1, y1, m1, m2 = hit
        at, advice = _swap_at(namer.locate, (x, x1), (y, y1))
        diff.extra_set -= {k, frozenset((x1, y1))}
        diff.missing_set -= {m1, m2}
        pa, pb = diff.planned[m1], diff.planned[m2]
        rep.swapped.append(
            SwapReport(
                planned=(namer.report(pa[0], pa[1]), namer.report(pb[0], pb[1])),
                found=(namer.report(*namer.shown(x, y)), namer.report(*namer.shown(x1, y1))),
                at=(
                    namer.port(at[0][0], at[0][1], namer.ib_of(at[0])),
                    namer.port(at[1][0], at[1][1], namer.ib_of(at[1])),
                ),
                advice=advice,
            )
        )


def _swap_at(locate: PlanLocator, xs: tuple[End, End], ys: tuple[End, End]) -> tuple[tuple[End, End], str | None]:
    """Where to trade plugs: trading x and x1 fixes the pair, and so does trading y and y1. Name the pair
    that sits on one device (two NICs of one server, two ports of one leaf) when there is one, unless a
    plug there carries both ports (the switch end of a splitter, a twin cable): then the other end."""
    first = xs if xs[0][0] == xs[1][0] else ys
    other = ys if first is xs else xs

    def movable(p: tuple[End, End]) -> bool:
        return not locate.shared(p[0]) and not locate.shared(p[1])

    if movable(first):
        return first, None
    plugs = " and ".join(f"{e[1]} is {locate.plug(e)}" for e in first if locate.shared(e))
    why = f"not at {first[0][0]}: {plugs}; moving a plug moves every port it carries"
    if movable(other):
        return other, why
    cables = sorted({c for e in (*first, *other) if (c := locate.shared(e))})
    return first, (
        f"every end of these links is a shared plug (cables {', '.join(cables)}): move whole plugs "
        "only if all their links are crossed, else the cable is faulty: replace it"
    )


def _report_missing(rep: VerifyReport, namer: _Namer, diff: _Diff) -> None:
    for k in diff.missing_keys:
        if k in diff.missing_set:
            a, b, sp = diff.planned[k]
            rep.missing.append(namer.report(a, b, planned_speed=sp))


def _report_extra(rep: VerifyReport, namer: _Namer, diff: _Diff) -> None:
    for k in diff.extra_keys:
        if k in diff.extra_set:
            a, b, sp, ka, kb = diff.found[k]
            if (a, b) != namer.shown(a, b):
                a, b, ka, kb = b, a, kb, ka
            lk = namer.report(a, b, ka, kb, speed=sp)
            # a cable in the wrong port: one end is also an end of a missing link
            notes = []
            for e in (a, b):
                for m in diff.missing_by_end.get(e, []):
                    if m in diff.missing_set:
                        (other,) = m - {e}
                        notes.append(
                            f"{e[0]} {e[1]} was planned to {namer.port(other[0], other[1], namer.ib_of(other)).text()}"
                        )
            rep.extra.append(replace(lk, note="; ".join(notes) or None))


def _report_slow(rep: VerifyReport, namer: _Namer, diff: _Diff) -> None:
    for k, (a, b, sp) in diff.planned.items():
        got = diff.found.get(k)
        if got is not None and got[2] is not None and got[2] != sp:
            rep.slow.append(namer.report(a, b, speed=got[2], planned_speed=sp))


def _report_one_sided(rep: VerifyReport, namer: _Namer, lopsided: list[_Lopsided]) -> None:
    for a, b, ka, kb, p, pp, says in lopsided:
        # both-ends links keep the number they were found with; these only fill in what is missing
        namer.ib_found.setdefault(a, p)
        namer.ib_found.setdefault(b, pp)
        lk = namer.report(a, b, ka, kb)
        rep.one_sided.append(
            replace(
                lk,
                note=f"{a[0]} reports this link but {b[0]} reports {says} on that port "
                "(discover again; if it stays, check both ends of the cable)",
            )
        )


def run_verify(
    plan: Plan, discovered: Path, speed: str | None = None, node_name_map: Path | None = None, plane: str = ""
) -> VerifyReport:
    """`railyard verify`: read the files, turn unreadable input into a DesignError naming the option."""
    if plan.networks.backend.technology != "infiniband":
        raise DesignError.one(
            "backend.technology",
            "verify reads ibnetdiscover output: the backend is not InfiniBand",
            "use it on InfiniBand designs",
        )
    planes = backend_planes(plan)
    if plane and plane not in planes:
        raise DesignError.one(
            "--plane",
            f"{plane!r} is not a plane of {plan.design.name}"
            + (f" (its planes: {', '.join(planes)})" if planes else ": its backend is one subnet"),
            "name one of its planes, or leave --plane out" if planes else "leave --plane out",
        )
    if not plane and planes and inside_planes(plan):
        raise DesignError.one(
            "--plane",
            f"{plan.design.name}'s planes are inside its switches, each a subnet discovered apart",
            f"run verify once per plane with its discovery: --plane {planes[0]} ... --plane {planes[-1]}",
        )
    if speed is not None and not re.fullmatch(r"\d+x[A-Z]+", speed):
        raise DesignError.one("--speed", f"{speed!r} is not an InfiniBand link speed", "write e.g. 4xNDR or 4xHDR")
    text, names = read_discovery(discovered, node_name_map)
    try:
        return verify_fabric(plan, text, expect_speed=speed, node_names=names, plane=plane)
    except NetParseError as exc:
        raise DesignError.one(
            "--ibnetdiscover", f"{discovered}: {exc}", "pass the unmodified output of `ibnetdiscover`"
        ) from None


def read_discovery(discovered: Path, node_name_map: Path | None = None) -> tuple[str, dict[int, str] | None]:
    """The --ibnetdiscover text and the --node-name-map, read bounded (regular files only)."""
    text = read_bytes(discovered, "--ibnetdiscover", DISCOVERY_LIMIT, "the file ibnetdiscover wrote").decode(
        "utf-8", errors="replace"
    )
    names = None
    if node_name_map is not None:
        names = parse_node_name_map(
            read_bytes(node_name_map, "--node-name-map", DISCOVERY_LIMIT, "an ibnetdiscover node-name map").decode(
                "utf-8", errors="replace"
            )
        )
    return text, names


def as_built_guids(
    plan: Plan, discovered: str, node_names: Mapping[int, str] | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """(node description -> node GUID, HCA description -> port GUID) of the plan's devices in a discovered
    fabric, for rendering the SM files with the hardware's GUIDs. Raises DesignError when a plan node was
    not discovered (its GUID is unknown) or a description appears twice (two devices claim one name)."""
    idx = plan.index()
    guids: dict[str, int] = {}
    ports: dict[str, int] = {}
    twice: set[str] = set()
    for n in parse_net(discovered).values():
        desc = node_names.get(n.guid, n.desc) if node_names else n.desc
        if n.kind == "Switch":
            name = switch_name(desc)
            if name not in idx:
                continue
        else:
            host, _, dev = desc.partition(" ")
            if host not in idx or not dev:
                continue
            name = f"{host} {dev}"
            ports[name] = n.port_guid(1)
        if name in guids and guids[name] != n.guid:
            twice.add(name)
        guids[name] = n.guid
    if twice:
        raise DesignError.one(
            "--ibnetdiscover",
            f"{len(twice)} node descriptions belong to several devices, e.g. {sorted(twice)[0]!r}",
            "give every switch and host its planned name",
        )
    return guids, ports


def write_as_built(
    plan: Plan,
    discovered: Path,
    out: Path,
    node_name_map: Path | None = None,
    force: Path | None = None,
    design: Path | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Written:
    """`verify --write-config DIR`: plan.json and infiniband/ with the discovered GUIDs, under the output
    folder contract of generators.output."""
    from generators.model.plan import dumps
    from generators.vendors.infiniband import render_infiniband

    text, node_names = read_discovery(discovered, node_name_map)
    try:
        guids, ports = as_built_guids(plan, text, node_names)
    except NetParseError as exc:
        raise DesignError.one(
            "--ibnetdiscover", f"{discovered}: {exc}", "pass the unmodified output of `ibnetdiscover`"
        ) from None
    try:
        files = {"plan.json": dumps(plan), **render_infiniband(plan, guids, ports)}
    except DesignError as exc:
        if exc.problems and exc.problems[0].field == "--guids":
            raise DesignError.one(
                "--write-config",
                exc.problems[0].message.replace("have no GUID", "were not discovered"),
                "cable and power them, then discover again",
            ) from None
        raise
    return write_tree(files, out, "--write-config", force, design, on_wait)


# ---------------------------------------------------------------------------------------- Ethernet


# What a switch's OS calls its management port in an LLDP table (SONiC and Cumulus: eth0, EOS: Management1,
# NX-OS style: mgmt0), where the plan names the front-panel-less port by the catalog's `mgmt_port`.
MGMT_IFNAMES = frozenset({"eth0", "mgmt0", "Management0", "Management1"})


def ethernet_networks(plan: Plan) -> list[str]:
    """The networks LLDP can check: every cabled one whose technology is not InfiniBand."""
    nets = sorted({lk.network for lk in plan.links})
    return [n for n in nets if plan.networks.technology(n) != "infiniband"]


def verify_lldp(plan: Plan, tables: Mapping[str, list[Neighbour]], source: str = "LLDP") -> VerifyReport:
    """Compare LLDP neighbour tables (plan device -> what its ports hear) with the plan's Ethernet links.

    A link is found when either end hears the other (LLDP runs both ways; one table is enough). A planned
    link nobody hears is missing only when the tables would have shown it: both ends gave a table, or a
    given end hears something else on that port; else it is not covered (the far end may give no table
    or not speak LLDP, like most BMCs and PDUs), which is counted and never reported as missing. A host's
    table never shows its BMC's port (the BMC is a computer of its own, with its own NIC)."""
    from generators.stages.netplan import BMC_KINDS

    namer = _Namer(plan, None, infiniband=False)
    nets = ethernet_networks(plan)
    planned: Planned = {}
    ports_of: dict[str, set[str]] = {}
    blind: set[End] = set()  # planned ends whose device's table cannot show them
    for lk in plan.links:
        if lk.network in nets:
            a, b = (lk.a_device, lk.a_port), (lk.b_device, lk.b_port)
            planned[frozenset((a, b))] = (a, b, f"{lk.speed_gbps}G")
            for dev, port in (a, b):
                ports_of.setdefault(dev, set()).add(port)
                if lk.network == "oob" and namer.idx[dev].kind in BMC_KINDS:
                    blind.add((dev, port))
    mgmt = {d.name: plan.catalog.switches[d.model].mgmt_port for d in plan.devices if d.kind == "switch"}
    found: Found = {}
    heard: set[End] = set()
    for dev, neighbours in tables.items():
        for n in neighbours:
            a = (dev, _plan_port(ports_of, mgmt, dev, [n.local_port]))
            b, kb = _lldp_peer(namer, ports_of, mgmt, n, a)
            heard.add(a)
            key = frozenset((a, b))
            if key not in found:
                found[key] = (a, b, None, True, kb)
    # the far end's own table hears nothing on that port: one direction of the link is dead
    lopsided = [(a, b) for a, b, _sp, _ka, kb in found.values() if kb and b[0] in tables and b not in heard]
    judged: Planned = {}
    uncovered: set[str] = set()
    for k, v in planned.items():
        a, b, _sp = v
        sees = [e[0] in tables and e not in blind for e in (a, b)]
        if k in found or a in heard or b in heard or all(sees):
            judged[k] = v
        else:
            uncovered.update(e[0] for e, s in zip((a, b), sees, strict=True) if not s and e not in blind)
    rep = VerifyReport(
        plan.design.name,
        len(planned),
        len(found),
        scope=f"Ethernet ({', '.join(nets)})",
        source=source,
        not_covered=len(planned) - len(judged),
        no_table=sorted(uncovered),
        checks_speed=False,
        covered=set(judged),
    )
    diff = _Diff.of(judged, found)
    _report_swaps(rep, namer, diff)
    _report_missing(rep, namer, diff)
    _report_extra(rep, namer, diff)
    for a, b in sorted(lopsided):
        shown = namer.report(*namer.shown(a, b))
        rep.one_sided.append(
            replace(
                shown,
                note=f"{a[0]} hears {b[0]} {b[1]}, but {b[0]} hears nothing on that port "
                "(one direction is down: clean or replace the optics/cable)",
            )
        )
    rep.unknown_nodes = sorted(namer.unknown)
    rep.silent = sorted(dev for dev, neighbours in tables.items() if not neighbours and dev in ports_of)
    return rep


def _plan_port(ports_of: Mapping[str, set[str]], mgmt: Mapping[str, str], dev: str, names: list[str]) -> str:
    """The plan's name of a port a table names (the first name the plan knows; a switch's management
    interface under its OS name), else the table's own name."""
    planned = ports_of.get(dev, set())
    for p in names:
        if p in planned:
            return p
    if dev in mgmt and mgmt[dev] in planned and any(p in MGMT_IFNAMES for p in names):
        return mgmt[dev]
    return names[0] if names else "?"


def _lldp_peer(
    namer: _Namer, ports_of: Mapping[str, set[str]], mgmt: Mapping[str, str], n: Neighbour, local: End
) -> tuple[End, bool]:
    """The plan's (device, port) for what a port hears, and whether the plan knows the device. The system
    name may be a FQDN; the port name is in the port id or in the description (lldpd sends the MAC as
    id and the interface name as description by default; SONiC the other way round)."""
    system = (n.system or "").strip()
    dev = system if system in namer.idx else system.split(".")[0] if system.split(".")[0] in namer.idx else None
    names = n.port_names()
    if dev is None:
        what = repr(system) if system else "a neighbour without a system name"
        namer.unknown.add(f"{what} heard on {local[0]} {local[1]}")
        return (system or f"unnamed neighbour of {local[0]} {local[1]}", names[0] if names else "?"), False
    return (dev, _plan_port(ports_of, mgmt, dev, names)), True


def lldp_device(path: Path) -> str:
    """The device a table belongs to: its file's name up to the first dot (fe-leaf01.json,
    gpu001.lldp.json). The data cannot say: LLDP tables list only what the ports hear."""
    return path.name.split(".")[0]


def run_verify_lldp(plan: Plan, files: list[Path]) -> VerifyReport:
    """`railyard verify --lldp FILE...`: one table per device, named after it; bad input is a DesignError
    naming the file."""
    idx = plan.index()
    tables: dict[str, list[Neighbour]] = {}
    formats: set[str] = set()
    for path in files:
        dev = lldp_device(path)
        if dev not in idx:
            raise DesignError.one(
                "--lldp",
                f"{path}: no device {dev!r} in the plan (the file's name, up to the "
                "first dot, names the device the table was collected on)",
                "name each file after its device, e.g. fe-leaf01.json",
            )
        if dev in tables:
            raise DesignError.one("--lldp", f"{path}: a second table for {dev}", "give one file per device")
        text = read_bytes(path, "--lldp", LLDP_LIMIT, "an LLDP neighbour table").decode("utf-8", errors="replace")
        try:
            fmt, neighbours = parse_lldp(text)
        except LldpParseError as exc:
            raise DesignError.one(
                "--lldp",
                f"{path}: {exc}",
                "pass the unmodified JSON output, e.g. `lldpctl -f json0 > $(hostname).json`",
            ) from None
        formats.add(fmt)
        tables[dev] = neighbours
    return verify_lldp(plan, tables, f"LLDP: {len(tables)} tables, {', '.join(sorted(formats))}")
