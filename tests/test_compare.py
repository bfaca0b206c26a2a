"""`railyard compare`: the side-by-side cost table in the terminal and as Markdown."""

from __future__ import annotations

import re

import pytest

from generators.reports.compare import compare_rows
from tests.conftest import DESIGNS

NAMES = ["h100-1024-reference", "h100-1024-tor", "h100-1024-vms", "h100-1024-optimized"]
PATHS = [DESIGNS / f"{n}.yaml" for n in NAMES]


def test_compare_prints_the_table(cli) -> None:
    r = cli("compare", *PATHS)
    assert r.exit_code == 0, r.output
    for n in NAMES:
        assert n in r.output
    backend = next(line for line in r.output.splitlines() if "Backend fabric" in line)
    assert len(re.findall(r"\([+-]\d+\.\d%\)|\(±0\.0%\)", backend)) == 3  # a delta for each design but the first
    for label in ("Compute servers", "Storage", "total", "per compute server, excl. storage", "per GPU"):
        assert label in r.output


def test_compare_markdown_matches_the_boms(cli, compiled) -> None:
    r = cli("compare", "--markdown", *PATHS)
    assert r.exit_code == 0, r.output
    rows = [line for line in r.output.splitlines() if line.startswith("|")]
    assert rows[0].startswith("| USD | h100-1024-reference (base) | h100-1024-tor |")
    boms = [compiled(n).bom for n in NAMES]
    backend = next(line for line in rows if "Backend fabric" in line)
    cells = [c.strip() for c in backend.strip("|").split("|")][1:]
    assert cells[0] == f"${boms[0].backend_fabric_usd:,.0f}"
    for cell, bom in zip(cells[1:], boms[1:], strict=True):
        pct = (bom.backend_fabric_usd / boms[0].backend_fabric_usd - 1) * 100
        assert cell == f"${bom.backend_fabric_usd:,.0f} ({pct:+.1f}%)" or abs(pct) < 0.05


def test_compare_rows_deltas(compiled) -> None:
    boms = [compiled(n).bom for n in NAMES]
    rows = {r.label: r for r in compare_rows(boms)}
    assert rows["compute node"].values == (270_000.0, 270_000.0, 270_000.0, 256_400.0)
    assert rows["compute node"].deltas()[3] == pytest.approx((256_400 / 270_000 - 1) * 100)


def test_compare_bad_design_exits_2(cli, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncompute: {count: 100}\n")
    r = cli("compare", PATHS[0], bad)
    assert r.exit_code == 2
    assert "compute.count" in r.output
