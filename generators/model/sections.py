"""The typed sections later stages add to the plan (racks, floor, trays, cables, network plan, ...).

Each section is a slotted dataclass deriving from `Record`, which gives every section the one
`to_dict`/`from_dict` pair: `to_dict` writes the fields in declaration order (that order is
plan.json's key order), `from_dict` refuses a missing or unknown key, so a reader and a writer can
never disagree silently about a section's shape. A reader that asks for a field that does not exist
fails at type-check (or with AttributeError at once), never with a quiet `None`.

Where a section holds free-form tables keyed by device or network (the network plan's address maps,
the BoM's sizing blocks), those stay `dict[str, Any]` inside a typed section: their keys are data
(device names), not schema.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self


class PlanShapeError(ValueError):
    """plan.json does not have the shape this railyard writes (an older or hand-edited file)."""


def _record_type(tp: Any) -> type[Record] | None:
    return tp if isinstance(tp, type) and issubclass(tp, Record) else None


Codec = tuple[tuple[str, ...], frozenset[str], dict[str, Any], frozenset[str]]
OMIT = "omit_when_none"  # field metadata: the key is left out of the JSON while the value is None


def omitted(default: Any = None) -> Any:
    """A field plan.json carries only once it has a value: set by a later stage, or only for some designs
    (so the JSON of designs without it stays as it was)."""
    return field(default=default, metadata={OMIT: True})


_CODECS: dict[type, Codec] = {}


def _codec(cls: type[Record]) -> Codec:
    if (c := _CODECS.get(cls)) is not None:
        return c
    c = _CODECS[cls] = _build_codec(cls)
    return c


def _build_codec(cls: type[Record]) -> Codec:
    """Field names in order, the names without a default (a reader must find them), for each field that
    holds records how to rebuild it: ("one", T), ("list", T), ("optional", T) (plain JSON values need no
    conversion), and the fields left out of the JSON while None (`omitted`)."""
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    required = frozenset(
        f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )
    nested: dict[str, Any] = {}
    for name in names:
        tp = hints[name]
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if (rt := _record_type(tp)) is not None:
            nested[name] = ("one", rt)
        elif origin is list and args and (rt := _record_type(args[0])) is not None:
            nested[name] = ("list", rt)
        elif origin in (typing.Union, types.UnionType):
            inner = [a for a in args if a is not type(None)]
            if len(inner) == 1 and (rt := _record_type(inner[0])) is not None:
                nested[name] = ("optional", rt)
            elif (
                len(inner) == 1
                and typing.get_origin(inner[0]) is list
                and (rt := _record_type(typing.get_args(inner[0])[0])) is not None
            ):
                nested[name] = ("list", rt)  # an omitted list: absent while None
    omit = frozenset(f.name for f in fields if f.metadata.get(OMIT))
    return names, required, nested, omit


@dataclass(slots=True)
class Record:
    """Base of every plan section: one JSON codec for all of them."""

    def to_dict(self) -> dict[str, Any]:
        names, _, nested, omit = _codec(type(self))
        out = {n: v for n in names if (v := getattr(self, n)) is not None or n not in omit}
        for n, (how, _) in nested.items():
            if n not in out:
                continue
            v = out[n]
            if how == "list" and v is not None:
                out[n] = [x.to_dict() for x in v]
            elif v is not None:
                out[n] = v.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Any, where: str = "") -> Self:
        where = where or cls.__name__
        if not isinstance(d, dict):
            raise PlanShapeError(f"{where}: expected an object, got {type(d).__name__}")
        names, required, nested, _ = _codec(cls)
        unknown = set(d) - set(names)
        missing = [n for n in names if n in required and n not in d]
        if unknown or missing:
            raise PlanShapeError(
                f"{where}: "
                + "; ".join(
                    ([f"unknown keys {sorted(unknown)}"] if unknown else [])
                    + ([f"missing keys {missing}"] if missing else [])
                )
            )
        kw = {n: d[n] for n in names if n in d}
        for n, (how, rt) in nested.items():
            if n not in kw:
                continue
            v = kw[n]
            if how == "list" and v is not None:
                kw[n] = [rt.from_dict(x, f"{where}.{n}[{i}]") for i, x in enumerate(v)]
            elif v is not None:
                kw[n] = rt.from_dict(v, f"{where}.{n}")
        return cls(**kw)


# ------------------------------------------------------------------------------------ networks
#
# plan.json's "networks": each network's shape as the fabric builder made it, what the invariants
# measured on the graph and what the network plan chose. The fields of one network are written by
# the stage each comment names, in plan.json's key order.


@dataclass(slots=True)
class Oversubscription(Record):
    requested: str  # fabric: the design's ratio, "2:1"
    measured: str | None = omitted()  # invariants: the worst leaf's downlink over uplink bandwidth


@dataclass(slots=True)
class Bisection(Record):
    method: str
    demand_gbps: int
    max_flow_gbps: int
    ratio: float


@dataclass(slots=True)
class PlaneBisection(Record):
    """One network plane's bisection: the max-flow from the first half of its leaves to the second."""

    plane: str
    demand_gbps: int
    max_flow_gbps: int
    ratio: float


@dataclass(slots=True)
class FailureDomain(Record):
    """What one failure of a multi-plane backend takes away (stages/failures.py): the worst member of its
    kind, measured on the graph with its switches removed."""

    scenario: str  # leaf, spine, core, plane, leaf rack, spine rack, core rack
    failed: str  # the switch, plane or rack
    switches: int  # backend switches it takes down
    gpus_losing_bandwidth: int  # GPUs whose backend bandwidth drops
    gpus_cut_off: int  # of those, GPUs left with none
    worst_gpu_bandwidth_kept: float  # the worst GPU's share of its backend bandwidth kept
    bisection_gbps: int  # the planes' max-flow across their bisections, summed, after
    bisection_kept: float  # over the same before


@dataclass(slots=True)
class SubnetManagerPort(Record):
    node: str  # the management node
    port: str
    leaf: str
    leaf_port: str


@dataclass(slots=True, kw_only=True)
class BackendFacts(Record):
    # fabric
    technology: str  # infiniband, roce
    topology: str
    switch: str  # the catalog model the design names
    speed_gbps: int
    rails: int
    leaves_per_rail: int | None = omitted()  # only when more than 1
    rails_per_leaf: int | None = omitted()  # only when more than 1
    switch_model: str | None = omitted()  # the model as its ports run (Catalog.switch_at), when split
    # network planes (spine_grouping: per_plane), each a fabric of its own, or the planes inside the
    # backend's switches (catalog Switch.planes: every link one lane in each); only when set
    planes: int | None = omitted()
    # backend.plane_split nic_port: every NIC port broken out into the planes (speed_gbps is a leg's)
    nic_split: bool | None = omitted()
    scalable_units: int
    su_size: int
    spine_grouping: str
    tiers: int
    leaves: int
    spines: int
    cores: int
    pods: int
    leaves_per_pod: int
    downlinks_per_leaf: int
    uplinks_per_leaf: int
    links_per_leaf_spine: int
    links_per_spine_core: int
    oversubscription: Oversubscription
    subnet_manager_ports: list[SubnetManagerPort]
    # invariants
    bisection: Bisection | None = omitted()
    # a multi-plane backend: each plane's own bisection (the planes never meet, so each is proven alone)
    plane_bisection: list[PlaneBisection] | None = omitted()
    # a multi-plane backend: what one switch, plane or rack of switches takes away (stages/failures.py)
    failure_domains: list[FailureDomain] | None = omitted()
    spare_ports: int | None = omitted()


@dataclass(slots=True)
class FrontendFacts(Record):
    # fabric
    switch: str
    spine_switch: str
    speed_gbps: int
    uplink_speed_gbps: int
    ports_per_server: int
    tiers: int
    leaves: int
    spines: int
    cores: int
    downlinks_per_leaf: int
    uplinks_per_leaf: int
    links_per_leaf_spine: int
    oversubscription: Oversubscription
    # invariants
    spare_ports: int | None = omitted()
    # network plan
    vendor: str | None = omitted()  # the frontend switches' network OS
    storage_bandwidth: dict[str, Any] | None = omitted()  # per service-leaf pair (data: pair numbers)
    asn: dict[str, str] | None = omitted()  # leaves, spines, cores: ASN ranges
    vrfs: int | None = omitted()


@dataclass(slots=True)
class StorageFacts(Record):
    """A dedicated storage fabric (storage.network: dedicated)."""

    # fabric
    technology: str
    switch: str
    speed_gbps: int
    ports_per_server: int
    server_ports: list[str]
    tiers: int
    leaves: int
    server_leaves: int
    storage_leaves: int
    spines: int
    cores: int
    downlinks_per_leaf: int
    storage_downlinks_per_leaf: int
    uplinks_per_leaf: int
    links_per_leaf_spine: int
    oversubscription: Oversubscription
    # invariants
    spare_ports: int | None = omitted()


@dataclass(slots=True)
class OobFacts(Record):
    # placement (which builds the out-of-band network)
    switch: str
    aggregation_switch: str | None  # None: oob.uplink: frontend
    access_switches: int
    aggregation_switches: int
    endpoints: int
    uplinks_per_switch: int
    uplink_speed_gbps: int
    # invariants
    spare_ports: int | None = omitted()


NetworkFacts = BackendFacts | FrontendFacts | StorageFacts | OobFacts


@dataclass(slots=True)
class Networks(Record):
    """Per-network facts, by network: iterating gives the names of the networks the plan has, in
    plan.json's order, and `plan.networks[name]` the facts of one."""

    backend: BackendFacts
    frontend: FrontendFacts
    storage: StorageFacts | None = omitted()  # a dedicated storage fabric only
    oob: OobFacts | None = omitted()  # once placement has built it

    def __iter__(self) -> Iterator[str]:
        return (n for n in ("backend", "frontend", "storage", "oob") if getattr(self, n) is not None)

    def __contains__(self, name: object) -> bool:
        return name in ("backend", "frontend", "storage", "oob") and getattr(self, str(name)) is not None

    def technology(self, name: str) -> str | None:
        """What a network runs: the backend's and a storage fabric's technology (infiniband, roce,
        ethernet), "ethernet" for the frontend and the OOB network, None for a network the plan lacks."""
        if name not in self:
            return None
        facts = self[name]
        return facts.technology if isinstance(facts, BackendFacts | StorageFacts) else "ethernet"

    def __getitem__(self, name: str) -> NetworkFacts:
        facts: NetworkFacts | None = getattr(self, name) if name in self else None
        if facts is None:
            raise KeyError(name)
        return facts


# ------------------------------------------------------------------------------------ placement


@dataclass(slots=True)
class Rack(Record):
    name: str  # "<row>-<position>", e.g. "r01-03"
    role: str  # compute, leaf, spine, network, storage, management, ...
    row: str
    position: int  # 1-based position in the row
    x_mm: float  # the rack's front-left corner on the floor
    y_mm: float
    width_mm: float
    depth_mm: float
    units: int  # rack height in U
    units_used: int
    power_kw: float
    power_budget_kw: float
    pdus: int


@dataclass(slots=True)
class FloorRow(Record):
    name: str
    x_mm: float
    y_mm: float
    positions: int
    blocked: list[int]  # 1-based positions a keep-out takes


@dataclass(slots=True)
class Floor(Record):
    site: str
    rack_model: str | None  # catalog key of the rack, when the catalog prices one
    outline_mm: list[list[float]]
    rows: list[FloorRow]
    keepouts: list[dict[str, Any]]  # the design's keep-outs as written
    rack_height_mm: float


@dataclass(slots=True)
class RackHeat(Record):
    """One rack's load on the facility: power split by where its heat goes, and weight."""

    rack: str
    row: str
    kw: float  # what the rack draws (its devices, an in-rack CDU included)
    liquid_kw: float  # heat into the liquid loop
    air_kw: float  # heat into the room air
    weight_kg: float | None  # None: the catalog weighs none of its parts (switch and server racks)
    load_kg_m2: float | None  # weight over the rack's footprint
    cdus: list[str]  # the CDUs that cool it


@dataclass(slots=True)
class CduPlacement(Record):
    name: str  # "cdu-<rack>" (in-row: the row position it stands on) or "cdu-<rack>-<n>" (in-rack)
    model: str
    rack: str  # the position it stands on (in-row) or the rack it is mounted in (in-rack)
    serves: list[str]  # racks on its liquid loop
    load_kw: float  # liquid heat of the racks it serves (shared with the group's other CDUs)
    capacity_kw: float
    power_kw: float


@dataclass(slots=True)
class RowHeat(Record):
    row: str
    racks: int  # racks drawing power (CDU positions not counted)
    kw: float
    liquid_kw: float
    air_kw: float
    cdu_kw: float  # the in-row CDUs' own draw (facility power, not the row busway)
    cdus: int
    weight_kg: float  # of the weighed racks and CDUs
    power_limit_kw: float | None  # site.floor.row_power_kw
    air_limit_kw: float | None  # site.floor.row_air_kw


@dataclass(slots=True)
class Cooling(Record):
    """Liquid cooling and the facility load (site.cooling): CDUs, per-rack and per-row heat, weight."""

    cdu: str  # catalog key
    placement: str  # in_row, in_rack
    redundancy: str  # N, N+1
    racks_per_cdu: int  # racks on one CDU group's loop
    racks: list[RackHeat]
    rows: list[RowHeat]
    cdus: list[CduPlacement]
    kw: float  # racks' draw
    liquid_kw: float
    air_kw: float
    cdu_kw: float
    mw: float  # racks and CDUs: what the site feeds


@dataclass(slots=True)
class SidecarPlacement(Record):
    name: str  # "sidecar-<position>": named by the row position it stands on
    model: str
    rack: str  # the row position it stands on
    serves: list[str]  # the racks of its group, on the group's 800 VDC busway
    load_kw: float  # the group's draw, shared with the group's other sidecars
    capacity_kw: float


@dataclass(slots=True)
class RackPower(Record):
    """How one rack-system rack is fed on 800 VDC: the current at its DC input and on its busbar (I = P / V),
    its power shelves and their PSUs, what they carry with one shelf down (N+1), the sidecars feeding it."""

    rack: str
    kw: float
    feed_vdc: int
    feed_a: float
    busbar_vdc: int | None
    busbar_a: float | None
    shelf: str
    shelves: int
    shelf_kw: float
    psus: int | None  # PSUs (converters) of all its shelves; None: the catalog does not say
    n1_kw: float  # the shelves less one carry this
    sidecars: list[str]


@dataclass(slots=True)
class Power(Record):
    """800 VDC power (site.power: 800vdc): the sidecars on the floor, whom they feed, each rack's feed."""

    architecture: str
    sidecar: str  # catalog key
    redundancy: str  # N, N+1
    racks_per_sidecar: int
    sidecars: list[SidecarPlacement]
    racks: list[RackPower]
    kw: float  # the fed racks' draw


# -------------------------------------------------------------------------------------- cabling


@dataclass(slots=True)
class TraySegment(Record):
    id: str  # "T-XXXXX-XXXXX", a hash of its end points (generators/model/ids.py)
    a_mm: list[float]
    b_mm: list[float]
    length_m: float
    cable_mm2: float = 0.0  # cross-section of the cables routed through it
    fill: float = 0.0  # cable_mm2 over the tray's usable cross-section


@dataclass(slots=True)
class Trays(Record):
    capacity_mm2: float
    fill_limit: float
    segments: list[TraySegment]


@dataclass(slots=True)
class Cable(Record):
    """One bundle: what one cable (or one pair of optics and its fibers) serves. Per-link lists are
    aligned with `links` (indices into plan.links)."""

    id: str  # "C-XXXXX-XXXXX", a hash of the device ports it joins (generators/model/ids.py)
    links: list[int]
    shape: str  # single, twin, splitter, mixed
    network: str
    media: str  # dac, acc, aoc, mmf, smf, cat6
    catalog: str  # catalog key of the cable
    physical: int  # cables pulled for this bundle
    parts: list[str]
    length_m: list[float]
    reach_m: float
    routed_m: list[float]
    route: list[str]  # per physical cable: the tray segments it runs through
    labels: list[str]  # "<rack>.<unit>.<port> -- <rack>.<unit>.<port>" per link
    a_transceiver: str | None
    b_transceiver: str | None
    # a broken-out optic's fan-out cable SKU, one per cage (Cable kind fanout); only when there is one
    a_fanout: str | None = omitted()
    b_fanout: str | None = omitted()


@dataclass(slots=True)
class CablingTotals(Record):
    cables: dict[str, int]  # "<network>/<media>" -> cables
    copper_m: float
    fiber_m: float
    cat6_m: float
    transceivers: dict[str, int]  # network -> transceivers
    transceiver_parts: dict[str, int]
    cable_parts: dict[str, int]
    max_tray_fill: float


# ---------------------------------------------------------------------------------- network plan


@dataclass(slots=True)
class AaaTarget(Record):
    address: str
    port: int
    timeout: int  # seconds


@dataclass(slots=True)
class SnmpV3User(Record):
    name: str
    access: str  # ro, rw
    auth_secret: str  # secret names (generators.model.secrets), never values
    priv_secret: str


@dataclass(slots=True)
class LocalUser(Record):
    name: str
    role: str  # admin, operator
    ssh_keys: list[str]
    password_secret: str


@dataclass(slots=True)
class MgmtPlane(Record):
    """Every switch's management plane as the network plan resolved it (management.* with defaults):
    what the vendor renderers write and `railyard validate` prints."""

    vrf: bool  # services and the management port in the management VRF
    ntp: list[str]
    syslog: list[str]
    dns: list[str]
    defaulted: list[str]  # which of ntp, syslog, dns took the default (the OOB DHCP servers)
    tacacs: list[AaaTarget]
    radius: list[AaaTarget]
    snmp_users: list[SnmpV3User]
    users: list[LocalUser]
    bgp_auth: str  # md5, none
    bgp_secret: str  # the secret name of the BGP session key


@dataclass(slots=True)
class NetPlan(Record):
    """ASNs, loopbacks, tenant networks and every address of the frontend and out-of-band networks."""

    scheme: dict[str, Any]  # how numbers were chosen, for the reader
    vendor: str  # frontend.vendor
    mtu: int
    domain: str
    anycast_gateway_mac: str
    asn: dict[str, int]  # switch -> ASN
    loopbacks: dict[str, Any]  # switch -> loopback addresses
    vteps: dict[str, Any]  # leaf -> VTEP (EVPN leaves that need one)
    networks: list[dict[str, Any]]  # one per tenant network: VRF, VNIs, VLANs, segments
    hosts: dict[str, Any]  # server/storage/management -> address, network, bond
    storage_addresses: dict[str, Any]
    oob: dict[str, Any]  # port map, access-switch subnets, reservations
    dhcp_servers: list[str]
    management: MgmtPlane  # the switches' management plane (management.*)


# ------------------------------------------------------------------------- RoCE backend network plan


@dataclass(slots=True)
class BackendSwitch(Record):
    name: str
    role: str  # leaf, spine, core
    asn: int
    loopback: str  # router id and VTEP source, a.b.c.d/32
    vrfs: list[str]  # leaves: the VRFs of the server ports on it (spines and cores carry none)


@dataclass(slots=True)
class BackendPort(Record):
    """One used port of a backend switch. A fabric port (to another switch) is unnumbered (eBGP over
    its IPv6 link-local address); a host port is a routed /31 in its tenant's VRF."""

    switch: str
    port: str
    peer: str
    peer_port: str
    speed_gbps: int
    cable_m: float  # the routed length of its cable (lossless buffer headroom grows with it)
    fabric: bool
    rail: int | None = None  # host ports: the server port's rail
    vrf: str | None = None  # host ports: the VRF the port (and so the NIC) is in
    address: str | None = None  # host ports: the switch side of the /31, "10.128.0.0/31"
    peer_address: str | None = None  # host ports: the NIC's side, "10.128.0.1/31"


@dataclass(slots=True)
class BackendVrf(Record):
    """A tenant's (or the provider's infra) routing domain on the backend: an EVPN type-5 L3VNI
    with one route target, on the leaves that have a server port in it."""

    name: str  # the VRF, the same name as on the frontend
    tenant: str | None  # None: infra (servers no tenant rents)
    l3vni: int
    l3vni_vlan: int  # SONiC binds an L3VNI to a VLAN
    route_target: str  # <admin>:<l3vni>, imported and exported by this VRF only
    leaves: list[str]


@dataclass(slots=True)
class BackendRail(Record):
    rail: int
    block: str  # every /31 of the rail's server ports: the one route a host needs on that NIC


@dataclass(slots=True)
class RoceQos(Record):
    """The RoCEv2 traffic classes both ends agree on (switch QoS maps, NCCL's traffic class)."""

    roce_dscp: int  # RoCE data: lossless, PFC on its priority
    roce_priority: int  # traffic class, queue, PFC priority and priority group of RoCE data
    cnp_dscp: int  # congestion notification packets (DCQCN): strict priority, lossy
    cnp_priority: int


@dataclass(slots=True)
class BackendNet(Record):
    """ASNs, loopbacks, VRFs, every port's addressing and the QoS classes of a RoCE backend."""

    scheme: dict[str, Any]  # how numbers were chosen, for the reader
    switch_mtu: int  # fabric and server ports
    host_mtu: int  # the NICs' IP MTU
    overlay: str  # how tenant VRFs cross the fabric: "evpn-type5"
    qos: RoceQos
    switches: list[BackendSwitch]
    ports: list[BackendPort]
    vrfs: list[BackendVrf]
    rails: list[BackendRail]

    def ports_by_switch(self) -> dict[str, list[BackendPort]]:
        """Every switch's used ports, in plan order (what each vendor renders a switch from)."""
        out: dict[str, list[BackendPort]] = {s.name: [] for s in self.switches}
        for p in self.ports:
            out[p.switch].append(p)
        return out


# ------------------------------------------------------------------------------- Slurm, InfiniBand


@dataclass(slots=True)
class SlurmSwitch(Record):
    """A switch of Slurm's topology/tree: a set of plan switches with the same children."""

    name: str
    level: int
    nodes: list[str] = field(default_factory=list)  # level 0: the servers below
    switches: list[str] = field(default_factory=list)  # above level 0: child Slurm switches
    members: list[str] = field(default_factory=list)  # the plan switches it stands for


@dataclass(slots=True)
class SlurmBlock(Record):
    """A block of Slurm's topology/block: a scalable unit, or a rack system's rack (NVLink domain)."""

    name: str
    nodes: list[str]


@dataclass(slots=True)
class SlurmFacts(Record):
    switches_per_level: list[int]
    blocks: int
    block_sizes: list[int]
    tree: list[SlurmSwitch]  # leaves first, as topology.conf lists them
    topology_blocks: list[SlurmBlock]  # in unit (or rack) order


@dataclass(slots=True)
class SubnetManager(Record):
    device: str
    node: str
    on_switch: bool


@dataclass(slots=True)
class PartitionFact(Record):
    name: str
    pkey: str  # "0x8001"
    ports: int
    servers: str  # hostlist


@dataclass(slots=True)
class PlaneSubnetFacts(Record):
    """One network plane of a multi-plane InfiniBand backend: a subnet of its own (the planes share no
    switch, so no subnet manager reaches two of them), with its own subnet prefix, roots, subnet managers
    and partitions."""

    plane: str  # plane1, plane2, ...
    subnet_prefix: str  # "0xfe80000000000001": the plane's GID prefix, unique per plane
    root_switches: list[str]
    subnet_managers: list[SubnetManager]
    partitions: list[PartitionFact]


@dataclass(slots=True)
class InfinibandFacts(Record):
    # a multi-plane backend: every plane's roots and subnet managers, and the partitions over all planes
    # (each tenant's ports summed); the planes themselves in `planes`
    root_switches: list[str]
    subnet_managers: list[SubnetManager]
    partitions: list[PartitionFact]
    # a multi-plane backend (backend.planes, or planes inside its switches): one subnet per plane; only then
    planes: list[PlaneSubnetFacts] | None = omitted()


@dataclass(slots=True)
class PlanWarning(Record):
    """Advice that does not stop a compile (printed by `railyard compile`, kept in plan.json)."""

    field: str  # the design field to look at
    message: str


# ------------------------------------------------------------------------------------------ BoM


@dataclass(slots=True)
class BomLine(Record):
    category: str
    kind: str
    part: str
    sku: str
    description: str
    quantity: int | float
    unit: str
    unit_usd: float
    total_usd: float
    source: str
    date: str


@dataclass(slots=True)
class Bom(Record):
    """The costed bill of materials: the shape of DIR/bom.json and of plan.json's `bom`."""

    SCHEMA: ClassVar[str] = "railyard.bom/1"

    schema: str
    design: str
    currency: str
    servers: int
    gpus: int
    total_usd: float
    per_server_usd: float
    per_gpu_usd: float
    per_server_excl_storage_usd: float
    per_gpu_excl_storage_usd: float
    backend_fabric_usd: float
    by_category: dict[str, float]
    node: dict[str, Any]  # one compute node's configuration and price
    networks: dict[str, Any]  # per network: media and transceiver counts
    storage: dict[str, Any]  # sizing: drives, capacity, bandwidth
    software: dict[str, Any]
    warnings: list[PlanWarning] = field(default_factory=list)
    lines: list[BomLine] = field(default_factory=list)
