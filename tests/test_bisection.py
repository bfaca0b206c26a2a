"""The invariants' bisection max-flow (generators.stages.bisection) against networkx's max-flow on the same
graph: every shipped design, oversubscribed, 3-tier, per-plane and per-rail variants, broken fabrics, and
random tiered graphs. The structural proof must also be what answers on the regular fabrics (networkx
is only its fallback)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from generators.model.design import load_design
from generators.stages import bisection, invariants
from generators.stages.bisection import TIER, CapacityGraph, max_flow, networkx_max_flow
from generators.stages.fabric import build_fabric
from tests.conftest import COMPILED_EXAMPLES, DESIGNS

SHIPPED = COMPILED_EXAMPLES  # the 131,072-GPU designs are compiled whole only by bench/multiplane.py
VARIANTS = [
    ("h100-1024-reference", "backend.oversubscription=2:1"),
    ("h100-1024-reference", "backend.spine_grouping=per_rail"),
    ("h100-1024-reference", "compute.count=127", "compute.reserved_slots=1"),
    ("h100-512-roce", "compute.count=1024", "backend.su_size=16"),  # 3 tiers: more units than spine ports
    ("b300-spectrumx", "backend.oversubscription=2:1"),
    ("h100-16k", "backend.oversubscription=2:1"),
    # one unit in rail planes: the halves are cut within each rail (issue #39: cut between rails, 0G)
    (
        "gb200-nvl72-1152",
        "compute.racks=8",
        "tenants=[]",
        "backend.spine_grouping=per_rail",
        "backend.pods=scalable_units",
    ),
]


def _fabric(name: str, *sets: str):
    design, catalog, _ = load_design(DESIGNS / f"{name}.yaml", list(sets))
    return build_fabric(design, catalog), catalog


def _inputs(plan, catalog):
    g = invariants._capacity_graph(plan, "backend")
    bw = invariants._measure_leaves(plan, plan.index(), invariants._backend_nic_ports(plan, catalog))
    halves = invariants.bisection_halves(plan, bw.down)
    tier = {d.name: TIER[d.role] for d in plan.devices if d.network == "backend" and d.role in TIER}
    return g, halves, tier


def _check(plan, catalog, *, proven: bool) -> int:
    g, halves, tier = _inputs(plan, catalog)
    assert halves is not None
    a, b = halves
    want = networkx_max_flow(g, a, b)
    fast = bisection._tree_flow(g, a, b, tier)
    if proven:
        assert fast == want
    assert fast in (None, want)
    assert max_flow(g, a, b, tier) == want
    return want


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_designs(name: str) -> None:
    plan, catalog = _fabric(name)
    _check(plan, catalog, proven=True)


@pytest.mark.parametrize("case", VARIANTS, ids=lambda c: " ".join(c))
def test_variants(case: tuple[str, ...]) -> None:
    plan, catalog = _fabric(*case)
    _check(plan, catalog, proven=True)


def test_3_tier_variant_has_3_tiers() -> None:
    plan, _ = _fabric("h100-512-roce", "compute.count=1024", "backend.su_size=16")
    assert plan.networks.backend.tiers == 3


def test_rail_planes_are_cut_within_each_plane(compiled) -> None:  # type: ignore[no-untyped-def]
    """One GB200 unit with a spine plane per rail (4 rail fabrics, nothing joins them: cross-rail traffic
    crosses in the rack's NVLink): each plane's leaves are split in halves, never one rail against
    another, and the 1:1 fabric proves full bisection; its method names the planes."""
    plan = compiled(
        "gb200-nvl72-1152",
        "compute.racks=8",
        "tenants=[]",
        "backend.spine_grouping=per_rail",
        "backend.pods=scalable_units",
    )
    bw = invariants._measure_leaves(plan, plan.index(), invariants._backend_nic_ports(plan, plan.catalog))
    halves = invariants.bisection_halves(plan, bw.down)
    assert halves is not None
    rail = {d.name: d.attrs.get("rail") for d in plan.devices}
    a, b = halves
    assert {rail[x] for x in a} == {rail[x] for x in b} == set(range(plan.networks.backend.rails))
    bis = plan.networks.backend.bisection
    assert bis is not None and bis.ratio == 1.0 and bis.max_flow_gbps == bis.demand_gbps > 0
    assert "each of 4 planes" in bis.method


def test_oversubscribed_fabric_is_measured_below_demand() -> None:
    plan, catalog = _fabric("h100-1024-reference", "backend.oversubscription=2:1")
    _, (a, b), _ = _inputs(plan, catalog)
    assert _check(plan, catalog, proven=True) * 2 == min(sum(a.values()), sum(b.values()))


def test_missing_uplinks() -> None:
    """A broken fabric: some leaves lose most of their uplinks (the port checks would flag it; the
    max-flow must still be exact)."""
    plan, catalog = _fabric("h100-1024-reference")
    cut = {f"su{u}-rail{r}-leaf" for u, r in ((1, 0), (3, 5), (4, 7))}
    keep = []
    for lk in plan.links:
        if lk.tier == "leaf-spine" and lk.a_device in cut and int(lk.b_device.removeprefix("spine")) > 3:
            continue
        keep.append(lk)
    plan.links = keep
    _, (a, b), _ = _inputs(plan, catalog)
    assert _check(plan, catalog, proven=False) < min(sum(a.values()), sum(b.values()))


def test_spines_split_between_halves() -> None:
    """test_invariants' not-non-blocking fabric: the second half's leaves reach half the spines through
    copies only they use."""
    plan, catalog = _fabric("h100-1024-reference")
    first_half = {f"su{u}-rail{r}-leaf" for u in (1, 2) for r in range(8)}
    for i, lk in enumerate(plan.links):
        if (
            lk.tier == "leaf-spine"
            and lk.network == "backend"
            and lk.a_device not in first_half
            and int(lk.b_device.removeprefix("spine")) > 8
        ):
            plan.links[i] = replace(lk, b_device=f"x{lk.b_device}")
    for name in {lk.b_device for lk in plan.links if lk.b_device.startswith("xspine")}:
        orig = plan.device(name[1:])
        plan.devices.append(replace(orig, name=name, attrs=dict(orig.attrs)))
    _, (a, b), _ = _inputs(plan, catalog)
    assert _check(plan, catalog, proven=False) * 2 == min(sum(a.values()), sum(b.values()))


@pytest.mark.parametrize("seed", range(300))
def test_random_tiered_graphs(seed: int) -> None:
    """Random leaf-spine(-core) graphs with uneven and missing links, uneven leaf demands, sometimes a
    link within a tier: whatever path answers, it is networkx's number."""
    rnd = random.Random(seed)
    n_leaf, n_spine, n_core = rnd.randint(2, 7), rnd.randint(1, 4), rnd.choice([0, 0, 1, 2, 3])
    leaves = [f"l{i}" for i in range(n_leaf)]
    spines = [f"s{i}" for i in range(n_spine)]
    cores = [f"c{i}" for i in range(n_core)]
    tier = {**dict.fromkeys(leaves, 0), **dict.fromkeys(spines, 1), **dict.fromkeys(cores, 2)}
    g = CapacityGraph()
    caps = [0, 100, 200, 400, 400, 800]
    for x, ups in [*((leaf, spines) for leaf in leaves), *((s, cores) for s in spines)]:
        for y in ups:
            c = rnd.choice(caps)
            if c:
                g.add(x, y, c)
                if rnd.random() < 0.2:
                    g.add(x, y, c)  # a parallel link
    if rnd.random() < 0.1 and n_spine > 1:
        g.add(spines[0], spines[1], 100)  # not a tiered tree: networkx answers
    half = n_leaf // 2
    a = {x: rnd.choice([0, 200, 400, 800, 1600]) for x in leaves[:half]}
    b = {x: rnd.choice([0, 200, 400, 800, 1600]) for x in leaves[half:]}
    want = networkx_max_flow(g, a, b)
    assert bisection._tree_flow(g, a, b, tier) in (None, want)
    assert max_flow(g, a, b, tier) == want


def test_components_union_find() -> None:
    g = CapacityGraph()
    for x, y in [("a", "b"), ("b", "c"), ("d", "e"), ("f", "f")]:
        g.add(x, y, 1)
    assert sorted(sorted(p) for p in g.components()) == [["a", "b", "c"], ["d", "e"], ["f"]]
