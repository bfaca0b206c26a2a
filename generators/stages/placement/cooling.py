"""Liquid cooling: CDU devices where they stand, each rack's heat and weight, and the cooling section."""

from __future__ import annotations

from collections import defaultdict

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.plan import Device, Plan
from generators.model.sections import CduPlacement, Cooling, RackHeat, RowHeat
from generators.model.vocabulary import Kind, Role
from generators.stages.placement.floor import (
    RowGeom,
)
from generators.stages.placement.racks import (
    FLOOR_UNITS,
    Item,
    Rack,
    cdu_rows,
)


def add_cdus(plan: Plan, racks: list[Rack], design: Design, catalog: Catalog) -> None:
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
        plan.devices.append(Device(name, Kind.CDU, Role.CDU, cool.cdu))


def heat_of(r: Rack, design: Design, catalog: Catalog) -> tuple[float, float, float | None]:
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
    if r.role == "sidecar" and design.site.power is not None and design.site.power.sidecar is not None:
        return 0.0, 0.0, catalog.pdus[design.site.power.sidecar].weight_kg  # converts, its heat is not modelled
    return 0.0, r.kw, None


def cooling_section(racks: list[Rack], rows: list[RowGeom], design: Design, catalog: Catalog) -> Cooling | None:
    """The cooling section: every rack's heat and weight, the CDUs and whom they serve, per-row totals."""
    cool = design.site.cooling
    if cool is None or design.compute.system is None:
        return None
    cdu = catalog.cdus[cool.cdu]
    ordered = sorted(racks, key=lambda r: (r.row, r.position))
    area = design.site.rack.width_mm * design.site.rack.depth_mm / 1e6
    heat = {r.name: heat_of(r, design, catalog) for r in ordered}
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
        in_row = cdu_rows(design, catalog)
        assert in_row is not None  # a rack system's in-row CDUs: cdu_rows always answers
        per = in_row.per
        by_row: dict[int, list[Rack]] = defaultdict(list)
        for r in ordered:
            by_row[r.row].append(r)
        for row_racks in by_row.values():
            group: list[Rack] = []
            cdus: list[Rack] = []
            for rack in [*row_racks, None]:
                if rack is not None and rack.role == "cdu":
                    cdus.append(rack)
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
                if rack is not None and rack.mgmt_switches:
                    group.append(rack)
    rack_heat: list[RackHeat] = []
    for r in ordered:
        liquid, air, kg = heat[r.name]
        rack_heat.append(
            RackHeat(
                r.name,
                rows[r.row].name,
                round(r.kw, 3),
                round(liquid, 3),
                round(air, 3),
                kg,
                None if kg is None else round(kg / area, 1),
                served[r.name],
            )
        )
    fl = design.site.floor
    row_heat: list[RowHeat] = []
    for row in rows:
        mine = [h for h, r in zip(rack_heat, ordered, strict=True) if r.row == row.index]
        n_cdu = sum(1 for r in ordered if r.row == row.index and r.role == "cdu")
        row_heat.append(
            RowHeat(
                row.name,
                sum(1 for r in ordered if r.row == row.index and r.role not in FLOOR_UNITS),
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
