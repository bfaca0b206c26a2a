"""Design -> fabric graph: every device with named ports and every link of the backend, frontend and
dedicated storage networks (the out-of-band network is built once placement knows the racks:
`generators.stages.oob`).

The builder wires exactly what the design asks for, with a fixed port convention (leaf downlinks on
the first ports, uplinks next, spine-major so a leaf's links to one spine share a cage); it does not
try to repair a design. Whether the result is sound is decided by `generators.stages.invariants` on the
graph itself, so a design that over-fills a switch or misses a ratio fails there with a named field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from generators.model.catalog import Catalog, Switch
from generators.model.design import (
    Design,
    attached_nodes,
    backend_speed,
    management_model,
    ratio_value,
    server_names,
    storage_fabric_ports,
    storage_fabric_speed,
)
from generators.model.errors import DesignError
from generators.model.plan import Device, Link, Plan
from generators.model.ports import backend_ports, port_table
from generators.model.sections import (
    BackendFacts,
    FrontendFacts,
    Networks,
    Oversubscription,
    PlanWarning,
    StorageFacts,
    SubnetManagerPort,
)
from generators.model.vocabulary import Kind, Network, Role, Tier

# --------------------------------------------------------------------------------------------- ports

_ELIGIBLE_CACHE: dict[tuple[int, int, str], list[int]] = {}


def overflow_port(index: int) -> str:
    """Name of a port the model does not have; the port-count invariant reports it."""
    return f"overflow-{index + 1}"


def eligible(model: Switch, speed: int, role: str) -> list[int]:
    """Port indices that can run `speed` for a downlink or uplink, preferred groups first."""
    ports = port_table(model)
    key = (id(model), speed, role)
    if key not in _ELIGIBLE_CACHE:
        first = [i for i, p in enumerate(ports) if p.role == role and speed in p.speeds]
        shared = [i for i, p in enumerate(ports) if p.role == "any" and speed in p.speeds]
        _ELIGIBLE_CACHE[key] = first + shared
    return _ELIGIBLE_CACHE[key]


def native_speed(model: Switch, role: str) -> int:
    groups = [g for g in model.port_groups if g.role in (role, "any")]
    return max(g.speed_gbps for g in groups)


# --------------------------------------------------------------------------------------------- builder


@dataclass(slots=True)
class Builder:
    catalog: Catalog
    devices: list[Device] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    by_name: dict[str, Device] = field(default_factory=dict)

    def add(self, dev: Device) -> Device:
        self.devices.append(dev)
        self.by_name[dev.name] = dev
        return dev

    def switch(self, name: str, model: str, network: Network, role: Role, **attrs: Any) -> Device:
        sw = self.catalog.switches[model]
        return self.add(Device(name, Kind.SWITCH, role, model, network, sw.ports, attrs))

    def port_name(self, dev: str, index: int) -> str:
        table = port_table(self.catalog.switches[self.by_name[dev].model])
        return table[index].name if index < len(table) else overflow_port(index)

    def link(self, network: Network, tier: Tier, speed: int, a: str, a_port: str, b: str, b_port: str) -> None:
        self.links.append(Link(network, tier, speed, a, a_port, b, b_port))


def _layout(model: Switch, down_speed: int, down: int, up_speed: int, up: int) -> tuple[list[int], list[int]]:
    """Leaf port convention: downlinks on the first eligible ports, uplinks on the next ones.
    Indices past the model's ports are kept (as overflow) so the invariants can name the problem."""
    downs = eligible(model, down_speed, "down")
    downs = (downs + list(range(model.ports, model.ports + down)))[:down]
    ups_all = [i for i in eligible(model, up_speed, "up") if i not in set(downs)]
    start = max(downs, default=-1) + 1 if model.port_groups[0].role == "any" else 0
    ups = [i for i in ups_all if i >= start] + [i for i in ups_all if i < start]
    overflow_from = max(model.ports, max(downs, default=-1) + 1)
    ups = (ups + list(range(overflow_from, overflow_from + up)))[:up]
    return downs, ups


# --------------------------------------------------------------------------------------- upper tiers


def _smallest_divisor_at_least(n: int, lo: int) -> int | None:
    for d in range(max(1, lo), n + 1):
        if n % d == 0:
            return d
    return None


@dataclass(slots=True)
class Tree:
    """What the upper tiers of one network look like, for the plan's network facts."""

    tiers: int
    spines: int = 0
    cores: int = 0
    links_per_leaf_spine: int = 0
    pods: int = 0
    leaves_per_pod: int = 0
    links_per_spine_core: int = 0


def build_upper(
    b: Builder,
    network: Network,
    planes: list[tuple[str, list[str]]],
    up_ports: dict[str, list[int]],
    uplinks: int,
    speed: int,
    model_key: str,
    tiers: str | int,
    unit: int,
    units_per_pod: int | None,
    field_prefix: str,
    spines: int | None = None,
    spine_down: int | None = None,
) -> Tree:
    """Spines (and cores) above groups of leaves. Each plane is an independent fat tree: one plane
    for shared spines, one per rail for rail planes. `unit` keeps pods aligned to whole scalable units.
    `spines` (spines per group) and `spine_down` (leaf-facing ports a spine may use) are the design's
    choice when set; unset, the fewest spines that fit, filling the spines' ports."""
    model = b.catalog.switches[model_key]
    p_all = len(eligible(model, speed, "down"))
    if p_all == 0:
        raise DesignError.one(
            f"{field_prefix}.switch",
            f"{model_key} has no {speed}G ports for the spine layer",
            "pick a spine model that runs the leaf uplink speed",
        )
    if spines is not None and uplinks % spines:
        raise DesignError.one(
            f"{field_prefix}.spines_per_group",
            f"{spines} spines do not split a leaf's {uplinks} uplinks evenly (each leaf takes the same "
            "number of links to every spine of its group)",
            f"use a divisor of {uplinks}: {', '.join(str(d) for d in range(1, uplinks + 1) if uplinks % d == 0)}",
        )
    if spine_down is not None and spine_down > p_all:
        raise DesignError.one(
            f"{field_prefix}.spine_downlinks",
            f"{spine_down} leaf-facing ports is more than a {model_key} has at {speed}G ({p_all})",
            f"use at most {p_all} (2 tiers) or {p_all // 2} (3 tiers: as many ports face the cores)",
        )
    n_leaves = max(len(leaves) for _, leaves in planes)
    two = _two_tier(n_leaves, uplinks, spine_down or p_all, spines)
    want = tiers
    if want == "auto":
        want = 2 if two is not None else 3
    tree = Tree(tiers=int(want))
    for prefix, leaves in planes:
        if want == 2:
            if two is None:
                raise DesignError.one(
                    f"{field_prefix}.tiers",
                    f"{len(leaves)} leaves with {uplinks} uplinks each do not fit under "
                    f"one layer of {p_all}-port spines"
                    + (f" ({spines} of them, {spine_down or p_all} ports down each)" if spines else ""),
                    "use tiers: auto (3 tiers), more spines_per_group or fewer servers per fabric",
                )
            _two_tier_plane(b, network, prefix, leaves, up_ports, uplinks, speed, model_key, two, tree)
        else:
            _three_tier_plane(
                b,
                network,
                prefix,
                leaves,
                up_ports,
                uplinks,
                speed,
                model_key,
                p_all,
                unit,
                units_per_pod,
                field_prefix,
                tree,
                spines,
                spine_down,
            )
    return tree


def _two_tier(n_leaves: int, uplinks: int, ports: int, spines: int | None = None) -> int | None:
    """Spines of a 2-tier plane of `n_leaves` leaves, each spine using at most `ports` downlinks: the
    design's count (`spines`, already checked to divide the uplinks) or the fewest that fit; None if
    they do not fit."""
    if uplinks == 0:
        return None
    # never fewer than two spines: one spine is a single point of failure for the whole fabric
    s = spines or _smallest_divisor_at_least(uplinks, max(2, math.ceil(n_leaves * uplinks / ports)))
    if s is None or n_leaves * (uplinks // s) > ports:
        return None
    return s


def number_width(n: int) -> int:
    """Digits of the numbers 1..n in names (leaf07, oob12): at least two, so names sort as they count."""
    return max(2, len(str(n)))


def _two_tier_plane(
    b: Builder,
    network: Network,
    prefix: str,
    leaves: list[str],
    up_ports: dict[str, list[int]],
    uplinks: int,
    speed: int,
    model: str,
    spines: int,
    tree: Tree,
) -> None:
    k = uplinks // spines
    w = number_width(spines)
    down = eligible(b.catalog.switches[model], speed, "down")
    for j in range(spines):
        sp = b.switch(f"{prefix}spine{j + 1:0{w}d}", model, network, Role.SPINE, **_plane_attr(prefix), index=j + 1)
        for li, leaf in enumerate(leaves):
            for t in range(k):
                b.link(
                    network,
                    Tier.LEAF_SPINE,
                    speed,
                    leaf,
                    b.port_name(leaf, up_ports[leaf][j * k + t]),
                    sp.name,
                    b.port_name(sp.name, down[li * k + t]),
                )
    tree.spines += spines
    tree.links_per_leaf_spine = k


def _plane_attr(prefix: str) -> dict[str, Any]:
    return {"plane": prefix.rstrip("-")} if prefix.startswith(("rail", "plane")) else {}


def rail_groups(design: Design, rails: int) -> list[list[int]]:
    """The rails of each rail-optimized leaf, in the order of their first rail: one each, or
    backend.rails_per_leaf rails of one plane (spine_grouping per_plane) taken with a stride: of a plane's m
    rails, leaf j holds rails j, j + m/k, ... as NVIDIA's HGX B300 Enterprise RA does at 32 nodes ("4 leaf
    switches per plane, each supporting 2 rails (1+5, 2+6, 3+7, 4+8)")."""
    k = design.backend.rails_per_leaf
    if k == 1:
        return [[r] for r in range(rails)]
    n = plane_count(design, rails) if design.backend.spine_grouping == "per_plane" else 1
    if (rails // n) % k:
        within = f" of each of its {n} planes" if n > 1 else ""
        raise DesignError.one(
            "backend.rails_per_leaf",
            f"{k} rails per leaf do not split the {rails // n} rails{within} evenly",
            "use a divisor of the rails" + (" per plane" if n > 1 else "") + ", or 1",
        )
    planes = [[r for r in range(rails) if r % n == p] for p in range(n)]
    groups = [plane[j :: len(plane) // k] for plane in planes for j in range(len(plane) // k)]
    return sorted(groups, key=lambda g: g[0])


def plane_count(design: Design, rails: int) -> int:
    """backend.planes, checked against the rails: every plane gets the same number of rails."""
    n = design.backend.planes
    assert n is not None  # the design's shape check ties planes to spine_grouping: per_plane
    if rails % n:
        raise DesignError.one(
            "backend.planes",
            f"{n} planes do not split {rails} rails evenly (rail r is in plane r mod {n})",
            "use a divisor of the rails, e.g. 2 for a dual-plane NIC",
        )
    return n


def _three_tier_plane(
    b: Builder,
    network: Network,
    prefix: str,
    leaves: list[str],
    up_ports: dict[str, list[int]],
    uplinks: int,
    speed: int,
    model_key: str,
    p_all: int,
    unit: int,
    units_per_pod: int | None,
    field_prefix: str,
    tree: Tree,
    spines: int | None = None,
    spine_down: int | None = None,
) -> None:
    model = b.catalog.switches[model_key]
    if spine_down is not None and 2 * spine_down > p_all:
        raise DesignError.one(
            f"{field_prefix}.spine_downlinks",
            f"a 3-tier spine faces the cores with as many ports as the leaves: {spine_down} each way is "
            f"more than a {model_key}'s {p_all} ports",
            f"use at most {p_all // 2}",
        )
    half = spine_down or p_all // 2
    per_pod_units = units_per_pod or max(1, half // unit)
    pod_leaves = per_pod_units * unit
    s_pod = spines or _smallest_divisor_at_least(uplinks, 1)
    while spines is None and s_pod is not None and pod_leaves * (uplinks // s_pod) > half:
        s_pod = _smallest_divisor_at_least(uplinks, s_pod + 1)
    if s_pod is None or pod_leaves * (uplinks // s_pod) > half:
        field = "spines_per_group" if spines else "sus_per_pod" if units_per_pod else "switch"
        raise DesignError.one(
            f"{field_prefix}.{field}",
            f"a pod of {pod_leaves} leaves with {uplinks} uplinks each does not fit {half} spine downlinks"
            + (f" over {spines} spines" if spines else ""),
            "use more spines per group, or fewer scalable units per pod"
            if spines
            else "use fewer scalable units per pod",
        )
    k = uplinks // s_pod
    pods = [leaves[i : i + pod_leaves] for i in range(0, len(leaves), pod_leaves)]
    # a spine's uplinks match the downlinks its pod uses (non-blocking above the leaves): a pod smaller
    # than the spines' half (fewer leaves, or a leaf's share not filling it) must not buy cores and optics
    # for ports nothing feeds. The first pod is the largest; every pod gets its spines' count, so each
    # core meets every pod on the same ports.
    up = min(half, len(pods[0]) * k)
    core_c = _smallest_divisor_at_least(up, 1)
    while core_c is not None and len(pods) * (up // core_c) > p_all:
        core_c = _smallest_divisor_at_least(up, core_c + 1)
    if core_c is None:
        raise DesignError.one(
            "compute.count",
            f"{len(pods)} pods exceed a 3-tier fat tree of {p_all}-port switches (at most {p_all} pods)",
            "split the cluster into several fabrics or use a higher-radix switch",
        )
    m = up // core_c
    ports = eligible(model, speed, "down")
    # the spine's core-facing ports start at the middle of its ports, whatever it uses of either half
    down_idx, up_idx = ports[: p_all // 2], ports[p_all // 2 : 2 * (p_all // 2)]
    ws, wc = number_width(s_pod), number_width(s_pod * core_c)
    cores = [
        b.switch(f"{prefix}core{n + 1:0{wc}d}", model_key, network, Role.CORE, **_plane_attr(prefix), index=n + 1)
        for n in range(s_pod * core_c)
    ]
    for q, pod in enumerate(pods):
        for j in range(s_pod):
            sp = b.switch(
                f"{prefix}pod{q + 1}-spine{j + 1:0{ws}d}",
                model_key,
                network,
                Role.SPINE,
                **_plane_attr(prefix),
                pod=q + 1,
                index=j + 1,
            )
            for li, leaf in enumerate(pod):
                b.by_name[leaf].attrs["pod"] = q + 1
                for t in range(k):
                    b.link(
                        network,
                        Tier.LEAF_SPINE,
                        speed,
                        leaf,
                        b.port_name(leaf, up_ports[leaf][j * k + t]),
                        sp.name,
                        b.port_name(sp.name, down_idx[li * k + t]),
                    )
            for g in range(core_c):
                core = cores[j * core_c + g]
                for t in range(m):
                    b.link(
                        network,
                        Tier.SPINE_CORE,
                        speed,
                        sp.name,
                        b.port_name(sp.name, up_idx[g * m + t]),
                        core.name,
                        b.port_name(core.name, ports[q * m + t]),
                    )
    tree.spines += len(pods) * s_pod
    tree.cores += len(cores)
    tree.pods += len(pods)
    tree.leaves_per_pod = pod_leaves
    tree.links_per_leaf_spine = k
    tree.links_per_spine_core = m


# ------------------------------------------------------------------------------------------- backend


def _leaf_uplinks(down: int, ratio: Fraction) -> int:
    # Round up: a ratio the downlink count does not divide then shows on the graph as a different
    # measured ratio and the invariant names the field, instead of silently becoming something else.
    return math.ceil(down / ratio)


def build_backend(b: Builder, design: Design, servers: list[str]) -> BackendFacts:
    be = design.backend
    speed = backend_speed(design, b.catalog)
    # the switch as its ports run at this speed: split ports are a model of their own (load_design adds it)
    sw_key = b.catalog.switch_at(be.switch, speed)
    model = b.catalog.switches[sw_key]
    srv = b.catalog.servers[design.compute.server]
    assert srv.backend is not None
    # one rail per backend port: a dual-port backend NIC carries two rails
    rails = be.rails or len(backend_ports(b.catalog, srv.backend))
    ratio = ratio_value(be.oversubscription)
    su_size = be.su_size
    n_su = math.ceil(len(servers) / su_size)
    # a unit's number is unpadded (su9, su10): padded to the count of units, growing a site past nine
    # units renamed every leaf (su1-rail0-leaf -> su01-rail0-leaf) that stands (issue 43)
    leaves: list[str] = []
    per_rail: dict[int, list[str]] = {r: [] for r in range(rails)}
    n_lpr = be.leaves_per_rail
    groups = rail_groups(design, rails)  # the rails of each leaf: [[0], [1], ...] unless rails_per_leaf > 1
    k_rails = be.rails_per_leaf
    per_leaf = su_size // n_lpr  # servers on a rail-optimized leaf
    if be.topology == "rail_optimized":
        down = per_leaf * k_rails  # the loader checked n_lpr divides su_size
        up = _leaf_uplinks(down, ratio)
        downs, ups = _layout(model, speed, down, speed, up)
        up_ports: dict[str, list[int]] = {}
        lw = number_width(n_lpr)
        # network planes (spine_grouping: per_plane): rail r is in plane r mod planes
        n_planes = plane_count(design, rails) if be.spine_grouping == "per_plane" else 0
        nic_split = be.plane_split == "nic_port"
        for u in range(n_su):
            members = servers[u * su_size : (u + 1) * su_size]
            for group in groups:
                r = group[0]
                for k in range(n_lpr):
                    # one leaf per rail keeps its historical name (su1-rail0-leaf): NetBox and the
                    # cable labels of built sites know it; a leaf of several rails names them all. A NIC
                    # broken out into planes names the plane first and the NIC port's rail inside it
                    # (plane2-su1-rail0-leaf)
                    rail_name = "-".join(f"rail{x}" for x in group)  # su1-rail0-rail2-leaf: rails 0 and 2
                    name = f"su{u + 1}-{rail_name}-leaf" + (f"{k + 1:0{lw}d}" if n_lpr > 1 else "")
                    if nic_split:
                        name = f"plane{r % n_planes + 1}-su{u + 1}-rail{r // n_planes}-leaf" + (
                            f"{k + 1:0{lw}d}" if n_lpr > 1 else ""
                        )
                    attrs: dict[str, Any] = (
                        {"su": u + 1, "rail": r}
                        | ({"rails": list(group)} if k_rails > 1 else {})
                        | ({"index": k + 1} if n_lpr > 1 else {})
                    )
                    if n_planes:
                        attrs["plane"] = f"plane{r % n_planes + 1}"
                    leaf = b.switch(name, sw_key, Network.BACKEND, Role.LEAF, **attrs)
                    leaves.append(leaf.name)
                    for x in group:
                        per_rail[x].append(leaf.name)
                    up_ports[leaf.name] = ups
                    for si, host in enumerate(members[k * per_leaf : (k + 1) * per_leaf]):
                        # rail x carries NIC x; a design with fewer rails than NICs leaves NICs dark
                        # and the invariants report them. A server's rails on one leaf take neighbouring ports.
                        for j, x in enumerate(group):
                            b.link(
                                Network.BACKEND,
                                Tier.SERVER_LEAF,
                                speed,
                                host,
                                srv.backend.name.format(i=x),
                                leaf.name,
                                b.port_name(leaf.name, downs[si * k_rails + j]),
                            )
        unit = len(groups) * n_lpr
    else:
        # a server's ports in the order of its cages, so a twin system cage (DGX: rails 7 and 4) meets
        # one twin leaf cage and can take one twin cable
        cages = srv.backend.cages
        cage_order = [r for cage in cages.ports for r in cage if r < rails] if cages else list(range(rails))
        cage_order += [r for r in range(rails) if r not in cage_order]  # more rails than ports: invariants say so
        per_leaf = be.servers_per_leaf or _tor_servers(model, speed, rails, ratio)
        down = per_leaf * rails
        up = _leaf_uplinks(down, ratio)
        downs, ups = _layout(model, speed, down, speed, up)
        up_ports = {}
        leaves_per_su = math.ceil(su_size / per_leaf)
        lw = number_width(leaves_per_su)
        for u in range(n_su):
            members = servers[u * su_size : (u + 1) * su_size]
            for k in range(leaves_per_su):
                leaf = b.switch(
                    f"su{u + 1}-leaf{k + 1:0{lw}d}", sw_key, Network.BACKEND, Role.LEAF, su=u + 1, index=k + 1
                )
                leaves.append(leaf.name)
                up_ports[leaf.name] = ups
                for si, host in enumerate(members[k * per_leaf : (k + 1) * per_leaf]):
                    for j, r in enumerate(cage_order):
                        b.link(
                            Network.BACKEND,
                            Tier.SERVER_LEAF,
                            speed,
                            host,
                            srv.backend.name.format(i=r),
                            leaf.name,
                            b.port_name(leaf.name, downs[si * rails + j]),
                        )
        unit = leaves_per_su
    units_per_pod = be.sus_per_pod
    if be.pods == "rail_groups":
        # a pod is one rail's leaves of one unit (the leaves are in unit, rail order): NVIDIA's groups
        unit, units_per_pod = n_lpr, 1
    if be.spine_grouping == "per_rail":
        planes = [(f"rail{r}-", per_rail[r]) for r in range(rails)]
        unit = 1
    elif be.spine_grouping == "per_plane":
        n_planes = plane_count(design, rails)
        # plane p: the leaves of rails p, p + planes, ...; in scalable-unit order, so pods stay whole units
        planes = [
            (f"plane{p + 1}-", [lf for lf in leaves if b.by_name[lf].attrs["rail"] % n_planes == p])
            for p in range(n_planes)
        ]
        unit = len(groups) // n_planes * n_lpr
    else:
        planes = [("", leaves)]
    tree = build_upper(
        b,
        Network.BACKEND,
        planes,
        up_ports,
        up,
        speed,
        sw_key,
        be.tiers,
        unit,
        units_per_pod,
        "backend",
        be.spines_per_group,
        be.spine_downlinks,
    )
    slots: list[tuple[str, str]] = []
    if be.topology == "rail_optimized" and design.compute.reserved_slots:
        # the ports the last unit's missing servers would have taken: slot by slot, rail by rail
        # (slot si of the unit is on the rail's leaf si // down, at that leaf's port si % down)
        # (a leaf of several rails: slot si's rail x at port (si % per_leaf) * rails_per_leaf + x's place)
        last = [lf for lf in leaves if b.by_name[lf].attrs["su"] == n_su]
        on_leaf: dict[tuple[int, int], tuple[str, int]] = {}
        for lf in last:
            a = b.by_name[lf].attrs
            for j, x in enumerate(a.get("rails", [a["rail"]])):
                on_leaf[(x, a.get("index", 1) - 1)] = (lf, j)
        first_free = su_size - design.compute.reserved_slots
        at = [
            (on_leaf[(r, si // per_leaf)][0], (si % per_leaf) * k_rails + on_leaf[(r, si // per_leaf)][1])
            for si in range(first_free, su_size)
            for r in range(rails)
        ]
        slots = [(lf, b.port_name(lf, downs[p])) for lf, p in at]
    sm_links = _attach_subnet_managers(b, design, leaves, speed, slots)
    return BackendFacts(
        technology=be.technology,
        topology=be.topology,
        switch=be.switch,
        speed_gbps=speed,
        rails=rails,
        # only when used, so the facts of a design without them are unchanged
        leaves_per_rail=n_lpr if n_lpr > 1 else None,
        rails_per_leaf=k_rails if k_rails > 1 else None,
        switch_model=sw_key if sw_key != be.switch else None,
        # planes of the fabric's own (per_plane spines), or inside its switches (a box whose ports' lanes
        # go one to each of its ASICs, Switch.planes: every link carries one lane of each plane)
        planes=be.planes if be.spine_grouping == "per_plane" else b.catalog.switches[be.switch].planes,
        nic_split=True if be.plane_split == "nic_port" else None,
        scalable_units=n_su,
        su_size=su_size,
        spine_grouping=be.spine_grouping,
        tiers=tree.tiers,
        leaves=len(leaves),
        spines=tree.spines,
        cores=tree.cores,
        pods=tree.pods,
        leaves_per_pod=tree.leaves_per_pod,
        downlinks_per_leaf=down,
        uplinks_per_leaf=up,
        links_per_leaf_spine=tree.links_per_leaf_spine,
        links_per_spine_core=tree.links_per_spine_core,
        oversubscription=Oversubscription(be.oversubscription),
        subnet_manager_ports=sm_links,
    )


def _tor_servers(model: Switch, speed: int, rails: int, ratio: Fraction) -> int:
    ports = len(eligible(model, speed, "down"))
    best = 1
    for n in range(1, ports // rails + 1):
        if n * rails + _leaf_uplinks(n * rails, ratio) <= ports:
            best = n
    return best


def _attach_subnet_managers(
    b: Builder, design: Design, leaves: list[str], speed: int, slots: list[tuple[str, str]]
) -> list[SubnetManagerPort]:
    """Subnet-manager nodes take the last port of rail k's leaf in the last scalable unit (a fixed,
    documented position, like NVIDIA's UFM port). On a fully populated 1:1 leaf that port is an
    uplink: the port invariant then says so instead of the builder quietly moving it.

    With compute.reserved_slots the nodes take the reserved slots' ports instead (`slots`, (leaf, port)
    in slot then rail order), as NVIDIA's 127-node SuperPOD cables the UFM appliances into the last
    SU's leaves in place of the 128th DGX: every backend port of every node, spread over the rails."""
    m = design.management
    mgmt_model = b.catalog.servers[management_model(design, b.catalog)]
    out: list[SubnetManagerPort] = []
    if not m.backend_attached or mgmt_model.backend is None:
        return out
    if slots:
        free = iter(slots)  # the loader checked there are enough
        for k in range(m.backend_attached):
            node = f"mgmt{k + 1:02d}"
            for i in range(mgmt_model.backend.count):
                leaf, leaf_port = next(free)
                port = mgmt_model.backend.name.format(i=i)
                b.link(Network.BACKEND, Tier.SERVER_LEAF, speed, node, port, leaf, leaf_port)
                out.append(SubnetManagerPort(node, port, leaf, leaf_port))
        return out
    last_su = b.by_name[leaves[-1]].attrs["su"]
    candidates = [lf for lf in leaves if b.by_name[lf].attrs["su"] == last_su]
    for k in range(m.backend_attached):
        leaf = candidates[k % len(candidates)]
        model = b.catalog.switches[b.by_name[leaf].model]
        idx = eligible(model, speed, "down")[-1 - k // len(candidates)]
        node = f"mgmt{k + 1:02d}"
        port = mgmt_model.backend.name.format(i=0)
        b.link(Network.BACKEND, Tier.SERVER_LEAF, speed, node, port, leaf, b.port_name(leaf, idx))
        out.append(SubnetManagerPort(node, port, leaf, b.port_name(leaf, idx)))
    return out


# ------------------------------------------------------------------------------------- leaf pairs


HostPorts = tuple[str, list[tuple[str, int]]]  # (host, its (port, speed) in leaf-side order)
SERVICE_PAIR_BASE = 1000  # service leaf pair k is pair SERVICE_PAIR_BASE + k (compute leaf pairs count from 1)


@dataclass(slots=True)
class LeafPairs:
    """Leaves in groups of `sides` (a pair when hosts are dual-homed): port p of a host lands on side
    p % sides, so a host's ports reach different leaves. The frontend and the storage fabric use it."""

    b: Builder
    network: Network
    prefix: str  # leaf names: <prefix>01, <prefix>02, ... (service leaves: <service_prefix>01, ...)
    switch: str
    sides: int
    leaves: list[str]
    up_ports: dict[str, list[int]]
    service_prefix: str = ""
    made: dict[bool, int] = field(default_factory=lambda: {False: 0, True: 0})  # leaves made, by service

    def place(self, group: list[HostPorts], down: int, downs: list[int], ups: list[int], service: bool) -> None:
        """Leaves for `group`. Service leaves (storage and management nodes) are numbered apart from the
        compute servers' leaves, their pairs from SERVICE_PAIR_BASE + 1: adding servers adds leaves
        after the last one and renames, re-pairs or re-numbers no service leaf (service leaves numbered
        after the compute leaves were renamed by every new scalable unit)."""
        # an endpoint with more ports than sides (dual-homed storage under single-homed servers)
        # takes several downlinks per leaf
        b, sides = self.b, self.sides
        prefix = self.service_prefix if service and self.service_prefix else self.prefix
        i = 0
        while True:
            names = []
            for s in range(sides):
                self.made[service] += 1
                n = self.made[service]
                leaf = b.switch(
                    f"{prefix}{n:02d}",
                    self.switch,
                    self.network,
                    Role.LEAF,
                    pair=(n - 1) // sides + 1 + (SERVICE_PAIR_BASE if service else 0),
                    side=s,
                    service=service,
                )
                self.leaves.append(leaf.name)
                self.up_ports[leaf.name] = ups
                names.append(leaf.name)
            slot = 0
            while i < len(group):
                host, ports = group[i]
                need = max(1, math.ceil(len(ports) / sides))
                if slot + need > down and slot:
                    break
                for p, (pname, speed) in enumerate(ports):
                    b.link(
                        self.network,
                        Tier.SERVER_LEAF,
                        speed,
                        host,
                        pname,
                        names[p % sides],
                        b.port_name(names[p % sides], downs[slot + p // sides]),
                    )
                slot += need
                i += 1
            if i >= len(group):
                return


# ------------------------------------------------------------------------------------------ frontend


def fill_leaf(total: int, down_speed: int, up_speed: int, ratio: Fraction) -> tuple[int, int]:
    """(downlinks, uplinks) of a leaf of `total` ports filled with as many downlinks as the ratio
    allows: measured downlink over uplink bandwidth at most `ratio`."""

    def uplinks_for(n: int) -> int:
        return math.ceil(Fraction(n * down_speed) / (ratio * up_speed))

    down = total
    while down > 1 and down + uplinks_for(down) > total:
        down -= 1
    up = uplinks_for(down)
    # an even uplink count spreads over at least two spines (more uplinks only lowers the ratio);
    # when the leaf is full, give one downlink back to make room
    if up % 2:
        if down + up == total:
            down -= 1
            up = uplinks_for(down)
        up += up % 2
    return down, up


def build_frontend(
    b: Builder, design: Design, servers: list[str], storage: list[str], mgmt: list[str]
) -> FrontendFacts:
    fe = design.frontend
    model = b.catalog.switches[fe.switch]
    spine_key = fe.spine_switch or fe.switch
    ratio = ratio_value(fe.oversubscription)
    up_speed = native_speed(model, "up")
    sd = fe.speed
    total = len(eligible(model, sd, "down"))

    down, up = fill_leaf(total, sd, up_speed, ratio)
    downs, ups = _layout(model, sd, down, up_speed, up)
    srv = b.catalog.servers[design.compute.server]
    stm = b.catalog.storage_servers[design.storage.server]
    mm = b.catalog.servers[management_model(design, b.catalog)]
    mnic = b.catalog.nics[mm.defaults.frontend_nic]
    sides = fe.ports_per_server
    leaves: list[str] = []
    up_ports: dict[str, list[int]] = {}
    pairs = LeafPairs(b, Network.FRONTEND, "fe-leaf", fe.switch, sides, leaves, up_ports, "fe-svc")

    def place(group: list[HostPorts], service: bool) -> None:
        pairs.place(group, down, downs, ups, service)

    def ports(template: str, n: int, speed: int) -> list[tuple[str, int]]:
        return [(template.format(i=i), speed) for i in range(n)]

    place([(h, ports(srv.frontend_port_name, sides, sd)) for h in servers], service=False)
    # a dedicated storage fabric takes the storage servers off the frontend
    on_frontend = storage if design.storage.network == "frontend" else []
    svc = [
        (h, ports(stm.frontend_port_name, design.storage.ports_per_server, design.storage.speed)) for h in on_frontend
    ]
    svc += [(h, ports(mm.frontend_port_name, min(sides, mnic.ports), mnic.speed_gbps)) for h in mgmt]
    place(svc, service=True)
    tree = build_upper(
        b, Network.FRONTEND, [("fe-", leaves)], up_ports, up, up_speed, spine_key, "auto", sides, None, "frontend"
    )
    return FrontendFacts(
        switch=fe.switch,
        spine_switch=spine_key,
        speed_gbps=sd,
        uplink_speed_gbps=up_speed,
        ports_per_server=sides,
        tiers=tree.tiers,
        leaves=len(leaves),
        spines=tree.spines,
        cores=tree.cores,
        downlinks_per_leaf=down,
        uplinks_per_leaf=up,
        links_per_leaf_spine=tree.links_per_leaf_spine,
        oversubscription=Oversubscription(fe.oversubscription),
    )


# ------------------------------------------------------------------------------------ storage fabric


def build_storage(b: Builder, design: Design, servers: list[str], storage: list[str]) -> StorageFacts:
    """The dedicated storage fabric (storage.network: dedicated): the compute servers' storage ports on
    leaf pairs filled to storage.fabric.oversubscription, then the storage servers on leaves of their
    own at 1:1 (NVIDIA's SuperPOD RA: "storage devices are connected at a 1:1 port to uplink ratio",
    the DGX "slightly oversubscribed with a ratio near 4:3"), spines above from build_upper."""
    fab = design.storage.fabric
    assert fab is not None
    model = b.catalog.switches[fab.switch]
    speed = storage_fabric_speed(design, b.catalog)
    srv_ports = storage_fabric_ports(design, b.catalog)
    sides = len(srv_ports)
    total = len(eligible(model, speed, "down"))
    # the inter-switch links run at the switch's native speed, whatever the hosts' ports run (NVIDIA's H100
    # SuperPOD: NDR 400G between the storage switches, RA-11333-001 Table 8), as the frontend's leaves uplink
    up_speed = native_speed(model, "up")
    ratio = ratio_value(fab.oversubscription)
    if fab.servers_per_leaf is None:
        down, up = fill_leaf(total, speed, up_speed, ratio)
    else:
        # the design's leaf: its servers and as many uplinks as the ratio asks, an even number so a leaf
        # reaches >= 2 spines (NVIDIA's SuperPOD: a leaf pair per unit of 32 DGX, 24 uplinks at 4:3)
        down = fab.servers_per_leaf
        up = math.ceil(Fraction(down * speed) / (ratio * up_speed))
        up += up % 2
        if down + up > total:
            raise DesignError.one(
                "storage.fabric.servers_per_leaf",
                f"{down} servers and the {up} uplinks they need at {fab.oversubscription} are {down + up} "
                f"ports, more than a {fab.switch} has at {speed}G ({total})",
                f"use at most {fill_leaf(total, speed, up_speed, ratio)[0]} servers per leaf, or a higher "
                "storage.fabric.oversubscription",
            )
    downs, ups = _layout(model, speed, down, up_speed, up)
    leaves: list[str] = []
    up_ports: dict[str, list[int]] = {}
    pairs = LeafPairs(b, Network.STORAGE, "stor-leaf", fab.switch, sides, leaves, up_ports, "stor-svc")
    pairs.place([(h, [(p, speed) for p in srv_ports]) for h in servers], down, downs, ups, service=False)
    # the storage servers' leaves: as much downlink as uplink bandwidth (1:1), the same uplink count so
    # one spine layer serves both kinds of leaf
    st = design.storage
    stm = b.catalog.storage_servers[st.server]
    s_down = min(up * up_speed // st.speed, len(eligible(model, st.speed, "down")) - up)
    s_downs, s_ups = _layout(model, st.speed, s_down, up_speed, up)
    compute_leaves = len(leaves)
    pairs.place(
        [(h, [(stm.frontend_port_name.format(i=i), st.speed) for i in range(st.ports_per_server)]) for h in storage],
        s_down,
        s_downs,
        s_ups,
        service=True,
    )
    tree = build_upper(
        b,
        Network.STORAGE,
        [("stor-", leaves)],
        up_ports,
        up,
        up_speed,
        fab.switch,
        fab.tiers,
        sides,
        None,
        "storage.fabric",
        fab.spines_per_group,
    )
    return StorageFacts(
        technology=fab.technology,
        switch=fab.switch,
        speed_gbps=speed,
        ports_per_server=sides,
        server_ports=srv_ports,
        tiers=tree.tiers,
        leaves=len(leaves),
        server_leaves=compute_leaves,
        storage_leaves=len(leaves) - compute_leaves,
        spines=tree.spines,
        cores=tree.cores,
        downlinks_per_leaf=down,
        storage_downlinks_per_leaf=s_down,
        uplinks_per_leaf=up,
        links_per_leaf_spine=tree.links_per_leaf_spine,
        oversubscription=Oversubscription(fab.oversubscription),
    )


# --------------------------------------------------------------------------------------------- compile


def build_fabric(design: Design, catalog: Catalog) -> Plan:
    b = Builder(catalog)
    servers = server_names(design)
    su = design.backend.su_size
    for i, h in enumerate(servers):
        b.add(Device(h, Kind.SERVER, Role.COMPUTE, design.compute.server, attrs={"su": i // su + 1, "index": i + 1}))
    _rack_system_devices(b, design)
    storage = [f"stor{i + 1:02d}" for i in range(design.storage.count)]
    for i, h in enumerate(storage):
        b.add(Device(h, Kind.STORAGE, Role.STORAGE, design.storage.server, attrs={"index": i + 1}))
    mgmt = [f"mgmt{i + 1:02d}" for i in range(design.management.count)]
    for i, h in enumerate(mgmt):
        b.add(
            Device(
                h,
                Kind.MANAGEMENT,
                Role.MANAGEMENT,
                management_model(design, b.catalog),  # with the fabric's NIC where its own cannot run it
                attrs={"index": i + 1, "subnet_manager": i < design.management.backend_attached},
            )
        )
    networks = Networks(
        backend=build_backend(b, design, servers), frontend=build_frontend(b, design, servers, storage, mgmt)
    )
    if design.storage.network == "dedicated":
        networks.storage = build_storage(b, design, servers, storage)
    plan = Plan(
        design=design,
        catalog=catalog,
        devices=b.devices,
        links=b.links,
        networks=networks,
    )
    fab = design.storage.fabric
    if fab is not None and fab.technology == "ethernet":
        # sized, placed, cabled and priced like the InfiniBand one, but nothing configures it yet
        plan.warnings.append(
            PlanWarning(
                field="storage.fabric.technology",
                message="an Ethernet storage fabric gets its switches, cables, racks and BoM, but railyard renders "
                "no switch configs and no IP plan for it yet: configure its switches and the storage ports' "
                "addresses by hand, or use technology: infiniband (OpenSM files under infiniband/storage/)",
            )
        )
    free = _free_reserved_ports(design, networks.backend)
    if free:
        plan.warnings.append(
            PlanWarning(
                field="compute.reserved_slots",
                message=f"the last scalable unit is partial: {free} leaf ports of its {design.compute.reserved_slots} "
                "reserved server slots stay free (the rails keep their full uplinks; those leaves run below "
                f"the requested oversubscription); attach {attached_nodes(design)} there "
                "(management.backend_attached) or fill the unit",
            )
        )
    return plan


def _rack_system_devices(b: Builder, design: Design) -> None:
    """A rack system's own devices, per system rack k (its trays are servers (k-1)*trays+1 ..
    k*trays): NVLink switch trays nvswKK-J on the OOB only (the backplane is not routed), and power
    shelves pwrKK-J (kind pdu: managed power, on the OOB). Named by the rack's number, not its floor
    position, so a floor change never renames them. The in-rack management switches are the rack's
    OOB access switches, which placement builds."""
    c = design.compute
    if c.system is None:
        return
    rs = b.catalog.rack_systems[c.system]
    assert c.racks is not None  # resolve_system: a system design has racks
    w = max(2, len(str(c.racks)))
    for k in range(1, c.racks + 1):
        for j in range(1, rs.nvlink_switches + 1):
            b.switch(f"nvsw{k:0{w}d}-{j}", rs.nvlink_switch, Network.NVLINK, Role.NVLINK, system_rack=k, index=j)
        for j in range(1, rs.power_shelves + 1):
            b.add(
                Device(
                    f"pwr{k:0{w}d}-{j}",
                    Kind.PDU,
                    Role.POWER_SHELF,
                    rs.power_shelf,
                    attrs={"system_rack": k, "index": j},
                )
            )


def _free_reserved_ports(design: Design, backend: BackendFacts) -> int:
    if design.backend.topology != "rail_optimized" or not design.compute.reserved_slots:
        return 0
    return design.compute.reserved_slots * backend.rails - len(backend.subnet_manager_ports)
