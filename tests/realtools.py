"""Run the real tools that railyard's generated files must satisfy, and read their verdicts.

Every helper finds its binary with :func:`require` (a missing one raises :class:`ToolMissing`
naming the Debian package; ``scripts/install-system-deps.sh`` installs them all) and raises
:class:`ToolFailed` carrying the tool's own log text when the tool refuses to run at all.
A *verdict* (a WARNING, a fallback, a parse error) is returned as data, never raised, so a
test can assert on exactly the message it expects.

Behaviour found by trying the tools on Debian 12 (slurm 22.05.8, opensm 3.3.23, ibsim 0.10,
FRR 8.4.4, Kea 2.2.0, Chromium 156), which the helpers below rely on:

slurmctld
  * Topology problems that do not stop the daemon are logged, and the daemon exits 0 later.
    The exact lines (after ``error: ``):
    ``WARNING: Multiple leaf switches contain nodes: gpu002`` (a node under two leaves),
    ``WARNING: switches lack access to 1 nodes: gpu004`` (a node under no switch),
    ``WARNING: Invalid hostnames in switch configuration: gpu005`` (preceded by
    ``_find_node_record: lookup failure for node "gpu005"``), and, lower case and without
    ``error:``, ``TOPOLOGY: warning -- no switch can reach all nodes through its descendants``
    (no common root). :attr:`SlurmResult.warnings` matches ``warning`` case-insensitively.
  * Fatal problems exit 1 before ``scontrol ping`` says UP, e.g.
    ``fatal: Switch configuration spine has invalid child (leaf3)``: :class:`ToolFailed`.
  * A first start always logs some ``error:`` lines that mean nothing here (missing state
    files on a fresh StateSaveLocation, PMIx not installed, MailProg missing); they are
    filtered out of :attr:`SlurmResult.errors` by ``SLURMCTLD_BENIGN``.
  * ``State=CLOUD`` nodes are powered down and ``scontrol show nodes`` prints
    ``No nodes in the system`` unless ``PrivateData=cloud`` is set: it is added when absent.
  * ``scontrol`` against a controller that died retries for ~10 s, so the helper watches the
    process itself while it waits.
  * topology.conf, gres.conf, ... are read from the directory of ``SLURM_CONF``; so is a relative
    ``Include nodes.conf``.
  * Nodes not declared ``State=CLOUD``/``FUTURE`` are resolved by DNS at startup, ~10 s per
    unknown host (``slurm_set_addr: Unable to resolve "gpu001"``) before ``scontrol`` answers: put
    ``NodeName=DEFAULT State=CLOUD`` in front of generated node lines.
  * Hostlists allow one numeric range per term: ``su[1-4]-leaf[01-08]`` is ``Invalid hostlist``
    (``scontrol show hostnames``), ``su1-leaf[01-08],su2-leaf[01-08]`` is fine.
  * ``AllowGroups=`` naming a group this machine lacks logs ``error: _get_group_members: Could
    not find configured group``; ``AllowAccounts=`` is not checked at startup.

ibsim / OpenSM
  * ibsim ignores port GUIDs written in the net file (``[1](guid)``): a CA's port GUID is its
    node GUID plus the port number. partitions.conf members are *port* GUIDs, so CA GUIDs
    one apart collide with each other's ports; use :meth:`IbFabric.port_guid`.
  * Discovered output renames nodes ``S-<guid>`` / ``H-<guid>``; the node description (the
    comment after ``#``) is what survives a round trip. Unconnected switch ports report
    ``4x SDR`` in ``ibnetdiscover -p``.
  * ``opensm -o`` exits 0 whatever happens. The routing engine actually used is in the
    line ``osm_ucast_mgr_process: <engine> tables configured on all switches``; ftree
    success also logs ``FatTree rank (roots to leaf switches): N``. ftree failures log
    ``ftree: cannot build lid matrices`` after one of ``Fabric rank is 1 (should be between
    2 and 8)`` (a leaf given as root), ``Fabric topology is not a fat-tree`` (a CA on a
    spine, with ``ERR AB26``; or after ``ERR AB0D: Fabric topology hasn't been identified as
    FatTree``), then minhop is used.
  * ftree checks that the fabric is a *pure* fat tree (``ERR AB0A: Different number of
    downward port groups``, ``ERR AB0D``) only when NO root GUID file is given: with ``-a``
    a lopsided tree (a spine cabled to one leaf only) is routed as ftree without a word. To
    prove a generated fabric is a fat tree, run ``opensm(root_guids=None)`` as well.
    A cross link between two leaves is not rejected either way.
  * A broken partitions.conf logs ``parse_part_conf: PARSE ERROR: line N: ...`` and the
    default partition is used.
  * Log lines look like ``Nov 29 14:30:22 030635 [1AF1D6C0] 0x02 -> text``; level 0x01 is
    an error.
  * OpenSM and every diag tool attach to the *first* node of the net file (the log says
    ``sim_connect: attached as client 0 at node "S-spine"``), or to the node whose quoted id is
    in ``SIM_HOST``.
  * A speed ibsim does not know (``4xNDR``) logs ``parse_port_link_width_and_speed: cannot parse
    speed / invalid speed`` per port and loads anyway: write ``4xHDR`` for the simulation.
  * ``opensm -o -F opensm.conf`` honours ``root_guid_file`` and ``partition_config_file`` from the
    options file. Pkeys show the *last* sweep: a run without partitions leaves every port a full
    member (0xffff) of the default partition.
  * ftree (like updn) never routes root-leaf-root: from a root switch's port 0 the other roots are
    unreachable by LID (``smpquery ... node info query failed``) unless ``connect_roots TRUE``.

FRR / Kea / Chromium
  * ``vtysh -C -f`` exits 2 with ``line N: % Unknown command[..]: <text>`` on bad grammar;
    it does not check semantics (undefined peer-groups pass).
  * ``kea-dhcp4 -t`` exits 1 with ``DHCP4_PARSER_FAIL ...`` and ``Error encountered: ...``;
    circuit-id reservations take a quoted string (``"'leaf1:swp1'"``) or hex. Duplicate
    reserved addresses are rejected (``There's already a reservation for this address``).
  * Chromium (as root, no D-Bus) prints dozens of harmless ``ERROR:dbus/bus.cc`` lines and
    the Debian wrapper prints ``/usr/bin/chromium: 9: [: ...: unexpected operator``; success
    is ``N bytes written to file <pdf>`` and exit 0.
"""

from __future__ import annotations

import contextlib
import glob
import os
import random
import re
import shutil
import socket
import subprocess
import time
import uuid
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import hostlist  # type: ignore[import-untyped]

from generators.printing import PrintError, print_pdf, read_log, run_headless, stop_group

__all__ = [
    "SLURMCTLD_BENIGN",
    "IbFabric",
    "IbLink",
    "IbNode",
    "IbPortReport",
    "OpenSMResult",
    "SlurmResult",
    "SwitchInfo",
    "ToolFailed",
    "ToolMissing",
    "TraceHop",
    "TraceResult",
    "chromium_dump_dom",
    "chromium_print_pdf",
    "chromium_screenshot",
    "free_tcp_port",
    "frr_check",
    "ib_links_by_desc",
    "ibsim_fabric",
    "kea_check",
    "parse_ibnetdiscover",
    "parse_ibtracert",
    "parse_pkeys",
    "parse_scontrol_records",
    "parse_show_topology",
    "pdf_page_count",
    "require",
    "run_slurmctld",
    "sonic_yang_check",
    "sonic_yang_dir",
]

# ---------------------------------------------------------------------------------------------
# Errors and binaries
# ---------------------------------------------------------------------------------------------

# Binary -> Debian package, so a missing tool says what to install rather than just "not found".
PACKAGE_OF: dict[str, str] = {
    "slurmctld": "slurmctld",
    "scontrol": "slurm-client",
    "ibsim": "ibsim-utils",
    "opensm": "opensm",
    "ibnetdiscover": "infiniband-diags",
    "smpquery": "infiniband-diags",
    "ibtracert": "infiniband-diags",
    "vtysh": "frr",
    "lldpd": "lldpd",
    "lldpctl": "lldpd",
    "kea-dhcp4": "kea-dhcp4-server",
    "dhclient": "isc-dhcp-client",
    "dhcrelay": "isc-dhcp-relay",
    "curl": "curl",
    "chromium": "chromium",
    "pdfinfo": "poppler-utils",
    "pdftoppm": "poppler-utils",
    "zbarimg": "zbar-tools",
    "ip": "iproute2",
    "ping": "iputils-ping",
    "netplan": "netplan.io",
}

# Daemons live in sbin, which a CI environment or a non-login shell may leave off PATH.
_EXTRA_PATH = ("/usr/sbin", "/sbin", "/usr/local/sbin")


class ToolMissing(RuntimeError):
    """A required binary is not installed."""


class ToolFailed(RuntimeError):
    """A tool refused to run; ``log`` holds its own output for the failure message."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(f"{message}\n--- tool output ---\n{log}" if log else message)
        self.log = log


def require(binary: str) -> str:
    """Absolute path of ``binary``, or :class:`ToolMissing` naming the Debian package."""
    path_dirs = os.environ.get("PATH", "").split(os.pathsep)
    found = shutil.which(binary, path=os.pathsep.join([*path_dirs, *_EXTRA_PATH]))
    if found is None:
        pkg = PACKAGE_OF.get(binary, "?")
        raise ToolMissing(f"{binary} not found: install Debian package '{pkg}' (scripts/install-system-deps.sh)")
    return found


# Ports for test daemons come from below the kernel's ephemeral range: a port the kernel hands out for
# bind(0) is one it also hands to outgoing connections, and under load (two pytest workers, NetBox
# talking to PostgreSQL and Redis) one of those took a daemon's port between this check and its bind.
_PORT_FLOOR = 10000
_PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_floor() -> int:
    try:
        return int(_PORT_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default range starts here


def free_tcp_port() -> int:
    """A TCP port free on all addresses right now (slurmctld binds the wildcard address), chosen at random
    below the ephemeral range, where no outgoing connection is given a port."""
    top = _ephemeral_floor()
    if top - _PORT_FLOOR < 1000:  # a range that starts low leaves no room below it: let the kernel pick
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("", 0))
            return int(s.getsockname()[1])
    for _ in range(200):
        port = random.randrange(_PORT_FLOOR, top)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
            return port
    raise ToolFailed(f"no free TCP port in {_PORT_FLOOR}-{top - 1} after 200 tries")


# every daemon here is started with start_new_session=True, so its group id is its pid and only
# processes we started are signalled
_read = read_log
_stop_process = stop_group


# ---------------------------------------------------------------------------------------------
# slurmctld
# ---------------------------------------------------------------------------------------------

# Lines a fresh controller always logs here; none says anything about the config under test.
SLURMCTLD_BENIGN: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"Configured MailProg is invalid",
        r"mpi/pmix",
        r"PMIx",
        r"MPI: Cannot create context",
        r"Could not open (job|reservation|node|part|trigger)\w* state file",
        r"NOTE: Trying backup state save file",
        r"No (job|reservation)\w* state file",
        # slurmctld times gettimeofday() at start; on a busy machine (two cores, other runs) it says so
        r"High latency for 1000 calls to gettimeofday\(\)",
    )
)

# Machine-local keys: a generated slurm.conf names real hosts, munge and real paths, none of
# which exist in a test, so these are always replaced (auth/munge without munged hangs).
_SLURM_FORCED_KEYS = (
    "SlurmctldHost",
    "ControlMachine",
    "BackupController",
    "SlurmctldPort",
    "StateSaveLocation",
    "SlurmctldPidFile",
    "SlurmctldLogFile",
    "AuthType",
    "CredType",
    "SlurmUser",
    "MailProg",
    "SlurmctldDebug",
)


class SwitchInfo(TypedDict):
    """One ``SwitchName=`` record of ``scontrol show topology``, hostlists expanded."""

    level: int
    link_speed: int
    switches: list[str]
    nodes: list[str]


@dataclass(frozen=True)
class SlurmResult:
    """What a slurmctld run showed: scontrol outputs, the full log and its warnings."""

    topology: str
    nodes: str
    partitions: str
    log: str
    warnings: list[str]
    errors: list[str]
    port: int
    slurm_conf: Path

    @property
    def topology_parsed(self) -> dict[str, SwitchInfo]:
        return parse_show_topology(self.topology)

    @property
    def nodes_parsed(self) -> dict[str, dict[str, str]]:
        return {r["NodeName"]: r for r in parse_scontrol_records(self.nodes) if "NodeName" in r}

    @property
    def partitions_parsed(self) -> dict[str, dict[str, str]]:
        return {r["PartitionName"]: r for r in parse_scontrol_records(self.partitions) if "PartitionName" in r}


def _slurm_key(line: str) -> str | None:
    m = re.match(r"\s*([A-Za-z]+)\s*=", line)
    return m.group(1).lower() if m else None


def _prepare_slurm_conf(text: str, workdir: Path, port: int) -> str:
    forced = {k.lower() for k in _SLURM_FORCED_KEYS}
    kept = [ln for ln in text.splitlines() if _slurm_key(ln) not in forced]
    present = {_slurm_key(ln) for ln in kept}
    head = [
        "# Machine-local settings written by tests/realtools.py",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={port}",
        f"StateSaveLocation={workdir / 'state'}",
        f"SlurmctldPidFile={workdir / 'slurmctld.pid'}",
        f"SlurmctldLogFile={workdir / 'slurmctld.log'}",
        "AuthType=auth/none",
        "CredType=cred/none",
        "SlurmUser=root",
        "MailProg=/bin/true",
        # The readiness check and the WARNING scan need info-level lines, whatever was generated.
        "SlurmctldDebug=info",
    ]
    if "clustername" not in present:
        head.append("ClusterName=railyardtest")
    if "privatedata" not in present:
        head.append("PrivateData=cloud")  # else State=CLOUD nodes are invisible to show nodes
    return "\n".join([*head, "", *kept, ""])


def _scontrol(args: Sequence[str], env: Mapping[str, str], timeout: float = 15.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([require("scontrol"), *args], env=dict(env), capture_output=True, text=True, timeout=timeout)


def run_slurmctld(
    workdir: str | os.PathLike[str],
    slurm_conf_text: str,
    extra_files: Mapping[str, str] | None = None,
    *,
    timeout: float = 120.0,
) -> SlurmResult:
    """Start a real slurmctld on ``slurm_conf_text`` (+ topology.conf etc.), query it, stop it.

    Machine-local keys (host, port, paths, auth, SlurmUser, MailProg) are replaced so any
    generated slurm.conf can be tested as is; everything else is passed through unchanged.
    ``extra_files`` are written beside slurm.conf (that is where slurmctld looks for them).
    Raises :class:`ToolFailed` with the log if the controller exits or does not answer within
    ``timeout`` seconds (a bound, not a wait: a controller that answers ends it at once).
    """
    slurmctld = require("slurmctld")
    require("scontrol")
    wd = Path(workdir).resolve()
    wd.mkdir(parents=True, exist_ok=True)
    (wd / "state").mkdir(exist_ok=True)
    for name, content in (extra_files or {}).items():
        (wd / name).write_text(content)
    port = free_tcp_port()
    conf = wd / "slurm.conf"
    conf.write_text(_prepare_slurm_conf(slurm_conf_text, wd, port))
    logfile = wd / "slurmctld.log"
    logfile.unlink(missing_ok=True)
    stderr_path = wd / "slurmctld.stderr"

    # An inherited SLURM_* (tests run inside a job) would point scontrol at another cluster.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = str(conf)

    def full_log() -> str:
        # Fatal config errors can come before the log file is opened: fall back to stderr.
        return _read(logfile) or _read(stderr_path)

    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            [slurmctld, "-D", "-c", "-i"],
            env=env,
            cwd=wd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    try:
        started = time.monotonic()
        deadline = started + timeout
        while True:
            if proc.poll() is not None:
                raise ToolFailed(f"slurmctld exited with {proc.returncode} before answering", full_log())
            # Ask once the daemon says it serves: earlier pings just sit in scontrol's retries.
            # The time fallback covers a build that words the line differently.
            if "Running as primary controller" in _read(logfile) or time.monotonic() > started + 3:
                # a ping that takes longer than its 10 s (a busy machine: the controller is still
                # starting, scontrol sits in its retries) is asked again until the deadline
                with contextlib.suppress(subprocess.TimeoutExpired):
                    if re.search(r"is UP\b", _scontrol(["ping"], env, timeout=10).stdout):
                        break
            if time.monotonic() > deadline:
                raise ToolFailed(f"slurmctld did not answer scontrol ping within {timeout}s", full_log())
            time.sleep(0.05)

        def show(*what: str) -> str:
            r = _scontrol(["show", *what], env)
            if r.returncode != 0:
                raise ToolFailed(f"scontrol show {' '.join(what)} failed", r.stdout + r.stderr + full_log())
            return r.stdout

        topology = show("topology")
        nodes = show("nodes")
        partitions = show("partition")
    finally:
        if proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                _scontrol(["shutdown"], env, timeout=10)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _stop_process(proc)

    log = full_log()
    lines = log.splitlines()
    warnings = [ln for ln in lines if re.search(r"warning", ln, re.IGNORECASE)]
    errors = [
        ln
        for ln in lines
        if re.search(r"\b(error|fatal):", ln) and ln not in warnings and not any(p.search(ln) for p in SLURMCTLD_BENIGN)
    ]
    return SlurmResult(
        topology=topology,
        nodes=nodes,
        partitions=partitions,
        log=log,
        warnings=warnings,
        errors=errors,
        port=port,
        slurm_conf=conf,
    )


# ``Key=value`` where a value may contain spaces (Reason=..., OS=...) up to the next ``Key=``.
_KV = re.compile(r"([A-Za-z][A-Za-z0-9_]*)=(.*?)(?=\s+[A-Za-z][A-Za-z0-9_]*=|\s*$)", re.S)


def parse_scontrol_records(text: str) -> list[dict[str, str]]:
    """Split ``scontrol show nodes/partition/topology`` (multi-line or ``-o``) into records."""
    records: list[dict[str, str]] = []
    first_key: str | None = None
    current: dict[str, str] = {}
    for line in text.splitlines():
        for m in _KV.finditer(line.strip()):
            key, value = m.group(1), m.group(2).strip()
            # A record starts at its type's key (NodeName=, PartitionName=, SwitchName=).
            if first_key is None:
                first_key = key
            if key == first_key and current:
                records.append(current)
                current = {}
            current[key] = value
    if current:
        records.append(current)
    return records


def parse_show_topology(text: str) -> dict[str, SwitchInfo]:
    """``scontrol show topology`` -> {switch: level, link_speed, switches, nodes (expanded)}.

    Note slurm lists under a parent switch *all* nodes reachable below it, not only direct
    ones: a spine's ``nodes`` is the union of its leaves'.
    """
    out: dict[str, SwitchInfo] = {}
    for rec in parse_scontrol_records(text):
        if "SwitchName" not in rec:
            continue
        out[rec["SwitchName"]] = SwitchInfo(
            level=int(rec.get("Level", "0")),
            link_speed=int(rec.get("LinkSpeed", "0")),
            switches=list(hostlist.expand_hostlist(rec["Switches"])) if rec.get("Switches") else [],
            nodes=list(hostlist.expand_hostlist(rec["Nodes"])) if rec.get("Nodes") else [],
        )
    return out


# ---------------------------------------------------------------------------------------------
# ibnetdiscover format
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IbLink:
    """One cabled port of a node, as written in an ibnetdiscover record."""

    port: int
    peer: str  # the peer's quoted id ("S-leaf1" in a hand-written file, "S-<guid>" discovered)
    peer_port: int
    speed: str | None  # e.g. "4xHDR"
    port_guid: int | None = None  # own port GUID, discovered CA records only
    lid: int | None = None  # own port LID, discovered CA records only
    peer_desc: str | None = None


@dataclass
class IbNode:
    kind: str  # "Switch", "Ca" or "Rt"
    ident: str  # the quoted id
    guid: int  # node GUID
    nports: int
    desc: str
    lid: int | None = None  # switch LID from its header (discovered output)
    links: dict[int, IbLink] = field(default_factory=dict)


_GUID_LINE = re.compile(r"^(switchguid|caguid|rtguid)=(0x[0-9a-fA-F]+)")
_NODE_LINE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)"(.*))?$')
_PORT_LINE = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-Fx]+)\))?\s*"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-Fx]+)\))?\s*(?:#(.*))?$'
)


def parse_ibnetdiscover(text: str) -> dict[str, IbNode]:
    """Parse ibnetdiscover topology text (hand-written or discovered) into {ident: IbNode}.

    Enough of the format for round trips and LID/GUID look-ups; vendid/devid/sysimgguid lines
    are skipped.
    """
    nodes: dict[str, IbNode] = {}
    guid: int | None = None
    node: IbNode | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line:
                node = None
            continue
        if m := _GUID_LINE.match(line):
            guid = int(m.group(2), 16)
            continue
        if m := _NODE_LINE.match(line):
            if guid is None:
                raise ValueError(f"node record without a preceding *guid= line: {line!r}")
            rest = m.group(5) or ""
            lid = re.search(r"\blid (\d+)", rest)
            node = IbNode(
                kind=m.group(1),
                ident=m.group(3),
                guid=guid,
                nports=int(m.group(2)),
                desc=m.group(4) if m.group(4) is not None else m.group(3),
                lid=int(lid.group(1)) if lid else None,
            )
            nodes[node.ident] = node
            guid = None
            continue
        if (m := _PORT_LINE.match(line)) and node is not None:
            comment = m.group(6) or ""
            speed = re.search(r"(\d+x[A-Z]+)\s*$", comment)
            peer_desc = re.search(r'"([^"]*)"', comment)
            # CA records: "# lid 2 lmc 0 "leaf1" lid 6 4xHDR" - the first lid is the CA port's own.
            own_lid = re.match(r"\s*lid (\d+) lmc", comment)
            node.links[int(m.group(1))] = IbLink(
                port=int(m.group(1)),
                peer=m.group(3),
                peer_port=int(m.group(4)),
                speed=speed.group(1) if speed else None,
                port_guid=int(m.group(2), 16) if m.group(2) else None,
                lid=int(own_lid.group(1)) if own_lid else None,
                peer_desc=peer_desc.group(1) if peer_desc else None,
            )
    return nodes


def ib_links_by_desc(nodes: Mapping[str, IbNode]) -> set[tuple[tuple[str, int], tuple[str, int], str | None]]:
    """Links as ((desc, port), (desc, port), speed), ends sorted: comparable across a round trip."""
    out: set[tuple[tuple[str, int], tuple[str, int], str | None]] = set()
    for n in nodes.values():
        for link in n.links.values():
            peer = nodes.get(link.peer)
            if peer is None:
                raise ValueError(f"{n.ident}[{link.port}] names unknown peer {link.peer!r}")
            a, b = sorted([(n.desc, link.port), (peer.desc, link.peer_port)])
            out.add((a, b, link.speed))
    return out


# ---------------------------------------------------------------------------------------------
# ibsim + OpenSM + diags
# ---------------------------------------------------------------------------------------------

_OSM_ENGINE_USED = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")
_OSM_NOT_FATTREE = (
    "hasn't been identified as FatTree",
    "Fabric topology is not a fat-tree",
    "ftree: cannot build lid matrices",
)


# ``opensm -o`` logs this at level 0x01 when a MAD (an answer to its own last sweep's queries) arrives
# while it is shutting down, after the sweep's verdict: a slow machine makes it likelier, the config
# under test has no part in it
_OSM_EXITING = "Ignoring received mad - since we are exiting"


@dataclass(frozen=True)
class OpenSMResult:
    returncode: int
    log: str
    stdout: str
    engine_used: str | None  # from "<engine> tables configured on all switches"
    fat_tree_identified: bool
    fell_back: bool  # the engine used is not the first one asked for
    parse_errors: list[str]  # "PARSE ERROR" lines (partitions.conf and other files)
    errors: list[str]  # every log line at level 0x01 but the shutdown one (_OSM_EXITING)
    subnet_up: bool


@dataclass(frozen=True)
class IbPortReport:
    """One line of ``ibnetdiscover -p``: a port, its LID and GUID (port GUID for a CA)."""

    kind: str  # "CA" or "SW"
    lid: int
    port: int
    guid: int
    speed: str  # e.g. "4x HDR"
    desc: str
    peer_kind: str | None
    peer_lid: int | None
    peer_port: int | None
    peer_guid: int | None


@dataclass(frozen=True)
class TraceHop:
    out_port: int
    kind: str  # "switch" or "ca"
    guid: int
    in_port: int
    lid: int
    desc: str


@dataclass(frozen=True)
class TraceResult:
    src_lid: int
    dst_lid: int
    hops: list[TraceHop]
    text: str

    @property
    def switch_hops(self) -> int:
        """Switches crossed: 1 within a leaf, 3 leaf-spine-leaf."""
        return sum(1 for h in self.hops if h.kind == "switch")

    @property
    def path(self) -> list[str]:
        return [h.desc for h in self.hops]


_PORTS_LINE = re.compile(
    r"^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+(0x[0-9a-f]+)\s+(\d+x\s*\S+)"
    r"(?:\s+-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+(0x[0-9a-f]+)\s+\(\s*'([^']*)'\s+-\s+'([^']*)'\s*\)"
    r"|\s+'([^']*)')\s*$"
)
_TRACE_HOP = re.compile(r'^\[(\d+)\] -> (\w+) port \{(0x[0-9a-f]+)\}\[(\d+)\] lid (\d+)-\d+ "([^"]*)"')


def parse_ibtracert(text: str, src_lid: int, dst_lid: int) -> TraceResult:
    hops = [
        TraceHop(int(m[1]), m[2], int(m[3], 16), int(m[4]), int(m[5]), m[6])
        for m in (_TRACE_HOP.match(ln.strip()) for ln in text.splitlines())
        if m
    ]
    return TraceResult(src_lid=src_lid, dst_lid=dst_lid, hops=hops, text=text)


def parse_pkeys(text: str) -> list[int]:
    """Non-zero entries of ``smpquery pkeys``; bit 0x8000 set means full membership."""
    keys: list[int] = []
    for line in text.splitlines():
        m = re.match(r"\s*\d+:\s+(.*)$", line)
        if m:
            keys += [v for v in (int(t, 16) for t in m.group(1).split()) if v & 0x7FFF]
    return keys


def _find_umad2sim() -> str:
    # The multiarch directory differs per architecture; ask the filesystem, not a constant.
    for pattern in (
        "/usr/lib/*/umad2sim/libumad2sim.so",
        "/usr/lib/umad2sim/libumad2sim.so",
        "/usr/lib64/umad2sim/libumad2sim.so",
        "/usr/local/lib/umad2sim/libumad2sim.so",
    ):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[0]
    raise ToolMissing("libumad2sim.so not found: install Debian package 'ibsim-utils'")


class IbFabric:
    """A running ibsim fabric; use through :func:`ibsim_fabric`."""

    def __init__(self, net_path: Path, workdir: Path, sockname: str, umad2sim: str) -> None:
        self.net_path = net_path
        self.workdir = workdir
        self.sockname = sockname
        scratch = workdir / "osm"
        scratch.mkdir(parents=True, exist_ok=True)
        # Only the children get LD_PRELOAD: preloading it into Python would reroute nothing
        # useful and would break every other subprocess the test starts.
        self.env: dict[str, str] = {
            **os.environ,
            "LD_PRELOAD": umad2sim,
            "IBSIM_SOCKNAME": sockname,
            "OSM_CACHE_DIR": str(scratch),
            "OSM_TMP_DIR": str(scratch),
        }
        self._runs = 0
        self._topology: dict[str, IbNode] | None = None

    def run(self, args: Sequence[str], timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a diag tool against the simulated fabric."""
        r = subprocess.run(
            [require(args[0]), *args[1:]],
            env=self.env,
            cwd=self.workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and r.returncode != 0:
            raise ToolFailed(f"{' '.join(args)} exited with {r.returncode}", r.stdout + r.stderr)
        return r

    def opensm(
        self,
        routing: str = "ftree",
        root_guids: str | os.PathLike[str] | None = None,
        partitions: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        timeout: float = 120.0,
    ) -> OpenSMResult:
        """One ``opensm -o`` sweep; the verdict comes from its log since it always exits 0."""
        self._runs += 1
        self._topology = None  # LIDs may change with a new sweep
        log_path = self.workdir / f"osm-{self._runs}.log"
        args = ["opensm", "-o", "-e", "-d2", "-R", routing, "-f", str(log_path)]
        if root_guids is not None:
            args += ["-a", str(Path(root_guids).resolve())]
        if partitions is not None:
            args += ["-P", str(Path(partitions).resolve())]
        args += list(extra_args)
        r = self.run(args, timeout=timeout, check=False)
        log = _read(log_path)
        if not log:
            raise ToolFailed(f"opensm wrote no log (exit {r.returncode})", r.stdout + r.stderr)
        engine = m.group(1) if (m := _OSM_ENGINE_USED.search(log)) else None
        asked = routing.split(",")[0].strip()
        not_fat = any(s in log for s in _OSM_NOT_FATTREE)
        return OpenSMResult(
            returncode=r.returncode,
            log=log,
            stdout=r.stdout + r.stderr,
            engine_used=engine,
            fat_tree_identified=engine == "ftree" and not not_fat and "FatTree rank" in log,
            fell_back=engine != asked or (asked == "ftree" and not_fat),
            parse_errors=[ln for ln in log.splitlines() if "PARSE ERROR" in ln],
            errors=[ln for ln in log.splitlines() if " 0x01 -> " in ln and _OSM_EXITING not in ln],
            subnet_up="SUBNET UP" in log,
        )

    def ibnetdiscover(self, *args: str) -> str:
        return self.run(["ibnetdiscover", *args]).stdout

    def topology(self) -> dict[str, IbNode]:
        """Discovered fabric (cached until the next opensm run)."""
        if self._topology is None:
            self._topology = parse_ibnetdiscover(self.ibnetdiscover())
        return self._topology

    def ports(self) -> list[IbPortReport]:
        out: list[IbPortReport] = []
        for line in self.ibnetdiscover("-p").splitlines():
            m = _PORTS_LINE.match(line.strip())
            if not m:
                continue
            linked = m.group(6) is not None
            out.append(
                IbPortReport(
                    kind=m.group(1),
                    lid=int(m.group(2)),
                    port=int(m.group(3)),
                    guid=int(m.group(4), 16),
                    speed=m.group(5),
                    desc=m.group(10) if linked else m.group(12),
                    peer_kind=m.group(6),
                    peer_lid=int(m.group(7)) if linked else None,
                    peer_port=int(m.group(8)) if linked else None,
                    peer_guid=int(m.group(9), 16) if linked else None,
                )
            )
        return out

    def node(self, key: str | int) -> IbNode:
        """Find a discovered node by description ("gpu001 mlx5_0"), its first word ("leaf1"),
        node GUID or (CA) port GUID."""
        nodes = list(self.topology().values())
        if isinstance(key, int):
            for n in nodes:
                if n.guid == key or any(ln.port_guid == key for ln in n.links.values()):
                    return n
        else:
            # An exact description wins; else its first word, the host name in "gpu001 mlx5_0".
            for exact in (True, False):
                hits = [n for n in nodes if (n.desc if exact else n.desc.split(" ")[0]) == key]
                if len(hits) == 1:
                    return hits[0]
                if len(hits) > 1:
                    raise LookupError(f"{key!r} matches {len(hits)} nodes: {[h.desc for h in hits]}")
        raise LookupError(f"no node {key!r} in the discovered fabric")

    def lid(self, key: str | int, port: int = 1) -> int:
        """LID of a node (a switch's port-0 LID, a CA's LID on ``port``); needs an SM run first."""
        n = self.node(key)
        if n.kind == "Switch":
            lid = n.lid
        else:
            link = n.links.get(port)
            lid = link.lid if link else None
        if not lid:
            raise LookupError(f"{key!r} has no LID yet: run opensm() first")
        return lid

    def port_guid(self, key: str | int, port: int = 1) -> int:
        """Port GUID, the identity partitions.conf uses (a switch's is its node GUID)."""
        n = self.node(key)
        if n.kind == "Switch":
            return n.guid
        link = n.links.get(port)
        if link is None or link.port_guid is None:
            raise LookupError(f"{key!r} port {port} has no port GUID in the discovery")
        return link.port_guid

    def smpquery_pkeys(self, lid: int, port: int = 1) -> list[int]:
        return parse_pkeys(self.run(["smpquery", "pkeys", str(lid), str(port)]).stdout)

    def ibtracert(self, src_lid: int, dst_lid: int) -> TraceResult:
        text = self.run(["ibtracert", str(src_lid), str(dst_lid)]).stdout
        result = parse_ibtracert(text, src_lid, dst_lid)
        if not result.hops:
            raise ToolFailed(f"ibtracert {src_lid} {dst_lid} gave no hops", text)
        return result


def _ibsim_limits(net_text: str) -> list[str]:
    """``-N -S -P`` big enough for the file; ibsim's defaults are 2048 / 256 / 13312."""
    nodes = parse_ibnetdiscover(net_text).values()
    n_nodes = len(nodes)
    n_switches = sum(1 for n in nodes if n.kind == "Switch")
    n_ports = sum(n.nports + 1 for n in nodes)  # + port 0 of each node
    return [
        "-N", str(max(2048, n_nodes + 16)),
        "-S", str(max(256, n_switches + 16)),
        "-P", str(max(13312, n_ports + 64)),
    ]  # fmt: skip


@contextlib.contextmanager
def ibsim_fabric(
    net_path: str | os.PathLike[str],
    workdir: str | os.PathLike[str],
    *,
    start_timeout: float = 60.0,
) -> Iterator[IbFabric]:
    """Run ``ibsim -s -n`` on an ibnetdiscover-format file for the duration of the block.

    Each fabric gets its own socket name, so several can run at once. Raises
    :class:`ToolFailed` with ibsim's output if the file does not load (e.g. a link written at
    one end only).
    """
    ibsim = require("ibsim")
    umad2sim = _find_umad2sim()
    wd = Path(workdir).resolve()
    wd.mkdir(parents=True, exist_ok=True)
    net = Path(net_path).resolve()
    sockname = f"railyard-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    out_path = wd / "ibsim.out"
    env = {**os.environ, "IBSIM_SOCKNAME": sockname}
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [ibsim, "-s", "-n", *_ibsim_limits(net.read_text()), str(net)],
            env=env,
            cwd=wd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + start_timeout
        while "Network simulator ready." not in _read(out_path):
            if proc.poll() is not None:
                raise ToolFailed(f"ibsim exited with {proc.returncode} loading {net}", _read(out_path))
            if time.monotonic() > deadline:
                raise ToolFailed(f"ibsim not ready within {start_timeout}s", _read(out_path))
            time.sleep(0.05)
        yield IbFabric(net, wd, sockname, umad2sim)
    finally:
        _stop_process(proc)


# ---------------------------------------------------------------------------------------------
# FRR, Kea
# ---------------------------------------------------------------------------------------------


def frr_check(conf_path: str | os.PathLike[str], timeout: float = 60.0) -> tuple[bool, str]:
    """``vtysh -C -f``: grammar only (exit 0 ok, 2 with ``line N: % Unknown command``)."""
    r = subprocess.run([require("vtysh"), "-C", "-f", str(conf_path)], capture_output=True, text=True, timeout=timeout)
    return r.returncode == 0, r.stdout + r.stderr


def netplan_check(yaml_text: str, root: str | os.PathLike[str], timeout: float = 60.0) -> tuple[bool, str]:
    """``netplan generate --root-dir ROOT`` on one file as ROOT/etc/netplan/60-railyard.yaml: netplan's own
    parser and its networkd backend (exit 0 ok, 1 with ``file:line:col: Error ...``)."""
    conf = Path(root) / "etc" / "netplan" / "60-railyard.yaml"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(yaml_text)
    conf.chmod(0o600)  # netplan warns about world-readable configs
    r = subprocess.run(
        [require("netplan"), "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=timeout
    )
    return r.returncode == 0, r.stdout + r.stderr


def kea_check(conf_path: str | os.PathLike[str], timeout: float = 60.0) -> tuple[bool, str]:
    """``kea-dhcp4 -t``: parses and builds the whole config without opening sockets."""
    r = subprocess.run([require("kea-dhcp4"), "-t", str(conf_path)], capture_output=True, text=True, timeout=timeout)
    return r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------------------------------------
# SONiC YANG models (../shared/sonic-yang: check.sh, outside the project)
# ---------------------------------------------------------------------------------------------

SONIC_YANG_DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "sonic-yang"


def sonic_yang_dir() -> Path:
    """The SONiC YANG checker's folder: ``$SONIC_YANG_DATA``, else ``../shared/sonic-yang`` beside the
    repository (where CI's fresh clone finds it). :class:`ToolMissing` says which, and what is missing."""
    env = os.environ.get("SONIC_YANG_DATA")
    d = Path(env) if env else SONIC_YANG_DEFAULT
    missing = [n for n in ("check.sh", "platforms.tsv", "models", "platforms") if not (d / n).exists()]
    if missing:
        where_from = "SONIC_YANG_DATA" if env else "the default ../shared/sonic-yang beside the repository"
        raise ToolMissing(
            f"SONiC YANG checker not found in {d} ({where_from}): missing {', '.join(missing)}. Put the shared "
            "sonic-yang folder at ../shared/sonic-yang beside the repository, or set SONIC_YANG_DATA to a folder "
            "holding check.sh, platforms.tsv, models/ and platforms/"
        )
    return d


@dataclass(frozen=True, slots=True)
class YangResult:
    files: int
    errors: list[str]  # check.sh's error lines: file, table, key, field, message (tab-separated)
    log: str  # its stderr (notes, setup)


def sonic_yang_check(
    release: str, paths: Sequence[str | os.PathLike[str]], merge_ports: str = "auto", timeout: float = 1200.0
) -> YangResult:
    """``MERGE_PORTS=auto check.sh RELEASE PATH...``: every config_db.json under the paths against the YANG
    models of RELEASE, merged over its platform's port list (found from plan.json above each file). The
    first call on a machine builds libyang into ``$SONIC_YANG_ENV`` (~30 s, apt and PyPI); a tool that
    cannot run (exit 2) raises :class:`ToolFailed` with its output."""
    d = sonic_yang_dir()
    env = {**os.environ, "MERGE_PORTS": merge_ports, "SONIC_YANG_DATA": str(d)}
    r = subprocess.run(
        ["bash", str(d / "check.sh"), release, *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    lines = r.stdout.splitlines()
    m = re.fullmatch(r"(\d+) files, (\d+) errors", lines[-1]) if lines else None
    if r.returncode == 2 or m is None:
        raise ToolFailed(f"{d / 'check.sh'} {release} could not run (exit {r.returncode})", r.stdout + r.stderr)
    errors = lines[:-1]
    assert len(errors) == int(m.group(2)), r.stdout  # one line per error, as its README says
    return YangResult(int(m.group(1)), errors, r.stderr)


# ---------------------------------------------------------------------------------------------
# Chromium, PDF
# ---------------------------------------------------------------------------------------------


def chromium_print_pdf(
    html_path: str | os.PathLike[str],
    pdf_path: str | os.PathLike[str],
    *,
    extra_args: Sequence[str] = (),
    timeout: float = 120.0,
) -> Path:
    """Print a local HTML file to PDF with Debian's headless Chromium, as `railyard cabling pack` does
    (generators.printing); returns the PDF path."""
    chromium = require("chromium")
    try:
        return print_pdf(html_path, pdf_path, chromium=chromium, extra_args=tuple(extra_args), timeout=timeout)
    except PrintError as exc:
        raise ToolFailed(str(exc).split("\n", 1)[0], exc.log) from None


def chromium_dump_dom(url: str, *, timeout: float = 60.0) -> str:
    """The DOM of a page after its scripts ran at load (``chromium --headless --dump-dom``)."""
    out, log, code = run_headless(url, ("--dump-dom",), chromium=require("chromium"), timeout=timeout)
    if code != 0 or "<html" not in out:
        raise ToolFailed(f"chromium --dump-dom {url} exited with {code} and printed no page", log)
    return out


def chromium_screenshot(
    url: str, png_path: str | os.PathLike[str], *, size: tuple[int, int] = (1600, 1000), timeout: float = 60.0
) -> Path:
    """A PNG of a page at a window size, after its scripts ran (``chromium --headless --screenshot``)."""
    png = Path(png_path).resolve()
    png.unlink(missing_ok=True)
    _, log, code = run_headless(
        url,
        (f"--screenshot={png}", f"--window-size={size[0]},{size[1]}", "--hide-scrollbars"),
        chromium=require("chromium"),
        timeout=timeout,
    )
    if code != 0 or not png.exists():
        raise ToolFailed(f"chromium --screenshot {url} exited with {code} and wrote no PNG", log)
    return png


_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_PDF_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)


def pdf_page_count(pdf_path: str | os.PathLike[str]) -> int:
    """Count page objects, also inside compressed object streams (pure Python)."""
    data = Path(pdf_path).read_bytes()
    if not data.startswith(b"%PDF"):
        raise ValueError(f"{pdf_path} is not a PDF")
    count = len(_PDF_PAGE.findall(data))
    # PDF 1.5 writers may hide page dictionaries in /ObjStm streams; Skia does not today.
    if b"/ObjStm" in data:
        for m in _PDF_STREAM.finditer(data):
            with contextlib.suppress(zlib.error):
                count += len(_PDF_PAGE.findall(zlib.decompress(m.group(1))))
    return count
