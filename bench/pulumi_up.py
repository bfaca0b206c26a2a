"""Wall time of `pulumi up` for a design on the real engine and a local file backend, then of a
no-change re-run (`up` again, and `preview --expect-no-changes`), then `destroy`.

Run: python bench/pulumi_up.py [--design h100-1024-optimized] [--synthetic N] [--checkpoints]
  --synthetic N  add N artifacts through the same component and provider (tests/engine_program)
  --checkpoints  let the file backend write the state after every step (default: at the end only,
                 PULUMI_SKIP_CHECKPOINTS=true, as the tests do)
The engine comes from scripts/install-pulumi.sh (found or built); state lives in a temp dir.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.pulumi_engine import Secret, Stack, snapshot  # noqa: E402


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--design", default="h100-1024-optimized")
    ap.add_argument("--synthetic", type=int, default=0)
    ap.add_argument("--checkpoints", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="railyard-bench-") as tmp:
        out = Path(tmp) / "site"
        config = {"railyard:design": f"designs/{a.design}.yaml", "railyard:outDir": str(out)}
        main_dir = ROOT
        if a.synthetic:
            config.update({"railyard:count": a.synthetic, "railyard:racked": "true",
                           "railyard:bmcPassword": Secret("bench-Secret-123")})
            main_dir = ROOT / "tests" / "engine_program"
        t0 = time.perf_counter()
        st = Stack(Path(tmp), config, main=main_dir, skip_checkpoints=not a.checkpoints)
        setup = time.perf_counter() - t0
        first = timed(lambda: st.run("up", "--yes", "--skip-preview"))
        files = snapshot(out)
        resources = len(st.export()["deployment"]["resources"])
        again = timed(lambda: st.run("up", "--yes", "--skip-preview"))
        assert snapshot(out) == files, "the no-change up rewrote files"
        preview = timed(lambda: st.run("preview", "--expect-no-changes"))
        destroy = timed(lambda: st.run("destroy", "--yes", "--skip-preview"))
    mode = "checkpoint per step" if a.checkpoints else "PULUMI_SKIP_CHECKPOINTS=true"
    print(f"design {a.design}{f' + {a.synthetic} synthetic artifacts' if a.synthetic else ''} ({mode})")
    print(f"  artifacts {len(files):>6,}   resources in state {resources:,} (incl. stack, site, groups)")
    print(f"  stack init + config      {setup:7.1f} s")
    print(f"  pulumi up (create all)   {first:7.1f} s")
    print(f"  pulumi up (no change)    {again:7.1f} s")
    print(f"  preview --expect-no-changes {preview:4.1f} s")
    print(f"  pulumi destroy           {destroy:7.1f} s")


if __name__ == "__main__":
    main()
