"""A SONiC switch's data plane from its generated ``config_db.json``, built out of Linux interfaces in
the namespaces of a :func:`tests.netns_fabric.frr_fabric`, so the generated ``frr.conf`` runs over it.

The translation, table by table (nothing here knows whether the switch is a frontend leaf or a
backend leaf; only the tables decide):
- ``LOOPBACK_INTERFACE``: the addresses on ``lo`` of the switch's namespace (the VTEP source among them).
- ``VRF``: one namespace per VRF (FRR's netns VRF backend: this kernel class has no VRF devices, see
  tests/netns_fabric.py); ``vni`` is the L3VNI, which FRR binds itself from its ``vrf`` block.
- ``VLAN`` + ``VLAN_INTERFACE``: a bridge named ``VlanN`` per VLAN (this kernel class has no VLAN
  filtering, so one bridge per VLAN) in its SVI's VRF namespace; the bridge is the SVI and carries the
  SVI's addresses and router MAC: ``mac_addr`` where set, SAG's ``gateway_mac`` where the SVI is a
  ``static_anycast_gateway``, else the switch's system MAC (not in config_db.json: SONiC takes it from
  the platform; derived here from the switch name, one per switch as on hardware).
- ``VXLAN_TUNNEL`` + ``VXLAN_TUNNEL_MAP``: a ``vx<VNI>`` VXLAN device per mapped VLAN, sourced from the
  tunnel's ``src_ip`` (UDP 4789, no data-plane learning: EVPN fills the FDB), created in the switch's
  namespace (the underlay) and moved into the VLAN's VRF namespace, as FRR's netns backend expects.
- ``VLAN_MEMBER``: an untagged member port joins its VLAN's bridge; a tagged member (no 802.1Q devices
  here) becomes one veth per VLAN named ``<port>.<vlan>`` on both ends.
- ``INTERFACE``: ports in a VRF move to its namespace; addresses on them are set; the link-local-only
  ports are FRR's business (unnumbered BGP).
Tables that change nothing a namespace can show (port speeds, QoS, management) are skipped by name;
any other table is refused, so a new table is translated, or listed as skipped, on purpose. The RoCE
backend's lossless QoS (DSCP maps, PFC, buffers, WRED/ECN, PFC watchdog) is not exercised here: veths
have no PFC, no queues and no buffers, so those tables are checked against SONiC's YANG models only.

A host's side comes from its generated netplan (:func:`netplan_commands`): netplan itself needs
systemd-networkd, so its YAML is read and turned into the ``ip`` commands networkd would issue.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.netns_fabric import Switch, check_ifname, run_cmd

VXLAN_PORT = 4789
# no reachability consequence inside namespaces: physical port settings, QoS/buffers, management plane
SKIPPED_TABLES = frozenset(
    {
        "DEVICE_METADATA",
        "PORT",
        "MGMT_PORT",
        "MGMT_INTERFACE",
        "MGMT_VRF_CONFIG",
        "VXLAN_EVPN_NVO",
        "SAG",
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "BUFFER_PORT_INGRESS_PROFILE_LIST",
        "BUFFER_PORT_EGRESS_PROFILE_LIST",
        "CABLE_LENGTH",
        "DSCP_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PORT_QOS_MAP",
        "QUEUE",
        "SCHEDULER",
        "WRED_PROFILE",
        "PFC_WD",
        "FLEX_COUNTER_TABLE",
        # the switch's own management plane (issue 38): services reached over its management port
        "NTP",
        "NTP_SERVER",
        "SYSLOG_SERVER",
        "DNS_NAMESERVER",
        "SNMP",
        "SNMP_USER",
        "TACPLUS",
        "TACPLUS_SERVER",
        "RADIUS",
        "RADIUS_SERVER",
        "AAA",
    }
)
TRANSLATED_TABLES = frozenset(
    {
        "LOOPBACK_INTERFACE",
        "VRF",
        "VLAN",
        "VLAN_INTERFACE",
        "VLAN_MEMBER",
        "VXLAN_TUNNEL",
        "VXLAN_TUNNEL_MAP",
        "INTERFACE",
    }
)


class Untranslatable(ValueError):
    """config_db.json holds something this translator cannot build (named, with the table)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One VLAN of a switch: its bridge, SVI and VNI."""

    vlan: int
    vrf: str | None  # the SVI's VRF (None: default VRF, or no SVI)
    vni: int | None
    addresses: tuple[str, ...]  # the SVI's, a.b.c.d/len
    mac: str | None  # the SVI's router MAC when config_db.json sets one
    untagged: tuple[str, ...]
    tagged: tuple[str, ...]

    @property
    def bridge(self) -> str:
        return f"Vlan{self.vlan}"

    @property
    def vxlan(self) -> str:
        return f"vx{self.vni}"


@dataclass(frozen=True, slots=True)
class RoutedPort:
    port: str
    vrf: str | None
    addresses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SwitchDataplane:
    name: str
    loopbacks: tuple[str, ...]
    vtep: str | None  # VXLAN source address
    vrfs: dict[str, int | None]  # VRF -> L3VNI
    segments: dict[int, Segment]
    routed: dict[str, RoutedPort] = field(default_factory=dict)

    @property
    def system_mac(self) -> str:
        h = hashlib.sha256(self.name.encode()).digest()
        return "02:" + ":".join(f"{b:02x}" for b in h[:5])  # locally administered, unicast

    def memberships(self, port: str) -> list[tuple[Segment, bool]]:
        """The segments `port` is a member of, with whether tagged."""
        out = [(s, False) for s in self.segments.values() if port in s.untagged]
        return out + [(s, True) for s in self.segments.values() if port in s.tagged]


def _keys(table: Mapping[str, Any]) -> list[tuple[str, ...]]:
    return [tuple(k.split("|")) for k in table]


def from_config_db(name: str, doc: Mapping[str, Any]) -> SwitchDataplane:
    """Read the data plane of switch `name` out of its config_db.json document."""
    unknown = sorted(set(doc) - SKIPPED_TABLES - TRANSLATED_TABLES)
    if unknown:
        raise Untranslatable(
            f"{name}: config_db.json tables {', '.join(unknown)} have no namespace translation; "
            "translate them in tests/netns_dataplane.py or list them in SKIPPED_TABLES"
        )
    loopbacks = tuple(k[1] for k in _keys(doc.get("LOOPBACK_INTERFACE", {})) if len(k) == 2)
    tunnels = doc.get("VXLAN_TUNNEL", {})
    if len(tunnels) > 1:
        raise Untranslatable(f"{name}: VXLAN_TUNNEL has {len(tunnels)} tunnels; one VTEP per switch is translated")
    vtep = next(iter(tunnels.values()))["src_ip"] if tunnels else None
    if vtep is not None and not any(a.split("/")[0] == vtep for a in loopbacks):
        raise Untranslatable(f"{name}: VXLAN_TUNNEL src_ip {vtep} is on no LOOPBACK_INTERFACE")
    vrfs = {v: (int(e["vni"]) if "vni" in e else None) for v, e in doc.get("VRF", {}).items()}
    sag_mac = doc.get("SAG", {}).get("GLOBAL", {}).get("gateway_mac")
    vni_of: dict[str, int] = {}
    for key, e in doc.get("VXLAN_TUNNEL_MAP", {}).items():
        if e["vlan"] in vni_of:
            raise Untranslatable(f"{name}: VXLAN_TUNNEL_MAP {key} maps {e['vlan']} a second time")
        vni_of[e["vlan"]] = int(e["vni"])
    svi = doc.get("VLAN_INTERFACE", {})
    members = _keys(doc.get("VLAN_MEMBER", {}))
    segments: dict[int, Segment] = {}
    for vname, e in doc.get("VLAN", {}).items():
        s = svi.get(vname, {})
        vrf = s.get("vrf_name")
        if vrf is not None and vrf not in vrfs:
            raise Untranslatable(f"{name}: VLAN_INTERFACE {vname} vrf_name {vrf} is not in VRF")
        mac = s.get("mac_addr") or (sag_mac if s.get("static_anycast_gateway") == "true" else None)
        if s.get("static_anycast_gateway") == "true" and sag_mac is None:
            raise Untranslatable(
                f"{name}: VLAN_INTERFACE {vname} is a static anycast gateway but SAG has no gateway_mac"
            )
        mode = {k[1]: doc["VLAN_MEMBER"]["|".join(k)]["tagging_mode"] for k in members if k[0] == vname}
        segments[int(e["vlanid"])] = Segment(
            vlan=int(e["vlanid"]),
            vrf=vrf,
            vni=vni_of.get(vname),
            addresses=tuple(k[1] for k in _keys(svi) if len(k) == 2 and k[0] == vname),
            mac=mac,
            untagged=tuple(sorted(p for p, m in mode.items() if m == "untagged")),
            tagged=tuple(sorted(p for p, m in mode.items() if m == "tagged")),
        )
    unmapped = sorted(set(vni_of) - {s.bridge for s in segments.values()})
    if unmapped:
        raise Untranslatable(f"{name}: VXLAN_TUNNEL_MAP maps {', '.join(unmapped)}, which VLAN does not have")
    routed: dict[str, RoutedPort] = {}
    itab = doc.get("INTERFACE", {})
    for port, e in itab.items():
        if "|" in port:
            continue
        addrs = tuple(k[1] for k in _keys(itab) if len(k) == 2 and k[0] == port)
        if e.get("vrf_name") is not None or addrs:
            routed[port] = RoutedPort(port, e.get("vrf_name"), addrs)
    return SwitchDataplane(name, loopbacks, vtep, vrfs, dict(sorted(segments.items())), routed)


def _ip(netns: str, *args: str) -> None:
    run_cmd(["ip", "-n", netns, *args])


def build(sw: Switch, dp: SwitchDataplane) -> None:
    """The switch's loopbacks, bridges/SVIs and VXLAN devices in its namespaces (hosts attach later)."""
    missing = sorted(set(dp.vrfs) - set(sw.vrf_netns))
    if missing:
        raise Untranslatable(f"{dp.name}: VRFs {', '.join(missing)} have no namespace: give frr_fabric vrfs=")
    for a in dp.loopbacks:
        _ip(sw.netns, "addr", "add", a, "dev", "lo")
    for r in dp.routed.values():
        # a routed port the fabric already cabled (a switch-to-switch link); host ports come with attach()
        if run_cmd(["ip", "-n", sw.netns, "link", "show", "dev", r.port], check=False).returncode != 0:
            continue
        ns = sw.netns_of(r.vrf)
        if ns != sw.netns:
            _ip(sw.netns, "link", "set", r.port, "netns", ns)
        for a in r.addresses:
            _ip(ns, "addr", "add", a, "dev", r.port)
        _ip(ns, "link", "set", r.port, "up")
    for seg in dp.segments.values():
        ns = sw.netns_of(seg.vrf)
        _ip(ns, "link", "add", check_ifname(seg.bridge), "type", "bridge", "stp_state", "0")
        _ip(ns, "link", "set", seg.bridge, "address", seg.mac or dp.system_mac)
        for a in seg.addresses:
            _ip(ns, "addr", "add", a, "dev", seg.bridge)
        _ip(ns, "link", "set", seg.bridge, "up")
        if seg.vni is None:
            continue
        if dp.vtep is None:
            raise Untranslatable(f"{dp.name}: VLAN {seg.vlan} maps VNI {seg.vni} but VXLAN_TUNNEL has no src_ip")
        _ip(
            sw.netns,
            "link",
            "add",
            check_ifname(seg.vxlan),
            "type",
            "vxlan",
            "id",
            str(seg.vni),
            "local",
            dp.vtep,
            "dstport",
            str(VXLAN_PORT),
            "nolearning",
        )
        if ns != sw.netns:
            _ip(sw.netns, "link", "set", seg.vxlan, "netns", ns)
        _ip(ns, "link", "set", seg.vxlan, "master", seg.bridge)
        run_cmd(["bridge", "-n", ns, "link", "set", "dev", seg.vxlan, "learning", "off"])
        _ip(ns, "link", "set", seg.vxlan, "up")


def attach(sw: Switch, dp: SwitchDataplane, port: str, host_netns: str, host_port: str) -> list[str]:
    """Cable `host_port` of a host namespace to the switch's `port` as config_db.json configures that port;
    returns the host-side interface names (one per tagged VLAN on a trunk, else ``host_port``)."""
    joined = dp.memberships(port)
    routed = dp.routed.get(port)
    if not joined and routed is None:
        raise Untranslatable(f"{dp.name}: {port} is in no VLAN_MEMBER and no INTERFACE entry: nothing to attach to")
    made = []
    if routed is not None:
        # a routed port to a host (a /31 to a NIC); a cabled switch-to-switch one is build()'s
        _veth(sw.netns_of(routed.vrf), port, host_netns, host_port)
        for a in routed.addresses:
            _ip(sw.netns_of(routed.vrf), "addr", "add", a, "dev", port)
        made.append(host_port)
    for seg, tagged in joined:
        mine, theirs = (f"{port}.{seg.vlan}", f"{host_port}.{seg.vlan}") if tagged else (port, host_port)
        ns = sw.netns_of(seg.vrf)
        _veth(ns, mine, host_netns, theirs)
        _ip(ns, "link", "set", mine, "master", seg.bridge)
        made.append(theirs)
    return made


def _veth(netns: str, name: str, peer_netns: str, peer: str) -> None:
    run_cmd(
        [
            "ip",
            "link",
            "add",
            check_ifname(name),
            "netns",
            netns,
            "type",
            "veth",
            "peer",
            "name",
            check_ifname(peer),
            "netns",
            peer_netns,
        ]
    )
    _ip(netns, "link", "set", name, "up")
    _ip(peer_netns, "link", "set", peer, "up")


# the netplan keys the generator writes for a backend NIC: anything else is refused, not ignored
NETPLAN_KEYS = frozenset({"dhcp4", "dhcp6", "accept-ra", "mtu", "addresses", "routes", "routing-policy"})


def netplan_commands(doc: Mapping[str, Any], ifaces: Sequence[str]) -> list[list[str]]:
    """``ip`` argument lists that configure `ifaces` as the netplan v2 document `doc` does: mtu,
    addresses, routes (``table`` too) and routing-policy rules; every other key is refused, so a key the
    generator gains is translated here on purpose rather than silently not tested."""
    net = doc["network"]
    if net.get("version") != 2:
        raise Untranslatable(f"netplan version {net.get('version')!r}: only version 2 is translated")
    ethernets = net.get("ethernets", {})
    cmds: list[list[str]] = []
    for name in ifaces:
        if name not in ethernets:
            raise Untranslatable(f"netplan has no ethernets.{name} (it has {', '.join(sorted(ethernets))})")
        e = ethernets[name]
        unknown = sorted(set(e) - NETPLAN_KEYS)
        if unknown:
            raise Untranslatable(f"netplan ethernets.{name}: {', '.join(unknown)} have no translation")
        if e.get("dhcp4") or e.get("dhcp6") or e.get("accept-ra"):
            raise Untranslatable(f"netplan ethernets.{name}: DHCP/RA cannot be translated (no server here)")
        if "mtu" in e:
            cmds.append(["link", "set", "dev", check_ifname(name), "mtu", str(e["mtu"])])
        cmds += [["addr", "add", a, "dev", name] for a in e.get("addresses", [])]
        cmds.append(["link", "set", "dev", name, "up"])
        for r in e.get("routes", []):
            extra = sorted(set(r) - {"to", "via", "table"})
            if extra:
                raise Untranslatable(f"netplan ethernets.{name}.routes: {', '.join(extra)} have no translation")
            table = ["table", str(r["table"])] if "table" in r else []
            cmds.append(["route", "add", r["to"], "via", r["via"], "dev", name, *table])
        for p in e.get("routing-policy", []):
            extra = sorted(set(p) - {"from", "to", "table", "priority"})
            if extra:
                raise Untranslatable(f"netplan ethernets.{name}.routing-policy: {', '.join(extra)} have no translation")
            sel = [x for k in ("from", "to") if k in p for x in (k, p[k])]
            prio = ["priority", str(p["priority"])] if "priority" in p else []
            cmds.append(["rule", "add", *sel, "table", str(p["table"]), *prio])
    return cmds


def apply_netplan(netns: str, doc: Mapping[str, Any], ifaces: Sequence[str]) -> None:
    """Configure `ifaces` (already in `netns`) from the netplan document `doc`."""
    for cmd in netplan_commands(doc, ifaces):
        _ip(netns, *cmd)
