"""The switches' management plane as a design describes it (the `management:` section's fields beside
the management nodes): who logs in, which NTP, syslog, DNS, TACACS+/RADIUS servers and SNMPv3 users every
switch gets, whether services run in the management VRF, and how BGP sessions are authenticated.
Secrets are named here, never given: see generators.model.secrets."""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SecretName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{2,40}$")]
SSH_KEY = r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,2}( [A-Za-z0-9@._-]{1,64})?$"
ServerList = Annotated[list[IPv4Address], Field(max_length=8)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class SwitchUser(_Model):
    """A local user on every switch. Its password is a secret (hashed with SHA-512 crypt at deploy)."""

    name: str = Field(
        pattern=r"^[a-z_][a-z0-9_-]{0,31}$",
        description="login name (Linux user name rules; not root)",
    )
    role: Literal["admin", "operator"] = Field(
        default="admin",
        description="admin: full access (SONiC sudo, EOS network-admin privilege 15, NVUE system-admin, "
        "MLNX-OS admin); operator: read-only (EOS network-operator, NVUE nvue-monitor, MLNX-OS monitor, SONiC "
        "a login without sudo or docker)",
    )
    ssh_keys: list[Annotated[str, Field(pattern=SSH_KEY)]] = Field(
        default_factory=list, max_length=8, description='public SSH keys, e.g. "ssh-ed25519 AAAA... ops@site"'
    )
    password_secret: SecretName = Field(
        default="switch_password",
        description="the secret holding its password (Pulumi config railyard:<camelCase>, or the secrets file)",
    )


class SnmpUser(_Model):
    """An SNMPv3 user, authPriv: SHA authentication and AES-128 privacy, passphrases from secrets."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{4,32}$", description="SNMPv3 user name (4-32 characters)")
    access: Literal["ro", "rw"] = Field(default="ro", description="read-only or read-write")
    auth_secret: SecretName = Field(default="snmp_auth_password", description="secret of its SHA passphrase")
    priv_secret: SecretName = Field(default="snmp_priv_password", description="secret of its AES passphrase")


class AaaServer(_Model):
    """A TACACS+ or RADIUS server; its shared key is the secret tacacs_key or radius_key."""

    address: IPv4Address = Field(description="server address, reached from the switches' management port")
    port: int | None = Field(default=None, ge=1, le=65535, description="default 49 (TACACS+) or 1812 (RADIUS)")
    timeout: int = Field(default=5, ge=1, le=60, description="seconds per request")


DEFAULT_USERS = (SwitchUser(name="admin", role="admin"),)
DEFAULT_SNMP_USERS = (SnmpUser(name="monitor"),)
SERVICES_DEFAULT = "the OOB DHCP servers (oob.network.dhcp_servers; default the first two management nodes)"


class ManagementPlane(_Model):
    """Fields of `management:` about the switches' management plane (mixed into the Management model)."""

    ntp_servers: ServerList = Field(default_factory=list, description=f"NTP servers; default {SERVICES_DEFAULT}")
    syslog_servers: ServerList = Field(
        default_factory=list, description=f"syslog servers (UDP 514); default {SERVICES_DEFAULT}"
    )
    dns_servers: ServerList = Field(default_factory=list, description=f"DNS resolvers; default {SERVICES_DEFAULT}")
    tacacs_servers: list[AaaServer] = Field(
        default_factory=list,
        max_length=8,
        description="TACACS+ servers in order of preference (key: secret tacacs_key); none: local logins only",
    )
    radius_servers: list[AaaServer] = Field(
        default_factory=list,
        max_length=8,
        description="RADIUS servers in order of preference (key: secret radius_key); none: local logins only",
    )
    snmp_users: list[SnmpUser] = Field(
        default_factory=lambda: list(DEFAULT_SNMP_USERS),
        max_length=8,
        description="SNMPv3 users (authPriv, SHA/AES-128); no SNMPv2c community is rendered",
    )
    users: list[SwitchUser] = Field(
        default_factory=lambda: list(DEFAULT_USERS),
        min_length=1,
        max_length=16,
        description="local users on every switch (default: admin, password secret switch_password)",
    )
    mgmt_vrf: bool = Field(
        default=True,
        description="management port and services in a management VRF (SONiC mgmt, EOS MGMT, Cumulus mgmt); "
        "false: in the default VRF",
    )
    bgp_auth: Literal["md5", "none"] = Field(
        default="md5",
        description="BGP session authentication on every session railyard renders: md5 (TCP-MD5, RFC 2385, "
        "secret bgp_password). TCP-AO is not offered: FRR (SONiC, Cumulus) has none and AVD's schema no key",
    )

    @model_validator(mode="after")
    def _unique_names(self) -> ManagementPlane:
        for what, names in (("users", [u.name for u in self.users]), ("snmp_users", [u.name for u in self.snmp_users])):
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise ValueError(f"{what}: {', '.join(dup)} named more than once; give each its own name")
        if any(u.name == "root" for u in self.users):
            raise ValueError("users: root is the switch OS's own account; name another user")
        return self
