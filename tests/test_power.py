"""800 VDC power with sidecars on the floor (issue 41, item 4), and Rubin Ultra / Kyber as an editable
parameter set (item 2), on the shipped vru-kyber-800vdc-1152: power sidecars stand on row positions beside
the rack-system racks they feed, as many per group as the catalog's capacity per sidecar gives plus a
spare (N+1); each rack's current at its 800 VDC input and on its busbar is I = P / V; its rack sheet, the
floor map and the BoM show its shelves and sidecars; growing the site moves no rack or sidecar that stands;
and a design that cannot be fed so is refused by field, exit 2.

Sources (catalog comments, looked up 2026-12): NVIDIA's 660 kW monopolar 800 V power rack reference design
and the "800 V Sidecar" NVIDIA showed beside its Kyber racks at GTC 2025; Kyber's 144 GPU packages and
~600 kW per rack (Tom's Hardware, 2025-03-20). The Kyber figures are estimates, marked so in the catalog."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from generators.model.plan import Plan, required
from tests.conftest import DESIGNS, rendered_files
from tests.test_growth import changed_identities

Compiled = Callable[..., Plan]
KYBER = "vru-kyber-800vdc-1152"
ONE_UNIT = ("compute.racks=4", "tenants=[{name: acme, scalable_units: [1]}]")


def test_kyber_is_an_editable_parameter_set_of_estimates(compiled: Compiled) -> None:
    plan = compiled(KYBER)
    cat = plan.catalog
    assert plan.design.compute.system is not None
    rs = cat.rack_systems[plan.design.compute.system]
    tray = cat.servers[rs.tray]
    # 144 GPU packages per rack, ~600 kW, 800 VDC in, 45 C inlet, 100% liquid (issue 41 item 2)
    assert rs.trays * tray.gpus == 144
    assert 580 <= rs.power_kw(cat) <= 660
    assert cat.pdus[rs.power_shelf].input_vdc == 800
    assert rs.coolant_inlet_c == 45 and rs.liquid_fraction == 1.0
    # every figure is marked as an estimate, as the catalog marks what is not published
    assert "estimate" in rs.price.source and "estimate" in rs.description
    assert "estimate" in tray.description and "estimate" in tray.gpu_model
    # the compiled racks: 144 GPUs each, 8 racks
    servers = [d for d in plan.devices if d.kind == "server"]
    assert sum(cat.servers[d.model].gpus for d in servers) == 8 * 144


def test_sidecars_stand_on_the_floor_beside_the_racks_they_feed(compiled: Compiled) -> None:
    plan = compiled(KYBER)
    power = required(plan.power, "power")
    cat, site = plan.catalog, plan.design.site
    assert site.power is not None and site.cooling is not None and site.cooling.racks_per_cdu is not None
    sc = cat.pdus[power.sidecar]
    assert sc.racks is not None
    rack_kw = power.racks[0].kw
    # racks one sidecar feeds: its outputs, as far as its capacity carries them (660 kW: one ~610 kW rack)
    fed = min(sc.racks, math.floor(sc.capacity_kw / rack_kw))
    assert power.racks_per_sidecar == fed == 1
    per_group = math.ceil(site.cooling.racks_per_cdu / fed) + (1 if site.power.redundancy == "N+1" else 0)
    groups = math.ceil(plan.design.compute.racks / site.cooling.racks_per_cdu)  # type: ignore[operator]
    assert len(power.sidecars) == groups * per_group == 12

    racks = {r.name: r for r in plan.racks}
    devices = plan.index()
    by_row: dict[str, list[str]] = {}
    for r in sorted(plan.racks, key=lambda r: (r.row, r.position)):
        by_row.setdefault(r.row, []).append(r.name)
    for c in power.sidecars:
        # a sidecar is a device on a row position of its own (no rack unit), named by it
        pos = racks[c.rack]
        assert pos.role == "sidecar" and pos.pdus == 0
        dev = devices[c.name]
        got = (dev.kind, dev.role, dev.model, dev.rack, dev.unit)
        assert got == ("pdu", "power-sidecar", sc_key(plan), c.rack, None)
        # beside its group: in the same row, after the group's racks and CDUs, with nothing else between
        row = by_row[pos.row]
        first, last = row.index(c.serves[0]), row.index(c.serves[-1])
        between = [racks[n].role for n in row[last + 1 : row.index(c.rack)]]
        assert set(between) <= {"cdu", "sidecar"} and first <= last < row.index(c.rack)
        assert all(racks[n].row == pos.row for n in c.serves)
        # the group's draw is carried with one sidecar down (N+1)
        n = sum(1 for x in power.sidecars if x.serves == c.serves)
        assert c.load_kw == pytest.approx(sum(racks[s].power_kw for s in c.serves), abs=0.01)
        assert c.load_kw <= (n - 1) * sc.capacity_kw
    # every rack-system rack is fed by its group's sidecars
    fed_by = {f.rack: f.sidecars for f in power.racks}
    assert set(fed_by) == {r.name for r in plan.racks if r.role == "compute"}
    assert all(len(v) == per_group for v in fed_by.values())
    # they weigh on the floor: the cooling section weighs each sidecar position
    heat = {h.rack: h for h in required(plan.cooling, "cooling").racks}
    assert {heat[c.rack].weight_kg for c in power.sidecars} == {sc.weight_kg}


def sc_key(plan: Plan) -> str:
    assert plan.design.site.power is not None and plan.design.site.power.sidecar is not None
    return plan.design.site.power.sidecar


def test_busbar_current_is_power_over_voltage_and_shelves_are_n_plus_1(compiled: Compiled) -> None:
    plan = compiled(KYBER)
    power = required(plan.power, "power")
    cat = plan.catalog
    rs = cat.rack_systems[plan.design.compute.system or ""]
    shelf = cat.pdus[rs.power_shelf]
    racks = {r.name: r for r in plan.racks}
    for f in power.racks:
        assert f.kw == pytest.approx(racks[f.rack].power_kw)
        assert f.feed_vdc == 800 and f.feed_a == pytest.approx(f.kw * 1000 / 800, abs=0.1)
        assert f.busbar_vdc == rs.busbar_vdc == 50
        assert f.busbar_a == pytest.approx(f.kw * 1000 / 50, abs=0.1)  # ~12,190 A: why the feed is 800 V
        assert (f.shelf, f.shelves, f.psus) == (rs.power_shelf, rs.power_shelves, rs.power_shelves * shelf.psus)  # type: ignore[operator]
        assert f.n1_kw == (rs.power_shelves - 1) * shelf.capacity_kw >= f.kw  # N+1: one shelf down, still fed
        # the shelves are devices of the rack, on its sheet
        shelves = [d for d in plan.devices if d.rack == f.rack and d.role == "power-shelf"]
        assert len(shelves) == rs.power_shelves


def test_rack_sheets_floor_map_and_bom_show_shelves_and_sidecars(compiled: Compiled) -> None:
    plan = compiled(KYBER)
    files = rendered_files(compiled, KYBER)
    power = required(plan.power, "power")
    f = power.racks[0]
    sheet = files[f"cabling/racks/{f.rack}.html"]
    assert f"power: 800 VDC from {', '.join(f.sidecars)} ({f.feed_a:,.1f} A at 800 V)" in sheet
    assert f"{f.shelves} x {f.shelf} ({f.psus} PSUs) onto the 50 V busbar ({f.busbar_a:,.0f} A)" in sheet
    for d in plan.devices:
        if d.rack == f.rack and d.role == "power-shelf":
            assert f"<td>{d.name}</td><td>{d.model}</td>" in sheet
    c = power.sidecars[0]
    side = files[f"cabling/racks/{c.rack}.html"]
    assert f"power sidecar {c.name} ({c.model}): feeds {', '.join(c.serves)} at 800 VDC" in side
    assert f"<td>{c.name}</td><td>{c.model}</td>" in side

    # the floor map draws each sidecar on its position, says whom it feeds, and lists them
    svg = files["floor.svg"]
    for c in power.sidecars:
        assert re.search(rf"<title>{c.rack}: power sidecar {c.name} \({c.model}\), feeds ", svg)
    assert "power sidecar (800 VDC)" in svg  # the legend
    html = files["floor.html"]
    assert html.count("<tr data-sidecar=") == len(power.sidecars)
    assert html.count("<tr data-feed=") == len(power.racks)

    # the BoM: the sidecars as placed, the shelves and their PSUs in the rack system's line, and no
    # enclosure bought for a sidecar's (or CDU's) position
    lines = {(x.kind, x.part): x for x in required(plan.bom, "bom").lines}
    car = lines[("pdu", power.sidecar)]
    assert car.quantity == len(power.sidecars) == 12
    assert "estimate" in car.source
    system = lines[("server", plan.design.compute.system or "")]
    assert f"{f.shelves} x {f.shelf} (16 PSUs of 55 kW, 800 VDC in)" in system.description
    enclosures = lines[("rack", required(plan.floor, "floor").rack_model or "")].quantity
    bought = [r for r in plan.racks if r.role not in ("compute", "cdu", "sidecar")]
    assert enclosures == len(bought)


def test_growing_the_800vdc_site_moves_no_rack_or_sidecar(compiled: Compiled) -> None:
    base, head = compiled(KYBER, *ONE_UNIT), compiled(KYBER)
    assert len(required(base.power, "power").sidecars) == 6
    # every rack-system rack, CDU and sidecar of one unit stands where it stood with two, named the same,
    # its sidecars feeding the same racks
    b_pos = {(r.name, r.role) for r in base.racks if r.role in ("compute", "cdu", "sidecar")}
    assert b_pos <= {(r.name, r.role) for r in head.racks}
    b = {c.name: (c.rack, c.serves) for c in required(base.power, "power").sidecars}
    h = {c.name: (c.rack, c.serves) for c in required(head.power, "power").sidecars}
    assert all(h[n] == v for n, v in b.items())
    # and nothing else moves either: the per-plane spines stack by stable keys (once plane2-spine* moved
    # here, as in vr-nvl72-1152's same growth with no sidecar at all)
    assert "moved" not in changed_identities(base, head)


def test_existing_designs_stay_on_ac(compiled: Compiled) -> None:
    # a design that names no site.power is on AC whips: no power section, no sidecar
    plan = compiled("vr-nvl72-576")
    assert plan.power is None
    assert not [d for d in plan.devices if d.role == "power-sidecar"]


BAD = [
    pytest.param(
        "vr-nvl72-576",
        "site.power={architecture: 800vdc, sidecar: sidecar-800vdc-660kw}",
        "site.power.architecture: the vr-nvl72 rack has no 800 VDC input: its power shelves (vr-power-shelf) take AC",
        "fix: set site.power.architecture: ac, or use a rack system with 800 VDC shelves (vru-kyber-nvl144)",
        id="system-without-dc-input",
    ),
    pytest.param(
        "h100-256",
        "site.power={architecture: 800vdc, sidecar: sidecar-800vdc-660kw}",
        "site.power.architecture: 800vdc feeds rack systems' DC-input power shelves; hgx-h100 servers take AC",
        "fix: remove site.power (AC)",
        id="servers-on-800vdc",
    ),
    pytest.param(
        KYBER,
        "catalog={pdus: {sidecar-800vdc-660kw: {capacity_kw: 500}}}",
        "site.power.sidecar: a vru-kyber-nvl144 rack draws 609.496 kW, over the 500 kW one sidecar-800vdc-660kw feeds",
        "fix: use a larger sidecar",
        id="rack-above-a-sidecar",
    ),
    pytest.param(
        KYBER,
        "site.power=null",
        "site.power: the vru-kyber-nvl144 rack's power shelves (kyber-dc-power-shelf) take 800 VDC, not AC",
        "fix: set site.power: {architecture: 800vdc, sidecar: <one of sidecar-800vdc-660kw>}",
        id="dc-rack-on-ac",
    ),
    pytest.param(
        KYBER,
        "site.power.sidecar=pdu-415v-60a-3ph",
        "site.power.sidecar: 'pdu-415v-60a-3ph' is not a power sidecar (a pdus entry with placement: in_row)",
        "fix: use one of: sidecar-800vdc-660kw",
        id="a-pdu-is-no-sidecar",
    ),
]


@pytest.mark.parametrize(("name", "override", "says", "fix"), BAD)
def test_a_design_that_cannot_be_fed_is_refused_by_field(
    cli: Callable[..., object], tmp_path: Path, name: str, override: str, says: str, fix: str
) -> None:
    out = tmp_path / "out"
    r = cli("compile", DESIGNS / f"{name}.yaml", "-o", out, "--set", override)
    text = r.output  # type: ignore[attr-defined]
    assert r.exit_code == 2, text  # type: ignore[attr-defined]
    assert says in text and fix in text
    assert "Traceback" not in text and not out.exists()  # nothing half-written


def test_netbox_hands_over_each_sidecar_on_its_position(compiled: Compiled) -> None:
    # the sidecars are managed devices: in the NetBox import, on the rack record of their row position,
    # with their management port on the out-of-band network (their panels and feeds: tests/test_netbox_power.py)
    plan = compiled(KYBER)
    files = rendered_files(compiled, KYBER)
    power = required(plan.power, "power")
    rows = [line.split(",") for line in files["netbox/08-devices.csv"].splitlines()[1:]]
    cars = {r[0]: r for r in rows if r[1] == "power-sidecar"}
    assert set(cars) == {c.name for c in power.sidecars}
    for c in power.sidecars:
        assert (cars[c.name][3], cars[c.name][6]) == (c.model, c.rack)
    oob = {p["device"] for p in required(plan.netplan, "netplan").oob["ports"]}
    assert {c.name for c in power.sidecars} <= oob
