"""Arista EOS through AVD: railyard builds each switch's AVD structured config (``eos_cli_config_gen``
input) from the plan, Arista's own library (pyavd) validates it, and the EOS CLI is pyavd's text for it:
rendered by templates/eos.cfg.j2 (eos_text), which prints the keys railyard builds exactly as pyavd's
eos_cli_config_gen templates do in a fraction of their time, or by those templates themselves for a
structured config outside that subset (eos_cli).

Outputs (``frontend.vendor: eos``):
- ``frontend/<switch>/eos.cfg``: each frontend switch's structured config (frontend_structured_config),
  validated by ``validate_structured_config``, rendered as pyavd renders it (eos_cli).
- ``frontend/avd/fabric.yml``: the same fabric as AVD ``eos_designs`` inputs (node definitions with every
  uplink as the plan cables it, ASNs and loopbacks from the network plan, tenants/VRFs/SVIs, servers and
  storage as connected endpoints); ``frontend/avd/hosts.yml``: host -> AVD node type. Together they are
  what an AVD Ansible inventory would hold, for ``arista.avd`` users; eos_designs renders the same eos.cfg
  from them (tests/test_eos.py, 2 and 3 tiers). eos_designs is not run in the compile: it validates the
  whole fabric per switch and derives every switch's facts first, the slow part at scale.
- ``oob/<switch>/eos.cfg`` for EOS out-of-band aggregation switches: not part of the AVD fabric (the
  access switches are SONiC or Cumulus), structured config built here the same way.
- ``backend/<switch>/eos.cfg`` for EOS RoCE backend switches (``backend.technology: roce``): AVD
  structured config built here from plan.backend_net (AVD has no RoCE node type).

Design notes: the underlay is eBGP over IPv6 link-local (AVD ``underlay_rfc5549``), the overlay
eBGP EVPN between loopbacks (AVD's standard), leaves in a pair without MLAG (the plan has no peer
link), per-leaf ASNs from the RFC 7938 plan, route targets ``<admin>:<VNI>`` as on SONiC. Each leaf
carries only the segments of hosts cabled to it (AVD tags in fabric.yml). In 3 tiers the cores are
EVPN route servers of the pods' spines, so EVPN routes cross pods.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import yaml

from generators.model.plan import Plan, required
from generators.model.secrets import placeholder, salt
from generators.model.sections import BackendPort, BackendSwitch, RoceQos
from generators.model.vocabulary import rank
from generators.text.yamltext import SAFE_DUMPER
from generators.vendors import eos_text
from generators.vendors.sonic import ECN_MARK_PERCENT, ECN_MAX_BYTES, ECN_MIN_BYTES, PFC_WD_MS
from generators.views.switches import PortUse, SwitchView, frontend_views, mgmt_addresses, rt

# AVD node types (the `type` of hosts.yml) and the fabric.yml key holding their nodes: the 3-tier core is
# AVD's "super-spine", whose node settings live under `super_spine`
NODE_TYPE = {"leaf": "l3leaf", "spine": "spine", "core": "super-spine"}
NODE_KEY = {"leaf": "l3leaf", "spine": "spine", "core": "super_spine"}
FABRIC = "FRONTEND"


class AvdValidationError(RuntimeError):
    """AVD refused inputs railyard generated: a railyard bug, reported with AVD's own messages."""


def _eos_speed(gbps: int) -> str:
    # a 400G QSFP-DD port runs 100G/200G over 4 lanes and 400G over 8
    return f"{gbps}g-8" if gbps >= 400 else f"{gbps}g-4"


def _mgmt(plan: Plan, name: str, mgmt: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    r = (mgmt if mgmt is not None else mgmt_addresses(plan)).get(name)
    return {"mgmt_ip": r["address"], "gateway": r["gateway"]} if r is not None else {}


def _up_down(v: SwitchView, views: dict[str, SwitchView]) -> tuple[list[PortUse], list[PortUse]]:
    """The switch's fabric ports to the tier above and to the tier below, in port order."""
    me = rank(v.device.role)
    ups = [p for p in v.fabric_ports if rank(views[p.peer].device.role) > me]
    return ups, [p for p in v.fabric_ports if rank(views[p.peer].device.role) < me]


def _uplinks(v: SwitchView, views: dict[str, SwitchView]) -> dict[str, list[str]]:
    """The switch's links to the tier above, in port order (AVD's three aligned uplink lists)."""
    ups = _up_down(v, views)[0]
    return {
        "uplink_interfaces": [p.port for p in ups],
        "uplink_switches": [p.peer for p in ups],
        "uplink_switch_interfaces": [p.peer_port for p in ups],
    }


def avd_inputs(plan: Plan) -> tuple[dict[str, Any], dict[str, str]]:
    """(fabric-wide AVD inputs, host -> node type) for the frontend."""
    return _avd_inputs(plan, frontend_views(plan))


def _avd_inputs(plan: Plan, views: dict[str, SwitchView]) -> tuple[dict[str, Any], dict[str, str]]:
    np_ = required(plan.netplan, "netplan")
    devs = plan.index()
    mtu = np_.mtu
    admin = str(plan.design.frontend.evpn.route_target_admin)
    three_tier = any(v.device.role == "core" for v in views.values())
    nodes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    pods: dict[int, list[dict[str, Any]]] = defaultdict(list)
    tags_of: dict[str, set[str]] = defaultdict(set)
    mgmt = mgmt_addresses(plan)
    for name, v in views.items():
        m = _mgmt(plan, name, mgmt)
        # ids are numbered per node type below; AVD only needs them unique within a type
        node: dict[str, Any] = {
            "name": name,
            "id": 0,
            "bgp_as": str(v.asn),
            "loopback_ipv4_address": v.router_id,
            **_uplinks(v, views),
        }
        if "mgmt_ip" in m:
            # each OOB access switch has its own management subnet, so the gateway is per node
            node["mgmt_ip"], node["mgmt_gateway"] = m["mgmt_ip"], m["gateway"]
        if v.device.role == "leaf":
            node["vtep_loopback_ipv4_address"] = np_.vteps[name].split("/")[0]
            for seg in v.vlans.values():
                tags_of[name].add(f"{seg['network']}-{seg['kind']}")
            node["filter"] = {"tags": sorted(tags_of[name]) or ["none"]}
            groups[int(v.device.attrs["pair"])].append(node)
        elif three_tier and v.device.role == "spine":
            # AVD's evpn_role "server" has no default route servers: without this a pod's spines would
            # peer EVPN with their own leaves only and no pod would learn another's routes
            node["evpn_route_servers"] = list(dict.fromkeys(node["uplink_switches"]))
            # pods as node groups: AVD's pod_name is a group variable of an inventory, no node key
            pods[int(v.device.attrs["pod"])].append(node)
        else:
            nodes[v.device.role].append(node)
    for nlist in [*nodes.values(), [n for p in sorted(pods) for n in pods[p]]]:
        for i, node in enumerate(nlist):
            node["id"] = i + 1
    leaf_ids = 0
    for pair in sorted(groups):
        for node in groups[pair]:
            leaf_ids += 1
            node["id"] = leaf_ids

    vrfs = []
    for n in np_.networks:
        svis = []
        for kind in ("hosts", "storage"):
            s = n[kind]
            svis.append(
                {
                    "id": s["vlan"],
                    "name": f"{n['name']}-{kind}",
                    "enabled": True,
                    "tags": [f"{n['name']}-{kind}"],
                    "mtu": mtu,
                    "ip_address_virtual": f"{s['gateway']}/{s['subnet'].split('/')[1]}",
                }
            )
        vrfs.append({"name": n["vrf"], "vrf_vni": n["l3vni"], "svis": svis})

    servers: list[dict[str, Any]] = []
    endpoints: dict[str, list[tuple[str, str, str, int]]] = defaultdict(list)
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier == "server-leaf":
            endpoints[lk.a_device].append((lk.a_port, lk.b_device, lk.b_port, lk.speed_gbps))
    for host, ports in endpoints.items():
        d = devs[host]
        adapter: dict[str, Any] = {
            "endpoint_ports": [p[0] for p in ports],
            "switches": [p[1] for p in ports],
            "switch_ports": [p[2] for p in ports],
            "speed": _eos_speed(ports[0][3]),
            "mtu": mtu,
        }
        if d.kind == "storage":
            adapter |= {"mode": "trunk", "vlans": ",".join(str(n["storage"]["vlan"]) for n in np_.networks)}
        else:
            vrf = np_.hosts[host]["vrf"]
            vlan = next(n["hosts"]["vlan"] for n in np_.networks if n["vrf"] == vrf)
            adapter |= {"mode": "access", "vlans": str(vlan)}
        servers.append({"name": host, "adapters": [adapter]})

    fabric: dict[str, Any] = {
        "fabric_name": FABRIC,
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "ebgp",
        "underlay_rfc5549": True,
        "overlay_rt_type": {
            "admin_subfield": admin,
            "vrf_admin_subfield": admin,
            "vlan_assigned_number_subfield": "mac_vrf_vni",
        },
        "p2p_uplinks_mtu": mtu,
        "bgp_maximum_paths": 64,
        "bgp_ecmp": 64,
        "mgmt_interface_settings": {"interface": "Management1", "vrf": _mgmt_vrf(plan)},
        "l3leaf": {
            "defaults": {
                "loopback_ipv4_pool": str(plan.design.addressing.loopbacks),
                "vtep_loopback_ipv4_pool": str(plan.design.addressing.loopbacks),
                "virtual_router_mac_address": np_.anycast_gateway_mac,
            },
            "node_groups": [{"group": f"pair{p}", "mlag": False, "nodes": groups[p]} for p in sorted(groups)],
        },
        "tenants": [{"name": FABRIC, "mac_vrf_vni_base": plan.design.frontend.evpn.l2vni_base, "vrfs": vrfs}],
        "servers": servers,
        **_avd_mgmt_inputs(plan),
    }
    pool = {"loopback_ipv4_pool": str(plan.design.addressing.loopbacks)}
    if nodes["spine"]:
        fabric["spine"] = {"defaults": pool, "nodes": nodes["spine"]}
    if pods:
        fabric["spine"] = {
            "defaults": pool,
            "node_groups": [{"group": f"pod{p}", "nodes": pods[p]} for p in sorted(pods)],
        }
    if nodes["core"]:
        # the cores relay EVPN between the pods' spines (AVD's super-spine default is no EVPN at all)
        fabric[NODE_KEY["core"]] = {"defaults": pool | {"evpn_role": "server"}, "nodes": nodes["core"]}
    hosts = {name: NODE_TYPE[v.device.role] for name, v in views.items()}
    return fabric, hosts


MGMT_VRF = "MGMT"  # AVD's default management VRF
USER_ROLE = {"admin": (15, "network-admin"), "operator": (1, "network-operator")}
SNMP_GROUP = {"ro": "RAILYARD-RO", "rw": "RAILYARD-RW"}


def _mgmt_vrf(plan: Plan) -> str:
    return MGMT_VRF if required(plan.netplan, "netplan").management.vrf else "default"


def _local_users(plan: Plan) -> list[dict[str, Any]]:
    """The plan's local users in AVD's keys: a SHA-512 crypt hash (computed at deploy) and SSH keys. One
    fabric.yml gives every switch the same hash, so the salt is per design and user (not per switch)."""
    out = []
    for u in required(plan.netplan, "netplan").management.users:
        privilege, role = USER_ROLE[u.role]
        user: dict[str, Any] = {
            "name": u.name,
            "privilege": privilege,
            "role": role,
            "sha512_password": placeholder(u.password_secret, "sha512-crypt", salt(plan.design.name, u.name)),
        }
        # EOS keeps two keys per user (ssh-key and secondary ssh-key); the design check allows no more
        for k, key in zip(("ssh_key", "secondary_ssh_key"), u.ssh_keys, strict=False):
            user[k] = key
        out.append(user)
    return out


def _snmp_users(plan: Plan) -> list[dict[str, Any]]:
    return [
        {
            "name": u.name,
            "group": SNMP_GROUP[u.access],
            "version": "v3",
            "auth": "sha",
            "auth_passphrase": placeholder(u.auth_secret),
            "priv": "aes",
            "priv_passphrase": placeholder(u.priv_secret),
        }
        for u in required(plan.netplan, "netplan").management.snmp_users
    ]


def _snmp_groups(plan: Plan) -> list[dict[str, Any]]:
    access = sorted({u.access for u in required(plan.netplan, "netplan").management.snmp_users})
    return [{"name": SNMP_GROUP[a], "version": "v3", "authentication": "priv"} for a in access]


def _bgp_password(plan: Plan, peer_group: str) -> dict[str, str]:
    """A peer group's session password (TCP-MD5), EOS type 7 keyed by the group's name, made at deploy."""
    mp = required(plan.netplan, "netplan").management
    return {"password": placeholder(mp.bgp_secret, "eos-bgp7", peer_group)} if mp.bgp_auth == "md5" else {}


def mgmt_plane_structured(plan: Plan, mgmt_port: bool = True) -> dict[str, Any]:
    """The management plane in eos_cli_config_gen keys: what eos_designs makes of _avd_mgmt_inputs (tests/
    test_eos.py holds the two to the same eos.cfg), for every EOS switch railyard renders. A switch with
    no management port planned reaches the services in-band, in the default VRF."""
    mp = required(plan.netplan, "netplan").management
    np_ = required(plan.netplan, "netplan")
    vrf = _mgmt_vrf(plan) if mgmt_port else "default"
    sc: dict[str, Any] = {
        "local_users": _local_users(plan),
        # eos_designs prefers the first server (set_first_ntp_server_as_preferred)
        "ntp": {
            "servers": [
                {"name": a, "iburst": True} | ({"preferred": True} if i == 0 else {}) for i, a in enumerate(mp.ntp)
            ],
            "vrf": vrf,
        },
        "logging": {"vrfs": [{"name": vrf, "hosts": [{"name": a, "protocol": "udp"} for a in mp.syslog]}]},
        "ip_name_server": {"vrfs": [{"name": vrf, "servers": [{"ip_address": a} for a in mp.dns]}]},
        "dns_domain": np_.domain,
        "snmp_server": {
            "users": _snmp_users(plan),
            "groups": _snmp_groups(plan),
            "vrfs": [{"name": vrf, "enable": True}],
        },
        "management_ssh": {"vrfs": [{"name": vrf, "enable": True}]},
    }
    if mgmt_port:
        sc["ip_domain_lookup"] = {"source_interfaces": [{"name": "Management1", "vrf": vrf}]}
    groups: list[dict[str, Any]] = []
    login: list[str] = []
    if mp.tacacs:
        groups.append(
            {
                "name": "RAILYARD-TACACS",
                "type": "tacacs+",
                "servers": [{"server": s.address, "vrf": vrf} for s in mp.tacacs],
            }
        )
        sc["tacacs_servers"] = {
            "hosts": [
                {
                    "host": s.address,
                    "vrf": vrf,
                    "key": placeholder("tacacs_key", "eos-type7", "0"),
                    "timeout": s.timeout,
                }
                for s in mp.tacacs
            ],
            "policy_unknown_mandatory_attribute_ignore": False,
        }
        login.append("group RAILYARD-TACACS")
    if mp.radius:
        groups.append(
            {
                "name": "RAILYARD-RADIUS",
                "type": "radius",
                "servers": [{"server": s.address, "vrf": vrf} for s in mp.radius],
            }
        )
        sc["radius_server"] = {
            "vrfs": [
                {
                    "name": vrf,
                    "servers": [
                        {"host": s.address, "timeout": s.timeout, "key": placeholder("radius_key", "eos-type7", "0")}
                        for s in mp.radius
                    ],
                }
            ]
        }
        login.append("group RAILYARD-RADIUS")
    if groups:
        sc["aaa_server_groups"] = groups
        sc["aaa_authentication"] = {"login": {"default": " ".join([*login, "local"])}}
    return sc


def _avd_mgmt_inputs(plan: Plan) -> dict[str, Any]:
    """The management plane as eos_designs inputs (the frontend's fabric.yml)."""
    mp = required(plan.netplan, "netplan").management
    vrf = _mgmt_vrf(plan)
    out: dict[str, Any] = {
        "aaa_settings": {"local_users": _local_users(plan)},
        "ntp_settings": {"server_vrf": vrf, "servers": [{"name": a, "iburst": True} for a in mp.ntp]},
        "logging_settings": {"hosts": [{"name": a, "vrf": vrf} for a in mp.syslog]},
        "dns_settings": {
            "domain": required(plan.netplan, "netplan").domain,
            "servers": [{"ip_address": a} for a in mp.dns],
        },
        "snmp_settings": {
            "vrfs": [{"name": vrf, "enable": True}],
            "users": _snmp_users(plan),
            "groups": _snmp_groups(plan),
        },
        # no eos_designs input puts SSH in the management VRF: its custom structured config does
        "custom_structured_configuration_management_ssh": {"vrfs": [{"name": vrf, "enable": True}]},
    }
    aaa: list[str] = []
    for kind, servers, secret in (("tacacs", mp.tacacs, "tacacs_key"), ("radius", mp.radius, "radius_key")):
        if servers:
            group = f"RAILYARD-{kind.upper()}"
            out["aaa_settings"][kind] = {
                "servers": [
                    {
                        "host": s.address,
                        "vrf": vrf,
                        "timeout": s.timeout,
                        "groups": [group],
                        "key": placeholder(secret, "eos-type7", "0"),
                    }
                    for s in servers
                ]
            }
            aaa.append(f"group {group}")
    if aaa:
        out["aaa_settings"]["authentication"] = {"login": {"default": " ".join([*aaa, "local"])}}
    if mp.bgp_auth == "md5":
        out["bgp_peer_groups"] = {
            key: {"password": placeholder(mp.bgp_secret, "eos-bgp7", name)}
            for key, name in (("ipv4_underlay_peers", UNDERLAY_PEERS), ("evpn_overlay_peers", OVERLAY_PEERS))
        }
    return out


def _violations(result: Any) -> list[str]:
    return [f"{'.'.join(str(p) for p in v.path)}: {v.message}" for v in result.validation_result.violations]


# ------------------------------------------------------------------------------ frontend, direct
#
# Each frontend switch's eos_cli_config_gen structured config built from the plan: what AVD's
# eos_designs makes of the inputs above (tests/test_eos.py holds the two to the same eos.cfg, byte for
# byte, on 2- and 3-tier designs), in about a hundredth of its time: eos_designs validates the whole
# fabric (every server) once per switch and derives every switch's facts before rendering any.
# AVD's names and defaults, kept so the two paths agree: peer groups IPv4-UNDERLAY-PEERS (RFC 5549
# interface neighbors) and EVPN-OVERLAY-PEERS (eBGP multihop between Loopback0s, BFD), the connected
# loopbacks advertised through RM-CONN-2-BGP, VTEPs on Loopback1, RDs <router-id>:<VNI>.

UNDERLAY_PEERS, OVERLAY_PEERS = "IPv4-UNDERLAY-PEERS", "EVPN-OVERLAY-PEERS"
LOOPBACKS_PL, CONNECTED_RM = "PL-LOOPBACKS-EVPN-OVERLAY", "RM-CONN-2-BGP"
# AVD's platform-independent defaults on every eos_designs device
_AVD_BASE: dict[str, Any] = {
    "aaa_root": {"disabled": True},
    "enable_password": {"disabled": True},
    "config_end": True,
    "service_routing_protocols_model": "multi-agent",
    "transceiver_qsfp_default_mode_4x10": True,
    "vlan_internal_order": {"allocation": "ascending", "range": {"beginning": 1006, "ending": 1199}},
    "ip_routing_ipv6_interfaces": True,
    "ipv6_unicast_routing": True,
}


def frontend_structured_config(
    plan: Plan, v: SwitchView, views: dict[str, SwitchView], mgmt: dict[str, dict[str, str]] | None = None
) -> dict[str, Any]:
    """eos_cli_config_gen structured config of one frontend switch (leaf, spine or 3-tier core)."""
    np_ = required(plan.netplan, "netplan")
    leaf = v.device.role == "leaf"
    mtu, pool = np_.mtu, str(plan.design.addressing.loopbacks)
    ups, downs = _up_down(v, views)
    ethernet: list[dict[str, Any]] = []
    for p in v.ports.values():
        if p.fabric:
            ethernet.append(
                {
                    "name": p.port,
                    "description": f"P2P_{p.peer}_{p.peer_port}",
                    "shutdown": False,
                    "mtu": mtu,
                    "ipv6_enable": True,
                    "switchport": {"enabled": False},
                }
            )
        elif p.untagged is not None or p.tagged:
            sp: dict[str, Any] = {"enabled": True}
            if p.tagged:
                sp |= {"mode": "trunk", "trunk": {"allowed_vlan": ",".join(str(t) for t in p.tagged)}}
            else:
                sp |= {"mode": "access", "access_vlan": p.untagged}
            ethernet.append(
                {
                    "name": p.port,
                    "description": f"SERVER_{p.peer}_{p.peer_port}",
                    "shutdown": False,
                    "speed": _eos_speed(p.speed_gbps),
                    "mtu": mtu,
                    "switchport": sp,
                }
            )
        else:
            # a routed port in a VRF (oob.uplink: frontend) has no AVD form: the design check refuses it on EOS
            raise AvdValidationError(f"{v.device.name} {p.port}: a port railyard cannot render on EOS")
    # the EVPN overlay as AVD draws it: a leaf peers with its spines (its route servers); a spine serves
    # its leaves and, in 3 tiers, is a client of its cores, which serve every pod's spines
    servers = list(dict.fromkeys(p.peer for p in ups)) if v.device.role != "core" else []
    if v.device.role == "spine" and not any(views[s].device.role == "core" for s in servers):
        servers = []
    clients = list(dict.fromkeys(p.peer for p in downs)) if v.device.role != "leaf" else []
    overlay = [
        {
            "ip_address": views[n].router_id,
            "peer_group": OVERLAY_PEERS,
            "remote_as": str(views[n].asn),
            "description": f"{n}_Loopback0",
        }
        for n in (*servers, *clients)
    ]
    peer_groups: list[dict[str, Any]] = [
        {"name": UNDERLAY_PEERS}
        | _bgp_password(plan, UNDERLAY_PEERS)
        | {"send_community": "all", "maximum_routes": 256000}
    ]
    bgp: dict[str, Any] = {
        "as": str(v.asn),
        "router_id": v.router_id,
        "maximum_paths": {"paths": 64, "ecmp": 64},
        "updates": {"wait_install": True},
        "bgp": {"default": {"ipv4_unicast": False}},
        "peer_groups": peer_groups,
        "neighbors": overlay,
        "neighbor_interfaces": [
            {
                "name": p.port,
                "remote_as": str(views[p.peer].asn),
                "peer_group": UNDERLAY_PEERS,
                "description": f"{p.peer}_{p.peer_port}",
            }
            for p in v.fabric_ports
        ],
        "redistribute": {"connected": {"enabled": True, "route_map": CONNECTED_RM}},
        "address_family_ipv4": {
            "peer_groups": [
                {
                    "name": UNDERLAY_PEERS,
                    "activate": True,
                    "next_hop": {"address_family_ipv6": {"enabled": True, "originate": True}},
                }
            ]
        },
    }
    sc: dict[str, Any] = {**_AVD_BASE, "hostname": v.device.name}
    if overlay:
        # a route server passes EVPN routes on with the VTEP's next hop (AVD's evpn_role "server")
        peer_groups.append(
            {"name": OVERLAY_PEERS}
            | ({"next_hop_unchanged": True} if clients else {})
            | {"update_source": "Loopback0", "bfd": True, "ebgp_multihop": 3}
            | _bgp_password(plan, OVERLAY_PEERS)
            | {"send_community": "all", "maximum_routes": 0}
        )
        bgp["address_family_evpn"] = {"peer_groups": [{"name": OVERLAY_PEERS, "activate": True}]}
        bgp["address_family_ipv4"]["peer_groups"].append({"name": OVERLAY_PEERS, "activate": False})
        sc["router_bfd"] = {"multihop": {"interval": 300, "min_rx": 300, "multiplier": 3}}
    loopbacks = [{"name": "Loopback0", "description": "ROUTER_ID", "shutdown": False, "ip_address": v.loopback}]
    prefixes = [{"sequence": 10, "action": f"permit {pool} eq 32"}]
    if leaf:
        loopbacks.append(
            {
                "name": "Loopback1",
                "description": "VXLAN_TUNNEL_SOURCE",
                "shutdown": False,
                "ip_address": np_.vteps[v.device.name],
            }
        )
        prefixes.append({"sequence": 20, "action": f"permit {pool} eq 32"})
    else:
        # no MLAG and no L2 on spines and cores
        sc["spanning_tree"] = {"mode": "none"}
    sc |= {
        "ethernet_interfaces": ethernet,
        "loopback_interfaces": loopbacks,
        "prefix_lists": [{"name": LOOPBACKS_PL, "sequence_numbers": prefixes}],
        "route_maps": [
            {
                "name": CONNECTED_RM,
                "sequence_numbers": [
                    {"sequence": 10, "type": "permit", "match": [f"ip address prefix-list {LOOPBACKS_PL}"]}
                ],
            }
        ],
        "router_bgp": bgp,
    } | _mgmt_structured(plan, v.device.name, mgmt)
    if leaf and v.vlans:
        services, bgp["vlans"], bgp["vrfs"] = _leaf_services(plan, v)
        sc |= services | {"vrfs": sc.get("vrfs", []) + [{"name": n["vrf"], "ip_routing": True} for n in v.vrfs]}
    return sc


def _leaf_services(plan: Plan, v: SwitchView) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """A leaf's tenant segments: VLANs with their anycast-gateway SVIs, L2VNIs and L3VNIs on Vxlan1,
    and a MAC-VRF per VLAN and an IP-VRF per VRF in BGP, all with the plan's route targets."""
    np_ = required(plan.netplan, "netplan")
    rid = v.router_id
    vlans = v.vlans.items()
    bgp_vrfs = [
        {
            "name": n["vrf"],
            "rd": f"{rid}:{n['l3vni']}",
            "route_targets": {
                "import": [{"address_family": "evpn", "route_targets": [rt(plan, n["l3vni"])]}],
                "export": [{"address_family": "evpn", "route_targets": [rt(plan, n["l3vni"])]}],
            },
            "router_id": rid,
            "redistribute": {"connected": {"enabled": True}},
        }
        for n in v.vrfs
    ]
    bgp_vlans = [
        {
            "id": vid,
            "rd": f"{rid}:{s['vni']}",
            "route_targets": {"both": [rt(plan, s["vni"])]},
            "redistribute_routes": ["learned"],
        }
        for vid, s in vlans
    ]
    return (
        {
            "ip_igmp_snooping": {"globally_enabled": True},
            "ip_virtual_router_mac_address": np_.anycast_gateway_mac,
            "vlans": [{"id": vid, "name": f"{s['network']}-{s['kind']}"} for vid, s in vlans],
            "vlan_interfaces": [
                {
                    "name": f"Vlan{vid}",
                    "description": f"{s['network']}-{s['kind']}",
                    "shutdown": False,
                    "vrf": s["vrf"],
                    "ip_address_virtual": f"{s['gateway']}/{s['subnet'].split('/')[1]}",
                    "mtu": np_.mtu,
                }
                for vid, s in vlans
            ],
            "vxlan_interface": {
                "vxlan1": {
                    "description": f"{v.device.name}_VTEP",
                    "vxlan": {
                        "source_interface": "Loopback1",
                        "udp_port": 4789,
                        "vlans": [{"id": vid, "vni": s["vni"]} for vid, s in vlans],
                        "vrfs": [{"name": n["vrf"], "vni": n["l3vni"]} for n in v.vrfs],
                    },
                }
            },
        },
        bgp_vlans,
        bgp_vrfs,
    )


def render_frontend(plan: Plan) -> dict[str, str]:
    if plan.netplan is None or plan.netplan.vendor != "eos":
        return {}
    views = frontend_views(plan)
    fabric, hosts = _avd_inputs(plan, views)
    # libyaml's emitter (SAFE_DUMPER): the pure-Python one takes seconds on a 16k-GPU fabric.yml
    files = {
        "frontend/avd/fabric.yml": yaml.dump(fabric, Dumper=SAFE_DUMPER, sort_keys=True),
        "frontend/avd/hosts.yml": yaml.dump(hosts, Dumper=SAFE_DUMPER, sort_keys=True),
    }
    mgmt = mgmt_addresses(plan)
    for name, v in views.items():
        files[f"frontend/{name}/eos.cfg"] = _render_structured(
            plan, name, frontend_structured_config(plan, v, views, mgmt)
        )
    return files


def oob_structured_config(plan: Plan, v: SwitchView, mgmt: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """eos_cli_config_gen structured config of an EOS out-of-band aggregation switch."""
    np_ = required(plan.netplan, "netplan")
    ethernet = [
        {
            "name": p.port,
            "description": p.description,
            "shutdown": False,
            "mtu": 9214,
            "switchport": {"enabled": False},
            "ipv6_enable": True,
        }
        for p in v.fabric_ports
    ]
    neighbors = [
        {"name": p.port, "peer_group": "OOB-ACCESS", "remote_as": str(np_.asn[p.peer]), "description": p.description}
        for p in v.fabric_ports
    ]
    sc: dict[str, Any] = {
        "hostname": v.device.name,
        "service_routing_protocols_model": "multi-agent",
        "ip_routing": True,
        "ipv6_unicast_routing": True,
        "ip_routing_ipv6_interfaces": True,
        "ethernet_interfaces": ethernet,
        "loopback_interfaces": [{"name": "Loopback0", "description": "ROUTER_ID", "ip_address": v.loopback}],
        "router_bgp": {
            "as": str(v.asn),
            "router_id": v.router_id,
            "maximum_paths": {"paths": 64},
            "peer_groups": [{"name": "OOB-ACCESS"} | _bgp_password(plan, "OOB-ACCESS") | {"send_community": "all"}],
            "neighbor_interfaces": neighbors,
            "redistribute": {"connected": {"enabled": True}},
            "address_family_ipv4": {
                "peer_groups": [
                    {
                        "name": "OOB-ACCESS",
                        "activate": True,
                        "next_hop": {"address_family_ipv6": {"enabled": True, "originate": True}},
                    }
                ]
            },
        },
    }
    sc |= _mgmt_structured(plan, v.device.name, mgmt)
    return sc


def _mgmt_structured(plan: Plan, name: str, mgmt: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """The management plane (mgmt_plane_structured) and, when the OOB network gives the switch an
    address, Management1 in the management VRF (MGMT, or default with management.mgmt_vrf: false) with
    its default route."""
    m = _mgmt(plan, name, mgmt)
    sc = mgmt_plane_structured(plan, bool(m))
    if not m:
        return sc
    vrf = _mgmt_vrf(plan)
    return sc | {
        "vrfs": [{"name": vrf, "ip_routing": False}] if vrf != "default" else [],
        "management_interfaces": [
            {
                "name": "Management1",
                "description": "OOB_MANAGEMENT",
                "shutdown": False,
                "vrf": vrf,
                "ip_address": m["mgmt_ip"],
                "gateway": m["gateway"],
            }
        ],
        "static_routes": [{"vrf": vrf, "prefix": "0.0.0.0/0", "next_hop": m["gateway"]}],
    }


def render_oob(plan: Plan, views: dict[str, SwitchView]) -> dict[str, str]:
    mgmt = mgmt_addresses(plan)
    return {
        f"oob/{name}/eos.cfg": _render_structured(plan, name, oob_structured_config(plan, v, mgmt))
        for name, v in views.items()
    }


def _render_structured(plan: Plan, name: str, sc: dict[str, Any]) -> str:
    """EOS CLI of a structured config, after AVD's own schema accepted it."""
    from pyavd import validate_structured_config

    r = validate_structured_config(sc)
    if r.validated_data is None:
        raise AvdValidationError(f"AVD rejected the structured config of {name}:\n" + "\n".join(_violations(r)))
    return (
        f"! {name}: EOS config from railyard design {plan.design.name}, AVD structured config validated by "
        f"pyavd\n" + eos_cli(r.validated_data)
    )


def eos_cli(validated: dict[str, Any]) -> str:
    """EOS CLI of a validated structured config: railyard's template of the keys it builds (eos_text, the
    same text as pyavd's) when the config keeps to them, else pyavd's own eos_cli_config_gen templates."""
    if eos_text.fits(validated):
        return eos_text.render(validated)
    return pyavd_cli(validated)


def pyavd_cli(validated: dict[str, Any]) -> str:
    """pyavd's get_device_config (its eos_cli_config_gen templates) on a validated structured config, with
    one template environment for the whole process: get_device_config builds a new one per call and so
    re-executes its ~400 compiled template modules every time, which cost more than the rendering."""
    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE

    text: str = eos_text.templar().render_template_from_file(
        template_file=EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE, template_vars=validated
    )
    return text


# ------------------------------------------------------------------------------- RoCE backend
#
# The plan's RoCE backend (plan.backend_net) as AVD structured config, in eos_cli_config_gen's keys (AVD
# "eos_cli_config_gen" input variables, https://avd.arista.com/ > eos_cli_config_gen > Input variables:
# priority-flow-control, qos, qos-profiles, ethernet-interfaces, router-bgp, vxlan-interface; every key
# here is one the installed pyavd's schema accepts, which validate_structured_config enforces). The same
# network as the SONiC backend: eBGP unnumbered underlay (RFC 5549, IPv4 over IPv6 link-local next hops),
# eBGP EVPN between loopbacks as AVD's standard overlay, each tenant VRF an EVPN type-5 L3VNI, and the
# RoCEv2 classes of plan.backend_net.qos in EOS's QoS commands (EOS User Manual, "Quality of Service":
# qos trust, qos map dscp, tx-queue scheduling and random-detect ecn, priority-flow-control and its
# watchdog): DSCP trusted on every port, RoCE's DSCP to its traffic class with PFC no-drop on that
# priority, ECN marking on its tx-queue, CNPs in a strict priority queue, the PFC watchdog dropping on a
# stuck queue. The ECN thresholds and watchdog time are the SONiC backend's (one set of numbers).

FABRIC_PEERS = "BACKEND-FABRIC"
FROM_FABRIC, LEAF_OUT = "FROM-FABRIC", "FABRIC-OUT"  # the names frr.conf gives the leaf filter
ROCE_PROFILE = "ROCE"  # the QoS profile holding the tx-queue scheduling


def _dscp_map(q: RoceQos) -> list[str]:
    """Every DSCP to a traffic class as the SONiC backend maps them: RoCE and CNP to their classes, the
    rest to 0 (EOS's own default spreads DSCPs over classes 0-7, which would share RoCE's queue)."""
    rest = [d for d in range(64) if d not in (q.roce_dscp, q.cnp_dscp)]
    lines = [f"{' '.join(str(d) for d in rest[i : i + 8])} to traffic-class 0" for i in range(0, len(rest), 8)]
    return [
        *lines,
        f"{q.roce_dscp} to traffic-class {q.roce_priority}",
        f"{q.cnp_dscp} to traffic-class {q.cnp_priority}",
    ]


def _roce_port_qos(q: RoceQos) -> dict[str, Any]:
    """The per-port half of the lossless class: trust, PFC no-drop on RoCE's priority, ECN on its queue."""
    return {
        "qos": {"trust": "dscp"},
        "service_profile": ROCE_PROFILE,
        "priority_flow_control": {"enabled": True, "priorities": [{"priority": q.roce_priority, "no_drop": True}]},
        "tx_queues": [
            {
                "id": q.roce_priority,
                "random_detect": {
                    "ecn": {
                        "threshold": {
                            "units": "bytes",
                            "min": ECN_MIN_BYTES,
                            "max": ECN_MAX_BYTES,
                            "max_probability": ECN_MARK_PERCENT,
                        }
                    }
                },
            }
        ],
    }


def _roce_profile(q: RoceQos) -> dict[str, Any]:
    """ETS as the SONiC backend schedules: RoCE and everything else half each, CNPs strict. On EOS a queue
    set to "no priority" makes every lower queue round-robin too, and the queues above it stay strict, so
    CNPs (queue 6) always leave before RoCE (queue 3) and the rest (queue 0)."""
    return {
        "name": ROCE_PROFILE,
        "tx_queues": [
            {"id": 0, "priority": "no priority", "bandwidth_percent": 50},
            {"id": q.roce_priority, "priority": "no priority", "bandwidth_percent": 50},
            {"id": q.cnp_priority, "priority": "priority strict"},
        ],
    }


def backend_structured_config(
    plan: Plan, sw: BackendSwitch, ports: list[BackendPort], mgmt: dict[str, dict[str, str]] | None = None
) -> dict[str, Any]:
    """eos_cli_config_gen structured config of one RoCE backend switch (`ports`: its used ports)."""
    bn = required(plan.backend_net, "backend_net")
    switches = {s.name: s for s in bn.switches}
    router_id = sw.loopback.split("/")[0]
    port_qos = _roce_port_qos(bn.qos)
    ethernet: list[dict[str, Any]] = []
    neighbors: list[dict[str, Any]] = []
    for p in ports:
        e: dict[str, Any] = {
            "name": p.port,
            "description": f"{p.peer}:{p.peer_port}",
            "shutdown": False,
            "speed": _eos_speed(p.speed_gbps),
            "mtu": bn.switch_mtu,
            "switchport": {"enabled": False},
        }
        if p.fabric:
            e["ipv6_enable"] = True
            neighbors.append(
                {
                    "name": p.port,
                    "peer_group": FABRIC_PEERS,
                    "remote_as": str(switches[p.peer].asn),
                    "description": e["description"],
                }
            )
        else:
            e |= {"vrf": p.vrf, "ip_address": p.address}
        ethernet.append(e | port_qos)
    # the overlay runs between loopbacks, once per neighbouring switch however many links join them
    overlay = [
        {
            "ip_address": switches[peer].loopback.split("/")[0],
            "peer_group": OVERLAY_PEERS,
            "remote_as": str(switches[peer].asn),
            "description": peer,
        }
        for peer in dict.fromkeys(p.peer for p in ports if p.fabric)
    ]
    vrfs = [v for v in bn.vrfs if v.name in sw.vrfs]
    bgp: dict[str, Any] = {
        "as": str(sw.asn),
        "router_id": router_id,
        "bgp": {"default": {"ipv4_unicast": False}},
        # explicit, as frr.conf says it: ECMP over spines of different ASNs
        "bgp_defaults": ["bgp bestpath as-path multipath-relax"],
        "maximum_paths": {"paths": 64, "ecmp": 64},
        "peer_groups": [
            {"name": FABRIC_PEERS, "send_community": "all", "bfd": True} | _bgp_password(plan, FABRIC_PEERS),
            # a spine or core passes EVPN routes on with the leaf's VTEP as next hop (AVD does the same)
            {
                "name": OVERLAY_PEERS,
                "update_source": "Loopback0",
                "ebgp_multihop": 3,
                "send_community": "all",
                "bfd": True,
            }
            | _bgp_password(plan, OVERLAY_PEERS)
            | ({} if sw.role == "leaf" else {"next_hop_unchanged": True}),
        ],
        "neighbor_interfaces": neighbors,
        "neighbors": overlay,
        "address_family_ipv4": {
            "networks": [{"prefix": sw.loopback}],
            "peer_groups": [
                {
                    "name": FABRIC_PEERS,
                    "activate": True,
                    "next_hop": {"address_family_ipv6": {"enabled": True, "originate": True}},
                },
                {"name": OVERLAY_PEERS, "activate": False},
            ],
        },
        "address_family_evpn": {"peer_groups": [{"name": OVERLAY_PEERS, "activate": True}]},
    }
    if sw.role == "leaf":
        # as frr.conf's FABRIC-OUT: a leaf never carries one uplink's routes to another (it is never transit),
        # in both address families; a path whose first AS is an uplink's came from the fabric
        for af, group in (("address_family_ipv4", FABRIC_PEERS), ("address_family_evpn", OVERLAY_PEERS)):
            next(g for g in bgp[af]["peer_groups"] if g["name"] == group)["route_map_out"] = LEAF_OUT
    if vrfs:
        # RD <router-id>:<L3VNI> (AVD's default form); one route target per VRF, from the plan
        bgp["vrfs"] = [
            {
                "name": v.name,
                "rd": f"{router_id}:{v.l3vni}",
                "router_id": router_id,
                "route_targets": {
                    "import": [{"address_family": "evpn", "route_targets": [v.route_target]}],
                    "export": [{"address_family": "evpn", "route_targets": [v.route_target]}],
                },
                "redistribute": {"connected": {"enabled": True}},
            }
            for v in vrfs
        ]
    sc: dict[str, Any] = {
        "hostname": sw.name,
        "service_routing_protocols_model": "multi-agent",
        "ip_routing": True,
        "ipv6_unicast_routing": True,
        "ip_routing_ipv6_interfaces": True,
        "qos": {"map": {"dscp": _dscp_map(bn.qos)}},
        "qos_profiles": [_roce_profile(bn.qos)],
        "priority_flow_control": {
            "watchdog": {"action": "drop", "timeout": str(PFC_WD_MS / 1000), "recovery_time": str(PFC_WD_MS / 1000)}
        },
        "ethernet_interfaces": ethernet,
        "loopback_interfaces": [{"name": "Loopback0", "description": "ROUTER_ID_VTEP", "ip_address": sw.loopback}],
        "router_bgp": bgp,
    } | _mgmt_structured(plan, sw.name, mgmt)
    if sw.role == "leaf":
        fabric_asns = sorted({switches[p.peer].asn for p in ports if p.fabric})
        sc["as_path"] = {
            "access_lists": [
                {
                    "name": FROM_FABRIC,
                    "entries": [{"type": "permit", "match": f"^{a}_", "origin": "any"} for a in fabric_asns],
                }
            ]
        }
        sc["route_maps"] = [
            {
                "name": LEAF_OUT,
                "sequence_numbers": [
                    {"sequence": 10, "type": "deny", "match": [f"as-path {FROM_FABRIC}"]},
                    {"sequence": 20, "type": "permit"},
                ],
            }
        ]
    if vrfs:
        sc["vrfs"] = [{"name": v.name, "ip_routing": True} for v in vrfs] + sc.get("vrfs", [])
        sc["vxlan_interface"] = {
            "vxlan1": {
                "description": f"{sw.name}_VTEP",
                "vxlan": {
                    "source_interface": "Loopback0",
                    "udp_port": 4789,
                    "vrfs": [{"name": v.name, "vni": v.l3vni} for v in vrfs],
                },
            }
        }
    return sc


def render_backend(plan: Plan) -> dict[str, str]:
    bn = plan.backend_net
    if bn is None:
        return {}
    by_switch = bn.ports_by_switch()
    mgmt = mgmt_addresses(plan)
    return {
        f"backend/{sw.name}/eos.cfg": _render_structured(
            plan, sw.name, backend_structured_config(plan, sw, by_switch[sw.name], mgmt)
        )
        for sw in bn.switches
    }
