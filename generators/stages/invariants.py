"""Invariants checked on every compile, on the fabric graph itself (not on the formulas that built it).

Each failure names the design field a user would change. The measured figures (oversubscription,
bisection, spare ports) are written back into the plan so reports show what was proven.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from generators.model.catalog import Catalog
from generators.model.design import attached_nodes, ratio_value
from generators.model.errors import DesignError, Problem
from generators.model.plan import Device, Plan
from generators.model.ports import backend_ports, host_port_speeds, port_table
from generators.model.sections import Bisection, FailureDomain, OobFacts, PlaneBisection
from generators.stages.bisection import TIER, CapacityGraph, max_flow
from generators.stages.failures import failure_domains

MAX_REPORTED = 5  # problems of one kind shown before "and N more"


def _fmt_ratio(r: Fraction) -> str:
    return f"{r.numerator}:{r.denominator}" if r.denominator != 1 else f"{r.numerator}:1"


def _pretty_ratio(r: Fraction) -> str:
    return f"{int(r)}:1" if r.denominator == 1 else f"{float(r):.2f}:1"


class _Collector:
    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.kinds: Counter[str] = Counter()

    def add(self, kind: str, field: str, message: str, hint: str) -> None:
        self.kinds[kind] += 1
        if self.kinds[kind] <= MAX_REPORTED:
            self.problems.append(Problem(field, message, hint))
        elif self.kinds[kind] == MAX_REPORTED + 1:
            self.problems.append(Problem(field, f"... and more {kind} problems", hint))


def _switch_field(plan: Plan, dev: Device) -> str:
    be = plan.design.backend
    if dev.network == "backend":
        if dev.role == "leaf" and "rails" in dev.attrs:  # a leaf of several rails: k ports per server
            return "backend.rails_per_leaf"
        if dev.role == "leaf":
            return "backend.su_size" if be.topology == "rail_optimized" else "backend.servers_per_leaf"
        return "backend.switch"
    if dev.network == "frontend":
        return "frontend.oversubscription" if dev.role == "leaf" else "frontend.spine_switch"
    if dev.network == "storage":
        return "storage.fabric.oversubscription" if dev.role == "leaf" else "storage.fabric.switch"
    return "oob.uplinks_per_switch" if dev.role == "leaf" else "oob.aggregation_switch"


@dataclass(slots=True)
class Bandwidth:
    """What the links put on every leaf, measured from the graph."""

    down: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # leaf -> Gb/s to servers
    up: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))  # leaf -> Gb/s to spines
    rails: defaultdict[str, set[int]] = field(default_factory=lambda: defaultdict(set))  # backend leaf -> rails
    measured: dict[str, dict[str, Fraction]] = field(default_factory=lambda: defaultdict(dict))  # net -> ratios


def check(plan: Plan, catalog: Catalog) -> None:
    """Raise DesignError listing every violated invariant; otherwise annotate the plan with measurements."""
    c = _Collector()
    devs = plan.index()
    nic_ports = _backend_nic_ports(plan, catalog)
    used = _check_ports(plan, catalog, devs, c)
    _check_backend_nics(plan, nic_ports, used, c)
    _check_radix(plan, catalog, devs, used, c)
    bw = _measure_leaves(plan, devs, nic_ports)
    _check_ratios(plan, bw, c)
    _check_rails(plan, devs, bw, c)
    bisection, g = _check_graph(plan, devs, bw, c)
    if c.problems:
        raise DesignError(c.problems)
    _annotate(plan, catalog, used, bw, bisection)
    be = plan.networks.backend
    if be.plane_bisection:
        # each plane proven: what one switch, plane or rack of switches takes away
        be.failure_domains = failure_domains(plan, catalog, g, nic_ports, be.plane_bisection)
    inside = catalog.switches[plan.design.backend.switch].planes
    if inside and bisection is not None:
        be.plane_bisection = _inside_plane_bisections(plan, inside, bw.down, c)
        if c.problems:
            raise DesignError(c.problems)
        be.failure_domains = _inside_plane_failures(plan, catalog, g, nic_ports, bisection, be.plane_bisection)


def _backend_nic_ports(plan: Plan, catalog: Catalog) -> list[str]:
    be = catalog.servers[plan.design.compute.server].backend
    return [bp.name for bp in backend_ports(catalog, be)] if be else []


def _port_speeds(plan: Plan, catalog: Catalog) -> Callable[[Device], dict[str, Any]]:
    """Port name -> speeds of a device, one table per model. Frontend NICs of compute servers come
    from the server configuration, not only the model."""
    design = plan.design
    cfg = design.compute.config
    compute_model = catalog.servers[design.compute.server]
    fe_nic_key = cfg.frontend_nic or compute_model.defaults.frontend_nic
    fe_nic_count = cfg.frontend_nic_count
    fe_nic_count = compute_model.defaults.frontend_nic_count if fe_nic_count is None else fe_nic_count
    host_ports: dict[str, dict[str, set[int]]] = {}
    model_ports: dict[str, dict[str, frozenset[int]]] = {}

    def ports_of(dev: Device) -> dict[str, Any]:
        if dev.kind == "switch":
            if dev.model not in model_ports:
                sw = catalog.switches[dev.model]
                model_ports[dev.model] = {p.name: p.speeds for p in port_table(sw)}
                model_ports[dev.model][sw.mgmt_port] = frozenset({1})
            return model_ports[dev.model]
        key = f"{dev.kind}:{dev.model}"
        if key not in host_ports:
            host_ports[key] = (
                host_port_speeds(catalog, dev, fe_nic_key, fe_nic_count)
                if dev.kind == "server"
                else host_port_speeds(catalog, dev)
            )
        return host_ports[key]

    return ports_of


def _check_ports(plan: Plan, catalog: Catalog, devs: dict[str, Device], c: _Collector) -> Counter[tuple[str, str]]:
    """Every port exists, is used once, and runs the link's speed at both ends. Returns the use count
    of every (device, port)."""
    ports_of = _port_speeds(plan, catalog)
    used: Counter[tuple[str, str]] = Counter()
    for lk in plan.links:
        for dname, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            used[(dname, port)] += 1
            dev = devs[dname]
            table = ports_of(dev)
            if port not in table:
                if lk.tier == "access-leaf" and dev.network == "frontend":
                    up = plan.design.oob.uplinks_per_switch
                    c.add(
                        "port-count",
                        "oob.uplink",
                        f"the frontend service leaves have too few free {lk.speed_gbps}G ports for the OOB "
                        f"access switches' uplinks ({up} each): {dname} has none left for {lk.a_device}",
                        "set oob.uplink: aggregation, fewer oob.uplinks_per_switch, more racks per access "
                        "switch (oob.racks_per_switch), or frontend leaves with spare ports",
                    )
                elif dev.kind == "switch":
                    c.add(
                        "port-count",
                        _switch_field(plan, dev),
                        f"{dname} needs more ports than its model {dev.model} has ({dev.ports})",
                        ("fewer rails per leaf, " if "rails" in dev.attrs else "")
                        + "fewer servers per leaf, a higher oversubscription ratio, or a larger switch",
                    )
                else:
                    c.add(
                        "nic",
                        {"backend": "backend.rails", "storage": "storage.fabric.ports_per_server"}.get(
                            lk.network, f"{lk.network}.ports_per_server"
                        ),
                        f"{dname} has no port {port} ({dev.model})",
                        "match rails / ports to the server's NICs",
                    )
                continue
            if lk.speed_gbps not in table[port]:
                field = {
                    "backend": "backend.switch",
                    "frontend": "frontend.speed",
                    "oob": "oob.switch",
                    "storage": "storage.fabric.speed",
                }[lk.network]
                if devs[lk.a_device].kind == "storage":
                    field = "storage.speed"
                c.add(
                    "speed",
                    field,
                    f"{dname} {port} cannot run {lk.speed_gbps}G (it runs {sorted(table[port])} G); "
                    f"the two ends of {lk.a_device} {lk.a_port} <-> {lk.b_device} {lk.b_port} differ",
                    "use parts whose ports run the same speed",
                )
    # only the ports used twice are sorted (for a stable report): all of them were ~1 s at 98,304 GPUs
    for (dname, port), n in sorted(x for x in used.items() if x[1] > 1):
        # a subnet-manager node on a full leaf is a design choice, anything else a builder bug
        sm = any(
            lk.tier == "server-leaf"
            and devs[lk.a_device].kind == "management"
            and lk.b_device == dname
            and lk.b_port == port
            for lk in plan.links
        )
        field = "management.backend_attached" if sm else _switch_field(plan, devs[dname])
        # an Ethernet backend has no subnet manager to move onto a switch
        instead = " (run the SM on a managed switch)" if plan.design.backend.technology == "infiniband" else ""
        hint = (
            f"the fabric has no spare port for the {attached_nodes(plan.design)}: set "
            f"management.backend_attached: 0{instead}, oversubscribe, "
            "or give the nodes the last unit's last server slot (compute.count one server fewer, "
            "compute.reserved_slots: 1)"
            if sm
            else "this is a railyard bug; please report the design"
        )
        c.add("double", field, f"{dname} port {port} is used by {n} links", hint)
    return used


def _check_backend_nics(plan: Plan, nic_ports: list[str], used: Counter[tuple[str, str]], c: _Collector) -> None:
    """Every backend NIC of every compute server is connected exactly once."""
    for d in plan.devices:
        if d.kind != "server":
            continue
        for p in nic_ports:
            if used[(d.name, p)] != 1:
                c.add(
                    "nic",
                    "backend.rails",
                    f"{d.name} {p} is connected {used[(d.name, p)]} times (must be exactly once)",
                    f"set backend.rails to {len(nic_ports)}, one rail per backend port",
                )


def _check_radix(
    plan: Plan, catalog: Catalog, devs: dict[str, Device], used: Counter[tuple[str, str]], c: _Collector
) -> None:
    """Ports used never exceed the switch model's (the management port is not a front-panel port)."""
    per_switch: Counter[str] = Counter()
    for (dname, port), _n in used.items():
        if devs[dname].kind == "switch" and port != catalog.switches[devs[dname].model].mgmt_port:
            per_switch[dname] += 1
    for dname, n in per_switch.items():
        dev = devs[dname]
        if n > dev.ports:
            c.add(
                "port-count",
                _switch_field(plan, dev),
                f"{dname} uses {n} ports but {dev.model} has {dev.ports}",
                "fewer servers per leaf, a higher oversubscription ratio, or a larger switch",
            )


def _measure_leaves(plan: Plan, devs: dict[str, Device], nic_ports: list[str]) -> Bandwidth:
    bw = Bandwidth()
    rail_of_port = {p: i for i, p in enumerate(nic_ports)}
    for lk in plan.links:
        a, b = devs[lk.a_device], devs[lk.b_device]
        if lk.tier in ("server-leaf", "mgmt-access"):
            if a.kind == "server":
                bw.down[b.name] += lk.speed_gbps
                if lk.network == "backend":
                    bw.rails[b.name].add(rail_of_port.get(lk.a_port, -1))
            elif lk.network != "backend":
                # subnet-manager nodes on backend leaves are not demand the ratio is about
                bw.down[b.name] += lk.speed_gbps
        elif lk.tier in ("leaf-spine", "access-agg"):
            bw.up[a.name] += lk.speed_gbps
    return bw


def _check_ratios(plan: Plan, bw: Bandwidth, c: _Collector) -> None:
    """Oversubscription measured at every backend and frontend leaf (recorded in bw.measured)."""
    design = plan.design
    be = design.backend
    for d in plan.devices:
        if d.kind != "switch" or d.role != "leaf" or d.network == "oob":
            continue
        if not bw.up[d.name]:
            c.add("ratio", f"{d.network}.oversubscription", f"{d.name} has no uplinks", "check the design")
            continue
        assert d.network is not None  # a switch is in its network (plan.Device)
        bw.measured[d.network][d.name] = Fraction(bw.down[d.name], bw.up[d.name])
    want_be = ratio_value(be.oversubscription)
    n_su = plan.networks.backend.scalable_units
    reserved = design.compute.reserved_slots
    su_of = {d.name: d.attrs.get("su") for d in plan.devices if d.network == "backend"}
    leaf_no = {d.name: d.attrs.get("index", 1) - 1 for d in plan.devices if d.network == "backend"}
    per_leaf = be.su_size // be.leaves_per_rail
    off: dict[tuple[Fraction, Fraction, int, int], list[str]] = {}  # the leaves off the ratio, by how
    for leaf, r in bw.measured["backend"].items():
        # the last unit's reserved slots send no server traffic up: the leaves holding them run below
        # the ratio by exactly the missing servers' share, every other leaf at the requested ratio
        want = want_be
        if reserved and su_of[leaf] == n_su:
            lo = leaf_no[leaf] * per_leaf  # this leaf's slots in its unit (a rail's leaves split the unit)
            missing = max(0, lo + per_leaf - max(lo, be.su_size - reserved))
            want = want_be * Fraction(per_leaf - missing, per_leaf)
        if r != want:
            off.setdefault((r, want, bw.down[leaf], bw.up[leaf]), []).append(leaf)
    for (r, want, down_bw, up_bw), leaves in off.items():
        # one problem per way of missing the ratio, naming the leaves, with the ratios they can run
        down_ports = plan.networks.backend.downlinks_per_leaf
        near = sorted({math.floor(down_ports / want), math.ceil(down_ports / want)} - {0})
        runs = [f"{down_ports // math.gcd(down_ports, u)}:{u // math.gcd(down_ports, u)} ({u} uplinks)" for u in near]
        fits = ", ".join(f"{n}:1" for n in range(1, 8) if down_ports % n == 0)
        shown = ", ".join(leaves[:3]) + (f" and {len(leaves) - 3} more" if len(leaves) > 3 else "")
        c.add(
            "ratio",
            "backend.oversubscription",
            f"{len(leaves)} leaves ({shown}) measure {_pretty_ratio(r)} ({down_bw}G down / {up_bw}G up), not the "
            f"requested {be.oversubscription}: a leaf's uplinks are whole ports, {down_ports} server ports each",
            f"write a ratio the leaves run: {' or '.join(runs)}; or one that divides {down_ports}: {fits}",
        )
    want_fe = ratio_value(design.frontend.oversubscription)
    for leaf, r in bw.measured["frontend"].items():
        if r > want_fe:
            c.add(
                "ratio",
                "frontend.oversubscription",
                f"{leaf} measures {_pretty_ratio(r)}, above the requested {design.frontend.oversubscription}",
                "raise the ratio or use a leaf with more ports",
            )
    fab = design.storage.fabric
    if fab is not None:
        service = {d.name for d in plan.devices if d.network == "storage" and d.attrs.get("service")}
        for leaf, r in bw.measured["storage"].items():
            # the storage servers' leaves are non-blocking whatever the compute servers' ratio
            want, asked = (
                (Fraction(1), "1:1 (storage servers' leaves)")
                if leaf in service
                else (ratio_value(fab.oversubscription), fab.oversubscription)
            )
            if r > want:
                c.add(
                    "ratio",
                    "storage.fabric.oversubscription",
                    f"{leaf} measures {_pretty_ratio(r)}, above the requested {asked}",
                    "raise the ratio or use a storage switch with more ports",
                )


def _check_rails(plan: Plan, devs: dict[str, Device], bw: Bandwidth, c: _Collector) -> None:
    if plan.design.backend.topology != "rail_optimized":
        return
    for leaf, rails in bw.rails.items():
        a = devs[leaf].attrs
        want = a.get("rail")
        if rails != set(a.get("rails", [want])):
            c.add(
                "rail",
                "backend.rails",
                f"{leaf} (rail {want}) carries NICs of rails {sorted(rails)}: rails are not isolated",
                "NIC i of every server must land on a rail-i leaf",
            )


def _check_graph(
    plan: Plan, devs: dict[str, Device], bw: Bandwidth, c: _Collector
) -> tuple[Bisection | None, CapacityGraph]:
    """Connectivity, and full bisection for non-blocking backends. They need a wiring that fits the
    switches, so they run only once the port checks pass; returns the bisection measured and the
    backend's switch graph."""
    be = plan.design.backend
    g = _capacity_graph(plan, "backend")
    wiring_ok = not (c.kinds["port-count"] or c.kinds["double"] or c.kinds["speed"])
    if wiring_ok and g.adj:
        # shared spines make one fabric; rail planes one fabric (one subnet) per rail; network planes one
        # per plane, holding the rails r with the same r mod planes
        parts = g.components()
        n_planes = {"per_rail": plan.networks.backend.rails, "per_plane": be.planes}.get(be.spine_grouping)
        want_parts = n_planes or 1
        mixed = n_planes is not None and any(
            len({int(devs[n].attrs["rail"]) % n_planes for n in part if devs[n].role == "leaf"}) != 1 for part in parts
        )
        if len(parts) != want_parts or mixed:
            c.add(
                "connect",
                "backend.spine_grouping",
                f"the backend fabric falls into {len(parts)} disconnected parts, expected {want_parts}",
                "every leaf must reach every other leaf of its plane through the spines",
            )
    bisection = None
    if wiring_ok and not c.kinds["connect"]:
        bisection = _bisection(plan, g, bw.down)
        if be.spine_grouping == "per_plane":
            per_plane = _plane_bisections(plan, g, bw.down)
            plan.networks.backend.plane_bisection = per_plane
            if ratio_value(be.oversubscription) == 1:
                for pb in per_plane:
                    if pb.ratio < 1:
                        c.add(
                            "bisection",
                            "backend.oversubscription",
                            f"{pb.plane}: max-flow across its bisection is {pb.max_flow_gbps}G of "
                            f"{pb.demand_gbps}G needed: the plane is not non-blocking",
                            "add spines or uplinks",
                        )
        if ratio_value(be.oversubscription) == 1 and bisection is not None and bisection.ratio < 1:
            c.add(
                "bisection",
                "backend.oversubscription",
                f"max-flow across the bisection is {bisection.max_flow_gbps}G of "
                f"{bisection.demand_gbps}G needed: the fabric is not non-blocking",
                "add spines or uplinks",
            )
    return bisection, g


def _annotate(
    plan: Plan, catalog: Catalog, used: Counter[tuple[str, str]], bw: Bandwidth, bisection: Bisection | None
) -> None:
    """Write what was measured into the plan, so reports show what was proven."""
    for net, leaves in bw.measured.items():
        worst = max(leaves.values()) if leaves else Fraction(0)
        facts = plan.networks[net]
        assert not isinstance(facts, OobFacts)  # the OOB network has no oversubscription to measure
        facts.oversubscription.measured = _fmt_ratio(worst)
    if bisection is not None:
        plan.networks.backend.bisection = bisection
    for d in plan.devices:
        if d.kind == "switch":
            d.spare_ports = [p.name for p in port_table(catalog.switches[d.model]) if (d.name, p.name) not in used]
    for net in plan.networks:
        plan.networks[net].spare_ports = sum(len(d.spare_ports) for d in plan.devices if d.network == net)


def _capacity_graph(plan: Plan, network: str) -> CapacityGraph:
    """Switch-level graph of one network, parallel links merged into one edge of summed capacity."""
    g = CapacityGraph()
    devs = plan.index()
    for lk in plan.links:
        if lk.network != network:
            continue
        a, b = devs[lk.a_device], devs[lk.b_device]
        if a.kind != "switch" or b.kind != "switch":
            continue
        g.add(a.name, b.name, lk.speed_gbps)
    return g


def _bisection_planes(plan: Plan) -> list[list[str]]:
    """The backend leaves by plane, each in scalable-unit and pod order: one plane of shared spines, one per
    rail (spine_grouping: per_rail) or per network plane (per_plane). Planes share no switch: traffic
    between them crosses inside the servers (NVLink, PXN), as NVIDIA's rail-optimized designs carry it,
    so the bisection is cut within each plane, never between two of them (a cut between planes measures
    0G: nothing in the fabric joins them, by design)."""
    be = plan.design.backend
    leaves = [d for d in plan.devices if d.network == "backend" and d.role == "leaf"]
    n = {"per_rail": plan.networks.backend.rails, "per_plane": be.planes}.get(be.spine_grouping)
    if not n:
        return [[d.name for d in leaves]]
    return [[d.name for d in leaves if int(d.attrs["rail"]) % n == p] for p in range(n)]


def bisection_halves(plan: Plan, down_bw: dict[str, int]) -> tuple[dict[str, int], dict[str, int]] | None:
    """The first and the second half of the backend leaves of each plane (scalable-unit and pod order),
    each with its servers' bandwidth: the max-flow's sources and sinks."""
    planes = [p for p in _bisection_planes(plan) if len(p) >= 2]
    if not planes:
        return None
    a: dict[str, int] = {}
    b: dict[str, int] = {}
    for leaves in planes:
        half = len(leaves) // 2
        a |= {x: down_bw.get(x, 0) for x in leaves[:half]}
        b |= {x: down_bw.get(x, 0) for x in leaves[half:]}
    return a, b


def _plane_bisections(plan: Plan, g: CapacityGraph, down_bw: dict[str, int]) -> list[PlaneBisection]:
    """Each network plane's own bisection: its leaves (scalable-unit order) in halves, max-flow from one
    to the other. The planes share no switch, so a flow between one plane's leaves stays in it."""
    by_plane: dict[str, list[str]] = {}
    for d in plan.devices:
        if d.network == "backend" and d.role == "leaf":
            by_plane.setdefault(str(d.attrs.get("plane", "")), []).append(d.name)
    tier = {d.name: TIER[d.role] for d in plan.devices if d.network == "backend" and d.role in TIER}
    out = []
    for plane, leaves in sorted(by_plane.items(), key=lambda kv: int(kv[0].removeprefix("plane") or 0)):
        if len(leaves) < 2:
            continue
        half = len(leaves) // 2
        a = {x: down_bw.get(x, 0) for x in leaves[:half]}
        b = {x: down_bw.get(x, 0) for x in leaves[half:]}
        demand = min(sum(a.values()), sum(b.values()))
        value = int(max_flow(g, a, b, tier))
        out.append(PlaneBisection(plane, demand, value, round(value / demand, 4) if demand else 1.0))
    return out


def _inside_plane_bisections(plan: Plan, planes: int, down_bw: dict[str, int], c: _Collector) -> list[PlaneBisection]:
    """The planes inside the backend's switches (Switch.planes): plane k is ASIC k of every box, joined by
    lane k of every link, so its graph is the boxes' graph at a lane's share of each link's speed. Each
    plane's bisection is measured on its own graph (first half of the leaves to the second, as the whole
    fabric's), and at 1:1 each must carry its demand."""
    tier = {d.name: TIER[d.role] for d in plan.devices if d.network == "backend" and d.role in TIER}
    leaves = _bisection_planes(plan)[0]
    half = len(leaves) // 2
    devs = plan.index()
    # every link carries one lane in each plane, so the planes' graphs are alike: built once
    g = CapacityGraph()
    for lk in plan.links:
        if lk.network == "backend" and devs[lk.a_device].kind == devs[lk.b_device].kind == "switch":
            g.add(lk.a_device, lk.b_device, lk.speed_gbps // planes)
    out = []
    for k in range(1, planes + 1):
        a = {x: down_bw.get(x, 0) // planes for x in leaves[:half]}
        b = {x: down_bw.get(x, 0) // planes for x in leaves[half:]}
        demand = min(sum(a.values()), sum(b.values()))
        value = int(max_flow(g, a, b, tier))
        pb = PlaneBisection(f"plane{k}", demand, value, round(value / demand, 4) if demand else 1.0)
        if ratio_value(plan.design.backend.oversubscription) == 1 and pb.ratio < 1:
            c.add(
                "bisection",
                "backend.oversubscription",
                f"{pb.plane} (inside the switches): max-flow across its bisection is {value}G of {demand}G "
                "needed: the plane is not non-blocking",
                "add spines or uplinks",
            )
        out.append(pb)
    return out


def _inside_plane_failures(
    plan: Plan,
    catalog: Catalog,
    g: CapacityGraph,
    nic_ports: list[str],
    bisection: Bisection,
    planes: list[PlaneBisection],
) -> list[FailureDomain]:
    """Failure domains of a backend whose planes are inside its switches: a switch, or a rack of them,
    takes its ASICs of every plane at once, so it is measured on the boxes' graph as one fabric; one plane
    (ASIC k of every box, lane k of every link) takes no whole switch but a lane of every GPU's port: every
    GPU keeps (planes - 1) / planes of its bandwidth, and the bisection the other planes carry."""
    whole = PlaneBisection("", bisection.demand_gbps, bisection.max_flow_gbps, bisection.ratio)
    rows = [r for r in failure_domains(plan, catalog, g, nic_ports, [whole]) if r.scenario != "plane"]
    worst = max(planes, key=lambda pb: pb.max_flow_gbps)  # the first of equals
    after = sum(pb.max_flow_gbps for pb in planes if pb is not worst)
    before = sum(pb.max_flow_gbps for pb in planes)
    # every GPU's port has a lane in the plane: all the GPUs behind the backend's server ports
    hosts = {lk.a_device for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"}
    gpus = sum(catalog.servers[d.model].gpus or 1 for d in plan.devices if d.kind == "server" and d.name in hosts)
    plane = FailureDomain(
        scenario="plane",
        failed=worst.plane,
        switches=0,
        gpus_losing_bandwidth=gpus,
        gpus_cut_off=0,
        worst_gpu_bandwidth_kept=round((len(planes) - 1) / len(planes), 4),
        bisection_gbps=after,
        bisection_kept=round(after / before, 4) if before else 1.0,
    )
    at = sum(r.scenario in ("leaf", "spine", "core") for r in rows)
    return [*rows[:at], plane, *rows[at:]]


def _bisection(plan: Plan, g: CapacityGraph, down_bw: dict[str, int]) -> Bisection | None:
    """Max-flow from the first half of the leaves (in scalable-unit and pod order, so the cut falls
    across whole subtrees, the hardest cut of a fat tree) to the second half, each leaf sourcing or
    sinking its servers' bandwidth; within each plane when the spines are grouped by rail or plane (the
    planes share no switch, so the flow is the planes' flows summed). Equal to the demand means full
    bisection bandwidth, on the graph. generators.stages.bisection computes it from the tree's structure,
    exact (networkx's max-flow when the fabric is not a clean tiered tree)."""
    halves = bisection_halves(plan, down_bw)
    if halves is None:
        return None
    a, b = halves
    planes = [p for p in _bisection_planes(plan) if len(p) >= 2]
    # each plane can carry at most the smaller of its halves' bandwidth
    demand = sum(min(sum(a.get(x, 0) for x in leaves), sum(b.get(x, 0) for x in leaves)) for leaves in planes)
    tier = {d.name: TIER[d.role] for d in plan.devices if d.network == "backend" and d.role in TIER}
    value = max_flow(g, a, b, tier)
    method = "max-flow, first half of leaves to second half"
    if len(planes) > 1:
        method = f"max-flow in each of {len(planes)} planes, first half of its leaves to second half, summed"
    return Bisection(
        method=method,
        demand_gbps=demand,
        max_flow_gbps=int(value),
        ratio=round(value / demand, 4) if demand else 1.0,
    )
