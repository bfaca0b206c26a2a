"""railyard's one vocabulary: what a device is, the role it plays, the network it is on and the tier a
link joins (NetBox keeps such names as `choices`). Every stage, view and renderer names them from here.

The members are `StrEnum`s: each is its plain string (`Role.LEAF == "leaf"`, `f"{Role.LEAF}"` is
"leaf"), so plan.json and every file written from them read exactly as the strings always did.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """What a device is (its catalog table): a plan device's `kind`."""

    SERVER = "server"  # a GPU server, or a rack system's compute tray
    SWITCH = "switch"
    STORAGE = "storage"  # a storage server
    MANAGEMENT = "management"  # a management node (subnet manager, Slurm controller, ...)
    PDU = "pdu"  # a rack PDU, or a rack system's power shelf
    CDU = "cdu"  # a coolant distribution unit


class Role(StrEnum):
    """What a device does where it stands: a plan device's `role`."""

    COMPUTE = "compute"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"
    STORAGE = "storage"
    MANAGEMENT = "management"
    NVLINK = "nvlink"  # a rack system's NVLink switch tray
    PDU = "pdu"
    POWER_SHELF = "power-shelf"
    POWER_SIDECAR = "power-sidecar"  # an 800 VDC power sidecar on a row position (kind pdu)
    CDU = "cdu"


class Network(StrEnum):
    """The network a switch or link belongs to."""

    BACKEND = "backend"  # GPU to GPU (east-west): InfiniBand or RoCE
    FRONTEND = "frontend"  # north-south Ethernet: tenants, storage on the frontend, management
    STORAGE = "storage"  # a dedicated storage fabric (storage.network: dedicated)
    OOB = "oob"  # out-of-band management: BMCs, switch and PDU management ports
    NVLINK = "nvlink"  # a rack system's NVLink domain (the backplane: devices only, no routed links)


class Tier(StrEnum):
    """Which two layers a link joins."""

    SERVER_LEAF = "server-leaf"
    LEAF_SPINE = "leaf-spine"
    SPINE_CORE = "spine-core"
    MGMT_ACCESS = "mgmt-access"  # a management port to its out-of-band access switch
    ACCESS_AGG = "access-agg"  # an out-of-band access switch to its aggregation pair
    ACCESS_LEAF = "access-leaf"  # an out-of-band access switch to a frontend service leaf (oob.uplink: frontend)


# The height of a role in a fat tree: a link goes up from the lower rank to the higher. Every role not
# listed (servers, storage and management nodes: the endpoints) is rank 0, below the leaves.
RANK: dict[str, int] = {Role.LEAF: 1, Role.SPINE: 2, Role.CORE: 3}


def rank(role: str) -> int:
    """A role's fat-tree rank: endpoints 0, leaf 1, spine 2, core 3."""
    return RANK.get(role, 0)


class Duty(StrEnum):
    """Where a switch model can stand, as the design names it, and so what its OS must render: the
    InfiniBand backend, a RoCE backend (eBGP underlay, tenant VRFs, lossless RoCEv2 QoS from
    plan.backend_net), the frontend, an out-of-band access switch (BMC/management VLANs with a DHCP
    relay) or an out-of-band aggregation switch."""

    INFINIBAND = "infiniband"
    ROCE = "roce"
    FRONTEND = "frontend"
    OOB_ACCESS = "oob-access"
    OOB_AGGREGATION = "oob-aggregation"


DUTY_TEXT: dict[Duty, str] = {
    Duty.INFINIBAND: "an InfiniBand backend switch",
    Duty.ROCE: "a RoCE backend switch",
    Duty.FRONTEND: "a frontend switch",
    Duty.OOB_ACCESS: "an out-of-band access switch",
    Duty.OOB_AGGREGATION: "an out-of-band aggregation switch",
}
