"""What a site amounts to, read from a compiled plan: GPU, switch and cable counts, cost. Shared by
the Pulumi stack outputs and `railyard diff`.

Cables come from the cable plan (`plan.extra["cables"]`, `plan.extra["cabling"]`) and cost from the
BoM (`plan.extra["bom"]`); a plan compiled without those stages gives None (unknown), never zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from generators.model.plan import Plan
from generators.reports.summary import counts


def cables(plan: Plan) -> list[dict[str, str]] | None:
    """One row per link's cable run (a twin cable or a pair of optics serves two links), keyed by its
    printed label, or None when the plan has no cable plan."""
    records = plan.extra.get("cables")
    if not isinstance(records, list):
        return None
    rows = []
    for rec in records:
        for i, label in enumerate(rec["labels"]):
            rows.append({"label": label, "cable_id": rec["id"], "network": rec["network"], "media": rec["media"],
                         "part": rec["parts"][i], "length_m": f"{rec['length_m'][i]:g}",
                         "a_transceiver": rec.get("a_transceiver") or "",
                         "b_transceiver": rec.get("b_transceiver") or ""})
    return rows


def cable_label(row: Mapping[str, str]) -> str:
    return row["label"]


def bom(plan: Plan) -> dict[str, Any] | None:
    raw = plan.extra.get("bom")
    return dict(raw) if isinstance(raw, Mapping) else None


def _usd(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def site_facts(plan: Plan, files: Mapping[str, str]) -> dict[str, Any]:
    c = counts(plan)
    by_net: Counter[str] = Counter()
    for key, n in c["switches"].items():
        by_net[key.split("/")[0]] += n
    links_by_net: Counter[str] = Counter()
    for key, n in c["links"].items():
        links_by_net[key.split("/")[0]] += n
    cabling = plan.extra.get("cabling")
    by_medium = dict(sorted(cabling["cables"].items())) if isinstance(cabling, Mapping) else None
    b = bom(plan)
    total = _usd(b.get("total_usd")) if b else None
    per_gpu = _usd(b.get("per_gpu_usd")) if b else None
    if per_gpu is None and total is not None and c["gpus"]:
        per_gpu = total / c["gpus"]
    by_cat = b.get("by_category") if b else None
    return {
        "design": plan.design["name"],
        "gpus": c["gpus"],
        "servers": c["servers"],
        "switches": sum(by_net.values()),
        "switches_by_network": dict(sorted(by_net.items())),
        "switches_by_role": c["switches"],
        "links": sum(links_by_net.values()),
        "links_by_network": dict(sorted(links_by_net.items())),
        "cables": sum(by_medium.values()) if by_medium is not None else None,
        "cables_by_network_medium": by_medium,
        "cost_total_usd": total,
        "cost_per_gpu_usd": per_gpu,
        "cost_by_category": ({k: _usd(v) for k, v in sorted(by_cat.items())}
                             if isinstance(by_cat, Mapping) else None),
        "artifacts": len(files),
    }
