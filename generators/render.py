"""Renderers: plan -> files. Each renderer is a pure function returning {relative path: text};
`render_all` gathers them so the writer can commit everything at once or nothing."""

from __future__ import annotations

from collections.abc import Callable

from generators.bom_render import render_bom
from generators.cabling_render import render_cabling, render_floor
from generators.infiniband import render_infiniband
from generators.plan import Plan, dumps
from generators.render_eos import render_frontend_eos, render_oob_eos
from generators.render_ipam import render_ipam
from generators.render_oob_dhcp import render_kea
from generators.render_sonic import render_frontend_sonic, render_oob
from generators.render_storage_tenants import render_storage_tenants
from generators.slurm import render_slurm

Renderer = Callable[[Plan], dict[str, str]]


def render_plan_json(plan: Plan) -> dict[str, str]:
    return {"plan.json": dumps(plan)}


RENDERERS: list[Renderer] = [render_plan_json, render_frontend_sonic, render_frontend_eos, render_oob, render_oob_eos,
                             render_kea, render_ipam, render_storage_tenants]
RENDERERS += [render_slurm, render_infiniband]
RENDERERS += [render_cabling, render_floor]
RENDERERS.append(render_bom)  # DIR/bom.csv, bom.json, bom.html


def render_all(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for r in RENDERERS:
        for path, text in r(plan).items():
            if path in files:
                raise RuntimeError(f"two renderers write {path}")
            files[path] = text
    return dict(sorted(files.items()))
