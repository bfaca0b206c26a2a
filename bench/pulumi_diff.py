"""Size of `pulumi preview --diff` for a design change, and of the stack's state, on the real engine.

Deploys DESIGN (`pulumi up`, the state written after every step), exports the state, then sets
`railyard:overrides` and counts the lines and bytes `pulumi preview --diff` prints: the review a CI
job posts for that change (issue 12 measured 91,469 lines for h100-1024-vms 1:1 -> 2:1).

Run: python bench/pulumi_diff.py [--design h100-1024-vms] [--set backend.oversubscription=2:1] [--before]
  --before  deploy with the program as it was before the state kept artifacts by hash
            (tests/engine_program_before_hash), to measure the old numbers
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.pulumi_engine import Stack  # noqa: E402

BEFORE = ROOT / "tests" / "engine_program_before_hash"


def measure(design: str, overrides: list[str], before: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "site"
        st = Stack(
            Path(tmp),
            {"railyard:design": str(ROOT / "designs" / f"{design}.yaml"), "railyard:outDir": str(out)},
            main=BEFORE if before else ROOT,
            pythonpath=BEFORE if before else None,
        )
        t0 = time.perf_counter()
        st.up()
        up_s = time.perf_counter() - t0
        state = st.run("stack", "export").stdout
        plan_text = (out / "plan.json").read_text()
        st.configure({"railyard:overrides": overrides})
        t0 = time.perf_counter()
        diff = st.run("preview", "--diff").stdout
        return {
            "design": design,
            "overrides": overrides,
            "program": "before (content in state)" if before else "now",
            "up_s": round(up_s, 1),
            "preview_s": round(time.perf_counter() - t0, 1),
            "state_bytes": len(state.encode()),
            "plan_json_in_state": json.dumps(plan_text)[1:-1][:2000] in state,
            "preview_diff_lines": len(diff.splitlines()),
            "preview_diff_bytes": len(diff.encode()),
            "preview_tail": diff.splitlines()[-8:],
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--design", default="h100-1024-vms")
    ap.add_argument("--set", dest="overrides", action="append", default=None)
    ap.add_argument("--before", action="store_true")
    args = ap.parse_args()
    print(json.dumps(measure(args.design, args.overrides or ["backend.oversubscription=2:1"], args.before), indent=1))


if __name__ == "__main__":
    main()
