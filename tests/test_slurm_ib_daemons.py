"""The generated Slurm and InfiniBand files against the real daemons: slurmctld 22.05, ibsim + OpenSM 3.3,
ibnetdiscover, smpquery and ibtracert (tests/realtools.py runs them; read its docstring first).

Both daemons exit 0 on the problems that matter here, so every verdict is read from their logs and
from what the fabric reports afterwards, never from an exit code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import hostlist
import pytest

from generators.asbuilt.ibnetdiscover import parse_net
from generators.model.design import resolved_config
from generators.model.plan import Plan
from generators.stages.slurm import check_tree, slurm_tree
from generators.views.ibnetdiscover import format_net
from tests.conftest import DESIGNS, rendered_files
from tests.ibfaults import by_desc, drop, swap
from tests.realtools import IbFabric, OpenSMResult, ibsim_fabric, run_slurmctld
from tests.test_slurm import expected_tree

pytestmark = pytest.mark.daemons

Compiled = Callable[..., Plan]
SLURM_DESIGNS = [
    "h100-1024-reference",
    "h100-1016-superpod",
    "h100-1024-optimized",
    "h100-256",
    "h100-16k",
    "b300-xdr",
    # issue 41's systems: rack blocks (NVLink 6 / UALink domains) and a RoCE tree
    "vr-nvl72-576",
    "vr-nvl72-1152",
    "mi355x-1024-roce",
    "helios-576",
    "vru-kyber-800vdc-1152",  # 800 VDC power: the same rack blocks as any rack system
]
IB_DESIGNS = ["h100-1024-reference", "h100-1016-superpod", "h100-1024-optimized", "h100-256", "b300-xdr"]
# No slurmd and no DNS for gpu001... here: cloud nodes are powered down and never resolved. The
# generated nodes.conf declares real nodes; the test only adds this default in front of it.
CLOUD_NODES = "NodeName=DEFAULT State=CLOUD"
SLURM_TOPOLOGY_WARNINGS = re.compile(
    r"Multiple leaf switches|switches lack access|Invalid hostnames|no switch can reach"
)


def rendered(compiled: Compiled, name: str) -> dict[str, str]:
    return rendered_files(compiled, name)


def slurm_conf_for_test(files: dict[str, str]) -> tuple[str, dict[str, str]]:
    conf = files["slurm/slurm.conf"]
    assert "Include nodes.conf" in conf
    extra = {n: files[f"slurm/{n}"] for n in ("nodes.conf", "gres.conf", "topology.conf")}
    return conf.replace("Include nodes.conf", f"{CLOUD_NODES}\nInclude nodes.conf"), extra


# ------------------------------------------------------------------------------------------- slurmctld


@pytest.mark.parametrize("name", SLURM_DESIGNS)
def test_slurmctld_takes_the_topology(compiled: Compiled, name: str, tmp_path: Path) -> None:
    plan = compiled(name)
    conf, extra = slurm_conf_for_test(rendered(compiled, name))
    r = run_slurmctld(tmp_path, conf, extra)

    want = {
        sw: {"level": lvl, "link_speed": 1, "switches": kids, "nodes": sorted(nodes)}
        for sw, (lvl, kids, nodes) in expected_tree(plan).items()
    }
    got = {sw: {**info, "nodes": sorted(info["nodes"])} for sw, info in r.topology_parsed.items()}
    assert got == want
    assert [w for w in r.warnings if SLURM_TOPOLOGY_WARNINGS.search(w)] == [], r.log
    assert r.warnings == [], r.log
    assert r.errors == [], r.log

    servers = [d for d in plan.devices if d.kind == "server"]
    nodes = r.nodes_parsed
    assert sorted(nodes) == sorted(d.name for d in servers)
    first = nodes[servers[0].name]
    model = plan.catalog.servers[servers[0].model]
    assert first["Gres"] == f"gpu:{model.gpus}"
    cfg = resolved_config(plan.design, plan.catalog)
    cores = plan.catalog.cpus[cfg.cpu].cores
    assert first["CPUTot"] == str(model.cpu_sockets * cores)
    assert first["RealMemory"] == str(int(cfg.memory_gb * 0.97) * 1024)
    parts = r.partitions_parsed
    assert parts["all"]["Default"] == "YES" and parts["all"]["TotalNodes"] == str(len(servers))
    for t in plan.design.tenants:
        expected = {
            h for h in (d.name for d in servers) if any(h in hostlist.expand_hostlist(e) for e in t.servers)
        } | {d.name for d in servers if d.attrs["su"] in t.scalable_units}
        assert set(hostlist.expand_hostlist(parts[t.name]["Nodes"])) == expected
        assert parts[t.name]["AllowAccounts"] == t.name


def test_slurmctld_and_railyard_agree_on_a_broken_tree(compiled: Compiled, tmp_path: Path) -> None:
    """Drop gpu001 from its unit: slurmctld only logs a WARNING and runs on; railyard's check names it."""
    plan = compiled("h100-256")
    conf, extra = slurm_conf_for_test(rendered(compiled, "h100-256"))
    extra["topology.conf"] = extra["topology.conf"].replace(
        "SwitchName=su1 Nodes=gpu[001-032]", "SwitchName=su1 Nodes=gpu[002-032]"
    )
    r = run_slurmctld(tmp_path, conf, extra)
    assert any("WARNING: switches lack access to 1 nodes: gpu001" in w for w in r.warnings), r.log
    tree = slurm_tree(plan)
    tree[0].nodes.remove("gpu001")
    assert [p.message for p in check_tree(tree, [d.name for d in plan.devices if d.kind == "server"])] == [
        "1 nodes are under no switch: gpu001"
    ]


# ------------------------------------------------------------------------------------- ibsim + OpenSM


def for_ibsim(net_text: str) -> str:
    """ibsim 0.10 parses speeds up to HDR (topology.net says so in its header): simulate NDR as HDR."""
    return re.sub(r"\b4x(NDR|XDR)\b", "4xHDR", net_text)


def install(files: dict[str, str], root: Path) -> Path:
    """Write DIR/infiniband/ under root and point opensm.conf at it instead of /etc/opensm."""
    ib = root / "infiniband"
    for rel, text in files.items():
        if rel.startswith("infiniband/"):
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
    conf = ib / "opensm.conf"
    conf.write_text(conf.read_text().replace("/etc/opensm", str(ib)))
    (root / "sim.net").write_text(for_ibsim(files["infiniband/topology.net"]))
    return ib


@dataclass
class Sim:
    name: str
    plan: Plan
    files: dict[str, str]
    ib: Path
    fab: IbFabric
    pure: OpenSMResult  # ftree without root GUIDs: OpenSM itself checks the fabric is a pure fat tree
    run: OpenSMResult  # opensm -F opensm.conf: the generated roots and partitions


@pytest.fixture(scope="module", params=IB_DESIGNS)
def sim(request: pytest.FixtureRequest, compiled: Compiled, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    name = request.param
    files = rendered(compiled, name)
    root = tmp_path_factory.mktemp(name)
    ib = install(files, root)
    with ibsim_fabric(root / "sim.net", root / "sim") as fab:
        pure = fab.opensm(routing="ftree")
        run = fab.opensm(routing="ftree", extra_args=["-F", str(ib / "opensm.conf")])
        yield Sim(name, compiled(name), files, ib, fab, pure, run)


def test_opensm_routes_it_as_a_fat_tree(sim: Sim) -> None:
    roots = [ln for ln in sim.files["infiniband/root_guids"].splitlines() if not ln.startswith("#")]
    for r in (sim.pure, sim.run):
        assert r.subnet_up, r.log
        assert r.engine_used == "ftree", r.log
        assert r.fat_tree_identified and not r.fell_back, r.log
        assert r.errors == [], r.log
        assert "FatTree rank (roots to leaf switches): 2" in r.log
        assert f"Fabric has {len(roots)} switches at rank 0 (roots)" in r.log
    assert sim.run.parse_errors == [], sim.run.log
    ca_ports = sum(1 for n in parse_net(sim.files["infiniband/topology.net"]).values() if n.kind == "Ca")
    assert f"Fabric has {ca_ports} CAs, {ca_ports} CA ports" in sim.run.log
    # the SM ran where the design puts it: a management node's HCA, or a spine's port 0
    sm = sim.plan.infiniband.subnet_managers[0]
    assert f"Setting IS_SM on port 0x{sim.fab.port_guid(sm.node):016x}" in sim.run.log
    if sm.on_switch:
        # connect_roots: from the SM's spine every switch answers by LID, the other roots included
        switches = [n for n in sim.fab.topology().values() if n.kind == "Switch"]
        dead = [n.desc for n in switches if sim.fab.run(["smpquery", "nodedesc", str(n.lid)], check=False).returncode]
        assert dead == [], f"unreachable by LID from {sm.node}: {dead}"


def expected_keys(plan: Plan) -> dict[str, set[int]]:
    """Port (node description) -> the pkeys smpquery must show: tenant servers their key as full member
    plus 0x7fff limited, other servers 0x7fff limited, SM ports 0x7fff full."""
    ib = plan.infiniband
    key_of: dict[str, int] = {}
    for p in ib.partitions[1:]:
        for h in hostlist.expand_hostlist(p.servers):
            key_of[h] = 0x8000 | int(p.pkey, 16)
    rails = plan.networks.backend.rails
    out = {
        f"{d.name} mlx5_{r}": {0x7FFF} | ({key_of[d.name]} if d.name in key_of else set())
        for d in plan.devices
        if d.kind == "server"
        for r in range(rails)
    }
    for sm in ib.subnet_managers:
        out[sm.node] = {0xFFFF}
    for d in plan.devices:
        if d.network == "backend" and d.kind == "switch" and d.name not in out:
            out[d.name] = {0x7FFF}
    return out


def sample_ports(plan: Plan) -> list[str]:
    """First and last server of every tenant on the first and last rail, two unrented servers, the SM
    ports and a switch that does not run the SM."""
    ib = plan.infiniband
    rails = plan.networks.backend.rails
    rented: set[str] = set()
    out: list[str] = []
    for p in ib.partitions[1:]:
        hosts = hostlist.expand_hostlist(p.servers)
        rented |= set(hosts)
        out += [f"{h} mlx5_{r}" for h in (hosts[0], hosts[-1]) for r in (0, rails - 1)]
    free = [d.name for d in plan.devices if d.kind == "server" and d.name not in rented]
    out += [f"{h} mlx5_0" for h in free[:1] + free[-1:]]
    out += [sm.node for sm in ib.subnet_managers]
    out.append(next(d.name for d in plan.devices if d.role == "leaf" and d.network == "backend"))
    return out


def observed_keys(fab: IbFabric, ports: list[str]) -> dict[str, set[int]]:
    out = {}
    for port in ports:
        node = fab.node(port)
        out[port] = set(fab.smpquery_pkeys(fab.lid(port), 0 if node.kind == "Switch" else 1))
    return out


def isolation_violations(observed: dict[str, set[int]], expected: dict[str, set[int]]) -> list[str]:
    return [
        f"{port}: has {sorted(hex(k) for k in keys)}, should have {sorted(hex(k) for k in expected[port])}"
        for port, keys in observed.items()
        if keys != expected[port]
    ]


def test_each_tenants_key_only_on_its_servers(sim: Sim) -> None:
    ports = sample_ports(sim.plan)
    assert len(ports) >= 8
    got = observed_keys(sim.fab, ports)
    assert isolation_violations(got, expected_keys(sim.plan)) == []
    tenant_keys = {k for keys in got.values() for k in keys if k & 0x7FFF != 0x7FFF}
    assert len(tenant_keys) == len(sim.plan.design.tenants)  # every tenant's key was seen somewhere


def test_same_unit_same_rail_is_one_switch_hop(sim: Sim) -> None:
    fab = sim.fab
    trace = fab.ibtracert(fab.lid("gpu001 mlx5_3"), fab.lid("gpu002 mlx5_3"))
    assert trace.switch_hops == 1
    assert trace.path == ["su1-rail3-leaf", "gpu002 mlx5_3"]
    if sim.plan.networks.backend.scalable_units > 1:  # another unit, same rail: up to a spine and down
        other = next(d.name for d in sim.plan.devices if d.kind == "server" and d.attrs["su"] == 2)
        trace = fab.ibtracert(fab.lid("gpu001 mlx5_3"), fab.lid(f"{other} mlx5_3"))
        assert trace.switch_hops == 3
        assert trace.path[0] == "su1-rail3-leaf" and trace.path[1].startswith("spine")
        assert trace.path[2:] == ["su2-rail3-leaf", f"{other} mlx5_3"]


def test_verify_round_trip_through_ibnetdiscover(sim: Sim, cli: Callable[..., object], tmp_path: Path) -> None:
    """What the real ibnetdiscover reports of the rehearsal fabric verifies clean (at the simulated speed)."""
    discovered = tmp_path / "discovered.net"
    discovered.write_text(sim.fab.ibnetdiscover())
    out = tmp_path / "as-built"
    r = cli(
        "verify", DESIGNS / f"{sim.name}.yaml", "--ibnetdiscover", discovered, "--speed", "4xHDR", "--write-config", out
    )
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert "OK: the discovered fabric matches the plan" in r.output  # type: ignore[attr-defined]
    # the simulated hardware carries the planned GUIDs, so the as-built SM files are the generated ones;
    # the switches' own management configs (<switch>/mgmt.cfg) hold no GUID and are not rewritten
    mgmt = ("/mgmt.cfg", "/mgmt.nv")
    sm = {
        rel: text
        for rel, text in sim.files.items()
        if rel.startswith("infiniband/") and rel != "infiniband/topology.net" and not rel.endswith(mgmt)
    }
    assert "infiniband/opensm.conf" in sm
    for rel, text in sm.items():
        assert (out / rel).read_text() == text, rel
    assert not [p for p in (out / "infiniband").rglob("*") if p.name in ("mgmt.cfg", "mgmt.nv")]


@pytest.mark.parametrize("name", IB_DESIGNS)
def test_verify_reports_exactly_the_faults_made(
    compiled: Compiled, name: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    """Cross two rails at gpu001 and pull one leaf-spine cable in a copy of topology.net, load it into
    ibsim, discover it with ibnetdiscover: verify reports that swapped pair and that missing link, nothing else."""
    files = rendered(compiled, name)
    nodes = parse_net(for_ibsim(files["infiniband/topology.net"]))
    swap(nodes, ("gpu001 mlx5_0", 1), ("gpu001 mlx5_1", 1))
    leaf = by_desc(nodes, "su1-rail2-leaf")
    up = min(p for p, lk in leaf.links.items() if nodes[lk.peer].desc.startswith("spine"))
    spine_end = (nodes[leaf.links[up].peer].desc, leaf.links[up].peer_port)
    drop(nodes, ("su1-rail2-leaf", up))
    broken = tmp_path / "broken.net"
    broken.write_text(format_net(nodes.values()))
    with ibsim_fabric(broken, tmp_path / "sim") as fab:
        discovered = tmp_path / "discovered.net"
        discovered.write_text(fab.ibnetdiscover())
    r = cli("verify", DESIGNS / f"{name}.yaml", "--ibnetdiscover", discovered, "--speed", "4xHDR", "--json")
    assert r.exit_code == 1, r.output  # type: ignore[attr-defined]
    rep = json.loads(r.output)  # type: ignore[attr-defined]

    def end(p: dict[str, object]) -> tuple[object, object]:
        return (p["device"], p["port"])

    assert rep["faulty_links"] == 3
    assert rep["extra"] == [] and rep["slow"] == [] and rep["unknown_nodes"] == []
    (s,) = rep["swapped"]
    assert [end(p) for p in s["at"]] == [("gpu001", "mlx5_0"), ("gpu001", "mlx5_1")]
    assert [(end(lk["a"]), end(lk["b"])) for lk in s["planned"]] == [
        (("gpu001", "mlx5_0"), ("su1-rail0-leaf", "1/1/1")),
        (("gpu001", "mlx5_1"), ("su1-rail1-leaf", "1/1/1")),
    ]
    (m,) = rep["missing"]
    assert m["a"]["device"] == "su1-rail2-leaf" and m["a"]["ib_port"] == up
    assert (m["b"]["device"], m["b"]["ib_port"]) == spine_end
    text = cli("verify", DESIGNS / f"{name}.yaml", "--ibnetdiscover", discovered, "--speed", "4xHDR").output  # type: ignore
    assert re.search(r"SWAPPED  exchange the cables at gpu001 mlx5_0 \[rack \S+ U\d+\] and gpu001 mlx5_1 \[rack", text)
    # a leaf-spine twin DAC names its plug ("one plug with 1/17/2, twin cable C-..."); fibers do not
    plug = f" ({m['a']['plug']})" if m["a"]["plug"] else ""
    assert (
        f"MISSING  su1-rail2-leaf {m['a']['port']} (IB port {up}) [rack {m['a']['rack']} U{m['a']['unit']}]"
        f"{plug} <-> {spine_end[0]}" in text
    )
    # the technician's view of that fault: both racks and units, and the label printed on the cable
    assert m["a"]["rack"] and m["b"]["rack"] and m["a"]["unit"] and m["b"]["unit"] and m["label"] and m["cable_id"]
    assert f"label '{m['label']}'" in text


def test_a_leaked_key_fails_the_isolation_check(compiled: Compiled, tmp_path: Path) -> None:
    """Break isolation on purpose in OpenSM's own input (acme's key also on a globex server, as a
    hand-edited partitions.conf would): the same check that passes on generated files catches it."""
    plan = compiled("h100-256")
    files = rendered(compiled, "h100-256")
    ib = install(files, tmp_path)
    with ibsim_fabric(tmp_path / "sim.net", tmp_path / "sim") as fab:
        fab.opensm(routing="ftree")  # LIDs first
        intruder = [f"0x{fab.port_guid(f'gpu017 mlx5_{r}'):016x}" for r in range(8)]
        text = (ib / "partitions.conf").read_text()
        leaked = text.replace(
            "acme=0x1001, ipoib, mtu=5, defmember=full :",
            f"acme=0x1001, ipoib, mtu=5, defmember=full :\n  {', '.join(intruder)},",
        )
        assert leaked != text
        (ib / "leaked.conf").write_text(leaked)
        r = fab.opensm(routing="ftree", root_guids=ib / "root_guids", partitions=ib / "leaked.conf")
        assert r.parse_errors == [] and r.fat_tree_identified, r.log
        got = observed_keys(fab, ["gpu001 mlx5_0", "gpu017 mlx5_0", "gpu017 mlx5_7", "gpu025 mlx5_0"])
        violations = isolation_violations(got, expected_keys(plan))
        assert violations == [
            "gpu017 mlx5_0: has ['0x7fff', '0x9001', '0x9002'], should have ['0x7fff', '0x9002']",
            "gpu017 mlx5_7: has ['0x7fff', '0x9001', '0x9002'], should have ['0x7fff', '0x9002']",
        ]

        # and a root GUID file naming a leaf makes ftree give up: the file opensm.conf names is really read
        leaf_root = ib / "root_guids"
        leaf_guid = fab.node("su1-rail0-leaf").guid
        leaf_root.write_text(f"0x{leaf_guid:016x}\n")
        bad = fab.opensm(routing="ftree", extra_args=["-F", str(ib / "opensm.conf")])
        assert bad.fell_back and bad.engine_used == "minhop", bad.log


# ------------------------------------------------------------------------- the storage fabric subnet

STORAGE_DESIGN = "dgx-h100-superpod-4su"  # storage.network: dedicated, an InfiniBand storage fabric


def test_opensm_runs_the_storage_fabric_as_a_subnet_of_its_own(compiled: Compiled, tmp_path: Path) -> None:
    """infiniband/storage/: its own ftree fat tree (the SM on its spines), tenants' storage ports in
    their keys and limited in 0x7fff, the storage servers full members every tenant reaches."""
    plan = compiled(STORAGE_DESIGN)
    files = rendered(compiled, STORAGE_DESIGN)
    ib = tmp_path / "infiniband" / "storage"
    ib.mkdir(parents=True)
    for rel, text in files.items():
        if rel.startswith("infiniband/storage/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)  # its switches' <switch>/mgmt.cfg too
            (tmp_path / rel).write_text(text.replace("/etc/opensm/storage", str(ib)))
    (tmp_path / "sim.net").write_text(for_ibsim(files["infiniband/storage/topology.net"]))
    with ibsim_fabric(tmp_path / "sim.net", tmp_path / "sim") as fab:
        run = fab.opensm(routing="ftree", extra_args=["-F", str(ib / "opensm.conf")])
        assert run.subnet_up and run.fat_tree_identified and not run.fell_back, run.log
        assert run.errors == [] and run.parse_errors == [], run.log
        assert "FatTree rank (roots to leaf switches): 2" in run.log
        spines = [d.name for d in plan.devices if d.network == "storage" and d.role == "spine"]
        assert f"Fabric has {len(spines)} switches at rank 0 (roots)" in run.log
        ca_ports = sum(1 for lk in plan.links if lk.network == "storage" and lk.tier == "server-leaf")
        assert f"Fabric has {ca_ports} CAs, {ca_ports} CA ports" in run.log
        # the storage ports of a tenant's DGX carry its key; one of nobody's only 0x7fff; storage full
        acme = next(p for p in plan.infiniband.partitions if p.name == "acme")
        key = 0x8000 | int(acme.pkey, 16)
        rented = hostlist.expand_hostlist(acme.servers)[0]
        tenants = {h for p in plan.infiniband.partitions[1:] for h in hostlist.expand_hostlist(p.servers)}
        free = [d.name for d in plan.devices if d.kind == "server" and d.name not in tenants]
        ports = plan.catalog.servers[plan.design.compute.server].storage_ports
        want = {
            f"{rented} {ports[0]}": {0x7FFF, key},
            f"{rented} {ports[-1]}": {0x7FFF, key},
            f"{free[0]} {ports[0]}": {0x7FFF},
            "stor01 eth0": {0xFFFF},
            "stor16 eth1": {0xFFFF},
        }
        assert isolation_violations(observed_keys(fab, list(want)), want) == []
        # a DGX reaches a storage server through its leaf pair and the spines: leaf, spine, leaf
        trace = fab.ibtracert(fab.lid(f"{rented} {ports[0]}"), fab.lid("stor01 eth0"))
        assert trace.switch_hops == 3 and trace.path[1].startswith("stor-spine")
