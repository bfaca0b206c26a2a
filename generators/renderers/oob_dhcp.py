"""ISC Kea DHCPv4 config for the out-of-band network: ``oob/kea-dhcp4.conf``.

One Kea subnet per access-switch VLAN (BMC and management), selected by the relay's address (the
SVI gateway the access switch puts in giaddr). Every BMC and management port has a reservation keyed
by the option 82 circuit-id its access switch stamps (see ``netplan.circuit_id``): the address
belongs to the switch port, so a replaced server or switch gets the same address with no MAC
bookkeeping (once the old one's lease is released or expired: Kea keeps a reserved address for the
client holding its lease, tests/test_ztp_netns.py shows it). There are no dynamic pools: a device
plugged into an unplanned port gets nothing.

Zero-touch provisioning (``generators.views.ztp``): a switch's reservation also carries its OS's ZTP
option, the URL of its file under ``ztp/`` (SONiC and EOS: option 67, boot-file-name; Cumulus: option
239, defined here as Cumulus names it), and ONIE's installer URL (option 114) when the design names one.
Kea sends a reservation's option only to a client that asks for it in its parameter request list, so
ONIE (which asks for 114) gets the installer and the installed OS's ZTP client (which does not) the
ZTP file. Kea ARM, "Standard DHCPv4 Options" and "Custom DHCPv4 Options":
https://kea.readthedocs.io/en/kea-2.2.0/arm/dhcp4-srv.html
"""

from __future__ import annotations

import json
from ipaddress import ip_interface
from typing import Any

from generators.model.netos import network_os
from generators.model.plan import Plan, required
from generators.views import ztp

# Option 239 is site-specific (RFC 3942), so Kea needs its definition; Cumulus Linux reads it as text
# (its ISC dhcpd example: `option cumulus-provision-url code 239 = text;`)
OPTION_DEFS = [{"name": ztp.OPTION_NAMES[239], "code": 239, "type": "string", "space": "dhcp4"}]


def kea_config(plan: Plan) -> dict[str, Any]:
    np_ = required(plan.netplan, "netplan")
    oob = np_.oob
    by_subnet: dict[tuple[str, str], list[dict[str, Any]]] = {}
    booting = {s.name: s for s in ztp.switches(plan)}
    for r in oob["ports"]:
        label = f"{r['device']}-bmc" if r["kind"] == "bmc" else r["device"]
        reservation: dict[str, Any] = {
            # Kea reads a quoted string literally; unquoted would be taken as hex
            "circuit-id": f"'{r['circuit_id']}'",
            "ip-address": str(ip_interface(r["address"]).ip),
            "hostname": label,
        }
        sw = booting.get(r["device"]) if r["kind"] == "mgmt" else None
        if sw is not None:
            reservation["option-data"] = [{"code": o.code, "name": o.name, "data": o.data} for o in sw.options]
            reservation["user-context"] = {"ztp": sw.os}
        by_subnet.setdefault((r["switch"], r["kind"]), []).append(reservation)
    subnets = []
    sid = 0
    for kind in ("bmc", "mgmt"):
        for sw in sorted(oob["subnets"]):
            s = oob["subnets"][sw][kind]
            sid += 1
            subnets.append(
                {
                    "id": sid,
                    "subnet": s["subnet"],
                    "relay": {"ip-addresses": [s["gateway"]]},
                    "option-data": [{"name": "routers", "data": s["gateway"]}],
                    "reservations": by_subnet.get((sw, kind), []),
                    "user-context": {
                        "switch": sw,
                        "vlan": s["vlan"],
                        "kind": kind,
                        "circuit-id": network_os(oob["subnets"][sw]["os"]).circuit_id_format,
                    },
                }
            )
    return {
        "Dhcp4": {
            # relayed traffic only: plain UDP sockets, no raw sockets on the server's interfaces
            "interfaces-config": {"interfaces": ["*"], "dhcp-socket-type": "udp"},
            "lease-database": {"type": "memfile", "persist": True, "lfc-interval": 3600},
            "host-reservation-identifiers": ["circuit-id"],
            "reservations-global": False,
            "reservations-in-subnet": True,
            "reservations-out-of-pool": True,
            "valid-lifetime": 86400,
            "renew-timer": 43200,
            "rebind-timer": 75600,
            **({"option-def": OPTION_DEFS} if any(o.code == 239 for s in booting.values() for o in s.options) else {}),
            "option-data": [{"name": "domain-name", "data": np_.domain}],
            "subnet4": subnets,
            "loggers": [{"name": "kea-dhcp4", "output_options": [{"output": "stdout"}], "severity": "INFO"}],
        }
    }


def render_kea(plan: Plan) -> dict[str, str]:
    if plan.netplan is None:
        return {}
    return {"oob/kea-dhcp4.conf": json.dumps(kea_config(plan), indent=2) + "\n"}
