"""`railyard diff`: the pull-request markdown, from real designs and from plans with cables and a BoM."""

from __future__ import annotations

import copy

import pytest

from generators.model.errors import DesignError
from generators.model.secrets import fill, placeholder, referenced
from generators.renderers import render_all
from generators.reports.diff import review_markdown
from generators.reports.facts import site_facts
from tests.conftest import DESIGNS


def test_cli_diff_reference_vs_optimized(cli, compiled):
    res = cli("diff", DESIGNS / "h100-1024-reference.yaml", DESIGNS / "h100-1024-optimized.yaml")
    assert res.exit_code == 0, res.output
    md = res.output
    ref, opt = compiled("h100-1024-reference"), compiled("h100-1024-optimized")
    spines = [sum(d.role == "spine" and d.network == "backend" for d in p.devices) for p in (ref, opt)]
    assert spines == [16, 8]  # 2:1 halves the spines
    assert "| `backend/spine` | 16 | 8 | -8 (-50.0%) |" in md
    backend = [sum(d.kind == "switch" and d.network == "backend" for d in p.devices) for p in (ref, opt)]
    assert f"| `backend` | {backend[0]} | {backend[1]} | -{backend[0] - backend[1]} " in md
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
    res = cli("diff", DESIGNS / "h100-1024-reference.yaml", DESIGNS / "h100-1024-reference.yaml",
              "--head-set", "backend.oversubscription=2:1")
    assert res.exit_code == 0, res.output
    assert "--set backend.oversubscription=2:1" in res.output
    assert "| `backend/spine` | 16 | 8 |" in res.output


def test_bad_design_exits_2_and_writes_nothing(cli, tmp_path):
    out = tmp_path / "review.md"
    res = cli("diff", DESIGNS / "h100-256.yaml", DESIGNS / "h100-256.yaml", "--head-set",
              "backend.oversubscription=1:2", "--out", out)
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
    md = review_markdown(base, {"a.txt": "x\n"}, head, {"a.txt": "y\n", "b.txt": "z\n"})
    assert "| `backend/dac` | 512 | 0 | -512 (-100.0%) |" in md
    mmf = (fb["cables_by_network_medium"]["backend/mmf"], fh["cables_by_network_medium"]["backend/mmf"])
    assert f"| `backend/mmf` | {mmf[0]:,} | {mmf[1]:,} | +{mmf[1] - mmf[0]:,}" in md
    delta = fh["cost_by_category"]["backend"] - fb["cost_by_category"]["backend"]
    assert f"| `backend` | ${fb['cost_by_category']['backend']:,.0f} | ${fh['cost_by_category']['backend']:,.0f} | " \
           f"+${delta:,.0f}" in md
    # every leaf-spine cable run is listed by label (the spine rack moved, so its labels are new)
    assert "## Cables by label" in md and "Added (" in md and "Removed (" in md
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
    md = review_markdown(plan, {}, plan, head)
    assert "150 added" in md and "… and 50 more files" in md


def test_renderers_use_only_known_secrets(compiled):
    # a renderer naming a secret the Pulumi config does not define would fail every `up`
    for name in ("h100-256", "h100-1024-reference"):
        for path, text in render_all(compiled(name)).items():
            assert referenced(text) <= {"switch_password", "bmc_password", "snmp_community", "bgp_password"}, path


def test_secret_placeholders_fill_and_validate():
    text = f"snmp-server community {placeholder('snmp_community')} ro\n"
    assert referenced(text) == {"snmp_community"}
    assert fill(text, {"snmp_community": "ops-ro-2024x"}) == "snmp-server community ops-ro-2024x ro\n"
    with pytest.raises(DesignError, match="railyard:snmpCommunity: secret is not set"):
        fill(text, {})
    with pytest.raises(DesignError, match="railyard:snmpCommunity: must be 8-128 characters"):
        fill(text, {"snmp_community": 'has "quotes"'})
    with pytest.raises(KeyError):
        placeholder("root_password")
