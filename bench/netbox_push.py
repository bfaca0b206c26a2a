"""Time `railyard netbox push` of a whole site into a real, local NetBox (tests/netbox_service.py:
PostgreSQL on a copy of the migrated template, Redis, NetBox under gunicorn).

Prints, for a push into an empty NetBox and a second push (no change): wall time, requests, objects
per second, and the slowest request kinds. Needs `bash scripts/install-netbox.sh` first.

Run: python bench/netbox_push.py [--design designs/h100-1024-reference.yaml] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generators.compiler import compile_file  # noqa: E402
from generators.handover.netbox_inventory import inventory  # noqa: E402
from generators.handover.netbox_sync import Client, push  # noqa: E402
from tests.netbox_service import installed, running_netbox  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--design", default=str(ROOT / "designs" / "h100-1024-reference.yaml"))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    plan, _, _ = compile_file(Path(args.design), [])
    objects = inventory(plan)
    print(f"{plan.design.name}: {len(objects):,} NetBox objects")
    t0 = time.monotonic()
    with running_netbox(installed(), workers=args.workers) as nb:
        print(f"NetBox {nb.version} up in {time.monotonic() - t0:.1f} s")
        for run in ("first push", "second push"):
            c = Client(nb.url, nb.token)
            report = push(objects, c)
            t = report.totals()
            n = t["create"] + t["update"] + t["delete"] + t["unchanged"]
            print(f"{run}: {report.seconds:.1f} s, {report.requests:,} requests, {n / report.seconds:,.0f} objects/s "
                  f"(create {t['create']:,}, update {t['update']:,}, delete {t['delete']:,}, "
                  f"unchanged {t['unchanged']:,})")
            for what, sec in c.seconds.most_common(8):
                print(f"  {what:40} {c.calls[what]:5,} requests {sec:7.1f} s")
            c.close()


if __name__ == "__main__":
    main()
