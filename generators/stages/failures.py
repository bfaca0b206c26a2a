"""Failure domains of a multi-plane backend: what one switch, one plane or one rack of switches takes away.

For each kind of failure the report takes the member that carries the most (the leaf serving the most
server bandwidth, the spine or core with the most link bandwidth, the plane with the largest bisection,
the leaf, spine or core rack whose switches carry the most link bandwidth; the first in plan order on a
tie: in a regular fabric every member of a kind takes the same) and measures on the graph, with its
switches removed:

* the GPUs losing bandwidth: a GPU's backend bandwidth is its NIC legs' (server backend port j serves
  GPU j x gpus // ports: one port per GPU, or a GPU's legs in consecutive ports, as the catalog lists
  them). A leg on a failed leaf is lost; a leg on a leaf that keeps less uplink bandwidth keeps its
  leaf's share (uplink over downlink, at most 1, against the same share before: a 2:1 leaf's legs lose
  nothing until its uplinks drop further), a spine's lost core uplinks shrinking its leaves' uplinks
  the same way. A GPU is cut off when it keeps nothing beyond its own leaf (the leaf gone, or left
  with no uplink);
* the bisection kept: each plane's max-flow from the first half of its surviving leaves to the second (in
  the order the invariants cut them), summed over the planes, over the sum before: what the fabric left
  standing carries across its middle.

The invariants stage calls `failure_domains` once the planes' bisections are proven; the rows go into
`networks.backend.failure_domains` and the renderer writes them as failure-domains.csv.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from generators.model.catalog import Catalog
from generators.model.plan import Device, Plan
from generators.model.planes import device_plane, plane_order
from generators.model.sections import FailureDomain, PlaneBisection
from generators.stages.bisection import TIER, CapacityGraph, max_flow


@dataclass(slots=True)
class _Fabric:
    """The backend as the failures read it."""

    g: CapacityGraph  # switch-level links, parallel links merged
    role: dict[str, str]  # backend switch -> leaf, spine or core
    plane: dict[str, str]  # backend switch -> its plane
    leaves: dict[str, list[str]]  # plane -> its leaves, in plan order
    down: dict[str, int]  # leaf -> Gb/s to its servers
    # leaf -> its servers' legs: (GPU key, Gb/s); a GPU key is (server, GPU index)
    legs: dict[str, list[tuple[tuple[str, int], int]]] = field(default_factory=dict)
    gpu_gbps: dict[tuple[str, int], int] = field(default_factory=dict)  # a GPU's backend Gb/s, all legs


def _fabric(plan: Plan, catalog: Catalog, g: CapacityGraph, nic_ports: list[str]) -> _Fabric:
    devs = plan.index()
    sw = [d for d in plan.devices if d.kind == "switch" and d.network == "backend" and d.role in TIER]
    leaves: dict[str, list[str]] = defaultdict(list)
    for d in sw:
        if d.role == "leaf":
            leaves[device_plane(d)].append(d.name)
    fab = _Fabric(g, {d.name: str(d.role) for d in sw}, {d.name: device_plane(d) for d in sw}, dict(leaves), {})
    index = {p: i for i, p in enumerate(nic_ports)}
    legs: dict[str, list[tuple[tuple[str, int], int]]] = defaultdict(list)
    for lk in plan.links:
        if lk.network != "backend" or lk.tier != "server-leaf":
            continue
        server = devs[lk.a_device]
        if server.kind != "server" or lk.a_port not in index:
            continue
        gpus = catalog.servers[server.model].gpus or 1
        n, j = len(nic_ports), index[lk.a_port]
        first = j * gpus // n
        # the GPUs port j serves: one (a GPU with several legs), or several (a NIC shared by GPUs), each
        # its equal share of the leg
        served = range(first, max(first + 1, (j + 1) * gpus // n))
        for gpu in served:
            key = (server.name, gpu)
            share = lk.speed_gbps // len(served)
            legs[lk.b_device].append((key, share))
            fab.gpu_gbps[key] = fab.gpu_gbps.get(key, 0) + share
        fab.down[lk.b_device] = fab.down.get(lk.b_device, 0) + lk.speed_gbps
    fab.legs = dict(legs)
    return fab


def _share(up: float, down: int) -> float:
    """What a leaf's (or spine's) downlinks get of their bandwidth through its uplinks: at most all."""
    return min(1.0, up / down) if down else 1.0


def _kept(fab: _Fabric, failed: set[str]) -> dict[str, float]:
    """Leaf -> the share of its legs' bandwidth kept, for the leaves the failure touches (the others keep
    all of it): 0 for a failed leaf; else its uplinks' bandwidth through the surviving spines (each spine
    passing on what it keeps of its own uplinks), over its downlinks, against the same before."""
    adj = fab.g.adj
    spine_kept: dict[str, float] = {}
    for s, role in fab.role.items():
        if role != "spine":
            continue
        if s in failed:
            spine_kept[s] = 0.0
            continue
        ups = [(c, cap) for c, cap in adj.get(s, {}).items() if fab.role.get(c) == "core"]
        lost = sum(cap for c, cap in ups if c in failed)
        if lost:
            up = sum(cap for _, cap in ups)
            down = sum(cap for n, cap in adj[s].items() if fab.role.get(n) == "leaf")
            spine_kept[s] = _share(up - lost, down) / _share(up, down)
    out: dict[str, float] = {}
    for leaf, down_gbps in fab.down.items():
        if leaf in failed:
            out[leaf] = 0.0
            continue
        row = adj.get(leaf, {})
        if not any(s in spine_kept for s in row):
            continue
        up = sum(row.values())
        now = sum(cap * spine_kept.get(s, 1.0) for s, cap in row.items())
        k = _share(now, down_gbps) / _share(up, down_gbps)
        if k < 1.0:
            out[leaf] = k
    return out


def _bisection(fab: _Fabric, plane: str, failed: set[str]) -> int:
    """The plane's max-flow across the bisection of what is left: its surviving leaves (in the order the
    invariants cut them) in halves, the failed switches gone."""
    leaves = [x for x in fab.leaves.get(plane, []) if x not in failed]
    if len(leaves) < 2:
        return 0
    half = len(leaves) // 2
    mine = {n for n, p in fab.plane.items() if p == plane} - failed
    g = CapacityGraph()
    for a in mine:
        for b, cap in fab.g.adj.get(a, {}).items():
            if b in mine and a < b:
                g.add(a, b, cap)
    a_side = {x: fab.down.get(x, 0) for x in leaves[:half]}
    b_side = {x: fab.down.get(x, 0) for x in leaves[half:]}
    for x in (*a_side, *b_side):
        if x not in g.adj:
            g.adj[x] = {}  # a leaf left without uplinks still sources its servers' traffic (to nowhere)
    tier = {n: TIER[fab.role[n]] for n in g.adj}
    return int(max_flow(g, a_side, b_side, tier))


def _domain(
    fab: _Fabric, per_plane: dict[str, int], scenario: str, failed_name: str, failed: set[str]
) -> FailureDomain:
    kept = _kept(fab, failed)
    lost: dict[tuple[str, int], float] = defaultdict(float)
    for leaf, k in kept.items():
        for key, gbps in fab.legs.get(leaf, []):
            lost[key] += gbps * (1.0 - k)
    losing = {key: x for key, x in lost.items() if x > 1e-9}
    cut = sum(1 for key, x in losing.items() if x >= fab.gpu_gbps[key] - 1e-9)
    worst = min((1.0 - x / fab.gpu_gbps[key] for key, x in losing.items()), default=1.0)
    touched = {fab.plane[n] for n in failed}
    after = sum(per_plane[p] if p not in touched else _bisection(fab, p, failed) for p in per_plane)
    before = sum(per_plane.values())
    return FailureDomain(
        scenario=scenario,
        failed=failed_name,
        switches=len(failed),
        gpus_losing_bandwidth=len(losing),
        gpus_cut_off=cut,
        worst_gpu_bandwidth_kept=round(worst, 4),
        bisection_gbps=after,
        bisection_kept=round(after / before, 4) if before else 1.0,
    )


def _capacity(fab: _Fabric, names: list[str]) -> int:
    """Link bandwidth the switches carry: to other switches and to servers."""
    return sum(sum(fab.g.adj.get(n, {}).values()) + fab.down.get(n, 0) for n in names)


def failure_domains(
    plan: Plan, catalog: Catalog, g: CapacityGraph, nic_ports: list[str], planes: list[PlaneBisection]
) -> list[FailureDomain]:
    """One row per kind of failure the backend has (leaf, spine, core, plane, leaf/spine/core rack): the
    worst member of the kind, what it takes away."""
    fab = _fabric(plan, catalog, g, nic_ports)
    per_plane = {pb.plane: pb.max_flow_gbps for pb in planes}
    devs: dict[str, Device] = plan.index()
    out: list[FailureDomain] = []
    # max() keeps the first of equals: the first in plan order (racks: in name order)
    for role in ("leaf", "spine", "core"):
        members = [n for n, r in fab.role.items() if r == role]
        if members:
            worst = max(members, key=lambda n: _capacity(fab, [n]))
            out.append(_domain(fab, per_plane, role, worst, {worst}))
    if per_plane:
        plane = max(sorted(per_plane, key=plane_order), key=lambda p: per_plane[p])
        out.append(_domain(fab, per_plane, "plane", plane, {n for n, p in fab.plane.items() if p == plane}))
    racks: dict[str, list[str]] = defaultdict(list)
    for n in fab.role:
        rack = devs[n].rack
        if rack is not None:
            racks[rack].append(n)
    rack_role = {r.name: r.role for r in plan.racks}
    for role in ("leaf", "spine", "core"):
        mine = sorted(r for r in racks if rack_role.get(r) == role)
        if mine:
            worst = max(mine, key=lambda r: _capacity(fab, racks[r]))
            out.append(_domain(fab, per_plane, f"{role} rack", worst, set(racks[worst])))
    return out
