"""The switches' management plane as `railyard validate` prints it: every resolved value of
`management.*` (plan.netplan.management), which ones took a default, and the secrets a deployment
must provide (their names and Pulumi config keys, never a value)."""

from __future__ import annotations

from typing import Any

from generators.model.plan import Plan
from generators.model.secrets import config_key
from generators.model.sections import AaaTarget, MgmtPlane


def secret_names(mp: MgmtPlane) -> list[str]:
    """The secrets the switch configs of this management plane refer to, sorted."""
    names = {u.password_secret for u in mp.users}
    names |= {s for u in mp.snmp_users for s in (u.auth_secret, u.priv_secret)}
    if mp.tacacs:
        names.add("tacacs_key")
    if mp.radius:
        names.add("radius_key")
    if mp.bgp_auth == "md5":
        names.add(mp.bgp_secret)
    return sorted(names)


def _servers(servers: list[AaaTarget]) -> str:
    return ", ".join(f"{s.address}:{s.port} (timeout {s.timeout} s)" for s in servers) or "none (local logins only)"


def management_lines(plan: Plan) -> list[str]:
    """What validate prints under "management plane": one line per setting."""
    if plan.netplan is None:
        return []
    mp = plan.netplan.management
    dflt = " (default: the OOB DHCP servers, oob.network.dhcp_servers)"
    users = "; ".join(
        f"{u.name} ({u.role}, password secret {u.password_secret}, {len(u.ssh_keys)} SSH key"
        f"{'' if len(u.ssh_keys) == 1 else 's'})"
        for u in mp.users
    )
    snmp = "; ".join(f"{u.name} ({u.access}, authPriv SHA/AES-128)" for u in mp.snmp_users) or "none"
    bgp = f"TCP-MD5, secret {mp.bgp_secret}" if mp.bgp_auth == "md5" else "none (management.bgp_auth: none)"
    return [
        f"NTP servers: {', '.join(mp.ntp)}{dflt if 'ntp' in mp.defaulted else ''}",
        f"syslog servers: {', '.join(mp.syslog)}{dflt if 'syslog' in mp.defaulted else ''}",
        f"DNS servers: {', '.join(mp.dns)}{dflt if 'dns' in mp.defaulted else ''}, domain {plan.netplan.domain}",
        f"management VRF: {'on (mgmt / MGMT)' if mp.vrf else 'off (default VRF)'}",
        f"local users: {users}",
        f"SNMPv3 users: {snmp} (no SNMPv2c community)",
        f"TACACS+: {_servers(mp.tacacs)}",
        f"RADIUS: {_servers(mp.radius)}",
        f"BGP session authentication: {bgp}",
        "secrets needed to deploy: " + ", ".join(f"{n} ({config_key(n)})" for n in secret_names(mp)),
    ]


def management_json(plan: Plan) -> dict[str, Any]:
    if plan.netplan is None:
        return {}
    mp = plan.netplan.management
    return {**mp.to_dict(), "secrets": {n: config_key(n) for n in secret_names(mp)}}
