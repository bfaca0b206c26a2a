"""backend.spine_grouping: per_plane with backend.planes: each network plane of a multi-plane Ethernet
backend on spines of its own (NVIDIA's dual-plane Spectrum-X: a ConnectX-8's two 400G ports in two
planes that never meet), on b300-spectrumx. Expectations come from the design's rails, planes and the
switch radix, and from the compiled links, not from a compiled output."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import pytest
import yaml

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan, required
from tests.conftest import DESIGNS

Compiled = Callable[..., Plan]
SX = "b300-spectrumx"
PER_PLANE = ("backend.spine_grouping=per_plane", "backend.planes=2")
SHARED = ("backend.spine_grouping=shared", "backend.planes=null")


def _spines(plan: Plan) -> list[str]:
    return [d.name for d in plan.devices if d.network == "backend" and d.role == "spine"]


@pytest.mark.parametrize("extra", [(), ("backend.leaves_per_rail=2",)])
def test_each_plane_has_its_own_spines(compiled: Compiled, extra: tuple[str, ...]) -> None:
    plan = compiled(SX, *PER_PLANE, *extra)
    devs = plan.index()
    planes = plan.design.backend.planes
    assert planes == 2
    spine_plane: dict[str, str] = {s: devs[s].attrs["plane"] for s in _spines(plan)}
    assert sorted(set(spine_plane.values())) == [f"plane{p + 1}" for p in range(planes)]
    uplinks: dict[str, Counter[str]] = defaultdict(Counter)
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "leaf-spine":
            leaf = devs[lk.a_device]
            assert spine_plane[lk.b_device] == f"plane{leaf.attrs['rail'] % planes + 1}", (
                f"{leaf.name} (rail {leaf.attrs['rail']}) reaches {lk.b_device} of another plane"
            )
            uplinks[leaf.name][lk.b_device] += 1
    be = plan.networks.backend
    per_plane = len(spine_plane) // planes
    for leaf, to in uplinks.items():
        # every leaf reaches every spine of its plane, with the same number of links
        assert len(to) == per_plane and set(to.values()) == {be.uplinks_per_leaf // per_plane}, leaf
    # the planes are fabrics of their own: no path from one plane's leaves to another's
    g = nx.Graph(
        (lk.a_device, lk.b_device) for lk in plan.links if lk.network == "backend" and lk.tier != "server-leaf"
    )
    parts = list(nx.connected_components(g))
    assert len(parts) == planes
    assert all(len({devs[n].attrs["rail"] % planes for n in part if devs[n].role == "leaf"}) == 1 for part in parts)


@pytest.mark.parametrize("extra", [(), ("backend.leaves_per_rail=2",)])
def test_planes_keep_the_shared_fabrics_counts_ratio_and_bisection(compiled: Compiled, extra: tuple[str, ...]) -> None:
    plan, shared = compiled(SX, *PER_PLANE, *extra), compiled(SX, *SHARED, *extra)
    be = plan.networks.backend
    radix = plan.catalog.switches[be.switch_model].ports
    leaves_per_plane = be.leaves // plan.design.backend.planes
    # a plane is a non-blocking 2-tier fabric of its own: its leaves' uplinks fill its spines' ports
    assert len(_spines(plan)) == plan.design.backend.planes * math.ceil(leaves_per_plane * be.uplinks_per_leaf / radix)
    for key in ("leaves", "spines", "tiers", "downlinks_per_leaf", "uplinks_per_leaf"):
        assert getattr(be, key) == getattr(shared.networks.backend, key), key
    assert Counter(lk.tier for lk in plan.links) == Counter(lk.tier for lk in shared.links)
    assert be.oversubscription.measured == "1:1"
    # max-flow between the halves of the leaves: the planes are disconnected, so the total flow meets
    # the total demand only if every plane carries its own half's demand
    assert be.bisection.ratio == 1.0 and be.bisection.demand_gbps > 0

    # the same switches, racks and servers; the same links in cables, whose media and lengths differ as
    # a leaf's uplinks reach other spines: the spines stack in another order (a plane's spines
    # interleaved with the other plane's, so a grown site moves none), and a run that is within a copper
    # cable's reach in one layout (a twin ACC carries two links, no optics) is optics in the other
    def bom(p: Plan) -> tuple[dict[str, float], Counter[str]]:
        lines = required(p.bom, "bom").lines
        parts = {x.part: x.quantity for x in lines if x.kind not in ("cable", "transceiver")}
        links: Counter[str] = Counter()
        for c in p.cables or []:
            links[c.network] += len(c.links)
        return parts, links

    assert bom(plan) == bom(shared)


def test_each_planes_spines_are_one_asn_group(compiled: Compiled) -> None:
    plan = compiled(SX, *PER_PLANE)
    devs = plan.index()
    bn = required(plan.backend_net, "backend_net")
    asn_of_plane: dict[str, set[int]] = defaultdict(set)
    for s in bn.switches:
        if s.role == "spine":
            asn_of_plane[devs[s.name].attrs["plane"]].add(s.asn)
    assert all(len(a) == 1 for a in asn_of_plane.values())
    assert len({next(iter(a)) for a in asn_of_plane.values()}) == plan.design.backend.planes


def _write(tmp_path: Path, backend: dict[str, object]) -> Path:
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump({"extends": str(DESIGNS / f"{SX}.yaml"), "backend": backend}))
    return path


@pytest.mark.parametrize(
    ("backend", "field", "words"),
    [
        ({"spine_grouping": "shared"}, "backend.planes", "only with) spine_grouping: per_plane"),
        ({"spine_grouping": "per_plane", "planes": None}, "backend.planes", "only with) spine_grouping: per_plane"),
        ({"spine_grouping": "per_plane", "planes": 3}, "backend.planes", "do not split 16 rails evenly"),
    ],
)
def test_planes_that_do_not_fit_are_refused_naming_the_field(
    tmp_path: Path, backend: dict[str, object], field: str, words: str
) -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(_write(tmp_path, backend))
    (p,) = exc.value.problems
    assert p.field == field and words in p.message, p
