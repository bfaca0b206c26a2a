"""The cable plan: media chosen by routed distance (not by strategy name), twin-port cages, reach,
stocked lengths, labels, tray fill, and the design knobs."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.geometry import BASE_MM, U_MM, rack_height_mm
from generators.model.plan import Plan
from generators.renderers.cabling import link_rows
from tests.conftest import COMPILED_EXAMPLES, DESIGNS

OPTICAL = {"mmf", "smf", "aoc"}
COPPER = {"dac", "acc"}


def media_by_tier(plan: Plan, network: str = "backend") -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for r in link_rows(plan):
        if r["network"] == network:
            out[r["tier"]][r["media"]] += 1
    return out


def test_reference_backend_is_all_optical(compiled) -> None:
    m = media_by_tier(compiled("h100-1024-reference"))
    assert set(m) == {"server-leaf", "leaf-spine"}
    for tier, media in m.items():
        assert set(media) <= OPTICAL - {"aoc"}, f"{tier}: {media}"
    assert sum(m["server-leaf"].values()) == 1024 and sum(m["leaf-spine"].values()) == 1024


def test_vms_leaf_spine_copper_and_server_leaf_optical(compiled) -> None:
    m = media_by_tier(compiled("h100-1024-vms"))
    assert set(m["leaf-spine"]) <= COPPER and sum(m["leaf-spine"].values()) == 1024
    assert set(m["server-leaf"]) <= OPTICAL and sum(m["server-leaf"].values()) == 1024


def test_tor_server_leaf_passive_copper(compiled) -> None:
    plan = compiled("h100-1024-tor")
    m = media_by_tier(plan)
    assert m["server-leaf"] == Counter({"dac": 1024})
    # one splitter from each twin-port leaf cage to two NICs of one server
    splits = [c for c in plan.cables if c.network == "backend" and c.media == "dac"]
    assert len(splits) == 512
    for c in splits:
        assert c.shape == "split-b" and c.catalog == "ndr-dac-splitter" and c.physical == 1
        a = {plan.links[k].a_device for k in c.links}
        assert len(a) == 1 and len(c.links) == 2


def test_spine_rack_at_the_end_of_the_row_turns_vms_leaf_spine_optical(compiled) -> None:
    """Same strategy name, different geometry: the media follow the measured routes."""
    plan = compiled("h100-1024-vms", "site.spine_rack_position=end")
    assert plan.design.backend.placement == "virtual_modular_switch"
    m = media_by_tier(plan)
    assert set(m["leaf-spine"]) <= OPTICAL and sum(m["leaf-spine"].values()) == 1024
    # and the reference with its spine rack moved between its leaf racks gets copper
    ref = compiled("h100-1024-reference", "site.spine_rack_position=middle")
    assert set(media_by_tier(ref)["leaf-spine"]) <= COPPER


@pytest.mark.parametrize("name", COMPILED_EXAMPLES)
def test_no_cable_longer_than_its_reach(compiled, name: str) -> None:
    plan = compiled(name)
    cat = plan.catalog
    n = 0
    for c in plan.cables:
        stock = {s.sku: s.m for s in cat.cables[c.catalog].lengths}
        reach = c.reach_m
        if c.a_transceiver:
            reach_x = min(cat.transceivers[c.a_transceiver].reach_m, cat.transceivers[c.b_transceiver].reach_m)
            assert reach <= reach_x
        assert reach <= cat.cables[c.catalog].reach_m
        one_cable = c.physical == 1  # a twin or splitter cable: one length for all its links
        for part, length, routed in zip(c.parts, c.length_m, c.routed_m, strict=True):
            assert stock[part] == length
            assert routed <= length <= reach, f"{c['id']} {c['labels']}: {routed} / {length} / {reach}"
            # rounded up to the next stocked length of the part, not beyond
            need = max(c.routed_m) if one_cable else routed
            assert length == min(m for m in stock.values() if m >= need)
            n += 1
    assert n == len(plan.links)


def test_every_link_has_exactly_one_cable(compiled) -> None:
    plan = compiled("h100-1024-optimized")
    seen = Counter(k for c in plan.cables for k in c.links)
    assert sorted(seen) == list(range(len(plan.links))) and set(seen.values()) == {1}


_QM9700: dict[int, set[str]] = {}


def _cage(plan: Plan, device: str, port: str) -> tuple[str, str] | None:
    """(switch, cage) of a QM9700 port named 1/<cage>/<sub>; None for NICs."""
    if id(plan) not in _QM9700:
        _QM9700[id(plan)] = {d.name for d in plan.devices if d.kind == "switch" and d.model == "QM9700"}
    if device not in _QM9700[id(plan)]:
        return None
    return device, port.rsplit("/", 1)[0]


def test_transceivers_are_counted_per_twin_cage(compiled) -> None:
    plan = compiled("h100-1024-reference")
    cages: set[tuple[str, str]] = set()
    nic_ports = 0
    for lk in plan.links:
        if lk.network != "backend":
            continue
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            c = _cage(plan, dev, port)
            if c:
                cages.add(c)
            else:
                nic_ports += 1
    parts = plan.cabling.transceiver_parts
    twin = sum(n for p, n in parts.items() if plan.catalog.transceivers[p].ports == 2)
    single = sum(n for p, n in parts.items() if plan.catalog.transceivers[p].ports == 1)
    assert twin == len(cages) == 32 * 32 + 16 * 32  # every leaf and spine cage, once
    assert single == nic_ports == 1024
    assert plan.cabling.transceivers["backend"] == twin + single


def test_cable_id_is_shared_by_the_two_links_of_one_cable(compiled) -> None:
    plan = compiled("h100-1024-vms")
    rows = [r for r in link_rows(plan) if r["network"] == "backend" and r["tier"] == "leaf-spine"]
    by_id = defaultdict(list)
    for r in rows:
        by_id[r["cable_id"]].append(r)
    assert len(by_id) == 512
    for group in by_id.values():
        assert len(group) == 2
        # one twin DAC: both ends of both links in the same two cages
        assert len({_cage(plan, r["a"].name, r["a_port"]) for r in group}) == 1
        assert len({_cage(plan, r["b"].name, r["b_port"]) for r in group}) == 1
        assert group[0]["part"].startswith("MCP4Y10-")


@pytest.mark.large
def test_three_tier_cages_split_across_spines_share_one_optic(compiled) -> None:
    """At 16k GPUs a leaf has one link to each of 32 pod spines: the two ports of a leaf cage go to
    different spines, so only optics fit, one twin transceiver per cage, counted once."""
    plan = compiled("h100-16k")
    mixed = [c for c in plan.cables if c.shape == "mixed"]
    assert mixed and all(c.media in ("mmf", "smf") for c in mixed)
    for c in mixed[:200]:
        a = {_cage(plan, plan.links[k].a_device, plan.links[k].a_port) for k in c.links}
        b = {plan.links[k].b_device for k in c.links}
        assert len(a) == 1 and len(b) == 2  # one leaf cage, two spines
    cages = set()
    for lk in plan.links:
        if lk.network == "backend":
            for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
                if (c := _cage(plan, dev, port)) is not None:
                    cages.add(c)
    copper_cages = 2 * sum(1 for c in plan.cables if c.network == "backend" and c.media in COPPER)
    parts = plan.cabling.transceiver_parts
    assert parts["MMA4Z00-NS"] + parts.get("MMS4X00-NM", 0) == len(cages) - copper_cages


def test_labels_are_unique_and_name_both_ends(compiled) -> None:
    plan = compiled("h100-1024-reference")
    rows = list(link_rows(plan))
    labels = [r["label"] for r in rows]
    assert len(labels) == len(set(labels)) == len(plan.links)
    for r in rows[:50] + rows[-50:]:
        a, b = r["a"], r["b"]
        assert r["label"].startswith(f"{a.rack}.")
        loc = f"U{b.unit:02d}" if b.unit else b.attrs["slot"]
        assert r["label"].endswith(f"{b.rack}.{loc}.{r['b_port']}")
        assert r["label"].isprintable()


def test_direct_run_lengths_follow_the_geometry(compiled) -> None:
    plan = compiled("h100-1024-tor")
    site = plan.design.site
    cat = plan.catalog
    row = next(r for r in link_rows(plan) if r["tier"] == "server-leaf" and r["network"] == "backend")
    srv, leaf = row["a"], row["b"]
    z_srv = BASE_MM + (srv.unit - 1 + cat.servers[srv.model].rack_units / 2) * U_MM
    z_leaf = BASE_MM + (leaf.unit - 1 + 0.5) * U_MM
    expect = abs(z_srv - z_leaf) / 1000 + site.slack.direct_m
    assert row["route"] == "rack"
    assert row["routed_m"] == pytest.approx(expect, abs=0.011)
    # a tray run: up to the tray, along it, down, plus the service loops
    ref = compiled("h100-1024-reference")
    tray_z = rack_height_mm(site.rack.units) + site.tray.clearance_mm
    r = next(r for r in link_rows(ref) if r["route"] == "tray" and r["tier"] == "leaf-spine")
    racks = {x.name: x for x in ref.racks}
    a, b = racks[r["a"].rack], racks[r["b"].rack]
    assert a.row == b.row  # same row: the tray path is straight along it
    along = abs(a.x_mm - b.x_mm) / 1000
    za = BASE_MM + (r["a"].unit - 0.5) * U_MM
    zb = BASE_MM + (r["b"].unit - 0.5) * U_MM
    expect = (tray_z - za) / 1000 + along + (tray_z - zb) / 1000 + site.slack.tray_m
    assert r["routed_m"] == pytest.approx(expect, abs=0.011)


def test_prefer_acc_between_switches(compiled) -> None:
    m = media_by_tier(compiled("h100-1024-vms", "cabling.prefer_acc_switch_to_switch=true"))
    assert set(m["leaf-spine"]) == {"acc"}
    assert set(m["server-leaf"]) <= OPTICAL  # NIC links are not switch-to-switch


def test_forbidden_media_and_copper_cap(compiled) -> None:
    m = media_by_tier(compiled("h100-1024-tor", "cabling.forbidden_media=[dac]"))
    assert "dac" not in m["server-leaf"] and set(m["server-leaf"]) == {"acc"}
    m = media_by_tier(compiled("h100-1024-vms", "cabling.max_copper_m=1"))
    assert set(m["leaf-spine"]) <= OPTICAL
    m = media_by_tier(compiled("h100-1024-reference", "cabling.forbidden_media=[mmf]"))
    assert set(m["server-leaf"]) == {"smf"} and set(m["leaf-spine"]) == {"smf"}


def test_no_part_left_names_the_knob() -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / "h100-256.yaml", ["cabling.forbidden_media=[mmf, smf, aoc]"])
    assert exc.value.problems[0].field == "cabling.forbidden_media"


def test_tray_fill_is_reported_and_limited(compiled) -> None:
    plan = compiled("h100-1024-reference")
    trays = plan.trays
    assert trays.capacity_mm2 == 600 * 150
    fills = [s.fill for s in trays.segments]
    assert 0 < max(fills) <= trays.fill_limit
    # the fill of a segment is the cross-section of the cables that pass through it
    total = sum(s.cable_mm2 for s in trays.segments)
    assert total > 0
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / "h100-1024-reference.yaml", ["site.tray.width_mm=100", "site.tray.depth_mm=50"])
    p = exc.value.problems[0]
    assert p.field == "site.tray.width_mm" and "full" in p.message and "site.tray.levels" in p.hint


def test_compile_prints_cabling_counts(cli, tmp_path) -> None:
    res = cli("compile", DESIGNS / "h100-1024-vms.yaml", "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    for text in (
        "cables: dac",
        "cables: mmf",
        "transceivers",
        "copper (DAC/ACC)",
        "fiber (AOC/MMF/SMF)",
        "racks: spine",
        "fullest tray segment",
    ):
        assert text in res.output
