"""Renders the plan's BoM as DIR/bom.csv (one row per line item, for spreadsheets and procurement),
DIR/bom.json (totals, categories, sizing and lines, for tools) and DIR/bom.html (tables and a stacked
bar chart in inline SVG, readable in a browser and printable, with no external assets)."""

from __future__ import annotations

import json
from typing import Any

import jinja2

from generators.model.design import Design
from generators.model.plan import Plan
from generators.model.sections import Bom
from generators.stages.bom import CATEGORIES, CATEGORY_TITLES, NETWORK_CATEGORIES, plan_bom
from generators.text.csvtext import csv_text
from generators.text.templating import environment

CSV_COLUMNS = (
    "category",
    "kind",
    "part",
    "sku",
    "description",
    "quantity",
    "unit",
    "unit_usd",
    "total_usd",
    "source",
    "date",
)

# one colour per category, chosen to stay distinguishable in greyscale print too
COLORS = {
    "compute": "#2f5d8a",
    "rack": "#9c755f",
    "backend": "#e15759",
    "frontend": "#f28e2b",
    "oob": "#edc948",
    "storage": "#59a14f",
    "management": "#76b7b2",
    "software": "#b07aa1",
}
KIND_COLORS = {"switch": "#4e79a7", "transceiver": "#e15759", "cable": "#59a14f"}


def usd(x: float) -> str:
    return f"${x:,.0f}"


def usd_short(x: float) -> str:
    if abs(x) >= 1e6:
        return f"${x / 1e6:,.2f}M"
    if abs(x) >= 1e3:
        return f"${x / 1e3:,.1f}k"
    return f"${x:,.0f}"


def qty(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"


def bom_csv(bom: Bom) -> str:
    return csv_text(
        CSV_COLUMNS,
        (
            [f"{getattr(ln, c):.2f}" if c in ("unit_usd", "total_usd") else getattr(ln, c) for c in CSV_COLUMNS]
            for ln in bom.lines
        ),
    )


def _segments(parts: list[tuple[str, str, float, str]], width: float) -> list[dict[str, Any]]:
    """Stacked-bar segments: (key, label, value, colour) -> x, width in SVG units, share of the total."""
    total = sum(v for _, _, v, _ in parts) or 1.0
    out, x = [], 0.0
    for key, label, v, color in parts:
        if v <= 0:
            continue
        w = v / total * width
        out.append(
            {
                "key": key,
                "label": label,
                "usd": v,
                "x": round(x, 2),
                "w": round(w, 2),
                "color": color,
                "share": v / total,
            }
        )
        x += w
    return out


def _context(bom: Bom, design: Design) -> dict[str, Any]:
    by_cat = bom.by_category
    cats = [c for c in CATEGORIES if by_cat.get(c, 0) > 0]
    main = _segments([(c, CATEGORY_TITLES[c], by_cat[c], COLORS[c]) for c in cats], 1000.0)
    # the same bar without the compute nodes, whose ~90% share otherwise hides every other choice
    rest = _segments([(c, CATEGORY_TITLES[c], by_cat[c], COLORS[c]) for c in cats if c != "compute"], 1000.0)
    networks = []
    for net in NETWORK_CATEGORIES:
        lines = [ln for ln in bom.lines if ln.category == net]
        if not lines:
            continue
        kinds: dict[str, float] = {}
        for ln in lines:
            kinds[ln.kind] = kinds.get(ln.kind, 0.0) + ln.total_usd
        networks.append(
            {
                "key": net,
                "title": CATEGORY_TITLES[net],
                "usd": by_cat[net],
                "segments": _segments(
                    [(k, k, v, KIND_COLORS.get(k, "#999")) for k, v in kinds.items()],
                    1000.0 * by_cat[net] / max(by_cat[n] for n in NETWORK_CATEGORIES),
                ),
            }
        )
    groups = [
        {
            "key": c,
            "title": CATEGORY_TITLES[c],
            "usd": by_cat[c],
            "color": COLORS[c],
            "lines": [ln for ln in bom.lines if ln.category == c],
        }
        for c in cats
    ]
    return {
        "bom": bom,
        "design": design,
        "main": main,
        "rest": rest,
        "rest_usd": bom.total_usd - by_cat.get("compute", 0.0),
        "networks": networks,
        "groups": groups,
        "kind_colors": KIND_COLORS,
    }


def _env() -> jinja2.Environment:
    env = environment(autoescape=True, trim=True)
    env.filters.update(usd=usd, usd_short=usd_short, qty=qty, pct=lambda x: f"{x * 100:.1f}%")
    return env


def bom_html(bom: Bom, design: Design) -> str:
    return _env().get_template("bom.html.j2").render(**_context(bom, design))


def render_bom(plan: Plan) -> dict[str, str]:
    bom = plan_bom(plan)
    return {
        "bom.csv": bom_csv(bom),
        "bom.json": json.dumps(bom.to_dict(), indent=1, ensure_ascii=False) + "\n",
        "bom.html": bom_html(bom, plan.design),
    }
