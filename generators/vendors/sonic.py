"""SONiC switch configs for the frontend and out-of-band networks.

Frontend, per switch under ``frontend/<switch>/``:
- ``config_db.json``: DEVICE_METADATA (``docker_routing_config_mode: split-unified``, so FRR reads the
  ``frr.conf`` beside it instead of bgpcfgd templates), PORT (every front-panel port: used ones up at
  the planned speed and MTU, spares admin-down), LOOPBACK_INTERFACE, INTERFACE (fabric ports
  IPv6-link-local only, for BGP unnumbered), VLAN/VLAN_MEMBER/VLAN_INTERFACE with the tenants'
  gateways, VRF with its L3VNI, VXLAN_TUNNEL/VXLAN_EVPN_NVO/VXLAN_TUNNEL_MAP, MGMT_INTERFACE in
  the management VRF. Apply with ``config load`` (merges; platform keys such as lanes stay).
- ``frr.conf``: eBGP unnumbered underlay, EVPN overlay, one BGP VRF instance per tenant on leaves.

Servers attach with an active-backup bond over their two leaves (no MLAG peer link exists in the
plan): each leaf port is an access port of the tenant's hosts VLAN, EVPN MAC mobility moves the
host on failover, and the anycast gateway answers on whichever leaf is active. Storage front-ends
are trunks carrying every network's storage VLAN.

Only tables and fields that the target release (``frontend.sonic_release``, ``oob.sonic_release``)
has YANG models for are written, since SONiC's loader refuses (or silently drops) the rest. The anycast
gateway is SONiC's static anycast gateway (the ``SAG`` table) on master only; on a release before it
every leaf's gateway interface carries the same address and, as its router MAC, the design's anycast
gateway MAC (``VLAN_INTERFACE|VlanN mac_addr``), which gives hosts the same gateway on either leaf
(the compile warns that the gateway is built that way). The OOB aggregation switches are
``MgmtLeafRouter`` where the release knows that type, else ``LeafRouter`` (202405).

Out-of-band access switches route: their BMC and management VLANs end on SVIs with a DHCP relay
(option 82 circuit-id), and eBGP unnumbered uplinks reach the aggregation pair, or with
``oob.uplink: frontend`` the frontend service leaves, where those ports are unnumbered routed ports in
the infra VRF: the leaves learn the OOB subnets there and export them as EVPN type-5 routes, so the
management nodes (infra hosts) reach BMCs and PDUs, and the access switches learn the infra VRF back.
"""

from __future__ import annotations

import math
from functools import cache
from typing import TYPE_CHECKING, Any

from generators.model.netdesign import SONIC_MGMT_LEAF_ROUTER, SONIC_SAG
from generators.model.plan import Device, Plan, required
from generators.model.ports import port_table
from generators.model.secrets import placeholder, salt
from generators.model.sections import BackendNet, BackendPort, BackendSwitch
from generators.text.jsontext import dumps_indented
from generators.views.switches import PortUse, SwitchView, frontend_views, mgmt_addresses, rt

if TYPE_CHECKING:
    import jinja2

DEVICE_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}
OOB_DEVICE_TYPE = {"leaf": "MgmtToRRouter", "spine": "MgmtLeafRouter"}
OOB_DEVICE_TYPE_202405 = {"leaf": "MgmtToRRouter", "spine": "LeafRouter"}  # no MgmtLeafRouter in its model
SONIC_MGMT_PORT = "eth0"  # SONiC's management interface, whatever the catalog calls the jack


def _env() -> jinja2.Environment:
    from generators.text.templating import environment  # jinja2 only when a SONiC switch renders

    return environment(autoescape=False, trim=True)


def _json(doc: dict[str, Any]) -> str:
    # json.dumps(doc, indent=4, sort_keys=True), same bytes: its pure-Python indent path took ~100 s of
    # a 98,304-GPU compile's config_db files (see generators.text.jsontext)
    return dumps_indented(doc, 4, sort_keys=True) + "\n"


def _fec(speed_gbps: int) -> str:
    # PAM4 and 100G NRZ optics need RS-FEC; 10/25G and 1G run without it on these platforms
    return "rs" if speed_gbps >= 100 else "none"


def _ports_table(plan: Plan, v: SwitchView, mtu: int) -> dict[str, dict[str, str]]:
    sw = plan.catalog.switches[v.device.model]
    table: dict[str, dict[str, str]] = {}
    for p in port_table(sw):
        use = v.ports.get(p.name)
        group = sw.port_groups[p.group]
        speed = use.speed_gbps if use else group.speed_gbps
        entry = {
            "alias": p.name,
            "admin_status": "up" if use else "down",
            "speed": str(speed * 1000),
            "mtu": str(mtu),
            "fec": _fec(speed),
        }
        if use:
            entry["description"] = use.description
        table[p.name] = entry
    return table


def _metadata(v: SwitchView, types: dict[str, str]) -> dict[str, Any]:
    return {
        "localhost": {
            "hostname": v.device.name,
            "bgp_asn": str(v.asn),
            "type": types[v.device.role],
            "docker_routing_config_mode": "split-unified",
        }
    }


def _mgmt_tables(plan: Plan, v: SwitchView, mgmt: dict[str, dict[str, str]] | None) -> dict[str, Any]:
    r = (mgmt if mgmt is not None else mgmt_addresses(plan)).get(v.device.name)
    if r is None:  # no management port planned (OOB access switches): services in-band, default VRF
        return management_tables(plan, v.device, False)
    mp = required(plan.netplan, "netplan").management
    return {
        "MGMT_PORT": {SONIC_MGMT_PORT: {"alias": SONIC_MGMT_PORT, "admin_status": "up"}},
        "MGMT_INTERFACE": {f"{SONIC_MGMT_PORT}|{r['address']}": {"gwaddr": r["gateway"]}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true" if mp.vrf else "false"}},
        **management_tables(plan, v.device, mp.vrf),
    }


def management_tables(plan: Plan, device: Device, in_mgmt_vrf: bool) -> dict[str, Any]:
    """The management plane of plan.netplan.management as SONiC's config_db tables (sonic-ntp,
    sonic-syslog, sonic-dns, sonic-snmp, sonic-system-tacacs/-radius/-aaa YANG models): services reached
    in the management VRF when it is on and the switch has a management port (else in-band, default VRF),
    SNMPv3 users only (authPriv, SHA/AES), AAA falling through to local logins. Secrets are placeholders
    (generators.model.secrets). Local users are no config_db table in any release: users.sh beside it
    (sonic_users) creates them."""
    mp = required(plan.netplan, "netplan").management
    vrf = "mgmt" if in_mgmt_vrf else "default"
    db: dict[str, Any] = {
        "NTP": {"global": {"vrf": vrf} | ({"src_intf": [SONIC_MGMT_PORT]} if in_mgmt_vrf else {})},
        "NTP_SERVER": {a: {"association_type": "server", "iburst": "on"} for a in mp.ntp},
        "SYSLOG_SERVER": {a: {"vrf": vrf, "port": "514", "protocol": "udp"} for a in mp.syslog},
        "DNS_NAMESERVER": {a: {} for a in mp.dns},
        "SNMP_USER": {
            u.name: {
                "SNMP_USER_TYPE": "Priv",
                "SNMP_USER_PERMISSION": u.access.upper(),
                "SNMP_USER_AUTH_TYPE": "SHA",
                "SNMP_USER_AUTH_PASSWORD": placeholder(u.auth_secret),
                "SNMP_USER_ENCRYPTION_TYPE": "AES",
                "SNMP_USER_ENCRYPTION_PASSWORD": placeholder(u.priv_secret),
            }
            for u in mp.snmp_users
        },
    }
    if device.rack is not None:
        db["SNMP"] = {"LOCATION": {"Location": f"{plan.design.site.name} rack {device.rack}"}}
    login: list[str] = []
    if mp.tacacs:
        login.append("tacacs+")
        db["TACPLUS"] = {"global": {"auth_type": "pap", "passkey": placeholder("tacacs_key")}}
        db["TACPLUS_SERVER"] = {
            s.address: {
                "priority": str(len(mp.tacacs) - i),
                "tcp_port": str(s.port),
                "timeout": str(s.timeout),
                "vrf": vrf,
            }
            for i, s in enumerate(mp.tacacs)
        }
    if mp.radius:
        login.append("radius")
        db["RADIUS"] = {"global": {"auth_type": "pap", "passkey": placeholder("radius_key")}}
        db["RADIUS_SERVER"] = {
            s.address: {
                "priority": str(len(mp.radius) - i),
                "auth_port": str(s.port),
                "timeout": str(s.timeout),
                "vrf": vrf,
            }
            for i, s in enumerate(mp.radius)
        }
    if login:
        # a server that is down or refuses falls through to the next, then to the local users
        db["AAA"] = {"authentication": {"login": ",".join([*login, "local"]), "failthrough": "True"}}
    return db


# admin: the groups of SONiC's own admin; operator: none (docker or sudo would make it root-equivalent,
# so the show commands that `docker exec` are not its to run)
SONIC_GROUPS = {"admin": "sudo,docker,redis,adm", "operator": ""}


def sonic_users(plan: Plan, device: Device) -> str:
    """users.sh: the local users of plan.netplan.management on a SONiC switch, with SHA-512 crypt hashes
    (`chpasswd -e`, the mechanism SONiC's own admin password uses) and authorized SSH keys. Run as root
    (a ZTP provisioning script or by hand); it adds and updates users, and removes none."""
    mp = required(plan.netplan, "netplan").management
    users = [
        {
            "name": u.name,
            "groups": SONIC_GROUPS[u.role],
            "hash": placeholder(u.password_secret, "sha512-crypt", salt(plan.design.name, device.name, u.name)),
            "ssh_keys": u.ssh_keys,
        }
        for u in mp.users
    ]
    return _env().get_template("sonic-users.sh.j2").render(design=plan.design.name, hostname=device.name, users=users)


def frontend_config_db(plan: Plan, v: SwitchView, mgmt: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    np_ = required(plan.netplan, "netplan")
    mtu = np_.mtu
    sag = plan.design.frontend.sonic_release in SONIC_SAG
    # a gateway interface's anycast-ness: SAG where the release has it, else the shared MAC as its router MAC
    gateway = {"static_anycast_gateway": "true"} if sag else {"mac_addr": np_.anycast_gateway_mac}
    db: dict[str, Any] = {
        "DEVICE_METADATA": _metadata(v, DEVICE_TYPE),
        "PORT": _ports_table(plan, v, mtu),
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{v.loopback}": {}},
        "INTERFACE": {p.port: {"ipv6_use_link_local_only": "enable"} for p in v.fabric_ports},
        **_mgmt_tables(plan, v, mgmt),
    }
    # OOB access switches' uplinks (oob.uplink: frontend): unnumbered routed ports in the infra VRF
    db["INTERFACE"].update(
        {
            p.port: {"vrf_name": p.vrf, "ipv6_use_link_local_only": "enable"}
            for p in v.ports.values()
            if p.vrf is not None
        }
    )
    if v.vlans:
        vlan: dict[str, Any] = {}
        members: dict[str, Any] = {}
        svi: dict[str, Any] = {}
        tunnel_map: dict[str, Any] = {}
        for vid, seg in v.vlans.items():
            name = f"Vlan{vid}"
            vlan[name] = {"vlanid": str(vid), "mtu": str(mtu), "admin_status": "up"}
            svi[name] = {"vrf_name": seg["vrf"], **gateway}
            prefix = seg["subnet"].split("/")[1]
            svi[f"{name}|{seg['gateway']}/{prefix}"] = {}
            tunnel_map[f"vtep|map_{seg['vni']}_{name}"] = {"vlan": name, "vni": str(seg["vni"])}
        for p in v.ports.values():
            if p.untagged is not None:
                members[f"Vlan{p.untagged}|{p.port}"] = {"tagging_mode": "untagged"}
            for t in p.tagged:
                members[f"Vlan{t}|{p.port}"] = {"tagging_mode": "tagged"}
        vrf: dict[str, Any] = {}
        for n in v.vrfs:
            # SONiC binds an L3VNI to a VLAN whose interface sits in the VRF (no address on it)
            name = f"Vlan{n['l3vni_vlan']}"
            vlan[name] = {"vlanid": str(n["l3vni_vlan"]), "mtu": str(mtu), "admin_status": "up"}
            svi[name] = {"vrf_name": n["vrf"]}
            tunnel_map[f"vtep|map_{n['l3vni']}_{name}"] = {"vlan": name, "vni": str(n["l3vni"])}
            vrf[n["vrf"]] = {"vni": str(n["l3vni"])}
        db.update(
            {
                "VLAN": vlan,
                "VLAN_MEMBER": members,
                "VLAN_INTERFACE": svi,
                "VRF": vrf,
                "VXLAN_TUNNEL": {"vtep": {"src_ip": v.router_id}},
                "VXLAN_EVPN_NVO": {"nvo": {"source_vtep": "vtep"}},
                "VXLAN_TUNNEL_MAP": tunnel_map,
            }
        )
        if sag:
            db["SAG"] = {"GLOBAL": {"gateway_mac": np_.anycast_gateway_mac}}
    return db


def _fabric_asns(plan: Plan, v: SwitchView) -> list[int]:
    """The ASNs of a switch's BGP uplink peers: a route whose path starts with one came from the fabric."""
    asn = required(plan.netplan, "netplan").asn
    return sorted({asn[p.peer] for p in v.fabric_ports})


def _frr_mgmt(plan: Plan) -> dict[str, Any]:
    """frr.conf's management lines: the BGP session password (TCP-MD5) on every peer group, syslog."""
    mp = required(plan.netplan, "netplan").management
    return {"bgp_password": placeholder(mp.bgp_secret) if mp.bgp_auth == "md5" else None}


def frontend_frr(plan: Plan, v: SwitchView) -> str:
    role = v.device.role
    vtep = bool(v.vlans)
    peers = {
        "leaf": "spines",
        "spine": "leaves and cores" if plan.networks.frontend.tiers == 3 else "leaves",
        "core": "pod spines",
    }[role]
    return (
        _env()
        .get_template("frr.conf.j2")
        .render(
            design=plan.design.name,
            hostname=v.device.name,
            role_note=f"frontend {role}, ASN {v.asn}" + (", EVPN VTEP" if vtep else ", EVPN route transit"),
            vrfs=[
                {
                    "name": n["vrf"],
                    "l3vni": n["l3vni"],
                    "rt": rt(plan, n["l3vni"]),
                    "oob": [{"name": p.port, "description": p.description} for p in v.vrf_ports(n["vrf"])],
                }
                for n in v.vrfs
            ],
            oob_ports=[{"name": p.port, "description": p.description} for p in v.ports.values() if p.vrf is not None],
            fabric=[{"name": p.port, "description": p.description} for p in v.fabric_ports],
            loopback=v.loopback,
            router_id=v.router_id,
            asn=v.asn,
            peer_description=peers,
            networks=[v.loopback],
            leaf_filter=role == "leaf",
            fabric_asns=_fabric_asns(plan, v),
            evpn=True,
            vtep=vtep,
            l2vnis=[{"vni": s["vni"], "rt": rt(plan, s["vni"])} for s in v.vlans.values()],
            **_frr_mgmt(plan),
        )
    )


def oob_frr(plan: Plan, v: SwitchView) -> str:
    subnets = required(plan.netplan, "netplan").oob["subnets"].get(v.device.name)
    nets = [v.loopback] + ([subnets["bmc"]["subnet"], subnets["mgmt"]["subnet"]] if subnets else [])
    role = "access" if v.device.role == "leaf" else "aggregation"
    return (
        _env()
        .get_template("frr.conf.j2")
        .render(
            design=plan.design.name,
            hostname=v.device.name,
            role_note=f"out-of-band {role}, ASN {v.asn}",
            vrfs=[],
            oob_ports=[],
            fabric=[{"name": p.port, "description": p.description} for p in v.fabric_ports],
            loopback=v.loopback,
            router_id=v.router_id,
            asn=v.asn,
            peer_description=(
                "access switches"
                if role == "aggregation"
                else "aggregation pair"
                if plan.design.oob.uplink == "aggregation"
                else "frontend service leaves"
            ),
            networks=nets,
            leaf_filter=role == "access",
            fabric_asns=_fabric_asns(plan, v),
            evpn=False,
            vtep=False,
            l2vnis=[],
            **_frr_mgmt(plan),
        )
    )


def oob_config_db(plan: Plan, v: SwitchView, mgmt: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    np_ = required(plan.netplan, "netplan")
    db: dict[str, Any] = {
        "DEVICE_METADATA": _metadata(
            v, OOB_DEVICE_TYPE if plan.design.oob.sonic_release in SONIC_MGMT_LEAF_ROUTER else OOB_DEVICE_TYPE_202405
        ),
        "PORT": _ports_table(plan, v, 9100),
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{v.loopback}": {}},
        "INTERFACE": {p.port: {"ipv6_use_link_local_only": "enable"} for p in v.fabric_ports},
        **_mgmt_tables(plan, v, mgmt),
    }
    subnets = np_.oob["subnets"].get(v.device.name)
    if subnets:
        vlan: dict[str, Any] = {}
        svi: dict[str, Any] = {}
        for kind in ("bmc", "mgmt"):
            s = subnets[kind]
            name = f"Vlan{s['vlan']}"
            vlan[name] = {"vlanid": str(s["vlan"]), "admin_status": "up", "dhcp_servers": np_.dhcp_servers}
            svi[name] = {}
            svi[f"{name}|{s['gateway']}/{s['subnet'].split('/')[1]}"] = {}
        db["VLAN"] = vlan
        db["VLAN_INTERFACE"] = svi
        db["VLAN_MEMBER"] = {
            f"Vlan{p.untagged}|{p.port}": {"tagging_mode": "untagged"}
            for p in v.ports.values()
            if p.untagged is not None
        }
    return db


def render_frontend(plan: Plan) -> dict[str, str]:
    if plan.netplan is None or plan.netplan.vendor != "sonic":
        return {}
    files: dict[str, str] = {}
    mgmt = mgmt_addresses(plan)
    for name, v in frontend_views(plan).items():
        files[f"frontend/{name}/config_db.json"] = _json(frontend_config_db(plan, v, mgmt))
        files[f"frontend/{name}/frr.conf"] = frontend_frr(plan, v)
        files[f"frontend/{name}/users.sh"] = sonic_users(plan, v.device)
    return files


def render_oob(plan: Plan, views: dict[str, SwitchView]) -> dict[str, str]:
    files: dict[str, str] = {}
    mgmt = mgmt_addresses(plan)
    for name, v in views.items():
        files[f"oob/{name}/config_db.json"] = _json(oob_config_db(plan, v, mgmt))
        files[f"oob/{name}/frr.conf"] = oob_frr(plan, v)
        files[f"oob/{name}/users.sh"] = sonic_users(plan, v.device)
    return files


# ------------------------------------------------------------------------------- RoCE backend
#
# RoCEv2 lossless QoS as SONiC models it (sonic-buildimage's QoS tables; SONiC "QoS and Buffers",
# https://docs.nvidia.com/networking-ethernet-software/sonic-202012/System-Configuration/QoS-and-Buffers/)
# with NVIDIA's RoCE classes (Cumulus Linux "RDMA over Converged Ethernet - RoCE", lossless mode: switch
# priority 3 to traffic class 3 (RoCE, PFC on), 6 to 6 (CNP, strict), the rest to 0; ETS RoCE 50% /
# other 50%; ECN on the RoCE class, https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/
# Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE/). Buffers use SONiC's
# traditional model (every profile written here, reviewable, the same on every switch of a speed and
# cable class) rather than the dynamic model's headroom computed on the switch. Adaptive routing and
# packet spraying have no table in SONiC's config_db: nothing is written for them (the summary says so).

QOS_MAP = "ROCE"  # the one name of every QoS map
CABLE_CLASSES = (5, 40, 300)  # SONiC's cable-length classes (pg_profile_lookup.ini), metres
# IEEE 802.1Qbb headroom: what arrives after a pause is sent is the round trip on the cable (5 ns/m each
# way) at line rate, plus a maximum frame in flight at each end, plus the PHY/MAC response (3,840 bytes per
# 100 Gb/s, 802.1Qbb annex); rounded up to whole kilobytes.
PROPAGATION_NS_PER_M = 5
PHY_RESPONSE_BYTES_PER_100G = 3840
ECN_MIN_BYTES, ECN_MAX_BYTES = 150_000, 1_500_000  # NVIDIA's RoCE lossless ECN thresholds (Cumulus, above)
ECN_MARK_PERCENT = 5  # marking probability at the maximum threshold
PFC_WD_MS = 200  # SONiC's default PFC watchdog detection and restoration time
LOSSLESS_POOL, LOSSY_EGRESS_POOL, LOSSLESS_EGRESS_POOL = (
    "ingress_lossless_pool",
    "egress_lossy_pool",
    "egress_lossless_pool",
)


@cache  # per port, and a fabric has few distinct lengths
def cable_class(metres: float) -> int:
    """SONiC's cable-length class of a routed length: the smallest class that holds it (a longer run,
    past 300 m, gets its own whole-metre class: the headroom formula takes any length)."""
    return next((c for c in CABLE_CLASSES if metres <= c), math.ceil(metres))


@cache  # per port (720,896 at 98,304 GPUs), of a few speeds and cable classes; callers only read the dict
def lossless_profile(speed_gbps: int, metres: int, mtu: int) -> tuple[str, dict[str, str]]:
    """The PG 3 profile of a port speed and cable class, named as SONiC's buffermgrd names its own."""
    rate = speed_gbps / 8  # bytes per ns
    xoff = 2 * metres * PROPAGATION_NS_PER_M * rate + 2 * mtu + PHY_RESPONSE_BYTES_PER_100G * speed_gbps / 100
    xoff = math.ceil(xoff / 1024) * 1024
    xon = 2 * mtu
    return (
        f"pg_lossless_{speed_gbps * 1000}_{metres}m_profile",
        {"pool": LOSSLESS_POOL, "xon": str(xon), "xoff": str(xoff), "size": str(xon + xoff), "dynamic_th": "0"},
    )


def backend_view(device: Device, sw: BackendSwitch, ports: list[BackendPort]) -> SwitchView:
    """The backend switch as a SwitchView, so PORT and DEVICE_METADATA come from the frontend's code."""
    return SwitchView(
        device,
        sw.asn,
        sw.loopback,
        {p.port: PortUse(p.port, p.peer, p.peer_port, p.speed_gbps, p.fabric, p.vrf) for p in ports},
    )


def _qos_tables(bn: BackendNet, ports: list[BackendPort]) -> dict[str, Any]:
    q = bn.qos
    lossless, cnp = str(q.roce_priority), str(q.cnp_priority)
    dscp = {str(d): lossless if d == q.roce_dscp else cnp if d == q.cnp_dscp else "0" for d in range(64)}
    profiles: dict[str, Any] = {
        "ingress_lossy_profile": {"pool": LOSSLESS_POOL, "size": "0", "dynamic_th": "3"},
        "egress_lossless_profile": {"pool": LOSSLESS_EGRESS_POOL, "size": "0", "dynamic_th": "7"},
        "egress_lossy_profile": {"pool": LOSSY_EGRESS_POOL, "size": "9216", "dynamic_th": "7"},
    }
    cable: dict[str, str] = {}
    port_qos: dict[str, Any] = {}
    queue: dict[str, Any] = {}
    pg: dict[str, Any] = {}
    bqueue: dict[str, Any] = {}
    wd: dict[str, Any] = {"GLOBAL": {"POLL_INTERVAL": str(PFC_WD_MS)}}
    ranges = _queue_ranges(q.roce_priority)
    for p in ports:
        metres = cable_class(p.cable_m)
        name, profile = lossless_profile(p.speed_gbps, metres, bn.switch_mtu)
        profiles[name] = profile
        cable[p.port] = f"{metres}m"
        port_qos[p.port] = {
            "dscp_to_tc_map": QOS_MAP,
            "tc_to_queue_map": QOS_MAP,
            "tc_to_pg_map": QOS_MAP,
            "pfc_to_queue_map": QOS_MAP,
            "pfc_enable": lossless,
            "pfcwd_sw_enable": lossless,
        }
        queue[f"{p.port}|0"] = {"scheduler": "OTHER_DWRR"}
        queue[f"{p.port}|{lossless}"] = {"scheduler": "ROCE_DWRR", "wred_profile": "ROCE_LOSSLESS"}
        queue[f"{p.port}|{cnp}"] = {"scheduler": "CNP_STRICT"}
        pg[f"{p.port}|0"] = {"profile": "ingress_lossy_profile"}
        pg[f"{p.port}|{lossless}"] = {"profile": name}
        for qs in ranges:
            bqueue[f"{p.port}|{qs}"] = {
                "profile": "egress_lossless_profile" if qs == lossless else "egress_lossy_profile"
            }
        wd[p.port] = {"action": "drop", "detection_time": str(PFC_WD_MS), "restoration_time": str(PFC_WD_MS)}
    ecn = {
        f"{c}_{k}": v
        for c in ("green", "yellow", "red")
        for k, v in (
            ("min_threshold", str(ECN_MIN_BYTES)),
            ("max_threshold", str(ECN_MAX_BYTES)),
            ("drop_probability", str(ECN_MARK_PERCENT)),
        )
    }
    return {
        "DSCP_TO_TC_MAP": {QOS_MAP: dscp},
        "TC_TO_QUEUE_MAP": {QOS_MAP: {str(t): str(t) for t in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: {str(t): lossless if t == q.roce_priority else "0" for t in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: {str(t): str(t) for t in range(8)}},
        "PORT_QOS_MAP": port_qos,
        "WRED_PROFILE": {
            "ROCE_LOSSLESS": {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "wred_yellow_enable": "true",
                "wred_red_enable": "true",
                **ecn,
            }
        },
        # ETS as NVIDIA's lossless RoCE mode: CNP strict, RoCE and everything else half the rest each
        "SCHEDULER": {
            "ROCE_DWRR": {"type": "DWRR", "weight": "50"},
            "OTHER_DWRR": {"type": "DWRR", "weight": "50"},
            "CNP_STRICT": {"type": "STRICT"},
        },
        "QUEUE": queue,
        # pool sizes are left out: `config load` merges, so the platform's factory sizes stay
        "BUFFER_POOL": {
            LOSSLESS_POOL: {"type": "ingress", "mode": "dynamic"},
            LOSSLESS_EGRESS_POOL: {"type": "egress", "mode": "dynamic"},
            LOSSY_EGRESS_POOL: {"type": "egress", "mode": "dynamic"},
        },
        "BUFFER_PROFILE": dict(sorted(profiles.items())),
        "CABLE_LENGTH": {"AZURE": cable},  # SONiC's one CABLE_LENGTH key on every platform
        "BUFFER_PG": pg,
        "BUFFER_QUEUE": bqueue,
        "PFC_WD": wd,
    }


def _queue_ranges(lossless: int) -> list[str]:
    """Queues 0-7 as BUFFER_QUEUE keys: the lossless one alone, the lossy ones below and above it."""
    out = [f"0-{lossless - 1}" if lossless > 1 else "0"] if lossless else []
    out.append(str(lossless))
    if lossless < 7:
        out.append(f"{lossless + 1}-7" if lossless < 6 else "7")
    return out


def backend_config_db(
    plan: Plan,
    bn: BackendNet,
    device: Device,
    sw: BackendSwitch,
    ports: list[BackendPort],
    mgmt: dict[str, dict[str, str]] | None = None,
) -> dict[str, Any]:
    v = backend_view(device, sw, ports)
    meta = _metadata(v, DEVICE_TYPE)
    meta["localhost"]["buffer_model"] = "traditional"  # the profiles below, not ones computed on the switch
    interface: dict[str, Any] = {}
    for p in ports:
        if p.fabric:
            interface[p.port] = {"ipv6_use_link_local_only": "enable"}
        else:
            interface[p.port] = {"vrf_name": p.vrf}
            interface[f"{p.port}|{p.address}"] = {}
    db: dict[str, Any] = {
        "DEVICE_METADATA": meta,
        "PORT": _ports_table(plan, v, bn.switch_mtu),
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{sw.loopback}": {}},
        "INTERFACE": interface,
        **_mgmt_tables(plan, v, mgmt),
        **_qos_tables(bn, ports),
    }
    vrfs = [x for x in bn.vrfs if x.name in sw.vrfs]
    if vrfs:
        # EVPN type-5 only: each VRF's L3VNI on a VLAN whose interface sits in the VRF, no L2VNI
        db.update(
            {
                "VRF": {x.name: {"vni": str(x.l3vni)} for x in vrfs},
                "VLAN": {
                    f"Vlan{x.l3vni_vlan}": {
                        "vlanid": str(x.l3vni_vlan),
                        "mtu": str(bn.switch_mtu),
                        "admin_status": "up",
                    }
                    for x in vrfs
                },
                "VLAN_INTERFACE": {f"Vlan{x.l3vni_vlan}": {"vrf_name": x.name} for x in vrfs},
                "VXLAN_TUNNEL": {"vtep": {"src_ip": v.router_id}},
                "VXLAN_EVPN_NVO": {"nvo": {"source_vtep": "vtep"}},
                "VXLAN_TUNNEL_MAP": {
                    f"vtep|map_{x.l3vni}_Vlan{x.l3vni_vlan}": {"vlan": f"Vlan{x.l3vni_vlan}", "vni": str(x.l3vni)}
                    for x in vrfs
                },
            }
        )
    return db


def backend_frr(
    plan: Plan, bn: BackendNet, sw: BackendSwitch, ports: list[BackendPort], asn: dict[str, int] | None = None
) -> str:
    role = sw.role
    vtep = bool(sw.vrfs)
    tiers = plan.networks.backend.tiers
    peers = {"leaf": "spines", "spine": "leaves and cores" if tiers == 3 else "leaves", "core": "pod spines"}[role]
    fabric = [{"name": p.port, "description": f"{p.peer}:{p.peer_port}"} for p in ports if p.fabric]
    if asn is None:  # every switch's ASN: built once by render_backend (per switch it was O(switches^2))
        asn = {s.name: s.asn for s in bn.switches}
    return (
        _env()
        .get_template("frr.conf.j2")
        .render(
            design=plan.design.name,
            hostname=sw.name,
            role_note=f"RoCE backend {role}, ASN {sw.asn}"
            + (", EVPN type-5 VTEP (tenant VRFs)" if vtep else ", EVPN route transit"),
            vrfs=[
                {"name": x.name, "l3vni": x.l3vni, "rt": x.route_target, "oob": []}
                for x in bn.vrfs
                if x.name in sw.vrfs
            ],
            oob_ports=[],
            fabric=fabric,
            loopback=sw.loopback,
            router_id=sw.loopback.split("/")[0],
            asn=sw.asn,
            peer_description=peers,
            networks=[sw.loopback],
            leaf_filter=role == "leaf",
            fabric_asns=sorted({asn[p.peer] for p in ports if p.fabric}),
            evpn=True,
            vtep=vtep,
            l2vnis=[],
            **_frr_mgmt(plan),
        )
    )


def render_backend(plan: Plan) -> dict[str, str]:
    bn = plan.backend_net
    if bn is None:
        return {}
    by_switch = bn.ports_by_switch()
    devs = plan.index()
    mgmt = mgmt_addresses(plan)
    asn = {s.name: s.asn for s in bn.switches}
    files: dict[str, str] = {}
    for sw in bn.switches:
        files[f"backend/{sw.name}/config_db.json"] = _json(
            backend_config_db(plan, bn, devs[sw.name], sw, by_switch[sw.name], mgmt)
        )
        files[f"backend/{sw.name}/frr.conf"] = backend_frr(plan, bn, sw, by_switch[sw.name], asn)
        files[f"backend/{sw.name}/users.sh"] = sonic_users(plan, devs[sw.name])
    return files
