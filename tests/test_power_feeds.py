"""Power feeds (issue #39 item 4): N PDUs per rack with 2N (A/B feeds) or N+1 redundancy
(site.rack.power_redundancy), NVIDIA's three PDUs per DGX B300 rack, counted in the plan, the BoM and the
sheets; wrong values exit 2 naming the field."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.model.plan import Plan
from tests.conftest import DESIGNS, rendered_files

B300 = "b300-xdr"


def test_b300_racks_have_three_pdus_n_plus_1(compiled: Callable[..., Plan]) -> None:
    """NVIDIA's DGX SuperPOD B300 XDR RA: "72 x NVIDIA DGX B300 PS systems in standard racks each with three
    (3) 2U rack PDUs for maximum redundancy", ~56 kW per rack
    (https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html)."""
    plan = compiled(B300)
    assert plan.design.site.rack.power_redundancy == "N+1"
    compute = [r for r in plan.racks if r.role == "compute"]
    assert compute and {r.pdus for r in compute} == {3}
    pdus = [d for d in plan.devices if d.kind == "pdu"]
    by_rack = Counter(d.rack for d in pdus)
    assert all(by_rack[r.name] == r.pdus for r in plan.racks)
    # N+1: each PDU a feed of its own, so the rack is carried with any one down
    one = compute[0].name
    assert sorted(d.name for d in pdus if d.rack == one) == [f"pdu-{one}-{f}1" for f in "abc"]
    assert {str(d.attrs["feed"]) for d in pdus if d.rack == one} == {"A", "B", "C"}
    cap = plan.catalog.pdus[plan.design.site.rack.pdu].capacity_kw
    assert all(r.power_kw <= (r.pdus - 1) * cap for r in plan.racks)
    # the BoM counts every PDU the racks hold
    assert plan.bom is not None
    bom = sum(ln.quantity for ln in plan.bom.lines if ln.kind == "pdu")
    assert bom == len(pdus) == sum(r.pdus for r in plan.racks)


def test_sheets_show_the_pdus_and_their_redundancy(compiled: Callable[..., Plan]) -> None:
    plan = compiled(B300)
    files = rendered_files(compiled, B300)
    rack = next(r for r in plan.racks if r.role == "compute")
    sheet = files[f"cabling/racks/{rack.name}.html"]
    assert f"{rack.power_kw} of {rack.power_budget_kw} kW &middot; 3 PDUs (N+1)" in sheet
    for f in "ABC":  # one cord per feed, each PDU its own feed
        assert f"feed {f}: PDU" in sheet
    floor = files["floor.svg"]
    assert f"{rack.name}: compute, {rack.power_kw:g} of {rack.power_budget_kw:g} kW, 3 PDUs N+1" in floor


def test_the_default_stays_2n(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    assert plan.design.site.rack.power_redundancy == "2N"
    feeds = {str(d.attrs["feed"]) for d in plan.devices if d.kind == "pdu"}
    assert feeds == {"A", "B"}


@pytest.mark.parametrize(
    ("sets", "field", "words"),
    [
        # three PDUs as 2N: feed B is one 34.5 kW PDU under a 58 kW rack (what railyard refused before)
        (["site.rack.power_redundancy=2N", "site.rack.pdus=3"], "site.rack.pdus", ["at least 4", "N+1"]),
        # two PDUs as N+1: one left with the other down
        (["site.rack.pdus=2"], "site.rack.pdus", ["(N+1)", "at least 3"]),
        (["site.rack.power_redundancy=N+2"], "site.rack.power_redundancy", ["2N", "N+1"]),
        (["site.rack.pdus=9"], "site.rack.pdus", ["1 to 8"]),
    ],
)
def test_bad_feeds_exit_2_naming_the_field(
    cli: Callable[..., Any], sets: list[str], field: str, words: list[str]
) -> None:
    args: list[str] = []
    for s in sets:
        args += ["--set", s]
    r = cli("validate", DESIGNS / f"{B300}.yaml", *args)
    assert r.exit_code == 2, r.stdout
    assert field in r.stderr and all(w in r.stderr for w in words), r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("n", [3, 4])
def test_three_or_four_pdus_carry_the_rack(cli: Callable[..., Any], n: int, tmp_path: Path) -> None:
    r = cli("validate", DESIGNS / f"{B300}.yaml", "--set", f"site.rack.pdus={n}")
    assert r.exit_code == 0, r.stderr
