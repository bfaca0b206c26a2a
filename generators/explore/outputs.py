"""The explore folder: every point, the front, a design file per point, and pages to read.

    points.json                  every point: overrides (path -> value), objectives, every metric,
                                 feasible, and the refusal (field, message, fix, where) when not
    front.json                   the Pareto front, the same shape
    front.md, front.csv          the front as a table
    index.html                   the scatters (capex vs power, capex vs bisection) and the tables, offline
    points/<point>.yaml          `extends:` the base plus the point's overrides: `railyard compile` of it
                                 is the point
    points/<point>.compare.md    `railyard compare BASE points/<point>.yaml` of a point that compiles

Deterministic byte for byte: nothing here depends on time, the machine or the order workers finished in
(CPU seconds are printed, never written).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from generators.explore.metrics import METRICS, Metric
from generators.explore.search import Point, Result
from generators.explore.space import Space
from generators.model.errors import DesignError
from generators.renderers.bom import usd
from generators.reports.compare import compare_markdown
from generators.text.csvtext import csv_text
from generators.text.jsontext import dumps_indented
from generators.text.templating import environment
from generators.text.yamltext import dump_block

SCHEMA = "railyard.explore/1"


def design_path(p: Point) -> str:
    return f"points/{p.id}.yaml"


def compare_path(p: Point) -> str:
    return f"points/{p.id}.compare.md"


def render_explore(space: Space, result: Result, base: Path, out: Path) -> dict[str, str]:
    """Every file of the explore folder `out` (for the relative `extends:` path of the point files)."""
    extends = os.path.relpath(base.resolve(), (out / "points").resolve())
    on_front = {p.id for p in result.front}
    files: dict[str, str] = {}
    for p in result.points:
        files[design_path(p)] = _design_file(p, extends, base)
        if p.bom is not None:
            files[compare_path(p)] = _compare(p, result, base, out)
    head = _head(space, result, base)
    files["points.json"] = _json({**head, "points": [_record(p, space, p.id in on_front) for p in result.points]})
    files["front.json"] = _json({**head, "points": [_record(p, space, True) for p in result.front]})
    cols, rows = _table(space, result.front)
    files["front.csv"] = csv_text(cols, rows)
    files["front.md"] = _markdown(space, result, base, cols)
    files["index.html"] = _html(space, result, base)
    return dict(sorted(files.items()))


def _json(doc: dict[str, Any]) -> str:
    return dumps_indented(doc, indent=1, ensure_ascii=False) + "\n"


def _head(space: Space, result: Result, base: Path) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "base": base.as_posix(),
        "space": space.path.as_posix(),
        "method": result.method,
        "variants": space.size,
        "searched": len(result.points),
        "feasible": sum(p.feasible for p in result.points),
        "objectives": [m.key for m in space.objectives],
        "constraints": {c.metric.key: {"min": c.min, "max": c.max} for c in space.constraints},
        "base_metrics": result.base_metrics,
    }


def _record(p: Point, space: Space, on_front: bool) -> dict[str, Any]:
    return {
        "id": p.id,
        "design": design_path(p),
        "choices": p.labels,
        "overrides": dict(p.overrides),
        "objectives": {m.key: p.metrics[m.key] for m in space.objectives} if p.metrics else None,
        "metrics": p.metrics,
        "feasible": p.feasible,
        "front": on_front,
        "refusal": [{"field": r.field, "message": r.message, "fix": r.hint, "where": r.where} for r in p.refusal]
        or None,
    }


def _design_file(p: Point, extends: str, base: Path) -> str:
    head = (
        f"# railyard explore point {p.id} of {base.as_posix()}: "
        + ", ".join(f"{k}={v}" for k, v in p.labels.items())
        + "\n# `railyard compile` of this file is the point; its capex is points.json's\n"
    )
    return head + dump_block({"extends": extends, **p.doc})


def _compare(p: Point, result: Result, base: Path, out: Path) -> str:
    assert p.bom is not None
    cmd = f"railyard compare {base.as_posix()} {(out / design_path(p)).as_posix()} --markdown"
    return f"# {p.id} against {base.as_posix()}\n\nWhat `{cmd}` prints:\n\n" + compare_markdown(
        [result.base_bom, p.bom]
    )


def _fmt(m: Metric, v: float) -> str:
    if m.key.endswith("_usd"):
        return usd(v)
    if m.key == "bisection":
        return f"{v:.0%}"
    return f"{v:,.6g}"


def _shown(space: Space) -> list[Metric]:
    """The objectives, then capex per GPU and power when they are not among them."""
    extra = [m for m in METRICS if m.key in ("capex_usd", "per_gpu_usd", "power_mw", "bisection")]
    return [*space.objectives, *(m for m in extra if m not in space.objectives)]


def _table(space: Space, points: list[Point]) -> tuple[list[str], list[list[Any]]]:
    shown = _shown(space)
    cols = ["point", *(a.name for a in space.axes), *(m.key for m in shown), "design"]
    rows = []
    for p in points:
        assert p.metrics is not None
        rows.append([p.id, *(p.labels[a.name] for a in space.axes), *(p.metrics[m.key] for m in shown), design_path(p)])
    return cols, rows


def _markdown(space: Space, result: Result, base: Path, cols: list[str]) -> str:
    shown = _shown(space)
    lines = [
        f"# Pareto front: {base.as_posix()} over {space.path.as_posix()}",
        "",
        f"{len(result.points)} of {space.size:,} variants searched ({result.method}), "
        f"{sum(p.feasible for p in result.points)} feasible, {len(result.front)} on the front "
        f"(objectives: {', '.join(m.key for m in space.objectives)}).",
        "",
        "| " + " | ".join(["point", *(a.name for a in space.axes), *(m.label for m in shown), "compare"]) + " |",
        "|---" * len(space.axes) + "|---" + "|---:" * len(shown) + "|---|",
    ]
    for p in result.front:
        assert p.metrics is not None
        cells = [
            f"[{p.id}]({design_path(p)})",
            *(p.labels[a.name] for a in space.axes),
            *(_fmt(m, p.metrics[m.key]) for m in shown),
            f"[vs base]({compare_path(p)})",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _html(space: Space, result: Result, base: Path) -> str:
    try:
        import plotly.graph_objects as go
        import plotly.io as pio
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise DesignError.one(
            "--out",
            "index.html's scatters need the Python package plotly, which is not installed",
            "pip install 'railyard[search]'",
        ) from None

    by_key = {m.key: m for m in METRICS}
    capex, power, bisection = by_key["capex_usd"], by_key["power_mw"], by_key["bisection"]
    on_front = {p.id for p in result.front}
    groups = (
        ("Pareto front", [p for p in result.points if p.id in on_front], "#d62728"),
        ("feasible", [p for p in result.points if p.feasible and p.id not in on_front], "#1f77b4"),
        ("misses a constraint", [p for p in result.points if p.metrics is not None and not p.feasible], "#aaaaaa"),
    )
    figures = []
    for fig_id, y in (("capex-power", power), ("capex-bisection", bisection)):
        fig = go.Figure()
        for name, pts, colour in groups:
            metrics = [p.metrics for p in pts if p.metrics is not None]
            fig.add_trace(
                go.Scatter(
                    x=[m[capex.key] for m in metrics],
                    y=[m[y.key] for m in metrics],
                    mode="markers",
                    name=name,
                    marker={"color": colour, "size": 10 if name == "Pareto front" else 7},
                    customdata=[[p.id, design_path(p), compare_path(p)] for p in pts],
                    text=[p.id + ": " + ", ".join(f"{k}={v}" for k, v in p.labels.items()) for p in pts],
                    hovertemplate="%{text}<br>capex %{x:$,.0f}<br>" + y.label + " %{y}<extra></extra>",
                )
            )
        fig.update_layout(
            title=f"{capex.label} vs {y.label}",
            xaxis_title=capex.label,
            yaxis_title=y.label,
            template="plotly_white",
            height=460,
            margin={"l": 60, "r": 20, "t": 50, "b": 50},
        )
        # a click on a point opens its comparison against the base
        click = (
            "document.getElementById('{plot_id}').on('plotly_click', "
            "function (d) { window.location.href = d.points[0].customdata[2]; });"
        )
        figures.append(
            pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=fig_id, post_script=click, validate=False)
        )
    rows = []
    for p in result.points:
        rows.append(
            {
                "id": p.id,
                "labels": [p.labels[a.name] for a in space.axes],
                "cells": [_fmt(m, p.metrics[m.key]) if p.metrics else "" for m in _shown(space)],
                "design": design_path(p),
                "compare": compare_path(p) if p.bom is not None else None,
                "front": p.id in on_front,
                "feasible": p.feasible,
                "refusal": p.refusal[0].render() if p.refusal else "",
            }
        )
    return (
        environment(autoescape=True, trim=False)
        .get_template("explore.html.j2")
        .render(
            base=base.as_posix(),
            space=space.path.as_posix(),
            method=result.method,
            size=space.size,
            searched=len(result.points),
            feasible=sum(p.feasible for p in result.points),
            front=len(result.front),
            objectives=", ".join(m.key for m in space.objectives),
            axes=[a.name for a in space.axes],
            metrics=[m.label for m in _shown(space)],
            rows=rows,
            figures=figures,
            plotlyjs=get_plotlyjs(),
        )
    )
