"""`railyard compare`: designs side by side, cost by category, each against the first design.

The comparison reads nothing but each design's BoM (which reads nothing but its plan), so a delta
here is exactly what the designs' differences cost: the playbook's backend savings (top-of-rack,
virtual modular switch, 2:1) show up as the backend row's percentage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.table import Table

from generators.model.sections import Bom
from generators.renderers.bom import usd
from generators.stages.bom import CATEGORIES, CATEGORY_TITLES, pct

# (key in bom.json, label) for the headline rows under the categories
TOTAL_ROWS = (
    ("total_usd", "total"),
    ("per_server_excl_storage_usd", "per compute server, excl. storage"),
    ("per_server_usd", "per compute server"),
    ("per_gpu_usd", "per GPU"),
    ("node_usd", "compute node"),
)


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    values: tuple[float, ...]
    emphasis: bool = False

    def deltas(self) -> tuple[float, ...]:
        base = self.values[0]
        return tuple(pct(v, base) for v in self.values)


def compare_rows(boms: list[Bom]) -> list[Row]:
    rows = []
    for c in CATEGORIES:
        vals = tuple(float(b.by_category.get(c, 0.0)) for b in boms)
        if any(vals):
            rows.append(Row(CATEGORY_TITLES[c], vals, emphasis=c == "backend"))
    for key, label in TOTAL_ROWS:
        vals = tuple(float(b.node["unit_usd"] if key == "node_usd" else getattr(b, key)) for b in boms)
        rows.append(Row(label, vals, emphasis=key in ("total_usd", "per_server_excl_storage_usd")))
    return rows


def _delta(d: float) -> str:
    if math.isnan(d):
        return "n/a"
    if abs(d) < 0.05:
        return "±0.0%"
    return f"{d:+.1f}%"


def _cell(value: float, delta: float, first: bool) -> str:
    return usd(value) if first else f"{usd(value)} ({_delta(delta)})"


def compare_table(boms: list[Bom]) -> Table:
    t = Table(title=f"railyard compare: cost by category, deltas against {boms[0].design}")
    t.add_column("", no_wrap=True)
    for i, b in enumerate(boms):
        t.add_column(f"{b.design}\n{b.gpus:,} GPUs" + ("" if i else " (base)"), justify="right")
    for row in compare_rows(boms):
        cells = [_cell(v, d, i == 0) for i, (v, d) in enumerate(zip(row.values, row.deltas(), strict=True))]
        style = "bold" if row.emphasis else None
        t.add_row(row.label, *cells, style=style)
    return t


def compare_markdown(boms: list[Bom]) -> str:
    head = ["USD"] + [f"{b.design}" + ("" if i else " (base)") for i, b in enumerate(boms)]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(boms) + "|"]
    for row in compare_rows(boms):
        cells = [_cell(v, d, i == 0) for i, (v, d) in enumerate(zip(row.values, row.deltas(), strict=True))]
        label = f"**{row.label}**" if row.emphasis else row.label
        out.append("| " + " | ".join([label, *cells]) + " |")
    return "\n".join(out) + "\n"
