"""How fast this machine runs Python today, printed beside the benchmarks' figures.

The 2-core VMs the benchmarks run on differ by up to 2x from day to day (the same 1,024-GPU compile took
0.64-0.79 s on one and 1.2-1.4 s on another, same compiler code), so a figure means little without the speed of
the machine that measured it. The reference is a fixed pure-Python workload of the kind the compiler
does (formatting, dict building, sorting strings), in a fresh process: compare figures taken on
machines whose references differ in proportion, or re-measure side by side. The benchmarks print it
before and after their figures: the same idle VM's reference moved from 0.19 to 0.38 s within ten minutes
(2026-12-03), so a pair that disagrees says the machine changed speed during the measurement.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

_WORK = (
    "d = {f'su{i % 64}-rail{i % 8}-leaf:p{i}': (i * 7) % 1000 for i in range(100_000)}\n"
    "sorted(d, key=lambda k: (d[k], k))\n"
)


def reference_seconds(runs: int = 3) -> float:
    """Median wall seconds of the reference workload (interpreter start included) over `runs` processes."""
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _WORK], check=True)
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls)


def describe(when: str = "") -> str:
    """One line for a benchmark's header (or, `when="after"`, its footer): the reference time and the core
    count."""
    label = f"host {when}" if when else "host"
    return f"{label}: Python reference workload {reference_seconds():.2f} s (bench/host.py), {os.cpu_count()} cores"


if __name__ == "__main__":
    print(describe())
