"""What a site amounts to, read from a compiled plan and its rendered files: GPU, switch and cable
counts, cost. Shared by the Pulumi stack outputs and `railyard diff`.

Cables and cost come from later stages (the cable plan and the BoM). They are read generically so
this module needs no change when those stages land or grow: cables from `plan.extra["cables"]` or
else a rendered `cables.csv`; the BoM from `plan.extra["bom"]` or else a rendered `bom.json`.
Without them the counts and costs are None (unknown), never zero.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from generators.plan import Plan
from generators.summary import counts


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{key}_"))
        else:
            out[key] = v
    return out


def _named(files: Mapping[str, str], basename: str) -> str | None:
    """The shallowest rendered file called `basename` (e.g. cabling/cables.csv), if any."""
    hits = sorted((p.count("/"), p) for p in files if p.rsplit("/", 1)[-1] == basename)
    return hits[0][1] if hits else None


def cables(plan: Plan, files: Mapping[str, str]) -> list[dict[str, str]] | None:
    """One flat dict of strings per cable run (one per link), or None when there is no cable plan."""
    raw: Any = plan.extra.get("cables")
    rows: list[dict[str, Any]]
    if isinstance(raw, Mapping):
        raw = [{"cable_id": k, **v} if isinstance(v, Mapping) else {"cable_id": k, "value": v} for k, v in raw.items()]
    if isinstance(raw, list) and all(isinstance(r, Mapping) for r in raw):
        rows = [_flatten(r) for r in raw]
    elif (path := _named(files, "cables.csv")) is not None:
        rows = list(csv.DictReader(io.StringIO(files[path])))
    else:
        return None
    return [{k: "" if v is None else str(v) for k, v in r.items()} for r in rows]


def cable_label(row: Mapping[str, str]) -> str:
    if row.get("label"):
        return row["label"]
    a = f"{row.get('a_device', '?')}:{row.get('a_port', '?')}"
    b = f"{row.get('b_device', '?')}:{row.get('b_port', '?')}"
    return row.get("cable_id") or f"{a}-{b}"


def cable_medium(row: Mapping[str, str]) -> str:
    return row.get("media") or row.get("medium") or "unknown"


def cable_count(rows: list[dict[str, str]]) -> int:
    """Physical cables: runs sharing a cable_id (a twin-port cable or splitter) count once."""
    ids = [r.get("cable_id", "") for r in rows]
    return len(set(ids)) if all(ids) else len(rows)


def cables_by_network_medium(rows: list[dict[str, str]]) -> dict[str, int]:
    seen: dict[tuple[str, str], set[str]] = {}
    for i, r in enumerate(rows):
        seen.setdefault((r.get("network") or "unknown", cable_medium(r)), set()).add(r.get("cable_id") or f"#{i}")
    return {f"{n}/{m}": len(ids) for (n, m), ids in sorted(seen.items())}


def bom(plan: Plan, files: Mapping[str, str]) -> dict[str, Any] | None:
    raw = plan.extra.get("bom")
    if not isinstance(raw, Mapping):
        path = _named(files, "bom.json")
        raw = json.loads(files[path]) if path is not None else None
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
    rows = cables(plan, files)
    b = bom(plan, files)
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
        "cables": cable_count(rows) if rows is not None else None,
        "cables_by_network_medium": cables_by_network_medium(rows) if rows is not None else None,
        "cost_total_usd": total,
        "cost_per_gpu_usd": per_gpu,
        "cost_by_category": ({k: _usd(v) for k, v in sorted(by_cat.items())}
                             if isinstance(by_cat, Mapping) else None),
        "artifacts": len(files),
    }
