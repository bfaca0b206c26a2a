"""The network plan: ASNs, loopbacks, tenant VRFs/VLANs/VNIs, every subnet and address, the
out-of-band port map and the storage bandwidth check. A compiler stage; renderers read its result
from ``plan.netplan``.

Scheme (documented in the README):
- ASNs (RFC 7938): cores share one ASN, the spines of pod p share ``spine_asn_base + p`` (a 2-tier
  frontend is pod 1), leaf fe-leafNN has ``leaf_asn_base + NN``, service leaf fe-svcNN
  ``leaf_asn_base - NN``. OOB: the aggregation pair shares
  ``oob.network.asn_base``, access switch oobNN has ``asn_base + NN``.
- Loopbacks: router ids in three equal regions of ``addressing.loopbacks``' lower half (the whole pool
  without VTEPs): frontend leaves (service leaves from the region's end), frontend spines (cores from
  the end), OOB access switches (aggregation switches from the end); VTEPs (OSes that source VXLAN
  from a loopback of their own) from its middle. A loopback depends on its router's kind and number
  only, so growing the site moves none.
- Network k is the provider's ``infra`` VRF (k = 0: management nodes and servers no tenant rents) or
  the k-th tenant. It owns a hosts VLAN, a storage VLAN, a VRF with an L3VNI, and one subnet from each
  of ``addressing.tenants`` and ``addressing.storage``. Nothing of one network is shared with another
  (checked here: the design fails with the field to change).
- Every management port sits on a planned OOB access-switch port; its address is fixed by that port's
  position, so a replaced server on the same port gets the same address from the DHCP reservation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network, ip_network
from typing import Any

from generators.model.catalog import Catalog
from generators.model.design import Design, tenant_members
from generators.model.errors import DesignError, Problem
from generators.model.netdesign import PRIVATE_ASN_RANGES, SONIC_SAG
from generators.model.netos import network_os
from generators.model.plan import Device, Plan, required
from generators.model.ports import port_table
from generators.model.sections import AaaTarget, LocalUser, MgmtPlane, NetPlan, SnmpV3User

# First host addresses of every hosts/storage subnet kept for the provider: .1 is the anycast
# gateway, the rest for DHCP/DNS/VIPs added later, so hosts start at a fixed, documented offset.
RESERVED_HOSTS = 8
VRF_PREFIX = "Vrf_"
INFRA = "infra"
BMC_KINDS = ("server", "storage", "management")


@dataclass(frozen=True, slots=True)
class NetworkIds:
    """The segment numbers of one network (infra or a tenant)."""

    index: int
    name: str
    tenant: str | None
    vrf: str
    vlan: int
    storage_vlan: int
    l3vni: int
    l3vni_vlan: int
    vni: int
    storage_vni: int


# ------------------------------------------------------------------------------------- allocators


class Pool:
    """Sequential, aligned carving of subnets out of one design pool; errors name the pool field."""

    def __init__(self, field: str, network: IPv4Network) -> None:
        self.field = field
        self.network = network
        self.next = int(network.network_address)
        self.wanted: list[tuple[str, int]] = []

    def take(self, what: str, prefixlen: int) -> IPv4Network | None:
        self.wanted.append((what, prefixlen))
        size = 1 << (32 - prefixlen)
        start = -(-self.next // size) * size  # align up
        if prefixlen < self.network.prefixlen or start + size > int(self.network.broadcast_address) + 1:
            self.next = int(self.network.broadcast_address) + 2  # everything after this fails too
            return None
        self.next = start + size
        return IPv4Network((start, prefixlen))

    def problem(self) -> Problem:
        need = sum(1 << (32 - p) for _, p in self.wanted)
        biggest = max(self.wanted, key=lambda w: (-w[1], w[0]))
        return Problem(
            self.field,
            f"{self.network} ({self.network.num_addresses:,} addresses) cannot hold the "
            f"{len(self.wanted)} subnets the plan needs ({need:,} addresses; largest: {biggest[0]} "
            f"/{biggest[1]})",
            f"give {self.field} a shorter prefix, e.g. /{_prefix_for(need)}",
        )


def prefix_for_hosts(hosts: int) -> int:
    """Smallest prefix holding `hosts` usable addresses (plus network and broadcast)."""
    return _prefix_for(hosts + 2)


def _prefix_for(addresses: int) -> int:
    p = 32
    while (1 << (32 - p)) < addresses and p > 0:
        p -= 1
    return p


def host(net: IPv4Network, i: int) -> IPv4Address:
    """The i-th address of a subnet (1 = first usable)."""
    return net.network_address + i


def with_len(addr: IPv4Address, net: IPv4Network) -> str:
    return f"{addr}/{net.prefixlen}"


def is_private_asn(asn: int) -> bool:
    return any(lo <= asn <= hi for lo, hi in PRIVATE_ASN_RANGES)


# -------------------------------------------------------------------------------------- the stage


def vrf_name(tenant: str, pinned: str | None) -> str:
    return pinned or f"{VRF_PREFIX}{tenant}"


def network_ids(design: Design) -> tuple[list[NetworkIds], list[Problem]]:
    """Segment numbers of infra and every tenant, with collision and range problems."""
    ev = design.frontend.evpn
    problems: list[Problem] = []
    out: list[NetworkIds] = []
    entries: list[tuple[str, str | None, Any]] = [(INFRA, None, None)]
    entries += [(t.name, t.name, t) for t in design.tenants]
    for k, (name, tenant, t) in enumerate(entries):
        vlan = t.vlan if t is not None and t.vlan else ev.vlan_base + 10 * k
        storage_vlan = t.storage_vlan if t is not None and t.storage_vlan else vlan + 1
        l3vni = t.l3vni if t is not None and t.l3vni else ev.l3vni_base + k
        vrf = vrf_name(name, t.vrf if t is not None else None)
        if len(vrf) > 15:
            problems.append(
                Problem(
                    f"tenants.{k - 1}.name",
                    f"VRF name {vrf} is longer than 15 characters (a Linux interface name)",
                    f"set tenants.{k - 1}.vrf, e.g. Vrf_{name[:11]}",
                )
            )
        out.append(
            NetworkIds(
                k,
                name,
                tenant,
                vrf,
                vlan,
                storage_vlan,
                l3vni,
                ev.l3vni_vlan_base + k,
                ev.l2vni_base + vlan,
                ev.l2vni_base + storage_vlan,
            )
        )
    problems += check_isolation(out, design)
    return out, problems


def _id_field(design: Design, n: NetworkIds, what: str) -> str:
    """The design field that set one of a network's numbers (a tenant pin, or the evpn base)."""
    if n.tenant is not None:
        i = next(i for i, t in enumerate(design.tenants) if t.name == n.tenant)
        t = design.tenants[i]
        pinned = {"vlan": t.vlan, "storage_vlan": t.storage_vlan or t.vlan, "l3vni": t.l3vni, "vrf": t.vrf}
        if pinned.get(what) is not None:
            return f"tenants.{i}.{what}"
        if what == "vrf":
            return f"tenants.{i}.name"
    return {
        "vlan": "frontend.evpn.vlan_base",
        "storage_vlan": "frontend.evpn.vlan_base",
        "l3vni": "frontend.evpn.l3vni_base",
        "l3vni_vlan": "frontend.evpn.l3vni_vlan_base",
        "vni": "frontend.evpn.l2vni_base",
        "storage_vni": "frontend.evpn.l2vni_base",
        "vrf": "tenants",
    }[what]


def check_isolation(nets: list[NetworkIds], design: Design) -> list[Problem]:
    """No VLAN, VNI or VRF may be shared between two networks (tenants or infra), and every
    number must be in range. Each problem names the field that set the later of the two."""
    problems: list[Problem] = []
    spaces = {
        "VLAN": (("vlan", "storage_vlan", "l3vni_vlan"), 2, 4094),
        "VNI": (("vni", "storage_vni", "l3vni"), 1, 16777215),
        "VRF": (("vrf",), None, None),
    }
    for space, (attrs, lo, hi) in spaces.items():
        owner: dict[Any, tuple[NetworkIds, str]] = {}
        for n in nets:
            for a in attrs:
                v = getattr(n, a)
                if lo is not None and not lo <= v <= hi:
                    problems.append(
                        Problem(
                            _id_field(design, n, a),
                            f"{n.name}'s {a.replace('_', ' ')} {v} is outside {lo}-{hi}",
                            "lower the base or pin a value in range",
                        )
                    )
                    continue
                if v in owner and (owner[v][0].name != n.name or owner[v][1] != a):
                    o, oa = owner[v]
                    who = "both" if o.name == n.name else f"{o.name} and {n.name}"
                    fa, fb = _id_field(design, o, oa), _id_field(design, n, a)
                    # name a tenant's pin when there is one (the likelier mistake), else the later field
                    field = fa if fa.startswith("tenants.") and not fb.startswith("tenants.") else fb
                    set_by = fa if fa == fb else f"{fa} and {fb}"
                    problems.append(
                        Problem(
                            field,
                            f"{space} {v} is shared by {who} ({oa.replace('_', ' ')} and "
                            f"{a.replace('_', ' ')}, set by {set_by}): networks must not share a {space}",
                            f"give each tenant its own {space}; leave the pins out to number them from frontend.evpn",
                        )
                    )
                owner.setdefault(v, (n, a))
    # the out-of-band VLANs share the site's VLAN numbers (NetBox keeps a site's VLANs by number)
    onet = design.oob.network
    for vid, fld in ((onet.bmc_vlan, "oob.network.bmc_vlan"), (onet.mgmt_vlan, "oob.network.mgmt_vlan")):
        taken = next(((n, a) for n in nets for a in spaces["VLAN"][0] if getattr(n, a) == vid), None)
        if taken is not None:
            n, a = taken
            theirs = _id_field(design, n, a)
            # blame a tenant's pin, else the OOB VLAN when the design sets it, else the numbering base
            mine = fld.rsplit(".", 1)[1] in onet.model_fields_set and not theirs.startswith("tenants.")
            problems.append(
                Problem(
                    fld if mine else theirs,
                    f"VLAN {vid} of {n.name} ({a.replace('_', ' ')}) is also the out-of-band VLAN {fld}: a site "
                    "numbers its VLANs once (NetBox keeps them by number per site)",
                    f"give {n.name} another VLAN, or move {fld}",
                )
            )
    return problems


@dataclass(slots=True)
class Routers:
    """The frontend and OOB switches that run BGP, with their ASNs and loopbacks."""

    frontend: list[Device]
    oob: list[Device]
    asn: dict[str, int]
    loopbacks: dict[str, str] = field(default_factory=dict)
    vteps: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Tenancy:
    """Every network (infra and the tenants) with its subnets, and each host's address in it."""

    networks: list[dict[str, Any]]
    hosts: dict[str, dict[str, str]]
    storage_addresses: dict[str, dict[str, list[str]]]


def plan_network(plan: Plan, catalog: Catalog) -> None:
    """Compiler stage: allocate everything, check it, and store it in plan.netplan."""
    design = plan.design
    _check_pools(design)
    # every allocation below runs even when an earlier one failed, so one compile names all problems
    problems: list[Problem] = []
    routers = _assign_asns(plan, design)
    problems += _check_asns(plan, routers.asn)
    problems += _assign_loopbacks(design, routers)
    tenancy, tenancy_problems = _allocate_networks(plan, design)
    problems += tenancy_problems
    oob, oob_problems = _plan_oob(plan, catalog, design, plan.index())
    problems += oob_problems
    storage_bw, bw_problems = storage_bandwidth(plan, catalog)
    problems += bw_problems
    if problems:
        raise DesignError(problems)
    _store(plan, design, routers, tenancy, oob, storage_bw)


def _check_pools(design: Design) -> None:
    """The address pools must not overlap one another; everything else is allocated from them."""
    ad = design.addressing
    problems: list[Problem] = []
    pools = [
        ("addressing.loopbacks", ad.loopbacks),
        ("addressing.management", ad.management),
        ("addressing.bmc", ad.bmc),
        ("addressing.tenants", ad.tenants),
        ("addressing.storage", ad.storage),
    ]
    if design.backend.technology == "roce":  # the only backend with an IP plan
        pools.append(("addressing.backend", ad.backend))
    for i, (fa, na) in enumerate(pools):
        for fb, nb in pools[i + 1 :]:
            if na.overlaps(nb):
                problems.append(Problem(fb, f"{nb} overlaps {fa} ({na})", "give every pool its own range"))
    if problems:
        raise DesignError(problems)


def _assign_asns(plan: Plan, design: Design) -> Routers:
    fe = [d for d in plan.devices if d.kind == "switch" and d.network == "frontend"]
    oob_routers = [d for d in plan.devices if d.kind == "switch" and d.network == "oob"]
    asn: dict[str, int] = {}
    bgp = design.frontend.bgp
    # compute leaves count up from the base, service leaves (fe-svcNN) down from it: adding either
    # kind never renumbers the other
    leaf_no = {False: 0, True: 0}
    for d in fe:
        if d.role == "leaf":
            service = bool(d.attrs.get("service"))
            leaf_no[service] += 1
            asn[d.name] = bgp.leaf_asn_base + (-1 if service else 1) * leaf_no[service]
        elif d.role == "spine":
            asn[d.name] = bgp.spine_asn_base + int(d.attrs.get("pod", 1))
        else:
            asn[d.name] = bgp.core_asn
    onet = design.oob.network
    for d in oob_routers:
        # an access switch's number is its rack's slot on the floor (stages/oob.py), not its rank
        asn[d.name] = onet.asn_base + (int(d.attrs["index"]) if d.role == "leaf" else 0)
    return Routers(fe, oob_routers, asn)


# router ids: the loopback pool's part for router ids (its lower half when VTEPs take the upper one)
# in three regions (LOOPBACK_SHARES), each holding two kinds of router, one counting up from the region's start and
# one down from its end. A router's loopback is a function of its kind and its number among its kind,
# never of how many routers of other kinds there are: growing the site adds loopbacks, moves none.
LOOPBACK_REGIONS: tuple[tuple[str, str], ...] = (
    ("frontend leaf", "frontend service leaf"),
    ("frontend spine", "frontend core"),
    ("OOB access switch", "OOB aggregation switch"),
)
# the regions' shares of the router ids: an OOB access switch's number is its rack's slot on the floor
# (sparse: rows x positions), so its region is twice the others
LOOPBACK_SHARES = (1, 1, 2)


def _router_kind(d: Device) -> tuple[int, bool]:
    """(region, counts down from the region's end) of a router's loopback."""
    if d.network == "oob":
        return 2, d.role != "leaf"
    if d.role == "leaf":
        return 0, bool(d.attrs.get("service"))
    return 1, d.role == "core"


def _assign_loopbacks(design: Design, routers: Routers) -> list[Problem]:
    lo_pool = design.addressing.loopbacks
    fe = routers.frontend
    every = fe + routers.oob
    # some OSes source VXLAN from a loopback of their own (EOS: Loopback1), others from the router id's
    vtep_leaves = [d for d in fe if d.role == "leaf"] if network_os(design.frontend.vendor).vtep_loopback else []
    # VTEPs take the upper half of the pool, from its middle: a leaf's VTEP must not move when the
    # number of routers changes (more racks, more OOB access switches); router ids the lower half
    size = lo_pool.num_addresses
    half = size // 2
    # each half from its second address (x.x.0.1, x.x.8.1 in a /20), never the pool's broadcast
    room, vtep_room = (half - 1, size - half - 2) if vtep_leaves else (size - 2, 0)
    unit = room // sum(LOOPBACK_SHARES)
    size_of = [share * unit for share in LOOPBACK_SHARES]
    start = [1 + sum(size_of[:r]) for r in range(len(LOOPBACK_REGIONS))]
    numbers: dict[str, int] = {}  # a router's number among its kind, from 0
    count: dict[tuple[int, bool], int] = defaultdict(int)
    for d in every:
        kind = _router_kind(d)
        numbers[d.name] = count[kind]
        if d.network == "oob" and d.role == "leaf":
            numbers[d.name] = int(d.attrs["index"]) - 1  # its rack's slot on the floor, not its rank
        count[kind] = max(count[kind] + 1, numbers[d.name] + 1)
    used = [count[(r, False)] + count[(r, True)] for r in range(len(LOOPBACK_REGIONS))]
    full = [r for r in range(len(LOOPBACK_REGIONS)) if used[r] > size_of[r]]
    if full or len(vtep_leaves) > vtep_room:
        most = max(-(-used[r] // LOOPBACK_SHARES[r]) for r in range(len(LOOPBACK_REGIONS)))
        per_part = sum(LOOPBACK_SHARES) * most + 1
        need = 2 * (max(per_part, len(vtep_leaves) + 1) + 1) if vtep_leaves else per_part + 2
        what = "; ".join(f"{' and '.join(LOOPBACK_REGIONS[r])}: {used[r]:,}" for r in full)
        vteps = f" and {len(vtep_leaves):,} VTEPs (a half of the pool each)" if vtep_leaves else ""
        return [
            Problem(
                "addressing.loopbacks",
                f"{lo_pool} cannot hold the loopbacks: its router ids, {' / '.join(f'{n:,}' for n in size_of)} "
                f"for the {len(LOOPBACK_REGIONS)} kinds of router{vteps}, are too few "
                f"({what or f'{len(vtep_leaves):,} VTEPs'})",
                f"use a larger pool, e.g. /{_prefix_for(need)}",
            )
        ]
    for d in every:
        region, down = _router_kind(d)
        n = numbers[d.name]
        i = start[region] + (size_of[region] - 1 - n if down else n)
        routers.loopbacks[d.name] = f"{host(lo_pool, i)}/32"
    routers.vteps = {d.name: f"{host(lo_pool, half + 1 + i)}/32" for i, d in enumerate(vtep_leaves)}
    return []


def _allocate_networks(plan: Plan, design: Design) -> tuple[Tenancy, list[Problem]]:
    """A hosts and a storage subnet per network (VRF), and every member's address in them."""
    ad = design.addressing
    nets, problems = network_ids(design)
    members = tenant_members(design)
    owner = {h: t for t, hs in members.items() for h in hs}
    hosts_of: dict[str, list[str]] = {n.name: [] for n in nets}
    mgmt_nodes = {d.name: d.kind == "management" for d in plan.devices}
    for d in plan.devices:
        if d.kind == "server":
            hosts_of[owner.get(d.name, INFRA)].append(d.name)
        elif d.kind == "management":
            hosts_of[INFRA].append(d.name)
    storage = [d.name for d in plan.devices if d.kind == "storage"]
    sports = design.storage.ports_per_server
    net_out: list[dict[str, Any]] = []
    host_addr: dict[str, dict[str, str]] = {}
    storage_addr: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for n in nets:
        hs = hosts_of[n.name]
        hnet, p1 = _block(
            ("addressing.tenants", ad.tenants), ("addressing.hosts_prefix", ad.hosts_prefix), n, "hosts", len(hs)
        )
        snet, p2 = _block(
            ("addressing.storage", ad.storage),
            ("addressing.storage_prefix", ad.storage_prefix),
            n,
            "storage",
            len(storage) * sports,
        )
        problems += p1 + p2
        if hnet is None or snet is None:
            continue
        # servers count up from the reserved addresses, management nodes down from the subnet's last
        # address: adding servers never renumbers a management node, nor the other way round
        up = down = 0
        for h in hs:
            if mgmt_nodes.get(h):
                down += 1
                i = hnet.num_addresses - 1 - down
            else:
                up += 1
                i = RESERVED_HOSTS + up
            host_addr[h] = {"vrf": n.vrf, "address": with_len(host(hnet, i), hnet)}
        for j, s in enumerate(storage):
            storage_addr[s][n.vrf] = [
                with_len(host(snet, RESERVED_HOSTS + 1 + j * sports + p), snet) for p in range(sports)
            ]
        net_out.append(
            {
                "index": n.index,
                "name": n.name,
                "tenant": n.tenant,
                "vrf": n.vrf,
                "l3vni": n.l3vni,
                "l3vni_vlan": n.l3vni_vlan,
                "hosts": {
                    "vlan": n.vlan,
                    "vni": n.vni,
                    "subnet": str(hnet),
                    "gateway": str(host(hnet, 1)),
                    "members": len(hs),
                },
                "storage": {
                    "vlan": n.storage_vlan,
                    "vni": n.storage_vni,
                    "subnet": str(snet),
                    "gateway": str(host(snet, 1)),
                },
            }
        )
    return Tenancy(net_out, host_addr, dict(storage_addr)), problems


def _block(
    pool: tuple[str, IPv4Network], size: tuple[str, int], n: NetworkIds, what: str, members: int
) -> tuple[IPv4Network | None, list[Problem]]:
    """Network `n`'s subnet: the n.index-th block of `size` in `pool`, whatever the other networks hold
    (carving subnets sized to their members one after the other renumbered every later network, and
    widened a subnet under its hosts, when a network grew)."""
    (pool_field, net), (size_field, prefix) = pool, size
    need = prefix_for_hosts(RESERVED_HOSTS + members)
    if need < prefix:
        return None, [
            Problem(
                size_field,
                f"a /{prefix} holds {(1 << (32 - prefix)) - 2 - RESERVED_HOSTS:,} {what} addresses but "
                f"{n.name} needs {members:,}",
                f"use /{need} or shorter",
            )
        ]
    blocks = 1 << max(0, prefix - net.prefixlen) if prefix >= net.prefixlen else 0
    if n.index >= blocks:
        return None, [
            Problem(
                pool_field,
                f"{net} cannot hold the /{prefix} {what} subnet of network {n.index + 1} ({n.name}): it "
                f"holds {blocks:,} (network k takes the k-th /{prefix})",
                f"use /{prefix - n.index.bit_length()} or shorter (or a longer {size_field})",
            )
        ]
    return IPv4Network((int(net.network_address) + n.index * (1 << (32 - prefix)), prefix)), []


def _store(
    plan: Plan, design: Design, routers: Routers, tenancy: Tenancy, oob: dict[str, Any], storage_bw: dict[str, Any]
) -> None:
    ad = design.addressing
    asn, fe = routers.asn, routers.frontend
    dhcp = [str(a) for a in design.oob.network.dhcp_servers]
    if not dhcp:
        # without configured DHCP servers the first two management nodes serve the OOB network
        dhcp = [tenancy.hosts[d.name]["address"].split("/")[0] for d in plan.devices if d.kind == "management"][:2]
    vendor = design.frontend.vendor
    mtu = design.frontend.mtu or network_os(vendor).mtu
    assert mtu is not None  # frontend.vendor is an OS that serves the frontend, and each such row has its MTU
    plan.netplan = NetPlan(
        scheme={
            "asn": "RFC 7938: one ASN per leaf (leaf_asn_base + NN, service leaf fe-svcNN: base - NN), "
            "per pod spine layer (spine_asn_base + pod), "
            "one for the cores; OOB aggregation pair shares asn_base, access switch NN has asn_base + NN",
            "reserved_hosts": RESERVED_HOSTS,
        },
        vendor=vendor,
        mtu=mtu,
        domain=ad.domain or f"{design.site.name}.internal",
        anycast_gateway_mac=design.frontend.evpn.anycast_gateway_mac,
        asn=asn,
        loopbacks=routers.loopbacks,
        vteps=routers.vteps,
        networks=tenancy.networks,
        hosts=tenancy.hosts,
        storage_addresses=tenancy.storage_addresses,
        oob=oob,
        dhcp_servers=dhcp,
        management=management_plane(design, dhcp),
    )
    info = plan.networks.frontend
    info.vendor = vendor
    info.storage_bandwidth = storage_bw
    info.asn = {
        "leaves": _span(asn[d.name] for d in fe if d.role == "leaf"),
        "spines": _span(asn[d.name] for d in fe if d.role == "spine"),
        "cores": _span(asn[d.name] for d in fe if d.role == "core"),
    }
    info.vrfs = len(tenancy.networks)


def management_plane(design: Design, dhcp: list[str]) -> MgmtPlane:
    """management.* resolved: NTP, syslog and DNS default to the OOB DHCP servers (the management nodes
    the switches already reach for DHCP), AAA ports to their protocol's."""
    m = design.management
    services = {k: [str(a) for a in getattr(m, f"{k}_servers")] for k in ("ntp", "syslog", "dns")}
    defaulted = [k for k, v in services.items() if not v]
    return MgmtPlane(
        vrf=m.mgmt_vrf,
        ntp=services["ntp"] or list(dhcp),
        syslog=services["syslog"] or list(dhcp),
        dns=services["dns"] or list(dhcp),
        defaulted=defaulted,
        tacacs=[AaaTarget(str(s.address), s.port or 49, s.timeout) for s in m.tacacs_servers],
        radius=[AaaTarget(str(s.address), s.port or 1812, s.timeout) for s in m.radius_servers],
        snmp_users=[SnmpV3User(u.name, u.access, u.auth_secret, u.priv_secret) for u in m.snmp_users],
        users=[LocalUser(u.name, u.role, list(u.ssh_keys), u.password_secret) for u in m.users],
        bgp_auth=m.bgp_auth,
        bgp_secret="bgp_password",
    )


def _span(values: Iterable[int]) -> str:
    v = sorted(set(values))
    if not v:
        return ""
    return str(v[0]) if len(v) == 1 else f"{v[0]}-{v[-1]}"


def _check_asns(plan: Plan, asn: dict[str, int]) -> list[Problem]:
    """ASNs stay in range and the layers never share an ASN (a leaf sharing its spines' ASN would
    drop every route as a loop)."""
    problems: list[Problem] = []
    field_of = {
        ("frontend", "leaf"): "frontend.bgp.leaf_asn_base",
        ("frontend", "spine"): "frontend.bgp.spine_asn_base",
        ("frontend", "core"): "frontend.bgp.core_asn",
        ("oob", "leaf"): "oob.network.asn_base",
        ("oob", "spine"): "oob.network.asn_base",
    }
    layer_of: dict[int, tuple[str, str]] = {}
    devs = plan.index()
    for name, a in asn.items():
        d = devs[name]
        key = (d.network or "", d.role)
        if a > 4294967294:
            problems.append(
                Problem(field_of[key], f"{name} would get ASN {a}, past the 4-byte range", "lower the base")
            )
            break
        if a in layer_of and layer_of[a] != key:
            other = layer_of[a]
            problems.append(
                Problem(
                    field_of[key],
                    f"ASN {a} is used by {other[0]} {other[1]}s and by {name}",
                    "give every layer its own ASN range",
                )
            )
            break
        layer_of.setdefault(a, key)
    return problems


def access_ports(catalog: Catalog, model: str) -> list[str]:
    """The 1GbE access ports of an OOB switch model, in port order (addresses follow this order)."""
    sw = catalog.switches[model]
    table = port_table(sw)
    speed = min(g.speed_gbps for g in sw.port_groups if g.role in ("down", "any"))
    return [p.name for p in table if p.role in ("down", "any") and speed in p.speeds]


def circuit_id(os: str, switch: str, port: str) -> str:
    """Option 82 circuit-id the access switch's relay stamps on a request from `port`: its OS's
    format (its network OS row's ``circuit_id``); the Kea subnet is chosen by the relay's gateway address."""
    return network_os(os).circuit_id_of(switch, port)


def _plan_oob(
    plan: Plan, catalog: Catalog, design: Design, devs: dict[str, Device]
) -> tuple[dict[str, Any], list[Problem]]:
    ad = design.addressing
    onet = design.oob.network
    if onet.bmc_vlan == onet.mgmt_vlan:
        return {}, [
            Problem(
                "oob.network.mgmt_vlan",
                f"VLAN {onet.mgmt_vlan} is also the BMC VLAN",
                "BMCs and management ports get separate VLANs",
            )
        ]
    access = [d for d in plan.devices if d.kind == "switch" and d.network == "oob" and d.role == "leaf"]
    subnets: dict[str, dict[str, Any]] = {}
    position: dict[str, dict[str, int]] = {}
    problems: list[Problem] = []
    # every access switch's subnets are the n-th block of the pools, n its number (its rack's slot on
    # the floor), so a switch added anywhere renumbers no other switch's BMCs and ports
    plen = max((prefix_for_hosts(1 + len(access_ports(catalog, d.model))) for d in access), default=32)
    for d in access:
        ports = access_ports(catalog, d.model)
        position[d.name] = {p: i for i, p in enumerate(ports)}
        k = int(d.attrs["index"]) - 1
        nets = []
        for field_, pool in (("addressing.bmc", ad.bmc), ("addressing.management", ad.management)):
            blocks = 1 << max(0, plen - pool.prefixlen)
            if k >= blocks or plen < pool.prefixlen:
                if not any(p.field == field_ for p in problems):
                    need = plen - (max(int(a.attrs["index"]) for a in access) - 1).bit_length()
                    problems.append(
                        Problem(
                            field_,
                            f"{pool} cannot hold a /{plen} for OOB access switch number "
                            f"{max(int(a.attrs['index']) for a in access):,} (each switch's subnet is the "
                            "block of its number, its rack's slot on the floor)",
                            f"give {field_} a shorter prefix, e.g. /{need}",
                        )
                    )
                continue
            nets.append(IPv4Network((int(pool.network_address) + k * (1 << (32 - plen)), plen)))
        if len(nets) < 2:
            continue
        b, m = nets
        subnets[d.name] = {
            "os": catalog.switches[d.model].os,
            "bmc": {"vlan": onet.bmc_vlan, "subnet": str(b), "gateway": str(host(b, 1))},
            "mgmt": {"vlan": onet.mgmt_vlan, "subnet": str(m), "gateway": str(host(m, 1))},
        }
    if problems:
        return {}, problems
    ports_out: list[dict[str, Any]] = []
    for lk in plan.links:
        if lk.network != "oob" or lk.tier != "mgmt-access":
            continue
        # the access switch is whichever end is an OOB leaf (issue 3 may wire PDUs either way round)
        if devs[lk.b_device].network == "oob" and devs[lk.b_device].role == "leaf":
            dev, port, sw, sw_port = lk.a_device, lk.a_port, lk.b_device, lk.b_port
        else:
            dev, port, sw, sw_port = lk.b_device, lk.b_port, lk.a_device, lk.a_port
        kind = "bmc" if devs[dev].kind in BMC_KINDS else "mgmt"
        sn = subnets[sw][kind]
        net = ip_network(sn["subnet"])
        assert isinstance(net, IPv4Network)
        idx = position[sw].get(sw_port)
        if idx is None:
            problems.append(
                Problem(
                    "oob.switch",
                    f"{dev} {port} is on {sw} {sw_port}, not a 1GbE access port",
                    "management ports belong on access ports",
                )
            )
            continue
        ports_out.append(
            {
                "device": dev,
                "port": port,
                "switch": sw,
                "switch_port": sw_port,
                "kind": kind,
                "vlan": sn["vlan"],
                "address": with_len(host(net, 2 + idx), net),
                "gateway": sn["gateway"],
                "circuit_id": circuit_id(subnets[sw]["os"], sw, sw_port),
            }
        )
    ports_out.sort(key=lambda r: (r["switch"], position[r["switch"]][r["switch_port"]]))
    return {"subnets": subnets, "ports": ports_out}, problems


# --------------------------------------------------------------------------------- storage check


def storage_bandwidth(plan: Plan, catalog: Catalog) -> tuple[dict[str, Any], list[Problem]]:
    """Storage servers' aggregate read throughput (catalog ``throughput_gbps``, GB/s) against the
    uplinks of the service leaf pairs they sit on (the frontend's, or a dedicated storage fabric's).
    Also reports what their NICs can carry."""
    devs = plan.index()
    net = "storage" if "storage" in plan.networks else "frontend"
    on_pair: dict[int, set[str]] = defaultdict(set)
    nic_gbit: dict[str, int] = defaultdict(int)
    for lk in plan.links:
        if lk.network == net and lk.tier == "server-leaf" and devs[lk.a_device].kind == "storage":
            on_pair[int(devs[lk.b_device].attrs["pair"])].add(lk.a_device)
            nic_gbit[lk.a_device] += lk.speed_gbps
    up_gbit: dict[int, int] = defaultdict(int)
    for lk in plan.links:
        if lk.network == net and lk.tier == "leaf-spine":
            pair = devs[lk.a_device].attrs.get("pair")
            if pair in on_pair and devs[lk.a_device].attrs.get("service"):
                up_gbit[pair] += lk.speed_gbps
    problems: list[Problem] = []
    total_tp = total_up = total_nic = 0.0
    pairs = []
    for pair, stors in sorted(on_pair.items()):
        tp = sum(catalog.storage_servers[devs[s].model].throughput_gbps for s in stors)
        nic = sum(min(catalog.storage_servers[devs[s].model].throughput_gbps, nic_gbit[s] / 8) for s in stors)
        up = up_gbit[pair] / 8
        leaves = sorted(
            d.name for d in plan.devices if d.network == net and d.role == "leaf" and d.attrs.get("pair") == pair
        )
        pairs.append(
            {
                "pair": pair,
                "leaves": leaves,
                "storage_servers": len(stors),
                "throughput_gbytes": tp,
                "nic_limited_gbytes": nic,
                "uplink_gbytes": up,
            }
        )
        total_tp += tp
        total_up += up
        total_nic += nic
        if tp > up:
            problems.append(
                Problem(
                    "frontend.oversubscription" if net == "frontend" else "storage.fabric.switch",
                    f"the {len(stors)} storage servers on {'/'.join(leaves)} deliver {tp:g} GB/s "
                    f"({len(stors)} x storage_servers.{devs[min(stors)].model}.throughput_gbps) but those leaves' "
                    f"uplinks carry {up:g} GB/s",
                    "lower frontend.oversubscription (more uplinks) or spread storage over more service leaves",
                )
            )
    return {
        "throughput_gbytes": total_tp,
        "nic_limited_gbytes": total_nic,
        "uplink_gbytes": total_up,
        "pairs": pairs,
    }, problems


def _gateway_row(plan: Plan) -> list[tuple[str, str, str]]:
    """How a SONiC frontend gives every leaf the hosts' one gateway: SONiC's static anycast gateway (SAG,
    master only), else the same address and router MAC on each leaf's VLAN interface (VLAN_INTERFACE
    mac_addr, from 202505), which keeps a host's gateway when its bond fails over just as well. A fact
    of the release, said in the summary, not a warning: there is nothing to fix."""
    fe = plan.design.frontend
    if fe.vendor != "sonic":
        return []
    how = (
        "SAG table" if fe.sonic_release in SONIC_SAG else "VLAN_INTERFACE mac_addr on every leaf (no SAG before master)"
    )
    return [("anycast gateway", "frontend", f"{fe.evpn.anycast_gateway_mac}: {how}")]


def summary_rows(plan: Plan) -> list[tuple[str, str, str]]:
    """Rows for the compile summary: vendor, ASNs, VRFs, storage bandwidth, OOB reservations."""
    np_ = required(plan.netplan, "netplan")
    fe = plan.networks.frontend
    bw = required(fe.storage_bandwidth, "networks.frontend.storage_bandwidth")
    stor_net = "storage" if "storage" in plan.networks else "frontend"  # where the storage servers sit
    asn = required(fe.asn, "networks.frontend.asn")
    asns = ", ".join(f"{k} {v}" for k, v in asn.items() if v)
    tenants = sum(1 for n in np_.networks if n["tenant"])
    rows = [
        (
            "frontend vendor",
            "frontend",
            network_os(np_.vendor).summary
            + (f", release {plan.design.frontend.sonic_release}" if np_.vendor == "sonic" else ""),
        ),
        *_gateway_row(plan),
        ("ASNs", "frontend", asns),
        ("VRFs (infra + tenants)", "frontend", f"1 + {tenants}"),
        (
            "storage throughput",
            stor_net,
            f"{bw['throughput_gbytes']:,.0f} GB/s (NIC-limited {bw['nic_limited_gbytes']:,.0f} GB/s)",
        ),
        (
            "storage leaf uplinks",
            stor_net,
            f"{bw['uplink_gbytes']:,.0f} GB/s ({bw['throughput_gbytes'] / bw['uplink_gbytes']:.0%} used)"
            if bw["uplink_gbytes"]
            else "none",
        ),
        ("DHCP reservations", "oob", f"{len(np_.oob['ports']):,} (by relay circuit-id)"),
    ]
    if any(
        d.network == "oob" and d.kind == "switch" and plan.catalog.switches[d.model].os == "sonic" for d in plan.devices
    ):
        rows.append(("SONiC release", "oob", plan.design.oob.sonic_release))
    return rows
