"""Storage-side tenant spec: ``storage/tenants.json``, what the storage cluster must be told so each
tenant reaches its volumes only on its own network.

Per network (the provider's infra VRF and each tenant): the storage VLAN/VNI and subnet the storage
front-ends answer on (reachable only inside that tenant's VRF), the front-end addresses per storage
server port, and the tenant's client subnet. The same facts are given in the shapes the two common
parallel file systems take them: a VAST tenant plus its VIP pool (REST ``/tenants``, ``/vippools``
field names), and a Weka organization with an NFS interface group and client group.
"""

from __future__ import annotations

import json
from ipaddress import IPv4Network, ip_interface, ip_network
from typing import Any, TypedDict

from generators.model.plan import Plan, required

SCHEMA = "railyard.storage-tenants/1"


class StorageServer(TypedDict):
    """One entry of storage_servers: a storage server and its frontend ports, in link order."""

    name: str
    model: str
    ports: list[str]


def _net(s: str) -> IPv4Network:
    n = ip_network(s)
    assert isinstance(n, IPv4Network)
    return n


def storage_spec(plan: Plan) -> dict[str, Any]:
    np_ = required(plan.netplan, "netplan")
    devs = plan.index()
    ports: dict[str, list[str]] = {}
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier == "server-leaf" and devs[lk.a_device].kind == "storage":
            ports.setdefault(lk.a_device, []).append(lk.a_port)
    servers: list[StorageServer] = [
        {"name": d.name, "model": d.model, "ports": ports.get(d.name, [])} for d in plan.devices if d.kind == "storage"
    ]
    tenants = []
    for n in np_.networks:
        s, h = n["storage"], n["hosts"]
        snet, hnet = _net(s["subnet"]), _net(h["subnet"])
        fronts = []
        for srv in servers:
            for p, addr in zip(srv["ports"], np_.storage_addresses[srv["name"]][n["vrf"]], strict=False):
                fronts.append({"server": srv["name"], "port": p, "address": addr})
        ips = [str(ip_interface(f["address"]).ip) for f in fronts]
        client_range = [str(hnet.network_address + 1), str(hnet.broadcast_address - 1)]
        label = n["tenant"] or n["name"]
        tenants.append(
            {
                "name": label,
                "provider": n["tenant"] is None,
                "vrf": n["vrf"],
                "vlan": s["vlan"],
                "vni": s["vni"],
                "subnet": s["subnet"],
                "gateway": s["gateway"],
                "frontend_addresses": fronts,
                "client_networks": [h["subnet"]],
                "vast": {
                    "tenant": {"name": label, "client_ip_ranges": [client_range]},
                    "vippool": {
                        "name": f"{label}-vip",
                        "tenant": label,
                        "role": "PROTOCOLS",
                        "vlan": s["vlan"],
                        "subnet_cidr": snet.prefixlen,
                        "gw_ip": s["gateway"],
                        "ip_ranges": [[ips[0], ips[-1]]] if ips else [],
                    },
                },
                "weka": {
                    "organization": {"name": label},
                    "interface_group": {
                        "name": f"{label}-nfs",
                        "type": "NFS",
                        "vlan": s["vlan"],
                        "subnet": str(snet.netmask),
                        "gateway": s["gateway"],
                        "ips": ips,
                    },
                    "client_group": {
                        "name": f"{label}-clients",
                        "rules": [{"type": "ip", "value": f"{hnet.network_address}/{hnet.netmask}"}],
                    },
                },
            }
        )
    return {"schema": SCHEMA, "design": plan.design.name, "storage_servers": servers, "tenants": tenants}


def render_storage_tenants(plan: Plan) -> dict[str, str]:
    if plan.netplan is None:
        return {}
    return {"storage/tenants.json": json.dumps(storage_spec(plan), indent=2) + "\n"}
