"""Design fields of the frontend, out-of-band and IP plan: ASNs, EVPN segment numbering, address pools.

Kept apart from design.py so the network plan's schema reads in one place; design.py only hangs these
models on the design. Every field has a default chosen so the example designs compile unchanged.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from generators.model.netos import FrontendOsName


def _unicast(v: str) -> str:
    """A host's gateway MAC must be one unicast address: not a group (multicast or broadcast) address,
    whose first octet's lowest bit is set, and not all zeros."""
    fix = "use a locally administered unicast MAC, e.g. 02:00:00:00:01:01 (second hex digit 2, 6, a or e)"
    if int(v[:2], 16) & 1:
        raise PydanticCustomError("value_error", "{mac} is a multicast (group) address", {"mac": v, "fix": fix})
    if v == "00:00:00:00:00:00":
        raise PydanticCustomError("value_error", "{mac} is no address", {"mac": v, "fix": fix})
    return v


UnicastMac = Annotated[str, Field(pattern=r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$"), AfterValidator(_unicast)]

# RFC 6996 private ASNs: 2-byte 64512-65534, 4-byte 4200000000-4294967294.
PRIVATE_ASN_RANGES = ((64512, 65534), (4200000000, 4294967294))
Asn = Annotated[int, Field(ge=1, le=4294967294)]
Vlan = Annotated[int, Field(ge=2, le=4094)]
Vni = Annotated[int, Field(ge=1, le=16777215)]


SonicReleaseName = Literal["202405", "202505", "202511", "202605", "master"]
SONIC_RELEASES: tuple[str, ...] = get_args(SonicReleaseName)
DEFAULT_SONIC_RELEASE: SonicReleaseName = "202605"


def _release(v: Any) -> Any:
    # YAML reads an unquoted 202605 as a number; the release is its branch name
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


SonicRelease = Annotated[
    SonicReleaseName,
    BeforeValidator(_release),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "enum": list(SONIC_RELEASES)},
                {"type": "integer", "enum": [int(r) for r in SONIC_RELEASES if r.isdigit()]},
            ]
        }
    ),
]


# What each release's YANG models (sonic-buildimage src/sonic-yang-models, per branch) define, where
# railyard's output depends on it: config_db.json that uses a table or field its release has no model for
# fails SONiC's strict load, or is dropped unvalidated.
SONIC_SAG = frozenset({"master"})  # SAG table and VLAN_INTERFACE static_anycast_gateway (master since 2026-06)
# VLAN_INTERFACE|VlanN mac_addr (a router interface MAC of one's choosing) and the MgmtLeafRouter device type
SONIC_RIF_MAC = frozenset({"202505", "202511", "202605", "master"})
SONIC_MGMT_LEAF_ROUTER = frozenset({"202505", "202511", "202605", "master"})


def sonic_release_field(switches: str) -> Any:
    return Field(
        default=DEFAULT_SONIC_RELEASE,
        description=(
            f"SONiC branch the {switches} run (202405, 202505, 202511, 202605 or master); config_db.json carries "
            "only the tables and fields that release's YANG models define. Default 202605, the newest stable "
            "release railyard knows"
        ),
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # finite numbers only


class FrontendBgp(_Model):
    """RFC 7938 ASN plan: one ASN per spine layer of a pod, one for the core layer, one per leaf.

    One ASN per leaf (not per leaf pair): the two leaves of a pair have no peer link, so a shared
    ASN would make each reject the other's routes as an AS-path loop (or need allowas-in)."""

    core_asn: Asn = Field(default=4200000000, description="3-tier frontends: the ASN all cores share")
    spine_asn_base: Asn = Field(
        default=4200000000, description="spines of pod p get base + p (a 2-tier frontend is one pod: base + 1)"
    )
    leaf_asn_base: Asn = Field(
        default=4201000000, description="leaf fe-leafNN gets base + NN, service leaf fe-svcNN base - NN"
    )


class BackendNetwork(_Model):
    """RFC 7938 ASN plan of an Ethernet (RoCE) backend: one ASN per leaf, one per spine group (the
    spines of one rail plane and pod: they never peer, so sharing an ASN costs nothing and lets a leaf
    see every spine's path as equal), one for the cores. The backend is a fabric of its own: its ASNs
    may repeat the frontend's, but the defaults keep them apart so a route or a log line says which
    fabric it is from."""

    leaf_asn_base: Asn = Field(default=4203000000, description="backend leaf n (in plan order) gets base + n")
    spine_asn_base: Asn = Field(
        default=4204000000,
        description="spine group g (a rail plane's, or a pod's, spines; in plan order) gets base + g",
    )
    core_asn: Asn = Field(default=4204000000, description="3-tier backends: the ASN all cores share")


class Evpn(_Model):
    """Numbering of the EVPN segments. Network k is the provider's infra VRF (k = 0) or the k-th
    tenant (design order); each has a hosts VLAN and a storage VLAN, and one VRF with an L3VNI."""

    vlan_base: Vlan = Field(default=1000, description="network k: hosts VLAN base + 10k, storage VLAN base + 10k + 1")
    l2vni_base: Vni = Field(default=100000, description="L2VNI of a VLAN = base + VLAN id")
    l3vni_base: Vni = Field(default=50000, description="L3VNI of network k = base + k")
    l3vni_vlan_base: Vlan = Field(default=3000, description="SONiC binds an L3VNI to a VLAN: network k uses base + k")
    route_target_admin: int = Field(
        default=64512,
        ge=1,
        le=65535,
        description="administrator field of every "
        "route target (<admin>:<VNI>); explicit RTs, since auto-derived ones embed each "
        "leaf's own ASN and differ between vendors",
    )
    anycast_gateway_mac: UnicastMac = Field(
        default="02:00:00:00:01:01",
        description="static anycast gateway MAC shared by every leaf's SVIs (locally administered)",
    )


BACKEND_POOL = IPv4Network("10.128.0.0/14")


class Addressing(_Model):
    """IPv4 pools the IP plan is carved from. Pools must not overlap; each error names its pool."""

    loopbacks: IPv4Network = Field(
        default=IPv4Network("10.255.0.0/20"), description="router-id / VTEP /32s of frontend and out-of-band routers"
    )
    management: IPv4Network = Field(
        default=IPv4Network("10.254.0.0/16"),
        description="switch (and PDU) management ports: one subnet per OOB access switch",
    )
    bmc: IPv4Network = Field(default=IPv4Network("10.253.0.0/16"), description="BMCs: one subnet per OOB access switch")
    tenants: IPv4Network = Field(
        default=IPv4Network("10.64.0.0/11"),
        description="hosts subnet of each VRF (infra first, then tenants in design order)",
    )
    storage: IPv4Network = Field(
        default=IPv4Network("10.96.0.0/16"),
        description="storage subnet of each VRF, where the storage front-ends answer",
    )
    # fixed subnet sizes: network k (infra 0, then the tenants in design order) takes the k-th block of its
    # pool, so a network that grows, or a tenant added, never moves another network's subnet or address
    hosts_prefix: int = Field(
        default=20,
        ge=8,
        le=29,
        description="prefix length of every VRF's hosts subnet (network k: the k-th block of addressing.tenants)",
    )
    storage_prefix: int = Field(
        default=24,
        ge=8,
        le=29,
        description="prefix length of every VRF's storage subnet (network k: the k-th block of addressing.storage)",
    )
    # left out of the dump when unset, so plan.json of a design without a RoCE backend is unchanged
    backend: IPv4Network = Field(
        default=BACKEND_POOL,
        exclude_if=lambda v: v == BACKEND_POOL,
        description="RoCE backends: one block per rail holding a /31 per server port "
        "(switch side even, host side odd), then the backend switches' loopbacks",
    )
    domain: str | None = Field(
        default=None,
        pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$",
        description="DNS domain for NetBox dns_name and DHCP; default <site.name>.internal",
    )


class OobNetwork(_Model):
    """Out-of-band routing and DHCP: access switches route their management VLANs (L3 at the access
    switch, so its DHCP relay can stamp the ingress port into option 82) to the aggregation pair."""

    bmc_vlan: Vlan = Field(default=10, description="access VLAN of BMC ports")
    mgmt_vlan: Vlan = Field(default=20, description="access VLAN of switch and PDU management ports")
    asn_base: Asn = Field(default=4202000000, description="aggregation pair: base; access switch oobNN: base + NN")
    dhcp_servers: list[IPv4Address] = Field(
        default_factory=list,
        max_length=8,
        description="Kea servers the relays forward to; default: the first two management nodes' infra addresses",
    )


# frontend.vendor names the frontend switches' OS: a network OS (generators.model.netos) that serves the
# frontend; its MTU and VTEP loopbacks come from its row, its files from its renderer module
Vendor = FrontendOsName
