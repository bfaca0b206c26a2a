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

import json
from functools import cache
from typing import Any

import jinja2

from generators.model.netdesign import SONIC_MGMT_LEAF_ROUTER, SONIC_SAG
from generators.model.plan import Plan, required
from generators.renderers.netview import SwitchView, frontend_views, rt
from generators.stages.ports import port_table
from generators.vendors.base import Vendor

DEVICE_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}
OOB_DEVICE_TYPE = {"leaf": "MgmtToRRouter", "spine": "MgmtLeafRouter"}
OOB_DEVICE_TYPE_202405 = {"leaf": "MgmtToRRouter", "spine": "LeafRouter"}  # no MgmtLeafRouter in its model
SONIC_MGMT_PORT = "eth0"  # SONiC's management interface, whatever the catalog calls the jack


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("generators.renderers", "templates"), trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                              autoescape=False)


def _json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=4, sort_keys=True) + "\n"


def _fec(speed_gbps: int) -> str:
    # PAM4 and 100G NRZ optics need RS-FEC; 10/25G and 1G run without it on these platforms
    return "rs" if speed_gbps >= 100 else "none"


def _mgmt_address(plan: Plan, name: str) -> dict[str, str] | None:
    for r in required(plan.netplan, "netplan").oob["ports"]:
        if r["device"] == name:
            return r
    return None


def _ports_table(plan: Plan, v: SwitchView, mtu: int) -> dict[str, dict[str, str]]:
    sw = plan.catalog.switches[v.device.model]
    table: dict[str, dict[str, str]] = {}
    for p in port_table(sw):
        use = v.ports.get(p.name)
        group = sw.port_groups[p.group]
        speed = use.speed_gbps if use else group.speed_gbps
        entry = {"alias": p.name, "admin_status": "up" if use else "down", "speed": str(speed * 1000),
                 "mtu": str(mtu), "fec": _fec(speed)}
        if use:
            entry["description"] = use.description
        table[p.name] = entry
    return table


def _metadata(v: SwitchView, types: dict[str, str]) -> dict[str, Any]:
    return {"localhost": {"hostname": v.device.name, "bgp_asn": str(v.asn), "type": types[v.device.role],
                          "docker_routing_config_mode": "split-unified"}}


def _mgmt_tables(plan: Plan, v: SwitchView) -> dict[str, Any]:
    r = _mgmt_address(plan, v.device.name)
    if r is None:
        return {}
    return {"MGMT_PORT": {SONIC_MGMT_PORT: {"alias": SONIC_MGMT_PORT, "admin_status": "up"}},
            "MGMT_INTERFACE": {f"{SONIC_MGMT_PORT}|{r['address']}": {"gwaddr": r["gateway"]}},
            "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}}}


def frontend_config_db(plan: Plan, v: SwitchView) -> dict[str, Any]:
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
        **_mgmt_tables(plan, v),
    }
    # OOB access switches' uplinks (oob.uplink: frontend): unnumbered routed ports in the infra VRF
    db["INTERFACE"].update({p.port: {"vrf_name": p.vrf, "ipv6_use_link_local_only": "enable"}
                            for p in v.ports.values() if p.vrf is not None})
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
        db.update({
            "VLAN": vlan, "VLAN_MEMBER": members, "VLAN_INTERFACE": svi, "VRF": vrf,
            "VXLAN_TUNNEL": {"vtep": {"src_ip": v.router_id}},
            "VXLAN_EVPN_NVO": {"nvo": {"source_vtep": "vtep"}},
            "VXLAN_TUNNEL_MAP": tunnel_map,
        })
        if sag:
            db["SAG"] = {"GLOBAL": {"gateway_mac": np_.anycast_gateway_mac}}
    return db


def frontend_frr(plan: Plan, v: SwitchView) -> str:
    role = v.device.role
    vtep = bool(v.vlans)
    peers = {"leaf": "spines", "spine": "leaves and cores" if plan.networks["frontend"]["tiers"] == 3 else "leaves",
             "core": "pod spines"}[role]
    return _env().get_template("frr.conf.j2").render(
        design=plan.design.name, hostname=v.device.name,
        role_note=f"frontend {role}, ASN {v.asn}" + (", EVPN VTEP" if vtep else ", EVPN route transit"),
        vrfs=[{"name": n["vrf"], "l3vni": n["l3vni"], "rt": rt(plan, n["l3vni"]),
               "oob": [{"name": p.port, "description": p.description} for p in v.vrf_ports(n["vrf"])]}
              for n in v.vrfs],
        oob_ports=[{"name": p.port, "description": p.description} for p in v.ports.values() if p.vrf is not None],
        fabric=[{"name": p.port, "description": p.description} for p in v.fabric_ports],
        loopback=v.loopback, router_id=v.router_id, asn=v.asn, peer_description=peers,
        networks=[v.loopback], leaf_filter=role == "leaf", evpn=True, vtep=vtep,
        l2vnis=[{"vni": s["vni"], "rt": rt(plan, s["vni"])} for s in v.vlans.values()],
    )


def oob_frr(plan: Plan, v: SwitchView) -> str:
    subnets = required(plan.netplan, "netplan").oob["subnets"].get(v.device.name)
    nets = [v.loopback] + ([subnets["bmc"]["subnet"], subnets["mgmt"]["subnet"]] if subnets else [])
    role = "access" if v.device.role == "leaf" else "aggregation"
    return _env().get_template("frr.conf.j2").render(
        design=plan.design.name, hostname=v.device.name, role_note=f"out-of-band {role}, ASN {v.asn}",
        vrfs=[], oob_ports=[], fabric=[{"name": p.port, "description": p.description} for p in v.fabric_ports],
        loopback=v.loopback, router_id=v.router_id, asn=v.asn,
        peer_description=("access switches" if role == "aggregation" else "aggregation pair"
                          if plan.design.oob.uplink == "aggregation" else "frontend service leaves"),
        networks=nets, leaf_filter=role == "access", evpn=False, vtep=False, l2vnis=[],
    )


def oob_config_db(plan: Plan, v: SwitchView) -> dict[str, Any]:
    np_ = required(plan.netplan, "netplan")
    db: dict[str, Any] = {
        "DEVICE_METADATA": _metadata(v, OOB_DEVICE_TYPE if plan.design.oob.sonic_release in SONIC_MGMT_LEAF_ROUTER
                                     else OOB_DEVICE_TYPE_202405),
        "PORT": _ports_table(plan, v, 9100),
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{v.loopback}": {}},
        "INTERFACE": {p.port: {"ipv6_use_link_local_only": "enable"} for p in v.fabric_ports},
        **_mgmt_tables(plan, v),
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
        db["VLAN_MEMBER"] = {f"Vlan{p.untagged}|{p.port}": {"tagging_mode": "untagged"}
                             for p in v.ports.values() if p.untagged is not None}
    return db


def render_frontend_sonic(plan: Plan) -> dict[str, str]:
    if plan.netplan is None or plan.netplan.vendor != "sonic":
        return {}
    files: dict[str, str] = {}
    for name, v in frontend_views(plan).items():
        files[f"frontend/{name}/config_db.json"] = _json(frontend_config_db(plan, v))
        files[f"frontend/{name}/frr.conf"] = frontend_frr(plan, v)
    return files


def render_oob_sonic(plan: Plan, views: dict[str, SwitchView]) -> dict[str, str]:
    files: dict[str, str] = {}
    for name, v in views.items():
        files[f"oob/{name}/config_db.json"] = _json(oob_config_db(plan, v))
        files[f"oob/{name}/frr.conf"] = oob_frr(plan, v)
    return files


VENDOR = Vendor(
    name="sonic",
    serves=frozenset({"frontend", "roce", "oob-access", "oob-aggregation"}),
    mtu=9100,
    # dhcrelay runs with ``-a %h:%p`` (hostname:port alias; each port's alias is set to its name)
    circuit_id="{switch}:{port}",
    summary="SONiC (config_db.json + frr.conf)",
    render_frontend=render_frontend_sonic,
    render_oob=render_oob_sonic,
)
