"""`railyard diff`: the pull-request markdown, from real designs and from plans with cables and a BoM."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter

import pytest

from generators.model.errors import DesignError
from generators.model.secrets import SECRETS, fill, placeholder, referenced
from generators.renderers import render_all
from generators.reports.diff import review, review_markdown
from generators.reports.facts import site_facts
from tests.conftest import DESIGNS


@pytest.fixture
def cli(cli_on_caches):
    """Every diff here is of shipped designs: their compiles and renders come from the session caches
    (the 16k review's base is the h100-16k other tests compile; it took 34 s on its own)."""
    return cli_on_caches


def test_cli_diff_reference_vs_optimized(cli, compiled):
    res = cli("diff", DESIGNS / "h100-1024-reference.yaml", DESIGNS / "h100-1024-optimized.yaml")
    assert res.exit_code == 0, res.output
    md = res.output
    ref, opt = compiled("h100-1024-reference"), compiled("h100-1024-optimized")
    spines = [sum(d.role == "spine" and d.network == "backend" for d in p.devices) for p in (ref, opt)]
    assert spines == [16, 8]  # 2:1 halves the spines
    assert "| `backend/spine` | 16 × QM9700 | 8 × QM9700 | -8 (-50.0%) |" in md
    # the resolved designs differ in their name, description and oversubscription (after extends:)
    fields = [
        ln.split("`")[1]
        for ln in md.split("## Design changes")[1].split("## Summary")[0].splitlines()
        if ln.startswith("- `")
    ]
    assert "backend.oversubscription" in fields and "name" in fields
    base_files = render_all(ref)
    head_files = render_all(opt)
    changed = sum(1 for p in set(base_files) & set(head_files) if base_files[p] != head_files[p])
    added = len(set(head_files) - set(base_files))
    assert f"{added} added, " in md and f", {changed} changed, " in md
    assert md.startswith("# railyard design review: `h100-1024-reference` → `h100-1024-optimized`")


def test_diff_of_a_design_with_itself_is_empty(cli, compiled, tmp_path):
    out = tmp_path / "review.md"
    res = cli("diff", DESIGNS / "h100-256.yaml", DESIGNS / "h100-256.yaml", "--out", out)
    assert res.exit_code == 0
    md = out.read_text()
    assert "0 added, 0 removed, 0 changed" in md
    n = sum(d.kind == "switch" for d in compiled("h100-256").devices)
    assert f"| switches | {n} | {n} | 0 |" in md
    # deterministic: a CI comment only changes when the designs do
    cli("diff", DESIGNS / "h100-256.yaml", DESIGNS / "h100-256.yaml", "--out", tmp_path / "again.md")
    assert (tmp_path / "again.md").read_text() == md


def test_diff_with_set_overrides(cli):
    res = cli(
        "diff",
        DESIGNS / "h100-1024-reference.yaml",
        DESIGNS / "h100-1024-reference.yaml",
        "--head-set",
        "backend.oversubscription=2:1",
    )
    assert res.exit_code == 0, res.output
    assert "--set backend.oversubscription=2:1" in res.output
    assert "| `backend/spine` | 16 × QM9700 | 8 × QM9700 |" in res.output


def test_bad_design_exits_2_and_writes_nothing(cli, tmp_path):
    out = tmp_path / "review.md"
    res = cli(
        "diff",
        DESIGNS / "h100-256.yaml",
        DESIGNS / "h100-256.yaml",
        "--head-set",
        "backend.oversubscription=1:2",
        "--out",
        out,
    )
    assert res.exit_code == 2
    assert "backend.oversubscription" in res.output
    assert not out.exists()


def test_cables_and_cost_by_category(compiled):
    # moving the VMS spine rack to the end of the row: leaf-spine copper becomes optics
    base = compiled("h100-1024-vms")
    head = compiled("h100-1024-vms", "site.spine_rack_position=end")
    fb, fh = site_facts(base, {}), site_facts(head, {})
    assert fb["cables_by_network_medium"]["backend/dac"] == 512
    assert "backend/dac" not in fh["cables_by_network_medium"]
    assert fh["cost_by_category"]["backend"] > fb["cost_by_category"]["backend"]
    md = review_markdown(review(base, {"a.txt": "x\n"}, head, {"a.txt": "y\n", "b.txt": "z\n"}))
    assert "| `backend/dac` | 512 | 0 | -512 (-100.0%) |" in md
    mmf = (fb["cables_by_network_medium"]["backend/mmf"], fh["cables_by_network_medium"]["backend/mmf"])
    assert f"| `backend/mmf` | {mmf[0]:,} | {mmf[1]:,} | +{mmf[1] - mmf[0]:,}" in md
    delta = fh["cost_by_category"]["backend"] - fb["cost_by_category"]["backend"]
    assert (
        f"| `backend` | ${fb['cost_by_category']['backend']:,.0f} | ${fh['cost_by_category']['backend']:,.0f} | "
        f"+${delta:,.0f}" in md
    )
    # the leaf-spine cables keep their ids (same ports) but their media changed, and the spine rack
    # moved to the row's end, so they are listed as moved, with the new medium
    assert "## Cables" in md and "Moved (" in md and "medium dac → mmf" in md
    assert "| `a.txt` | changed | +1 -1 |" in md and "| `b.txt` | added | +1 |" in md


def test_plan_without_cable_plan_or_bom_has_unknown_cables_and_cost(compiled):
    plan = copy.deepcopy(compiled("h100-256"))
    plan.cables = plan.cabling = plan.bom = None
    f = site_facts(plan, {})
    assert f["cables"] is None and f["cables_by_network_medium"] is None
    assert f["cost_total_usd"] is None and f["cost_per_gpu_usd"] is None


def test_long_lists_are_truncated(compiled):
    plan = compiled("h100-256")
    head = {f"f{i:03d}.txt": "x\n" for i in range(150)}
    md = review_markdown(review(plan, {}, plan, head))
    assert "150 added" in md and "… and 125 more files" in md
    assert review_markdown(review(plan, {}, plan, head), limit=None).count("| added |") == 150


def test_renderers_use_only_known_secrets(compiled):
    # a renderer naming a secret the Pulumi config does not define would fail every `up`
    for name in ("h100-256", "h100-1024-reference"):
        for path, text in render_all(compiled(name)).items():
            assert referenced(text) <= set(SECRETS), path


def test_secret_placeholders_fill_and_validate():
    text = f"snmp-server community {placeholder('snmp_community')} ro\n"
    assert referenced(text) == {"snmp_community"}
    assert fill(text, {"snmp_community": "ops-ro-2024x"}) == "snmp-server community ops-ro-2024x ro\n"
    with pytest.raises(DesignError, match="railyard:snmpCommunity: secret is not set"):
        fill(text, {})
    with pytest.raises(DesignError, match="railyard:snmpCommunity: must be 8-64 letters") as bad:
        fill(text, {"snmp_community": 'has "quotes"'})
    assert 'has "quotes"' not in str(bad.value), "the error names the rule, never the value"
    with pytest.raises(KeyError):
        placeholder("Root password")


# ------------------------------------------------------------------ issue #12: a change of 1:1 to 2:1

VMS_2TO1 = "backend.oversubscription=2:1"


def _server_cables(plan):
    servers = {d.name for d in plan.devices if d.kind == "server"}
    return {
        c.id: c.labels
        for c in plan.cables
        if any({plan.links[k].a_device, plan.links[k].b_device} & servers for k in c.links)
    }


def test_server_cables_keep_their_id_and_label_when_the_spines_change(compiled):
    base, head = compiled("h100-1024-vms"), compiled("h100-1024-vms", VMS_2TO1)
    sb, sh = _server_cables(base), _server_cables(head)
    assert len(sb) > 800 and sb == sh  # same ids, and each id keeps its labels
    assert all(re.fullmatch(r"C-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}", c.id) for c in base.cables)
    assert len({c.id for c in base.cables}) == len(base.cables)


def test_the_review_of_1to1_to_2to1_leads_with_the_field_and_counts_only_spine_cables(cli, compiled):
    res = cli("diff", DESIGNS / "h100-1024-vms.yaml", DESIGNS / "h100-1024-vms.yaml", "--head-set", VMS_2TO1)
    assert res.exit_code == 0, res.output
    md = res.output
    assert len(md.splitlines()) < 300
    design = md.split("## Design changes\n\n")[1].split("\n\n")[0].splitlines()
    assert design == ['- `backend.oversubscription`: `"1:1"` → `"2:1"`']
    assert md.index("## Design changes") < md.index("## Summary") < md.index("## Cables")
    assert "| `backend/spine` | 16 × QM9700 | 8 × QM9700 | -8 (-50.0%) |" in md
    base, head = compiled("h100-1024-vms"), compiled("h100-1024-vms", VMS_2TO1)
    # the BoM lines that explain the cost: fewer spines, fewer leaf-spine DACs
    bom = md.split("### Bill-of-materials lines that changed")[1].split("## Cables")[0]
    for part in ("QM9700", "MCP4Y10-N002", "MCP4Y10-N01A"):
        qty = [
            sum(ln.quantity for ln in p.bom.lines if ln.part == part and ln.category == "backend") for p in (base, head)
        ]
        assert f"| `{part}` (backend " in bom and f" | {qty[0]:,} | {qty[1]:,} | " in bom
    # the backend's cable changes are exactly the leaf-spine cables that differ
    r = review(base, {}, head, {})
    backend = [c for c in r.cables if c.network == "backend"]
    spines = {d.name for p in (base, head) for d in p.devices if d.role == "spine" and d.network == "backend"}
    by_id = {c.id: c for p in (base, head) for c in p.cables}
    plan_of = {c.id: p for p in (base, head) for c in p.cables}
    for c in backend:
        lk = plan_of[c.id].links[by_id[c.id].links[0]]
        assert spines & {lk.a_device, lk.b_device}, c
    b_ls = {c.id: c for c in base.cables if c.network == "backend"}
    h_ls = {c.id: c for c in head.cables if c.network == "backend"}
    really = {
        i
        for i in set(b_ls) | set(h_ls)
        if i not in b_ls or i not in h_ls or (b_ls[i].labels, b_ls[i].parts) != (h_ls[i].labels, h_ls[i].parts)
    }
    assert {c.id for c in backend} == really and len(really) > 0
    counts = Counter(c.change for c in backend)
    assert f"| `backend` | {counts['added']} | {counts['removed']} | {counts['moved']} | {counts['changed']} |" in md


def test_review_json_carries_every_item_and_full_report_is_linked(cli, tmp_path, compiled):
    out, full = tmp_path / "review.json", tmp_path / "review-full.json"
    res = cli(
        "diff",
        DESIGNS / "h100-1024-vms.yaml",
        DESIGNS / "h100-1024-vms.yaml",
        "--head-set",
        VMS_2TO1,
        "--format",
        "json",
        "--out",
        out,
        "--full",
        full,
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "railyard.review/1" and doc["full_report"] == "review-full.json"
    assert doc["design"][0] == {"path": "backend.oversubscription", "base": "1:1", "head": "2:1"}
    r = review(compiled("h100-1024-vms"), {}, compiled("h100-1024-vms", VMS_2TO1), {})
    assert len(doc["cables"]) == len(r.cables) > 2 * 15  # json is never cut short
    # markdown with --full: the comment is cut short and says where the rest is
    md, mdfull = tmp_path / "review.md", tmp_path / "full.md"
    assert (
        cli(
            "diff",
            DESIGNS / "h100-1024-vms.yaml",
            DESIGNS / "h100-1024-vms.yaml",
            "--head-set",
            VMS_2TO1,
            "--out",
            md,
            "--full",
            mdfull,
        ).exit_code
        == 0
    )
    assert "more removed cables: the full list is in `full.md`" in md.read_text()
    removed = sum(c.change == "removed" for c in r.cables)
    assert f"<summary>Removed ({removed})</summary>" in mdfull.read_text()
    assert mdfull.read_text().count("\n- `C-") == len(r.cables)
    # a second run may replace its own json review, but not a file that is not one
    assert (
        cli("diff", DESIGNS / "h100-256.yaml", DESIGNS / "h100-256.yaml", "--format", "json", "--out", out).exit_code
        == 0
    )
    other = tmp_path / "notes.json"
    other.write_text('{"mine": 1}\n')
    res = cli("diff", DESIGNS / "h100-256.yaml", DESIGNS / "h100-256.yaml", "--format", "json", "--out", other)
    assert res.exit_code == 2 and other.read_text() == '{"mine": 1}\n'


@pytest.mark.large
def test_review_of_a_16k_change_stays_a_readable_comment(cli):
    res = cli("diff", DESIGNS / "h100-16k.yaml", DESIGNS / "h100-16k.yaml", "--head-set", VMS_2TO1)
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert len(lines) < 300 and max(len(ln) for ln in lines) < 400
    assert "more removed cables" in res.output and "more racks" in res.output


def test_clashing_short_ids_get_the_long_form_and_stay_stable(monkeypatch):
    from generators.model import ids

    keys = [f"gpu{i:03d}:mlx5_0 -- leaf:{i}" for i in range(40)]
    normal, clashed = ids.stable_ids("C", keys)
    assert not clashed and len(set(normal)) == 40
    monkeypatch.setattr(ids, "SHORT", 1)  # 32 possible ids for 40 keys: some must clash
    got, clashed = ids.stable_ids("C", keys)
    assert clashed and len(set(got)) == 40
    long_ = {k: got[i] for i, k in enumerate(keys) if k in clashed}
    assert all(len(v.replace("-", "")) == 1 + ids.LONG for v in long_.values())
    # a clashing key's long id depends on that key only
    again, _ = ids.stable_ids("C", [*keys, "gpu999:mlx5_0 -- leaf:99"])
    assert all(again[keys.index(k)] == v for k, v in long_.items() if k in _)
    with pytest.raises(ValueError, match="share one identity"):
        ids.stable_ids("C", ["a", "a"])


def test_an_id_is_the_leading_bits_of_the_sha256_of_its_key_in_crockford_base32():
    """What a printed label says: the key's SHA-256, its leading 5 x n bits, 5 bits a character."""
    import hashlib

    from generators.model import ids

    for key in ("gpu001:mlx5_0 -- leaf01:swp1", "", "r01-01.U02.p3 | x" * 9):
        digest = hashlib.sha256(key.encode()).digest()
        n = int.from_bytes(digest, "big")
        for chars in (1, 5, ids.SHORT, ids.LONG, 50):
            want = "".join("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[(n >> (256 - 5 * (i + 1))) & 31] for i in range(chars))
            assert ids._base32(digest, chars) == want
        code = ids._base32(digest, ids.SHORT)
        assert ids.stable_ids("C", [key])[0] == [f"C-{code[:5]}-{code[5:]}"]


def test_tray_segment_ids_follow_geometry_not_order(compiled):
    a, b = compiled("h100-256"), compiled("h100-256", "site.floor.row_positions=20")
    ga = {(tuple(s.a_mm), tuple(s.b_mm)): s.id for s in a.trays.segments}
    gb = {(tuple(s.a_mm), tuple(s.b_mm)): s.id for s in b.trays.segments}
    common = set(ga) & set(gb)
    assert common and set(ga) != set(gb)
    assert all(ga[k] == gb[k] for k in common)
    assert len(set(ga.values())) == len(ga)


def test_a_growth_that_moves_devices_lists_each_move_as_a_work_order(cli):
    """A virtual modular switch grown by a unit needs a second spine rack, and its right-hand leaf rack
    moves one position (tests/test_growth.py): the review says so first, device by device, from -> to,
    not only as counts; the reference design grown the same way moves nothing and says that."""
    res = cli("diff", DESIGNS / "h100-1024-vms.yaml", DESIGNS / "h100-1024-vms.yaml", "--head-set", "compute.count=160")
    assert res.exit_code == 0, res.output
    md = res.output
    moves = md.split("## Moves (work orders)")[1].split("## Summary")[0]
    assert "16 devices move" in moves
    assert "| `su3-rail0-leaf` (switch) | `r02-09` U24 | `r02-10` U24 |" in moves
    assert md.index("## Moves (work orders)") < md.index("## Summary")
    assert "| devices moved (work orders) | 0 | 16 | +16 |" in md
    res = cli(
        "diff",
        DESIGNS / "h100-1024-reference.yaml",
        DESIGNS / "h100-1024-reference.yaml",
        "--head-set",
        "compute.count=160",
    )
    assert "no device present in both moves" in res.output
    assert "| devices moved (work orders) | 0 | 0 | 0 |" in res.output
