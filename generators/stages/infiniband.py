"""InfiniBand subnet-manager configuration from the plan: partitions (tenant isolation), OpenSM options,
ftree root GUIDs, a node-name map, the expected fabric in ibnetdiscover format and UFM REST bodies.

Tenant isolation is the point of this module. Each tenant gets one partition key over every backend
port (all rails) of the servers it rents, as full members; every other port is only a *limited*
member of the default partition 0x7fff and the subnet-manager ports are full members of it, so
tenants reach the SM (SA queries, multicast joins) but never each other: two limited members cannot
talk, and with ``part_enforce both`` the leaf ports drop what the HCA would not. The checks in
`isolation_problems` run on every compile and refuse a plan in which a port is in two tenant
partitions, a key is used twice, or a tenant partition holds a port of someone else's server.

GUIDs are burned into hardware and unknown until the site is built. The plan gets placeholders
derived from the names (a hash under the locally administered EUI-64 prefix 0x02, low 4 bits left
free for port numbers) so the files are complete, deterministic and loadable in ibsim. On site,
`railyard verify` compares by node description, not GUID, and `verify --write-config` re-renders the
same files with the node and port GUIDs of the discovered fabric (`render_infiniband(plan, guids, ...)`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import hostlist

from generators.model.catalog import Catalog
from generators.model.design import Design, management_model, tenant_members
from generators.model.errors import DesignError, Problem
from generators.model.plan import Plan, required
from generators.model.planes import device_plane, link_plane, plane_order
from generators.model.ports import port_table
from generators.model.sections import InfinibandFacts, PartitionFact, PlaneSubnetFacts, PlanWarning, SubnetManager
from generators.model.vocabulary import RANK, Role, rank
from generators.stages.fabric import eligible

GUID_PREFIX = 0x02 << 56  # EUI-64 with the U/L bit set: locally administered, never a vendor's OUI
GUID_HASH_MASK = 0x00FF_FFFF_FFFF_FFF0  # low nibble left for port numbers (CA port GUID = node + port)
DEFAULT_PKEY = 0x7FFF
TENANT_PKEY_BASE = 0x1000  # default key of the tenant at (1-based) position i: 0x1000 + i
OPENSM_DIR = "/etc/opensm"  # where opensm.conf expects its companion files on the SM hosts
# NVIDIA states the switch-embedded SM of Quantum/Quantum-2 managed switches for fabrics up to about
# 2,000 nodes (QM9700 product brief); above that the SM belongs on a server (OpenSM or UFM).
EMBEDDED_SM_MAX_NODES = 2000


# --------------------------------------------------------------------------------------------- GUIDs


def name_guids(names: Iterable[str]) -> dict[str, int]:
    """Deterministic node GUIDs from node names. Collisions (about 1 in 10^6 at 65k names) are resolved
    by rehashing with a counter, in sorted-name order, so the result never depends on input order."""
    out: dict[str, int] = {}
    used: set[int] = set()
    for name in sorted(set(names)):
        salt = 0
        while True:
            key = name if salt == 0 else f"{name}#{salt}"
            h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")
            guid = GUID_PREFIX | (h & GUID_HASH_MASK)
            if guid not in used:
                break
            salt += 1
        used.add(guid)
        out[name] = guid
    return out


# --------------------------------------------------------------------------------------------- model


@dataclass(slots=True)
class SmHost:
    """Where a subnet manager runs: a management node's HCA port, or a managed switch's port 0."""

    device: str
    node: str  # node description: "mgmt01 mlx5_0" or "spine01"
    port_guid: int
    on_switch: bool


@dataclass(slots=True)
class Subnet:
    """The backend InfiniBand subnet and everything its SM needs. (The invariants refuse a backend that
    is not connected, so there is exactly one.) Plain tables: the compile stage needs only the GUIDs,
    and topology.net is written from them without an object per port (65k HCAs at 64k GPUs)."""

    order: list[str]  # node descriptions, SM host first: ibsim and OpenSM attach to the first node
    kind: dict[str, tuple[str, int]]  # node description -> ("Switch" | "Ca", number of ports)
    guid: dict[str, int]  # node description -> node GUID
    ends: dict[tuple[str, str], tuple[str, int]]  # plan (device, port) -> (node description, IB port)
    roots: list[str]  # top-tier switch names (ftree roots)
    sm_hosts: list[SmHost]
    as_built: bool = False  # GUIDs from a discovered fabric rather than derived from names
    hca_port_guid: dict[str, int] = field(default_factory=dict)  # as-built HCA port GUIDs by description
    network: str = "backend"  # the plan network this subnet is: the backend, or a dedicated storage fabric
    plane: str = ""  # a multi-plane backend: the plane this subnet is (each plane a subnet of its own)

    def port_guid(self, desc: str, port: int = 1) -> int:
        """A switch's ports share its node GUID; an HCA port's GUID is as discovered, else node GUID +
        port (ibsim's rule; real mlx5 HCAs may differ, which is why discovery's value wins)."""
        if self.kind[desc][0] == "Switch":
            return self.guid[desc]
        return self.hca_port_guid.get(desc) or self.guid[desc] + port


@dataclass(frozen=True, slots=True)
class Member:
    label: str  # "gpu001 mlx5_0"
    device: str
    port_guid: int
    full: bool


@dataclass(slots=True)
class Partition:
    name: str  # tenant name, or "Default"
    pkey: int
    members: list[Member]
    tenant_index: int | None = None  # position in design.tenants (for error fields)
    servers: list[str] = field(default_factory=list)


def ca_desc(device: str, port: str) -> str:
    """The node description an HCA reports: rdma-core sets "<hostname> <ibdev>"."""
    return f"{device} {port}"


def is_infiniband(plan: Plan, network: str = "backend") -> bool:
    return plan.networks.technology(network) == "infiniband"


def infiniband_networks(plan: Plan) -> list[str]:
    """The plan's InfiniBand subnets, backend first: each its own SM, partitions and OpenSM files."""
    return [n for n in ("backend", "storage") if is_infiniband(plan, n)]


def backend_planes(plan: Plan) -> list[str]:
    """The backend's network planes, each an InfiniBand subnet of its own: the planes of a multi-plane
    fabric (its switches carry `plane`), or the planes inside its switches (Switch.planes: plane k is
    ASIC k of every box, lane k of every link); [] for a single fabric. The planes share no switch, so
    no subnet manager can reach two of them: every plane has its own SM, LIDs and subnet prefix."""
    if not is_infiniband(plan):
        return []
    found = sorted({device_plane(d) for d in plan.devices if d.network == "backend"} - {""}, key=plane_order)
    if found:
        return found
    inside = plan.catalog.switches[plan.design.backend.switch].planes
    return [f"plane{k}" for k in range(1, inside + 1)] if inside else []


def inside_planes(plan: Plan) -> bool:
    """Whether the backend's planes are inside its switches (Switch.planes), not fabrics of their own."""
    return bool(plan.catalog.switches[plan.design.backend.switch].planes) and not any(
        device_plane(d) for d in plan.devices if d.network == "backend"
    )


def subnet_prefix(plane: str) -> str:
    """A plane's GID subnet prefix: the link-local default with the plane number in its low byte, so no two
    planes share one (hosts tell fabrics apart by it; one prefix on two planes makes MPI take them for one)."""
    return f"0xfe800000000000{plane_order(plane):02x}" if plane else "0xfe80000000000000"


def switch_port_numbers(catalog: Catalog, model: str) -> dict[str, int]:
    """Front-panel port name -> IB port number. Quantum-2 numbers ports 1..64 in cage order (cage c,
    sub-port s is 2(c-1)+s), which is the order of the catalog's port table."""
    return {p.name: i + 1 for i, p in enumerate(port_table(catalog.switches[model]))}


@dataclass(slots=True)
class _Nodes:
    """A network's nodes as its subnet manager sees them: what the links and the GUIDs give, before the
    stage's choices (the ftree roots and the subnet-manager hosts)."""

    kinds: dict[str, tuple[str, int]]
    guid_of: dict[str, int]
    ends: dict[tuple[str, str], tuple[str, int]]
    switches: list[str]  # in plan order
    hca_ports: dict[str, int]


def _nodes(
    plan: Plan,
    guids: Mapping[str, int] | None,
    port_guids: Mapping[str, int] | None,
    network: str,
    plane: str = "",
) -> _Nodes:
    """The nodes of `network`, or of one plane of a multi-plane backend: a fabric plane's links (those of
    its switches), or, for planes inside the switches, every link's lane in `plane`, whose ends are ASIC
    `plane` of each box and the host port's leg in it (node descriptions "<name> <plane>")."""
    catalog = plan.catalog
    idx = plan.index()
    numbers: dict[str, dict[str, int]] = {}
    kinds: dict[str, tuple[str, int]] = {}
    ends: dict[tuple[str, str], tuple[str, int]] = {}
    inside = bool(plane) and inside_planes(plan)
    suffix = f" {plane}" if inside else ""
    for lk in plan.links:
        if lk.network != network or (plane and not inside and link_plane(idx, lk) != plane):
            continue
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            if (dev, port) in ends:
                continue
            d = idx[dev]
            if d.kind == "switch":
                nums = numbers.get(d.model)
                if nums is None:
                    nums = numbers[d.model] = switch_port_numbers(catalog, d.model)
                ends[(dev, port)] = (dev + suffix, nums[port])
                kinds[dev + suffix] = ("Switch", d.ports)
            else:
                desc = ca_desc(dev, port) + suffix
                ends[(dev, port)] = (desc, 1)
                kinds[desc] = ("Ca", 1)
    if guids is None:
        guid_of = name_guids(kinds)
    else:
        missing = sorted(set(kinds) - set(guids))
        if missing:
            raise DesignError.one(
                "--guids",
                f"{len(missing)} fabric nodes have no GUID, e.g. {missing[0]!r}",
                "map every node description of the plan to its as-built GUID",
            )
        guid_of = {k: guids[k] for k in kinds}
    order = {d.name + suffix: i for i, d in enumerate(plan.devices)}
    switches = sorted((d for d, (k, _) in kinds.items() if k == "Switch"), key=order.__getitem__)
    hca_ports = {d: g for d, g in (port_guids or {}).items() if d in kinds}
    return _Nodes(kinds, guid_of, ends, switches, hca_ports)


def _subnet(
    nodes: _Nodes, roots: list[str], hosts: list[tuple[str, str, bool]], as_built: bool, network: str, plane: str = ""
) -> Subnet:
    """The subnet of `nodes` with its roots and its subnet-manager hosts ((device, node, on switch)),
    the SM host first in the node order: ibsim and OpenSM attach to the first node."""
    sm = [
        SmHost(
            dev,
            node,
            nodes.guid_of[node] if on_switch else nodes.hca_ports.get(node) or nodes.guid_of[node] + 1,
            on_switch,
        )
        for dev, node, on_switch in hosts
    ]
    first = sm[0].node if sm else None
    ordered = [
        *([first] if first else []),
        *(s for s in nodes.switches if s != first),
        *(c for c, (k, _) in nodes.kinds.items() if k != "Switch" and c != first),
    ]
    return Subnet(ordered, nodes.kinds, nodes.guid_of, nodes.ends, roots, sm, as_built, nodes.hca_ports, network, plane)


def subnet(plan: Plan, network: str = "backend", plane: str = "") -> Subnet:
    """The stage's choice for the backend (or the dedicated storage fabric, `network`; or one `plane` of a
    multi-plane backend) as an InfiniBand subnet: its ftree roots are its top tier, its subnet managers run
    on the backend-attached management nodes, else embedded in the first two roots. GUIDs are the
    name-derived placeholders."""
    nodes = _nodes(plan, None, None, network, plane)
    idx = plan.index()
    suffix = f" {plane}" if plane and inside_planes(plan) else ""

    def role(desc: str) -> str:
        return idx[desc.removesuffix(suffix) if suffix else desc].role

    top = max((rank(role(s)) for s in nodes.switches), default=0)
    roots = [s for s in nodes.switches if rank(role(s)) == top] if top > RANK[Role.LEAF] else []
    order = {d.name: i for i, d in enumerate(plan.devices)}
    sm_names = {d.name for d in plan.devices if d.kind == "management" and d.attrs.get("subnet_manager")}
    hosts = sorted(
        ((dev, desc, False) for (dev, _port), (desc, _) in nodes.ends.items() if dev in sm_names),
        key=lambda h: (order[h[0]], h[1]),
    )
    if not hosts:
        # management.backend_attached: 0: the SM runs embedded in managed switches; the top tier sees
        # the whole subnet at equal distance, so the first two roots host master and standby
        hosts = [(s.removesuffix(suffix) if suffix else s, s, True) for s in (roots or nodes.switches)[:2]]
    return _subnet(nodes, roots, hosts, False, network, plane)


def planned_subnet(
    plan: Plan,
    guids: Mapping[str, int] | None = None,
    port_guids: Mapping[str, int] | None = None,
    network: str = "backend",
    plane: str = "",
) -> Subnet:
    """The subnet as the stage chose it (its roots and subnet managers, from the plan's section). `guids`
    (node description -> node GUID) and `port_guids` (HCA description -> port GUID), from a discovered
    fabric, replace the name-derived placeholders; `guids` must cover every node (of the `plane`)."""
    facts = subnet_facts(plan, network, plane)
    hosts = [(m.device, m.node, m.on_switch) for m in facts.subnet_managers]
    nodes = _nodes(plan, guids, port_guids, network, plane)
    return _subnet(nodes, facts.root_switches, hosts, guids is not None, network, plane)


def subnet_facts(plan: Plan, network: str = "backend", plane: str = "") -> InfinibandFacts | PlaneSubnetFacts:
    """The stage's section for `network`: plan.infiniband (the backend) or plan.infiniband_storage; for
    a `plane` of a multi-plane backend, that plane's subnet."""
    facts = required(plan.infiniband if network == "backend" else plan.infiniband_storage, f"infiniband ({network})")
    if not plane:
        return facts
    found = next((p for p in facts.planes or [] if p.plane == plane), None)
    return required(found, f"infiniband ({network} {plane})")


# ---------------------------------------------------------------------------------------- partitions


def tenant_pkeys(design: Design) -> list[tuple[int, str, int]]:
    """(tenant index, name, pkey) in design order: the pinned key, else 0x1000 + position, skipping keys
    another tenant pinned. Duplicate pinned keys are left for `isolation_problems` to report."""
    tenants = design.tenants
    pinned = {t.pkey for t in tenants if t.pkey is not None}
    out = []
    nxt = TENANT_PKEY_BASE + 1
    for i, t in enumerate(tenants):
        if t.pkey is not None:
            out.append((i, t.name, int(t.pkey)))
            continue
        while nxt in pinned:
            nxt += 1
        out.append((i, t.name, nxt))
        pinned.add(nxt)
        nxt += 1
    return out


def _ports_of(sn: Subnet) -> dict[str, list[tuple[str, int]]]:
    """Each HCA-side device's ports on the subnet: (node description, port GUID), in link order."""
    ports_of: dict[str, list[tuple[str, int]]] = {}
    for (dev, _port), (desc, p) in sn.ends.items():
        if sn.kind[desc][0] != "Switch":
            ports_of.setdefault(dev, []).append((desc, sn.port_guid(desc, p)))
    return ports_of


def _default(sn: Subnet, servers: list[str]) -> Partition:
    """The default partition: the subnet-manager ports full members, and every port of `servers` (the
    storage servers, on a storage fabric: every tenant reaches them) too, in port order."""
    members = [Member(h.node, h.device, h.port_guid, True) for h in sn.sm_hosts]
    full = set(servers)
    members += [
        Member(desc, dev, sn.port_guid(desc, p), True)
        for (dev, _port), (desc, p) in sorted(sn.ends.items())
        if dev in full
    ]
    return Partition("Default", DEFAULT_PKEY, members, servers=servers)


def _tenant(ports_of: dict[str, list[tuple[str, int]]], name: str, pkey: int, i: int, servers: list[str]) -> Partition:
    """A tenant's partition: every port of its servers on the subnet, full members."""
    return Partition(name, pkey, [Member(label, s, g, True) for s in servers for label, g in ports_of[s]], i, servers)


def partitions(plan: Plan, sn: Subnet) -> list[Partition]:
    """The stage's choice: Default (SM full, the storage servers of a storage fabric full, everyone else
    limited) and one full-membership partition per tenant renting servers on the subnet."""
    members = tenant_members(plan.design)
    ports_of = _ports_of(sn)
    storage = [d.name for d in plan.devices if d.kind == "storage"] if sn.network == "storage" else []
    out = [_default(sn, [s for s in storage if s in ports_of])]
    for i, name, pkey in tenant_pkeys(plan.design):
        servers = [s for s in members.get(name, []) if s in ports_of]
        if servers:
            out.append(_tenant(ports_of, name, pkey, i, servers))
    return out


def planned_partitions(plan: Plan, sn: Subnet) -> list[Partition]:
    """The partitions the stage chose (keys and servers, from the plan's section), with the port GUIDs of
    `sn` (name-derived, or as built)."""
    ports_of = _ports_of(sn)
    index = {t.name: i for i, t in enumerate(plan.design.tenants)}
    out = []
    for p in subnet_facts(plan, sn.network, sn.plane).partitions:
        servers = hostlist.expand_hostlist(p.servers) if p.servers else []
        if p.name == "Default":
            out.append(_default(sn, servers))
        else:
            out.append(_tenant(ports_of, p.name, int(p.pkey, 16), index[p.name], servers))
    return out


def isolation_problems(parts: list[Partition], owner: Mapping[str, str]) -> list[Problem]:
    """What would let one tenant reach another: a key used twice or the default key taken, a port in two
    tenant partitions, a tenant partition holding a port of a server the tenant does not rent (`owner`:
    server -> tenant), or a tenant port made a full member of the default partition."""
    problems: list[Problem] = []

    def field_of(p: Partition, leaf: str = "") -> str:
        return f"tenants.{p.tenant_index}{leaf}" if p.tenant_index is not None else "tenants"

    seen_key: dict[int, Partition] = {}
    seen_port: dict[int, tuple[Partition, Member]] = {}
    for p in parts:
        if p.name == "Default":
            continue
        if not 0 < p.pkey < DEFAULT_PKEY:
            problems.append(
                Problem(
                    field_of(p, ".pkey"),
                    f"pkey 0x{p.pkey:04x} of tenant {p.name!r} is not a "
                    "tenant key (0x0001-0x7ffe; 0x7fff is the default partition)",
                    "pick another key",
                )
            )
        if p.pkey in seen_key:
            problems.append(
                Problem(
                    field_of(p, ".pkey"),
                    f"tenants {seen_key[p.pkey].name!r} and {p.name!r} share "
                    f"partition key 0x{p.pkey:04x}: their servers would reach each other",
                    "give every tenant its own pkey",
                )
            )
        seen_key.setdefault(p.pkey, p)
        for m in p.members:
            if owner.get(m.device) != p.name:
                problems.append(
                    Problem(
                        field_of(p),
                        f"partition {p.name!r} (0x{p.pkey:04x}) holds {m.label}, a "
                        f"port of {m.device}, which {p.name!r} does not rent "
                        f"(owner: {owner.get(m.device, 'nobody')})",
                        "a tenant partition may only hold its own servers' ports",
                    )
                )
            if m.port_guid in seen_port and seen_port[m.port_guid][0] is not p:
                other = seen_port[m.port_guid][0]
                problems.append(
                    Problem(
                        field_of(p),
                        f"port {m.label} (0x{m.port_guid:016x}) is a member of both "
                        f"{other.name!r} and {p.name!r}: the two tenants share it",
                        "a server belongs to at most one tenant; remove it from one of them",
                    )
                )
            seen_port.setdefault(m.port_guid, (p, m))
            if not m.full:
                problems.append(
                    Problem(
                        field_of(p),
                        f"{m.label} is only a limited member of its tenant partition {p.name!r}",
                        "tenant members are full members",
                    )
                )
    default = next((p for p in parts if p.name == "Default"), None)
    if default is not None:
        for m in default.members:
            if m.full and m.port_guid in seen_port:
                problems.append(
                    Problem(
                        field_of(seen_port[m.port_guid][0]),
                        f"{m.label} is a full member of the "
                        "default partition: as a full member it could reach every tenant",
                        "only subnet-manager ports are full members of 0x7fff",
                    )
                )
    return problems


def tenant_owner(plan: Plan) -> dict[str, str]:
    """server -> tenant, from the design (the source the partitions must agree with)."""
    members = tenant_members(plan.design)
    return {s: t for t, servers in members.items() for s in servers}


def _sm_fix(plan: Plan) -> str:
    """What attaching subnet-manager nodes takes in this design: free leaf ports and a management server
    whose backend NIC runs the backend's speed."""
    design, catalog = plan.design, plan.catalog
    speed = plan.networks.backend.speed_gbps
    steps = []
    # with nodes attached, a management model whose NIC cannot run the fabric gets the fabric's NIC
    # (management_model): only a backend the compute servers' NIC does not run either needs another model
    attached = design.model_copy(update={"management": design.management.model_copy(update={"backend_attached": 1})})
    key = management_model(attached, catalog)
    mm = catalog.servers[design.management.server]
    nic_key = key.split("@", 1)[1] if "@" in key else (mm.backend.nic if mm.backend is not None else None)
    nic = catalog.nics[nic_key] if nic_key is not None else None
    if nic is None or (speed != nic.speed_gbps and speed not in nic.speeds_gbps):
        fit = sorted(
            k
            for k, srv in catalog.servers.items()
            if srv.backend is not None
            and not srv.gpus
            and speed in (catalog.nics[srv.backend.nic].speed_gbps, *catalog.nics[srv.backend.nic].speeds_gbps)
        )
        steps.append(
            f"a management.server whose backend NIC runs {speed}G ("
            + (
                ", ".join(fit)
                if fit
                else f"no catalog server has one: add it in a catalog: overlay; {design.management.server}'s does not"
            )
            + ")"
        )
    if not _sm_ports_free(plan):
        steps.append(
            "free leaf ports for them: every port of the last unit's rail leaves is taken at "
            f"{design.backend.oversubscription}: "
            + (
                "a backend.oversubscription above 1:1 leaves some"
                if design.compute.system is not None
                else "give them the last server slot with compute.reserved_slots: 1 and one server fewer"
            )
        )
    steps.append("management.backend_attached: 2")
    return "; ".join(steps)


def _sm_ports_free(plan: Plan) -> bool:
    """Whether management.backend_attached would find its ports free: the port a subnet-manager node takes
    (the last downlink port of a rail leaf in the last scalable unit, stages.fabric) is spare there."""
    leaves = [d for d in plan.devices if d.network == "backend" and d.role == "leaf"]
    if not leaves:
        return False
    last = [d for d in leaves if d.attrs.get("su") == leaves[-1].attrs.get("su")]
    speed = plan.networks.backend.speed_gbps
    ports = port_table(plan.catalog.switches[last[0].model])
    down = eligible(plan.catalog.switches[last[0].model], speed, "down")
    return bool(down) and all(ports[down[-1]].name in d.spare_ports for d in last[:2])


def _facts(sn: Subnet, parts: list[Partition]) -> InfinibandFacts:
    return InfinibandFacts(
        root_switches=sn.roots,
        subnet_managers=[SubnetManager(device=h.device, node=h.node, on_switch=h.on_switch) for h in sn.sm_hosts],
        partitions=[
            PartitionFact(
                name=p.name,
                pkey=f"0x{p.pkey:04x}",
                ports=len(p.members),
                servers=hostlist.collect_hostlist(p.servers) if p.servers else "",
            )
            for p in parts
        ],
    )


def _plane_facts(per_plane: list[tuple[str, Subnet, list[Partition]]]) -> InfinibandFacts:
    """A multi-plane backend's section: each plane's subnet, and over them all the roots, the subnet
    managers and the partitions (a tenant's key the same in every plane, its ports summed)."""
    planes = []
    for p, sn, parts in per_plane:
        f = _facts(sn, parts)
        planes.append(PlaneSubnetFacts(p, subnet_prefix(p), f.root_switches, f.subnet_managers, f.partitions))
    merged: dict[str, PartitionFact] = {}
    for pf in planes:
        for part in pf.partitions:
            old = merged.get(part.name)
            merged[part.name] = (
                PartitionFact(part.name, part.pkey, part.ports + old.ports, part.servers) if old else part
            )
    return InfinibandFacts(
        root_switches=[r for pf in planes for r in pf.root_switches],
        subnet_managers=[m for pf in planes for m in pf.subnet_managers],
        partitions=list(merged.values()),
        planes=planes,
    )


def check(plan: Plan, catalog: Catalog) -> None:
    """Compiler stage: refuse a plan whose InfiniBand partitions would not isolate tenants, and record
    each subnet's roots, subnet managers and partitions (plan.infiniband for the backend,
    plan.infiniband_storage for a dedicated storage fabric) for the renderer, UFM and Pulumi."""
    owner = tenant_owner(plan)
    problems: list[Problem] = []
    facts: dict[str, InfinibandFacts] = {}
    sizes: dict[str, Subnet] = {}
    for network in infiniband_networks(plan):
        planes = backend_planes(plan) if network == "backend" else []
        if planes:
            # one subnet per plane: its own SM, roots and partitions (the same keys and servers in each)
            per_plane = []
            for p in planes:
                sn = subnet(plan, network, p)
                parts = partitions(plan, sn)
                problems += isolation_problems(parts, owner)
                per_plane.append((p, sn, parts))
                sizes.setdefault(network, sn)
            facts[network] = _plane_facts(per_plane)
            continue
        sn = subnet(plan, network)
        parts = partitions(plan, sn)
        problems += isolation_problems(parts, owner)
        facts[network], sizes[network] = _facts(sn, parts), sn
    if problems:
        raise DesignError(problems)
    plan.infiniband, plan.infiniband_storage = facts.get("backend"), facts.get("storage")
    be = sizes.get("backend")
    if be is not None and be.sm_hosts and be.sm_hosts[0].on_switch and len(be.order) > EMBEDDED_SM_MAX_NODES:
        # the playbook: UFM (or an SM on servers) is a hard requirement above ~2k GPUs
        plan.warnings.append(
            PlanWarning(
                field="management.backend_attached",
                message=f"{len(be.order):,} InfiniBand nodes exceed the ~{EMBEDDED_SM_MAX_NODES:,} a switch-embedded "
                "subnet manager handles; attach management nodes to the backend and run OpenSM or UFM there: "
                + _sm_fix(plan),
            )
        )
