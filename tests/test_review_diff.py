"""`railyard diff`: the pull-request markdown, from real designs and from plans with cables and a BoM."""

from __future__ import annotations

import copy
import json

import pytest

from generators.errors import DesignError
from generators.facts import site_facts
from generators.render import render_all
from generators.review import review_markdown
from generators.secrets import fill, placeholder, referenced
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
    assert "`plan.json` | changed |" in md
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


def _with_cables_and_bom(plan, cables, bom):
    p = copy.deepcopy(plan)
    p.extra["cables"] = cables
    p.extra["bom"] = bom
    return p


def test_cables_and_cost_by_category(compiled):
    base = _with_cables_and_bom(compiled("h100-256"), [
        {"cable_id": "C1", "label": "R01-U40:1/1/1>R02-U1:p1", "network": "backend", "media": "mmf", "length_m": 12},
        {"cable_id": "C1", "label": "R01-U40:1/1/2>R02-U1:p2", "network": "backend", "media": "mmf", "length_m": 12},
        {"cable_id": "C2", "label": "OOB-1", "network": "oob", "media": "cat6", "length_m": 3},
    ], {"total_usd": 1_000_000, "per_gpu_usd": 3906.25, "by_category": {"compute": 800_000, "backend": 200_000}})
    head = _with_cables_and_bom(compiled("h100-256"), [
        {"cable_id": "C1", "label": "R01-U40:1/1/1>R02-U1:p1", "network": "backend", "media": "dac", "length_m": 2},
        {"cable_id": "C1", "label": "R01-U40:1/1/2>R02-U1:p2", "network": "backend", "media": "dac", "length_m": 2},
        {"cable_id": "C3", "label": "OOB-2", "network": "oob", "media": "cat6", "length_m": 3},
    ], {"total_usd": 900_000, "by_category": {"compute": 800_000, "backend": 80_000, "oob": 20_000}})
    fb, fh = site_facts(base, {}), site_facts(head, {})
    assert fb["cables"] == 2 and fb["cables_by_network_medium"] == {"backend/mmf": 1, "oob/cat6": 1}
    assert fh["cost_per_gpu_usd"] == 900_000 / 256  # derived when the BoM has no per-GPU figure
    md = review_markdown(base, {"a.txt": "x\n"}, head, {"a.txt": "y\n", "b.txt": "z\n"})
    assert "| `backend/mmf` | 1 | 0 | -1 (-100.0%) |" in md
    assert "| `backend/dac` | 0 | 1 | +1 |" in md
    assert "| `backend` | $200,000 | $80,000 | -$120,000 (-60.0%) |" in md
    assert "| `oob` | $0 | $20,000 | +$20,000 |" in md
    assert "| total cost | $1,000,000 | $900,000 | -$100,000 (-10.0%) |" in md
    assert "1 added, 1 removed, 2 changed, 0 unchanged." in md
    assert "- `OOB-2`" in md and "- `OOB-1`" in md
    assert "`R01-U40:1/1/1>R02-U1:p1`: length_m 12 → 2, media mmf → dac" in md
    assert "| `a.txt` | changed | +1 -1 |" in md and "| `b.txt` | added | +1 |" in md


def test_cables_read_from_a_rendered_csv(compiled):
    plan = compiled("h100-256")
    files = {"cabling/cables.csv": "cable_id,label,network,media\nX1,L1,frontend,aoc\nX2,L2,frontend,aoc\n",
             "cabling/racks/r01.csv": "cable_id,label\nX9,L9\n"}
    f = site_facts(plan, files)
    assert f["cables"] == 2 and f["cables_by_network_medium"] == {"frontend/aoc": 2}
    f = site_facts(plan, {"bom.json": json.dumps({"total_usd": 512.0})})
    assert f["cost_total_usd"] == 512.0 and f["cost_per_gpu_usd"] == 2.0


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
