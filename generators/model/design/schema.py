"""The design's schema: one pydantic model per section, which validates the YAML's shape, documents
every field and feeds `railyard schema`. Rules that need the parts catalog are in `validation`."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from generators.model.mgmtdesign import ManagementPlane
from generators.model.netdesign import (
    DEFAULT_SONIC_RELEASE,
    Addressing,
    BackendNetwork,
    Evpn,
    FrontendBgp,
    OobNetwork,
    SonicRelease,
    Vendor,
    sonic_release_field,
)


def _ratio(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        v = f"{v}:1"
    if not isinstance(v, str) or not re.fullmatch(r"\s*\d+(\.\d+)?\s*:\s*\d+(\.\d+)?\s*", v):
        raise ValueError('must be a ratio written "N:1", e.g. "1:1" (non-blocking) or "2:1" (quote it in YAML)')
    down, up = (Fraction(x.strip()) for x in v.split(":"))
    if up == 0 or down < up:
        raise ValueError("must be at least 1:1 (downlink bandwidth over uplink bandwidth)")
    return f"{_fmt(down)}:{_fmt(up)}"


def _fmt(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else str(float(f))


def _speed(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and (m := re.fullmatch(r"\s*(\d+)\s*[gG](b|bps|bE|be)?\s*", v)):
        return int(m.group(1))
    raise ValueError('must be a speed such as "100G" or "200G"')


# The JSON Schema of each loose type says what its validator accepts (the validator's own type would
# tell an editor that "200G" or "2:1" is wrong); tests/test_design_schema.py holds the two together.
Ratio = Annotated[
    str,
    BeforeValidator(_ratio),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*:\s*\d+(\.\d+)?\s*$"},
                {"type": "integer", "minimum": 1},
            ]
        }
    ),
]
SpeedGbps = Annotated[
    int,
    BeforeValidator(_speed),
    Field(gt=0),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": r"^\s*0*[1-9]\d*\s*[gG](b|bps|bE|be)?\s*$"},
                {"type": "integer", "minimum": 1},
            ]
        }
    ),
]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$", max_length=32)]


def catalog_key(table: str, default: Any, description: str) -> Any:
    """A field naming a catalog entry. `railyard schema` turns `table` into the enum of the keys the
    loader would accept there (generators.model.design.json_schema.CATALOG_CHOICES), from the catalog in use."""
    return Field(default=default, description=description, json_schema_extra={"x-catalog": table})


def ratio_value(r: str) -> Fraction:
    down, up = r.split(":")
    return Fraction(down) / Fraction(up)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # finite numbers only


class ServerConfigOverrides(_Model):
    """Chassis choices; any field left out takes the server model's default from the catalog."""

    cpu: str | None = catalog_key("cpus", None, "CPU model key in the catalog (each socket gets one)")
    memory_gb: int | None = Field(default=None, ge=64, le=65536, description="RAM per server, whole 64 GB DIMMs")
    frontend_nic: str | None = catalog_key("nics", None, "frontend NIC or DPU model key in the catalog")
    frontend_nic_count: int | None = Field(default=None, ge=0, le=4, description="frontend NICs or DPUs per server")
    nvme_tb: float | None = Field(default=None, ge=0, description="local NVMe per server, TB")


class Compute(_Model):
    """The GPU servers."""

    # servers (count) or racks of a rack system (system and racks): the loader's rule, for editors too
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
        json_schema_extra={
            "if": {"required": ["system"]},
            "then": {"required": ["racks"]},
            "else": {"required": ["count"]},
        },
    )

    server: str = catalog_key("gpu_servers", "hgx-h100", "GPU server model key in the catalog")
    # required unless compute.system is set (then the rack system's trays are the servers: racks x trays)
    count: int | None = Field(
        default=None,
        ge=1,
        le=16384,
        description="number of GPU servers (not with "
        "compute.system: then it is compute.racks x the system's compute trays)",
    )
    # both left out of the dump when unset, so plan.json of a design of servers is unchanged
    system: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        json_schema_extra={"x-catalog": "rack_systems"},
        description="a rack-scale system (e.g. gb200-nvl72) instead of "
        "compute.server/count: whole racks, each compute tray a server <prefix>NNN (a Slurm node), its "
        "NVLink switch trays, power shelves and management switches devices of the rack",
    )
    racks: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        exclude_if=lambda v: v is None,
        description="compute.system only: how many of its racks",
    )
    config: ServerConfigOverrides = Field(
        default=ServerConfigOverrides(),
        description="chassis choices (CPU, RAM, frontend NICs, NVMe); the rest from the catalog",
    )
    hostname_prefix: Name = Field(default="gpu", description="servers are <prefix>001, <prefix>002, ...")
    # NVIDIA's 4-SU DGX H100 SuperPOD (RA-11333-001, "Major components of the 4 SU, 127-node DGX SuperPOD")
    # has 127 DGX: the last SU's 32nd node slot carries the UFM appliances' compute-fabric ports
    # left out of the dump when 0, so plan.json of a design with whole units is unchanged
    reserved_slots: int = Field(
        default=0,
        ge=0,
        exclude_if=lambda v: v == 0,
        description="server slots at the end of the last scalable unit left without "
        "a server: their rail-leaf ports go to the subnet-manager (UFM) nodes "
        "(management.backend_attached), or stay free. NVIDIA's 4-SU DGX H100 SuperPOD: "
        "count 127, reserved_slots 1 (rail_optimized only)",
    )


class Backend(_Model):
    """The GPU-to-GPU (east-west) fabric."""

    technology: Literal["infiniband", "roce"] = Field(
        default="infiniband", description="InfiniBand or RoCE Ethernet; the switch model must be of that technology"
    )
    switch: str = catalog_key("switches", "QM9700", "leaf/spine/core switch model key in the catalog")
    topology: Literal["rail_optimized", "top_of_rack"] = Field(
        default="rail_optimized",
        description="rail_optimized: NIC i of every server of a scalable unit on that "
        "unit's rail-i leaf; top_of_rack: all NICs of a server on its rack's leaf",
    )
    placement: Literal["dedicated_racks", "virtual_modular_switch", "top_of_rack"] = Field(
        default="dedicated_racks",
        description="where leaves and spines stand: separate network racks (NVIDIA reference), "
        "leaf racks flanking a spine rack mid-row (virtual modular switch), or a leaf in each server rack",
    )
    su_size: int = Field(default=32, ge=1, description="servers per scalable unit")
    # both left out of the dump when unset, so plan.json of an existing design is unchanged
    speed: SpeedGbps | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description='per backend link, e.g. "400G" for a ConnectX-8 (800G) on an NDR '
        "Quantum-2 fabric; default: the backend NIC's native speed. A switch port "
        "that splits (catalog breakout) at this speed is split",
    )
    leaves_per_rail: int = Field(
        default=1,
        ge=1,
        exclude_if=lambda v: v == 1,
        description="rail_optimized only: leaves per rail per scalable unit; the unit's "
        "first su_size/N servers on leaf 1, the next on leaf 2, ... (NVIDIA's B300 "
        "Spectrum-X: 64 servers per unit, 2 leaves per rail)",
    )
    rails_per_leaf: int = Field(
        default=1,
        ge=1,
        le=8,  # a leaf's name lists its rails: su1-rail0-rail2-...-leaf stays a hostname (<= 63 characters)
        exclude_if=lambda v: v == 1,  # plan.json of a design with one rail per leaf is unchanged
        description="rail_optimized only: rails on each leaf, every server of the unit on each of them (a leaf "
        "of k rails takes k ports per server); it must divide the rails (with spine_grouping per_plane, each "
        "plane's rails: a leaf's rails share a plane), taken with a stride as NVIDIA pairs them (rails 1+5, 2+6, ...). "
        "NVIDIA's HGX B300 Enterprise RA at 32 nodes: 2",
    )
    rails: int | None = Field(default=None, ge=1, description="backend ports per server (one rail each); default: all")
    oversubscription: Ratio = Field(default="1:1", description="leaf downlink to uplink bandwidth")
    spine_grouping: Literal["shared", "per_rail", "per_plane"] = Field(
        default="shared",
        description="spines shared by all rails, one spine plane per rail, or per_plane: "
        "one set of spines per network plane (backend.planes), as NVIDIA keeps a dual-plane Spectrum-X "
        "fabric's planes apart",
    )
    # left out of the dump when unset, so plan.json of a design without planes is unchanged
    planes: int | None = Field(
        default=None,
        ge=2,
        exclude_if=lambda v: v is None,
        description="spine_grouping per_plane: the network planes; rail r is in plane "
        "r mod planes (a dual-plane NIC's two ports are consecutive rails)",
    )
    # left out of the dump when rails, so plan.json of a design without a NIC split is unchanged
    plane_split: Literal["rails", "nic_port"] = Field(
        default="rails",
        exclude_if=lambda v: v == "rails",
        description="how the backend.planes are made: rails, the server's backend ports as the catalog "
        "lists them, rail r in plane r mod planes (DeepSeek's 8-plane fat tree: one 400G NIC per plane); "
        "nic_port, every backend NIC port broken out into backend.planes ports of its native speed / "
        "planes, its SerDes lanes shared evenly (an 800G port of 4 x 200G lanes: 2 x 400G or 4 x 200G), "
        "port k x planes + p being NIC port k's leg in plane p, so each plane is a rail-optimized fabric "
        "of its own with its switches' ports split to the plane's speed (the switch's breakout radix)",
    )
    tiers: Literal["auto", 2, 3] = Field(default="auto", description="2 while the radix allows, else 3")
    servers_per_leaf: int | None = Field(
        default=None, ge=1, description="top_of_rack only; default fills the leaf's downlink ports"
    )
    sus_per_pod: int | None = Field(default=None, ge=1, description="3-tier only; default fills the spines")
    # the spine layer as a design choice; each left out of the dump when unset, so plan.json of a design
    # without them is unchanged
    pods: Literal["scalable_units", "rail_groups"] = Field(
        default="scalable_units",
        exclude_if=lambda v: v == "scalable_units",
        description="3-tier only: what one pod (leaves under spines of their own) holds: scalable_units = "
        "sus_per_pod whole units; rail_groups = one rail's leaves of one unit, as NVIDIA's GB200/GB300 "
        "SuperPOD groups its compute fabric (4 groups of 8 leaves per unit of 8 NVL72 racks)",
    )
    spines_per_group: int | None = Field(
        default=None,
        ge=1,
        exclude_if=lambda v: v is None,
        description="spines above each group of leaves: each pod (3 tiers), each rail or network plane "
        "(spine_grouping per_rail / per_plane), or the whole fabric (2 tiers, shared); it must divide a "
        "leaf's uplinks (each leaf takes uplinks / spines links to each). Default: the fewest that take "
        "the leaves' uplinks (NVIDIA's GB200 SuperPOD: 6 per group of 8 leaves, 3 links from each)",
    )
    spine_downlinks: int | None = Field(
        default=None,
        ge=1,
        exclude_if=lambda v: v is None,
        description="leaf-facing ports a spine may use (3 tiers: as many face the cores); the pods and "
        "the spine count are sized to it. Default: all the spine's ports (2 tiers), half (3 tiers). "
        "NVIDIA's GB200 SuperPOD spine: 24 down, 24 up of a QM9700's 64",
    )
    # RoCE only; left out of the dump when unset, so plan.json of an existing design is unchanged
    network: BackendNetwork = Field(
        default=BackendNetwork(),
        exclude_if=lambda v: v == BackendNetwork(),
        description="RoCE: the backend's ASN plan (RFC 7938)",
    )
    sonic_release: SonicRelease = Field(
        default=DEFAULT_SONIC_RELEASE,
        exclude_if=lambda v: v == DEFAULT_SONIC_RELEASE,
        description=sonic_release_field("RoCE backend switches").description,
    )


class Frontend(_Model):
    """The north-south Ethernet fabric: EVPN-VXLAN leaves and spines, storage on service leaves."""

    switch: str = catalog_key("ethernet_switches", "SN4600", "frontend leaf switch model key in the catalog")
    spine_switch: str | None = catalog_key("ethernet_switches", None, "frontend spine model; default: the leaf model")
    ports_per_server: Literal[1, 2] = Field(default=2, description="2 = dual-homed to two different leaves")
    speed: SpeedGbps = Field(default=200, description='per server port, e.g. "100G" or "200G"')
    oversubscription: Ratio = Field(
        default="1:1", description='leaf downlink to uplink bandwidth, at most (quote it in YAML: "2:1")'
    )
    vendor: Vendor = Field(
        default="sonic",
        description="sonic: config_db.json + frr.conf; eos: AVD inputs "
        "rendered to EOS CLI by pyavd (the switch models must run that OS)",
    )
    mtu: int | None = Field(
        default=None,
        ge=1500,
        le=9216,
        description="fabric and server port MTU; default the vendor's jumbo MTU (SONiC 9100, EOS 9214)",
    )
    bgp: FrontendBgp = Field(default=FrontendBgp(), description="ASN plan (RFC 7938)")
    evpn: Evpn = Field(default=Evpn(), description="VLAN, VNI and route-target numbering")
    # its own field, apart from oob.sonic_release: the management switches are often other hardware
    # whose vendor image lags, and 202405 can serve them but not the leaves (no shared gateway MAC)
    sonic_release: SonicRelease = sonic_release_field("frontend switches (frontend.vendor: sonic)")


class Oob(_Model):
    """The out-of-band management network: BMCs, switch and PDU management ports."""

    switch: str = catalog_key("ethernet_switches", "SN2201", "1GbE out-of-band access switch model key in the catalog")
    aggregation_switch: str | None = catalog_key(
        "ethernet_switches", None, "OOB aggregation switch model; default: the frontend spine model"
    )
    uplink: Literal["aggregation", "frontend"] = Field(
        default="aggregation",
        description="where the access switches uplink: aggregation = an OOB "
        "aggregation pair of their own; frontend = free ports of the frontend's service leaves (NVIDIA's "
        "reference: OOB uplinked into in-band), eBGP unnumbered inside the provider's infra VRF, so the "
        "management nodes reach BMCs and PDUs over the frontend (SONiC frontend only)",
    )
    uplinks_per_switch: int = Field(
        default=2,
        ge=1,
        le=4,
        description="uplinks of each access switch to the aggregation pair (or spread over the service leaves)",
    )
    network: OobNetwork = Field(default=OobNetwork(), description="OOB VLANs, ASNs and DHCP servers")
    racks_per_switch: int | None = Field(
        default=None,
        ge=1,
        description="racks one access switch serves (it "
        "stands in one of them); default: as many neighbouring racks of a row "
        "as its ports take",
    )
    sonic_release: SonicRelease = sonic_release_field("out-of-band access and aggregation switches that run SONiC")


# the port `railyard serve-ztp` listens on, and so the port of ztp.url's default
ZTP_PORT = 8080


def _http_url(v: str) -> str:
    """An http(s) URL: a scheme, a host, maybe a port and a path."""
    from urllib.parse import urlsplit

    try:
        u = urlsplit(v)
        u.port  # noqa: B018  (raises on a port that is no number)
    except ValueError as exc:
        raise ValueError(f'is no URL ({exc}); write e.g. "http://10.0.0.5:{ZTP_PORT}/"') from None
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f'must be an http:// or https:// URL with a host, e.g. "http://10.0.0.5:{ZTP_PORT}/"')
    if u.query or u.fragment or any(c.isspace() for c in v):
        raise ValueError("must be a plain URL: no ?query, #fragment or blanks")
    return v


def _base_url(v: str) -> str:
    """The URL of a folder: always ends with '/'."""
    v = _http_url(v)
    return v if v.endswith("/") else v + "/"


BaseUrl = Annotated[str, AfterValidator(_base_url)]
HttpUrl = Annotated[str, AfterValidator(_http_url)]


class Ztp(_Model):
    """Zero-touch provisioning: the out-of-band DHCP server (Kea) answers each switch's management port
    with its OS's ZTP option, whose URL names a file of DIR/ztp/ that fetches the switch's own configs."""

    enabled: bool = Field(
        default=True,
        description="answer every switch's ZTP from oob/kea-dhcp4.conf and write DIR/ztp/; false: the "
        "management ports get their addresses only",
    )
    url: BaseUrl | None = Field(
        default=None,
        description=f'where the switches fetch the compiled folder from, e.g. "http://10.0.0.5:{ZTP_PORT}/"; '
        f"default: http://<first OOB DHCP server>:{ZTP_PORT}/, which `railyard serve-ztp DIR --bind <it>` serves",
    )
    onie_installers: dict[Literal["sonic", "cumulus"], HttpUrl] = Field(
        default_factory=dict,
        description="the network OS installer image ONIE installs on a bare switch, per OS (its URL, given "
        "to ONIE as DHCP option 114); an OS not named here gets no ONIE answer",
    )


class StorageFabric(_Model):
    """A storage network of its own (NVIDIA's DGX SuperPOD: an InfiniBand storage fabric on QM9700s,
    RA-11333-001, "InfiniBand Storage Fabric", https://docs.nvidia.com/dgx-superpod/
    reference-architecture-scalable-infrastructure-h100/latest/network-fabrics.html): the compute
    servers' storage ports (the catalog server model's `storage_ports`) and the storage servers on
    leaves and spines of their own, instead of the frontend's service leaves."""

    technology: Literal["infiniband", "ethernet"] = Field(
        description="InfiniBand (its own OpenSM subnet, infiniband/storage/) or Ethernet (switches, cables, racks "
        "and BoM, but no switch configs or IP plan yet: railyard warns); the switch model must be of that "
        "technology"
    )
    switch: str = Field(
        description="storage leaf and spine switch model key in the catalog, e.g. QM9700",
        json_schema_extra={"x-catalog": "switches"},
    )
    oversubscription: Ratio = Field(
        default="1:1",
        description="compute servers' storage leaves: downlink to "
        "uplink bandwidth (the SuperPOD RA: near 4:3). Storage servers' leaves are "
        "always non-blocking (1:1), as the RA attaches storage",
    )
    ports_per_server: int | None = Field(
        default=None,
        ge=1,
        le=8,
        description="storage ports per compute "
        "server, each to a different leaf; default: all of the server model's "
        "storage_ports",
    )
    speed: SpeedGbps | None = Field(
        default=None,
        description="per compute-server storage port; default: the native speed of the NIC the storage ports are on",
    )
    tiers: Literal["auto", 2, 3] = Field(default="auto", description="2 while the radix allows, else 3")
    # the leaf and spine layers as a design choice; each left out of the dump when unset, so plan.json of a
    # design without them is unchanged
    servers_per_leaf: int | None = Field(
        default=None,
        ge=1,
        exclude_if=lambda v: v is None,
        description="compute servers on each storage leaf (one port each; a server's ports on the leaves of a "
        "pair), its uplinks sized to the ratio. Default: as many as the leaf's ports take at the ratio. NVIDIA's "
        "DGX H100 SuperPOD: 32, a leaf pair per scalable unit, 24 uplinks at 4:3",
    )
    spines_per_group: int | None = Field(
        default=None,
        ge=1,
        exclude_if=lambda v: v is None,
        description="storage spines; it must divide a leaf's uplinks (each leaf takes uplinks / spines links to "
        "each). Default: the fewest that take the leaves' uplinks. NVIDIA's DGX H100 SuperPOD: 6 (its 16 "
        "storage switches: 10 leaves, 6 spines)",
    )


class Storage(_Model):
    """Shared NVMe storage servers: on the frontend's service leaves, or on a storage fabric of their own."""

    server: str = catalog_key("storage_servers", "nvme-storage-1u", "storage server model key in the catalog")
    count: int = Field(default=8, ge=1, le=2048, description="storage servers; vendors want at least 8 for HA")
    network: Literal["frontend", "dedicated"] = Field(
        default="frontend",
        exclude_if=lambda v: v == "frontend",
        description="frontend: the storage servers on the frontend's service leaves, storage traffic on the "
        "frontend; dedicated: a storage fabric of its own (storage.fabric), joined by the compute servers' "
        "storage ports",
    )
    fabric: StorageFabric | None = Field(
        default=None, exclude_if=lambda v: v is None, description="the storage fabric (storage.network: dedicated only)"
    )
    ports_per_server: Literal[1, 2] = Field(
        default=2,
        description="ports per storage server on the storage "
        "network: frontend ports, or storage fabric ports when "
        "storage.network is dedicated",
    )
    speed: SpeedGbps = Field(default=200, description='per storage-server port on that network, e.g. "100G" or "200G"')
    capacity_pb: float = Field(
        default=2.0,
        gt=0,
        le=10_000,
        description="usable capacity target in PB (decimal); sizes the "
        "drives per server. The playbook starts a 1,024-GPU cluster at 2 PB and grows it, "
        "leaving bays free",
    )
    license: str | None = catalog_key(
        "licenses_tb",
        "storage-software",
        "storage software license key in the catalog, priced per usable TB; null for none",
    )


class ClusterManager(_Model):
    """A cluster-manager subscription bought up front."""

    license: str = catalog_key(
        "licenses_gpu_year", "base-command-manager", "subscription key in the catalog, priced per GPU per year"
    )
    term_years: int = Field(ge=1, le=10, description="years of subscription bought up front")


class Software(_Model):
    """Licensed software priced in the BoM."""

    subnet_manager: Literal["ufm", "opensm"] = Field(
        default="ufm",
        description="InfiniBand subnet manager: ufm (NVIDIA UFM, licensed per backend endpoint, "
        "REST API and UI) or opensm (free, command line only)",
    )
    ufm_license: str = catalog_key(
        "licenses_endpoint", "ufm-enterprise", "UFM license key in the catalog, priced per backend endpoint"
    )
    cluster_manager: ClusterManager | None = Field(
        default=None,
        description="optional cluster-manager subscription (e.g. Base Command Manager, MSRP $4,500 "
        "per GPU per year); the playbook's optimized BoM drops it",
    )


class _ManagementNodes(_Model):
    """Management nodes (head nodes, UFM/subnet manager, DHCP)."""

    server: str = catalog_key("servers", "mgmt-1u", "management server model key in the catalog")
    count: int = Field(default=3, ge=1, le=256, description="management nodes")
    backend_attached: int = Field(
        default=2,
        ge=0,
        description="nodes on the backend fabric (InfiniBand: the "
        "subnet-manager hosts; RoCE: management nodes in the infra VRF)",
    )


class Management(ManagementPlane, _ManagementNodes):
    """Management nodes (head nodes, UFM/subnet manager, DHCP) and the switches' management plane: local
    users, SNMPv3, NTP, syslog, DNS, TACACS+/RADIUS, the management VRF and BGP session authentication."""


def _pkey(v: Any) -> Any:
    if isinstance(v, str) and re.fullmatch(r"\s*0[xX][0-9a-fA-F]{1,4}\s*", v):
        return int(v, 16)
    return v


class Tenant(_Model):
    """A tenant renting servers: its own VRF, VLANs, subnets and InfiniBand partition."""

    name: Name = Field(description="lower-case name; names the VRF, partitions and SLURM partition")
    scalable_units: list[int] = Field(default_factory=list, description="1-based scalable unit numbers")
    servers: list[str] = Field(default_factory=list, description='hostlists, e.g. "gpu[001-016]"')
    vrf: str | None = Field(
        default=None,
        pattern=r"^Vrf[A-Za-z0-9_-]{1,12}$",
        description="VRF name; default Vrf_<name> (SONiC wants the Vrf prefix, Linux 15 chars)",
    )
    vlan: int | None = Field(default=None, ge=2, le=4094, description="hosts VLAN; default from frontend.evpn")
    storage_vlan: int | None = Field(default=None, ge=2, le=4094, description="storage VLAN; default hosts VLAN + 1")
    l3vni: int | None = Field(default=None, ge=1, le=16777215, description="L3VNI; default from frontend.evpn")
    pkey: Annotated[
        int | None,
        BeforeValidator(_pkey),
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "integer", "minimum": 0x0001, "maximum": 0x7FFE},
                    {"type": "string", "pattern": r"^\s*0[xX][0-9a-fA-F]{1,4}\s*$"},
                    {"type": "null"},
                ]
            }
        ),
    ] = Field(
        default=None,
        ge=0x0001,
        le=0x7FFE,
        description="InfiniBand partition key (15 bits, e.g. 0x1001); default 0x1000 + the tenant's "
        "position. Pin it on a live site so reordering tenants never changes a key",
    )


# Rack roles as placement assigns them (plan.racks[].role).
RackRole = Literal["compute", "leaf", "spine", "core", "frontend", "storage", "management"]
MAX_PDUS = 8


def _pdu_count(v: Any, role: str = "") -> int:
    where = f"{role}: " if role else ""
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_PDUS:
        raise ValueError(f"{where}{v!r} is not a PDU count (1 to {MAX_PDUS})")
    return v


def _pdus(v: Any) -> Any:
    # one readable error per wrong entry, rather than pydantic's report against each union member
    if v is None:
        return v
    if isinstance(v, dict):
        roles = get_args(RackRole)
        for k, n in v.items():
            if k not in roles:
                raise ValueError(f"{k!r} is not a rack role: use {', '.join(roles)}")
            _pdu_count(n, k)
        return v
    return _pdu_count(v)


_PDU_COUNT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": MAX_PDUS}
PduCounts = Annotated[
    int | dict[RackRole, int] | None,
    BeforeValidator(_pdus),
    WithJsonSchema(
        {
            "anyOf": [
                _PDU_COUNT_SCHEMA,
                {
                    "type": "object",
                    "propertyNames": {"enum": list(get_args(RackRole))},
                    "additionalProperties": _PDU_COUNT_SCHEMA,
                },
                {"type": "null"},
            ]
        }
    ),
]


class RackSpec(_Model):
    """The racks of the site (all alike)."""

    model: str | None = catalog_key(
        "racks", None, "catalog rack; default: the catalog rack with these units and footprint"
    )
    units: int = Field(default=42, ge=10, le=60, description="rack units (U)")
    power_kw: float = Field(default=41.0, gt=0, description="power budget per rack (what the site provisions)")
    width_mm: int = Field(default=600, ge=400, description="rack width")
    depth_mm: int = Field(default=1200, ge=600, description="rack depth")
    pdu: str = catalog_key("pdus", "pdu-415v-60a-3ph", "catalog PDU model")
    pdus: PduCounts = Field(
        default=None,
        description="PDUs per rack, either one count for every rack or a count per rack role, e.g. "
        "{compute: 3, leaf: 2}; how they back each other is power_redundancy. Default (and roles not "
        "listed): the fewest that carry power_kw with that redundancy (2N: 2 x ceil(power_kw / PDU "
        "capacity); N+1: ceil(power_kw / PDU capacity) + 1)",
    )
    power_redundancy: Literal["2N", "N+1"] = Field(
        default="2N",
        description="how a rack's PDUs back each other. 2N: two feeds, the PDUs alternate A, B, A, ... "
        "(so 3 = two on A, one on B) and the weaker feed alone must carry the rack. N+1: each PDU is a "
        "feed of its own (A, B, C, ...), every device corded to each, and the rack must be carried with "
        "any one PDU down, as NVIDIA's DGX SuperPOD racks with three PDUs are",
    )
    servers_per_rack: int | None = Field(
        default=None, ge=1, description="cap on GPU servers per rack; default: as many as power and units allow"
    )


class Row(_Model):
    """A row of rack positions on the floor."""

    name: Name = Field(description="row name, unique in the site")
    positions: int = Field(ge=1, le=200, description="rack positions in the row")
    x_mm: int | None = Field(
        default=None, description="left end of the row (first rack's left edge); default: stacked automatically"
    )
    y_mm: int | None = Field(default=None, description="front edge of the row's racks")


class Keepout(_Model):
    """An area no rack may stand on: a building column, a CRAH unit, a ramp."""

    name: Name = Field(description="keep-out name")
    x_mm: int = Field(description="left edge")
    y_mm: int = Field(description="front edge")
    width_mm: int = Field(gt=0, description="extent along x")
    depth_mm: int = Field(gt=0, description="extent along y")
    blocks_trays: bool = Field(
        default=False, description="true for columns that reach the ceiling: overhead trays must route around them"
    )


class Floor(_Model):
    """The data hall: room outline, generated rows, aisles and keep-outs."""

    width_mm: int | None = Field(default=None, gt=0, description="room outline (x); default: fits the rows")
    depth_mm: int | None = Field(default=None, gt=0, description="room outline (y); default: fits the rows")
    row_positions: int = Field(
        default=16, ge=4, le=200, description="rack positions per row when rows are generated (site.rows empty)"
    )
    aisle_mm: int = Field(default=1200, ge=600, description="aisle between rows (hot or cold)")
    end_aisle_mm: int = Field(default=1500, ge=600, description="aisle at the row ends, where the cross trays run")
    keepouts: list[Keepout] = Field(default_factory=list, max_length=1000, description="areas no rack may stand on")
    # the limits below are left out of plan.json when unset, so designs that do not use them keep their plans
    row_power_kw: float | None = Field(
        default=None,
        gt=0,
        exclude_if=lambda v: v is None,
        description="power one row's busway (or its row "
        "PDUs) carries: the racks of a row together must stay within it; default: not checked",
    )
    row_air_kw: float | None = Field(
        default=None,
        gt=0,
        exclude_if=lambda v: v is None,
        description="air cooling per row (CRAH / rear-door "
        "capacity): the air-cooled share of a row's heat must stay within it; default: not checked",
    )
    max_load_kg_m2: float | None = Field(
        default=None,
        gt=0,
        exclude_if=lambda v: v is None,
        description="floor loading (kg/m2) a rack or CDU "
        "may put on its footprint (raised floor or slab rating); checked for the parts the catalog weighs "
        "(rack systems, CDUs); default: not checked",
    )


class Cooling(_Model):
    """How liquid-cooled racks are cooled: which CDU, and how many racks share one."""

    cdu: str = catalog_key(
        "cdus",
        ...,
        "catalog CDU model; its placement (in_row: on a row position of its "
        "own beside the racks it serves; in_rack: in each rack) comes with it",
    )
    racks_per_cdu: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="in-row CDUs: racks of one row served by one CDU (plus its "
        "spare), the CDUs standing at the end of their group; default: as many as one CDU's capacity cools",
    )
    redundancy: Literal["N", "N+1"] = Field(
        default="N+1",
        description="N+1: one spare CDU per group (in-row) or per rack (in-rack), so the group "
        "stays cooled with one CDU down; N: none",
    )


class Power(_Model):
    """How the racks are powered: 415-480 VAC whips to each rack's PDUs or power shelves (ac), or 800 VDC
    from power sidecars standing on row positions beside the rack-system racks they feed (800vdc)."""

    architecture: Literal["ac", "800vdc"] = Field(
        description="ac: 415-480 VAC whips to each rack (its PDUs, or a rack system's AC power shelves); "
        "800vdc: power sidecars on the floor convert AC to 800 VDC for rack systems whose power shelves take it"
    )
    sidecar: str | None = catalog_key(
        "pdus",
        None,
        "800vdc: the catalog power sidecar (a pdus entry with placement in_row); its capacity_kw and "
        "racks say how many racks one feeds",
    )
    redundancy: Literal["N", "N+1"] = Field(
        default="N+1",
        description="800vdc: N+1, one spare sidecar per group of racks, so the group stays fed with one "
        "sidecar down; N: none",
    )


class Tray(_Model):
    """Overhead cable trays along the rows and across the aisles."""

    width_mm: int = Field(default=600, ge=100, description="tray width")
    depth_mm: int = Field(default=150, ge=50, description="usable fill depth")
    levels: int = Field(default=1, ge=1, le=4, description="stacked tray levels along each route")
    fill_limit: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="cable cross-section over tray cross-section allowed (TIA-569 recommends 40-50%)",
    )
    clearance_mm: int = Field(default=300, ge=0, description="height of the tray above the rack tops")
    cross_every: int = Field(
        default=0, ge=0, description="extra cross-aisle trays every N positions (0: only at the row ends)"
    )


class Slack(_Model):
    """Cable length added to each measured route."""

    tray_m: float = Field(default=1.0, ge=0, description="service loops of a cable routed through the trays")
    direct_m: float = Field(default=0.5, ge=0, description="slack of a run within a rack or to the next rack")


class Site(_Model):
    """The physical site: racks, floor, trays."""

    name: Name = Field(default="site1", description="site name; the DNS domain defaults to <name>.internal")
    rack: RackSpec = Field(default=RackSpec(), description="rack model, power budget and PDUs")
    rows: list[Row] = Field(
        default_factory=list,
        max_length=1000,
        description="rows of rack positions; empty: generated from floor.row_positions",
    )
    floor: Floor = Field(default=Floor(), description="room outline, generated rows, aisles, keep-outs")
    tray: Tray = Field(default=Tray(), description="overhead cable trays")
    cooling: Cooling | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="liquid cooling (CDUs) for liquid-cooled racks; required by a rack system with a liquid share",
    )
    power: Power | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="the power architecture (415-480 VAC whips or 800 VDC sidecars); default: AC",
    )
    slack: Slack = Field(default=Slack(), description="cable slack added to routes")
    spine_rack_position: Literal["middle", "start", "end"] | None = Field(
        default=None,
        description="where the backend spine racks stand in their network row; default per "
        "backend.placement: middle (virtual modular switch, top-of-rack) or end (dedicated racks)",
    )
    # left out of the dump when unset, so plan.json of a design that does not set it is unchanged
    central_block: int | None = Field(
        default=None,
        ge=1,
        exclude_if=lambda v: v is None,
        description="the block (1 = the first) whose network row holds the central racks: cores, storage, "
        "frontend spines, management. Default 1, which adding blocks never moves. A site planned at its "
        "final size may stand them mid-site (e.g. 9 of 16 pods) for shorter core trunks and emptier "
        "trays; a fixed number, so blocks added later do not move them either",
    )
    compute_rows_before_network: int = Field(
        default=1,
        ge=0,
        exclude_if=lambda v: v == 1,
        description="rows of compute racks before each block's network row; the rest stand after it. "
        "Default 1: growing a block adds compute racks after the last and moves no row. A block planned "
        "at its final size may stand its network row mid-block (e.g. 16 of 32 compute rows) so no server "
        "is farther from its leaf than the optics reach; a fixed number, so growth moves nothing either",
    )
    network_rows: Literal["per_block", "per_plane"] = Field(
        default="per_block",
        exclude_if=lambda v: v == "per_block",
        description="per_block: a block's backend leaf and spine racks share one network row; per_plane: "
        "each network plane (backend.planes) has a network row of its own in each block, its leaf racks "
        "and spine racks side by side, so a plane's leaf-spine fibers run in its own row's trays (a "
        "two-tier multi-plane site of 100k+ GPUs carries a million of them)",
    )


class Cabling(_Model):
    """Choices of cable media."""

    max_copper_m: float | None = Field(default=None, gt=0, description="no DAC or ACC on a route longer than this")
    prefer_acc_switch_to_switch: bool = Field(
        default=False,
        description="active copper instead of passive between switches where it reaches (thinner, better airflow)",
    )
    forbidden_media: list[Literal["dac", "acc", "aoc", "mmf", "smf", "cat6"]] = Field(
        default_factory=list, description="media never chosen"
    )


def _table(what: str, entry: str = "part") -> Any:
    return Field(
        default_factory=dict,
        exclude_if=lambda v: not v,
        description=f"{what}: a new key is a new {entry} "
        f"(complete, as in designs/catalog.yaml); a key the catalog has merges over that {entry}",
    )


class CatalogOverlay(_Model):
    """This design's own parts and prices, merged over the catalog in use (designs/catalog.yaml or
    --catalog) for this design only: mappings merge field by field, a list replaces the catalog's list.
    The merged catalog is validated like the shipped one; plan.json records it and this overlay."""

    switches: dict[str, dict[str, Any]] = _table("switches")
    nics: dict[str, dict[str, Any]] = _table("NICs and DPUs")
    cpus: dict[str, dict[str, Any]] = _table("CPUs")
    memory: dict[str, dict[str, Any]] = _table("memory DIMMs")
    servers: dict[str, dict[str, Any]] = _table("server models")
    storage_servers: dict[str, dict[str, Any]] = _table("storage server models")
    licenses: dict[str, dict[str, Any]] = _table("software licenses")
    racks: dict[str, dict[str, Any]] = _table("racks")
    pdus: dict[str, dict[str, Any]] = _table("PDUs")
    cables: dict[str, dict[str, Any]] = _table("cable families")
    transceivers: dict[str, dict[str, Any]] = _table("transceivers")
    media_rules: dict[str, dict[str, Any]] = _table("media rules per speed or lane rate", "rule")
    rack_systems: dict[str, dict[str, Any]] = _table("rack-scale systems", "system")
    cdus: dict[str, dict[str, Any]] = _table("coolant distribution units", "CDU")
    cage_forms: dict[str, dict[str, Any]] = _table("cage connectors' plug forms (finned or flat top)", "form")

    def tables(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The overlay as written: only the tables it touches."""
        return {k: v for k in type(self).model_fields if (v := getattr(self, k))}


class Design(_Model):
    """A railyard GPU cluster design, as `railyard validate` and `railyard compile` read it."""

    name: Name = Field(description="design name: lower case, digits and dashes")
    description: str = Field(default="", description="one line on what the design is")
    compute: Compute = Field(description="the GPU servers")
    backend: Backend = Field(default=Backend(), description="the GPU-to-GPU fabric")
    frontend: Frontend = Field(default=Frontend(), description="the north-south Ethernet fabric")
    oob: Oob = Field(default=Oob(), description="the out-of-band management network")
    storage: Storage = Field(default=Storage(), description="shared storage servers")
    management: Management = Field(default=Management(), description="management nodes")
    tenants: list[Tenant] = Field(
        default_factory=list,
        max_length=4096,
        description="tenants and the servers they rent; servers of no tenant stay the provider's (infra)",
    )
    site: Site = Field(default=Site(), description="racks, floor and cable trays")
    addressing: Addressing = Field(default=Addressing(), description="IPv4 pools of the IP plan")
    cabling: Cabling = Field(default=Cabling(), description="cable media choices")
    software: Software = Field(default=Software(), description="licensed software")
    ztp: Ztp = Field(default=Ztp(), description="zero-touch provisioning of the switches over the OOB network")
    # left out of the dump when empty, so plan.json of a design without an overlay is unchanged
    catalog: CatalogOverlay = Field(
        default=CatalogOverlay(),
        exclude_if=lambda v: not v.tables(),
        description="this design's own parts and prices, merged over the catalog",
    )

    @model_validator(mode="after")
    def _shape(self) -> Design:
        c = self.compute
        if c.system is None and c.racks is not None:
            raise ValueError(
                "compute.racks: counts the racks of a rack system; set compute.system too (e.g. "
                "gb200-nvl72), or give compute.count servers instead"
            )
        if c.system is not None and c.racks is None:
            raise ValueError("compute.racks: compute.system needs the number of its racks")
        if c.system is None and c.count is None:
            raise ValueError(
                "compute.count: the number of GPU servers is required (or compute.system and "
                "compute.racks for a rack-scale system)"
            )
        if self.backend.topology == "top_of_rack" and self.backend.spine_grouping in ("per_rail", "per_plane"):
            raise ValueError(f"backend.spine_grouping: {self.backend.spine_grouping} needs a rail_optimized topology")
        if (self.backend.spine_grouping == "per_plane") != (self.backend.planes is not None):
            raise ValueError(
                "backend.planes: set it with (and only with) spine_grouping: per_plane, which puts "
                "each plane's leaves under spines of their own"
            )
        if self.backend.plane_split == "nic_port" and self.backend.planes is None:
            raise ValueError(
                "backend.plane_split: nic_port breaks every NIC port out into backend.planes planes; set "
                "planes (e.g. 2 or 4) with spine_grouping: per_plane"
            )
        if self.site.network_rows == "per_plane" and self.backend.planes is None:
            raise ValueError(
                "site.network_rows: per_plane gives each network plane a row of its own; it needs "
                "backend.planes (with spine_grouping: per_plane), or leave it per_block"
            )
        if (self.backend.topology == "top_of_rack") != (self.backend.placement == "top_of_rack"):
            raise ValueError("backend.placement: top_of_rack placement goes with (and only with) topology top_of_rack")
        if self.backend.pods == "rail_groups" and (
            self.backend.topology != "rail_optimized" or self.backend.spine_grouping != "shared"
        ):
            raise ValueError(
                "backend.pods: rail_groups groups the leaves of one rail of one unit under spines of their "
                "own, joined by cores: it needs topology rail_optimized and spine_grouping shared (a rail "
                "plane is already one group: spine_grouping per_rail)"
            )
        if self.backend.pods == "rail_groups" and self.backend.sus_per_pod is not None:
            raise ValueError("backend.sus_per_pod: a rail group is one unit's rail; leave sus_per_pod unset")
        if self.backend.leaves_per_rail > 1 and self.backend.topology != "rail_optimized":
            raise ValueError(
                "backend.leaves_per_rail: more than 1 needs a rail_optimized topology (top_of_rack "
                "sizes its leaves with servers_per_leaf)"
            )
        if self.backend.rails_per_leaf > 1 and (
            self.backend.topology != "rail_optimized"
            or self.backend.leaves_per_rail > 1
            or self.backend.spine_grouping == "per_rail"
        ):
            raise ValueError(
                "backend.rails_per_leaf: more than 1 needs a rail_optimized topology with one leaf per rail "
                "group (leaves_per_rail 1) and spines that are not per rail (a leaf of several rails is in no "
                "one rail's plane): use spine_grouping shared or per_plane"
            )
        if self.backend.su_size % self.backend.leaves_per_rail and c.system is None:  # else: resolve_system
            raise ValueError(
                f"backend.leaves_per_rail: {self.backend.leaves_per_rail} leaves per rail do not "
                f"split a {self.backend.su_size}-server scalable unit evenly; use a divisor of "
                "backend.su_size"
            )
        if self.management.backend_attached > self.management.count:
            raise ValueError("management.backend_attached: more than management.count")
        st = self.storage
        if st.network == "dedicated" and st.fabric is None:
            raise ValueError(
                "storage.fabric: storage.network: dedicated needs a storage.fabric section "
                "(technology, switch, oversubscription), or set storage.network: frontend"
            )
        if st.network == "frontend" and st.fabric is not None:
            raise ValueError(
                "storage.fabric: is set, but storage.network is frontend (the storage servers are "
                "on the frontend's service leaves); set storage.network: dedicated or remove it"
            )
        return self
