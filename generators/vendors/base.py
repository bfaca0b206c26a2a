"""What railyard knows about one network OS, in one object per OS (see ``generators.vendors``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from generators.model.plan import Plan
from generators.renderers.netview import SwitchView

# Where a switch model can stand, as the design names it: the InfiniBand backend (backend.switch with
# backend.technology infiniband), the frontend (frontend.switch, frontend.spine_switch), an out-of-band
# access switch (oob.switch: BMC/management VLANs with a DHCP relay) or aggregation switch.
# A RoCE backend switch (backend.switch with backend.technology roce): eBGP underlay, tenant VRFs and
# the lossless RoCEv2 QoS, from plan.backend_net.
Role = Literal["infiniband", "roce", "frontend", "oob-access", "oob-aggregation"]
ROLE_TEXT: dict[Role, str] = {
    "infiniband": "an InfiniBand backend switch",
    "roce": "a RoCE backend switch",
    "frontend": "a frontend switch",
    "oob-access": "an out-of-band access switch",
    "oob-aggregation": "an out-of-band aggregation switch",
}

FabricRenderer = Callable[[Plan], dict[str, str]]
OobRenderer = Callable[[Plan, dict[str, SwitchView]], dict[str, str]]


@dataclass(frozen=True, slots=True)
class Vendor:
    name: str  # the catalog's switch `os`; also the design's frontend.vendor value when it serves the frontend
    serves: frozenset[Role]
    # frontend: the fabric and server port MTU when frontend.mtu is unset (the OS's jumbo MTU)
    mtu: int | None = None
    # frontend leaves source VXLAN from a loopback of their own, planned beside the router-id loopback
    vtep_loopback: bool = False
    # option 82 circuit-id its DHCP relay stamps, over {switch} (hostname) and {port}
    circuit_id: str = "{switch}:{port}"
    summary: str = ""  # the compile summary's "frontend vendor" value
    # RoCE backend: what the switch OS could do that railyard leaves unconfigured (the summary says so)
    roce_unconfigured: str = ""
    # files for the whole frontend fabric, for the backend (InfiniBand or RoCE), and for the given OOB switches
    render_frontend: FabricRenderer | None = None
    render_backend: FabricRenderer | None = None
    render_oob: OobRenderer | None = None

    def circuit_id_of(self, switch: str, port: str) -> str:
        return self.circuit_id.format(switch=switch, port=port)

    @property
    def circuit_id_format(self) -> str:
        """The circuit-id's shape for people (Kea's user-context): "hostname:port" or "port"."""
        return self.circuit_id_of("hostname", "port")
