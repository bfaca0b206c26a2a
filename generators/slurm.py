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
import re
from collections import Counter
from dataclasses import dataclass, field

import hostlist

from generators.catalog import Catalog
from generators.design import Design, resolved_config, tenant_members
from generators.errors import DesignError, Problem
from generators.plan import Plan

# "DEFAULT" sets partition defaults in slurm.conf and "all" is the operators' partition in nodes.conf
RESERVED_PARTITIONS = {"default", "all"}
MAX_BLOCK_LEVEL = 15  # slurmctld rejects BlockSizes beyond 2^15 times the base block
_ROLE_RANK = {"leaf": 0, "spine": 1, "core": 2}
# Installed memory the kernel and firmware keep: RealMemory above what slurmd measures drains the node
# ("Low RealMemory"), so declare 97% of the DIMMs, rounded down to whole GiB.
REAL_MEMORY_FRACTION = 0.97


@dataclass(slots=True)
class SlurmSwitch:
    name: str
    level: int
    nodes: list[str] = field(default_factory=list)  # level 0: the servers below
    switches: list[str] = field(default_factory=list)  # above level 0: child Slurm switches
    members: list[str] = field(default_factory=list)  # the plan switches it stands for


@dataclass(slots=True)
class Block:
    name: str
    nodes: list[str]


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
            lo, hi = (a, b) if _ROLE_RANK.get(a.role, 0) < _ROLE_RANK.get(b.role, 0) else (b, a)
            parents.setdefault(lo.name, set()).add(hi.name)
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
    for nodes, leaves in sorted(by_set.items(), key=lambda kv: min(order[n] for n in kv[0])):
        su = {idx[lf].attrs.get("su") for lf in leaves}
        token = _first_token(leaves)
        if len(leaves) == 1:
            name = leaves[0]
        elif len(su) == 1 and token and token not in idx:
            name = token  # "su1" for su1-rail0-leaf ... su1-rail7-leaf
        else:
            name = f"leafgroup{len(out) + 1}"
        sw = SlurmSwitch(unique(name), 0, nodes=sorted(nodes, key=order.__getitem__),
                         members=sorted(leaves, key=dev_order.__getitem__))
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
        for hi, kids in children.items():
            by_children.setdefault(frozenset(kids), []).append(hi)
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
            sw = SlurmSwitch(unique(name), level, switches=sorted(kids, key=kid_order.__getitem__),
                             members=sorted(members, key=dev_order.__getitem__))
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
            problems.append(Problem("backend", f"Slurm switch {sw.name} has both nodes and switches",
                                    "a topology/tree switch holds nodes or switches, not both"))
        if sw.level == 0 and not sw.nodes:
            problems.append(Problem("backend", f"leaf switch {sw.name} holds no nodes", "report a railyard bug"))
        for n in sw.nodes:
            leaf_of.setdefault(n, []).append(sw.name)
        for c in sw.switches:
            parent_of.setdefault(c, []).append(sw.name)
            if c not in defined:
                problems.append(Problem("backend", f"Slurm switch {sw.name} names undefined child {c}",
                                        "report a railyard bug"))
    twice = sorted(n for n, sws in leaf_of.items() if len(sws) > 1)
    if twice:
        problems.append(Problem("backend", f"{len(twice)} nodes are under more than one leaf switch, e.g. {twice[0]} "
                                f"under {', '.join(leaf_of[twice[0]])}",
                                "a server's backend ports must all land on leaves of one scalable unit"))
    lacking = [n for n in nodes if n not in leaf_of]
    if lacking:
        problems.append(Problem("backend", f"{len(lacking)} nodes are under no switch: "
                                f"{hostlist.collect_hostlist(lacking)}", "cable every server to the backend"))
    unknown = sorted(set(leaf_of) - known)
    if unknown:
        problems.append(Problem("backend", f"switches name {len(unknown)} unknown nodes, e.g. {unknown[0]}",
                                "report a railyard bug"))
    multi = sorted(c for c, ps in parent_of.items() if len(ps) > 1)
    if multi:
        problems.append(Problem("backend", f"Slurm switch {multi[0]} has several parents: "
                                f"{', '.join(parent_of[multi[0]])}", "report a railyard bug"))
    roots = [sw.name for sw in switches if sw.name not in parent_of]
    if len(roots) > 1:
        problems.append(Problem("backend", f"no switch reaches all nodes: {len(roots)} roots "
                                f"({', '.join(roots[:4])}{', ...' if len(roots) > 4 else ''})",
                                "connect every leaf to the spine layer; jobs cannot span separate trees"))
    return problems


def block_sizes(base: int, n_blocks: int) -> list[int]:
    """Base block size times 1, 2, 4, ... up to the number of blocks (Slurm drops larger ones anyway)."""
    top = min(MAX_BLOCK_LEVEL, int(math.log2(n_blocks))) if n_blocks else 0
    return [base << k for k in range(top + 1)]


def slurm_blocks(plan: Plan) -> tuple[list[Block], list[int]]:
    """One block per scalable unit, in unit order."""
    servers = [d for d in plan.devices if d.kind == "server"]
    by_su: dict[int, list[str]] = {}
    for d in servers:
        by_su.setdefault(int(d.attrs.get("su", 1)), []).append(d.name)
    w = len(str(max(by_su, default=1)))
    blocks = [Block(f"su{su:0{w}d}", nodes) for su, nodes in sorted(by_su.items())]
    base = min((len(b.nodes) for b in blocks), default=0)
    return blocks, block_sizes(base, len(blocks))


def check_blocks(blocks: list[Block], sizes: list[int], nodes: list[str]) -> list[Problem]:
    """The rules slurmctld's topology/block applies (some only as warnings), as errors."""
    problems: list[Problem] = []
    if not blocks or not sizes:
        return [Problem("backend.su_size", "no blocks", "the design has no servers")]
    base = sizes[0]
    for s in sizes:
        level = s // base
        if s % base or level & (level - 1) or level > 1 << MAX_BLOCK_LEVEL:
            problems.append(Problem("backend.su_size", f"BlockSizes value {s} is not {base} times a power of two "
                                    f"(at most 2^{MAX_BLOCK_LEVEL})", "use the base block size times 1, 2, 4, ..."))
    if sizes != sorted(set(sizes)):
        problems.append(Problem("backend.su_size", f"BlockSizes {sizes} are not increasing", "sort them"))
    member: dict[str, list[str]] = {}
    for b in blocks:
        if len(b.nodes) < base:
            problems.append(Problem("backend.su_size", f"block {b.name} has {len(b.nodes)} nodes, fewer than the "
                                    f"base block size {base}", "make every scalable unit at least the base size"))
        for n in b.nodes:
            member.setdefault(n, []).append(b.name)
    dup = Counter(b.name for b in blocks)
    for name, n in dup.items():
        if n > 1:
            problems.append(Problem("backend.su_size", f"block {name} is defined {n} times", "report a railyard bug"))
    twice = sorted(n for n, bs in member.items() if len(bs) > 1)
    if twice:
        problems.append(Problem("backend.su_size", f"{len(twice)} nodes are in more than one block, e.g. {twice[0]} in "
                                f"{', '.join(member[twice[0]])}", "a node belongs to exactly one block"))
    lacking = [n for n in nodes if n not in member]
    if lacking:
        problems.append(Problem("backend.su_size", f"{len(lacking)} nodes are in no block: "
                                f"{hostlist.collect_hostlist(lacking)}", "every server belongs to a scalable unit"))
    return problems


def check(plan: Plan, catalog: Catalog) -> None:
    """Compiler stage: the Slurm topology the plan implies must be one Slurm accepts without warnings."""
    nodes = [d.name for d in plan.devices if d.kind == "server"]
    tree = slurm_tree(plan)
    problems = check_tree(tree, nodes)
    for i, t in enumerate(plan.design.get("tenants", [])):
        if t["name"].lower() in RESERVED_PARTITIONS:
            problems.append(Problem(f"tenants.{i}.name", f"{t['name']!r} names a Slurm partition railyard "
                                    f"already writes ({', '.join(sorted(RESERVED_PARTITIONS))})",
                                    "rename the tenant"))
    blocks, sizes = slurm_blocks(plan)
    problems += check_blocks(blocks, sizes, nodes)
    if problems:
        raise DesignError(problems)
    levels = Counter(sw.level for sw in tree)
    plan.extra["slurm"] = {"switches_per_level": [levels[lv] for lv in sorted(levels)], "blocks": len(blocks),
                           "block_sizes": sizes}


# ----------------------------------------------------------------------------------------- rendering


_TAIL_DIGITS = re.compile(r"^(.*?)(\d*)$")


def slurm_hostlist(names: list[str]) -> str:
    """A hostlist expression Slurm 22.05 parses. python-hostlist folds two varying numbers into
    "su[1-4]-leaf[01-08]", which slurmctld rejects ("Invalid hostlist"); folding each prefix before
    the trailing number separately keeps to one range per term: "su1-leaf[01-08],su2-leaf[01-08]"."""
    by_prefix: dict[str, list[str]] = {}
    for n in names:
        by_prefix.setdefault(_TAIL_DIGITS.match(n).group(1), []).append(n)  # type: ignore[union-attr]
    return ",".join(hostlist.collect_hostlist(group) for group in by_prefix.values())



def cluster_name(plan: Plan) -> str:
    # slurmdbd builds table names from it: keep to lower case, digits and underscores
    return plan.design["name"].replace("-", "_")[:40]


def _topology_conf(plan: Plan, tree: list[SlurmSwitch]) -> str:
    be = plan.networks["backend"]
    lines = [
        f"# Slurm topology/tree for {plan.design['name']}: generated by railyard from the backend fabric.",
        f"# {be['topology']}, {be['tiers']} tiers, {be['scalable_units']} scalable units of {be['su_size']} servers.",
        "# A level-0 switch is a set of real leaves with the same servers (a rail-optimized scalable unit is",
        "# one: its rail leaves are one hop from every server of the unit); upper switches stand for the",
        "# real switches that reach the same children.",
        "# slurm.conf: TopologyPlugin=topology/tree",
    ]
    for sw in tree:
        real = f"  # {hostlist.collect_hostlist(sw.members)}" if sw.members != [sw.name] else ""  # a comment: any form
        if sw.level == 0:
            lines.append(f"SwitchName={sw.name} Nodes={slurm_hostlist(sw.nodes)}{real}")
        else:
            lines.append(f"SwitchName={sw.name} Switches={slurm_hostlist(sw.switches)}{real}")
    return "\n".join(lines) + "\n"


def _topology_block_conf(plan: Plan, blocks: list[Block], sizes: list[int]) -> str:
    lines = [
        f"# Slurm topology/block (Slurm 23.11 or later) for {plan.design['name']}: generated by railyard.",
        "# One block per scalable unit; BlockSizes are the unit size times powers of two. To use it, install",
        "# it as topology.conf and set TopologyPlugin=topology/block (Slurm 22.05 has no block plugin).",
    ]
    lines += [f"BlockName={b.name} Nodes={slurm_hostlist(b.nodes)}" for b in blocks]
    lines.append(f"BlockSizes={','.join(str(s) for s in sizes)}")
    return "\n".join(lines) + "\n"


def _node_shape(plan: Plan) -> tuple[str, int, int]:
    """(NodeName attributes, GPUs, RealMemory MiB) of the compute servers, from catalog + configuration."""
    design = Design.model_validate(plan.design)
    catalog = Catalog.model_validate(plan.catalog)
    model = catalog.servers[design.compute.server]
    cfg = resolved_config(design, catalog)
    cores = catalog.cpus[cfg.cpu].cores
    mem = int(cfg.memory_gb * REAL_MEMORY_FRACTION) * 1024
    sockets = model.cpu_sockets
    attrs = (f"CPUs={sockets * cores} Boards=1 SocketsPerBoard={sockets} CoresPerSocket={cores} ThreadsPerCore=1 "
             f"RealMemory={mem}")
    return attrs, model.gpus, mem


def _nodes_conf(plan: Plan, blocks: list[Block]) -> str:
    attrs, gpus, _ = _node_shape(plan)
    server = plan.design["compute"]["server"]
    gres = f" Gres=gpu:{gpus}" if gpus else ""
    lines = [
        f"# Slurm nodes and partitions for {plan.design['name']}: generated by railyard.",
        "# CPUs are physical cores (ThreadsPerCore=1 holds whether or not SMT is on); RealMemory is 97% of the",
        "# installed memory so slurmd's measurement is never below it (that would drain the node).",
    ]
    for b in blocks:
        lines.append(f"NodeName={slurm_hostlist(b.nodes)} {attrs}{gres} Feature={server},{b.name}")
    design = Design.model_validate(plan.design)
    members = tenant_members(design)
    lines += [
        "",
        "# Servers are rented whole: jobs get whole nodes. Tenants submit to their own partition; AllowAccounts",
        "# is binding with slurmdbd and AccountingStorageEnforce=associations (see slurm.conf).",
        "PartitionName=DEFAULT State=UP MaxTime=INFINITE OverSubscribe=EXCLUSIVE",
        "# operators: burn-in, acceptance tests and health checks on every server",
        "PartitionName=all Nodes=ALL Default=YES AllowAccounts=root PriorityTier=1",
    ]
    for t in design.tenants:
        nodes = slurm_hostlist(members[t.name])
        lines.append(f"PartitionName={t.name} Nodes={nodes} AllowAccounts={t.name} PriorityTier=10")
    return "\n".join(lines) + "\n"


def _gres_conf(plan: Plan, blocks: list[Block]) -> str:
    _, gpus, _ = _node_shape(plan)
    lines = [f"# Slurm gres.conf for {plan.design['name']}: generated by railyard (read by slurmd on each node)."]
    if gpus:
        nodes = [n for b in blocks for n in b.nodes]
        lines.append(f"NodeName={slurm_hostlist(nodes)} Name=gpu File=/dev/nvidia[0-{gpus - 1}]")
    return "\n".join(lines) + "\n"


def _slurm_conf(plan: Plan) -> str:
    mgmt = [d.name for d in plan.devices if d.kind == "management"][:2]
    lines = [
        f"# slurm.conf fragment for {plan.design['name']}: generated by railyard. Merge it into the site's",
        "# slurm.conf; topology.conf, nodes.conf and gres.conf go in the same directory.",
        f"ClusterName={cluster_name(plan)}",
    ]
    lines += [f"SlurmctldHost={m}" for m in mgmt]  # the second one is the backup controller
    lines += [
        "AuthType=auth/munge",
        "CredType=cred/munge",
        "SlurmUser=slurm",
        "StateSaveLocation=/var/spool/slurmctld",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "TopologyPlugin=topology/tree",
        "GresTypes=gpu",
        "ProctrackType=proctrack/cgroup",
        "TaskPlugin=task/cgroup,task/affinity",
        "MpiDefault=pmix",
        "# Tenant partitions use AllowAccounts: with slurmdbd, enforce associations so it is binding.",
        "#AccountingStorageType=accounting_storage/slurmdbd",
        "#AccountingStorageEnforce=associations,limits,qos",
        "Include nodes.conf",
    ]
    return "\n".join(lines) + "\n"


def render_slurm(plan: Plan) -> dict[str, str]:
    tree = slurm_tree(plan)
    blocks, sizes = slurm_blocks(plan)
    nodes = [d.name for d in plan.devices if d.kind == "server"]
    problems = check_tree(tree, nodes) + check_blocks(blocks, sizes, nodes)
    if problems:
        raise DesignError(problems)
    return {
        "slurm/slurm.conf": _slurm_conf(plan),
        "slurm/topology.conf": _topology_conf(plan, tree),
        "slurm/topology-block.conf": _topology_block_conf(plan, blocks, sizes),
        "slurm/nodes.conf": _nodes_conf(plan, blocks),
        "slurm/gres.conf": _gres_conf(plan, blocks),
    }
