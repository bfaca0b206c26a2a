"""backend.rails_per_leaf: a rail-optimized leaf carrying several rails of every server of its unit, as
NVIDIA's HGX B300 Enterprise RA does at its smallest design point (32 nodes: two rails per leaf).

The expectations are derived from the design's own numbers (rails, su_size, rails_per_leaf, the planes) and
the server's backend ports, never copied from a compiled output."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.ports import backend_ports
from tests.conftest import DESIGNS, rendered_files

Compiled = Callable[..., Plan]
SX = "b300-spectrumx"
# the ERA's 32-node design point on the shipped HGX B300 design: one unit of 32 nodes, two rails per leaf
ERA_32 = ("compute.count=32", "backend.su_size=32", "backend.rails_per_leaf=2", "tenants=[]")


def _rail_of_port(plan: Plan) -> dict[str, int]:
    """A compute server's backend port name -> its rail (its index among the server model's backend ports)."""
    srv = plan.catalog.servers[plan.design.compute.server]
    assert srv.backend is not None
    return {p.name: i for i, p in enumerate(backend_ports(plan.catalog, srv.backend))}


def _rails_on_leaves(plan: Plan) -> dict[str, set[int]]:
    rail_of = _rail_of_port(plan)
    servers = {d.name for d in plan.devices if d.kind == "server" and d.role == "compute"}
    out: dict[str, set[int]] = defaultdict(set)
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf" and lk.a_device in servers:
            out[lk.b_device].add(rail_of[lk.a_port])
    return out


def test_each_leaf_carries_its_rails_of_one_plane_for_every_server(compiled: Compiled) -> None:
    plan = compiled(SX, *ERA_32)
    be = plan.design.backend
    rails = len(_rail_of_port(plan))
    k = be.rails_per_leaf
    planes = be.planes
    assert planes is not None and k == 2
    on_leaf = _rails_on_leaves(plan)
    leaves = [d for d in plan.devices if d.network == "backend" and d.role == "leaf"]
    assert len(leaves) == rails // k == len(on_leaf)
    for leaf in leaves:
        got = on_leaf[leaf.name]
        assert got == set(leaf.attrs["rails"]) and len(got) == k
        assert len({r % planes for r in got}) == 1, f"{leaf.name}: a leaf's rails share a plane"
        assert leaf.name == "su1-" + "-".join(f"rail{r}" for r in sorted(got)) + "-leaf"
    # every rail is on exactly one leaf, and each leaf takes every server of the unit once per rail
    assert sorted(r for s in on_leaf.values() for r in s) == list(range(rails))
    down: dict[str, int] = defaultdict(int)
    up: dict[str, int] = defaultdict(int)
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf":
            down[lk.b_device] += 1
        if lk.network == "backend" and lk.tier == "leaf-spine":
            up[lk.a_device] += 1
    for leaf in leaves:
        assert down[leaf.name] == be.su_size * k
        assert up[leaf.name] == down[leaf.name]  # 1:1
    assert plan.networks.backend.rails_per_leaf == k
    assert plan.networks.backend.to_dict()["rails_per_leaf"] == k


def test_a_leaf_takes_a_planes_rails_with_a_stride_as_nvidia_pairs_them(compiled: Compiled) -> None:
    """NVIDIA's 32-node design point: "4 leaf switches per plane, each supporting 2 rails (1+5, 2+6, 3+7,
    4+8)": of a plane's rails, leaf j holds rails j and j + (plane's rails) / rails_per_leaf."""
    plan = compiled(SX, *ERA_32)
    be = plan.design.backend
    planes = be.planes
    assert planes is not None
    rails = len(_rail_of_port(plan))
    stride = rails // planes // be.rails_per_leaf  # in a plane's own rail order
    for leaf, got in _rails_on_leaves(plan).items():
        in_plane = sorted(r // planes for r in got)  # rail r is the (r // planes)-th rail of plane r % planes
        assert [b - a for a, b in pairwise(in_plane)] == [stride] * (len(in_plane) - 1), leaf
    # hgx-b300-2x400gbe: rail 2k + p is ConnectX-8 k's plane p, so the first leaf pairs NICs 1 and 5 (1-based)
    assert "su1-rail0-rail8-leaf" in _rails_on_leaves(plan)


def test_a_servers_rails_on_one_leaf_share_its_cage(compiled: Compiled) -> None:
    """Neighbouring leaf ports: on the SN5600 split 2 x 400G, a server's two rails on a leaf are the two
    halves of one OSFP cage (swpNs0, swpNs1), so one twin-port transceiver serves that server."""
    plan = compiled(SX, *ERA_32)
    ports: dict[tuple[str, str], list[str]] = defaultdict(list)
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf":
            ports[(lk.a_device, lk.b_device)].append(lk.b_port)
    assert ports
    for (host, leaf), ps in ports.items():
        assert len(ps) == plan.design.backend.rails_per_leaf
        cages = {re.sub(r"s\d+$", "", p) for p in ps}
        assert len(cages) == 1, (host, leaf, ps)
        (cage,) = cages
        assert sorted(ps) == [f"{cage}s{i}" for i in range(len(ps))]


def test_roce_addressing_keeps_each_port_on_its_own_rail(compiled: Compiled) -> None:
    """The RoCE plan's host ports: the rail of the NIC port, so a leaf of two rails routes two rail blocks."""
    plan = compiled(SX, *ERA_32)
    bn = plan.backend_net
    assert bn is not None
    rail_of = _rail_of_port(plan)
    host_ports = [p for p in bn.ports if not p.fabric]
    assert host_ports
    for p in host_ports:
        assert p.rail == rail_of[p.peer_port], p
    per_switch: dict[str, set[int]] = defaultdict(set)
    for p in host_ports:
        assert p.rail is not None
        per_switch[p.switch].add(p.rail)
    assert all(len(s) == plan.design.backend.rails_per_leaf for s in per_switch.values())
    assert sorted(r.rail for r in bn.rails) == list(range(len(rail_of)))


def test_every_leaf_config_has_the_host_ports_of_both_its_rails(compiled: Compiled) -> None:
    plan = compiled(SX, *ERA_32)
    files = rendered_files(compiled, SX, *ERA_32)
    bn = plan.backend_net
    assert bn is not None
    for sw, ports in bn.ports_by_switch().items():
        text = files[f"backend/{sw}/startup.yaml"]
        for p in ports:
            if not p.fabric:
                assert p.address is not None and p.address in text, (sw, p.port)


def test_one_rail_per_leaf_leaves_the_plan_unchanged(compiled: Compiled) -> None:
    plan = compiled(SX)
    assert plan.networks.backend.rails_per_leaf is None
    assert "rails_per_leaf" not in plan.networks.backend.to_dict()
    assert all("rails" not in d.attrs for d in plan.devices)
    assert all(len(s) == 1 for s in _rails_on_leaves(plan).values())


def test_reserved_slots_go_to_the_leaves_of_each_rail(compiled: Compiled) -> None:
    """The DGX H100 SuperPOD's UFM hosts take the freed slot's rail 0..3 ports: with two rails per leaf,
    rails 0 and 1 are on one leaf, at the slot's two neighbouring ports."""
    sets = ("backend.rails_per_leaf=2", "backend.su_size=16", "compute.count=63", "tenants=[]")
    plan = compiled("dgx-h100-superpod-4su", *sets)
    leaves = {d.name: d for d in plan.devices if d.network == "backend" and d.role == "leaf"}
    mgmt = sorted(
        (lk.a_device, lk.b_device) for lk in plan.links if lk.network == "backend" and lk.a_device.startswith("mgmt")
    )
    attached = plan.design.management.backend_attached
    assert len(mgmt) == attached
    last_su = max(int(d.attrs["su"]) for d in leaves.values())
    for i, (_, leaf) in enumerate(mgmt):
        assert i in leaves[leaf].attrs["rails"] and leaves[leaf].attrs["su"] == last_su


@pytest.mark.parametrize(
    ("sets", "says"),
    [
        (("backend.rails_per_leaf=3",), "do not split the 8 rails of each of its 2 planes"),
        (("backend.rails_per_leaf=2", "backend.leaves_per_rail=2"), "leaves_per_rail 1"),
        (("backend.rails_per_leaf=2", "backend.spine_grouping=per_rail", "backend.planes=null"), "per rail"),
        (("backend.rails_per_leaf=9",), "less than or equal to 8"),
    ],
)
def test_rails_per_leaf_that_cannot_be_built_are_refused_at_the_field(
    compiled: Compiled, sets: tuple[str, ...], says: str
) -> None:
    with pytest.raises(DesignError) as exc:
        compiled(SX, *sets)
    assert any(p.field == "backend.rails_per_leaf" and says in p.message for p in exc.value.problems), [
        (p.field, p.message) for p in exc.value.problems
    ]


def test_a_leaf_of_rails_without_the_ports_names_rails_per_leaf(compiled: Compiled) -> None:
    with pytest.raises(DesignError) as exc:
        compiled("dgx-h100-superpod-4su", "backend.rails_per_leaf=2")
    p = exc.value.problems[0]
    assert p.field == "backend.rails_per_leaf" and "needs more ports" in p.message
    assert "fewer rails per leaf" in p.hint


def test_cli_refuses_a_bad_rails_per_leaf_with_exit_2(cli: Callable[..., Any]) -> None:
    res = cli("validate", str(DESIGNS / f"{SX}.yaml"), "--set", "backend.rails_per_leaf=3")
    assert res.exit_code == 2
    err = res.stderr
    assert "backend.rails_per_leaf: 3 rails per leaf do not split" in err and "Traceback" not in err
    assert not res.stdout
