"""`railyard compare`: the side-by-side cost table in the terminal and as Markdown."""

from __future__ import annotations

import re

import pytest

from generators.model.ports import port_ends
from generators.reports.compare import compare_rows, size_note
from tests.conftest import DESIGNS, site_cells

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


# ------------------------------------------------------------------ designs of different sizes

MIXED = ["h100-256", "h100-1024-optimized"]  # the same choices at 256 and 1,024 GPUs
NOTE = "designs differ in size (256 vs 1,024 GPUs): compare the per-GPU rows"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|│").replace("│", "|").split("|")]


def test_same_size_designs_have_no_size_note(cli) -> None:
    r = cli("compare", "--markdown", *PATHS)
    assert r.exit_code == 0, r.output
    assert "differ in size" not in r.output
    labels = [_cells(line)[0] for line in r.output.splitlines() if line.startswith("|")]
    assert "per GPU" in labels and not [x for x in labels if x.endswith(" per GPU")]  # no per-GPU categories
    total = next(line for line in r.output.splitlines() if _cells(line)[0] == "**total**")
    assert total.count("%)") == 3  # one size: the totals' deltas are the designs' differences


def test_mixed_sizes_say_so_and_compare_per_gpu(cli, compiled) -> None:
    paths = [DESIGNS / f"{n}.yaml" for n in MIXED]
    boms = [compiled(n).bom for n in MIXED]
    assert [b.gpus for b in boms] == [256, 1024]
    for args in ((), ("--markdown",)):
        r = cli("compare", *args, *paths)
        assert r.exit_code == 0, r.output
        assert NOTE in r.output, r.output
        lines = r.output.splitlines()
        per_gpu = next(line for line in lines if "Backend fabric per GPU" in line)
        base, other = _cells(per_gpu)[1:3]
        want = [b.by_category["backend"] / b.gpus for b in boms]
        assert base == f"${want[0]:,.0f}"
        assert other == f"${want[1]:,.0f} ({(want[1] / want[0] - 1) * 100:+.1f}%)"
        # a total of a 4x larger design says nothing as a percentage: no delta on it
        total = next(line for line in lines if _cells(line)[0].strip("*") == "total")
        assert _cells(total)[1:3] == [f"${boms[0].total_usd:,.0f}", f"${boms[1].total_usd:,.0f}"]
        backend = next(line for line in lines if _cells(line)[0].strip("*") == "Backend fabric")
        assert "%" not in backend
        per_server = next(line for line in lines if _cells(line)[0] == "per compute server")
        assert "%)" in per_server
        sizes = next(line for line in lines if _cells(line)[0] == "GPUs")
        assert _cells(sizes)[1:3] == ["256", "1,024"]


def test_size_note_lists_each_size_once(compiled) -> None:
    boms = [compiled(n).bom for n in ("h100-256", "h100-1024-optimized", "h100-256")]
    rows = compare_rows(boms)
    assert size_note(boms) == "designs differ in size (256 vs 1,024 GPUs): compare the per-GPU rows"
    per_gpu = {r.label: r for r in rows if r.group == "per GPU"}
    assert per_gpu["Storage per GPU"].values == tuple(b.by_category["storage"] / b.gpus for b in boms)
    assert size_note(boms[:1]) is None and not [r for r in compare_rows(boms[:1]) if r.group == "per GPU"]


# --------------------------------------------------------------------------------- compare --sites

SITE_NAMES = ["h100-1024-reference", "h100-1016-superpod", "h100-1024-tor", "h100-256"]


def test_sites_table_reads_each_compiled_plan(cli, compiled) -> None:
    """One row per design, in the order given, each figure counted from the plan's own devices,
    links, cables and racks (a figure the table computed differently would disagree here)."""
    r = cli("compare", "--sites", "--markdown", *[DESIGNS / f"{n}.yaml" for n in SITE_NAMES])
    assert r.exit_code == 0, r.output
    cells = site_cells(r.output)
    assert list(cells) == SITE_NAMES
    for name in SITE_NAMES:
        plan = compiled(name)
        servers = [d for d in plan.devices if d.kind == "server"]
        gpus = len(servers) * plan.catalog.servers[plan.design.compute.server].gpus
        backend = [d for d in plan.devices if d.kind == "switch" and d.network == "backend"]
        roles = [sum(d.role == role for d in backend) for role in ("leaf", "spine", "core")]
        tiers = [
            sum(lk.network == "backend" and lk.tier == t for lk in plan.links)
            for t in ("server-leaf", "leaf-spine", "spine-core")
        ]
        others = sum(d.kind == "switch" and d.network != "backend" for d in plan.devices)
        # one transceiver per cage a fiber cable plugs into (a twin-port cage takes one for two links)
        ends = port_ends(plan, plan.catalog, plan.design)
        kind = {d.name: f"{d.kind}:{d.model}" for d in plan.devices}
        cages = {
            (dev, ends[kind[dev]][port].cage)
            for c in plan.cables
            if c.a_transceiver is not None
            for i in c.links
            for dev, port in (
                (plan.links[i].a_device, plan.links[i].a_port),
                (plan.links[i].b_device, plan.links[i].b_port),
            )
        }
        optics = len(cages)
        hottest = max(rk.power_kw for rk in plan.racks if rk.role == "compute")
        assert cells[name] == [
            f"{len(servers):,}",
            f"{gpus:,}",
            " / ".join(f"{n:,}" for n in roles),
            " / ".join(f"{n:,}" for n in tiers),
            f"{others:,}",
            f"{optics:,}",
            f"{len(plan.racks):,}",
            f"{hottest:.1f}",
            f"${plan.bom.per_gpu_usd:,.0f}",
            "1",  # single-plane fabrics
            f"${plan.bom.backend_fabric_usd / tiers[0]:,.0f}",
        ]
    # the 127-node SuperPOD's UFM ports are server-leaf links of their own
    assert cells["h100-1016-superpod"][3].startswith("1,018 / ")
    assert cells["h100-1024-tor"][2].endswith(" / 0")


def test_sites_table_in_the_terminal(cli) -> None:
    r = cli("compare", "--sites", *[DESIGNS / f"{n}.yaml" for n in SITE_NAMES[:2]])
    assert r.exit_code == 0, r.output
    assert "what each design builds" in r.output
    for n in SITE_NAMES[:2]:
        assert n in r.output
