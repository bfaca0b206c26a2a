"""What a variant is measured by: each metric reads a figure a stage already wrote into the compiled plan
(the BoM's total, the cooling section's megawatts, the invariants' bisection, the cable plan's counts),
so the search ranks variants by exactly what `railyard compile` reports for them; nothing is recomputed.

A metric has a key (its name in points.json, with its unit: `capex_usd`) and a short name a space file
may use instead (`capex`); `better` says which way the Pareto front and a constraint read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from shapely.geometry import Polygon

from generators.model.plan import Plan


class Better(StrEnum):
    LOWER = "lower"
    HIGHER = "higher"


@dataclass(frozen=True, slots=True)
class Metric:
    key: str  # in points.json: "capex_usd"
    short: str  # what a space file may write instead: "capex"
    label: str  # for people: axis titles and table heads
    better: Better
    read: Callable[[Plan], float]


def _bom_total(plan: Plan) -> float:
    assert plan.bom is not None, "the BoM stage runs in every compile"
    return plan.bom.total_usd


def _per_gpu(plan: Plan) -> float:
    assert plan.bom is not None, "the BoM stage runs in every compile"
    return plan.bom.per_gpu_usd


def _gpus(plan: Plan) -> float:
    assert plan.bom is not None, "the BoM stage runs in every compile"
    return float(plan.bom.gpus)


def _power_mw(plan: Plan) -> float:
    # the cooling section's figure (racks and CDUs) when the site is liquid-cooled, else the racks' draw
    if plan.cooling is not None:
        return plan.cooling.mw
    return round(sum(r.power_kw for r in plan.racks) / 1000, 4)


def _bisection(plan: Plan) -> float:
    bis = plan.networks.backend.bisection
    return bis.ratio if bis is not None else 0.0


def _optics(plan: Plan) -> float:
    assert plan.cabling is not None, "the cabling stage runs in every compile"
    return float(sum(plan.cabling.transceivers.values()))


def _cables(plan: Plan) -> float:
    assert plan.cabling is not None, "the cabling stage runs in every compile"
    return float(sum(plan.cabling.cables.values()))


def _racks(plan: Plan) -> float:
    return float(len(plan.racks))


def _floor_m2(plan: Plan) -> float:
    if plan.floor is None:
        return 0.0
    return round(Polygon(plan.floor.outline_mm).area / 1e6, 2)


def _longest_cable_m(plan: Plan) -> float:
    return max((max(c.length_m) for c in plan.cables or [] if c.length_m), default=0.0)


METRICS: tuple[Metric, ...] = (
    Metric("capex_usd", "capex", "capex (USD)", Better.LOWER, _bom_total),
    Metric("per_gpu_usd", "per_gpu", "capex per GPU (USD)", Better.LOWER, _per_gpu),
    Metric("gpus", "gpus", "GPUs", Better.HIGHER, _gpus),
    Metric("power_mw", "power", "site power (MW)", Better.LOWER, _power_mw),
    Metric("bisection", "bisection", "backend bisection (max-flow share of demand)", Better.HIGHER, _bisection),
    Metric("optics", "optics", "transceivers", Better.LOWER, _optics),
    Metric("cables", "cables", "cables", Better.LOWER, _cables),
    Metric("racks", "racks", "racks", Better.LOWER, _racks),
    Metric("floor_m2", "floor_area", "hall area (m²)", Better.LOWER, _floor_m2),
    Metric("longest_cable_m", "longest_cable", "longest cable (m)", Better.LOWER, _longest_cable_m),
)
BY_NAME: dict[str, Metric] = {**{m.key: m for m in METRICS}, **{m.short: m for m in METRICS}}
NAMES: tuple[str, ...] = tuple(sorted(BY_NAME))


def measure(plan: Plan) -> dict[str, float]:
    """Every metric of a compiled plan, by key, in METRICS order."""
    return {m.key: m.read(plan) for m in METRICS}
