"""Renderers: plan -> files. Each renderer is a pure function returning {relative path: text};
`render_all` gathers them so the writer can commit everything at once or nothing.

The renderer modules are imported on first use, not with the package: `railyard validate` and the
compile stages import `generators.renderers.netview` (and so this package) but render nothing, and
the renderers bring jinja2, segno and the vendor modules (~0.3 s of a 1.3 s compile at 1,024 GPUs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generators.model.plan import Plan

Renderer = Callable[["Plan"], dict[str, str]]


def render_plan_json(plan: Plan) -> dict[str, str]:
    from generators.model.plan import dumps

    return {"plan.json": dumps(plan)}


def _load() -> list[Renderer]:
    from generators.renderers.bom import render_bom
    from generators.renderers.cabling import render_cabling
    from generators.renderers.floor import render_floor
    from generators.renderers.hosts import render_hosts
    from generators.renderers.netbox_csv import render_netbox_csv
    from generators.renderers.oob_dhcp import render_kea
    from generators.renderers.pack import render_labels, render_rows
    from generators.renderers.slurm import render_slurm
    from generators.renderers.storage_tenants import render_storage_tenants
    from generators.vendors import render_backend, render_frontend, render_oob

    # switch configs through the vendor registry: each switch by the module of its catalog `os`
    found: list[Renderer] = [render_plan_json, render_frontend, render_oob, render_kea, render_netbox_csv,
                             render_storage_tenants]
    found += [render_slurm, render_backend, render_hosts]
    found += [render_cabling, render_floor, render_labels, render_rows]
    found.append(render_bom)  # DIR/bom.csv, bom.json, bom.html
    globals().update({r.__name__: r for r in found})
    return found


def __getattr__(name: str) -> Any:
    # RENDERERS and each render_* function, as module attributes, once asked for (tests patch RENDERERS)
    if name == "RENDERERS" or name.startswith("render_"):
        if "RENDERERS" not in globals():
            globals()["RENDERERS"] = _load()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render_all(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for r in __getattr__("RENDERERS"):
        for path, text in r(plan).items():
            if path in files:
                raise RuntimeError(f"two renderers write {path}")
            files[path] = text
    return dict(sorted(files.items()))
