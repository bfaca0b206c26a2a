"""The fabric compiler on the example designs: counts from the issue, port conventions, scale."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import COMPILED_EXAMPLES


def _count(plan, network, tier=None, role=None):
    if tier:
        return sum(1 for lk in plan.links if lk.network == network and lk.tier == tier)
    return sum(1 for d in plan.devices if d.network == network and d.role == role)


def test_reference_counts(compiled):
    plan = compiled("h100-1024-reference")
    assert _count(plan, "backend", role="leaf") == 32
    assert _count(plan, "backend", role="spine") == 16
    assert _count(plan, "backend", tier="server-leaf") == 1024
    assert _count(plan, "backend", tier="leaf-spine") == 1024
    assert plan.networks.backend.tiers == 2
    assert plan.networks.backend.oversubscription.to_dict() == {"requested": "1:1", "measured": "1:1"}
    assert plan.networks.backend.bisection.ratio == 1.0


def test_two_to_one_halves_the_spines(compiled):
    plan = compiled("h100-1024-reference", "backend.oversubscription=2:1")
    assert _count(plan, "backend", role="spine") == 8
    assert _count(plan, "backend", tier="leaf-spine") == 512
    assert plan.networks.backend.oversubscription.measured == "2:1"
    # half the bisection, measured by max-flow on the graph
    assert plan.networks.backend.bisection.ratio == 0.5
    # the freed leaf ports are reported as spare, for adding spines later
    leaf = next(d for d in plan.devices if d.name == "su1-rail0-leaf")
    assert len(leaf.spare_ports) == 16


@pytest.mark.parametrize("name", COMPILED_EXAMPLES)
def test_every_example_compiles(compiled, name):
    plan = compiled(name)
    servers = [d for d in plan.devices if d.kind == "server"]
    assert servers
    # every backend NIC on exactly one link
    ends = Counter((lk.a_device, lk.a_port) for lk in plan.links if lk.network == "backend")
    rails = plan.networks.backend.rails
    for s in servers:
        backend = plan.catalog.servers[s.model].backend
        assert backend is not None
        for r in range(rails):  # the port named as the server model names it (mlx5_0; ionic_0 on AMD NICs)
            assert ends[(s.name, backend.name.format(i=r))] == 1


def test_rail_optimized_wiring(compiled):
    plan = compiled("h100-1024-reference")
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf":
            rail = int(lk.a_port.removeprefix("mlx5_"))
            assert lk.b_device.endswith(f"-rail{rail}-leaf")
    # a leaf's two links to one spine share one twin-port cage (one cable or transceiver)
    to_spine01 = sorted(lk.a_port for lk in plan.links if lk.a_device == "su1-rail0-leaf" and lk.b_device == "spine01")
    assert to_spine01 == ["1/17/1", "1/17/2"]


def test_top_of_rack_puts_a_servers_nics_on_one_leaf(compiled):
    plan = compiled("h100-1024-tor")
    leaves_of = {}
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf":
            leaves_of.setdefault(lk.a_device, set()).add(lk.b_device)
    assert all(len(v) == 1 for v in leaves_of.values())
    assert Counter(next(iter(v)) for v in leaves_of.values())["su1-leaf01"] == 4


@pytest.mark.large
def test_three_tier_16k(compiled):
    plan = compiled("h100-16k")
    net = plan.networks.backend
    assert net.tiers == 3
    assert (net.leaves, net.spines, net.cores, net.pods) == (512, 512, 256, 16)
    assert _count(plan, "backend", tier="spine-core") == 16384
    # a pod is 4 whole scalable units
    pods = {d.attrs["su"]: d.attrs["pod"] for d in plan.devices if d.network == "backend" and d.role == "leaf"}
    assert pods[1] == pods[4] == 1 and pods[5] == 2
    assert net.bisection.ratio == 1.0


def test_per_rail_planes(compiled):
    plan = compiled("h100-1024-reference", "backend.spine_grouping=per_rail")
    spines = [d for d in plan.devices if d.network == "backend" and d.role == "spine"]
    assert len(spines) == 16
    assert {d.attrs["plane"] for d in spines} == {f"rail{r}" for r in range(8)}
    for lk in plan.links:
        if lk.tier == "leaf-spine" and lk.network == "backend":
            rail = lk.a_device.split("-")[1]
            assert lk.b_device.startswith(f"{rail}-")


def test_frontend_dual_homed_to_two_leaves(compiled):
    plan = compiled("h100-1024-reference")
    leaves = {}
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier == "server-leaf":
            leaves.setdefault(lk.a_device, []).append(lk.b_device)
    assert all(len(set(v)) == len(v) == 2 for h, v in leaves.items() if h.startswith(("gpu", "stor")))
    assert plan.networks.frontend.oversubscription.measured == "1:1"


def test_oob_reaches_every_management_port(compiled):
    plan = compiled("h100-1024-optimized")
    on_oob = {lk.a_device for lk in plan.links if lk.network == "oob" and lk.tier == "mgmt-access"}
    must = {d.name for d in plan.devices if d.kind in ("server", "storage", "management")}
    must |= {d.name for d in plan.devices if d.kind == "switch" and d.network in ("backend", "frontend")}
    assert must <= on_oob


def test_subnet_managers_on_spare_leaf_ports(compiled):
    plan = compiled("h100-1024-optimized")
    sm = plan.networks.backend.subnet_manager_ports
    assert [(p.node, p.leaf, p.leaf_port) for p in sm] == [
        ("mgmt01", "su4-rail0-leaf", "1/32/2"),
        ("mgmt02", "su4-rail1-leaf", "1/32/2"),
    ]


def test_roce_backend_on_spectrum(compiled):
    plan = compiled("h100-256", "backend.technology=roce", "backend.switch=SN5600")
    assert plan.networks.backend.leaves == 8
    assert plan.networks.backend.oversubscription.measured == "2:1"


@pytest.mark.large
def test_switch_embedded_subnet_manager_is_flagged_beyond_its_scale(compiled):
    # the playbook: UFM or a server-hosted SM is a hard requirement above ~2k GPUs
    warnings = compiled("h100-16k").warnings
    assert [w.field for w in warnings] == ["management.backend_attached"]
    assert "17,664 InfiniBand nodes" in warnings[0].message
    # h100-16k's 3-tier leaves at 1:1 have no free port, and its management server runs the 400G backend
    assert "compute.reserved_slots: 1 and one server fewer; management.backend_attached: 2" in warnings[0].message
    assert "backend NIC runs" not in warnings[0].message
    assert compiled("h100-1024-reference").warnings == []
