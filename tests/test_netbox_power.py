"""NetBox power objects (issue 41 item 4): power panels and one power feed per circuit into a rack, in the
push's inventory and the bulk-import files (netbox/17-power-panels.csv, netbox/18-power-feeds.csv), counted
against the plan's own feeds: every PDU's whip (b300-xdr: three PDUs per rack, N+1 on feeds A, B, C), every
whip of a rack system's AC power shelf (vr-nvl72-576: two 100 A whips per shelf), and every (rack, sidecar)
pair of an 800 VDC site (vru-kyber-800vdc-1152), each at the voltage and current the plan gives it.
tests/test_netbox_power_import.py imports the same files into a real NetBox."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Callable

import pytest

from generators.model.plan import Plan, required
from generators.views.netbox_inventory import inventory
from tests.conftest import rendered_files

Compiled = Callable[..., Plan]
B300, KYBER, VR = "b300-xdr", "vru-kyber-800vdc-1152", "vr-nvl72-576"


def _rows(files: dict[str, str], path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files[path])))


def plan_feeds(plan: Plan) -> Counter[tuple[str, str]]:
    """(rack, supply) -> circuits the plan gives it: a PDU's whip, an AC shelf's whips, a sidecar's DC feed."""
    want: Counter[tuple[str, str]] = Counter()
    dc = plan.power is not None
    for d in plan.devices:
        if d.rack is None or d.kind != "pdu":
            continue
        if d.role == "pdu":
            want[(d.rack, "ac")] += 1
        elif d.role == "power-shelf" and not dc and plan.catalog.pdus[d.model].input_a is not None:
            want[(d.rack, "ac")] += plan.catalog.pdus[d.model].whips
    for rp in plan.power.racks if plan.power else []:
        want[(rp.rack, "dc")] += len(rp.sidecars)
    return want


@pytest.mark.parametrize("name", [B300, KYBER, VR])
def test_one_feed_per_circuit_of_the_plan(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    files = rendered_files(compiled, name)
    feeds = _rows(files, "netbox/18-power-feeds.csv")
    got = Counter((f["rack"], f["supply"]) for f in feeds)
    assert got == plan_feeds(plan) and sum(got.values()) > 0
    # the push writes the same objects the files hold
    objs = inventory(plan)
    assert sum(o.endpoint == "dcim/power-feeds" for o in objs) == len(feeds)
    panels = _rows(files, "netbox/17-power-panels.csv")
    assert sum(o.endpoint == "dcim/power-panels" for o in objs) == len(panels)
    # every feed's panel is in the panels file, in the feed's rack's row (its location)
    where = {p["name"]: p["location"] for p in panels}
    row = {r.name: r.row for r in plan.racks}
    assert all(where[f["power_panel"]] == f["location"] == row[f["rack"]] for f in feeds)
    assert len({(f["power_panel"], f["name"]) for f in feeds}) == len(feeds), "a feed's name is unique in its panel"


def test_b300_each_pdu_has_its_whip_on_its_feed(compiled: Compiled) -> None:
    plan = compiled(B300)
    feeds = {f["name"]: f for f in _rows(rendered_files(compiled, B300), "netbox/18-power-feeds.csv")}
    pdus = [d for d in plan.devices if d.role == "pdu"]
    assert set(feeds) == {d.name for d in pdus} and len(pdus) == 129
    part = plan.catalog.pdus[plan.design.site.rack.pdu]
    for d in pdus:
        f = feeds[d.name]
        row = next(r.row for r in plan.racks if r.name == d.rack)
        assert f["power_panel"] == f"{row}-{d.attrs['feed']}" and f["rack"] == d.rack
        assert (f["supply"], f["phase"], f["voltage"], f["amperage"]) == ("ac", "three-phase", "415", "60")
        assert f["type"] == ("primary" if d.attrs["feed"] == "A" else "redundant")
        # what NetBox calls the feed's available power, V x A x sqrt 3 x utilization, is the PDU's
        # continuous rating: 415 x 60 x 1.732 x 80 % = 34.5 kW
        available = 415 * 60 * math.sqrt(3) * int(f["max_utilization"]) / 100 / 1000
        assert available == pytest.approx(part.capacity_kw, rel=0.005)
    # N+1 on three feeds: three panels per row that holds racks
    panels = _rows(rendered_files(compiled, B300), "netbox/17-power-panels.csv")
    rows = {r.row for r in plan.racks}
    assert sorted(p["name"] for p in panels) == sorted(f"{r}-{x}" for r in rows for x in "ABC")


def test_vr_shelves_take_two_whips_each(compiled: Compiled) -> None:
    plan = compiled(VR)
    feeds = _rows(rendered_files(compiled, VR), "netbox/18-power-feeds.csv")
    shelves = [d for d in plan.devices if d.role == "power-shelf"]
    assert shelves
    shelf_feeds = {f["name"] for f in feeds if f["description"].endswith("(vr-power-shelf)")}
    assert shelf_feeds == {f"{d.name}-{w}" for d in shelves for w in "ab"}
    # two 415 V 100 A three-phase whips carry the 110 kW shelf at their utilization
    f = next(f for f in feeds if f["name"] in shelf_feeds)
    assert 2 * 415 * 100 * math.sqrt(3) * int(f["max_utilization"]) / 100 / 1000 == pytest.approx(110, rel=0.01)


def test_kyber_sidecars_are_panels_feeding_their_racks_on_800vdc(compiled: Compiled) -> None:
    plan = compiled(KYBER)
    power = required(plan.power, "power")
    files = rendered_files(compiled, KYBER)
    panels = {p["name"]: p for p in _rows(files, "netbox/17-power-panels.csv")}
    assert {c.name for c in power.sidecars} <= set(panels)
    dc = [f for f in _rows(files, "netbox/18-power-feeds.csv") if f["supply"] == "dc"]
    assert len(dc) == sum(len(rp.sidecars) for rp in power.racks) == sum(len(c.serves) for c in power.sidecars) > 0
    by_rack = {rp.rack: rp for rp in power.racks}
    for f in dc:
        rp = by_rack[f["rack"]]
        assert f["power_panel"] in rp.sidecars
        assert (f["phase"], int(f["voltage"]), int(f["amperage"])) == ("single-phase", 800, math.ceil(rp.feed_a))
        # the feed carries the rack's draw: I x V >= P
        assert int(f["amperage"]) * int(f["voltage"]) >= rp.kw * 1000
    # its switch and storage racks stay on AC PDUs
    assert any(f["supply"] == "ac" for f in _rows(files, "netbox/18-power-feeds.csv"))
