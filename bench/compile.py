"""Wall time, peak memory and output of `railyard compile`, against the time to write the same bytes.

Each size runs in a fresh process (peak RSS is per process), writing to a temp dir. Then the same files
(read back into memory) are written to a new folder with plain open/write: the physical write time,
and the ratio of compile time to it (issue #18: railyard should compile at the speed of writing
files). Sizes:
- 1,024 GPUs: h100-1024-reference (InfiniBand NDR, 2-tier, every artifact).
- 16,384 GPUs: h100-16k (3-tier InfiniBand).
- 65,536 GPUs: the largest non-blocking 3-tier fat tree of 64-port switches (k^3/4 hosts).
- 98,304 GPUs: h100-512-roce grown to 12,288 HGX servers on SN5600 (a 3-tier RoCE fabric), with every
  artifact, the SONiC backend configs and host files included.
Run: python bench/compile.py [--sizes 1024,16384,65536,98304] [--runs 3]  (medians of --runs)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from host import describe

ROOT = Path(__file__).resolve().parent.parent
# as a user runs it: with the modules' bytecode cached (PYTHONDONTWRITEBYTECODE would recompile every
# railyard module on each run, ~0.2 s); the first run of the smallest size writes the .pyc files
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CASES = {
    1024: ["designs/h100-1024-reference.yaml"],
    16384: ["designs/h100-16k.yaml"],
    # 64 pods' spine-to-core fibers need a third tray level into the core rows (tray fill check)
    65536: [
        "designs/h100-16k.yaml",
        "--set",
        "compute.count=8192",
        "--set",
        "storage.count=128",
        "--set",
        "name=h100-64k",
        "--set",
        "tenants=[]",
        "--set",
        "site.tray.levels=3",
    ],
    # 384 units of 32 HGX: 8 rails of 12,288 /31s (a /17 each) and the loopbacks need 270,336 addresses,
    # more than the default /14 backend pool; the spine-core fibres need a third tray level and
    # cross-aisle trays every 4 positions (the tray-fill check)
    98304: [
        "designs/h100-512-roce.yaml",
        "--set",
        "compute.count=12288",
        "--set",
        "storage.count=192",
        "--set",
        "name=h100-98k-roce",
        "--set",
        "tenants=[]",
        "--set",
        "site.tray.levels=3",
        "--set",
        "site.tray.cross_every=4",
        "--set",
        "addressing.backend=10.128.0.0/13",
    ],
}
# the compile process reports its peak RSS itself (the bench's own RUSAGE_CHILDREN is a max over every
# size run so far), the larger of its own and its forked render child's, from an atexit handler: the
# command ends its process itself once the atexit handlers ran (generators.cli._end). Its own is VmHWM,
# not RUSAGE_SELF: Linux keeps the peak of the memory an exec replaced in ru_maxrss, so a compile
# started by this process reported this process's peak (4,515 MiB at 98,304 GPUs after reading the
# previous run's 2.2 GiB of files back; VmHWM and a bench holding nothing gave 1,859-1,867 MiB)
_CHILD = (
    "import atexit, resource, sys, runpy; sys.argv = ['railyard', *sys.argv[1:]]\n"
    "def peak():\n"
    "    hwm = next(int(ln.split()[1]) for ln in open('/proc/self/status') if ln.startswith('VmHWM:'))\n"
    "    print(max(hwm, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "runpy.run_module('generators.cli', run_name='__main__')\n"
)


def compile_once(gpus: int, tmp: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one compile into tmp/out."""
    args = [sys.executable, "-c", _CHILD, "compile", CASES[gpus][0], "--out", str(tmp / "out"), "-q", *CASES[gpus][1:]]
    t0 = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"compile of {gpus} GPUs failed:\n{done.stderr}")
    return wall, int(done.stderr.strip().splitlines()[-1]) / 1024


def write_once(files: dict[str, bytes], dest: Path) -> float:
    """Seconds to write these files (folders included) with open/write, no fsync, as compile does."""
    t0 = time.perf_counter()
    made: set[str] = set()
    for rel, data in files.items():
        parent = os.path.dirname(rel)
        if parent not in made:
            os.makedirs(dest / parent, exist_ok=True)
            made.add(parent)
        with open(dest / rel, "wb") as fh:
            fh.write(data)
    return time.perf_counter() - t0


def run(gpus: int, runs: int) -> tuple[float, float, int, int, float]:
    walls, peaks, writes = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="railyard-bench-") as t:
            tmp = Path(t)
            wall, peak = compile_once(gpus, tmp)
            walls.append(wall)
            peaks.append(peak)
            out = tmp / "out"
            files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
            writes.append(write_once(files, tmp / "copy"))
    size = sum(len(b) for b in files.values())
    return statistics.median(walls), max(peaks), size, len(files), statistics.median(writes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1024,16384,65536,98304")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    sizes = sorted(int(s) for s in a.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="railyard-bench-") as t:
        compile_once(sizes[0], Path(t))  # warm-up: bytecode and template caches, not counted
    print(describe())
    print(
        f"{'GPUs':>7} {'wall s':>8} {'peak MiB':>9} {'files':>7} {'output MiB':>11} {'write s':>8} "
        f"{'compile/write':>14}"
    )
    for gpus in sizes:
        wall, peak, size, n, write = run(gpus, a.runs)
        print(
            f"{gpus:>7} {wall:>8.2f} {peak:>9.0f} {n:>7} {size / 2**20:>11.1f} {write:>8.3f} {wall / write:>13.0f}x",
            flush=True,
        )
    print(describe("after"))


if __name__ == "__main__":
    main()
