"""One variant through the compiler without rendering a file: the fast evaluation path.

It runs what `railyard compile` runs up to the plan (validate_design, then compile_loaded: the fabric and
every stage of compiler.STAGES, the BoM last) and stops there: no renderer, no output folder. So a point's
capex is the BoM stage's own total, and a variant the compile would refuse (a stage's DesignError, e.g. a
rack over its power) is refused here with the same problems. The stages after cabling (netplan,
backend_net, slurm, infiniband) cost ~15% of the stages' time and can refuse a design, so they run too:
a point called feasible here compiles. Rendering and writing are ~80% of a full compile at 1,024 GPUs
(bench/explore.py measures the ratio).

A task carries the base design's data rather than its path, so a Dask worker on another machine needs
railyard installed, not the user's files; the parts catalog is the one railyard ships (plus a design's
own `catalog:` overlay, which is part of the data).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from generators.compiler import compile_loaded
from generators.explore.metrics import measure
from generators.model.design.loader import validate_design
from generators.model.errors import DesignError, Problem
from generators.model.sections import Bom
from generators.model.yamlload import SourceMap, deep_merge, split_path


@dataclass(frozen=True, slots=True)
class Task:
    point: str  # the point's id: "p0007"
    base: dict[str, Any]  # the base design's data, `extends:` merged
    base_src: SourceMap  # where each of its values was written
    doc: dict[str, Any]  # the point's document (variant.point_document): merged over the base
    wrote: tuple[tuple[str, str], ...]  # (field path, where the space file set it)


@dataclass(frozen=True, slots=True)
class Outcome:
    point: str
    metrics: dict[str, float] | None  # None: the design was refused
    refusal: list[Problem] = field(default_factory=list)
    bom: Bom | None = None
    cpu_s: float = 0.0  # CPU seconds this evaluation took in its process


def evaluate(task: Task) -> Outcome:
    start = time.process_time()
    src = dict(task.base_src)
    for path, at in task.wrote:
        parts = split_path(path)
        for k in [k for k in src if k[: len(parts)] == parts]:
            del src[k]  # the base file's lines inside a value the space replaced no longer say where it is
        src[parts] = at
    try:
        design, catalog, src = validate_design(deep_merge(task.base, task.doc), src)
        plan = compile_loaded(design, catalog, src)
    except DesignError as exc:
        return Outcome(task.point, None, list(exc.problems), None, time.process_time() - start)
    return Outcome(task.point, measure(plan), [], plan.bom, time.process_time() - start)
