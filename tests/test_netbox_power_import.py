"""The power panels and feeds files (netbox/17-power-panels.csv, 18-power-feeds.csv) imported into a real
NetBox 4.7 through its UI import pages, with the site, locations and racks they refer to (steps 02-04),
for an AC design (b300-xdr: three PDUs per rack, N+1) and an 800 VDC one (vru-kyber-800vdc-1152: power
sidecars on the floor); then every panel and feed read back through the REST API and counted against the
plan. Each design is compiled under a site name of its own (site.name), so both go into one NetBox.

Its own NetBox (module scope), as tests/test_netbox_csv_import.py has: an import into a NetBox that
already holds a site's names is refused."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from generators.model.plan import Plan
from generators.renderers.netbox_csv import STEPS
from tests.conftest import rendered_files
from tests.netbox_service import NetBox, installed, running_netbox
from tests.test_netbox_csv_import import Browser, _all, _errors
from tests.test_netbox_power import plan_feeds

pytestmark = pytest.mark.netbox
DESIGNS = {"b300-xdr": "pw-b300", "vru-kyber-800vdc-1152": "pw-kyber"}
STEP_FILES = ("02-sites", "03-locations", "04-racks", "17-power-panels", "18-power-feeds")


@pytest.fixture(scope="module")
def netbox_imported(compiled: Callable[..., Plan]) -> Iterator[tuple[NetBox, dict[str, dict[str, str]]]]:
    """A fresh NetBox with both designs' site, rows, racks, panels and feeds imported; -> (NetBox, files)."""
    inst = installed()
    with running_netbox(inst) as nb:
        ui = Browser(nb.url)
        ui.login(inst.username, inst.password)
        by_design = {}
        for name, site in DESIGNS.items():
            files = rendered_files(compiled, name, f"site.name={site}")
            by_design[name] = files
            for stem in STEP_FILES:
                step = next(s for s in STEPS if s.path == f"netbox/{stem}.csv")
                where, page = ui.post(step.page, {"data": files[step.path], "format": "csv", "csv_delimiter": ","})
                assert "modified_by_request" in where, f"{name} {step.path} refused by {step.page}: {_errors(page)}"
        yield nb, by_design


@pytest.mark.parametrize("name", list(DESIGNS))
def test_netbox_takes_the_power_panels_and_feeds(
    netbox_imported: tuple[NetBox, dict[str, dict[str, str]]], compiled: Callable[..., Plan], name: str
) -> None:
    nb, by_design = netbox_imported
    plan = compiled(name, f"site.name={DESIGNS[name]}")
    files = by_design[name]
    site = DESIGNS[name]
    panels = _all(nb, "dcim/power-panels", site=site)
    rows = list(csv.DictReader(io.StringIO(files["netbox/17-power-panels.csv"])))
    assert sorted((p["name"], p["location"]["name"]) for p in panels) == sorted(
        (r["name"], r["location"]) for r in rows
    )
    feeds = _all(nb, "dcim/power-feeds", site=site)
    # one feed per circuit the plan gives a rack, AC or DC
    got: Counter[tuple[str, str]] = Counter((f["rack"]["name"], f["supply"]["value"]) for f in feeds)
    assert got == plan_feeds(plan) and len(feeds) > 0
    # each feed as its row says, read back from NetBox
    want = {(r["power_panel"], r["name"]): r for r in csv.DictReader(io.StringIO(files["netbox/18-power-feeds.csv"]))}
    assert len(want) == len(feeds)
    for f in feeds:
        r = want[(f["power_panel"]["name"], f["name"])]
        assert (f["rack"]["name"], f["status"]["value"], f["type"]["value"]) == (r["rack"], "planned", r["type"])
        assert (f["supply"]["value"], f["phase"]["value"]) == (r["supply"], r["phase"])
        assert (f["voltage"], f["amperage"], f["max_utilization"]) == tuple(
            int(r[k]) for k in ("voltage", "amperage", "max_utilization")
        )
    if plan.power is not None:  # the 800 VDC racks: each sidecar a panel, each feed carrying its rack's draw
        kw = {rp.rack: rp.kw for rp in plan.power.racks}
        dc = [f for f in feeds if f["supply"]["value"] == "dc"]
        assert dc and all(f["voltage"] * f["amperage"] >= kw[f["rack"]["name"]] * 1000 for f in dc)
        assert {f["power_panel"]["name"] for f in dc} == {c.name for c in plan.power.sidecars}
    else:  # AC PDUs: V x A x sqrt 3 x utilization is the PDU's continuous rating
        cap = plan.catalog.pdus[plan.design.site.rack.pdu].capacity_kw * 1000
        for f in feeds:
            watts = f["voltage"] * f["amperage"] * math.sqrt(3) * f["max_utilization"] / 100
            assert f["phase"]["value"] == "three-phase" and watts == pytest.approx(cap, rel=0.005)
