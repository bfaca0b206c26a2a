"""Racks as placement builds them: items (a device's units and power), racks by role, blocks, the
limits of one rack, packing items into racks, PDUs per rack and how a rack's items stack in its units."""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field

from generators.model.catalog import Catalog
from generators.model.design import Design, RackRole
from generators.stages.fabric import eligible

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
    seq: int = 0  # its place among the racks of its kind as they grow (placement.floor): the first is 0
    plane: str = ""  # a backend leaf or spine rack's network plane (site.network_rows: per_plane), else ""

    @property
    def kw(self) -> float:
        return sum(i.kw for i in self.items)

    @property
    def units(self) -> int:
        return sum(i.units for i in self.items)


@dataclass(slots=True)
class Block:
    index: int
    compute: list[Rack]
    leaves: list[Rack]
    spines: list[Rack]
    others: list[Rack]  # frontend leaf racks serving the block


def rack_pdus(design: Design, catalog: Catalog, rack: Rack) -> int:
    """PDUs of this rack: a rack system's none (its power shelves are devices of the rack), else by role."""
    return pdus_per_rack(design, catalog, rack.role) if rack.pdus is None else rack.pdus


def pdus_per_rack(design: Design, catalog: Catalog, role: str) -> int:
    """PDUs of a rack of `role` (site.rack.pdus: one count, a count per role, or unset)."""
    r = design.site.rack
    if isinstance(r.pdus, int):
        return r.pdus
    if isinstance(r.pdus, dict) and role in r.pdus:
        return r.pdus[role]
    return pdus_needed(design, catalog, r.power_kw)


def pdus_needed(design: Design, catalog: Catalog, kw: float) -> int:
    """The fewest PDUs that carry `kw` with the design's redundancy: 2N, A and B feeds each carrying it
    alone; N+1, the PDUs less any one carrying it."""
    n = math.ceil(kw / catalog.pdus[design.site.rack.pdu].capacity_kw)
    return 2 * n if design.site.rack.power_redundancy == "2N" else n + 1


def pdu_capacity_kw(design: Design, catalog: Catalog, n: int) -> float:
    """What `n` PDUs carry when one feed (2N: the weaker one, n // 2 PDUs) or one PDU (N+1) is down."""
    left = n // 2 if design.site.rack.power_redundancy == "2N" else n - 1
    return left * catalog.pdus[design.site.rack.pdu].capacity_kw


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


def limits(design: Design, catalog: Catalog) -> Limits:
    r = design.site.rack
    oob = catalog.switches[design.oob.switch]
    down_speed = min(g.speed_gbps for g in oob.port_groups if g.role in ("down", "any"))
    ports = len(eligible(oob, down_speed, "down"))
    return Limits(
        r.units - oob.rack_units, r.power_kw - oob.power_w / 1000, max(1, ports - max_pdus_per_rack(design, catalog))
    )


def role_limits(lim: Limits, design: Design, catalog: Catalog, role: str) -> Limits:
    """A rack of `role`'s limits: what its PDUs carry with a feed (2N) or a PDU (N+1) down, if less than
    its power budget (site.rack.pdus set low), less the out-of-band switch's share. `pack` fills racks to
    these, so a rack it fills passes the power checks (placement.checks) however many items follow."""
    oob_kw = design.site.rack.power_kw - lim.kw
    feed = pdu_capacity_kw(design, catalog, pdus_per_rack(design, catalog, role))
    return Limits(lim.units, min(lim.kw, feed - oob_kw), lim.endpoints)


def pack(groups: list[list[Item]], lim: Limits, role: str, block: int = -1) -> list[Rack]:
    """Fill racks in order, keeping each group (e.g. one scalable unit's leaves) in one rack when it
    fits. Each rack is filled before the next is started, so an item's rack depends only on the items
    before it: a grown site appends items (more spines, leaves, storage servers) and moves none. Racks
    are not balanced (32 spines may be 23 + 9, not 16 + 16): a balanced split depends on the total, and
    moved standing spines when a scalable unit was added (issue 43)."""
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
    return [Rack(role, r, block) for r in racks]


def stack_units(rack: Rack, total: int, lim: Limits) -> list[tuple[Item, int]]:
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


def pdu_feed(design: Design, k: int) -> tuple[str, int]:
    """The feed letter of a rack's k-th PDU and its number on that feed: 2N alternates A, B, A, ... (3 PDUs
    are a1, b1, a2); N+1 gives each PDU a feed of its own (a1, b1, c1). A rack's names do not depend on its
    count beyond dropping the last ones."""
    if design.site.rack.power_redundancy == "2N":
        return "ab"[k % 2], k // 2 + 1
    return "abcdefgh"[k], 1


def pdu_name(design: Design, rack: str, k: int) -> str:
    feed, n = pdu_feed(design, k)
    return f"pdu-{rack}-{feed}{n}"


# positions of a row that are not racks: in-row CDUs and power sidecars, standing at the end of the group of
# rack-system racks they serve
FLOOR_UNITS: frozenset[str] = frozenset({"cdu", "sidecar"})


@dataclass(slots=True)
class CduRows:
    """In-row units: each group of `per` system racks of a row is followed by `cdus` CDU positions (its
    in-row CDUs, spare included) and then `sidecars` power sidecar positions (site.power: 800vdc)."""

    per: int
    cdus: int
    made: list[Rack]
    sidecars: int = 0
    made_sidecars: list[Rack] = field(default_factory=list)


def sidecar_racks(design: Design, catalog: Catalog) -> int | None:
    """Rack-system racks one power sidecar feeds (its outputs, as its capacity allows); None: no sidecars."""
    power, system = design.site.power, design.compute.system
    if power is None or power.architecture != "800vdc" or power.sidecar is None or system is None:
        return None
    sc = catalog.pdus[power.sidecar]
    assert sc.racks is not None  # an in_row sidecar names its outputs (catalog.Pdu)
    kw = catalog.rack_systems[system].power_kw(catalog)
    return max(1, min(sc.racks, int((sc.capacity_kw + 1e-9) // kw)))


def cdu_rows(design: Design, catalog: Catalog) -> CduRows | None:
    """The row groups of a rack-system design with in-row CDUs or power sidecars; None: neither. With both,
    the group is the CDU's (a sidecar group is no larger, as the sidecars are counted per CDU group)."""
    cool, system = design.site.cooling, design.compute.system
    if system is None:
        return None
    fed = sidecar_racks(design, catalog)
    in_row = cool is not None and catalog.cdus[cool.cdu].placement == "in_row"
    if not in_row and fed is None:
        return None
    if in_row:
        assert cool is not None
        cdu = catalog.cdus[cool.cdu]
        per = cool.racks_per_cdu or max(1, int(cdu.capacity_kw // catalog.rack_systems[system].liquid_kw(catalog)))
        cdus = 2 if cool.redundancy == "N+1" else 1
    else:
        assert fed is not None
        per, cdus = fed, 0
    sidecars = 0
    if fed is not None:
        power = design.site.power
        assert power is not None
        sidecars = -(-per // fed) + (1 if power.redundancy == "N+1" else 0)
    return CduRows(per, cdus, [], sidecars)
