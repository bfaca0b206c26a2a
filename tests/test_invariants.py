"""Invariants a valid design cannot break (the builder wires them by rule), proven to catch a
broken graph: the plan is tampered with after building, then checked."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generators.model.design import load_design
from generators.model.errors import DesignError
from generators.stages import invariants
from generators.stages.fabric import build_fabric
from tests.conftest import DESIGNS


def _fresh(name="h100-1024-reference", *sets):
    design, catalog, _ = load_design(DESIGNS / f"{name}.yaml", list(sets))
    return build_fabric(design, catalog), catalog


def _fields(exc: DesignError) -> set[str]:
    return {p.field for p in exc.problems}


def test_untouched_plan_passes():
    plan, catalog = _fresh()
    invariants.check(plan, catalog)


def test_rail_isolation():
    plan, catalog = _fresh()
    # swap the leaf ends of gpu001's rail-0 and rail-1 links: both NICs stay connected once,
    # no port is reused, speeds match, ratios hold; only rail isolation is broken
    i0 = next(i for i, lk in enumerate(plan.links) if lk.a_device == "gpu001" and lk.a_port == "mlx5_0")
    i1 = next(i for i, lk in enumerate(plan.links) if lk.a_device == "gpu001" and lk.a_port == "mlx5_1")
    a, b = plan.links[i0], plan.links[i1]
    plan.links[i0] = replace(a, b_device=b.b_device, b_port=b.b_port)
    plan.links[i1] = replace(b, b_device=a.b_device, b_port=a.b_port)
    with pytest.raises(DesignError) as exc:
        invariants.check(plan, catalog)
    assert _fields(exc.value) == {"backend.rails"}
    assert "rails are not isolated" in str(exc.value)


def test_full_bisection_by_max_flow():
    plan, catalog = _fresh()
    # SU 3-4 leaves' links to spine09..16 move to copies of those spines that only SU 3-4 reach:
    # every port count, speed and leaf ratio still holds, the fabric stays connected through
    # spine01..08, but only half the bandwidth can cross from SU 1-2 to SU 3-4.
    first_half = {f"su{u}-rail{r}-leaf" for u in (1, 2) for r in range(8)}
    moved = 0
    for i, lk in enumerate(plan.links):
        if lk.tier == "leaf-spine" and lk.network == "backend" and lk.a_device not in first_half:
            spine_no = int(lk.b_device.removeprefix("spine"))
            if spine_no > 8:
                plan.links[i] = replace(lk, b_device=f"x{lk.b_device}")
                moved += 1
    for name in {lk.b_device for lk in plan.links if lk.b_device.startswith("xspine")}:
        orig = plan.device(name[1:])
        plan.devices.append(replace(orig, name=name, attrs=dict(orig.attrs)))
    assert moved
    with pytest.raises(DesignError) as exc:
        invariants.check(plan, catalog)
    assert "backend.oversubscription" in _fields(exc.value)
    assert "not non-blocking" in str(exc.value)


def test_connectivity():
    plan, catalog = _fresh()
    # drop every leaf-spine link of SU 4 and give its leaves uplinks to a private spine instead
    for i, lk in enumerate(plan.links):
        if lk.tier == "leaf-spine" and lk.a_device.startswith("su4-"):
            plan.links[i] = replace(lk, b_device=f"island-{lk.b_device}")
    for name in {lk.b_device for lk in plan.links if lk.b_device.startswith("island-")}:
        orig = plan.device(name.removeprefix("island-"))
        plan.devices.append(replace(orig, name=name, attrs=dict(orig.attrs)))
    with pytest.raises(DesignError) as exc:
        invariants.check(plan, catalog)
    assert "disconnected parts" in str(exc.value)


def test_radix_is_never_exceeded_even_if_names_fit():
    plan, catalog = _fresh()
    # a link onto a port name the QM9700 does not have
    lk = next(lk for lk in plan.links if lk.b_device == "spine01")
    plan.links.append(replace(lk, a_device="gpu001", a_port="mlx5_0", b_port="1/33/1"))
    with pytest.raises(DesignError) as exc:
        invariants.check(plan, catalog)
    assert "needs more ports than its model QM9700" in str(exc.value)
