"""Failure domains of a multi-plane backend (issue 40, item 4): failure-domains.csv, one row per kind of
failure (one leaf, one spine, one plane, one leaf rack, one spine rack), what it takes away. Every
expectation is worked out here from the compiled links and racks (which GPU has a leg on which switch,
which switches stand in which rack) and the bisection kept is cross-checked by networkx's max-flow on a
graph built here from plan.links, not by the stage's own flow."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Callable
from fractions import Fraction

import networkx as nx
import pytest

from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.renderers import render_all
from tests.conftest import DESIGNS


def _rows(plan: Plan) -> dict[str, dict[str, str]]:
    text = render_all(plan)["failure-domains.csv"]
    return {r["failure"]: r for r in csv.DictReader(io.StringIO(text))}


def _legs(plan: Plan) -> dict[tuple[str, int], list[str]]:
    """(server, GPU) -> the switches its backend legs land on. The server's backend ports in the catalog's
    order, GPU k's legs consecutive (b300-spectrumx: ports 2k, 2k+1; a nic_port split: NIC k's legs)."""
    srv = plan.catalog.servers[plan.design.compute.server]
    assert srv.backend is not None
    ports = [lk for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"]
    names = sorted({lk.a_port for lk in ports}, key=lambda p: int("".join(c for c in p if c.isdigit())))
    per_gpu = len(names) // srv.gpus
    out: dict[tuple[str, int], list[str]] = defaultdict(list)
    for lk in ports:
        out[(lk.a_device, names.index(lk.a_port) // per_gpu)].append(lk.b_device)
    return out


def _bisection(plan: Plan, gone: set[str]) -> int:
    """Each plane's max-flow from the first half of its surviving leaves to the second, summed (networkx)."""
    devs = plan.index()
    down: dict[str, int] = defaultdict(int)
    g: nx.DiGraph[str] = nx.DiGraph()
    for lk in plan.links:
        if lk.network != "backend" or lk.a_device in gone or lk.b_device in gone:
            continue
        if lk.tier == "server-leaf":
            down[lk.b_device] += lk.speed_gbps
            continue
        for u, v in ((lk.a_device, lk.b_device), (lk.b_device, lk.a_device)):
            cap = g.edges[u, v]["capacity"] if g.has_edge(u, v) else 0
            g.add_edge(u, v, capacity=cap + lk.speed_gbps)
    total = 0
    planes = sorted({d.attrs["plane"] for d in plan.devices if d.network == "backend" and d.role == "leaf"})
    for p in planes:
        leaves = [d.name for d in plan.devices if d.role == "leaf" and d.attrs.get("plane") == p and d.name not in gone]
        if len(leaves) < 2:
            continue
        h: nx.DiGraph[str] = g.copy()
        for x in leaves[: len(leaves) // 2]:
            h.add_edge("_s", x, capacity=down[x])
        for x in leaves[len(leaves) // 2 :]:
            h.add_edge(x, "_t", capacity=down[x])
        total += int(nx.maximum_flow_value(h, "_s", "_t"))
    assert devs  # the plan is the one compiled
    return total


def _check_row(plan: Plan, row: dict[str, str], gone: set[str]) -> None:
    """The row's figures from the compiled plan, GPU by GPU, and the bisection by networkx."""
    legs = _legs(plan)
    devs = plan.index()
    # a leaf's uplink share left: its uplinks to surviving spines over those before (1:1 leaves)
    up: dict[str, list[str]] = defaultdict(list)
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "leaf-spine":
            up[lk.a_device].append(lk.b_device)
    kept: dict[tuple[str, int], Fraction] = {}
    for gpu, switches in legs.items():
        share = [
            Fraction(0) if s in gone else Fraction(sum(x not in gone for x in up[s]), len(up[s])) for s in switches
        ]
        kept[gpu] = sum(share, Fraction(0)) / len(share)
    losing = [k for k in kept.values() if k < 1]
    assert int(row["switches"]) == len(gone)
    assert int(row["gpus_losing_bandwidth"]) == len(losing)
    assert int(row["gpus_cut_off"]) == sum(k == 0 for k in losing)
    assert float(row["worst_gpu_bandwidth_kept"]) == pytest.approx(float(min(losing, default=1)), abs=1e-4)
    before = _bisection(plan, set())
    after = _bisection(plan, gone)
    assert int(row["bisection_gbps"]) == after
    assert float(row["bisection_kept"]) == pytest.approx(after / before, abs=1e-4)
    assert all(devs[s].network == "backend" for s in gone)


def _gone(plan: Plan, row: dict[str, str]) -> set[str]:
    """The switches a row's failure takes down, from the plan: the switch, the plane's or the rack's."""
    f = row["failed"]
    backend = [d for d in plan.devices if d.network == "backend" and d.kind == "switch"]
    if row["failure"] == "plane":
        return {d.name for d in backend if d.attrs.get("plane") == f}
    if row["failure"].endswith(" rack"):
        return {d.name for d in backend if d.rack == f}
    return {f}


@pytest.fixture(scope="module")
def eight() -> Plan:
    # the 8-plane MRC site cut to 2 units of 256 servers, each plane in a network row of its own
    return compile_file(
        DESIGNS / "spectrumx-8plane-131k.yaml", ["compute.count=512", "storage.count=8", "storage.capacity_pb=2"]
    )[0]


def test_eight_planes_one_failure_of_each_kind(eight: Plan) -> None:
    rows = _rows(eight)
    assert list(rows) == ["leaf", "spine", "plane", "leaf rack", "spine rack"]
    be = eight.networks.backend
    gpus = 512 * 8
    spines_per_plane = be.spines // 8
    # one leaf: its 256 servers' GPUs lose one of their 8 legs; the plane's bisection loses a leaf's share
    assert (rows["leaf"]["gpus_losing_bandwidth"], rows["leaf"]["gpus_cut_off"]) == ("256", "0")
    assert float(rows["leaf"]["worst_gpu_bandwidth_kept"]) == 7 / 8
    # one spine: every GPU's leg in that plane loses 1/spines of its leaf's uplinks
    assert rows["spine"]["gpus_losing_bandwidth"] == str(gpus)
    assert float(rows["spine"]["worst_gpu_bandwidth_kept"]) == pytest.approx(1 - 1 / (8 * spines_per_plane), abs=1e-4)
    # one plane: every GPU keeps 7 of its 8 legs, the site 7/8 of its bisection
    assert rows["plane"]["failed"] == "plane1" and rows["plane"]["switches"] == str(be.leaves // 8 + spines_per_plane)
    assert float(rows["plane"]["worst_gpu_bandwidth_kept"]) == 7 / 8 and rows["plane"]["bisection_kept"] == "0.8750"
    # a network row per plane: a rack holds one plane's switches, so no rack takes more than one plane
    for kind in ("leaf rack", "spine rack"):
        assert rows[kind]["gpus_cut_off"] == "0" and float(rows[kind]["bisection_kept"]) >= 7 / 8
    for row in rows.values():
        _check_row(eight, row, _gone(eight, row))
    assert eight.networks.backend.failure_domains is not None
    assert [f.scenario for f in eight.networks.backend.failure_domains] == list(rows)


def test_a_rack_of_every_planes_spines_is_a_single_point_of_failure(compiled: Callable[..., Plan]) -> None:
    # b300-spectrumx (dual-plane, one shared network row): its 16 spines, 8 a plane, share one rack
    shared = compiled("b300-spectrumx")
    rows = _rows(shared)
    planes_in_rack = {
        d.attrs["plane"] for d in shared.devices if d.role == "spine" and d.rack == rows["spine rack"]["failed"]
    }
    assert planes_in_rack == {"plane1", "plane2"}
    assert rows["spine rack"]["gpus_cut_off"] == "1024" and rows["spine rack"]["bisection_kept"] == "0.0000"
    for row in rows.values():
        _check_row(shared, row, _gone(shared, row))
    # a network row per plane: the spine rack holds one plane, and losing it costs that plane only
    apart = compiled("b300-spectrumx", "site.network_rows=per_plane")
    rows = _rows(apart)
    assert rows["spine rack"]["gpus_cut_off"] == "0" and rows["spine rack"]["bisection_kept"] == "0.5000"
    assert float(rows["spine rack"]["worst_gpu_bandwidth_kept"]) == 0.5
    for row in rows.values():
        _check_row(apart, row, _gone(apart, row))


def test_a_backend_without_planes_has_no_failure_report(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    assert plan.networks.backend.failure_domains is None
    assert "failure-domains.csv" not in render_all(plan)
