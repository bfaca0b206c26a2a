"""CPU time and peak memory of `railyard compile` of a multi-plane design, one fresh process per run.

The default is designs/quadplane-131k.yaml: 131,072 GPUs, every ConnectX-8 broken out into 4 planes of
200G, each plane a two-tier fabric of 512-port switches (3,072 switches, ~1M backend links, every
artifact). CPU seconds are the compile's own and its render child's (user + system, from
RUSAGE_CHILDREN of this process, which waits for the compile, which waits for its child); peak
memory is the larger of the two processes' peak resident sets (bench/compile.py measures it the same
way). Wall time is printed too, but on a shared machine only the CPU time compares across runs.
Run: python bench/multiplane.py [--design designs/quadplane-131k.yaml] [--set path=value ...]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compile import _CHILD, ENV
from host import describe

ROOT = Path(__file__).resolve().parent.parent


def compile_once(design: str, sets: list[str]) -> tuple[float, float, float, int, float]:
    """(CPU seconds, wall seconds, peak RSS MiB, files, output MiB) of one compile into a temp folder."""
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
        return cpu, wall, peak, len(files), sum(p.stat().st_size for p in files) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--design", default="designs/quadplane-131k.yaml")
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="PATH=VALUE")
    a = ap.parse_args()
    print(describe())
    print(f"{'design':<40} {'CPU s':>8} {'wall s':>8} {'peak MiB':>9} {'files':>7} {'output MiB':>11}")
    cpu, wall, peak, n, mib = compile_once(a.design, a.sets)
    name = Path(a.design).stem + "".join(f" {s}" for s in a.sets)
    print(f"{name:<40} {cpu:>8.1f} {wall:>8.1f} {peak:>9.0f} {n:>7} {mib:>11.1f}")
    print(describe("after"))


if __name__ == "__main__":
    main()
