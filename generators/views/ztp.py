"""Zero-touch provisioning, as the plan has it: which switches boot from ZTP, the DHCP option each one's
OS reads, the URL in it, and the compiled files it fetches. The Kea renderer (``oob/kea-dhcp4.conf``) and
the ZTP tree (``ztp/``) both read these records, so the option a switch gets and the file behind it
cannot disagree.

A switch takes part when its management port sits on a planned OOB access port (its DHCP reservation,
by the relay's option 82 circuit-id) and its OS has a ZTP (``ztp_option`` in its ``model/netos.py`` row)
and railyard writes its configs (``<network>/<switch>/``). The others are listed with the reason
(``skipped``): InfiniBand switches (the subnet manager programs them; railyard writes no per-switch
config to fetch), switches of an Ethernet storage fabric (no configs yet), and OOB access switches,
which have no management port of their own on the OOB network (they carry it).

Every URL is the design's ``ztp.url`` (default ``http://<first OOB DHCP server>:8080/``) joined with a
path of the compiled folder, so serving that folder at that URL serves every switch.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import ip_interface

from generators.model.design.schema import ZTP_PORT
from generators.model.netos import network_os
from generators.model.plan import Plan, required

# the networks whose switches railyard writes configs for, each under <network>/<switch>/
CONFIGURED = ("frontend", "backend", "oob")
# Kea's names of the options railyard sends (67 and 114 are in Kea's standard DHCPv4 set; 239 is a
# site-specific code, defined in the config's option-def with Cumulus's own name for it)
OPTION_NAMES = {67: "boot-file-name", 114: "v4-captive-portal", 239: "cumulus-provision-url"}


@dataclass(frozen=True, slots=True)
class DhcpOption:
    code: int
    name: str  # Kea's name of the option
    data: str  # the URL


@dataclass(frozen=True, slots=True)
class ZtpSwitch:
    name: str
    os: str
    address: str  # its management address, as its reservation hands it out (no prefix length)
    access_switch: str  # the OOB access switch and port its management port is cabled to
    access_port: str
    circuit_id: str  # what that access switch's relay stamps into option 82
    configs: tuple[str, ...]  # its compiled files, as paths of the output folder
    entry: str  # the file of ztp/<name>/ its ZTP option names
    options: tuple[DhcpOption, ...]  # what Kea answers its management port with, beside the address

    @property
    def folder(self) -> str:
        return f"ztp/{self.name}"


def enabled(plan: Plan) -> bool:
    return plan.netplan is not None and plan.design.ztp.enabled


def base_url(plan: Plan) -> str:
    """The URL the compiled folder is served at: ztp.url, or port 8080 of the first OOB DHCP server."""
    url = plan.design.ztp.url
    if url is not None:
        return url
    return f"http://{required(plan.netplan, 'netplan').dhcp_servers[0]}:{ZTP_PORT}/"


def url_of(plan: Plan, path: str) -> str:
    return base_url(plan) + path


def switches(plan: Plan) -> list[ZtpSwitch]:
    """The switches that boot from ZTP, in the order of their reservations (access switch, then port)."""
    if not enabled(plan):
        return []
    out: list[ZtpSwitch] = []
    devs = plan.index()
    for r, reason in _candidates(plan):
        if reason:
            continue
        dev = devs[r["device"]]
        row = network_os(plan.catalog.switches[dev.model].os)
        assert row.ztp_option is not None  # _candidates gave no reason
        entry = f"ztp/{dev.name}/{row.ztp_entry}"
        options = [DhcpOption(row.ztp_option, OPTION_NAMES[row.ztp_option], url_of(plan, entry))]
        installer = _installers(plan).get(row.name) if row.onie else None
        if installer is not None:
            # ONIE reads its installer's URL from option 114, "default-url" (RFC 3679's list); RFC 8910 has
            # since given code 114 to the captive portal, Kea's name for it (v4-captive-portal, a string).
            # ONIE, "Image Discovery and Execution":
            # https://opencomputeproject.github.io/onie/design-spec/discovery.html; ISC, "Standard DHCP
            # options": https://kb.isc.org/docs/standard-dhcp-options
            options.append(DhcpOption(114, OPTION_NAMES[114], installer))
        out.append(
            ZtpSwitch(
                name=dev.name,
                os=row.name,
                address=str(ip_interface(r["address"]).ip),
                access_switch=r["switch"],
                access_port=r["switch_port"],
                circuit_id=r["circuit_id"],
                configs=tuple(f"{dev.network}/{dev.name}/{f}" for f in row.config_files),
                entry=entry,
                options=tuple(options),
            )
        )
    return out


def skipped(plan: Plan) -> dict[str, str]:
    """Switch -> why it gets no ZTP answer (its reservation stays), for every switch not in `switches`."""
    if not enabled(plan):
        return {}
    out = {r["device"]: reason for r, reason in _candidates(plan) if reason}
    on_oob = {r["device"] for r in required(plan.netplan, "netplan").oob["ports"]}
    for d in plan.devices:
        if d.kind == "switch" and d.name not in on_oob:
            out[d.name] = "an OOB access switch: no management port of its own on an OOB access port"
    return dict(sorted(out.items()))


def _installers(plan: Plan) -> dict[str, str]:
    return {str(os_): url for os_, url in plan.design.ztp.onie_installers.items()}


def _candidates(plan: Plan) -> list[tuple[dict[str, str], str]]:
    """Every switch management port's reservation, with why it gets no ZTP answer ("" when it does)."""
    devs = plan.index()
    out: list[tuple[dict[str, str], str]] = []
    for r in required(plan.netplan, "netplan").oob["ports"]:
        dev = devs[r["device"]]
        if dev.kind != "switch" or r["kind"] != "mgmt":
            continue
        row = network_os(plan.catalog.switches[dev.model].os)
        if row.ztp_option is None or not row.config_files:
            reason = f"railyard writes no per-switch config for {row.name} switches"
        elif dev.network not in CONFIGURED or plan.networks.technology(dev.network) == "infiniband":
            reason = f"railyard writes no config for {dev.network} switches yet"
        else:
            reason = ""
        out.append((r, reason))
    return out


def summary_row(plan: Plan) -> tuple[str, str, str] | None:
    """The compile summary's line: where the switches fetch from, how many do, and whence the URL."""
    if plan.netplan is None:
        return None
    if not plan.design.ztp.enabled:
        return ("zero-touch provisioning", "oob", "off (ztp.enabled: false): addresses only")
    n = len(switches(plan))
    whence = "ztp.url" if plan.design.ztp.url is not None else "default: first OOB DHCP server; ztp.url"
    return ("zero-touch provisioning", "oob", f"{n} switches from {base_url(plan)} ({whence})")
