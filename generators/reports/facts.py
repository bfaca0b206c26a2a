"""What a site amounts to, read from a compiled plan: GPU, switch and cable counts, cost. Shared by
the Pulumi stack outputs and `railyard diff`.

Cables come from the cable plan (`plan.cabling`) and cost from the
BoM (`plan.bom`); a plan compiled without those stages gives None (unknown), never zero.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from generators.model.plan import Plan
from generators.reports.summary import counts


def site_facts(plan: Plan, files: Mapping[str, str]) -> dict[str, Any]:
    c = counts(plan)
    by_net: Counter[str] = Counter()
    for key, n in c["switches"].items():
        by_net[key.split("/")[0]] += n
    links_by_net: Counter[str] = Counter()
    for key, n in c["links"].items():
        links_by_net[key.split("/")[0]] += n
    by_medium = dict(sorted(plan.cabling.cables.items())) if plan.cabling is not None else None
    b = plan.bom  # None: compiled without the BoM stage, so the cost is unknown (not zero)
    return {
        "design": plan.design.name,
        "gpus": c["gpus"],
        "servers": c["servers"],
        "switches": sum(by_net.values()),
        "switches_by_network": dict(sorted(by_net.items())),
        "switches_by_role": c["switches"],
        "links": sum(links_by_net.values()),
        "links_by_network": dict(sorted(links_by_net.items())),
        "cables": sum(by_medium.values()) if by_medium is not None else None,
        "cables_by_network_medium": by_medium,
        "cost_total_usd": b.total_usd if b is not None else None,
        "cost_per_gpu_usd": b.per_gpu_usd if b is not None else None,
        "cost_by_category": dict(sorted(b.by_category.items())) if b is not None else None,
        "artifacts": len(files),
    }
