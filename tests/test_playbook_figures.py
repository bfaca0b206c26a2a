"""The shipped designs and the one catalog reproduce the playbook's cost figures.

Node prices exactly; all-in cost per compute server (excluding storage) within 3%; the backend
fabric's cost against the reference within 2 percentage points. The catalog has no per-design
prices, so these can only pass if the plans' switch counts and optics/copper mix differ the way the
playbook says they do.
"""

from __future__ import annotations

import pytest

from generators.reports.playbook import FIGURES, Figure, achieved


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f.label)
def test_playbook_figure(compiled, figure: Figure) -> None:
    names = {figure.design, figure.base} - {""}
    boms = {n: compiled(n).bom for n in names}
    got = achieved(figure, boms)
    assert figure.within(got), f"{figure.label}: playbook {figure.fmt(figure.target)}, railyard {figure.fmt(got)}"


def test_the_figures_are_the_playbooks() -> None:
    """Guard against someone 'fixing' a failing calibration by moving the target or the tolerance."""
    table = {(f.design, f.metric): (f.target, f.tolerance, f.mode) for f in FIGURES}
    assert table == {
        ("h100-1024-reference", "node"): (270_000, 0, "exact"),
        ("h100-1024-optimized", "node"): (256_400, 0, "exact"),
        ("h100-1024-reference", "per_server_excl_storage"): (318_000, 0.03, "rel"),
        ("h100-1024-optimized", "per_server_excl_storage"): (283_000, 0.03, "rel"),
        ("h100-1024-tor", "backend_delta_pct"): (-34.8, 2.0, "points"),
        ("h100-1024-vms", "backend_delta_pct"): (-24.9, 2.0, "points"),
        ("h100-1024-optimized", "backend_delta_pct"): (-31.6, 2.0, "points"),
    }


def test_backend_percentages_by_hand(compiled) -> None:
    """The same check without the helper: (design backend / reference backend - 1) x 100."""
    ref = compiled("h100-1024-reference").bom.backend_fabric_usd
    for name, target in (("h100-1024-tor", -34.8), ("h100-1024-vms", -24.9), ("h100-1024-optimized", -31.6)):
        got = (compiled(name).bom.backend_fabric_usd / ref - 1) * 100
        assert abs(got - target) <= 2.0, (name, got)
