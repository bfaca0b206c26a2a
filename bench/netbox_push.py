"""Time `railyard netbox push` of a whole site into a real, local NetBox (tests/netbox_service.py:
PostgreSQL on a copy of the migrated template, Redis, NetBox under gunicorn).

Prints, for a push into an empty NetBox and a second push (no change): wall time, requests, objects
per second, and the slowest request kinds. Needs `bash scripts/install-netbox.sh` first.

Run: python bench/netbox_push.py [--design designs/h100-1024-reference.yaml] [--workers 2] [--threads 4]
       [--in-flight 4]
(--workers/--threads: NetBox's gunicorn; --in-flight: railyard's requests at once, `netbox push --workers`)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generators.compiler import compile_file  # noqa: E402
from generators.handover.netbox_sync import WORKERS, Client, push  # noqa: E402
from generators.views.netbox_inventory import inventory  # noqa: E402
from tests.netbox_service import installed, running_netbox  # noqa: E402


def _procs() -> dict[int, tuple[int, str, float]]:
    """pid -> (parent, command line, CPU seconds of the process and its reaped children)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        out[int(pid)] = (int(stat[1]), cmd, sum(int(x) for x in stat[11:15]) / tick)
    return out


def server_cpu(nb: object) -> dict[str, float]:
    """CPU seconds NetBox's gunicorn and its PostgreSQL have used so far (each leader and its workers):
    says whether a push waits on NetBox's CPU or on something else."""
    port = urlsplit(nb.url).port  # type: ignore[attr-defined]
    session = str(nb.root.parent)  # type: ignore[attr-defined]
    procs = _procs()
    leaders = {
        "gunicorn": [
            p
            for p, (pp, cmd, _) in procs.items()
            if f"127.0.0.1:{port}" in cmd and f"127.0.0.1:{port}" not in procs.get(pp, (0, "", 0))[1]
        ],
        "postgres": [p for p, (_, cmd, _) in procs.items() if f"{session}/pgdata" in cmd],
    }
    return {
        name: sum(procs[p][2] + sum(c for pp, _, c in procs.values() if pp == p) for p in pids)
        for name, pids in leaders.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--design", default=str(ROOT / "designs" / "h100-1024-reference.yaml"))
    ap.add_argument("--workers", type=int, default=2, help="NetBox's gunicorn workers")
    ap.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    ap.add_argument("--in-flight", type=int, default=WORKERS, help="railyard's requests at once")
    args = ap.parse_args()
    plan, _, _ = compile_file(Path(args.design), [])
    objects = inventory(plan)
    print(f"{plan.design.name}: {len(objects):,} NetBox objects")
    t0 = time.monotonic()
    with running_netbox(installed(), workers=args.workers, threads=args.threads) as nb:
        print(
            f"NetBox {nb.version} up in {time.monotonic() - t0:.1f} s (gunicorn {args.workers} x "
            f"{args.threads} threads; {args.in_flight} requests in flight)"
        )
        for run in ("first push", "second push"):
            c = Client(nb.url, nb.token, workers=args.in_flight)
            cpu0 = server_cpu(nb)
            report = push(objects, c)
            cpu = {k: v - cpu0[k] for k, v in server_cpu(nb).items()}
            t = report.totals()
            n = t["create"] + t["update"] + t["delete"] + t["unchanged"]
            print(
                f"{run}: {report.seconds:.1f} s, {report.requests:,} requests, {n / report.seconds:,.0f} objects/s "
                f"(create {t['create']:,}, update {t['update']:,}, delete {t['delete']:,}, "
                f"unchanged {t['unchanged']:,})"
            )
            print(
                f"  NetBox CPU {cpu['gunicorn']:.0f} s, PostgreSQL CPU {cpu['postgres']:.0f} s: "
                f"{sum(cpu.values()) / report.seconds:.2f} of {os.cpu_count()} cores busy on average"
            )
            print("  request time by kind (requests in flight overlap, so these add up to more than the wall time):")
            for what, sec in c.seconds.most_common(8):
                print(f"  {what:40} {c.calls[what]:5,} requests {sec:7.1f} s")
            c.close()


if __name__ == "__main__":
    main()
