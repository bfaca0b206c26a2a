"""Zero-touch provisioning end to end, with the real tools in network namespaces: Kea started with the
compiled oob/kea-dhcp4.conf answers a real DHCP client (ISC dhclient, the client SONiC and Cumulus run
for their own ZTP) relayed by a real relay agent (ISC dhcrelay -a, which stamps option 82 as an access
switch does), with that switch's address and ZTP option; the client then fetches the URL from
`railyard serve-ztp`, and every URL the fetched file names in turn, and gets the compiled bytes.

Three namespaces per exchange, as on a site:

    switch (dhclient) --eth0/<port>-- access switch (dhcrelay -a) --uplink/br0-- OOB server (Kea, serve-ztp)

The relay's port towards the switch is named as the access switch's port (Cumulus ``swpN``): dhcrelay
stamps the receiving interface's name as the circuit-id, which is what a Cumulus access switch's relay
sends (``use-pif-circuit-id``) and what the reservation holds. It carries the management VLAN's gateway,
so giaddr selects the subnet as on site. The server holds the DHCP server's planned address, so the URLs
in the answer are reached as compiled.

The one change to the compiled Kea config is where it keeps its lease file (a temporary folder, not
/var/lib/kea). Every wait is on what a tool reports: Kea's DHCP4_STARTED log line, the relay's
"Sending on" line, dhclient's exit once bound, serve-ztp's "serving" line once it listens.

Client identities, as each OS's documentation says they ask:
- Cumulus Linux sends vendor class "cumulus-linux  x86_64" and asks for option 239
  (Cumulus Linux 5.12, "Zero Touch Provisioning - ZTP");
- SONiC ZTP and EOS ZTP ask for option 67, boot-file-name (SONiC ZTP design "3.4 DHCP Options";
  EOS User Manual, "Zero Touch Provisioning");
- ONIE sends vendor class "onie_vendor:<platform>:<arch>", user class "onie_dhcp_user_class" and asks
  for 67 and 114, default-url, among others (ONIE, "Image Discovery and Execution").
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Network, ip_network
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from generators.cli import app
from tests.golden import DESIGNS as GOLDEN
from tests.golden import compile_into
from tests.netns_fabric import run_cmd, run_in, stop, wait_until
from tests.realtools import ToolFailed, require

pytestmark = pytest.mark.daemons

ROOT = Path(__file__).resolve().parent.parent
RAILYARD = [sys.executable, "-c", "import sys; from generators.cli import main; sys.argv[0] = 'railyard'; main()"]
ONIE_IMAGE = "http://192.0.2.9/images/sonic-mellanox.bin"
# a switch's management MAC: the same in ONIE and in the OS it installs (both use the port's own address)
SWITCH_MAC = "02:00:5e:10:00:01"
# the OOB server's LAN: a bridge the access switches' routed uplinks join (access switch n: .n, server: .254)
LAN = "198.51.100"

# the dhclient.conf of each client: what it declares, sends and asks for
CLIENTS = {
    "sonic": "request subnet-mask, routers, host-name, domain-name, bootfile-name;\n",
    "eos": "request subnet-mask, routers, host-name, domain-name, bootfile-name;\n",
    "cumulus": 'option cumulus-provision-url code 239 = text;\nsend vendor-class-identifier "cumulus-linux  x86_64";\n'
    "request subnet-mask, routers, host-name, domain-name, cumulus-provision-url;\n",
    "onie": 'send vendor-class-identifier "onie_vendor:x86_64-mlnx_msn2700-r0:x86";\n'
    'send user-class "onie_dhcp_user_class";\n'
    "request subnet-mask, routers, domain-name-servers, log-servers, host-name, domain-name, ntp-servers, "
    "dhcp-server-identifier, tftp-server-name, bootfile-name, www-server, default-url;\n",
}

# dhclient's script: the address and default route from the lease, nothing else (the stock
# dhclient-script would rewrite the host's /etc/resolv.conf)
CLIENT_SCRIPT = """#!/bin/sh
case "$reason" in
BOUND|RENEW|REBIND|REBOOT)
  ip addr replace "$new_ip_address/$new_subnet_mask" dev "$interface"
  ip route replace default via "${new_routers%% *}" dev "$interface"
  ;;
esac
exit 0
"""


@dataclass
class Site:
    token: str
    work: Path
    out: Path  # the compiled folder
    server_ns: str
    server_addr: str
    kea_log: Path
    serve_log: Path
    created: list[str]


def _start(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with log.open("wb") as fh:
        return subprocess.Popen(args, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, env=env)


def _wait_log(log: Path, pattern: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 60.0) -> None:
    found = wait_until(
        lambda: re.search(pattern, log.read_text(errors="replace")) or proc.poll() is not None, timeout, 0.2
    )
    if not found or proc.poll() is not None:
        raise ToolFailed(f"{what} did not report {pattern!r} (exit {proc.poll()})", log.read_text(errors="replace"))


@contextlib.contextmanager
def site(out: Path, work: Path) -> Iterator[Site]:
    """The OOB server namespace: Kea with the compiled config and `railyard serve-ztp` on the folder."""
    kea, ip = require("kea-dhcp4"), require("ip")
    token = uuid.uuid4().hex[:6]
    plan = json.loads((out / "plan.json").read_text())
    server_addr = plan["netplan"]["dhcp_servers"][0]
    created: list[str] = []
    procs: list[subprocess.Popen[bytes]] = []
    try:
        ns = f"ry{token}-srv"
        run_cmd([ip, "netns", "add", ns])
        created.append(ns)
        run_cmd([ip, "-n", ns, "link", "set", "lo", "up"])
        conf = json.loads((out / "oob/kea-dhcp4.conf").read_text())
        conf["Dhcp4"]["lease-database"]["name"] = str(work / "kea-leases4.csv")
        (work / "kea-dhcp4.conf").write_text(json.dumps(conf))
        env = {**os.environ, "KEA_PIDFILE_DIR": str(work), "KEA_LOCKFILE_DIR": str(work)}
        s = Site(token, work, out, ns, server_addr, work / "kea.log", work / "serve-ztp.log", created)
        # the LAN bridge and the DHCP server's address exist before Kea starts: it opens its sockets on the
        # interfaces and addresses there are then
        run_cmd([ip, "-n", ns, "link", "add", "br0", "type", "bridge"])
        run_cmd([ip, "-n", ns, "addr", "add", f"{LAN}.254/24", "dev", "br0"])
        run_cmd([ip, "-n", ns, "addr", "add", f"{server_addr}/32", "dev", "br0"])
        run_cmd([ip, "-n", ns, "link", "set", "br0", "up"])
        procs.append(_start([ip, "netns", "exec", ns, kea, "-c", str(work / "kea-dhcp4.conf")], s.kea_log, env))
        _wait_log(s.kea_log, r"DHCP4_STARTED", procs[-1], "kea-dhcp4")
        if "DHCPSRV_NO_SOCKETS_OPEN" in s.kea_log.read_text():
            raise ToolFailed("kea-dhcp4 opened no socket", s.kea_log.read_text())
        srv_env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
        procs.append(
            _start(
                [ip, "netns", "exec", ns, *RAILYARD, "serve-ztp", str(out), "--bind", server_addr, "--port", "8080"],
                s.serve_log,
                srv_env,
            )
        )
        _wait_log(s.serve_log, r"^serving \d+ files", procs[-1], "railyard serve-ztp")
        yield s
    finally:
        stop(procs)
        for n in reversed(created):
            run_cmd([ip, "netns", "del", n], check=False)


@dataclass
class Exchange:
    lease: dict[str, str]  # option name -> value, as dhclient wrote its lease
    address: str
    fetched: dict[str, bytes]  # every URL fetched from the switch's namespace -> its bytes


@dataclass(frozen=True)
class Port:
    """An access-switch port as the compiled Kea config has it: its name, the management subnet and the
    gateway address its relay puts in giaddr."""

    name: str
    subnet: IPv4Network
    gateway: str


def port_of(out: Path, switch: str) -> Port:
    """The access port of `switch`'s management port, from the compiled Kea config's reservation."""
    conf = json.loads((out / "oob/kea-dhcp4.conf").read_text())
    for sn in conf["Dhcp4"]["subnet4"]:
        for r in sn["reservations"]:
            if r["hostname"] == switch:
                net = ip_network(sn["subnet"])
                assert isinstance(net, IPv4Network)
                return Port(r["circuit-id"].strip("'"), net, sn["relay"]["ip-addresses"][0])
    raise AssertionError(f"no reservation for {switch}")


def exchange(s: Site, port: Port, client: str, n: int, mac: str, timeout: int = 60) -> Exchange:
    """A switch booting on access port `port` with management MAC `mac`: relay and switch namespaces,
    dhclient through dhcrelay (the relay's interface is named as the port: dhcrelay -a stamps that name
    as the circuit-id)."""
    ip, dhclient, dhcrelay = require("ip"), require("dhclient"), require("dhcrelay")
    net, gateway = port.subnet, port.gateway
    port_name = port.name
    relay, sw = f"ry{s.token}-r{n}", f"ry{s.token}-s{n}"
    work = s.work / f"x{n}"
    work.mkdir()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for ns in (relay, sw):
            run_cmd([ip, "netns", "add", ns])
            s.created.append(ns)
            run_cmd([ip, "-n", ns, "link", "set", "lo", "up"])
        # access switch <-> OOB server, routed; access switch port <-> the switch's management port
        up = f"up{n}"
        run_cmd([ip, "link", "add", "uplink", "netns", relay, "type", "veth", "peer", "name", up, "netns", s.server_ns])
        run_cmd([ip, "link", "add", port_name, "netns", relay, "type", "veth", "peer", "name", "eth0", "netns", sw])
        run_cmd([ip, "-n", relay, "addr", "add", f"{LAN}.{n}/24", "dev", "uplink"])
        run_cmd([ip, "-n", relay, "addr", "add", f"{gateway}/{net.prefixlen}", "dev", port_name])
        run_cmd([ip, "-n", s.server_ns, "link", "set", up, "master", "br0"])
        run_cmd([ip, "-n", sw, "link", "set", "eth0", "address", mac])
        for ns, dev in ((relay, "uplink"), (relay, port_name), (sw, "eth0"), (s.server_ns, up)):
            run_cmd([ip, "-n", ns, "link", "set", dev, "up"])
        run_cmd([ip, "-n", relay, "route", "add", f"{s.server_addr}/32", "via", f"{LAN}.254"])
        run_cmd([ip, "-n", s.server_ns, "route", "replace", str(net), "via", f"{LAN}.{n}"])
        run_in(relay, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        relay_log = work / "dhcrelay.log"
        relay_args = [dhcrelay, "-4", "-d", "-a", "-pf", str(work / "dhcrelay.pid"), "-id", port_name, "-iu", "uplink"]
        procs.append(_start([ip, "netns", "exec", relay, *relay_args, s.server_addr], relay_log))
        _wait_log(relay_log, rf"Sending on +LPF/{re.escape(port_name)}/", procs[-1], "dhcrelay")
        (work / "dhclient.conf").write_text(f"timeout {timeout};\n" + CLIENTS[client])
        script = work / "dhclient-script"
        script.write_text(CLIENT_SCRIPT)
        script.chmod(0o755)
        lease_file, client_log = work / "dhclient.leases", work / "dhclient.log"
        client_args = [dhclient, "-4", "-1", "-d", "-v", "-cf", str(work / "dhclient.conf"), "-lf", str(lease_file)]
        client_args += ["-pf", str(work / "dhclient.pid"), "-sf", str(script), "eth0"]
        # in the foreground (-d) and trying once (-1): it writes the lease file once bound (and stays to
        # renew, until stopped with the others), or exits 2 when no lease came within `timeout`
        dhc = _start([ip, "netns", "exec", sw, *client_args], client_log)
        procs.append(dhc)

        def bound() -> bool:
            return (lease_file.exists() and "fixed-address" in lease_file.read_text()) or dhc.poll() is not None

        wait_until(bound, timeout + 30, 0.2)
        if not (lease_file.exists() and "fixed-address" in lease_file.read_text()):
            raise ToolFailed(
                f"dhclient got no lease (exit {dhc.poll()})",
                client_log.read_text() + relay_log.read_text() + s.kea_log.read_text(),
            )
        lease = _last_lease(lease_file.read_text())
        fetched: dict[str, bytes] = {}
        for url in _urls(lease):
            _follow(sw, url, fetched)
        return Exchange(lease, lease["fixed-address"], fetched)
    finally:
        stop(procs)


def _last_lease(text: str) -> dict[str, str]:
    """The newest lease block of a dhclient lease file: option -> value (quotes removed)."""
    block = text.rsplit("lease {", 1)[1]
    out: dict[str, str] = {}
    for line in block.splitlines():
        m = re.match(r"\s*(?:option )?([a-z0-9-]+) (.*);$", line)
        if m:
            out[m.group(1)] = m.group(2).strip('"')
    return out


def _urls(lease: dict[str, str]) -> list[str]:
    return [v for k, v in lease.items() if k in ("bootfile-name", "cumulus-provision-url")]


def fetch(ns: str, url: str) -> bytes:
    """`url` fetched from inside `ns` with curl (no proxy), its bytes."""
    r = subprocess.run(
        ["ip", "netns", "exec", ns, require("curl"), "--noproxy", "*", "-fsS", "--max-time", "20", url],
        capture_output=True,
        timeout=60,
    )
    if r.returncode != 0:
        raise ToolFailed(f"curl {url} failed ({r.returncode})", r.stderr.decode(errors="replace"))
    return r.stdout


_URL = re.compile(r"https?://[^\s\"']+")


def _follow(ns: str, url: str, fetched: dict[str, bytes]) -> None:
    """Fetch `url`, then every URL its text names (a ZTP file names the switch's configs), once each."""
    if url in fetched:
        return
    data = fetched[url] = fetch(ns, url)
    if url.endswith((".json", ".sh", "/bootstrap")) and "/ztp/" in url:
        for inner in _URL.findall(data.decode()):
            _follow(ns, inner, fetched)


# ------------------------------------------------------------------------------------------------ tests


@pytest.fixture(scope="module")
def compiled_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """golden-cumulus (SONiC frontend and OOB aggregation, Cumulus backend, Cumulus access switches) with
    an ONIE installer for SONiC, and golden-eos (EOS frontend and backend), compiled by `railyard compile`."""
    base = tmp_path_factory.mktemp("ztp-netns")
    out = {"golden-cumulus": base / "golden-cumulus", "golden-eos": base / "golden-eos"}
    onie = f"ztp.onie_installers.sonic={ONIE_IMAGE}"
    r = CliRunner().invoke(
        app,
        ["compile", str(GOLDEN["golden-cumulus"]), "-q", "-o", str(out["golden-cumulus"]), "--set", onie],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    compile_into(GOLDEN["golden-eos"], out["golden-eos"])
    return out


def _switch(out: Path, os_: str) -> tuple[str, dict[str, Any]]:
    """The first switch of that OS in the compiled ZTP index."""
    idx = json.loads((out / "ztp/switches.json").read_text())
    return next((n, e) for n, e in idx["switches"].items() if e["os"] == os_)


def _check_fetched(out: Path, name: str, entry: dict[str, Any], ex: Exchange, s: Site) -> None:
    base = json.loads((out / "ztp/switches.json").read_text())["url"]
    # every file the switch fetches, fetched through serve-ztp from its own address, as compiled
    assert sorted(ex.fetched) == sorted(base + p for p in entry["fetches"])
    for path in entry["fetches"]:
        assert ex.fetched[base + path] == (out / path).read_bytes(), path
    log = s.serve_log.read_text()
    for path in entry["fetches"]:
        assert f"{ex.address} GET /{path}: {name}, {(out / path).stat().st_size} bytes\n" in log


def test_kea_answers_sonic_onie_and_cumulus_and_the_files_are_fetched(
    compiled_out: dict[str, Path], tmp_path: Path
) -> None:
    out = compiled_out["golden-cumulus"]
    with site(out, tmp_path) as s:
        name, entry = _switch(out, "sonic")
        port = port_of(out, name)
        assert (port.name, port.name) == (entry["access_port"].split()[1], entry["circuit_id"])
        # the switch still bare: ONIE asks for 114 and gets the SONiC installer (and 67, which it tries after)
        onie = exchange(s, port, "onie", 1, SWITCH_MAC)
        assert onie.address == entry["address"]
        assert onie.lease["default-url"] == ONIE_IMAGE == entry["dhcp_options"]["114"]
        # the installed SONiC, on the same management port and MAC, asks for 67 only
        ex = exchange(s, port, "sonic", 2, SWITCH_MAC)
        assert ex.address == entry["address"] and ex.lease["host-name"] == name
        assert ex.lease["bootfile-name"] == entry["dhcp_options"]["67"]
        assert ex.lease["bootfile-name"].endswith(f"/ztp/{name}/ztp.json")
        assert "default-url" not in ex.lease  # it did not ask for 114, so Kea did not send it
        _check_fetched(out, name, entry, ex, s)

        name, entry = _switch(out, "cumulus")
        ex = exchange(s, port_of(out, name), "cumulus", 3, "02:00:5e:10:00:02")
        assert ex.address == entry["address"] and ex.lease["host-name"] == name
        assert ex.lease["cumulus-provision-url"] == entry["dhcp_options"]["239"]
        assert ex.lease["cumulus-provision-url"].endswith(f"/ztp/{name}/cumulus-ztp.sh")
        assert "bootfile-name" not in ex.lease and "default-url" not in ex.lease
        _check_fetched(out, name, entry, ex, s)
        assert b"\n# CUMULUS-AUTOPROVISIONING\n" in ex.fetched[ex.lease["cumulus-provision-url"]]

        # another MAC on the SONiC switch's port (a replaced switch) while the first one's lease stands: Kea
        # keeps the reserved address for the lease holder, so the newcomer gets nothing until it is released
        # or expires (docs/howto/ztp.md says so)
        with pytest.raises(ToolFailed, match="dhclient got no lease"):
            exchange(s, port, "sonic", 4, "02:00:5e:10:00:03", timeout=10)
        assert "ALLOC_ENGINE_V4_DISCOVER_ADDRESS_CONFLICT" in s.kea_log.read_text()


def test_kea_answers_eos_and_the_bootstrap_fetches_eos_cfg(compiled_out: dict[str, Path], tmp_path: Path) -> None:
    out = compiled_out["golden-eos"]
    with site(out, tmp_path) as s:
        name, entry = _switch(out, "eos")
        ex = exchange(s, port_of(out, name), "eos", 1, SWITCH_MAC)
        assert ex.address == entry["address"] and ex.lease["host-name"] == name
        assert ex.lease["bootfile-name"] == entry["dhcp_options"]["67"]
        assert ex.lease["bootfile-name"].endswith(f"/ztp/{name}/bootstrap")
        _check_fetched(out, name, entry, ex, s)
        assert ex.fetched[ex.lease["bootfile-name"]].startswith(b"#!/usr/bin/Cli -p2\n")


def test_an_unplanned_port_gets_no_answer(compiled_out: dict[str, Path], tmp_path: Path) -> None:
    """A port of the same access switch that no device is planned on: Kea has no pool, so no lease, which
    the harness reports as a failure (so the exchanges above can fail)."""
    out = compiled_out["golden-eos"]
    name, _ = _switch(out, "eos")
    port = port_of(out, name)
    conf = json.loads((out / "oob/kea-dhcp4.conf").read_text())
    used = {r["circuit-id"].strip("'") for sn in conf["Dhcp4"]["subnet4"] for r in sn["reservations"]}
    free = next(f"swp{i}" for i in range(1, 49) if f"swp{i}" not in used)
    with site(out, tmp_path) as s:
        with pytest.raises(ToolFailed, match="dhclient got no lease"):
            exchange(s, Port(free, port.subnet, port.gateway), "eos", 1, SWITCH_MAC, timeout=10)
        assert "GET" not in s.serve_log.read_text()
