"""Start-up cost of the `railyard` command: wall time of `--help`, `schema`, `validate` and a 1,024-GPU
`compile` (medians over --runs fresh processes), and which heavy libraries each one imported.

Run: python bench/startup.py [--runs 7]
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
# as a user runs it: with the modules' bytecode cached (a shell with PYTHONDONTWRITEBYTECODE set would
# recompile every railyard module on each run, ~0.2 s)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
HEAVY = ("pydantic", "yaml", "jinja2", "segno", "networkx", "shapely", "numpy", "pyavd", "hostlist")
COMMANDS = {
    "--help": ["--help"],
    "schema": ["schema"],
    "validate 1,024": ["validate", "designs/h100-1024-reference.yaml"],
    "compile 1,024": ["compile", "designs/h100-1024-reference.yaml", "-q", "--out"],
}
# runs the CLI as the installed `railyard` script does, then lists the heavy libraries it loaded
# (main() ends the process itself, after running the atexit handlers)
_CHILD = (
    "import atexit, sys\nfrom generators.cli import main\nsys.argv = ['railyard', *sys.argv[1:]]\n"
    f"atexit.register(lambda: print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr))\n"
    "main()\n"
)


def once(args: list[str]) -> tuple[float, str]:
    with tempfile.TemporaryDirectory(prefix="railyard-bench-") as tmp:
        argv = [*args, f"{tmp}/out"] if args[-1] == "--out" else args
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *argv],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        wall = time.perf_counter() - t0
    return wall, done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    once(COMMANDS["compile 1,024"])  # write the .pyc files first
    pythons = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        pythons.append(time.perf_counter() - t0)
    python = statistics.median(pythons)
    print(describe())
    print(f"{'command':<16} {'median s':>9}  heavy libraries imported   (python -c pass: {python:.3f} s)")
    for name, args in COMMANDS.items():
        results = [once(args) for _ in range(runs)]
        print(f"{name:<16} {statistics.median(w for w, _ in results):>9.3f}  {results[-1][1] or '-'}", flush=True)
    print(describe("after"))


if __name__ == "__main__":
    main()
