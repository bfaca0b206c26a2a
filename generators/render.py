"""Renderers: plan -> files. Each renderer is a pure function returning {relative path: text};
`render_all` gathers them so the writer can commit everything at once or nothing."""

from __future__ import annotations

from collections.abc import Callable

from generators.bom_render import render_bom
from generators.cabling_render import render_cabling, render_floor
from generators.plan import Plan, dumps

Renderer = Callable[[Plan], dict[str, str]]


def render_plan_json(plan: Plan) -> dict[str, str]:
    return {"plan.json": dumps(plan)}


RENDERERS: list[Renderer] = [render_plan_json, render_cabling, render_floor]
RENDERERS.append(render_bom)  # DIR/bom.csv, bom.json, bom.html


def render_all(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for r in RENDERERS:
        for path, text in r(plan).items():
            if path in files:
                raise RuntimeError(f"two renderers write {path}")
            files[path] = text
    return dict(sorted(files.items()))
