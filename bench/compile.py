"""Wall time and peak memory of `railyard compile` at 1,024, 16,384 and 65,536 GPUs.

Each size runs in a fresh process (peak RSS is per process), writing to a temp dir. 65,536 GPUs is
the largest non-blocking 3-tier fat tree of 64-port switches (k^3/4 hosts): 8,192 HGX servers.
Run: python bench/compile.py [--sizes 1024,16384,65536]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    1024: ["designs/h100-1024-reference.yaml"],
    16384: ["designs/h100-16k.yaml"],
    # 64 pods' spine-to-core fibers need a third tray level into the core rows (tray fill check)
    65536: ["designs/h100-16k.yaml", "--set", "compute.count=8192", "--set", "storage.count=128",
            "--set", "name=h100-64k", "--set", "tenants=[]", "--set", "site.tray.levels=3"],
}


def run(gpus: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-m", "generators.cli", "compile", *CASES[gpus][:1], "--out", f"{tmp}/out", "-q",
                *CASES[gpus][1:]]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        size = sum(p.stat().st_size for p in Path(tmp, "out").rglob("*") if p.is_file())
    # ru_maxrss of children is the max over all children so far: sizes run in ascending order
    return wall, max(peak_kb, before) / 1024, size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024,16384,65536")
    sizes = sorted(int(s) for s in ap.parse_args().sizes.split(","))
    print(f"{'GPUs':>7} {'wall s':>8} {'peak MiB':>9} {'output MiB':>11}")
    for gpus in sizes:
        wall, peak, size = run(gpus)
        print(f"{gpus:>7} {wall:>8.2f} {peak:>9.0f} {size / 2**20:>11.1f}", flush=True)


if __name__ == "__main__":
    main()
