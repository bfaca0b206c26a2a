"""Print the playbook's cost figures next to what the shipped designs and catalog give.

The same figures are asserted in tests/test_playbook_figures.py; this prints them for a reviewer
(and for whoever changes a price in designs/catalog.yaml). Run: python scripts/playbook_figures.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generators.compiler import compile_file  # noqa: E402
from generators.reports.playbook import FIGURES, achieved  # noqa: E402


def main() -> int:
    boms = {
        name: compile_file(ROOT / "designs" / f"{name}.yaml")[0].extra["bom"]
        for name in sorted({f.design for f in FIGURES} | {f.base for f in FIGURES if f.base})
    }
    bad = 0
    print(f"{'figure':58} {'playbook':>10} {'railyard':>10} {'off by':>9}  ok")
    for f in FIGURES:
        got = achieved(f, boms)
        ok = f.within(got)
        bad += not ok
        print(f"{f.label:58} {f.fmt(f.target):>10} {f.fmt(got):>10} {f.fmt_off(got):>9}  {'yes' if ok else 'NO'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
