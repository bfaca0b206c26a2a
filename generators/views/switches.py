"""What each frontend and out-of-band switch carries, derived from the plan's links and the network
plan: its ports and peers, which VLANs each host port joins, which VRFs the switch needs.

One view shared by every vendor renderer, the IPAM export and the isolation audit, so a tenant's
segments are decided once and every output agrees on them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from generators.model.plan import Device, Plan, required

FABRIC_TIERS = ("leaf-spine", "spine-core", "access-agg", "access-leaf")
# oob.uplink: frontend wires OOB access switches to frontend service leaves: a fabric uplink on the
# access switch, a routed port in the infra VRF on the leaf (the OOB subnets join the in-band
# management network there, not the frontend underlay, whose leaves pass on only their own prefixes)
OOB_UPLINK_TIER = "access-leaf"


@dataclass(slots=True)
class PortUse:
    port: str
    peer: str
    peer_port: str
    speed_gbps: int
    fabric: bool  # a routed link to another switch (BGP unnumbered)
    vrf: str | None = None  # a routed link inside this VRF (BGP unnumbered): an OOB uplink on a frontend leaf
    untagged: int | None = None  # access VLAN
    tagged: list[int] = field(default_factory=list)  # trunk VLANs

    @property
    def description(self) -> str:
        return f"{self.peer}:{self.peer_port}"


@dataclass(slots=True)
class SwitchView:
    device: Device
    asn: int
    loopback: str  # a.b.c.d/32
    ports: dict[str, PortUse]  # in the order the plan wires them
    vrfs: list[dict[str, Any]] = field(default_factory=list)  # networks with a segment on this switch
    vlans: dict[int, dict[str, Any]] = field(default_factory=dict)  # vlan id -> {network, kind, vni, svi?}

    @property
    def router_id(self) -> str:
        return self.loopback.split("/")[0]

    @property
    def fabric_ports(self) -> list[PortUse]:
        return [p for p in self.ports.values() if p.fabric]

    def vrf_ports(self, vrf: str) -> list[PortUse]:
        return [p for p in self.ports.values() if p.vrf == vrf]


def _ports_by_switch(plan: Plan, network: str, oob_vrf: str | None = None) -> dict[str, dict[str, PortUse]]:
    """Each switch's ports; OOB uplinks on frontend leaves are routed ports in `oob_vrf`."""
    devs = plan.index()
    out: dict[str, dict[str, PortUse]] = defaultdict(dict)
    for lk in plan.links:
        if lk.network != network and lk.tier != OOB_UPLINK_TIER:
            continue
        fabric = lk.tier in FABRIC_TIERS
        for me, my_port, peer, peer_port in (
            (lk.a_device, lk.a_port, lk.b_device, lk.b_port),
            (lk.b_device, lk.b_port, lk.a_device, lk.a_port),
        ):
            if devs[me].kind == "switch" and devs[me].network == network:
                vrf_port = lk.tier == OOB_UPLINK_TIER and network == "frontend"
                out[me][my_port] = PortUse(
                    my_port, peer, peer_port, lk.speed_gbps, fabric and not vrf_port, oob_vrf if vrf_port else None
                )
    return out


def frontend_views(plan: Plan) -> dict[str, SwitchView]:
    """Every frontend switch with its ports, VLAN memberships and VRFs."""
    np_ = required(plan.netplan, "netplan")
    devs = plan.index()
    by_vrf = {n["vrf"]: n for n in np_.networks}
    network_of_host = {h: by_vrf[a["vrf"]] for h, a in np_.hosts.items()}
    infra_vrf = next(n["vrf"] for n in np_.networks if n["index"] == 0)  # network 0: the provider's infra
    ports = _ports_by_switch(plan, "frontend", infra_vrf)
    out: dict[str, SwitchView] = {}
    for d in plan.devices:
        if d.kind != "switch" or d.network != "frontend":
            continue
        v = SwitchView(d, np_.asn[d.name], np_.loopbacks[d.name], ports.get(d.name, {}))
        used: dict[str, dict[str, Any]] = {}
        for p in v.ports.values():
            if p.vrf is not None:
                used[p.vrf] = by_vrf[p.vrf]
                continue
            if p.fabric:
                continue
            kind = devs[p.peer].kind
            if kind == "storage":
                # storage front-ends serve every network, each on its own tagged storage VLAN
                p.tagged = [n["storage"]["vlan"] for n in np_.networks]
                for n in np_.networks:
                    used[n["vrf"]] = n
                    v.vlans[n["storage"]["vlan"]] = {
                        "network": n["name"],
                        "vrf": n["vrf"],
                        "kind": "storage",
                        **n["storage"],
                    }
            else:
                n = network_of_host[p.peer]
                p.untagged = n["hosts"]["vlan"]
                used[n["vrf"]] = n
                v.vlans[n["hosts"]["vlan"]] = {"network": n["name"], "vrf": n["vrf"], "kind": "hosts", **n["hosts"]}
        v.vrfs = [n for n in np_.networks if n["vrf"] in used]
        v.vlans = dict(sorted(v.vlans.items()))
        out[d.name] = v
    return out


def oob_views(plan: Plan) -> dict[str, SwitchView]:
    """Every out-of-band switch (access and aggregation) with its ports; access ports carry the
    BMC or management VLAN of whatever the plan wired to them."""
    np_ = required(plan.netplan, "netplan")
    ports = _ports_by_switch(plan, "oob")
    on_port = {(r["switch"], r["switch_port"]): r for r in np_.oob["ports"]}
    out: dict[str, SwitchView] = {}
    for d in plan.devices:
        if d.kind != "switch" or d.network != "oob":
            continue
        v = SwitchView(d, np_.asn[d.name], np_.loopbacks[d.name], ports.get(d.name, {}))
        for p in v.ports.values():
            r = on_port.get((d.name, p.port))
            if r is not None:
                p.untagged = r["vlan"]
        out[d.name] = v
    return out


def mgmt_addresses(plan: Plan) -> dict[str, dict[str, str]]:
    """Each device's out-of-band port record (its first, as a scan would find), built once per render by
    every vendor: scanning every OOB port for each switch took 3.2 s of a 98,304-GPU compile."""
    out: dict[str, dict[str, str]] = {}
    for r in required(plan.netplan, "netplan").oob["ports"]:
        out.setdefault(r["device"], r)
    return out


def rt(plan: Plan, vni: int) -> str:
    """Route target of a VNI: <admin>:<VNI>, the same on every switch and vendor."""
    return f"{plan.design.frontend.evpn.route_target_admin}:{vni}"
