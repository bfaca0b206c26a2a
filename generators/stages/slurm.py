"""SLURM topology, nodes and partitions from the plan.

topology/tree wants the switch hierarchy as seen from the nodes. It is derived from the backend
graph, not from the topology's name: leaves with identical sets of servers are one Slurm switch
(the rail leaves of a rail-optimized scalable unit are one hop apart for every pair of its servers,
which is how NVIDIA's own tools present a scalable unit), and each upper tier collapses switches
that reach the same children (all spines of a 2-tier fabric, the spines of one pod). For
top-of-rack designs each real leaf stays a Slurm switch. Slurm only warns (and keeps running) on a
node under two leaves, a node under no switch, an unknown host name or a forest without a root, so
railyard checks those itself and refuses to write such a file.

topology/block (Slurm 23.11+) gets one block per scalable unit and BlockSizes of the base size
times powers of two, the rule slurmctld enforces (src/plugins/topology/block/block_record.c).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import hostlist

from generators.model.catalog import Catalog
from generators.model.errors import DesignError, Problem
from generators.model.plan import Plan
from generators.model.sections import SlurmBlock, SlurmFacts, SlurmSwitch
from generators.model.vocabulary import rank

# "DEFAULT" sets partition defaults in slurm.conf and "all" is the operators' partition in nodes.conf
RESERVED_PARTITIONS = {"default", "all"}
MAX_BLOCK_LEVEL = 15  # slurmctld rejects BlockSizes beyond 2^15 times the base block
# Installed memory the kernel and firmware keep: RealMemory above what slurmd measures drains the node
# ("Low RealMemory"), so declare 97% of the DIMMs, rounded down to whole GiB.
REAL_MEMORY_FRACTION = 0.97


def _first_token(names: list[str]) -> str | None:
    tokens = {n.split("-", 1)[0] for n in names}
    return tokens.pop() if len(tokens) == 1 else None


def slurm_tree(plan: Plan) -> list[SlurmSwitch]:
    """The backend as a topology/tree switch list, leaves first."""
    idx = plan.index()
    servers = [d.name for d in plan.devices if d.kind == "server"]
    order = {s: i for i, s in enumerate(servers)}
    dev_order = {d.name: i for i, d in enumerate(plan.devices)}
    leaf_nodes: dict[str, list[str]] = {}
    parents: dict[str, set[str]] = {}
    for lk in plan.links:
        if lk.network != "backend":
            continue
        a, b = idx[lk.a_device], idx[lk.b_device]
        if a.kind == "switch" and b.kind == "switch":
            low, high = (a, b) if rank(a.role) < rank(b.role) else (b, a)
            parents.setdefault(low.name, set()).add(high.name)
        elif a.kind == "server" and b.kind == "switch":
            leaf_nodes.setdefault(b.name, []).append(a.name)
        elif b.kind == "server" and a.kind == "switch":
            leaf_nodes.setdefault(a.name, []).append(b.name)

    out: list[SlurmSwitch] = []
    taken: set[str] = set(servers)

    def unique(name: str) -> str:
        base, n = name, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        return name

    # level 0: leaves with the same servers are one switch
    by_set: dict[frozenset[str], list[str]] = {}
    for leaf, nodes in leaf_nodes.items():
        by_set.setdefault(frozenset(nodes), []).append(leaf)
    group_of: dict[str, str] = {}
    for node_set, leaves in sorted(by_set.items(), key=lambda kv: min(order[n] for n in kv[0])):
        su = {idx[lf].attrs.get("su") for lf in leaves}
        token = _first_token(leaves)
        if len(leaves) == 1:
            name = leaves[0]
        elif len(su) == 1 and token and token not in idx:
            # "su1" for su1-rail0-leaf ... su1-rail7-leaf; with two leaves per rail, "su1-leaf1" for
            # su1-rail0-leaf1 ... su1-rail7-leaf1 (the unit's first half) and "su1-leaf2"
            last = {lf.rsplit("-", 1)[-1] for lf in leaves}
            name = f"{token}-{last.pop()}" if len(last) == 1 and last != {"leaf"} else token
        else:
            name = f"leafgroup{len(out) + 1}"
        sw = SlurmSwitch(
            unique(name),
            0,
            nodes=sorted(node_set, key=order.__getitem__),
            members=sorted(leaves, key=dev_order.__getitem__),
        )
        out.append(sw)
        for lf in leaves:
            group_of[lf] = sw.name

    # upper levels: switches reaching the same child groups are one switch
    level = 0
    current = set(group_of)
    while True:
        children: dict[str, set[str]] = {}
        for lower in current:
            for hi in parents.get(lower, ()):
                if hi not in group_of:
                    children.setdefault(hi, set()).add(group_of[lower])
        if not children:
            break
        level += 1
        by_children: dict[frozenset[str], list[str]] = {}
        for hi, child_groups in children.items():
            by_children.setdefault(frozenset(child_groups), []).append(hi)
        groups = sorted(by_children.items(), key=lambda kv: min(dev_order[h] for h in kv[1]))
        level_switches = []
        kid_order = {sw.name: j for j, sw in enumerate(out)}
        for i, (kids, members) in enumerate(groups):
            pods = {idx[m].attrs.get("pod") for m in members}
            roles = {idx[m].role for m in members}
            role = roles.pop() if len(roles) == 1 else "switch"
            if len(pods) == 1 and None not in pods:
                name = f"pod{pods.pop()}"
            elif len(groups) == 1:
                name = role
            else:
                name = f"{role}group{i + 1}"
            sw = SlurmSwitch(
                unique(name),
                level,
                switches=sorted(kids, key=kid_order.__getitem__),
                members=sorted(members, key=dev_order.__getitem__),
            )
            level_switches.append(sw)
            for m in members:
                group_of[m] = sw.name
        out += level_switches
        current = {m for sw in level_switches for m in sw.members}
    return out


def check_tree(switches: list[SlurmSwitch], nodes: list[str]) -> list[Problem]:
    """What Slurm would only warn about (or die on) in topology.conf, as errors."""
    problems: list[Problem] = []
    known = set(nodes)
    names = Counter(sw.name for sw in switches)
    for name, n in names.items():
        if n > 1:
            problems.append(Problem("backend", f"Slurm switch {name} is defined {n} times", "report a railyard bug"))
    leaf_of: dict[str, list[str]] = {}
    parent_of: dict[str, list[str]] = {}
    defined = set(names)
    for sw in switches:
        if sw.nodes and sw.switches:
            problems.append(
                Problem(
                    "backend",
                    f"Slurm switch {sw.name} has both nodes and switches",
                    "a topology/tree switch holds nodes or switches, not both",
                )
            )
        if sw.level == 0 and not sw.nodes:
            problems.append(Problem("backend", f"leaf switch {sw.name} holds no nodes", "report a railyard bug"))
        for node in sw.nodes:
            leaf_of.setdefault(node, []).append(sw.name)
        for c in sw.switches:
            parent_of.setdefault(c, []).append(sw.name)
            if c not in defined:
                problems.append(
                    Problem("backend", f"Slurm switch {sw.name} names undefined child {c}", "report a railyard bug")
                )
    twice = sorted(n for n, sws in leaf_of.items() if len(sws) > 1)
    if twice:
        problems.append(
            Problem(
                "backend",
                f"{len(twice)} nodes are under more than one leaf switch, e.g. {twice[0]} "
                f"under {', '.join(leaf_of[twice[0]])}",
                "a server's backend ports must all land on leaves of one scalable unit",
            )
        )
    lacking = [n for n in nodes if n not in leaf_of]
    if lacking:
        problems.append(
            Problem(
                "backend",
                f"{len(lacking)} nodes are under no switch: {hostlist.collect_hostlist(lacking)}",
                "cable every server to the backend",
            )
        )
    unknown = sorted(set(leaf_of) - known)
    if unknown:
        problems.append(
            Problem(
                "backend", f"switches name {len(unknown)} unknown nodes, e.g. {unknown[0]}", "report a railyard bug"
            )
        )
    multi = sorted(c for c, ps in parent_of.items() if len(ps) > 1)
    if multi:
        problems.append(
            Problem(
                "backend",
                f"Slurm switch {multi[0]} has several parents: {', '.join(parent_of[multi[0]])}",
                "report a railyard bug",
            )
        )
    roots = [sw.name for sw in switches if sw.name not in parent_of]
    if len(roots) > 1:
        problems.append(
            Problem(
                "backend",
                f"no switch reaches all nodes: {len(roots)} roots "
                f"({', '.join(roots[:4])}{', ...' if len(roots) > 4 else ''})",
                "connect every leaf to the spine layer; jobs cannot span separate trees",
            )
        )
    return problems


def block_sizes(base: int, n_blocks: int) -> list[int]:
    """Base block size times 1, 2, 4, ... up to the number of blocks (Slurm drops larger ones anyway)."""
    top = min(MAX_BLOCK_LEVEL, int(math.log2(n_blocks))) if n_blocks else 0
    return [base << k for k in range(top + 1)]


def slurm_blocks(plan: Plan) -> tuple[list[SlurmBlock], list[int]]:
    """One block per scalable unit, in unit order; for a rack system one block per rack (its NVLink
    domain: a job that fits one rack runs over NVLink alone), BlockSizes the rack's trays times powers
    of two, so larger blocks are 2, 4, ... racks (NVIDIA's topograph: 18/36/72 nodes for NVL72)."""
    servers = [d for d in plan.devices if d.kind == "server"]
    system = plan.design.compute.system
    if system is not None:
        trays = plan.catalog.rack_systems[system].trays
        racks = [[d.name for d in servers[k : k + trays]] for k in range(0, len(servers), trays)]
        w = max(2, len(str(len(racks))))
        nvl = [SlurmBlock(f"nvl{k + 1:0{w}d}", nodes) for k, nodes in enumerate(racks)]
        return nvl, block_sizes(trays, len(nvl))
    by_su: dict[int, list[str]] = {}
    for d in servers:
        by_su.setdefault(int(d.attrs.get("su", 1)), []).append(d.name)
    # unpadded, as the leaves are named (placement is stable as a site grows, names too: issue 43)
    blocks = [SlurmBlock(f"su{su}", nodes) for su, nodes in sorted(by_su.items())]
    base = min((len(b.nodes) for b in blocks), default=0)
    return blocks, block_sizes(base, len(blocks))


def check_blocks(blocks: list[SlurmBlock], sizes: list[int], nodes: list[str]) -> list[Problem]:
    """The rules slurmctld's topology/block applies (some only as warnings), as errors."""
    problems: list[Problem] = []
    if not blocks or not sizes:
        return [Problem("backend.su_size", "no blocks", "the design has no servers")]
    base = sizes[0]
    for s in sizes:
        level = s // base
        if s % base or level & (level - 1) or level > 1 << MAX_BLOCK_LEVEL:
            problems.append(
                Problem(
                    "backend.su_size",
                    f"BlockSizes value {s} is not {base} times a power of two (at most 2^{MAX_BLOCK_LEVEL})",
                    "use the base block size times 1, 2, 4, ...",
                )
            )
    if sizes != sorted(set(sizes)):
        problems.append(Problem("backend.su_size", f"BlockSizes {sizes} are not increasing", "sort them"))
    member: dict[str, list[str]] = {}
    for b in blocks:
        if len(b.nodes) < base:
            problems.append(
                Problem(
                    "backend.su_size",
                    f"block {b.name} has {len(b.nodes)} nodes, fewer than the base block size {base}",
                    "make every scalable unit at least the base size",
                )
            )
        for node in b.nodes:
            member.setdefault(node, []).append(b.name)
    dup = Counter(b.name for b in blocks)
    for name, n in dup.items():
        if n > 1:
            problems.append(Problem("backend.su_size", f"block {name} is defined {n} times", "report a railyard bug"))
    twice = sorted(n for n, bs in member.items() if len(bs) > 1)
    if twice:
        problems.append(
            Problem(
                "backend.su_size",
                f"{len(twice)} nodes are in more than one block, e.g. {twice[0]} in {', '.join(member[twice[0]])}",
                "a node belongs to exactly one block",
            )
        )
    lacking = [n for n in nodes if n not in member]
    if lacking:
        problems.append(
            Problem(
                "backend.su_size",
                f"{len(lacking)} nodes are in no block: {hostlist.collect_hostlist(lacking)}",
                "every server belongs to a scalable unit",
            )
        )
    return problems


# topology.yaml (Slurm 25.05+) as topology.yaml(5) defines it, https://slurm.schedmd.com/topology.yaml.html:
# a list of topologies, each `topology` (its name, first) and optional `cluster_default`, and exactly
# one of `block` (block_sizes, blocks of `block` and `nodes`), `flat` or `tree` (switches of `switch`
# and `children` or `nodes`)
TOPOLOGY_KEYS = {"topology", "cluster_default", "block", "flat", "tree"}
TOPOLOGY_KINDS = ("block", "flat", "tree")
BLOCK_KEYS, BLOCK_ENTRY_KEYS = {"block_sizes", "blocks"}, {"block", "nodes"}
TREE_KEYS, SWITCH_KEYS = {"switches"}, {"switch", "children", "nodes"}


def check_topology_yaml(doc: Any, nodes: list[str]) -> list[str]:
    """What slurmctld 25.05 would refuse in topology.yaml, and the block rules, as messages (railyard
    cannot run a Slurm newer than Debian's 22.05, so it checks the file against the documented keys)."""
    if not isinstance(doc, list) or not doc:
        return ["topology.yaml: must be a non-empty list of topologies"]
    out: list[str] = []
    names = [t.get("topology") if isinstance(t, dict) else None for t in doc]
    if len(set(names)) != len(names):
        out.append(f"topology names must be unique: {names}")
    defaults = [t for t in doc if isinstance(t, dict) and t.get("cluster_default") is True]
    if not defaults:
        out.append("no topology has cluster_default: true (partitions without Topology= would have none)")
    for i, t in enumerate(doc):
        at = f"topology {i + 1}"
        if not isinstance(t, dict) or next(iter(t), None) != "topology" or not isinstance(t["topology"], str):
            out.append(f"{at}: the first attribute must be `topology` (its name)")
            continue
        if extra := set(t) - TOPOLOGY_KEYS:
            out.append(f"{at}: unknown attributes {sorted(extra)}")
        kinds = [k for k in TOPOLOGY_KINDS if k in t]
        if len(kinds) != 1:
            out.append(f"{at}: needs exactly one of block, flat, tree (has {kinds})")
            continue
        body = t[kinds[0]]
        if kinds[0] == "block":
            out += _check_block_yaml(at, body, nodes)
        elif kinds[0] == "tree":
            if not isinstance(body, dict) or set(body) != TREE_KEYS or not isinstance(body["switches"], list):
                out.append(f"{at}: tree must hold `switches`, a list")
                continue
            for j, sw in enumerate(body["switches"]):
                if (
                    not isinstance(sw, dict)
                    or "switch" not in sw
                    or set(sw) - SWITCH_KEYS
                    or ("children" in sw) == ("nodes" in sw)
                ):
                    out.append(f"{at}: switch {j + 1} must be `switch` with `children` or `nodes`")
        elif body is not True:
            out.append(f"{at}: flat must be true")
    return out


def _check_block_yaml(at: str, body: Any, nodes: list[str]) -> list[str]:
    if not isinstance(body, dict) or set(body) != BLOCK_KEYS:
        return [f"{at}: block must hold block_sizes and blocks"]
    sizes, entries = body["block_sizes"], body["blocks"]
    if not isinstance(sizes, list) or not all(isinstance(x, int) for x in sizes) or not isinstance(entries, list):
        return [f"{at}: block_sizes must be a list of integers and blocks a list"]
    blocks: list[SlurmBlock] = []
    for j, e in enumerate(entries):
        if not isinstance(e, dict) or set(e) != BLOCK_ENTRY_KEYS:
            return [f"{at}: block {j + 1} must be `block` and `nodes`"]
        blocks.append(SlurmBlock(str(e["block"]), hostlist.expand_hostlist(str(e["nodes"]))))
    return [f"{at}: {p.message}" for p in check_blocks(blocks, sizes, nodes)]


def check(plan: Plan, catalog: Catalog) -> None:
    """Compiler stage: the Slurm topology the plan implies must be one Slurm accepts without warnings."""
    nodes = [d.name for d in plan.devices if d.kind == "server"]
    tree = slurm_tree(plan)
    problems = check_tree(tree, nodes)
    for i, t in enumerate(plan.design.tenants):
        if t.name.lower() in RESERVED_PARTITIONS:
            problems.append(
                Problem(
                    f"tenants.{i}.name",
                    f"{t.name!r} names a Slurm partition railyard "
                    f"already writes ({', '.join(sorted(RESERVED_PARTITIONS))})",
                    "rename the tenant",
                )
            )
    blocks, sizes = slurm_blocks(plan)
    problems += check_blocks(blocks, sizes, nodes)
    if problems:
        raise DesignError(problems)
    levels = Counter(sw.level for sw in tree)
    plan.slurm = SlurmFacts(
        switches_per_level=[levels[lv] for lv in sorted(levels)],
        blocks=len(blocks),
        block_sizes=sizes,
        tree=tree,
        topology_blocks=blocks,
    )
