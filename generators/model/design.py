"""The cluster design: one pydantic schema that validates YAML, documents fields and feeds `railyard schema`.

Everything a user writes is checked here, first for shape (pydantic) and then against the parts
catalog (`check_against_catalog`), so later stages can trust their input and stay plain functions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import hostlist
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema, model_validator

from generators.model.catalog import DEFAULT_CATALOG, Catalog, ServerConfig, load_catalog
from generators.model.errors import DesignError, Problem, did_you_mean
from generators.model.netdesign import (
    DEFAULT_SONIC_RELEASE,
    SONIC_RIF_MAC,
    Addressing,
    BackendNetwork,
    Evpn,
    FrontendBgp,
    OobNetwork,
    SonicRelease,
    Vendor,
    sonic_release_field,
)
from generators.model.netos import network_os, serving
from generators.model.storage import size_storage
from generators.model.vocabulary import DUTY_TEXT, Duty
from generators.model.yamlload import SourceMap, apply_overrides, load_with_extends, where


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
    loader would accept there (generators.model.schema.CATALOG_CHOICES), from the catalog in use."""
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
    tiers: Literal["auto", 2, 3] = Field(default="auto", description="2 while the radix allows, else 3")
    servers_per_leaf: int | None = Field(
        default=None, ge=1, description="top_of_rack only; default fills the leaf's downlink ports"
    )
    sus_per_pod: int | None = Field(default=None, ge=1, description="3-tier only; default fills the spines")
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


class Management(_Model):
    """Management nodes (head nodes, UFM/subnet manager, DHCP)."""

    server: str = catalog_key("servers", "mgmt-1u", "management server model key in the catalog")
    count: int = Field(default=3, ge=1, le=256, description="management nodes")
    backend_attached: int = Field(
        default=2,
        ge=0,
        description="nodes on the backend fabric (InfiniBand: the "
        "subnet-manager hosts; RoCE: management nodes in the infra VRF)",
    )


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
        description="PDUs per rack, fed alternately A, B, A, ... (so 3 = two on A, one on B), "
        "either one count for every rack or a count per rack role, e.g. {compute: 3, leaf: 2} (NVIDIA's "
        "reference: 3 per compute rack, 2 elsewhere); the weaker feed alone must carry the rack's load. "
        "Default (and roles not listed): enough that either feed alone carries power_kw",
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
    slack: Slack = Field(default=Slack(), description="cable slack added to routes")
    spine_rack_position: Literal["middle", "start", "end"] | None = Field(
        default=None,
        description="where the backend spine racks stand in their network row; default per "
        "backend.placement: middle (virtual modular switch, top-of-rack) or end (dedicated racks)",
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
        if (self.backend.topology == "top_of_rack") != (self.backend.placement == "top_of_rack"):
            raise ValueError("backend.placement: top_of_rack placement goes with (and only with) topology top_of_rack")
        if self.backend.leaves_per_rail > 1 and self.backend.topology != "rail_optimized":
            raise ValueError(
                "backend.leaves_per_rail: more than 1 needs a rail_optimized topology (top_of_rack "
                "sizes its leaves with servers_per_leaf)"
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


def server_width(count: int) -> int:
    return max(3, len(str(count)))


def server_names(design: Design) -> list[str]:
    w = server_width(design.compute.count)
    return [f"{design.compute.hostname_prefix}{i:0{w}d}" for i in range(1, design.compute.count + 1)]


def backend_speed(design: Design, catalog: Catalog) -> int:
    """Gb/s of every backend link: backend.speed, else the backend NIC's native speed."""
    if design.backend.speed is not None:
        return design.backend.speed
    srv = catalog.servers[design.compute.server]
    assert srv.backend is not None  # the loader refused a GPU server without backend NICs
    return catalog.nics[srv.backend.nic].speed_gbps


def resolved_config(design: Design, catalog: Catalog) -> ServerConfig:
    base = catalog.servers[design.compute.server].defaults
    over = {k: v for k, v in design.compute.config.model_dump().items() if v is not None}
    return base.model_copy(update=over)


def check_against_catalog(design: Design, catalog: Catalog) -> list[tuple[tuple[str, ...], str, str]]:
    """Cross-field rules that need the catalog. Returns (field path, message, fix) triples."""
    out: list[tuple[tuple[str, ...], str, str]] = []

    def bad(path: str, msg: str, fix: str) -> None:
        out.append((tuple(path.split(".")), msg, fix))

    def known(path: str, key: str | None, table: dict[str, Any], what: str) -> bool:
        if key is not None and key not in table:
            bad(path, f"unknown {what} {key!r}", f"use one of: {', '.join(sorted(table))}")
            return False
        return True

    c, b, f = design.compute, design.backend, design.frontend
    if known("compute.server", c.server, catalog.servers, "server model"):
        model = catalog.servers[c.server]
        if not model.gpus or model.backend is None:
            bad("compute.server", f"{c.server} has no GPUs or no backend NICs", "pick a GPU server model")

        cfg = resolved_config(design, catalog)
        known("compute.config.cpu", cfg.cpu, catalog.cpus, "CPU")
        if known("compute.config.frontend_nic", cfg.frontend_nic, catalog.nics, "NIC"):
            nic = catalog.nics[cfg.frontend_nic]
            if nic.ports * cfg.frontend_nic_count < f.ports_per_server:
                bad(
                    "frontend.ports_per_server",
                    f"{f.ports_per_server} ports but the server has "
                    f"{cfg.frontend_nic_count} x {cfg.frontend_nic} ({nic.ports} ports each)",
                    "add frontend NICs in compute.config or use fewer ports",
                )
            if f.speed != nic.speed_gbps and f.speed not in nic.speeds_gbps:
                bad(
                    "frontend.speed",
                    f"{f.speed}G is not a speed of {cfg.frontend_nic}",
                    f"use {nic.speed_gbps}G or a NIC that runs {f.speed}G",
                )
        mem = cfg.memory_gb
        if mem % 64:
            bad("compute.config.memory_gb", f"{mem} GB is not a whole number of 64 GB DIMMs", "e.g. 1024 or 2048")
        _check_slots(design, catalog, bad)

    if known("backend.switch", b.switch, catalog.switches, "switch model"):
        sw = catalog.switches[b.switch]
        want = "infiniband" if b.technology == "infiniband" else "ethernet"
        if sw.technology != want:
            bad(
                "backend.switch",
                f"{b.switch} is an {sw.technology} switch but backend.technology is {b.technology}",
                "pick a switch of the backend's technology",
            )
        _check_backend_speed(design, catalog, bad)
    for path, key in (
        ("frontend.switch", f.switch),
        ("frontend.spine_switch", f.spine_switch),
        ("oob.switch", design.oob.switch),
        ("oob.aggregation_switch", design.oob.aggregation_switch),
    ):
        if (
            known(path, key, catalog.switches, "switch model")
            and key is not None
            and catalog.switches[key].technology != "ethernet"
        ):
            bad(path, f"{key} is not an Ethernet switch", "pick an Ethernet switch")

    want_os = network_os(f.vendor).name
    for path, key in (("frontend.switch", f.switch), ("frontend.spine_switch", f.spine_switch)):
        if key in catalog.switches and catalog.switches[key].os != want_os:
            bad(
                path,
                f"{key} runs {catalog.switches[key].os}, but frontend.vendor is {f.vendor}",
                f"pick a {want_os} switch model or set frontend.vendor to match the switch",
            )
    if design.oob.uplink == "frontend":
        if design.oob.aggregation_switch is not None:
            bad(
                "oob.aggregation_switch",
                "is set, but oob.uplink: frontend has no OOB aggregation switches",
                "remove oob.aggregation_switch, or set oob.uplink: aggregation",
            )
        if want_os != "sonic":
            # the uplinks end in the infra VRF of the frontend leaves; only the SONiC renderer writes that
            bad(
                "oob.uplink",
                f"frontend needs a SONiC frontend (frontend.vendor is {f.vendor}): railyard "
                "renders the OOB uplink ports in the leaves' infra VRF for SONiC only",
                "set oob.uplink: aggregation, or frontend.vendor: sonic",
            )
    _check_sonic_releases(design, catalog, bad)
    # a switch stands only where its OS's vendor module can configure it (the frontend: checked above)
    flagged = {p for p, _, _ in out}
    roles: list[tuple[str, str, Duty]] = [("oob.switch", design.oob.switch, Duty.OOB_ACCESS)]
    if design.oob.uplink == "aggregation":
        roles.append(
            (
                "oob.aggregation_switch",
                design.oob.aggregation_switch or f.spine_switch or f.switch,
                Duty.OOB_AGGREGATION,
            )
        )
    roles.append(("backend.switch", b.switch, Duty.INFINIBAND if b.technology == "infiniband" else Duty.ROCE))
    for path, key, role in roles:
        if key in catalog.switches and tuple(path.split(".")) not in flagged:
            os_ = catalog.switches[key].os
            if role not in network_os(os_).serves:
                bad(
                    path,
                    f"{key} runs {os_}, which railyard cannot configure as {DUTY_TEXT[role]}",
                    f"pick a switch model running {' or '.join(serving(role))}",
                )

    st = design.storage
    if known("storage.server", st.server, catalog.storage_servers, "storage server model"):
        snic = catalog.nics[catalog.storage_servers[st.server].nic]
        sm = catalog.storage_servers[st.server]
        if snic.ports * sm.nic_count < st.ports_per_server:
            bad(
                "storage.ports_per_server",
                f"{st.server} has {snic.ports * sm.nic_count} frontend ports",
                "use fewer ports per storage server",
            )
        if st.speed != snic.speed_gbps and st.speed not in snic.speeds_gbps:
            bad("storage.speed", f"{st.speed}G is not a speed of {sm.nic}", f"use {snic.speed_gbps}G")
        sizing = size_storage(sm, st.count, st.capacity_pb, st.ports_per_server, st.speed)
        if not sizing.fits:
            need = math.ceil(sizing.target_tb / sm.usable_fraction / (sm.drive_bays * sm.drive_tb))
            bad(
                "storage.capacity_pb",
                f"{st.capacity_pb:g} PB usable needs {sizing.drives_per_server} drives in each "
                f"of {st.count} servers but {st.server} has {sm.drive_bays} bays",
                f"set storage.count to at least {need} or lower the target",
            )
    _check_license(bad, catalog, "storage.license", st.license, "tb")
    if st.fabric is not None:
        _check_storage_fabric(design, catalog, bad, known)
    sw = design.software
    if sw.subnet_manager == "ufm" and b.technology == "infiniband":
        _check_license(bad, catalog, "software.ufm_license", sw.ufm_license, "endpoint")
    if sw.cluster_manager is not None:
        _check_license(bad, catalog, "software.cluster_manager.license", sw.cluster_manager.license, "gpu_year")
    m = design.management
    if (
        known("management.server", m.server, catalog.servers, "server model")
        and m.backend_attached
        and catalog.servers[m.server].backend is None
    ):
        bad("management.backend_attached", f"{m.server} has no backend NIC", "set it to 0 or pick another model")

    _check_site(design, catalog, bad, known)
    _check_rack_system(design, catalog, bad)
    _check_tenants(design, bad)
    if design.compute.system is not None and not any(p[0] == "tenants" for p, _, _ in out):
        _check_whole_racks(design, catalog, bad)
    return out


def _check_backend_speed(design: Design, catalog: Catalog, bad: Any) -> None:
    """backend.speed is one the backend NICs and the backend switch's ports both run (whole or split)."""
    b = design.backend
    srv = catalog.servers.get(design.compute.server)
    if srv is None or srv.backend is None or srv.backend.nic not in catalog.nics:
        return
    nic = catalog.nics[srv.backend.nic]
    eth, speed = nic.ethernet_speeds_gbps, backend_speed(design, catalog)
    if b.technology == "roce" and eth is not None and speed not in eth:
        at = "backend.speed" if b.speed is not None else "compute.server"
        # the same GPUs behind a NIC that runs Ethernet at its native speed (ConnectX-8 as 2 x 400GbE)
        split = [
            k
            for k, s in catalog.servers.items()
            if s.backend
            and s.gpu_model == srv.gpu_model
            and s.backend.nic in catalog.nics
            and catalog.nics[s.backend.nic].ethernet_speeds_gbps is None
        ]
        bad(
            at,
            f"{srv.backend.nic} (the backend NIC of {design.compute.server}) runs "
            f"{', '.join(f'{s}G' for s in sorted(eth))} per port on Ethernet, not {speed}G",
            (
                f"use a server model whose NIC presents its Ethernet ports ({', '.join(sorted(split))}), "
                if split
                else "use a server model with an Ethernet backend NIC, "
            )
            + "or backend.technology: infiniband",
        )
    if b.technology == "roce":
        # the hosts' netplan addresses each backend port by its Linux name, which only the catalog knows
        for at, key in (
            ("compute.server", design.compute.server),
            *([("management.server", design.management.server)] if design.management.backend_attached else []),
        ):
            m = catalog.servers.get(key)
            if m is not None and m.backend is not None and m.backend.netdev is None:
                bad(
                    at,
                    f"{key} names no Linux interfaces for its backend ports (catalog servers.{key}.backend."
                    "netdev), which the hosts' netplan of a RoCE backend needs",
                    f'add netdev: "<name>{{i}}" to servers.{key}.backend in the catalog (a design\'s catalog: '
                    "overlay can), the names the OS image gives the ports",
                )
    if b.speed is None:
        return
    if b.speed != nic.speed_gbps and b.speed not in nic.speeds_gbps:
        bad(
            "backend.speed",
            f"{b.speed}G is not a speed of {srv.backend.nic} (the backend NIC of "
            f"{design.compute.server} runs {', '.join(f'{s}G' for s in sorted({nic.speed_gbps, *nic.speeds_gbps}))})",
            f"use one of those, or leave backend.speed out for the NIC's native {nic.speed_gbps}G",
        )
    sw = catalog.switches[b.switch]
    runs = {s for g in sw.port_groups for s in (g.speed_gbps, *g.speeds_gbps, *g.breakout)}
    if b.speed not in runs:
        bad(
            "backend.speed",
            f"{b.speed}G is not a speed the ports of {b.switch} run ({', '.join(f'{s}G' for s in sorted(runs))})",
            "pick a backend switch whose ports (or their breakout) run this speed, or another speed",
        )


def storage_fabric_ports(design: Design, catalog: Catalog) -> list[str]:
    """The compute servers' ports on the dedicated storage fabric, in leaf order (port p to leaf side p)."""
    fab = design.storage.fabric
    if fab is None:
        return []
    ports = catalog.servers[design.compute.server].storage_ports
    return ports[: fab.ports_per_server or len(ports)]


def storage_fabric_speed(design: Design, catalog: Catalog) -> int:
    """The compute servers' storage port speed: the fabric's, or the frontend NIC's native one."""
    fab = design.storage.fabric
    assert fab is not None
    return fab.speed or catalog.nics[resolved_config(design, catalog).frontend_nic].speed_gbps


def _check_storage_fabric(design: Design, catalog: Catalog, bad: Any, known: Any) -> None:
    """A dedicated storage fabric: a switch of its technology, compute servers with storage ports the
    frontend does not use, at a speed both ends run."""
    fab, st, f = design.storage.fabric, design.storage, design.frontend
    assert fab is not None
    if known("storage.fabric.switch", fab.switch, catalog.switches, "switch model"):
        sw = catalog.switches[fab.switch]
        if sw.technology != fab.technology:
            bad(
                "storage.fabric.switch",
                f"{fab.switch} is an {sw.technology} switch but storage.fabric.technology is {fab.technology}",
                "pick a switch of the storage fabric's technology",
            )
        elif fab.technology == "infiniband" and Duty.INFINIBAND not in network_os(sw.os).serves:
            bad(
                "storage.fabric.switch",
                f"{fab.switch} runs {sw.os}, which railyard cannot configure as {DUTY_TEXT[Duty.INFINIBAND]}",
                f"pick a switch model running {' or '.join(serving(Duty.INFINIBAND))}",
            )
    model = catalog.servers.get(design.compute.server)
    if model is None:
        return
    if not model.storage_ports:
        bad(
            "storage.network",
            f"{design.compute.server} has no storage ports in the catalog (servers."
            f"{design.compute.server}.storage_ports is empty)",
            "add storage_ports (the frontend-NIC ports that "
            "carry storage, e.g. [eth2, eth3]) to the server model, in the catalog or a catalog: overlay, or set "
            "storage.network: frontend",
        )
        return
    if fab.ports_per_server is not None and fab.ports_per_server > len(model.storage_ports):
        bad(
            "storage.fabric.ports_per_server",
            f"{fab.ports_per_server} ports but {design.compute.server} has "
            f"{len(model.storage_ports)} storage ports ({', '.join(model.storage_ports)})",
            f"use at most {len(model.storage_ports)}",
        )
        return
    cfg = resolved_config(design, catalog)
    nic = catalog.nics.get(cfg.frontend_nic)
    if nic is None:
        return
    have = [model.frontend_port_name.format(i=i) for i in range(nic.ports * cfg.frontend_nic_count)]
    frontend = set(have[: f.ports_per_server])
    for p in storage_fabric_ports(design, catalog):
        if p not in have:
            bad(
                "compute.config.frontend_nic_count",
                f"storage port {p} of {design.compute.server} is not one of its "
                f"{cfg.frontend_nic_count} x {cfg.frontend_nic} ports ({', '.join(have)})",
                "add frontend NICs in compute.config.frontend_nic_count or use fewer storage ports",
            )
        elif p in frontend:
            bad(
                "storage.fabric.ports_per_server",
                f"storage port {p} is also a frontend port (frontend.ports_per_server: {f.ports_per_server})",
                "use fewer frontend ports, or storage ports the frontend does not take",
            )
    speed = storage_fabric_speed(design, catalog)
    if speed != nic.speed_gbps and speed not in nic.speeds_gbps:
        bad("storage.fabric.speed", f"{speed}G is not a speed of {cfg.frontend_nic}", f"use {nic.speed_gbps}G")
    if speed != st.speed:
        # one fabric, one port speed: the storage servers' ports run what the compute servers' do
        bad(
            "storage.speed",
            f"{st.speed}G, but the compute servers' storage ports run {speed}G on the storage fabric",
            f"set storage.speed to {speed}G (or storage.fabric.speed to match)",
        )


def _check_sonic_releases(design: Design, catalog: Catalog, bad: Any) -> None:
    """A release is asked of SONiC switches only, and the frontend's must model a shared gateway MAC."""
    f, o = design.frontend, design.oob
    if f.vendor == "sonic":
        if f.sonic_release not in SONIC_RIF_MAC:
            bad(
                "frontend.sonic_release",
                f"SONiC {f.sonic_release} models neither a static anycast gateway (the "
                "SAG table, master only) nor a chosen MAC on a VLAN interface (VLAN_INTERFACE mac_addr, from "
                "202505), so railyard cannot give every leaf the hosts' one gateway address and MAC",
                f"set frontend.sonic_release to one of {', '.join(sorted(SONIC_RIF_MAC))} (default "
                f"{DEFAULT_SONIC_RELEASE})",
            )
    elif "sonic_release" in f.model_fields_set:
        bad(
            "frontend.sonic_release",
            f"is set, but frontend.vendor is {f.vendor}: no frontend switch runs SONiC",
            "remove frontend.sonic_release",
        )
    b = design.backend
    for name in ("sonic_release", "network"):
        if name in b.model_fields_set and (
            b.technology != "roce"
            or (name == "sonic_release" and b.switch in catalog.switches and catalog.switches[b.switch].os != "sonic")
        ):
            why = (
                f"backend.technology is {b.technology}"
                if b.technology != "roce"
                else f"{b.switch} runs {catalog.switches[b.switch].os}, not SONiC"
            )
            bad(
                f"backend.{name}",
                f"is set, but {why}: it configures SONiC RoCE backend switches"
                if name == "sonic_release"
                else f"is set, but {why}: it numbers a RoCE backend's BGP",
                f"remove backend.{name}",
            )
    models = [o.switch] + ([o.aggregation_switch or f.spine_switch or f.switch] if o.uplink == "aggregation" else [])
    if "sonic_release" in o.model_fields_set and all(
        m in catalog.switches and catalog.switches[m].os != "sonic" for m in models
    ):
        bad(
            "oob.sonic_release",
            f"is set, but no out-of-band switch runs SONiC ({', '.join(dict.fromkeys(models))} "
            f"run {', '.join(dict.fromkeys(catalog.switches[m].os for m in models))})",
            "remove oob.sonic_release, or pick a SONiC model for oob.switch",
        )


def _check_slots(design: Design, catalog: Catalog, bad: Any) -> None:
    """Scalable units are whole, except for compute.reserved_slots at the end of the last one."""
    c, b, m = design.compute, design.backend, design.management
    r = c.reserved_slots
    if r == 0:
        if c.count % b.su_size:
            full = -(-c.count // b.su_size) * b.su_size
            bad(
                "compute.count",
                f"{c.count} servers is not a whole number of {b.su_size}-server scalable units",
                f"use a multiple of backend.su_size ({b.su_size}), change backend.su_size, or leave the last "
                f"unit's free slots to the {attached_nodes(design)} with compute.reserved_slots: {full - c.count}",
            )
        return
    if b.topology != "rail_optimized":
        bad(
            "compute.reserved_slots",
            f"{r} reserved slots need a rail_optimized backend (topology is {b.topology})",
            "set compute.reserved_slots: 0 and a whole number of scalable units",
        )
        return
    if r >= b.su_size:
        bad(
            "compute.reserved_slots",
            f"{r} slots is the whole {b.su_size}-server scalable unit or more",
            f"reserve fewer than backend.su_size ({b.su_size}) slots, or drop a scalable unit from compute.count",
        )
        return
    if (c.count + r) % b.su_size:
        fit = -(-c.count // b.su_size) * b.su_size - r
        bad(
            "compute.count",
            f"{c.count} servers plus {r} reserved slots is not a whole number of {b.su_size}-server scalable units",
            f"set compute.count to {fit} (or compute.reserved_slots to "
            f"{-(-c.count // b.su_size) * b.su_size - c.count})",
        )
        return
    mm = catalog.servers.get(m.server)
    srv = catalog.servers.get(c.server)
    if mm is None or mm.backend is None or srv is None or srv.backend is None or not m.backend_attached:
        return
    rails = b.rails or srv.backend.count
    need = m.backend_attached * mm.backend.count
    if need > r * rails:
        bad(
            "management.backend_attached",
            f"{m.backend_attached} nodes x {mm.backend.count} backend ports need "
            f"{need} leaf ports but compute.reserved_slots: {r} frees {r * rails} ({rails} rails each)",
            f"reserve {-(-need // rails)} slots or attach fewer nodes",
        )


def _check_license(bad: Any, catalog: Catalog, path: str, key: str | None, unit: str) -> None:
    if key is None:
        return
    lic = catalog.licenses.get(key)
    if lic is None:
        bad(path, f"unknown license {key!r}", f"use one of: {', '.join(sorted(catalog.licenses))}")
    elif lic.unit != unit:
        bad(
            path,
            f"{key} is priced per {lic.unit}, not per {unit}",
            f"use a license priced per {unit}: "
            f"{', '.join(sorted(k for k, v in catalog.licenses.items() if v.unit == unit)) or 'none in the catalog'}",
        )


def rack_model_key(design: Design, catalog: Catalog) -> str | None:
    """The catalog rack a design uses: the named one, else the one matching its units and footprint."""
    r = design.site.rack
    if r.model is not None:
        return r.model
    for key, m in sorted(catalog.racks.items()):
        if (m.units, m.width_mm, m.depth_mm) == (r.units, r.width_mm, r.depth_mm):
            return key
    return None


def _check_site(design: Design, catalog: Catalog, bad: Any, known: Any) -> None:
    r = design.site.rack
    key = rack_model_key(design, catalog)
    if key is None:
        bad(
            "site.rack",
            f"no catalog rack is {r.units}U {r.width_mm} x {r.depth_mm} mm",
            f"set site.rack.model to one of {', '.join(sorted(catalog.racks))} or add the rack to the catalog",
        )
    elif known("site.rack.model", key, catalog.racks, "rack model"):
        m = catalog.racks[key]
        if r.model is not None and (m.units, m.width_mm, m.depth_mm) != (r.units, r.width_mm, r.depth_mm):
            bad(
                "site.rack.model",
                f"{key} is {m.units}U {m.width_mm} x {m.depth_mm} mm but site.rack says "
                f"{r.units}U {r.width_mm} x {r.depth_mm} mm",
                "make site.rack.units/width_mm/depth_mm match the model",
            )
    known("site.rack.pdu", r.pdu, catalog.pdus, "PDU model")
    names = [row.name for row in design.site.rows]
    for i, n in enumerate(names):
        if n in names[:i]:
            bad(f"site.rows.{i}.name", f"row {n!r} is declared twice", "give each row its own name")
    placed = [row.x_mm is not None and row.y_mm is not None for row in design.site.rows]
    if any(placed) and not all(placed):
        i = placed.index(False)
        bad(f"site.rows.{i}", "some rows have x_mm/y_mm and this one does not", "place every row or none")


def _check_rack_system(design: Design, catalog: Catalog, bad: Any) -> None:
    """A rack system's rack stands whole in a site rack: its power and height within site.rack, its
    in-rack management switches the out-of-band access switches, its fabric rail-optimized. A compute
    tray is a server only inside its system."""
    c = design.compute
    trays = {rs.tray: key for key, rs in catalog.rack_systems.items()}
    if c.system is None:
        if c.server in trays:
            bad(
                "compute.server",
                f"{c.server} is the compute tray of rack system {trays[c.server]}, which is "
                "bought and placed as whole racks",
                f"set compute.system: {trays[c.server]} and compute.racks instead of compute.server and compute.count",
            )
        if design.site.cooling is not None:
            bad(
                "site.cooling",
                f"{c.server} servers are air cooled: no rack of this design has a liquid loop for a CDU to serve",
                "remove site.cooling",
            )
        return
    rs = catalog.rack_systems[c.system]
    r = design.site.rack
    kw = rs.power_kw(catalog)
    if r.power_kw < kw:
        bad(
            "site.rack.power_kw",
            f"{r.power_kw:g} kW is below the {kw:g} kW a {c.system} rack draws",
            f"provision at least {kw:g} kW per rack (site.rack.power_kw)",
        )
    if r.units < rs.rack_units:
        bad(
            "site.rack.units",
            f"{r.units}U racks, but a {c.system} rack is {rs.rack_units}U",
            f"set site.rack.units to {rs.rack_units} (and a catalog rack of that height)",
        )
    if design.oob.switch != rs.mgmt_switch:
        bad(
            "oob.switch",
            f"{design.oob.switch}, but the {c.system} rack's own management switches ({rs.mgmt_switches} "
            f"x {rs.mgmt_switch}) are its out-of-band access switches",
            f"set oob.switch: {rs.mgmt_switch}",
        )
    cool = design.site.cooling
    if cool is None:
        bad(
            "site.cooling",
            f"a {c.system} rack is liquid cooled ({rs.liquid_fraction:.0%} of its "
            f"{kw:g} kW to liquid) and the design names no CDU",
            "add site.cooling: {cdu: <one of "
            f"{', '.join(sorted(catalog.cdus)) or 'the catalog cdus'}>, racks_per_cdu: N, redundancy: N+1}}",
        )
    elif cool.cdu not in catalog.cdus:
        bad("site.cooling.cdu", f"unknown CDU {cool.cdu!r}", f"use one of: {', '.join(sorted(catalog.cdus))}")
    else:
        cdu = catalog.cdus[cool.cdu]
        liquid = rs.liquid_kw(catalog)
        if cdu.placement == "in_rack":
            if cool.racks_per_cdu is not None:
                bad(
                    "site.cooling.racks_per_cdu",
                    f"{cool.cdu} is an in-rack CDU: it serves the rack it stands in",
                    "remove racks_per_cdu, or use an in-row CDU",
                )
            if liquid > cdu.capacity_kw + 1e-9:
                bad(
                    "site.cooling.cdu",
                    f"a {c.system} rack puts {liquid:g} kW into its liquid loop, over the "
                    f"{cdu.capacity_kw:g} kW one {cool.cdu} removes",
                    "use a larger CDU (site.cooling.cdu)",
                )
        elif liquid > cdu.capacity_kw + 1e-9:
            bad(
                "site.cooling.cdu",
                f"one {c.system} rack puts {liquid:g} kW into its liquid loop, over the "
                f"{cdu.capacity_kw:g} kW one {cool.cdu} removes",
                "use a larger CDU (site.cooling.cdu)",
            )
        elif cool.racks_per_cdu is not None and cool.racks_per_cdu * liquid > cdu.capacity_kw + 1e-9:
            most = int(cdu.capacity_kw // liquid)
            spare = " (the spare only covers a failed one)" if cool.redundancy == "N+1" else ""
            bad(
                "site.cooling.racks_per_cdu",
                f"{cool.racks_per_cdu} racks x {liquid:g} kW liquid = "
                f"{cool.racks_per_cdu * liquid:g} kW, over the {cdu.capacity_kw:g} kW one {cool.cdu} removes"
                f"{spare}",
                f"set site.cooling.racks_per_cdu to at most {most}, or use a larger CDU",
            )
    if design.backend.topology != "rail_optimized":
        bad(
            "backend.topology",
            f"{design.backend.topology} for a {c.system} rack: its trays' NICs are rails "
            "(NIC i of every tray on rail i)",
            "set backend.topology: rail_optimized",
        )


def _check_whole_racks(design: Design, catalog: Catalog, bad: Any) -> None:
    """Tenants of a rack system rent whole racks (NVLink domains) or scalable units: a rack shared by
    two tenants would share its NVLink fabric, which no partition key or VRF isolates."""
    assert design.compute.system is not None
    trays = catalog.rack_systems[design.compute.system].trays
    order = {h: i for i, h in enumerate(server_names(design))}
    for i, (name, members) in enumerate(tenant_members(design).items()):
        racks = Counter(order[h] // trays for h in members)
        split = sorted(k + 1 for k, n in racks.items() if n != trays)
        if split:
            k = split[0] - 1
            first = design.compute.hostname_prefix + f"{k * trays + 1:0{server_width(design.compute.count)}d}"
            bad(
                f"tenants.{i}",
                f"tenant {name!r} rents part of rack {split[0]} (its trays from {first}): a "
                f"{design.compute.system} rack is one NVLink domain of {trays} trays",
                f"rent whole racks (all {trays} trays of each) or scalable units",
            )


def _check_tenants(design: Design, bad: Any) -> None:
    names = set(server_names(design))
    sus = -(-design.compute.count // design.backend.su_size) if design.backend.su_size else 0
    owner: dict[str, str] = {}
    seen_names: set[str] = set()
    for i, t in enumerate(design.tenants):
        base = f"tenants.{i}"
        if t.name == "infra":
            bad(
                f"{base}.name",
                "'infra' is the provider's own VRF (management nodes, unassigned servers)",
                "give the tenant another name",
            )
        if t.name in seen_names:
            bad(f"{base}.name", f"tenant {t.name!r} is declared twice", "give each tenant one entry")
        seen_names.add(t.name)
        members: list[str] = []
        for j, su in enumerate(t.scalable_units):
            if not 1 <= su <= sus:
                bad(
                    f"{base}.scalable_units.{j}",
                    f"scalable unit {su} does not exist (1..{sus})",
                    "use a unit number within the design",
                )
                continue
            w = server_width(design.compute.count)
            first = (su - 1) * design.backend.su_size + 1
            members += [
                f"{design.compute.hostname_prefix}{k:0{w}d}"
                for k in range(first, min(first + design.backend.su_size, design.compute.count + 1))
            ]
        for j, expr in enumerate(t.servers):
            try:
                expanded = hostlist.expand_hostlist(expr)
            except hostlist.BadHostlist as exc:
                bad(f"{base}.servers.{j}", f"bad hostlist {expr!r}: {exc}", 'write e.g. "gpu[001-016]"')
                continue
            unknown = [h for h in expanded if h not in names]
            if unknown:
                bad(
                    f"{base}.servers.{j}",
                    f"{len(unknown)} unknown servers, e.g. {unknown[0]}",
                    "name compute servers of this design",
                )
            members += [h for h in expanded if h in names]
        if not members:
            bad(base, f"tenant {t.name!r} rents no servers", "list scalable_units or servers")
        for h in members:
            if h in owner and owner[h] != t.name:
                bad(
                    base,
                    f"server {h} is rented by both {owner[h]!r} and {t.name!r}",
                    "a server belongs to at most one tenant; remove it from one of them",
                )
                break
            owner[h] = t.name


def attached_nodes(design: Design) -> str:
    """What the backend-attached management nodes are, in the backend technology's words."""
    return "subnet-manager nodes" if design.backend.technology == "infiniband" else "backend-attached management nodes"


def tenant_members(design: Design) -> dict[str, list[str]]:
    """Servers of each tenant, in server order (the design is already validated)."""
    order = {h: i for i, h in enumerate(server_names(design))}
    out: dict[str, list[str]] = {}
    for t in design.tenants:
        members: set[str] = set()
        for su in t.scalable_units:
            first = (su - 1) * design.backend.su_size
            members.update(list(order)[first : first + design.backend.su_size])
        for expr in t.servers:
            members.update(h for h in hostlist.expand_hostlist(expr) if h in order)
        out[t.name] = sorted(members, key=order.__getitem__)
    return out


def load_design(
    path: Path, overrides: list[str] | None = None, catalog_path: Path | None = None
) -> tuple[Design, Catalog, SourceMap]:
    """Load, merge `extends:`, apply `--set`, validate shape and catalog rules. Raises DesignError."""
    data, src = load_with_extends(Path(path))
    data = apply_overrides(data, src, overrides or [])
    try:
        design = Design.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = err["loc"]
            msg = err["msg"].removeprefix("Value error, ")
            field = ".".join(str(p) for p in loc) or "(design)"
            # model-level rules name their field at the start of the message
            if not loc and (m := re.match(r"([a-z_.]+): (.*)", msg)):
                field, msg = m.group(1), m.group(2)
                loc = tuple(field.split("."))
            if err["type"] == "extra_forbidden":
                msg, fix = "unknown field", did_you_mean(Design, loc) + "`railyard schema` lists every field"
            elif err["type"] == "missing":
                fix = "add this field"
            else:
                fix = _fix_for(err)
            problems.append(Problem(field, msg, fix, where(src, loc)))
        raise DesignError(problems) from None
    catalog = load_catalog(catalog_path or DEFAULT_CATALOG, design.catalog.tables(), src)
    design = resolve_system(design, catalog, src)
    issues = check_against_catalog(design, catalog)
    if issues:
        raise DesignError([Problem(".".join(p), m, fx, where(src, p)) for p, m, fx in issues])
    return design, catalog.with_switch_at(design.backend.switch, backend_speed(design, catalog)), src


def resolve_system(design: Design, catalog: Catalog, src: SourceMap) -> Design:
    """A design of rack-scale systems as the stages read it: compute.server the system's compute tray,
    compute.count racks x trays, and backend.su_size the system's scalable unit (su_racks x trays) unless
    the design sets it. The scalable unit stays counted in servers (compute trays), as for every design:
    tenants' scalable_units, leaves_per_rail and the Slurm blocks all count servers; it must hold whole
    racks, since an NVLink domain is never split between units."""
    c = design.compute
    if c.system is None:
        return design
    problems = [
        Problem(
            f"compute.{f}",
            "is set together with compute.system: a rack system's servers are its "
            "compute trays (compute.racks x trays)",
            f"remove compute.{f}, or remove compute.system and compute.racks",
            where(src, ("compute", f)),
        )
        for f in ("server", "count")
        if f in c.model_fields_set
    ]
    rs = catalog.rack_systems.get(c.system)
    if rs is None:
        problems.append(
            Problem(
                "compute.system",
                f"unknown rack system {c.system!r}",
                f"use one of: {', '.join(sorted(catalog.rack_systems)) or 'none in the catalog'}",
                where(src, ("compute", "system")),
            )
        )
    if problems:
        raise DesignError(problems)
    assert rs is not None and c.racks is not None
    b = design.backend
    su = b.su_size if "su_size" in b.model_fields_set else rs.su_racks * rs.trays
    bad: list[tuple[str, str, str]] = []
    if su % rs.trays:
        bad.append(
            (
                "backend.su_size",
                f"{su} servers is not a whole number of {c.system} racks ({rs.trays} compute "
                "trays each): a scalable unit holds whole NVLink domains",
                f"use a multiple of {rs.trays}, e.g. {rs.su_racks * rs.trays} (NVIDIA's {rs.su_racks} racks)",
            )
        )
    elif su % b.leaves_per_rail:
        bad.append(
            (
                "backend.leaves_per_rail",
                f"{b.leaves_per_rail} leaves per rail do not split a {su}-tray scalable unit evenly",
                f"use a divisor of {su}",
            )
        )
    if design.site.rack.servers_per_rack is not None:
        bad.append(
            (
                "site.rack.servers_per_rack",
                f"is set, but a {c.system} rack holds its {rs.trays} compute trays",
                "remove site.rack.servers_per_rack",
            )
        )
    if bad:
        raise DesignError([Problem(f, m, fx, where(src, tuple(f.split(".")))) for f, m, fx in bad])
    compute = c.model_copy(update={"server": rs.tray, "count": c.racks * rs.trays})
    return design.model_copy(update={"compute": compute, "backend": b.model_copy(update={"su_size": su})})


def _fix_for(err: dict[str, Any]) -> str:
    ctx = err.get("ctx") or {}
    if "expected" in ctx:
        return f"use one of {ctx['expected']}"
    if err["type"].startswith(("greater", "less")):
        return "use a value in range"
    return "see `railyard schema` for the allowed values"
