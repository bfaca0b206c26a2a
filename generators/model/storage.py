"""Storage sizing: how many drives the design's capacity target puts in each storage server, the raw
and usable capacity that gives, and the aggregate large-block bandwidth the servers can deliver.

Kept apart from the BoM because design validation needs it too (a target that does not fit the
servers' bays is a design error), and it depends on nothing but the catalog entry and four numbers.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from generators.model.catalog import StorageModel

HA_MIN_SERVERS = 8  # playbook: storage vendors (Weka, VAST) want at least 8 servers for high availability


@dataclass(frozen=True, slots=True)
class StorageSizing:
    servers: int
    drives_per_server: int
    drive_bays: int
    drive_tb: float
    raw_tb: float
    usable_tb: float
    target_tb: float
    per_server_gbps: float  # GB/s one server delivers: the least of its drives, its software stack, its ports
    bandwidth_gbps: float  # GB/s all servers together, large blocks
    bottleneck: str  # drives, server, network

    @property
    def fits(self) -> bool:
        return self.drives_per_server <= self.drive_bays

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def size_storage(model: StorageModel, servers: int, capacity_pb: float, ports: int, speed_gbps: int) -> StorageSizing:
    """Spread the usable-capacity target evenly over the servers, whole drives per server, rounded up."""
    target_tb = capacity_pb * 1000.0  # decimal PB, as drives are sold
    raw_needed = target_tb / model.usable_fraction
    # a tiny epsilon so a target that is exactly a whole number of drives does not round up by float noise
    drives = max(1, math.ceil(raw_needed / model.drive_tb / servers - 1e-9))
    raw_tb = servers * drives * model.drive_tb
    limits = {
        "drives": drives * model.drive_read_gbps,
        "server": model.throughput_gbps,
        "network": ports * speed_gbps / 8.0,  # Gb/s line rate to GB/s
    }
    bottleneck = min(limits, key=lambda k: (limits[k], k))
    per_server = limits[bottleneck]
    return StorageSizing(
        servers=servers,
        drives_per_server=drives,
        drive_bays=model.drive_bays,
        drive_tb=model.drive_tb,
        raw_tb=raw_tb,
        usable_tb=raw_tb * model.usable_fraction,
        target_tb=target_tb,
        per_server_gbps=per_server,
        bandwidth_gbps=servers * per_server,
        bottleneck=bottleneck,
    )
