"""800 VDC power (site.power: 800vdc): the power sidecars where they stand, whom each feeds, and every
rack-system rack's feed: the current at its 800 VDC input and on its busbar (I = P / V), its shelves and
their PSUs with one shelf down (N+1)."""

from __future__ import annotations

from collections import defaultdict

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.errors import DesignError, Problem
from generators.model.plan import Device, Plan
from generators.model.sections import Power, RackPower, SidecarPlacement
from generators.model.vocabulary import Kind, Role
from generators.stages.placement.racks import FLOOR_UNITS, Item, Rack, sidecar_racks


def sidecar_name(position: str) -> str:
    """A sidecar is named by the row position it stands on, as an in-row CDU is: a sidecar that stays
    where it is keeps its name whatever else the design changes."""
    return f"sidecar-{position}"


def add_sidecars(plan: Plan, racks: list[Rack], design: Design) -> None:
    """The sidecar devices (kind pdu, role power-sidecar: a managed power device on the OOB network), one
    on each sidecar position, taking the whole position (no rack unit)."""
    plan.devices = [d for d in plan.devices if d.role != Role.POWER_SIDECAR]  # placement is retried
    power = design.site.power
    if power is None or power.sidecar is None or power.architecture != "800vdc":
        return
    for r in racks:
        if r.role == "sidecar":
            name = sidecar_name(r.name)
            r.items = [Item(name, 0, 0.0)]
            plan.devices.append(Device(name, Kind.PDU, Role.POWER_SIDECAR, power.sidecar))


def _groups(racks: list[Rack]) -> list[tuple[list[Rack], list[Rack]]]:
    """(system racks, sidecar positions) of each group: the rack-system racks of a row before its in-row
    units (CDUs, sidecars), since the previous ones."""
    by_row: dict[int, list[Rack]] = defaultdict(list)
    for r in sorted(racks, key=lambda r: (r.row, r.position)):
        by_row[r.row].append(r)
    out: list[tuple[list[Rack], list[Rack]]] = []
    for row_racks in by_row.values():
        group: list[Rack] = []
        units: list[Rack] = []
        for rack in [*row_racks, None]:
            if rack is not None and rack.role in FLOOR_UNITS:
                units.append(rack)
                continue
            if units:
                out.append((group, [u for u in units if u.role == "sidecar"]))
                group, units = [], []
            if rack is not None and rack.mgmt_switches:
                group.append(rack)
    return out


def power_section(racks: list[Rack], design: Design, catalog: Catalog) -> Power | None:
    """The power section, after checking each group's draw against its sidecars less the spare."""
    power, system = design.site.power, design.compute.system
    fed = sidecar_racks(design, catalog)
    if power is None or fed is None or system is None or power.sidecar is None:
        return None
    sc = catalog.pdus[power.sidecar]
    rs = catalog.rack_systems[system]
    shelf = catalog.pdus[rs.power_shelf]
    spare = 1 if power.redundancy == "N+1" else 0
    placements: list[SidecarPlacement] = []
    feeding: dict[str, list[str]] = defaultdict(list)
    problems: list[Problem] = []
    for group, cars in _groups(racks):
        names = [g.name for g in group]
        load = round(sum(g.kw for g in group), 3)
        for c in cars:
            placements.append(
                SidecarPlacement(sidecar_name(c.name), power.sidecar, c.name, names, load, sc.capacity_kw)
            )
        for n in names:
            feeding[n] += [sidecar_name(c.name) for c in cars]
        carry = (len(cars) - spare) * sc.capacity_kw
        if names and load > carry + 1e-9:
            problems.append(
                Problem(
                    "site.power.sidecar",
                    f"racks {names[0]}-{names[-1]} draw {load:g} kW, over the {carry:g} kW their {len(cars)} "
                    f"x {power.sidecar} carry" + (" with one down (N+1)" if spare else ""),
                    "use a larger sidecar, or fewer racks per CDU group (site.cooling.racks_per_cdu)",
                )
            )
    if problems:
        raise DesignError(problems)
    feed = shelf.input_vdc or sc.output_vdc or 800
    rack_power: list[RackPower] = []
    for r in sorted((r for r in racks if r.mgmt_switches), key=lambda r: (r.row, r.position)):
        kw = round(r.kw, 3)
        rack_power.append(
            RackPower(
                r.name,
                kw,
                feed,
                round(kw * 1000 / feed, 1),
                rs.busbar_vdc,
                None if rs.busbar_vdc is None else round(kw * 1000 / rs.busbar_vdc, 1),
                rs.power_shelf,
                rs.power_shelves,
                shelf.capacity_kw,
                None if shelf.psus is None else shelf.psus * rs.power_shelves,
                round((rs.power_shelves - 1) * shelf.capacity_kw, 3),
                feeding[r.name],
            )
        )
    return Power(
        power.architecture,
        power.sidecar,
        power.redundancy,
        fed,
        placements,
        rack_power,
        round(sum(p.kw for p in rack_power), 3),
    )
