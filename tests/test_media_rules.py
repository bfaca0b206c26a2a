"""Per-speed media rules in the catalog (media_rules): an XDR fabric (800G InfiniBand, 200G per lane) gets
single-mode optics and linear active copper only, whatever cheaper parts the catalog holds; a passive-copper
length cap moves longer runs to other media; a rule that leaves no part says which rule and which media."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.catalog import DEFAULT_CATALOG, load_catalog
from generators.model.errors import DesignError
from generators.renderers import render_all
from generators.stages.cabling import Chooser
from tests.conftest import DESIGNS, rendered_files

# The h100-256 design on the catalog's XDR parts: Quantum-X800 leaves and spines, HGX B300 with eight
# ConnectX-8 at 800G. The management nodes' ConnectX-7 cannot run 800G, so they stay off the backend.
XDR = ("backend.switch=Q3400", "compute.server=hgx-b300", "management.backend_attached=0")
SMALL = DESIGNS / "h100-256.yaml"


def backend_rows(files: dict[str, str]) -> list[dict[str, str]]:
    return [r for r in csv.DictReader(io.StringIO(files["cabling/cables.csv"])) if r["network"] == "backend"]


def catalog_data() -> dict[str, Any]:
    return yaml.safe_load(DEFAULT_CATALOG.read_text(encoding="utf-8"))


def write_catalog(tmp_path: Path, data: dict[str, Any]) -> Path:
    p = tmp_path / "catalog.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return p


def compiled_rows(catalog: Path, *overrides: str) -> list[dict[str, str]]:
    plan = compile_file(SMALL, list(overrides), catalog)[0]
    return backend_rows(render_all(plan))


def test_xdr_fabric_cables_keep_to_the_xdr_rule(compiled) -> None:
    catalog = load_catalog()
    plan = compiled("h100-256", *XDR)
    assert {lk.speed_gbps for lk in plan.links if lk.network == "backend"} == {800}
    _, rule = catalog.media_rule(800, 200, "infiniband") or (None, None)
    assert rule is not None and set(rule.media) == {"smf", "acc"}
    rows = backend_rows(rendered_files(compiled, "h100-256", *XDR))
    assert len(rows) == sum(1 for lk in plan.links if lk.network == "backend")
    parts = {s.sku: c for c in catalog.cables.values() for s in c.lengths}
    for r in rows:
        assert r["media"] in rule.media, r
        assert parts[r["part"]].media == r["media"]
        if r["media"] == "smf":  # both ends single-mode optics that run XDR
            for x in (r["a_transceiver"], r["b_transceiver"]):
                assert catalog.transceivers[x].media == "smf" and 800 in catalog.transceivers[x].speeds_gbps
        else:  # linear active copper: a direct cable, no optics
            assert not r["a_transceiver"] and not r["b_transceiver"]
    by_tier = {(r["tier"], r["media"]) for r in rows}
    assert ("server-leaf", "smf") in by_tier and ("leaf-spine", "acc") in by_tier


def test_xdr_rule_wins_over_cheaper_multimode_and_passive_copper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Give the catalog 800G multimode optics and passive copper far cheaper than the XDR parts: without
    the rule the chooser takes them, with it not one backend cable is mmf or dac."""
    data = catalog_data()
    est = {"source": "estimate: test part", "date": "2026-12"}
    for key, ports in (("TEST-2X800-SR8", 2), ("TEST-800-SR4", 1)):
        data["transceivers"][key] = {
            "description": "test 800G multimode",
            "fits": ["osfp"],
            "ports": ports,
            "protocols": ["infiniband"],
            "speeds_gbps": [800],
            "media": "mmf",
            "fiber_connector": "mpo12-apc",
            "reach_m": 50,
            "power_w": 10,
            "price": {"usd": 50, **est},
        }
    data["cables"]["ndr-mmf-mpo"]["speeds_gbps"].append(800)
    for key, legs, b_ports in (("test-xdr-dac-twin", 1, 2), ("test-xdr-dac-splitter", 2, 1)):
        data["cables"][key] = {
            "description": "test 800G passive copper",
            "media": "dac",
            "kind": "direct",
            "protocols": ["infiniband"],
            "speeds_gbps": [800],
            "reach_m": 5,
            "diameter_mm": 6.0,
            "a_end": {"fits": ["osfp"], "ports": 2},
            "b_end": {"fits": ["osfp"], "ports": b_ports},
            "legs": legs,
            "lengths": [{"m": m, "sku": f"{key}-{m}", "price": {"usd": 10, **est}} for m in (1, 2, 3, 4, 5)],
        }
    ruled = compiled_rows(write_catalog(tmp_path, data), *XDR)
    assert {r["media"] for r in ruled} <= {"smf", "acc"}
    with monkeypatch.context() as m:  # a chooser that ignores the rule is caught by the separate check
        m.setattr(Chooser, "within_rule", lambda *_: True)
        with pytest.raises(DesignError) as exc:
            compile_file(SMALL, list(XDR), write_catalog(tmp_path, data))
        assert exc.value.problems[0].field == "media_rules.xdr-800g"
        assert "railyard bug" in exc.value.problems[0].hint
    data.pop("media_rules")
    free = compiled_rows(write_catalog(tmp_path, data), *XDR)
    assert {"mmf", "dac"} <= {r["media"] for r in free}


def ndr_rule(media: list[str], max_dac_m: float | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "description": "test NDR rule",
        "protocols": ["infiniband"],
        "lane_gbps": [100],
        "media": media,
        "source": "test",
        "date": "2026-12",
    }
    if max_dac_m is not None:
        rule["max_dac_m"] = max_dac_m
    return rule


def test_passive_copper_cap_moves_longer_runs_off_dac(compiled, tmp_path: Path) -> None:
    before = backend_rows(rendered_files(compiled, "h100-256"))
    long_dac = [r for r in before if r["media"] == "dac" and float(r["length_m"]) > 1]
    assert long_dac, "h100-256 has no passive copper longer than 1 m to move; pick another cap"
    data = catalog_data()
    data["media_rules"]["ndr-test"] = ndr_rule(["dac", "acc", "mmf", "smf"], max_dac_m=1)
    after = {r["cable_id"] + r["label"]: r for r in compiled_rows(write_catalog(tmp_path, data))}
    assert all(float(r["length_m"]) <= 1 for r in after.values() if r["media"] == "dac")
    for r in long_dac:  # the same link, now on active copper or optics
        assert after[r["cable_id"] + r["label"]]["media"] in {"acc", "mmf", "smf"}


def test_rule_that_leaves_no_part_names_the_rule_and_what_it_excluded(tmp_path: Path) -> None:
    data = catalog_data()
    data["media_rules"]["ndr-test"] = ndr_rule(["aoc"])  # the catalog has no NDR AOC
    with pytest.raises(DesignError) as exc:
        compile_file(SMALL, [], write_catalog(tmp_path, data))
    p = exc.value.problems[0]
    assert p.field == "media_rules.ndr-test"
    assert "ndr-test" in p.message and "mmf (ndr-mmf-mpo)" in p.message
    assert "add a catalog part of an allowed medium (aoc)" in p.hint


def test_rule_and_knobs_together_are_both_named(tmp_path: Path) -> None:
    data = catalog_data()
    data["media_rules"]["ndr-test"] = ndr_rule(["mmf", "smf"])
    with pytest.raises(DesignError) as exc:
        compile_file(SMALL, ["cabling.forbidden_media=[smf, mmf]"], write_catalog(tmp_path, data))
    p = exc.value.problems[0]
    assert p.field == "cabling.forbidden_media"  # lifting the knobs alone finds parts the rule allows


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        ({"media": ["acc"], "max_dac_m": 1}, "dac is not among the allowed media"),
        ({"media": ["plasma"]}, "media"),
    ],
)
def test_bad_rules_are_refused_with_the_field(tmp_path: Path, rule: dict[str, Any], words: str) -> None:
    data = catalog_data()
    data["media_rules"]["bad"] = {**ndr_rule(["smf"]), **rule}
    with pytest.raises(DesignError) as exc:
        load_catalog(write_catalog(tmp_path, data))
    p = exc.value.problems[0]
    assert p.field.startswith("media_rules.bad") and words in p.message + p.field


def test_two_rules_for_one_speed_are_refused(tmp_path: Path) -> None:
    data = catalog_data()
    data["media_rules"]["again"] = {**data["media_rules"]["xdr-800g"]}
    with pytest.raises(DesignError) as exc:
        load_catalog(write_catalog(tmp_path, data))
    assert "one rule per speed, lane rate and protocol" in exc.value.problems[0].message


# ConnectX-8 run at 400G: XDR on two of its four 200G lanes (a design overlay, as a site would write it)
XDR_400 = (
    *XDR,
    "catalog.nics.cx8-800g-osfp.speed_gbps=400",
    "catalog.nics.cx8-800g-osfp.lanes=2",
    "catalog.nics.cx8-800g-osfp.speeds_gbps=[]",
)


def test_xdr_at_400g_keeps_to_the_xdr_rule_by_lane_rate(compiled) -> None:
    """400G on an XDR fabric is 2 x 200G lanes: the XDR rule and XDR parts govern it, not NDR's 400G parts
    (4 x 100G), although the speed is NDR's."""
    catalog = load_catalog()
    plan = compiled("h100-256", *XDR_400)
    assert {lk.speed_gbps for lk in plan.links if lk.network == "backend"} == {400}
    key, rule = catalog.media_rule(400, 200, "infiniband") or (None, None)
    assert key is not None and rule is not None
    rows = backend_rows(rendered_files(compiled, "h100-256", *XDR_400))
    assert rows and {r["media"] for r in rows} <= set(rule.media)
    for r in rows:
        for x in (r["a_transceiver"], r["b_transceiver"]):
            if x:  # an XDR optic: it runs 200G lanes
                assert 200 in catalog.transceivers[x].lane_gbps, r
        cable = next(c for c in catalog.cables.values() if r["part"] in {s.sku for s in c.lengths})
        assert not cable.lane_gbps or 200 in cable.lane_gbps, r


def test_ndr_at_400g_is_not_governed_by_the_xdr_rule(compiled) -> None:
    """The same speed on NDR's 100G lanes: no rule applies, so the cheaper multimode optics stay."""
    assert load_catalog().media_rule(400, 100, "infiniband") is None
    rows = backend_rows(rendered_files(compiled, "h100-256"))
    assert "mmf" in {r["media"] for r in rows}
