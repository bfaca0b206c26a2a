"""CPU time and peak memory of `railyard compile` of a multi-plane design, one fresh process per run.

The default is designs/spectrumx-8plane-131k.yaml: 131,072 GPUs, every 800G NIC broken out into 8
planes of 100G, each plane a two-tier fabric of 512 x 100G switches (6,144 switches, ~2.1M backend
links, every artifact); designs/quadplane-131k.yaml is its 4-plane 200G sibling. Both compile whole,
each plane in a network row of its own (site.network_rows: per_plane); `--set compute.count=2048`
(16,384 GPUs) measures a cut-down site.
After the figures it prints the backend the compile built, read from the head of its plan.json (the `networks` section
comes third, after a few kB): tiers, planes, leaves and spines, the ports a leaf uses, and the lowest
bisection ratio of any plane. CPU seconds are the compile's own and its render child's (user + system, from
RUSAGE_CHILDREN of this process, which waits for the compile, which waits for its child); peak
memory is the larger of the two processes' peak resident sets (bench/compile.py measures it the same
way). Wall time is printed too, but on a shared machine only the CPU time compares across runs.
Run: python bench/multiplane.py [--design designs/spectrumx-8plane-131k.yaml] [--set path=value ...]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compile import _CHILD, ENV
from host import describe

ROOT = Path(__file__).resolve().parent.parent


def backend_of(plan_json: Path) -> dict[str, object]:
    """plan.json's networks.backend, decoded from the file's head: a 131,072-GPU plan.json is GBs."""
    with plan_json.open(encoding="utf-8") as f:
        head = f.read(1 << 20)
    start = head.index('"networks":') + len('"networks":')
    networks, _ = json.JSONDecoder().raw_decode(head[start:].lstrip())
    backend: dict[str, object] = networks["backend"]
    return backend


def describe_backend(be: dict[str, object]) -> str:
    ratios = [float(pb["ratio"]) for pb in be.get("plane_bisection") or []]  # type: ignore[attr-defined]
    return (
        f"backend: {be['tiers']} tiers, {be.get('planes') or 1} planes, {be['leaves']:,} leaves, {be['spines']:,} "
        f"spines, {be['cores']:,} cores of {be['switch_model']}; a leaf uses {be['downlinks_per_leaf']} down + "
        f"{be['uplinks_per_leaf']} up ports; lowest plane bisection ratio {min(ratios) if ratios else '-'}"
    )


def compile_once(design: str, sets: list[str]) -> tuple[float, float, float, int, float, str]:
    """(CPU seconds, wall seconds, peak RSS MiB, files, output MiB, the backend built) of one compile
    into a temp folder."""
    with tempfile.TemporaryDirectory(prefix="railyard-bench-") as t:
        out = Path(t) / "out"
        args = [sys.executable, "-c", _CHILD, "compile", design, "--out", str(out), "-q"]
        args += [x for s in sets for x in ("--set", s)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"compile of {design} failed:\n{done.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak = int(done.stderr.strip().splitlines()[-1]) / 1024
        files = [p for p in out.rglob("*") if p.is_file()]
        built = describe_backend(backend_of(out / "plan.json"))
        return cpu, wall, peak, len(files), sum(p.stat().st_size for p in files) / 2**20, built


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--design", default="designs/spectrumx-8plane-131k.yaml")
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="PATH=VALUE")
    a = ap.parse_args()
    print(describe())
    print(f"{'design':<40} {'CPU s':>8} {'wall s':>8} {'peak MiB':>9} {'files':>7} {'output MiB':>11}")
    cpu, wall, peak, n, mib, built = compile_once(a.design, a.sets)
    name = Path(a.design).stem + "".join(f" {s}" for s in a.sets)
    print(f"{name:<40} {cpu:>8.1f} {wall:>8.1f} {peak:>9.0f} {n:>7} {mib:>11.1f}")
    print(built)
    print(describe("after"))


if __name__ == "__main__":
    main()
