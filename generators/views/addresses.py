"""The IP plan for NetBox: tenants, VRFs, prefixes and every address with the (device, interface)
it lives on, as the NetBox inventory (`handover.netbox_inventory`) takes them; the REST push and the
bulk-import files (`renderers.netbox_csv`) are both made from that inventory.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import ip_interface

from generators.model.plan import Plan, required
from generators.views.switches import frontend_views


@dataclass(frozen=True, slots=True)
class Address:
    """One planned address and where it lives: the NetBox inventory binds it to the interfaces in `on`."""

    address: str  # a.b.c.d/len
    vrf: str  # "" = the global table
    tenant: str
    role: str  # NetBox IP role: loopback, anycast, vip, or "" for none
    dns_name: str
    description: str
    # (device, interface) as the device's OS names it; an anycast gateway lives on the SVI of every
    # leaf that carries its VLAN, every other address on one interface
    on: tuple[tuple[str, str], ...]


# interface names of the switch OSes where they differ from SONiC's (EOS names these as SONiC does)
_LOOPBACK = {"cumulus": "lo"}
HOST_BOND = "bond0"  # the active-backup bond over a server's two frontend ports


def loopback_name(os: str) -> str:
    return _LOOPBACK.get(os, "Loopback0")


def svi_name(os: str, vlan: int) -> str:
    return f"vlan{vlan}" if os == "cumulus" else f"Vlan{vlan}"


def addresses(plan: Plan) -> list[Address]:
    """Every address of the network plan, by VRF, then address."""
    np_ = required(plan.netplan, "netplan")
    dom = np_.domain
    devs = plan.index()
    cat = plan.catalog

    def os_of(switch: str) -> str:
        return cat.switches[devs[switch].model].os

    tenant_of = {n["vrf"]: (n["tenant"] or "") for n in np_.networks}
    # which leaves carry each frontend VLAN, and so hold its anycast gateway
    carriers: dict[int, list[str]] = {}
    for name, view in frontend_views(plan).items():
        for vid in view.vlans:
            carriers.setdefault(vid, []).append(name)
    out: list[Address] = []

    def add(
        address: str, description: str, on: list[tuple[str, str]], vrf: str = "", role: str = "", dns: str = ""
    ) -> None:
        out.append(Address(address, vrf, tenant_of.get(vrf, ""), role, dns, description, tuple(on)))

    for name, lo in np_.loopbacks.items():
        add(
            lo,
            f"{name} Loopback0 (router-id)",
            [(name, loopback_name(os_of(name)))],
            role="loopback",
            dns=f"{name}.{dom}",
        )
    for name, lo in np_.vteps.items():
        add(
            lo,
            f"{name} Loopback1 (VXLAN tunnel source)",
            [(name, "Loopback1")],
            role="loopback",
            dns=f"{name}-vtep.{dom}",
        )
    for n in np_.networks:
        for seg in ("hosts", "storage"):
            s = n[seg]
            plen = s["subnet"].split("/")[1]
            vid = s["vlan"]
            add(
                f"{s['gateway']}/{plen}",
                f"{n['name']} {seg} anycast gateway Vlan{vid}",
                [(leaf, svi_name(os_of(leaf), vid)) for leaf in carriers.get(vid, [])],
                vrf=n["vrf"],
                role="anycast",
            )
    for h, a in np_.hosts.items():
        add(a["address"], f"{h} frontend bond (eth0+eth1)", [(h, HOST_BOND)], vrf=a["vrf"], dns=f"{h}.{dom}")
    for stor, per_vrf in np_.storage_addresses.items():
        port_name = cat.storage_servers[devs[stor].model].frontend_port_name
        for vrf, addrs in per_vrf.items():
            for p, addr in enumerate(addrs):
                add(
                    addr,
                    f"{stor} port {p} storage front-end for {vrf}",
                    [(stor, port_name.format(i=p))],
                    vrf=vrf,
                    role="vip",
                )
    for sw, sn in np_.oob["subnets"].items():
        for kind in ("bmc", "mgmt"):
            s = sn[kind]
            add(
                f"{s['gateway']}/{s['subnet'].split('/')[1]}",
                f"{sw} Vlan{s['vlan']} {kind} gateway, DHCP relay",
                [(sw, svi_name(sn["os"], s["vlan"]))],
            )
    for r in np_.oob["ports"]:
        label = f"{r['device']}-bmc" if r["kind"] == "bmc" else f"{r['device']}-mgmt"
        add(
            r["address"],
            f"{r['device']} {r['port']} on {r['switch']} {r['switch_port']} (DHCP circuit-id {r['circuit_id']})",
            [(r["device"], r["port"])],
            dns=f"{label}.{dom}",
        )
    out.sort(key=lambda a: (a.vrf, int(ip_interface(a.address).ip)))
    return out


def tenant_rows(plan: Plan) -> list[dict[str, str]]:
    np_ = required(plan.netplan, "netplan")
    return [
        {"name": n["tenant"], "slug": n["tenant"], "description": f"railyard tenant, {n['vrf']}"}
        for n in np_.networks
        if n["tenant"]
    ]


def vrf_rows(plan: Plan) -> list[dict[str, str]]:
    np_ = required(plan.netplan, "netplan")
    admin = plan.design.frontend.evpn.route_target_admin
    return [
        {
            "name": n["vrf"],
            "rd": f"{admin}:{n['l3vni']}",
            "tenant": n["tenant"] or "",
            "enforce_unique": "true",
            "description": f"{n['name']}: L3VNI {n['l3vni']}",
        }
        for n in np_.networks
    ]


@dataclass(frozen=True, slots=True)
class Prefix:
    prefix: str
    vrf: str  # "" = the global table
    tenant: str
    status: str  # container (railyard's pools) or active
    description: str
    # the VLAN the subnet is on: ("frontend", vid) for a tenant segment, ("oob", vid) for an access
    # switch's BMC or management VLAN (the same vid on every access switch), None for a pool
    vlan: tuple[str, int] | None


def prefixes(plan: Plan) -> list[Prefix]:
    np_ = required(plan.netplan, "netplan")
    ad = plan.design.addressing
    out = [
        Prefix(str(getattr(ad, k)), "", "", "container", f"railyard pool addressing.{k}", None)
        for k in ("loopbacks", "management", "bmc")
    ]
    for n in np_.networks:
        for seg in ("hosts", "storage"):
            s = n[seg]
            out.append(
                Prefix(
                    s["subnet"],
                    n["vrf"],
                    n["tenant"] or "",
                    "active",
                    f"{n['name']} {seg} Vlan{s['vlan']} VNI {s['vni']}",
                    ("frontend", s["vlan"]),
                )
            )
    for sw, sn in np_.oob["subnets"].items():
        for kind in ("bmc", "mgmt"):
            s = sn[kind]
            out.append(Prefix(s["subnet"], "", "", "active", f"{sw} {kind} Vlan{s['vlan']}", ("oob", s["vlan"])))
    return out
