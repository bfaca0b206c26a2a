"""The bill of materials: node prices from configurable parts, quantities that match the plan, storage
sizing, software licensing, and the rendered bom.csv / bom.json / bom.html."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from generators.compiler import compile_file
from generators.model.catalog import load_catalog
from generators.model.design import resolved_config
from generators.model.errors import DesignError
from generators.model.sections import Bom, BomLine
from generators.renderers.bom import render_bom
from generators.stages.bom import CATEGORIES, build_bom, node_price
from tests.conftest import DESIGNS

REF, TOR, VMS, OPT = "h100-1024-reference", "h100-1024-tor", "h100-1024-vms", "h100-1024-optimized"


def lines(bom: Bom, **match: str) -> list[BomLine]:
    return [ln for ln in bom.lines if all(getattr(ln, k) == v for k, v in match.items())]


def qty(bom: Bom, **match: str) -> float:
    return sum(ln.quantity for ln in lines(bom, **match))


# ------------------------------------------------------------------------------------ compute node


def test_reference_node_is_exactly_270k(compiled) -> None:
    bom = compiled(REF).bom
    assert bom.node["unit_usd"] == 270_000.0
    assert sum(p["total_usd"] for p in bom.node["parts"]) == 270_000.0


def test_optimized_node_is_exactly_256_4k(compiled) -> None:
    bom = compiled(OPT).bom
    assert bom.node["unit_usd"] == 256_400.0


def test_node_saving_comes_from_the_three_playbook_choices() -> None:
    """Mid-range CPU, 1 TB instead of 2 TB, one ConnectX instead of two BlueField-3: $13.6k in all."""
    cat = load_catalog()
    ref_design = compile_file(DESIGNS / f"{REF}.yaml")[1]
    base = resolved_config(ref_design, cat)
    steps = {
        "cpu": base.model_copy(update={"cpu": "xeon-8462yplus"}),
        "ram": base.model_copy(update={"memory_gb": 1024}),
        "nic": base.model_copy(update={"frontend_nic": "cx6dx-2x100g", "frontend_nic_count": 1}),
    }
    full = node_price(cat, "hgx-h100", base)
    savings = {k: full - node_price(cat, "hgx-h100", cfg) for k, cfg in steps.items()}
    assert savings == {"cpu": 5_000.0, "ram": 4_000.0, "nic": 4_600.0}
    assert sum(savings.values()) == 13_600.0


def test_node_price_follows_the_design_config(compiled) -> None:
    """The configuration is a design field, not a part: --set changes the price line by line."""
    bom = compiled(REF, "compute.config.memory_gb=1024").bom
    assert bom.node["unit_usd"] == 266_000.0
    assert qty(bom, category="compute", part="ddr5-64gb") == 128 * 16


def test_compute_quantities_match_the_plan(compiled) -> None:
    plan = compiled(REF)
    bom = plan.bom
    servers = sum(d.kind == "server" for d in plan.devices)
    assert qty(bom, category="compute", part="hgx-h100") == servers == 128
    assert qty(bom, category="compute", part="xeon-8480plus") == 2 * servers
    backend_nics = sum(
        lk.network == "backend" and lk.tier == "server-leaf" and lk.a_device.startswith("gpu") for lk in plan.links
    )
    assert qty(bom, category="compute", part="cx7-400g-osfp") == backend_nics == 1024
    assert qty(bom, category="compute", part="bluefield3-b3220") == 2 * servers


# -------------------------------------------------------------------------------------- categories


@pytest.mark.parametrize("name", [REF, TOR, VMS, OPT, "h100-256", "h100-16k"])
def test_totals_add_up(compiled, name: str) -> None:
    bom = compiled(name).bom
    assert list(bom.by_category) == list(CATEGORIES)
    for c in CATEGORIES:
        assert bom.by_category[c] == pytest.approx(sum(ln.total_usd for ln in lines(bom, category=c)))
    assert bom.total_usd == pytest.approx(sum(bom.by_category.values()))
    assert bom.per_server_usd == pytest.approx(bom.total_usd / bom.servers)
    assert bom.per_gpu_usd == pytest.approx(bom.total_usd / bom.gpus)
    excl = (bom.total_usd - bom.by_category["storage"]) / bom.servers
    assert bom.per_server_excl_storage_usd == pytest.approx(excl)
    for ln in bom.lines:
        assert ln.total_usd == pytest.approx(ln.quantity * ln.unit_usd)
        assert ln.quantity > 0 and ln.unit_usd >= 0 and ln.source and ln.date


@pytest.mark.parametrize("name", [REF, TOR, VMS, OPT, "h100-16k"])
def test_switch_quantities_match_the_plan(compiled, name: str) -> None:
    plan = compiled(name)
    bom = plan.bom
    want = Counter((d.network, d.model) for d in plan.devices if d.kind == "switch")
    got = Counter({(ln.category, ln.part): ln.quantity for ln in lines(bom, kind="switch")})
    assert got == want


def test_management_nodes_buy_a_backend_hca_only_when_they_run_the_subnet_manager(compiled) -> None:
    ref = compiled(REF).bom  # backend_attached: 0
    opt = compiled(OPT).bom  # backend_attached: 2
    assert qty(ref, category="management", part="mgmt-1u") == 3
    assert qty(ref, category="management", part="cx7-400g-osfp") == 0
    assert qty(opt, category="management", part="cx7-400g-osfp") == 2


# ----------------------------------------------------------------------------------------- storage


def test_storage_reference_sizing_matches_the_playbook(compiled) -> None:
    st = compiled(REF).bom.storage
    assert st["servers"] == 8
    assert st["usable_tb"] >= 2000 > st["usable_tb"] - 8 * 30.72 * 0.7  # the least whole drives per server
    assert st["raw_tb"] == pytest.approx(st["usable_tb"] / 0.7)
    assert 250 <= st["bandwidth_gbps"] <= 400  # playbook: 250-400 GB/s from 8 servers
    assert st["drives_per_server"] < st["drive_bays"]  # bays left free for expansion
    assert st["license_share"] > 0.5  # "most of the storage cost is in the software license"


def test_storage_bandwidth_is_capped_by_the_network(compiled) -> None:
    """The optimized design's 100G frontend caps each storage server at 2 x 100G = 25 GB/s."""
    st = compiled(OPT).bom.storage
    assert st["bottleneck"] == "network" and st["bandwidth_gbps"] == 200.0


def test_storage_capacity_scales_drives_and_license(compiled) -> None:
    small = compiled(REF, "storage.capacity_pb=1").bom
    big = compiled(REF).bom
    assert small.storage["drives_per_server"] == 6
    assert small.storage["license_usd"] == pytest.approx(big.storage["license_usd"] / 2)


def test_storage_target_that_does_not_fit_the_bays_is_an_error_naming_the_field() -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{REF}.yaml", ["storage.capacity_pb=5"])
    (p,) = exc.value.problems
    assert p.field == "storage.capacity_pb"
    assert "16 bays" in p.message and "storage.count to at least 15" in p.hint


def test_fewer_than_eight_storage_servers_warns_naming_the_field(compiled, cli) -> None:
    bom = compiled(REF, "storage.count=6").bom
    assert [w.field for w in bom.warnings] == ["storage.count"]
    assert compiled(REF).bom.warnings == []
    r = cli("validate", DESIGNS / f"{REF}.yaml", "--set", "storage.count=6")
    assert r.exit_code == 0
    assert "warning: storage.count" in r.output


def test_storage_without_license(compiled) -> None:
    bom = compiled(REF, "storage.license=null").bom
    assert lines(bom, kind="license", category="storage") == []
    assert bom.storage["license_usd"] == 0


# ---------------------------------------------------------------------------------------- software


def test_ufm_licensed_per_backend_endpoint(compiled) -> None:
    ref = compiled(REF).bom
    assert qty(ref, category="software", part="ufm-enterprise") == 1024  # playbook: 1,024 licenses
    opt = compiled(OPT).bom
    assert qty(opt, category="software", part="ufm-enterprise") == 1024 + 2  # plus the two UFM hosts' HCAs


def test_roce_backend_needs_no_ufm(compiled) -> None:
    bom = compiled("h100-256", "backend.technology=roce", "backend.switch=SN5600").bom
    assert lines(bom, category="software") == []
    assert "backend_endpoints" not in bom.software


def test_opensm_needs_no_license(compiled) -> None:
    bom = compiled(REF, "software.subnet_manager=opensm").bom
    assert lines(bom, category="software") == []
    assert bom.by_category["software"] == 0


def test_cluster_manager_subscription_per_gpu_year(compiled) -> None:
    base = compiled(REF).bom
    bom = compiled(REF, "software.cluster_manager.term_years=3").bom
    (ln,) = lines(bom, part="base-command-manager")
    assert (ln.quantity, ln.unit, ln.unit_usd) == (1024 * 3, "GPU-year", 4500.0)
    assert bom.total_usd - base.total_usd == pytest.approx(1024 * 3 * 4500)


def test_wrong_license_unit_is_an_error() -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{REF}.yaml", ["software.ufm_license=storage-software"])
    assert exc.value.problems[0].field == "software.ufm_license"


# --------------------------------------------------------------------------------------- renderers


def test_bom_files(compiled, tmp_path: Path, cli) -> None:
    out = tmp_path / "out"
    r = cli("compile", DESIGNS / f"{REF}.yaml", "--out", out)
    assert r.exit_code == 0, r.output
    assert "cost: cluster total" in r.output
    data = json.loads((out / "bom.json").read_text())
    for key in ("total_usd", "per_server_usd", "per_gpu_usd", "per_server_excl_storage_usd", "by_category", "lines"):
        assert key in data
    for ln in data["lines"]:
        assert {"category", "part", "quantity", "unit_usd", "total_usd"} <= set(ln)
    rows = list(csv.DictReader(io.StringIO((out / "bom.csv").read_text())))
    assert len(rows) == len(data["lines"])
    for row, ln in zip(rows, data["lines"], strict=True):
        assert (row["category"], row["part"]) == (ln["category"], ln["part"])
        assert float(row["quantity"]) == ln["quantity"]
        assert float(row["total_usd"]) == pytest.approx(ln["total_usd"], abs=0.005)
    plan = json.loads((out / "plan.json").read_text())
    assert plan["bom"] == data  # the plan carries the same BoM, for compile and the Pulumi outputs


def test_bom_render_is_deterministic(compiled) -> None:
    plan = compiled(OPT)
    assert render_bom(plan) == render_bom(plan)
    again = compile_file(DESIGNS / f"{OPT}.yaml")[0]
    assert render_bom(again) == render_bom(plan)


def test_bom_from_plan_json_alone(compiled) -> None:
    """The BoM needs nothing but plan.json: rebuilt from the serialized plan it is identical."""
    from generators.model.plan import Plan, dumps

    plan = compiled(VMS)
    reread = Plan.from_dict(json.loads(dumps(plan)))
    reread.bom = None
    assert build_bom(reread) == plan.bom


def test_bom_html_is_self_contained(compiled) -> None:
    html = render_bom(compiled(REF))["bom.html"]
    assert "<svg" in html and "@media print" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<link" not in html and "<script" not in html
    for title in ("Compute servers", "Backend fabric", "Storage", "Software licenses"):
        assert title in html


@pytest.mark.browser
def test_bom_html_prints_in_a_real_browser(compiled, tmp_path: Path) -> None:
    from tests.realtools import chromium_print_pdf, pdf_page_count

    html = tmp_path / "bom.html"
    html.write_text(render_bom(compiled(REF))["bom.html"], encoding="utf-8")
    pdf = chromium_print_pdf(html, tmp_path / "bom.pdf")
    assert pdf_page_count(pdf) >= 2


# ------------------------------------------------------------------- cross-check with the cable plan

CAGE = re.compile(r"^(1/\d+)/\d+$")  # QM9700 twin-port cages: 1/<cage>/<port>; other ports are their own cage


@pytest.mark.parametrize("name", [REF, TOR, VMS, OPT])
def test_bom_quantities_equal_plan_json_and_cables_csv(name: str, tmp_path: Path, cli) -> None:
    """Read the written files, not the objects: switches from plan.json's devices, transceivers from
    cables.csv (one per cage: both ports of a twin-port OSFP cage share one), cables from plan.json's
    cable list and, for fiber, cables.csv's rows (one fiber per link)."""
    out = tmp_path / name
    r = cli("compile", DESIGNS / f"{name}.yaml", "--out", out, "-q")
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text())
    bom = json.loads((out / "bom.json").read_text())
    rows = list(csv.DictReader((out / "cabling" / "cables.csv").open()))
    assert len(rows) == len(plan["links"])

    def bom_count(kind: str) -> Counter:
        return Counter({(ln["category"], ln["part"]): ln["quantity"] for ln in bom["lines"] if ln["kind"] == kind})

    switches = Counter((d["network"], d["model"]) for d in plan["devices"] if d["kind"] == "switch")
    assert bom_count("switch") == switches

    cages: dict[tuple[str, str], str] = {}
    for row in rows:
        for end in "ab":
            part = row[f"{end}_transceiver"]
            if part:
                m = CAGE.match(row[f"{end}_port"])
                cages[(row[f"{end}_device"], m.group(1) if m else row[f"{end}_port"])] = f"{row['network']}|{part}"
    xcvrs = Counter(tuple(v.split("|")) for v in cages.values())
    assert bom_count("transceiver") == xcvrs
    assert sum(xcvrs.values()) == sum(plan["cabling"]["transceiver_parts"].values())

    cables = Counter((c["network"], sku) for c in plan["cables"] for sku in c["parts"][: c["physical"]])
    assert bom_count("cable") == cables
    fibers = Counter((row["network"], row["part"]) for row in rows if row["media"] in ("mmf", "smf"))
    assert fibers == Counter({k: v for k, v in cables.items() if k[1] in {p for _, p in fibers}})
    per_sku: Counter[str] = Counter()
    for (_, sku), n in cables.items():
        per_sku[sku] += n
    assert Counter(plan["cabling"]["cable_parts"]) == per_sku


def test_backend_media_follow_the_playbook(compiled) -> None:
    """What the backend percentages rest on: the reference is all optical, top-of-rack puts server-leaf
    links on DAC splitters, the virtual modular switch puts leaf-spine links on twin-port copper, 2:1
    halves the spines and the leaf-spine links."""
    ref, tor, vms, opt = (compiled(n).bom for n in (REF, TOR, VMS, OPT))
    assert qty(ref, category="backend", kind="transceiver") == 1024 + 512 + 512 + 512  # NIC, leaf down, leaf up, spine
    assert qty(tor, category="backend", part="MMA4Z00-NS400") == 0
    assert sum(ln.quantity for ln in lines(tor, category="backend") if ln.part.startswith("MCP7Y00")) == 512
    assert qty(vms, category="backend", part="MMA4Z00-NS") == 512  # only the leaves' server-facing cages
    assert sum(ln.quantity for ln in lines(vms, category="backend") if ln.part.startswith("MCP4Y10")) == 512
    assert qty(opt, category="backend", part="QM9700") == 40 == qty(ref, category="backend", part="QM9700") - 8
    assert sum(ln.quantity for ln in lines(opt, category="backend") if ln.part.startswith("MCP4Y10")) == 256


@pytest.mark.parametrize(
    ("design", "switch"),
    [("b300-xdr", "Q3450-LD"), ("vr-nvl72-576", "SN6800-CL")],
)
def test_cpo_switch_laser_modules_are_frus_in_the_bom_and_in_the_rack_power(compiled, design: str, switch: str) -> None:
    """A co-packaged-optics switch: no transceiver bought for its ports, its external laser modules a BoM
    line of their own (modules per switch x switches, at the module's price), their draw in its rack's."""
    from generators.model.geometry import device_size

    plan = compiled(design, f"backend.switch={switch}")
    sw = plan.catalog.switches[switch]
    assert sw.lasers is not None
    boxes = [d for d in plan.devices if d.network == "backend" and d.kind == "switch"]
    assert boxes and {d.model for d in boxes} == {switch}
    lines = {ln.part: ln for ln in plan.bom.lines if ln.category == "backend"}
    assert lines[switch].quantity == len(boxes)
    els = lines[sw.lasers.sku]
    assert (els.kind, els.quantity, els.unit_usd) == ("laser", len(boxes) * sw.lasers.count, sw.lasers.price.usd)
    assert f"{sw.lasers.count} per {switch}, {sw.lasers.power_w:g} W each" in els.description
    # the switch side of every backend fiber is the switch's own optics: only the NICs' optics are bought
    hosts = sum(1 for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf")
    built_in = {k for k, x in plan.catalog.transceivers.items() if x.built_in}
    for c in plan.cables:
        if c.network == "backend":
            assert c.b_transceiver in built_in, c
    assert plan.cabling.transceivers["backend"] == hosts
    assert not built_in & {ln.part for ln in plan.bom.lines}
    # a switch draws its own power and its lasers'; its rack carries both
    kw = (sw.power_w + sw.lasers.count * sw.lasers.power_w) / 1000
    assert device_size(plan.catalog, boxes[0]) == (sw.rack_units, kw)
    rack = next(rk for rk in plan.racks if rk.name == boxes[0].rack)
    assert rack.power_kw >= kw * sum(d.rack == rack.name for d in boxes)
