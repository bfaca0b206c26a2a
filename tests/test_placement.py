"""Placement: every device in a rack and unit, racks on the floor by strategy, PDUs and rack-local OOB,
and the errors a floor plan must give (power, units, rows off the floor or overlapping)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from shapely.geometry import box

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan, dumps
from tests.conftest import COMPILED_EXAMPLES, DESIGNS


def _racks(plan: Plan) -> dict[str, dict]:
    return {r.name: r for r in plan.racks}


def _units_of(plan: Plan, name: str) -> int:
    cat = plan.catalog
    d = plan.device(name)
    if d.kind in ("server", "management"):
        return cat.servers[d.model].rack_units
    if d.kind == "storage":
        return cat.storage_servers[d.model].rack_units
    if d.kind == "switch":
        return cat.switches[d.model].rack_units
    if d.kind == "cdu":
        return cat.cdus[d.model].rack_units
    return cat.pdus[d.model].rack_units


def _power_kw(plan: Plan, name: str) -> float:
    cat = plan.catalog
    d = plan.device(name)
    if d.kind in ("server", "management"):
        return cat.servers[d.model].power_kw
    if d.kind == "storage":
        return cat.storage_servers[d.model].power_kw
    if d.kind == "switch":
        sw = cat.switches[d.model]
        # a co-packaged-optics switch draws its external laser modules' power on top of its own
        lasers = sw.lasers.count * sw.lasers.power_w if sw.lasers else 0.0
        return (sw.power_w + lasers) / 1000
    if d.kind == "cdu" and cat.cdus[d.model].placement == "in_rack":
        return cat.cdus[d.model].power_kw  # on the rack's power; an in-row CDU is fed by the facility
    return 0.0


@pytest.mark.parametrize("name", [e for e in COMPILED_EXAMPLES if e != "h100-16k"])
def test_every_device_has_a_rack_and_units_do_not_collide(compiled, name: str) -> None:
    plan = compiled(name)
    racks = _racks(plan)
    occupied: dict[str, dict[int, str]] = defaultdict(dict)
    power: Counter[str] = Counter()
    for d in plan.devices:
        assert d.rack in racks, f"{d.name} is not in a rack"
        power[d.rack] += _power_kw(plan, d.name)
        if d.kind == "pdu" and plan.catalog.pdus[d.model].rack_units == 0:
            assert d.unit is None  # zero-U, rear channel
            continue
        if d.kind == "cdu" and plan.catalog.cdus[d.model].placement == "in_row":
            assert d.unit is None and racks[d.rack].role == "cdu"  # the whole row position
            continue
        h = _units_of(plan, d.name)
        assert d.unit >= 1 and d.unit + h - 1 <= racks[d.rack].units
        for u in range(d.unit, d.unit + h):
            assert u not in occupied[d.rack], f"{d.name} and {occupied[d.rack][u]} share U{u} of {d.rack}"
            occupied[d.rack][u] = d.name
    for r in racks.values():
        # the budget is recomputed here from the catalog, not read back from the stage
        assert power[r.name] == pytest.approx(r.power_kw, abs=1e-6)
        assert power[r.name] <= r.power_budget_kw + 1e-9
        assert len(occupied[r.name]) == r.units_used


def test_racks_stand_on_the_floor_without_overlap(compiled) -> None:
    plan = compiled("h100-1024-reference")
    floor = plan.floor
    xs = [p[0] for p in floor.outline_mm]
    ys = [p[1] for p in floor.outline_mm]
    room = box(min(xs), min(ys), max(xs), max(ys))
    shapes = [box(r.x_mm, r.y_mm, r.x_mm + r.width_mm, r.y_mm + r.depth_mm) for r in plan.racks]
    for s in shapes:
        assert room.contains(s)
    for i, a in enumerate(shapes):
        for b in shapes[i + 1 :]:
            assert a.intersection(b).area == 0


def _row_positions(plan: Plan, role: str) -> list[tuple[str, int]]:
    return sorted((r.row, r.position) for r in plan.racks if r.role == role)


def test_strategies_put_network_racks_where_the_playbook_says(compiled) -> None:
    # reference: leaf racks and the spine rack are separate (not neighbours)
    ref = compiled("h100-1024-reference")
    ((srow, spos),) = _row_positions(ref, "spine")
    leaves = _row_positions(ref, "leaf")
    assert all(row != srow or abs(pos - spos) > 1 for row, pos in leaves)
    # virtual modular switch: the spine rack mid-row with a leaf rack on either side
    vms = compiled("h100-1024-vms")
    ((srow, spos),) = _row_positions(vms, "spine")
    assert _row_positions(vms, "leaf") == [(srow, spos - 1), (srow, spos + 1)]
    row_len = next(r.positions for r in vms.floor.rows if r.name == srow)
    assert abs(spos - (row_len + 1) / 2) <= 1.5
    # top-of-rack: no leaf racks; each compute rack holds one leaf with servers below and above it
    tor = compiled("h100-1024-tor")
    assert not _row_positions(tor, "leaf")
    by_rack = defaultdict(list)
    for d in tor.devices:
        by_rack[d.rack].append(d)
    for r in tor.racks:
        if r.role != "compute":
            continue
        leaf = [d for d in by_rack[r.name] if d.role == "leaf" and d.network == "backend"]
        assert len(leaf) == 1
        servers = [d for d in by_rack[r.name] if d.kind == "server"]
        assert any(s.unit < leaf[0].unit for s in servers) and any(s.unit > leaf[0].unit for s in servers)
        # the leaf serves exactly the servers of its rack
        served = {lk.a_device for lk in tor.links if lk.b_device == leaf[0].name and lk.tier == "server-leaf"}
        assert served == {s.name for s in servers}


def test_compute_racks_follow_the_power_budget(compiled) -> None:
    plan = compiled("h100-1024-reference")  # 41 kW racks: 4 x 10.2 kW HGX
    per_rack = Counter(d.rack for d in plan.devices if d.kind == "server")
    assert set(per_rack.values()) == {4}
    plan25 = compiled("h100-1024-reference", "site.rack.power_kw=25")
    per_rack = Counter(d.rack for d in plan25.devices if d.kind == "server")
    assert set(per_rack.values()) == {2}
    assert sum(r.role == "compute" for r in plan25.racks) == 64


def test_pdus_are_managed_over_a_rack_local_oob_network(compiled) -> None:
    plan = compiled("h100-1024-reference")
    racks = _racks(plan)
    devs = plan.index()
    pdus = [d for d in plan.devices if d.kind == "pdu"]
    # 41 kW on 34.5 kW PDUs: two per feed, A and B
    assert Counter(d.rack for d in pdus) == {r: 4 for r in racks}
    mgmt = {lk.a_device: lk.b_device for lk in plan.links if lk.tier == "mgmt-access"}
    assert all(p.name in mgmt for p in pdus)
    # every device with a management port is wired once, to an access switch in its own row
    for d in plan.devices:
        if d.kind == "switch" and d.network == "oob":
            continue
        assert d.name in mgmt, f"{d.name} has no OOB link"
        sw = devs[mgmt[d.name]]
        assert racks[sw.rack].row == racks[d.rack].row
    # each access switch stands among the racks it serves, which are neighbours in one row
    served = defaultdict(set)
    for dev, sw in mgmt.items():
        served[sw].add(devs[dev].rack)
    row_racks = defaultdict(list)
    for r in sorted(racks.values(), key=lambda r: r.position):
        row_racks[r.row].append(r.name)
    for sw, rs in served.items():
        assert devs[sw].rack in rs
        order = row_racks[racks[devs[sw].rack].row]
        idx = sorted(order.index(r) for r in rs)
        assert idx == list(range(idx[0], idx[-1] + 1)), f"{sw} serves racks that are not neighbours"
    assert plan.networks.oob.access_switches == len(served)


def test_oob_racks_per_switch_knob(compiled) -> None:
    plan = compiled("h100-1024-reference", "oob.racks_per_switch=1")
    switches = [d for d in plan.devices if d.network == "oob" and d.role == "leaf"]
    assert len(switches) == len(plan.racks)
    assert len({d.rack for d in switches}) == len(switches)


def _error(name: str, *overrides: str) -> DesignError:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{name}.yaml", list(overrides))
    return exc.value


def test_power_over_budget_names_the_field() -> None:
    err = _error("h100-1024-reference", "site.rack.power_kw=9")
    assert err.problems[0].field == "site.rack.power_kw"
    assert "does not fit" in err.problems[0].message
    # a top-of-rack rack (4 servers + leaf = 42.6 kW) does not fit the reference's 41 kW racks
    err = _error("h100-1024-tor", "site.rack.power_kw=41")
    assert err.problems[0].field == "site.rack.power_kw"
    assert "su1-leaf01" in err.problems[0].message and err.problems[0].hint


def test_overfull_rack_names_units() -> None:
    err = _error("h100-1024-tor", "site.rack.units=30", "site.rack.model=rack-42u-600x1200")
    assert {p.field for p in err.problems} <= {"site.rack.units", "site.rack.model"}


def test_too_few_pdus_named() -> None:
    err = _error("h100-1024-reference", "site.rack.pdus=2")
    assert err.problems[0].field == "site.rack.pdus"
    assert "34.5 kW" in err.problems[0].message


# NVIDIA's reference: 3 PDUs per compute rack, 2 per other rack (3 x 10.2 kW HGX per rack, so feed B's
# one 34.5 kW PDU carries a compute rack)
RA_PDUS = (
    "site.rack.servers_per_rack=3",
    "site.rack.pdus={compute: 3, leaf: 2, spine: 2, core: 2, frontend: 2, storage: 2, management: 2}",
)


def test_pdus_per_rack_role(compiled) -> None:
    from generators.views.netbox_inventory import inventory

    plan = compiled("h100-256", *RA_PDUS)
    pdus = [d for d in plan.devices if d.kind == "pdu"]
    per_rack = Counter(d.rack for d in pdus)
    roles = {r.role for r in plan.racks}
    assert "compute" in roles and len(roles) > 1
    for r in plan.racks:
        want = 3 if r.role == "compute" else 2
        assert r.pdus == want and per_rack[r.name] == want, r.name
        # feeds alternate, so the names a rack keeps are those it had with more PDUs
        names = sorted(d.name for d in pdus if d.rack == r.name)
        assert names == sorted([f"pdu-{r.name}-a1", f"pdu-{r.name}-b1", f"pdu-{r.name}-a2"][:want])
    # every PDU is managed (an OOB port), bought and handed to NetBox
    mgmt = {lk.a_device for lk in plan.links if lk.tier == "mgmt-access"}
    assert all(p.name in mgmt for p in pdus)
    assert plan.bom is not None
    assert sum(ln.quantity for ln in plan.bom.lines if ln.kind == "pdu") == len(pdus)
    nb = {o.key for o in inventory(plan) if o.endpoint == "dcim/devices"}
    assert {p.name for p in pdus} <= nb
    # the default (4 everywhere on the reference's 41 kW racks) is unchanged
    assert {r.pdus for r in compiled("h100-256").racks} == {4}


def test_too_few_pdus_for_a_role_names_the_role_and_line(cli, tmp_path: Path) -> None:
    p = tmp_path / "d.yaml"
    p.write_text(f"extends: {DESIGNS / 'h100-256.yaml'}\nsite:\n  rack:\n    pdus:\n      compute: 3\n")
    r = cli("validate", p)
    assert r.exit_code == 2
    # 4 x 10.2 kW on 34.5 kW PDUs: feed B's single PDU of 3 cannot carry it
    assert f"{p.name}:5: site.rack.pdus.compute: compute rack" in r.output
    assert "feed B's 1 x pdu-415v-60a-3ph carries 34.5 kW" in r.output
    assert "set site.rack.pdus.compute to at least 4" in r.output
    # racks of other roles keep the default and pass
    assert "site.rack.pdus.leaf" not in r.output and "frontend rack" not in r.output


def test_a_pdu_count_for_an_unknown_role_is_refused_at_its_line(cli, tmp_path: Path) -> None:
    p = tmp_path / "d.yaml"
    p.write_text(f"extends: {DESIGNS / 'h100-256.yaml'}\nsite:\n  rack:\n    pdus: {{gpu: 3, leaf: 2}}\n")
    r = cli("validate", p)
    assert r.exit_code == 2
    assert f"{p.name}:4: site.rack.pdus: 'gpu' is not a rack role: use compute, leaf" in r.output


def test_rows_off_the_floor_or_overlapping_are_errors(tmp_path: Path) -> None:
    def write(rows: str, floor: str = "") -> Path:
        p = tmp_path / "d.yaml"
        p.write_text(f"extends: {DESIGNS / 'h100-256.yaml'}\nsite:\n  rows:\n{rows}{floor}")
        return p

    ok = write(
        "    - {name: a, positions: 10, x_mm: 1500, y_mm: 1200}\n"
        "    - {name: b, positions: 10, x_mm: 1500, y_mm: 3600}\n"
        "    - {name: c, positions: 10, x_mm: 1500, y_mm: 6000}\n"
        "    - {name: spare, positions: 10, x_mm: 1500, y_mm: 8400}\n"
    )
    plan, _, _ = compile_file(ok)
    # the 8 compute racks fill row a, the network row is b (a block's second row, whatever its size);
    # c and spare stand empty, for growth
    assert {r.row for r in plan.racks} == {"a", "b"}
    assert [r.name for r in plan.floor.rows] == ["a", "b", "c", "spare"]
    assert plan.racks[0].x_mm == 1500 and plan.racks[0].y_mm == 1200
    overlap = write(
        "    - {name: a, positions: 10, x_mm: 1500, y_mm: 1200}\n"
        "    - {name: b, positions: 10, x_mm: 1500, y_mm: 2000}\n"
        "    - {name: c, positions: 10, x_mm: 1500, y_mm: 6000}\n"
    )
    with pytest.raises(DesignError) as exc:
        compile_file(overlap)
    assert any(p.field == "site.rows.1" and "overlaps row a" in p.message for p in exc.value.problems)
    off = write(
        "    - {name: a, positions: 10, x_mm: 1500, y_mm: 1200}\n"
        "    - {name: b, positions: 10, x_mm: 1500, y_mm: 3600}\n"
        "    - {name: c, positions: 10, x_mm: 1500, y_mm: 6000}\n",
        "  floor: {width_mm: 6000, depth_mm: 9000}\n",
    )
    with pytest.raises(DesignError) as exc:
        compile_file(off)
    assert {p.field for p in exc.value.problems} == {"site.rows.0", "site.rows.1", "site.rows.2"}
    assert "off the floor" in exc.value.problems[0].message
    few = write("    - {name: a, positions: 10}\n")
    with pytest.raises(DesignError) as exc:
        compile_file(few)
    assert exc.value.problems[0].field == "site.rows"


def test_keepouts_block_rack_positions(compiled) -> None:
    base = compiled("h100-1024-reference")
    row = base.floor.rows[0]
    # a 1 m column over the third and fourth positions of the first row
    x = row.x_mm + 2 * 600 + 100
    ko = (
        f"site.floor.keepouts=[{{name: col1, x_mm: {x}, y_mm: {row.y_mm + 300}, width_mm: 1000, "
        "depth_mm: 600, blocks_trays: true}]"
    )
    plan = compiled("h100-1024-reference", ko)
    col = box(x, row.y_mm + 300, x + 1000, row.y_mm + 900)
    first = next(r for r in plan.floor.rows if r.name == row.name)
    assert first.blocked == [3, 4]
    for r in plan.racks:
        assert box(r.x_mm, r.y_mm, r.x_mm + r.width_mm, r.y_mm + r.depth_mm).intersection(col).area == 0
    # the column cuts the overhead tray above it: no tray segment crosses it
    for s in plan.trays.segments:
        (xa, ya), (xb, yb) = s.a_mm, s.b_mm
        if ya == yb and row.y_mm + 300 < ya < row.y_mm + 900:
            assert max(xa, xb) <= x or min(xa, xb) >= x + 1000


def test_plan_json_carries_racks_and_units(compiled) -> None:
    plan = compiled("h100-256")
    data = json.loads(dumps(plan))
    assert {"racks", "floor", "cables", "trays", "cabling"} <= set(data)
    dev = next(d for d in data["devices"] if d["name"] == "gpu001")
    assert dev["rack"] and dev["unit"] == 1
    back = Plan.from_dict(data)
    assert [(d.name, d.rack, d.unit) for d in back.devices] == [(d.name, d.rack, d.unit) for d in plan.devices]
    assert dumps(back) == dumps(plan)


def test_every_placement_strategy_is_a_design_choice_and_back() -> None:
    """backend.placement's choices are the strategy classes (generators.stages.placement.strategies): a new
    strategy is one class there plus its name in the design schema, and this keeps the two equal."""
    from typing import get_args

    from generators.model.design import Backend
    from generators.stages.placement.strategies import STRATEGIES

    assert list(get_args(Backend.model_fields["placement"].annotation)) == list(STRATEGIES)
    for name, strategy in STRATEGIES.items():
        assert strategy.name == name and strategy.spine_position in ("start", "middle", "end")
        assert type(strategy).__doc__, f"strategy {name} says what it does"
