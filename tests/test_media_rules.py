"""Per-speed media rules in the catalog (media_rules): an XDR fabric (800G InfiniBand, 200G per lane) gets
single-mode optics and linear active copper only, whatever cheaper parts the catalog holds; a passive-copper
length cap moves longer runs to other media; a rule that leaves no part says which rule and which media."""

from __future__ import annotations

import csv
import functools
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.catalog import DEFAULT_CATALOG, Catalog, load_catalog
from generators.model.design import Design
from generators.model.errors import DesignError
from generators.model.ports import End
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
            "fits": ["osfp", "osfp-rhs"],  # the switch's finned cage and the ConnectX-8's flat-top one
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
            "b_end": {"fits": ["osfp", "osfp-rhs"], "ports": b_ports},
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
        ({"media": ["smf"], "max_copper_flat_m": 1.1}, "neither dac nor acc is among the allowed media"),
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


# --- XDR LinkX media: what LinkX sells, the module forms and their copper limits (issue #39 item 3) ------

# A Quantum-X800 twin-port cage (finned, IHS) and a ConnectX-8 cage (flat-top, RHS) at XDR 800G
Q3400_CAGE = End("osfp", 1, 2, 800, "infiniband", lane_gbps=200)
CX8_CAGE = End("osfp-rhs", 1, 1, 800, "infiniband", lane_gbps=200)
RHS_TWIN = End("osfp-rhs", 1, 2, 800, "infiniband", lane_gbps=200)  # a liquid-cooled switch's twin cage


@functools.cache
def small_design() -> Design:
    return compile_file(SMALL, [])[0].design  # the chooser reads only its cabling knobs (defaults here)


def xdr_chooser(catalog: Catalog | None = None) -> Chooser:
    return Chooser(catalog or load_catalog(), small_design())


def test_xdr_copper_splitter_is_stocked_only_to_the_lengths_linkx_sells() -> None:
    """NVIDIA's LinkX XDR copper is linear active copper only, the splitter (switch to two ConnectX-8) sold
    to 2 m (https://docs.nvidia.com/networking/display/800g200gpam4list; shared/reference/tooling-notes.md):
    no stocked length past 2 m, and a 2.5 m run takes single-mode optics instead."""
    cat = load_catalog()
    splitter = cat.cables["xdr-lacc-splitter"]
    assert max(s.m for s in splitter.lengths) <= 2 and splitter.reach_m <= 2
    ch = xdr_chooser(cat).choose("split-a", Q3400_CAGE, CX8_CAGE, 800, "infiniband", False, [2.5, 2.5], 1, 2)
    assert ch is not None and ch.option.media == "smf", ch
    ch = xdr_chooser(cat).choose("split-a", Q3400_CAGE, CX8_CAGE, 800, "infiniband", False, [1.9, 1.9], 1, 2)
    assert ch is not None and ch.option.cable == "xdr-lacc-splitter" and ch.lengths == [2, 2]


def test_top_of_rack_xdr_with_slack_takes_no_splitter_longer_than_linkx_sells(compiled) -> None:
    """The issue's case: a top-of-rack XDR fabric with 1.5 m of in-rack slack picked 256 illegal 2.5 m
    splitters; now the runs past 2 m are single-mode, the rest 2 m splitters at most."""
    over = (*XDR, "backend.servers_per_leaf=4", "site.rack.power_kw=80", "site.slack.direct_m=1.5")
    plan = compiled("h100-1024-tor", *over)
    backend = [c for c in plan.cables or [] if c.network == "backend"]
    splitters = [c for c in backend if c.catalog == "xdr-lacc-splitter"]
    assert splitters and max(max(c.length_m) for c in splitters) <= 2
    # the runs past 2 m within a rack took optics
    assert any(c.media == "smf" and c.shape.startswith("split") and c.route[0] == "rack" for c in backend)


def test_module_forms_are_a_catalog_fact() -> None:
    cat = load_catalog()
    assert cat.cage_forms["osfp"].top == "finned" and cat.cage_forms["osfp-rhs"].top == "flat"
    assert cat.nics["cx8-800g-osfp"].connector == "osfp-rhs"  # ConnectX-8: RHS, flat-top plugs
    assert {g.connector for g in cat.switches["Q3400"].port_groups} == {"osfp"}  # air-cooled: IHS, finned
    # the NIC-side XDR optic is flat-top, the switch-side twin finned: each fits only its own cage form
    assert cat.transceivers["OSFP-800G-DR4"].fits == ["osfp-rhs"] and cat.transceivers["MMS4A00-XM"].fits == ["osfp"]
    assert cat.cables["xdr-lacc-splitter"].b_end is not None
    assert cat.cables["xdr-lacc-splitter"].b_end.fits == ["osfp-rhs"]


def test_copper_between_two_flat_top_ends_stops_at_1_1_m() -> None:
    """XDR copper between two flat-top (RHS) cages, e.g. a ConnectX-8 on a liquid-cooled switch, only to
    1.1 m: give the splitter and the twin optic RHS twin ends (NVIDIA's -FLT convention) and the chooser takes
    the splitter at 1 m, but
    at 1.5 m optics, while the same 1.5 m from a finned switch cage stays copper."""
    data = catalog_data()
    data["cables"]["xdr-lacc-splitter"]["a_end"]["fits"] = ["osfp", "osfp-rhs"]
    data["transceivers"]["MMS4A00-XM"]["fits"] = ["osfp", "osfp-rhs"]  # and a flat-top twin optic
    cat = Catalog.model_validate(data)
    rule = cat.media_rules["xdr-800g"]
    assert rule.max_copper_flat_m == 1.1
    ch = xdr_chooser(cat).choose("split-a", RHS_TWIN, CX8_CAGE, 800, "infiniband", False, [0.9, 0.9], 1, 2)
    assert ch is not None and ch.option.media == "acc" and ch.lengths == [1, 1]
    ch = xdr_chooser(cat).choose("split-a", RHS_TWIN, CX8_CAGE, 800, "infiniband", False, [1.2, 1.2], 1, 2)
    assert ch is not None and ch.option.media == "smf"
    ch = xdr_chooser(cat).choose("split-a", Q3400_CAGE, CX8_CAGE, 800, "infiniband", False, [1.2, 1.2], 1, 2)
    assert ch is not None and ch.option.media == "acc" and ch.lengths == [1.5, 1.5]
    assert not rule.allows("acc", 1.5, flat_both=True) and rule.allows("acc", 1.5, flat_both=False)


def test_xdr_single_mode_reaches_500_m() -> None:
    """XDR DR4 optics reach 500 m on single-mode fiber (MMS4A00-XM, OSFP-800G-DR4): a 450 m run from a
    Quantum-X800 to a ConnectX-8 gets optics and a fiber that reaches, not a refusal at 150 m."""
    ch = xdr_chooser().choose("split-a", Q3400_CAGE, CX8_CAGE, 800, "infiniband", False, [450.0, 450.0], 1, 2)
    assert ch is not None and ch.option.media == "smf" and ch.option.reach_m >= 500 and min(ch.lengths) >= 450
    twin = End("osfp", 2, 2, 800, "infiniband", lane_gbps=200)
    ch = xdr_chooser().choose("straight", Q3400_CAGE, twin, 800, "infiniband", True, [480.0, 480.0], 1, 1)
    assert ch is not None and ch.option.media == "smf" and ch.option.reach_m >= 500
