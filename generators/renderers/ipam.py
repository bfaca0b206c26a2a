"""The IP plan for NetBox: ``ipam.csv`` (IP address bulk import) plus the objects it refers to,
``netbox/tenants.csv``, ``netbox/vrfs.csv`` and ``netbox/prefixes.csv`` (import those first: an
address's VRF and tenant are looked up by name).

Addresses are not bound to device interfaces here: NetBox's interface names come from device
types, which differ from the switch OS names (``Loopback0``, ``eth0``); the description says where
each address lives.
"""

from __future__ import annotations

import csv
import io
from ipaddress import ip_interface

from generators.model.plan import Plan, required

IP_COLUMNS = ["address", "vrf", "tenant", "status", "role", "dns_name", "description"]
PREFIX_COLUMNS = ["prefix", "vrf", "tenant", "status", "is_pool", "description"]


def _csv(columns: list[str], rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def ip_rows(plan: Plan) -> list[dict[str, str]]:
    np_ = required(plan.netplan, "netplan")
    dom = np_.domain
    tenant_of = {n["vrf"]: (n["tenant"] or "") for n in np_.networks}
    rows: list[dict[str, str]] = []

    def add(address: str, description: str, vrf: str = "", role: str = "", dns: str = "") -> None:
        rows.append({"address": address, "vrf": vrf, "tenant": tenant_of.get(vrf, ""), "status": "active",
                     "role": role, "dns_name": dns, "description": description})

    for name, lo in np_.loopbacks.items():
        add(lo, f"{name} Loopback0 (router-id)", role="loopback", dns=f"{name}.{dom}")
    for name, lo in np_.vteps.items():
        add(lo, f"{name} Loopback1 (VXLAN tunnel source)", role="loopback", dns=f"{name}-vtep.{dom}")
    for n in np_.networks:
        for seg in ("hosts", "storage"):
            s = n[seg]
            plen = s["subnet"].split("/")[1]
            add(f"{s['gateway']}/{plen}", f"{n['name']} {seg} anycast gateway Vlan{s['vlan']}", vrf=n["vrf"],
                role="anycast")
    for h, a in np_.hosts.items():
        add(a["address"], f"{h} frontend bond (eth0+eth1)", vrf=a["vrf"], dns=f"{h}.{dom}")
    for stor, per_vrf in np_.storage_addresses.items():
        for vrf, addrs in per_vrf.items():
            for p, addr in enumerate(addrs):
                add(addr, f"{stor} port {p} storage front-end for {vrf}", vrf=vrf, role="vip")
    for sw, sn in np_.oob["subnets"].items():
        for kind in ("bmc", "mgmt"):
            s = sn[kind]
            add(f"{s['gateway']}/{s['subnet'].split('/')[1]}", f"{sw} Vlan{s['vlan']} {kind} gateway, DHCP relay")
    for r in np_.oob["ports"]:
        label = f"{r['device']}-bmc" if r["kind"] == "bmc" else f"{r['device']}-mgmt"
        add(r["address"], f"{r['device']} {r['port']} on {r['switch']} {r['switch_port']} "
            f"(DHCP circuit-id {r['circuit_id']})", dns=f"{label}.{dom}")
    rows.sort(key=lambda r: (r["vrf"], int(ip_interface(r["address"]).ip)))
    return rows


def prefix_rows(plan: Plan) -> list[dict[str, str]]:
    np_ = required(plan.netplan, "netplan")
    ad = plan.design.addressing
    rows = [{"prefix": str(getattr(ad, k)), "vrf": "", "tenant": "", "status": "container", "is_pool": "false",
             "description": f"railyard pool addressing.{k}"} for k in ("loopbacks", "management", "bmc")]
    for n in np_.networks:
        for seg in ("hosts", "storage"):
            s = n[seg]
            rows.append({"prefix": s["subnet"], "vrf": n["vrf"], "tenant": n["tenant"] or "", "status": "active",
                         "is_pool": "false", "description": f"{n['name']} {seg} Vlan{s['vlan']} VNI {s['vni']}"})
    for sw, sn in np_.oob["subnets"].items():
        for kind in ("bmc", "mgmt"):
            s = sn[kind]
            rows.append({"prefix": s["subnet"], "vrf": "", "tenant": "", "status": "active", "is_pool": "false",
                         "description": f"{sw} {kind} Vlan{s['vlan']}"})
    return rows


def render_ipam(plan: Plan) -> dict[str, str]:
    if plan.netplan is None:
        return {}
    np_ = required(plan.netplan, "netplan")
    tenants = [{"name": n["tenant"], "slug": n["tenant"], "description": f"railyard tenant, {n['vrf']}"}
               for n in np_.networks if n["tenant"]]
    admin = plan.design.frontend.evpn.route_target_admin
    vrfs = [{"name": n["vrf"], "rd": f"{admin}:{n['l3vni']}", "tenant": n["tenant"] or "", "enforce_unique": "true",
             "description": f"{n['name']}: L3VNI {n['l3vni']}"} for n in np_.networks]
    return {
        "ipam.csv": _csv(IP_COLUMNS, ip_rows(plan)),
        "netbox/prefixes.csv": _csv(PREFIX_COLUMNS, prefix_rows(plan)),
        "netbox/tenants.csv": _csv(["name", "slug", "description"], tenants),
        "netbox/vrfs.csv": _csv(["name", "rd", "tenant", "enforce_unique", "description"], vrfs),
    }
