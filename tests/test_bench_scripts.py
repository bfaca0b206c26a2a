"""The benchmark scripts docs/reference/benchmarks.md quotes still run and print what it says: first the
host's speed line (bench/host.py), then their table, then the host's speed again. Nothing here is
timed: one run of the smallest case each, the figures only checked to be figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEED = r": Python reference workload \d+\.\d\d s \(bench/host\.py\), \d+ cores$"
HOST, AFTER = re.compile("^host" + _SPEED), re.compile("^host after" + _SPEED)


def bench(script: str, *args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, f"bench/{script}", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_compile_bench_prints_host_then_a_row_per_size() -> None:
    lines = bench("compile.py", "--sizes", "1024", "--runs", "1")
    assert HOST.match(lines[0]), lines
    assert lines[1].split()[:3] == ["GPUs", "wall", "s"], lines
    assert AFTER.match(lines[-1]) and len(lines) == 4, lines
    # 1,024 GPUs: h100-1024-reference with every artifact (255 files, 9.5 MiB on 2026-12-03)
    gpus, wall, peak, files, mib, write, ratio = lines[2].split()
    assert gpus == "1024" and float(wall) > 0 and int(peak) > 0 and int(files) > 200 and float(mib) > 1
    assert float(write) > 0 and ratio.endswith("x")


def test_startup_bench_prints_host_then_each_command() -> None:
    lines = bench("startup.py", "--runs", "1")
    assert HOST.match(lines[0]), lines
    assert lines[1].startswith("command") and "python -c pass" in lines[1], lines
    assert AFTER.match(lines[-1]), lines
    rows = {ln[:16].strip(): ln[16:].split() for ln in lines[2:-1]}
    assert list(rows) == ["--help", "schema", "validate 1,024", "compile 1,024"], lines
    assert rows["--help"] == [rows["--help"][0], "-"], "--help loads none of the heavy libraries"
    assert "jinja2" in rows["compile 1,024"] and "jinja2" not in rows["validate 1,024"]
    assert all(float(r[0]) > 0 for r in rows.values())


def test_multiplane_bench_prints_host_then_the_design_row() -> None:
    # the 131,072-GPU 8-plane design is the script's default; the test runs it cut to 2 units of 8
    lines = bench(
        "multiplane.py",
        "--set",
        "compute.count=16",
        "--set",
        "backend.su_size=8",
        "--set",
        "storage.count=8",
        "--set",
        "storage.capacity_pb=2",
    )
    assert HOST.match(lines[0]) and AFTER.match(lines[-1]) and len(lines) == 5, lines
    assert lines[1].split()[:3] == ["design", "CPU", "s"], lines
    cpu, wall, peak, files, mib = lines[2].split()[-5:]
    assert lines[2].startswith("spectrumx-8plane-131k compute.count=16")
    assert float(cpu) > 0 and float(wall) > 0 and int(peak) > 0 and int(files) > 100 and float(mib) > 1
    # the backend as plan.json has it: 8 planes x 8 rails x 2 units of one leaf, every plane 1:1
    assert lines[3].startswith("backend: 2 tiers, 8 planes, 128 leaves, "), lines[3]
    assert "of SN5600-512x100G@8x100G" in lines[3] and lines[3].endswith("lowest plane bisection ratio 1.0")


def test_explore_bench_prints_host_then_the_per_variant_ratio() -> None:
    lines = bench("explore.py", "--skip-16k")  # the 16k search runs by hand (docs/reference/benchmarks.md)
    assert HOST.match(lines[0]) and AFTER.match(lines[-1]), lines
    m = re.fullmatch(
        r"1,024 GPUs, 10 variants: evaluation ([0-9.]+) CPU s, full compile ([0-9.]+) CPU s \(median\); "
        r"ratio ([0-9.]+) \(1/[0-9.]+\)",
        lines[1],
    )
    assert m and 0 < float(m.group(3)) < 1, lines
