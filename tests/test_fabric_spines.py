"""The spine layer as a design choice (issue #39 item 1): backend.spines_per_group, backend.spine_downlinks
and backend.pods: rail_groups, on the shipped GB200 design (NVIDIA's published counts are rows of
tests/test_published_rows.py); here what the fields do to the graph and the fields' refusals, each naming
the field the user wrote."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan
from tests.conftest import DESIGNS

GB200 = "gb200-nvl72-1152"
ONE_SU = ("compute.racks=8", "tenants=[]")


def _refused(*sets: str) -> list[tuple[str, str]]:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{GB200}.yaml", list(sets))
    return [(p.field, p.message) for p in exc.value.problems]


def _ports(plan: Plan, tier: str, side: str) -> Counter[str]:
    return Counter(getattr(lk, side) for lk in plan.links if lk.network == "backend" and lk.tier == tier)


def test_rail_group_pods_hold_one_rail_of_one_unit_under_their_own_spines(compiled: Callable[..., Plan]) -> None:
    plan = compiled(GB200)
    be, devs = plan.design.backend, plan.index()
    assert be.pods == "rail_groups" and be.spines_per_group is not None and be.spine_downlinks is not None
    group_of: dict[str, tuple[int, int]] = {}  # spine -> the (unit, rail) of every leaf under it
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "leaf-spine":
            leaf = devs[lk.a_device]
            key = (leaf.attrs["su"], leaf.attrs["rail"])
            assert group_of.setdefault(lk.b_device, key) == key, f"{lk.b_device} spans two groups"
    groups = Counter(group_of.values())
    assert len(groups) == plan.networks.backend.scalable_units * plan.networks.backend.rails
    assert set(groups.values()) == {be.spines_per_group}
    # each leaf: its uplinks split evenly over its group's spines; each spine: spine_downlinks down, as many up
    per_pair = Counter(
        (lk.a_device, lk.b_device) for lk in plan.links if lk.network == "backend" and lk.tier == "leaf-spine"
    )
    assert set(per_pair.values()) == {plan.networks.backend.uplinks_per_leaf // be.spines_per_group}
    down, up = _ports(plan, "leaf-spine", "b_device"), _ports(plan, "spine-core", "a_device")
    assert set(down.values()) == set(up.values()) == {be.spine_downlinks}


def test_spines_per_group_sets_the_count_of_a_rail_plane(compiled: Callable[..., Plan]) -> None:
    plan = compiled(GB200, *ONE_SU, "backend.spine_grouping=per_rail", "backend.pods=scalable_units")
    roles = Counter(d.role for d in plan.devices if d.network == "backend" and d.kind == "switch")
    assert roles == {"leaf": 32, "spine": 4 * 6}
    assert plan.networks.backend.tiers == 2 and plan.networks.backend.links_per_leaf_spine == 18 // 6


@pytest.mark.parametrize(
    ("sets", "field", "says"),
    [
        (("backend.spines_per_group=5",), "backend.spines_per_group", "do not split a leaf's 18 uplinks"),
        (("backend.spine_downlinks=40",), "backend.spine_downlinks", "as many ports as the leaves"),
        (("backend.spine_downlinks=65",), "backend.spine_downlinks", "more than a QM9700 has"),
        (("backend.spines_per_group=2",), "backend.spines_per_group", "does not fit 24 spine downlinks"),
        (("backend.spine_grouping=per_rail",), "backend.pods", "spine_grouping shared"),
        (("backend.sus_per_pod=2",), "backend.sus_per_pod", "leave sus_per_pod unset"),
    ],
)
def test_a_spine_layer_that_cannot_be_built_is_refused_at_its_field(
    sets: tuple[str, ...], field: str, says: str
) -> None:
    problems = _refused(*sets)
    assert any(f == field and says in m for f, m in problems), problems
