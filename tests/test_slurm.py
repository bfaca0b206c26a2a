"""Slurm renderers and railyard's own topology checks (no daemons; tests/test_slurm_ib_daemons.py runs slurmctld)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import hostlist
import pytest

from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.sections import SlurmBlock as Block
from generators.model.sections import SlurmSwitch
from generators.renderers import render_all
from generators.renderers.slurm import render_slurm, slurm_hostlist
from generators.stages.slurm import block_sizes, check_blocks, check_tree, slurm_blocks, slurm_tree
from tests.conftest import DESIGNS

Compiled = Callable[..., Plan]


def expected_tree(plan: Plan) -> dict[str, tuple[int, list[str], list[str]]]:
    """{switch: (level, child switches, nodes below)} worked out from device attributes, independently of
    slurm_tree: a rail-optimized unit is one switch, then one spine switch (2 tiers) or pods + core. Unit
    numbers are unpadded (su7, su64), as in the leaves' names."""
    servers = [d for d in plan.devices if d.kind == "server"]
    be = plan.networks.backend
    out: dict[str, tuple[int, list[str], list[str]]] = {}
    if be.topology == "rail_optimized" and (be.leaves_per_rail or 1) > 1:
        # a unit's servers split over its rail's leaves: the k-th leaf of every rail is one group,
        # "su1-leaf01" for su1-rail0-leaf01 ... su1-rail7-leaf01
        leaf_of = {
            lk.a_device: lk.b_device for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"
        }
        for d in servers:
            out.setdefault(f"su{d.attrs['su']}-{leaf_of[d.name].rsplit('-', 1)[-1]}", (0, [], []))[2].append(d.name)
    elif be.topology == "rail_optimized":
        for su in range(1, be.scalable_units + 1):
            out[f"su{su}"] = (0, [], [d.name for d in servers if d.attrs["su"] == su])
    else:
        leaf_of = {
            lk.a_device: lk.b_device for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"
        }
        for d in servers:
            out.setdefault(leaf_of[d.name], (0, [], []))[2].append(d.name)
    leaves = list(out)
    if be.tiers == 2:
        out["spine"] = (1, leaves, [n for lf in leaves for n in out[lf][2]])
    else:
        pod_of_su = {d.attrs["su"]: d.attrs["pod"] for d in plan.devices if d.role == "leaf" and d.network == "backend"}
        pods = sorted(set(pod_of_su.values()))
        for q in pods:
            sus = [f"su{su}" for su, p in sorted(pod_of_su.items()) if p == q]
            out[f"pod{q}"] = (1, sus, [n for s in sus for n in out[s][2]])
        out["core"] = (2, [f"pod{q}" for q in pods], [d.name for d in servers])
    return out


def as_dict(tree: list[SlurmSwitch]) -> dict[str, tuple[int, list[str], list[str]]]:
    by = {sw.name: sw for sw in tree}

    def below(sw: SlurmSwitch) -> list[str]:
        return sw.nodes if sw.level == 0 else [n for c in sw.switches for n in below(by[c])]

    return {sw.name: (sw.level, sw.switches, below(sw)) for sw in tree}


@pytest.mark.parametrize(
    "name", ["h100-1024-reference", "h100-1024-optimized", "h100-256", "h100-1024-tor", "h100-16k"]
)
def test_tree_matches_the_fabric(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    tree = slurm_tree(plan)
    assert as_dict(tree) == expected_tree(plan)
    assert check_tree(tree, [d.name for d in plan.devices if d.kind == "server"]) == []


def test_reference_topology_conf_text(compiled: Compiled) -> None:
    text = render_slurm(compiled("h100-1024-reference"))["slurm/topology.conf"]
    body = [ln.split("#")[0].strip() for ln in text.splitlines() if not ln.startswith("#")]
    assert body == [
        "SwitchName=su1 Nodes=gpu[001-032]",
        "SwitchName=su2 Nodes=gpu[033-064]",
        "SwitchName=su3 Nodes=gpu[065-096]",
        "SwitchName=su4 Nodes=gpu[097-128]",
        "SwitchName=spine Switches=su[1-4]",
    ]
    # the comment names the real switches each Slurm switch stands for
    assert "SwitchName=su1 Nodes=gpu[001-032]  # su1-rail[0-7]-leaf" in text
    assert "SwitchName=spine Switches=su[1-4]  # spine[01-16]" in text


@pytest.mark.large
def test_16k_three_tiers(compiled: Compiled) -> None:
    tree = {sw.name: sw for sw in slurm_tree(compiled("h100-16k"))}
    assert len([s for s in tree.values() if s.level == 0]) == 64
    assert tree["pod1"].switches == ["su1", "su2", "su3", "su4"]
    assert tree["pod1"].members == [f"pod1-spine{j:02d}" for j in range(1, 33)]
    assert tree["core"].level == 2 and tree["core"].switches == [f"pod{q}" for q in range(1, 17)]
    assert len(tree["core"].members) == 256


def test_top_of_rack_keeps_real_leaves(compiled: Compiled) -> None:
    tree = slurm_tree(compiled("h100-1024-tor"))
    assert tree[0].name == "su1-leaf01" and tree[0].nodes == ["gpu001", "gpu002", "gpu003", "gpu004"]
    text = render_slurm(compiled("h100-1024-tor"))["slurm/topology.conf"]
    # Slurm 22.05 rejects "su[1-4]-leaf[01-08]": one numeric range per term only
    assert "SwitchName=spine Switches=su1-leaf[01-08],su2-leaf[01-08],su3-leaf[01-08],su4-leaf[01-08]" in text


def test_hostlists_have_one_range_per_term() -> None:
    names = ["su1-leaf01", "su1-leaf02", "su2-leaf01", "gpu001", "gpu002", "gpu004", "spine"]
    expr = slurm_hostlist(names)
    assert expr == "su1-leaf[01-02],su2-leaf01,gpu[001-002,004],spine"
    assert all(term.count("[") <= 1 for term in re.split(r",(?![^\[]*\])", expr))
    assert sorted(hostlist.expand_hostlist(expr)) == sorted(names)


# --- railyard's own checks: what slurmctld only warns about ---------------------------------------------


NODES = ["gpu001", "gpu002", "gpu003", "gpu004"]


def _tree(**leaves: list[str]) -> list[SlurmSwitch]:
    out = [SlurmSwitch(name, 0, nodes=nodes) for name, nodes in leaves.items()]
    return [*out, SlurmSwitch("spine", 1, switches=list(leaves))]


def test_check_tree_accepts_a_good_tree() -> None:
    assert check_tree(_tree(su1=NODES[:2], su2=NODES[2:]), NODES) == []


def test_check_tree_node_in_two_leaves() -> None:
    problems = check_tree(_tree(su1=NODES[:3], su2=NODES[2:]), NODES)
    assert [p.message for p in problems] == ["1 nodes are under more than one leaf switch, e.g. gpu003 under su1, su2"]


def test_check_tree_node_under_no_switch() -> None:
    problems = check_tree(_tree(su1=NODES[:2], su2=NODES[2:3]), NODES)
    assert [p.message for p in problems] == ["1 nodes are under no switch: gpu004"]


def test_check_tree_unknown_hostname_and_two_roots() -> None:
    tree = [SlurmSwitch("su1", 0, nodes=[*NODES, "gpu999"]), SlurmSwitch("su2", 0, nodes=["gpu998"])]
    messages = [p.message for p in check_tree(tree, NODES)]
    assert "switches name 2 unknown nodes, e.g. gpu998" in messages
    assert "no switch reaches all nodes: 2 roots (su1, su2)" in messages


def test_check_tree_undefined_child_and_mixed_switch() -> None:
    tree = [SlurmSwitch("su1", 0, nodes=NODES), SlurmSwitch("spine", 1, nodes=["gpu001"], switches=["su1", "su9"])]
    messages = [p.message for p in check_tree(tree, NODES)]
    assert "Slurm switch spine names undefined child su9" in messages
    assert "Slurm switch spine has both nodes and switches" in messages


def test_compile_refuses_a_node_in_two_leaves(compiled: Compiled) -> None:
    """A server cabled into another scalable unit's rail leaf sits under two Slurm leaves: slurmctld only
    warns ("Multiple leaf switches contain nodes"); railyard's stage refuses the plan."""
    from generators.stages.slurm import check

    plan = compiled("h100-1024-reference")
    i = next(i for i, lk in enumerate(plan.links) if lk.a_device == "gpu001" and lk.a_port == "mlx5_7")
    links = list(plan.links)
    links[i] = replace(links[i], b_device="su2-rail7-leaf")
    moved = replace(plan, links=links)
    with pytest.raises(DesignError) as exc:
        check(moved, None)  # type: ignore[arg-type]
    assert "nodes are under more than one leaf switch, e.g. gpu001" in str(exc.value)


# --- blocks ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "n", "sizes"),
    [
        (32, 1, [32]),
        (32, 4, [32, 64, 128]),
        (32, 5, [32, 64, 128]),
        (32, 64, [32, 64, 128, 256, 512, 1024, 2048]),
        (16, 2, [16, 32]),
    ],
)
def test_block_sizes_are_powers_of_two_times_the_base(base: int, n: int, sizes: list[int]) -> None:
    assert block_sizes(base, n) == sizes


def test_block_sizes_stop_at_slurms_limit() -> None:
    assert block_sizes(1, 1 << 20)[-1] == 1 << 15


@pytest.mark.parametrize("name", ["h100-1024-reference", "h100-256", "h100-1024-tor", "h100-16k"])
def test_one_block_per_scalable_unit(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    blocks, sizes = slurm_blocks(plan)
    be = plan.networks.backend
    assert len(blocks) == be.scalable_units
    assert all(len(b.nodes) == be.su_size for b in blocks)
    assert sizes[0] == be.su_size
    assert check_blocks(blocks, sizes, [d.name for d in plan.devices if d.kind == "server"]) == []


def test_reference_block_file(compiled: Compiled) -> None:
    text = render_slurm(compiled("h100-1024-reference"))["slurm/topology-block.conf"]
    body = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert body == [
        "BlockName=su1 Nodes=gpu[001-032]",
        "BlockName=su2 Nodes=gpu[033-064]",
        "BlockName=su3 Nodes=gpu[065-096]",
        "BlockName=su4 Nodes=gpu[097-128]",
        "BlockSizes=32,64,128",
    ]


def test_check_blocks_rejects_what_slurm_rejects() -> None:
    blocks = [Block("su1", NODES[:2]), Block("su2", NODES[2:])]
    assert check_blocks(blocks, [2, 4], NODES) == []
    msgs = [p.message for p in check_blocks(blocks, [2, 6], NODES)]
    assert msgs == ["BlockSizes value 6 is not 2 times a power of two (at most 2^15)"]
    msgs = [p.message for p in check_blocks([Block("su1", NODES[:3]), Block("su2", NODES[2:])], [2], NODES)]
    assert msgs == ["1 nodes are in more than one block, e.g. gpu003 in su1, su2"]
    msgs = [p.message for p in check_blocks([Block("su1", NODES[:2]), Block("su2", NODES[2:3])], [2], NODES)]
    assert "block su2 has 1 nodes, fewer than the base block size 2" in msgs
    assert "1 nodes are in no block: gpu004" in msgs


# --- nodes and partitions -------------------------------------------------------------------------------


def test_nodes_from_catalog_and_configuration(compiled: Compiled) -> None:
    ref = render_slurm(compiled("h100-1024-reference"))["slurm/nodes.conf"]
    # OEM default quote: 2 x Xeon 8480+ (56 cores), 2 TB; 97% of 2048 GiB = 1986 GiB
    assert (
        "NodeName=gpu[001-032] CPUs=112 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=1 "
        f"RealMemory={1986 * 1024} Gres=gpu:8 Feature=hgx-h100,su1"
    ) in ref
    opt = render_slurm(compiled("h100-256"))["slurm/nodes.conf"]
    # optimized chassis: 2 x 8462Y+ (32 cores), 1 TB
    assert (
        f"NodeName=gpu[001-032] CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1 "
        f"RealMemory={993 * 1024} Gres=gpu:8 Feature=hgx-h100,su1"
    ) in opt


def test_a_partition_per_tenant_plus_default(compiled: Compiled) -> None:
    text = render_slurm(compiled("h100-1024-reference"))["slurm/nodes.conf"]
    parts = [ln for ln in text.splitlines() if ln.startswith("PartitionName=")]
    assert parts == [
        "PartitionName=DEFAULT State=UP MaxTime=INFINITE OverSubscribe=EXCLUSIVE",
        "PartitionName=all Nodes=ALL Default=YES AllowAccounts=root PriorityTier=1",
        "PartitionName=acme Nodes=gpu[001-064] AllowAccounts=acme PriorityTier=10",
        "PartitionName=globex Nodes=gpu[065-096] AllowAccounts=globex PriorityTier=10",
        "PartitionName=initech Nodes=gpu[097-112] AllowAccounts=initech PriorityTier=10",
    ]


def test_slurm_conf_fragment(compiled: Compiled) -> None:
    text = render_slurm(compiled("h100-1024-reference"))["slurm/slurm.conf"]
    keys = dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#") and "=" in ln)
    assert keys["TopologyPlugin"] == "topology/tree"
    assert keys["SelectType"] == "select/cons_tres"
    assert keys["GresTypes"] == "gpu"
    assert keys["ClusterName"] == "h100_1024_reference"
    assert "Include nodes.conf" in text.splitlines()
    gres = render_slurm(compiled("h100-1024-reference"))["slurm/gres.conf"]
    assert "NodeName=gpu[001-128] Name=gpu File=/dev/nvidia[0-7]" in gres


def test_slurm_files_are_deterministic(compiled: Compiled) -> None:
    plan = compiled("h100-1024-reference")
    a = {k: v for k, v in render_all(plan).items() if k.startswith(("slurm/", "infiniband/"))}
    b = {k: v for k, v in render_all(plan).items() if k.startswith(("slurm/", "infiniband/"))}
    assert a == b and len(a) >= 10


@pytest.mark.large
def test_plan_and_summary_carry_the_slurm_shape(compiled: Compiled, cli: Callable[..., object], tmp_path: Path) -> None:
    plan = compiled("h100-16k")
    sl = plan.slurm
    assert (sl.switches_per_level, sl.blocks, sl.block_sizes) == ([64, 16, 1], 64, [32, 64, 128, 256, 512, 1024, 2048])
    # the stage stores the tree and the blocks it checked; the renderer writes exactly these
    assert sl.tree == slurm_tree(plan) and (sl.topology_blocks, sl.block_sizes) == slurm_blocks(plan)
    assert len(sl.topology_blocks) == sl.blocks
    r = cli("compile", DESIGNS / "h100-1024-reference.yaml", "-o", tmp_path / "out")
    assert r.exit_code == 0  # type: ignore[attr-defined]
    out = r.output  # type: ignore[attr-defined]
    assert "slurm switches by level" in out and "4 / 1" in out
    assert "subnet managers" in out and "spine01, spine02" in out


@pytest.mark.parametrize("name", ["all", "default"])
def test_tenant_names_slurm_uses_are_refused(cli: Callable[..., object], name: str) -> None:
    r = cli("validate", DESIGNS / "h100-256.yaml", "--set", f"tenants.0.name={name}")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert f"tenants.0.name: '{name}' names a Slurm partition railyard already writes" in r.output  # type: ignore
