"""The playbook's published cost figures and the tolerance railyard's catalog is calibrated to.

Targets only: nothing here feeds a price. The catalog (designs/catalog.yaml) is one set of prices
for every design; these figures are what its results are checked against (tests and
scripts/playbook_figures.py), so a price change that breaks the calibration fails loudly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from generators.model.sections import Bom


@dataclass(frozen=True, slots=True)
class Figure:
    label: str
    design: str
    metric: Literal["node", "per_server_excl_storage", "backend_delta_pct"]
    target: float
    tolerance: float  # absolute for exact/percentage points, relative for "rel"
    mode: Literal["exact", "rel", "points"]
    base: str = ""  # the design a delta is measured against

    def within(self, got: float) -> bool:
        if self.mode == "exact":
            return abs(got - self.target) < 0.005
        if self.mode == "rel":
            return abs(got / self.target - 1) <= self.tolerance
        return abs(got - self.target) <= self.tolerance

    def fmt(self, x: float) -> str:
        return f"{x:+.1f}%" if self.metric == "backend_delta_pct" else f"${x:,.0f}"

    def fmt_off(self, got: float) -> str:
        if self.mode == "points":
            return f"{got - self.target:+.1f} pt"
        return f"{(got / self.target - 1) * 100:+.2f}%"


REF = "h100-1024-reference"
FIGURES: tuple[Figure, ...] = (
    Figure("compute node, reference configuration", REF, "node", 270_000, 0, "exact"),
    Figure("compute node, optimized chassis", "h100-1024-optimized", "node", 256_400, 0, "exact"),
    Figure("all-in per compute server excl. storage, reference", REF, "per_server_excl_storage", 318_000, 0.03, "rel"),
    Figure(
        "all-in per compute server excl. storage, optimized",
        "h100-1024-optimized",
        "per_server_excl_storage",
        283_000,
        0.03,
        "rel",
    ),
    Figure("backend fabric vs reference, top-of-rack", "h100-1024-tor", "backend_delta_pct", -34.8, 2.0, "points", REF),
    Figure(
        "backend fabric vs reference, virtual modular switch",
        "h100-1024-vms",
        "backend_delta_pct",
        -24.9,
        2.0,
        "points",
        REF,
    ),
    Figure(
        "backend fabric vs reference, VMS + 2:1 oversubscription",
        "h100-1024-optimized",
        "backend_delta_pct",
        -31.6,
        2.0,
        "points",
        REF,
    ),
)


def achieved(f: Figure, boms: dict[str, Bom]) -> float:
    bom = boms[f.design]
    if f.metric == "node":
        return float(bom.node["unit_usd"])
    if f.metric == "per_server_excl_storage":
        return float(bom.per_server_excl_storage_usd)
    base = boms[f.base].backend_fabric_usd
    return (bom.backend_fabric_usd / base - 1) * 100
