"""Renderers: plan -> files. Each renderer is a pure function returning {relative path: text};
`render_all` gathers them so the writer can commit everything at once or nothing."""

from __future__ import annotations

from collections.abc import Callable

from generators.model.plan import Plan, dumps
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

Renderer = Callable[[Plan], dict[str, str]]


def render_plan_json(plan: Plan) -> dict[str, str]:
    return {"plan.json": dumps(plan)}


# switch configs through the vendor registry: each switch by the module of its catalog `os`
RENDERERS: list[Renderer] = [render_plan_json, render_frontend, render_oob, render_kea, render_netbox_csv,
                             render_storage_tenants]
RENDERERS += [render_slurm, render_backend, render_hosts]
RENDERERS += [render_cabling, render_floor, render_labels, render_rows]
RENDERERS.append(render_bom)  # DIR/bom.csv, bom.json, bom.html


def render_all(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for r in RENDERERS:
        for path, text in r(plan).items():
            if path in files:
                raise RuntimeError(f"two renderers write {path}")
            files[path] = text
    return dict(sorted(files.items()))
