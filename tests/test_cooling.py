"""Liquid cooling on the floor (site.cooling): CDUs placed in the rows (in-row) or in the racks (in-rack),
their names, OOB ports and BoM line; the plan's per-rack and per-row liquid/air kW and weight; and the
refusals that name the field: a liquid-cooled rack system without site.cooling, a row over its busway
(site.floor.row_power_kw) or its air cooling (row_air_kw), a CDU group over one CDU's capacity, a rack over
its power budget, a footprint over the floor's rating (site.floor.max_load_kg_m2).

Counts are derived from the design's rules (racks, site.cooling.racks_per_cdu, redundancy, the rows the
placement filled) and the catalog, not copied from a compiled output."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

import pytest

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.sections import Cooling
from tests.conftest import DESIGNS, rendered_files

Compiled = Callable[..., Plan]
GB200, GB300 = "gb200-nvl72-1152", "gb300-nvl72-4608"
IN_RACK = "site.cooling={cdu: cdu-inrack-200kw, redundancy: N}"


def _refused(name: str, *sets: str) -> list[tuple[str, str]]:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{name}.yaml", list(sets))
    return [(p.field, p.message) for p in exc.value.problems]


def _cooling(plan: Plan) -> Cooling:
    assert plan.cooling is not None
    return plan.cooling


def _system_racks(plan: Plan) -> list[str]:
    return sorted({d.rack for d in plan.devices if d.network == "nvlink" and d.rack is not None})


# ------------------------------------------------------------------------------------- in-row CDUs


@pytest.mark.parametrize("name", [GB200, GB300])
def test_in_row_cdus_stand_at_the_end_of_each_group_of_racks_in_its_row(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    cool, design = plan.design.site.cooling, plan.design
    assert cool is not None and cool.racks_per_cdu is not None
    per, spares = cool.racks_per_cdu, 1 if cool.redundancy == "N+1" else 0
    systems = set(_system_racks(plan))
    assert len(systems) == design.compute.racks
    racks = {r.name: r for r in plan.racks}
    by_row: dict[str, int] = defaultdict(int)
    for r in systems:
        by_row[racks[r].row] += 1
    groups = sum(math.ceil(n / per) for n in by_row.values())
    cdus = [d for d in plan.devices if d.kind == "cdu"]
    assert len(cdus) == groups * (1 + spares)
    assert {d.model for d in cdus} == {cool.cdu}
    # each CDU on a row position of its own, right after the racks it cools, in their row
    served: dict[str, list[str]] = defaultdict(list)
    for c in _cooling(plan).cdus:
        pos = racks[c.rack]
        assert pos.role == "cdu" and c.name == f"cdu-{c.rack}"
        assert 1 <= len(c.serves) <= per and set(c.serves) <= systems
        assert {racks[s].row for s in c.serves} == {pos.row}
        last = max(racks[s].position for s in c.serves)
        assert last < pos.position <= last + 1 + spares
        for s in c.serves:
            served[s].append(c.name)
    assert set(served) == systems and {len(v) for v in served.values()} == {1 + spares}
    # the plan's per-rack record names the same CDUs
    assert {h.rack: h.cdus for h in _cooling(plan).racks if h.rack in systems} == served


def test_each_in_row_cdu_is_on_the_oob_switch_of_the_rack_beside_it(compiled: Compiled) -> None:
    plan = compiled(GB200)
    idx = plan.index()
    racks = {r.name: r for r in plan.racks}
    for d in (d for d in plan.devices if d.kind == "cdu"):
        (lk,) = [lk for lk in plan.links if d.name in (lk.a_device, lk.b_device)]
        other = idx[lk.b_device if lk.a_device == d.name else lk.a_device]
        assert (lk.network, lk.a_port, other.network, other.role) == (
            "oob",
            plan.catalog.cdus[d.model].mgmt_port,
            "oob",
            "leaf",
        )
        assert other.rack is not None and racks[other.rack].row == racks[d.rack].row  # type: ignore[index]
        assert abs(racks[other.rack].position - racks[d.rack].position) <= 2  # type: ignore[index]


def test_cdu_names_do_not_change_with_an_unrelated_part_of_the_design(compiled: Compiled) -> None:
    base = compiled(GB200)
    other = compiled(GB200, "frontend.speed=100G")
    assert other.design.frontend.speed != base.design.frontend.speed
    names = [(d.name, d.rack) for d in base.devices if d.kind == "cdu"]
    assert names and names == [(d.name, d.rack) for d in other.devices if d.kind == "cdu"]


def test_racks_per_cdu_defaults_to_what_one_cdu_cools(compiled: Compiled) -> None:
    plan = compiled(GB200, "site.cooling={cdu: cdu-inrow-1350kw}")
    assert plan.design.compute.system is not None
    rs = plan.catalog.rack_systems[plan.design.compute.system]
    per = int(plan.catalog.cdus["cdu-inrow-1350kw"].capacity_kw // rs.liquid_kw(plan.catalog))
    assert _cooling(plan).racks_per_cdu == per
    assert all(len(c.serves) <= per and c.load_kw <= c.capacity_kw for c in _cooling(plan).cdus)


# ------------------------------------------------------------------------------------- heat and weight


@pytest.mark.parametrize("name", [GB200, GB300])
def test_the_plan_splits_each_racks_heat_and_sums_the_rows(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    cool = _cooling(plan)
    assert plan.design.compute.system is not None
    rs = plan.catalog.rack_systems[plan.design.compute.system]
    racks = {r.name: r for r in plan.racks}
    cdu = plan.catalog.cdus[cool.cdu]
    for h in cool.racks:
        r = racks[h.rack]
        assert h.kw == pytest.approx(r.power_kw) and h.liquid_kw + h.air_kw == pytest.approx(h.kw, abs=1e-3)
        if h.rack in _system_racks(plan):
            assert h.liquid_kw == pytest.approx(r.power_kw * rs.liquid_fraction, abs=1e-3)
            assert h.weight_kg == rs.weight_kg
            assert h.load_kg_m2 == pytest.approx(rs.weight_kg / (r.width_mm * r.depth_mm / 1e6), abs=0.1)
        elif r.role == "cdu":
            assert h.weight_kg == cdu.weight_kg
        else:
            assert h.liquid_kw == 0 and h.weight_kg is None  # switch racks: air, and the catalog weighs no switch
    for row in cool.rows:
        mine = [h for h in cool.racks if h.row == row.row]
        assert row.kw == pytest.approx(sum(h.kw for h in mine), abs=1e-2)
        assert row.liquid_kw == pytest.approx(sum(h.liquid_kw for h in mine), abs=1e-2)
        assert row.cdus == sum(1 for h in mine if racks[h.rack].role == "cdu")
        assert row.cdu_kw == pytest.approx(row.cdus * cdu.power_kw)
    assert cool.mw == pytest.approx((cool.kw + cool.cdu_kw) / 1000, abs=1e-3)
    # each CDU group's liquid heat within one CDU: the spare only stands in for a failed one
    assert all(c.load_kw <= c.capacity_kw for c in cool.cdus)


def test_air_cooled_designs_have_no_cooling_section(compiled: Compiled) -> None:
    plan = compiled("h100-256")
    assert plan.cooling is None and not any(d.kind == "cdu" for d in plan.devices)
    assert "cooling" not in plan.to_dict()


# ------------------------------------------------------------------------------------- in-rack CDUs


def test_in_rack_cdus_take_units_in_each_system_rack_and_count_in_its_power(compiled: Compiled) -> None:
    plan = compiled(GB200, IN_RACK)
    cdu = plan.catalog.cdus["cdu-inrack-200kw"]
    systems = _system_racks(plan)
    cdus = [d for d in plan.devices if d.kind == "cdu"]
    assert sorted(d.rack for d in cdus) == systems  # redundancy N: one per rack  # type: ignore[type-var]
    assert all(d.name == f"cdu-{d.rack}-1" and d.unit is not None for d in cdus)
    base = {r.name: r for r in compiled(GB200).racks}
    for r in plan.racks:
        if r.name in systems:
            assert r.units_used == base[r.name].units_used + cdu.rack_units
            assert r.power_kw == pytest.approx(base[r.name].power_kw + cdu.power_kw)
    assert not any(r.role == "cdu" for r in plan.racks)  # no row positions taken
    line = next(ln for ln in plan.bom.lines if ln.part == "cdu-inrack-200kw")  # type: ignore[union-attr]
    assert (line.quantity, line.unit_usd) == (len(systems), cdu.price.usd)


# ------------------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("name", [GB200, GB300])
def test_floor_svg_and_html_show_every_cdu(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    files = rendered_files(compiled, name)
    svg, html = files["floor.svg"], files["floor.html"]
    for c in _cooling(plan).cdus:
        assert f'id="rack-{c.rack}" data-role="cdu"' in svg
        assert f'data-cdu="{c.name}"' in html
    assert "in-row CDU" in svg  # its legend entry
    for row in _cooling(plan).rows:
        if row.cdus:
            assert f"row {row.row}: " in svg and f"{row.cdus} CDUs" in svg
    assert "carries no cooling design" not in html


def test_the_rack_sheet_shows_weight_and_the_liquid_air_split(compiled: Compiled) -> None:
    plan = compiled(GB200)
    files = rendered_files(compiled, GB200)
    h = next(h for h in _cooling(plan).racks if h.weight_kg is not None and h.liquid_kw > 0)
    sheet = files[f"cabling/racks/{h.rack}.html"]
    assert f"{h.liquid_kw} kW to liquid, {h.air_kw} kW to air" in sheet
    assert f"{h.weight_kg:,.0f} kg" in sheet


def test_the_bom_prices_the_cdus_and_no_enclosure_for_their_positions(compiled: Compiled) -> None:
    plan = compiled(GB200)
    assert plan.bom is not None
    cool = _cooling(plan)
    cdu = plan.catalog.cdus[cool.cdu]
    line = next(ln for ln in plan.bom.lines if ln.part == cool.cdu)
    assert (line.kind, line.quantity, line.unit_usd) == ("cdu", len(cool.cdus), cdu.price.usd)
    enclosures = sum(ln.quantity for ln in plan.bom.lines if ln.kind == "rack")
    positions = sum(1 for r in plan.racks if r.role == "cdu")
    assert enclosures == len(plan.racks) - plan.design.compute.racks - positions  # type: ignore[operator]


# ------------------------------------------------------------------------------------- refusals


def test_a_liquid_cooled_rack_system_without_site_cooling_is_refused() -> None:
    problems = _refused(GB200, "site.cooling=null")
    assert [f for f, _ in problems] == ["site.cooling"]
    assert "cdu-inrow-1350kw" in problems[0][1] or "liquid" in problems[0][1]


def test_site_cooling_on_an_air_cooled_design_is_refused() -> None:
    assert "site.cooling" in [f for f, _ in _refused("h100-256", "site.cooling={cdu: cdu-inrow-1350kw}")]


def test_a_cdu_group_over_one_cdus_capacity_is_refused_naming_racks_per_cdu(compiled: Compiled) -> None:
    plan = compiled(GB200)
    assert plan.design.compute.system is not None
    liquid = plan.catalog.rack_systems[plan.design.compute.system].liquid_kw(plan.catalog)
    cap = plan.catalog.cdus["cdu-inrow-1350kw"].capacity_kw
    too_many = int(cap // liquid) + 1
    problems = _refused(GB200, f"site.cooling.racks_per_cdu={too_many}")
    assert [f for f, _ in problems] == ["site.cooling.racks_per_cdu"]
    assert f"{cap:g} kW" in problems[0][1]
    # a CDU too small for even one rack: the CDU model is what to change
    small = _refused(GB200, f"catalog.cdus.cdu-inrow-1350kw.capacity_kw={math.floor(liquid) - 1}")
    assert "site.cooling.cdu" in [f for f, _ in small]


def test_a_row_over_its_busway_is_refused_with_the_numbers(compiled: Compiled) -> None:
    heaviest = max(_cooling(compiled(GB200)).rows, key=lambda r: r.kw)
    limit = math.floor(heaviest.kw) - 1
    problems = _refused(GB200, f"site.floor.row_power_kw={limit}")
    assert {f for f, _ in problems} == {"site.floor.row_power_kw"}
    assert any(f"row {heaviest.row} draws {heaviest.kw:,.1f} kW" in m and f"{limit} kW" in m for _, m in problems)
    # at the row's own draw it stands
    assert compile_file(DESIGNS / f"{GB200}.yaml", [f"site.floor.row_power_kw={math.ceil(heaviest.kw)}"])


def test_a_row_over_its_air_cooling_is_refused(compiled: Compiled) -> None:
    air = max(r.air_kw for r in _cooling(compiled(GB200)).rows)
    assert {f for f, _ in _refused(GB200, f"site.floor.row_air_kw={math.floor(air) - 1}")} == {"site.floor.row_air_kw"}


def test_a_rack_over_its_power_budget_with_in_rack_cdus_is_refused(compiled: Compiled) -> None:
    plan = compiled(GB200, IN_RACK)
    most = max(r.power_kw for r in plan.racks)
    problems = _refused(GB200, IN_RACK, f"site.rack.power_kw={math.floor(most * 10) / 10 - 0.1:.1f}")
    assert "site.rack.power_kw" in [f for f, _ in problems]


def test_a_floor_that_cannot_carry_the_racks_is_refused_naming_max_load(compiled: Compiled) -> None:
    plan = compiled(GB200)
    heaviest = max(h.load_kg_m2 for h in _cooling(plan).racks if h.load_kg_m2 is not None)
    problems = _refused(GB200, f"site.floor.max_load_kg_m2={math.floor(heaviest) - 1}")
    assert [f for f, _ in problems] == ["site.floor.max_load_kg_m2"]
    assert "kg/m2" in problems[0][1]
    assert compile_file(DESIGNS / f"{GB200}.yaml", [f"site.floor.max_load_kg_m2={math.ceil(heaviest)}"])


def test_a_floor_load_limit_on_unweighed_racks_is_a_warning_not_a_silent_pass() -> None:
    plan = compile_file(DESIGNS / "h100-256.yaml", ["site.floor.max_load_kg_m2=1000"])[0]
    assert [w.field for w in plan.warnings if "not checked" in w.message] == ["site.floor.max_load_kg_m2"]
