"""DIR/failure-domains.csv: what one switch, one plane or one rack of switches takes away from a
multi-plane backend, one row per kind of failure, as the invariants stage measured it on the fabric's
graph (`networks.backend.failure_domains`, generators/stages/failures.py): the GPUs losing bandwidth,
those cut off, the worst GPU's share of its bandwidth kept and the bisection kept. Nothing here is
recomputed; a backend without planes has no such rows and gets no file."""

from __future__ import annotations

from generators.model.plan import Plan
from generators.text.csvtext import csv_text

PATH = "failure-domains.csv"
HEADER = (
    "failure",
    "failed",
    "switches",
    "gpus_losing_bandwidth",
    "gpus_cut_off",
    "worst_gpu_bandwidth_kept",
    "bisection_gbps",
    "bisection_kept",
)


def render_failures(plan: Plan) -> dict[str, str]:
    rows = plan.networks.backend.failure_domains
    if not rows:
        return {}
    return {
        PATH: csv_text(
            HEADER,
            [
                [
                    f.scenario,
                    f.failed,
                    f.switches,
                    f.gpus_losing_bandwidth,
                    f.gpus_cut_off,
                    f"{f.worst_gpu_bandwidth_kept:.4f}",
                    f.bisection_gbps,
                    f"{f.bisection_kept:.4f}",
                ]
                for f in rows
            ],
        )
    }
