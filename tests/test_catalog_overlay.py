"""Per-design catalog overlays (issue #14): a design's `catalog:` adds parts and re-prices shipped ones
for that design only; designs/catalog.yaml is never touched, and a bad override is refused at its line."""

from __future__ import annotations

import hashlib
import json
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.catalog import DEFAULT_CATALOG, Catalog, load_catalog
from generators.model.design import CatalogOverlay
from generators.model.plan import Plan
from generators.renderers import render_all
from generators.stages.bom import plan_bom
from tests.conftest import DESIGNS, ROOT

SITE = ROOT / "tests" / "designs" / "site-overlay.yaml"
SITE_YAML: dict[str, Any] = yaml.safe_load(SITE.read_text())
NEW_SWITCH = "QM9700-site"
REPRICED = "pdu-415v-60a-3ph"


@pytest.fixture(autouse=True)
def shipped_catalog_untouched() -> Iterator[None]:
    before = hashlib.sha256(DEFAULT_CATALOG.read_bytes()).hexdigest()
    yield
    assert hashlib.sha256(DEFAULT_CATALOG.read_bytes()).hexdigest() == before, "designs/catalog.yaml changed"


@pytest.fixture(scope="module")
def site() -> Plan:
    return compile_file(SITE)[0]


def _line(plan: Plan, part: str) -> Any:
    (line,) = [ln for ln in plan_bom(plan).lines if ln.part == part]
    return line


def _line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def test_overlay_reprices_a_shipped_part(site: Plan, compiled: Callable[..., Plan]) -> None:
    base = compiled("h100-256")
    want = SITE_YAML["catalog"]["pdus"][REPRICED]["price"]
    old, new = _line(base, REPRICED), _line(site, REPRICED)
    assert new.quantity == old.quantity
    assert (new.unit_usd, new.source, new.date) == (want["usd"], want["source"], want["date"])
    assert new.total_usd == pytest.approx(new.quantity * want["usd"])
    # only the price was overridden: the rest of the part is the shipped catalog's
    shipped = load_catalog().pdus[REPRICED]
    assert site.catalog.pdus[REPRICED].model_dump(exclude={"price"}) == shipped.model_dump(exclude={"price"})


def test_overlay_adds_a_part_the_design_selects(site: Plan, compiled: Callable[..., Plan]) -> None:
    assert NEW_SWITCH not in load_catalog().switches
    backend = [d for d in site.devices if d.network == "backend" and d.kind == "switch"]
    assert backend and {d.model for d in backend} == {NEW_SWITCH}
    want = SITE_YAML["catalog"]["switches"][NEW_SWITCH]
    line = _line(site, NEW_SWITCH)
    assert (line.sku, line.unit_usd, line.source) == (want["sku"], want["price"]["usd"], want["price"]["source"])
    assert line.quantity == len(backend)
    # the same fabric as the design it extends: same devices and cables, only the model differs
    base = compiled("h100-256")
    assert [d.name for d in site.devices] == [d.name for d in base.devices]
    assert [c.id for c in site.cables or []] == [c.id for c in base.cables or []]
    files = render_all(site)
    assert NEW_SWITCH in files["netbox/07-device-types.yaml"]
    # plan.json records the overlay as written and the merged catalog the plan was priced with
    doc = json.loads(files["plan.json"])
    assert doc["design"]["catalog"]["switches"][NEW_SWITCH]["sku"] == want["sku"]
    assert doc["catalog"]["switches"][NEW_SWITCH]["price"]["source"] == want["price"]["source"]
    assert Plan.from_dict(doc).catalog == site.catalog


def test_a_design_without_overlay_records_none(compiled: Callable[..., Plan]) -> None:
    assert "catalog" not in compiled("h100-256").to_dict()["design"]


def test_set_reprices_like_any_override_and_says_it_has_no_source(compiled: Callable[..., Plan]) -> None:
    base = compiled("h100-256")
    what_if = compiled("h100-256", "catalog.switches.QM9700.price.usd=21000")
    old, new = _line(base, "QM9700"), _line(what_if, "QM9700")
    assert new.unit_usd == 21000 and new.quantity == old.quantity
    # the BoM never shows the new figure under the old figure's source
    assert new.source.startswith("--set catalog.switches.QM9700.price.usd=21000: no source given")
    assert old.source in new.source


def test_child_overlay_merges_over_parent_overlay(tmp_path: Path, site: Plan) -> None:
    child = tmp_path / "child.yaml"
    child.write_text(
        f"extends: {SITE}\nname: child\ncatalog:\n  switches:\n    {NEW_SWITCH}:\n"
        "      power_w: 1800\n      price: {usd: 23900, source: renegotiated, date: 2026-12}\n"
    )
    plan = compile_file(child)[0]
    sw, parent = plan.catalog.switches[NEW_SWITCH], site.catalog.switches[NEW_SWITCH]
    assert (sw.power_w, sw.price.usd, sw.price.source) == (1800, 23900, "renegotiated")
    assert sw.model_dump(exclude={"power_w", "price"}) == parent.model_dump(exclude={"power_w", "price"})
    assert plan.catalog.pdus[REPRICED] == site.catalog.pdus[REPRICED]  # the parent's other override stays
    assert _line(plan, NEW_SWITCH).unit_usd == 23900


def test_overlay_merges_over_the_catalog_option(tmp_path: Path) -> None:
    data = yaml.safe_load(DEFAULT_CATALOG.read_text())
    data["pdus"][REPRICED]["capacity_kw"] = 30.0
    mine = tmp_path / "catalog.yaml"
    mine.write_text(yaml.safe_dump(data))
    plan = compile_file(SITE, None, mine)[0]
    pdu = plan.catalog.pdus[REPRICED]
    assert pdu.capacity_kw == 30.0  # from --catalog
    assert pdu.price.usd == SITE_YAML["catalog"]["pdus"][REPRICED]["price"]["usd"]  # from the overlay


def test_diff_lists_the_overlay_with_the_catalogs_value(cli: Callable[..., Any]) -> None:
    old = load_catalog().pdus[REPRICED].price
    want = SITE_YAML["catalog"]["pdus"][REPRICED]["price"]
    r = cli("diff", DESIGNS / "h100-256.yaml", SITE)
    assert r.exit_code == 0, r.stderr
    changes = r.stdout.split("## Design changes", 1)[1].split("\n## ", 1)[0]
    assert f"`catalog.pdus.{REPRICED}.price.usd`: `{old.usd}` → `{float(want['usd'])}`" in changes
    assert f'`catalog.pdus.{REPRICED}.price.source`: `{json.dumps(old.source)}` → `"{want["source"]}"`' in changes
    sku = SITE_YAML["catalog"]["switches"][NEW_SWITCH]["sku"]
    assert f'`catalog.switches.{NEW_SWITCH}.sku`: `null` → `"{sku}"`' in changes
    assert f"`{REPRICED}`" in r.stdout.split("### Bill-of-materials lines that changed", 1)[1]


BAD = [  # (overlay lines under `catalog:`, the line to point at, field, words of the message and fix)
    (
        "  switches:\n    QM9700:\n      price: {usd: lots}\n",
        "price:",
        "catalog.switches.QM9700.price.usd",
        ["valid number"],
    ),
    (
        "  switches:\n    QM9700:\n      power_ww: 1800\n",
        "power_ww",
        "catalog.switches.QM9700.power_ww",
        ["unknown field", "did you mean 'power_w'?"],
    ),
    (
        "  switches:\n    QM9800: {vendor: NVIDIA, rack_units: 1}\n",
        "QM9800:",
        "catalog.switches.QM9800",
        ["a new part lacks sku", "price", "must be complete", "did you mean 'QM9700'?"],
    ),
    ("  swiches: {QM9700: {power_w: 1}}\n", "swiches", "catalog.swiches", ["unknown field", "'switches'"]),
    ("  switches:\n    QM9700:\n      os: junos\n", "os:", "catalog.switches.QM9700.os", ["no renderer", "mlnx-os"]),
    (
        "  switches:\n    QM9700:\n      price: {date: 2026-11-05}\n",
        "price:",
        "catalog.switches.QM9700.price.date",
        ['quote it: "2026-11-05"'],
    ),
    (
        "  switches:\n    QM9700:\n      port_groups: [{count: 64, connector: osfp}]\n",
        "port_groups",
        "catalog.switches.QM9700.port_groups.0.speed_gbps",
        ["Field required", "replaces a list", "complete"],
    ),
    (
        '  switches:\n    QM9700:\n      port_groups: [{count: 64, speed_gbps: 400, connector: osfp, name: "{x}"}]\n',
        "port_groups",
        "catalog.switches.QM9700.port_groups.0.name",
        ["not a name pattern", "KeyError('x')"],
    ),
    (
        "  switches:\n    QM9700:\n      port_groups: [{count: 64, speed_gbps: 400, connector: osfp, name: p}]\n",
        "port_groups",
        "catalog.switches.QM9700.port_groups",
        ["two ports are named 'p'", "{n}"],
    ),
    (
        "  servers:\n    hgx-h100:\n      backend: {nic: cx9}\n",
        "backend:",
        "catalog.servers.hgx-h100.backend.nic",
        ["unknown NIC 'cx9'"],
    ),
]


@pytest.mark.parametrize(("overlay", "at", "field", "words"), BAD, ids=[b[2] for b in BAD])
def test_bad_override_is_refused_at_its_line(
    cli: Callable[..., Any], tmp_path: Path, overlay: str, at: str, field: str, words: list[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"extends: {DESIGNS / 'h100-256.yaml'}\nname: bad\ncatalog:\n{overlay}")
    r = cli("validate", bad)
    assert r.exit_code == 2
    assert f"bad.yaml:{_line_of(bad, at)}: {field}: " in r.stderr, r.stderr
    assert all(w in r.stderr for w in words), r.stderr
    assert "Traceback" not in r.output + r.stderr


def test_bad_set_override_names_the_option(cli: Callable[..., Any]) -> None:
    r = cli("validate", DESIGNS / "h100-256.yaml", "--set", "catalog.nics.cx7-400g-osfp.ports=many")
    assert r.exit_code == 2
    assert "--set catalog.nics.cx7-400g-osfp.ports=many: catalog.nics.cx7-400g-osfp.ports: " in r.stderr


def test_set_that_replaces_a_list_is_reported_at_the_option(cli: Callable[..., Any]) -> None:
    # the design file's lines inside the list --set replaced must not be blamed
    item = (
        f"catalog.switches.{NEW_SWITCH}.port_groups=[{{count: 64, speed_gbps: 400, connector: osfp, "
        "ports_per_cage: 2, name: p}]"
    )
    r = cli("validate", SITE, "--set", item)
    assert r.exit_code == 2
    assert f": catalog.switches.{NEW_SWITCH}.port_groups: two ports are named 'p'" in r.stderr, r.stderr
    assert "--set catalog.switches" in r.stderr and f"{SITE.name}:" not in r.stderr


def test_overlay_tables_are_the_catalogs_tables() -> None:
    tables = [k for k, f in Catalog.model_fields.items() if typing.get_origin(f.annotation) is dict]
    assert sorted(CatalogOverlay.model_fields) == sorted(tables)


def test_schema_describes_catalog_with_the_shipped_keys(cli: Callable[..., Any]) -> None:
    # `railyard schema` is the catalog in use, not any design's overlay: a part a design adds is not in it
    doc = json.loads(cli("schema").stdout)
    assert set(doc["definitions"]["CatalogOverlay"]["properties"]) == set(CatalogOverlay.model_fields)
    assert "catalog" in doc["definitions"]["Design"]["properties"]
    enum = doc["definitions"]["Backend"]["properties"]["switch"]["enum"]
    assert "QM9700" in enum and NEW_SWITCH not in enum
