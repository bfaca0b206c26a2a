"""The network plan of a RoCE backend: ASNs, loopbacks, tenant VRFs and every port's addressing, in
``plan.backend_net`` for the switch renderers (SONiC, Cumulus NVUE) and the hosts' netplan/NCCL files.

Scheme (documented in the README):
- ASNs (RFC 7938 section 5.2.1): each leaf its own (``backend.network.leaf_asn_base + n``), the spines
  of one group (a rail plane's, or a 3-tier pod's) share ``spine_asn_base + g``, the cores share
  ``core_asn``. Fabric links are eBGP unnumbered (IPv6 link-local sessions, IPv4 over RFC 5549 next
  hops): no addresses on them.
- Server ports: a /31 per port, the switch side even, the NIC odd, carved per rail from
  ``addressing.backend``: rail r owns one aligned block, so a NIC needs one route (its rail's block,
  via its leaf) and a packet for a peer on the same rail never leaves that rail's leaves and spines.
  The backend switches' loopbacks follow the rail blocks.
- Tenants: a VRF per network (the provider's infra VRF for servers no tenant rents, then each tenant)
  named as on the frontend; a leaf's server port is in the VRF of the server's tenant. VRFs cross the
  fabric as EVPN type-5 routes, one L3VNI and one route target per VRF, the frontend's numbers
  (``frontend.evpn``, ``tenants[].l3vni``): not VRF-lite, which would need a routed subinterface and
  a BGP session per tenant on every leaf-spine link (the spines then carry every tenant's table),
  while type-5 leaves the spines a plain IP underlay and adds a tenant by adding one VNI at its
  leaves. A NIC's /31 is known only inside its VRF, and a VRF imports its own route target only, so
  one tenant's NICs have no route to another's.
"""

from __future__ import annotations

from collections import defaultdict
from ipaddress import IPv4Network

from generators.model.catalog import Catalog
from generators.model.design import tenant_members
from generators.model.errors import DesignError, Problem
from generators.model.netos import network_os
from generators.model.plan import Device, Plan
from generators.model.ports import backend_ports
from generators.model.sections import BackendNet, BackendPort, BackendRail, BackendSwitch, BackendVrf, RoceQos
from generators.stages.netplan import INFRA, Pool, _prefix_for, _span, host, network_ids

FABRIC_TIERS = ("leaf-spine", "spine-core")
# RoCEv2 as NVIDIA and SONiC deploy it: RoCE data on DSCP 26 into lossless priority 3 (PFC), DCQCN's
# congestion notification packets on DSCP 48 into strict priority 6. NVIDIA, "RoCE Configuration for
# NVIDIA Spectrum Switches" / Spectrum-X RA; SONiC's default QoS templates (qos_config.j2, the
# AZURE maps: DSCP 3/4 lossless there, NVIDIA's RoCE deployments use 26/48).
QOS = RoceQos(roce_dscp=26, roce_priority=3, cnp_dscp=48, cnp_priority=6)
# The NICs' IP MTU under the switches' port MTU: a tenant's packet crossing the fabric gains a VXLAN
# header (50 bytes) between leaves, and 9000 + 14 + 50 stays below SONiC's 9100; RoCE itself runs a
# 4096-byte path MTU inside it.
HOST_MTU = 9000


def plan_backend(plan: Plan, catalog: Catalog) -> None:
    """Compiler stage: a RoCE backend's network plan in plan.backend_net (nothing for InfiniBand)."""
    design = plan.design
    if design.backend.technology != "roce":
        return
    devs = plan.index()
    switches = [d for d in plan.devices if d.kind == "switch" and d.network == "backend"]
    asn = _asns(plan, switches)
    lengths = _cable_lengths(plan)
    nets, _ = network_ids(design)  # their collisions are the frontend network plan's to report
    by_name = {n.name: n for n in nets}
    owner = {h: t for t, hs in tenant_members(design).items() for h in hs}

    host_links: list[tuple[int, int, str, str]] = []  # (link index, rail, switch, host)
    for k, lk in enumerate(plan.links):
        if lk.network == "backend" and lk.tier == "server-leaf":
            sw, hst = (lk.b_device, lk.a_device) if devs[lk.b_device].kind == "switch" else (lk.a_device, lk.b_device)
            host_links.append((k, -1, sw, hst))
    rail_of = _rails(plan, devs, [k for k, _, _, _ in host_links])
    host_links = [(k, rail_of[k], sw, h) for k, _, sw, h in host_links]

    pool = Pool("addressing.backend", design.addressing.backend)
    per_rail: dict[int, list[int]] = defaultdict(list)
    for k, r, _, _ in host_links:
        per_rail[r].append(k)
    blocks: dict[int, IPv4Network | None] = {
        r: pool.take(f"rail {r} ({len(ks)} x /31)", _prefix_for(2 * len(ks))) for r, ks in sorted(per_rail.items())
    }
    lo_block = pool.take(f"{len(switches)} backend loopbacks", _prefix_for(len(switches) + 2))
    if lo_block is None or any(b is None for b in blocks.values()):
        raise DesignError([pool.problem()])
    loopback = {d.name: f"{host(lo_block, i + 1)}/32" for i, d in enumerate(switches)}

    address: dict[int, tuple[str, str]] = {}
    for r, ks in per_rail.items():
        block = blocks[r]
        assert block is not None
        for i, k in enumerate(ks):
            base = block.network_address + 2 * i
            address[k] = (f"{base}/31", f"{base + 1}/31")
    vrf_of_link = {k: by_name[owner.get(h, INFRA)].vrf for k, _, _, h in host_links}

    ports: list[BackendPort] = []
    rail_by_link = {k: r for k, r, _, _ in host_links}
    for k, lk in enumerate(plan.links):
        if lk.network != "backend":
            continue
        fabric = lk.tier in FABRIC_TIERS
        for me, my_port, peer, peer_port in (
            (lk.a_device, lk.a_port, lk.b_device, lk.b_port),
            (lk.b_device, lk.b_port, lk.a_device, lk.a_port),
        ):
            if devs[me].kind != "switch":
                continue
            port = BackendPort(me, my_port, peer, peer_port, lk.speed_gbps, lengths.get(k, 0.0), fabric)
            if not fabric:
                port.rail, port.vrf = rail_by_link[k], vrf_of_link[k]
                port.address, port.peer_address = address[k]
            ports.append(port)
    order = {d.name: i for i, d in enumerate(switches)}
    ports.sort(key=lambda p: (order[p.switch], _port_key(p.port)))

    leaves_of: dict[str, set[str]] = defaultdict(set)
    for p in ports:
        if p.vrf is not None:
            leaves_of[p.vrf].add(p.switch)
    admin = design.frontend.evpn.route_target_admin
    vrfs = [
        BackendVrf(
            n.vrf,
            n.tenant,
            n.l3vni,
            n.l3vni_vlan,
            f"{admin}:{n.l3vni}",
            sorted(leaves_of[n.vrf], key=order.__getitem__),
        )
        for n in nets
        if n.vrf in leaves_of
    ]
    problems = _isolation(ports, vrfs)
    if problems:
        raise DesignError(problems)
    net = design.backend.network
    os_ = catalog.switches[design.backend.switch].os
    plan.backend_net = BackendNet(
        scheme={
            "asn": "RFC 7938: one ASN per leaf (leaf_asn_base + n), spines of a group (rail plane or pod) "
            "share spine_asn_base + g, cores share core_asn",
            "leaf_asn_base": net.leaf_asn_base,
            "spine_asn_base": net.spine_asn_base,
            "core_asn": net.core_asn,
            "addressing": "a /31 per server port (switch side even, NIC odd) from rail r's block of "
            "addressing.backend; backend loopbacks after the rail blocks",
        },
        switch_mtu=network_os(os_).mtu or 9100,
        host_mtu=HOST_MTU,
        overlay="evpn-type5",
        qos=QOS,
        switches=[
            BackendSwitch(d.name, d.role, asn[d.name], loopback[d.name], [v.name for v in vrfs if d.name in v.leaves])
            for d in switches
        ],
        ports=ports,
        vrfs=vrfs,
        rails=[BackendRail(r, str(b)) for r, b in sorted(blocks.items())],
    )


def _asns(plan: Plan, switches: list[Device]) -> dict[str, int]:
    net = plan.design.backend.network
    asn: dict[str, int] = {}
    groups: dict[tuple[str, int], int] = {}
    leaf_no = 0
    for d in switches:
        if d.role == "leaf":
            leaf_no += 1
            asn[d.name] = net.leaf_asn_base + leaf_no
        elif d.role == "spine":
            g = groups.setdefault((str(d.attrs.get("plane", "")), int(d.attrs.get("pod", 0))), len(groups) + 1)
            asn[d.name] = net.spine_asn_base + g
        else:
            asn[d.name] = net.core_asn
    problems = []
    top = max(asn.values(), default=0)
    if top > 4294967294:
        problems.append(Problem("backend.network", f"ASN {top} is past the 4-byte range", "lower the bases"))
    role = {d.name: d.role for d in switches}
    leaves = {a for n, a in asn.items() if role[n] == "leaf"}
    upper = {a for n, a in asn.items() if role[n] != "leaf"}
    if leaves & upper:
        problems.append(
            Problem(
                "backend.network.leaf_asn_base",
                f"leaf ASNs {min(leaves)}-{max(leaves)} reach the "
                f"spine or core ASNs ({min(upper)}-{max(upper)}): a leaf would drop its spines' "
                "routes as a loop",
                "give leaves, spines and cores ranges of their own",
            )
        )
    if problems:
        raise DesignError(problems)
    return asn


def _rails(plan: Plan, devs: dict[str, Device], links: list[int]) -> dict[int, int]:
    """Each server link's rail: its leaf's rail (rail-optimized), else the port's position among the
    server's backend ports (top-of-rack leaves carry every rail of their servers)."""
    seen: dict[str, int] = defaultdict(int)
    out: dict[int, int] = {}
    for k in links:
        lk = plan.links[k]
        sw, h = (lk.b_device, lk.a_device) if devs[lk.b_device].kind == "switch" else (lk.a_device, lk.b_device)
        rail = devs[sw].attrs.get("rail")
        if "rails" in devs[sw].attrs:  # a leaf of several rails: the rail of the server's port
            rail = _port_rail(plan, devs[h].model, lk.b_port if lk.b_device == h else lk.a_port)
        out[k] = int(rail) if rail is not None else seen[h]
        seen[h] += 1
    return out


def _port_rail(plan: Plan, model: str, port: str) -> int | None:
    """The rail of a server's backend port: its index in the server model's backend ports."""
    srv = plan.catalog.servers.get(model)
    if srv is None or srv.backend is None:
        return None
    return next((i for i, p in enumerate(backend_ports(plan.catalog, srv.backend)) if p.name == port), None)


def _cable_lengths(plan: Plan) -> dict[int, float]:
    """Routed metres per link index: a bundle of one cable per link has one length per link, a
    splitter or twin cable one length for all of its links."""
    out: dict[int, float] = {}
    for c in plan.cables or []:
        for j, k in enumerate(c.links):
            out[k] = c.routed_m[min(j, len(c.routed_m) - 1)]
    return out


def _port_key(name: str) -> tuple[str, int]:
    digits = "".join(ch for ch in name if ch.isdigit())
    return name.rstrip("0123456789"), int(digits) if digits else 0


def _isolation(ports: list[BackendPort], vrfs: list[BackendVrf]) -> list[Problem]:
    """No L3VNI or route target shared by two VRFs, every server port in one known VRF: the property
    the tenants' isolation rests on, checked on what is stored rather than assumed from the scheme."""
    problems: list[Problem] = []
    for attr in ("l3vni", "route_target"):
        seen: dict[object, str] = {}
        for v in vrfs:
            value = getattr(v, attr)
            if value in seen:
                problems.append(
                    Problem(
                        "tenants",
                        f"{v.name} and {seen[value]} share {attr} {value} on the backend",
                        "give each tenant its own tenants[].l3vni",
                    )
                )
            seen.setdefault(value, v.name)
    known = {v.name for v in vrfs}
    for p in ports:
        if not p.fabric and p.vrf not in known:
            problems.append(
                Problem(
                    "tenants",
                    f"{p.switch} {p.port} ({p.peer}) is in no backend VRF",
                    "report this: every server port is planned into its tenant's VRF",
                )
            )
    return problems


def summary_rows(plan: Plan) -> list[tuple[str, str, str]]:
    """Rows for the compile summary: what railyard configures on a RoCE backend, and what it does not."""
    bn = plan.backend_net
    if bn is None:
        return []
    b = plan.design.backend
    v = network_os(plan.catalog.switches[b.switch].os)
    release = f", release {b.sonic_release}" if v.name == "sonic" else ""
    by_role: dict[str, list[int]] = defaultdict(list)
    for s in bn.switches:
        by_role[s.role].append(s.asn)
    plural = {"leaf": "leaves", "spine": "spines", "core": "cores"}
    asns = ", ".join(f"{plural[role]} {_span(a)}" for role, a in by_role.items())
    vrfs = ", ".join(f"{x.name} (L3VNI {x.l3vni})" for x in bn.vrfs)
    q = bn.qos
    hosts = len({p.peer for p in bn.ports if not p.fabric})
    rows = [
        ("backend configs", "backend", f"{v.summary}{release}: eBGP unnumbered, ECMP, tenant VRFs as EVPN type-5"),
        ("ASNs", "backend", asns),
        ("VRFs", "backend", vrfs),
        (
            "RoCE QoS",
            "backend",
            f"DSCP {q.roce_dscp} lossless (PFC {q.roce_priority}, ECN), CNP DSCP {q.cnp_dscp} "
            "strict, PFC watchdog; buffers per speed and cable length",
        ),
        (
            "host files",
            "backend",
            f"{hosts:,} x hosts/<server>/netplan.yaml (a /31 per NIC, a route per rail) + nccl.env",
        ),
    ]
    if v.roce_unconfigured:
        rows.append(("not configured", "backend", v.roce_unconfigured))
    return rows
