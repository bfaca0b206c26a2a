"""The compiler pipeline: design (validated) -> fabric graph -> invariants -> plan.

Each stage is a plain function of the previous stage's output; later stages (placement, cabling)
append themselves to STAGES. Nothing here writes files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from generators.gc_pause import paused_gc
from generators.model.catalog import Catalog
from generators.model.design import Design, load_design
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.yamlload import SourceMap, where
from generators.stages import backend_net, cabling, infiniband, invariants, netplan, placement, slurm
from generators.stages.bom import bom_stage
from generators.stages.fabric import build_fabric

# A stage refines the plan in place or raises DesignError; it reads only the plan and the catalog.
# Placement runs before the invariants because it rewires the out-of-band network rack-locally (and
# adds the PDUs), so the invariants check the wiring that is built; cabling needs a sound graph.
Stage = Callable[[Plan, Catalog], None]
STAGES: list[Stage] = [
    placement.place,
    invariants.check,
    cabling.plan_cables,
    netplan.plan_network,
    backend_net.plan_backend,
]
STAGES += [slurm.check, infiniband.check]  # Slurm topology rules, tenant isolation on InfiniBand
STAGES.append(bom_stage)  # last: prices the finished plan (counts, cables, racks)


# told the name of each stage as it starts (the CLI's progress line)
OnStage = Callable[[str], None]


def stage_name(stage: Stage) -> str:
    """A stage's name for people: its module's (placement, cabling, ...)."""
    return stage.__module__.rsplit(".", 1)[-1].replace("_", " ")


def compile_design(design: Design, catalog: Catalog, on_stage: OnStage | None = None) -> Plan:
    with paused_gc():  # millions of long-lived objects at 98k GPUs and no cycles: see generators.gc_pause
        if on_stage is not None:
            on_stage("fabric")
        plan = build_fabric(design, catalog)
        for stage in STAGES:
            if on_stage is not None:
                on_stage(stage_name(stage))
            stage(plan, catalog)
    return plan


def compile_file(
    path: Path, overrides: list[str] | None = None, catalog_path: Path | None = None, on_stage: OnStage | None = None
) -> tuple[Plan, Design, Catalog]:
    if on_stage is not None:
        on_stage("loading the design")
    design, catalog, src = load_design(path, overrides, catalog_path)
    return compile_loaded(design, catalog, src, on_stage), design, catalog


def compile_loaded(design: Design, catalog: Catalog, src: SourceMap, on_stage: OnStage | None = None) -> Plan:
    """compile_design of what load_design returned, its errors pointed at the design's YAML lines."""
    try:
        return compile_design(design, catalog, on_stage)
    except DesignError as exc:
        # stages name fields; point each at the YAML line that set it (or its section)
        exc.problems = [p if p.where else replace(p, where=where(src, tuple(p.field.split(".")))) for p in exc.problems]
        raise
