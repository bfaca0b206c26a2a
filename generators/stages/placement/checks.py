"""What racks and rows must carry: units, power and both feeds of each rack; each row's busway, air
cooling, CDU groups and floor load."""

from __future__ import annotations

import math
from collections import defaultdict

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.errors import DesignError, Problem
from generators.model.sections import Cooling
from generators.stages.placement.cooling import heat_of
from generators.stages.placement.floor import (
    RowGeom,
)
from generators.stages.placement.racks import (
    FLOOR_UNITS,
    Rack,
    pdu_capacity_kw,
    pdu_field,
    pdus_needed,
    rack_pdus,
)


def check_racks(racks: list[Rack], design: Design, catalog: Catalog) -> None:
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
        # 2N: feed B (the weaker one with an odd count, PDUs alternating A, B, A) alone carries the rack;
        # N+1: the PDUs less any one carry it
        n_pdu = rack_pdus(design, catalog, rack)
        feed = pdu_capacity_kw(design, catalog, n_pdu)
        if rack.pdus != 0 and kw > feed + 1e-9:  # a rack system's shelves: checked with the catalog
            f = pdu_field(design, rack.role)
            need = pdus_needed(design, catalog, kw)
            what = (
                f"(fed A, B, A, ...) feed B's {n_pdu // 2} x {r.pdu} carries {feed:.1f} kW, and each feed "
                "alone must carry the rack (site.rack.power_redundancy: 2N)"
                if r.power_redundancy == "2N"
                else f"(N+1) the {n_pdu - 1} left with one down carry {feed:.1f} kW, and they must carry the rack"
            )
            problems.append(
                Problem(
                    f,
                    f"{rack.role} rack {rack.name} draws {kw:.1f} kW but with {n_pdu} PDUs {what}",
                    f"set {f} to at least {need}, or use a larger PDU model (site.rack.pdu)"
                    + (", or site.rack.power_redundancy: N+1" if r.power_redundancy == "2N" else ""),
                )
            )
        if len(problems) > 5:
            break
    if problems:
        raise DesignError(problems[:6])


def check_rows(
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
        _liquid, air, _w = heat_of(r, design, catalog)
        kw_row[r.row] += r.kw
        air_row[r.row] += air
    for i in sorted(kw_row):
        name, n = rows[i].name, sum(1 for r in racks if r.row == i and r.role not in FLOOR_UNITS)
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
                    # the rating that carries the heaviest rack: the fix that makes the design compile
                    heaviest = max(x.weight_kg or 0.0 for x in cooling.racks)
                    area_m2 = design.site.rack.width_mm * design.site.rack.depth_mm / 1e6
                    need = math.ceil(heaviest / area_m2)
                    problems.append(
                        Problem(
                            "site.floor.max_load_kg_m2",
                            f"rack {h.rack} weighs {h.weight_kg:,.0f} "
                            f"kg on {design.site.rack.width_mm} x {design.site.rack.depth_mm} mm: "
                            f"{h.load_kg_m2:,.0f} kg/m2, over the floor's {fl.max_load_kg_m2:g} "
                            "kg/m2",
                            f"stand the racks on a floor rated for at least {need} kg/m2 (reinforce it or "
                            f"choose another hall; then set site.floor.max_load_kg_m2: {need}), or use "
                            "a lighter rack system (compute.system)",
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
