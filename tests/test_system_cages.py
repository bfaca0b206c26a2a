"""Twin-port system cages on server NICs (issue #14): a DGX H100/B200 brings its eight backend
ConnectX-7 out to four twin-port flat-top OSFP cages, so one flat-top twin transceiver serves two NICs
(two rails, two leaves) and the switch end keeps its finned twin transceivers, counted per cage."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.ports import port_table
from generators.stages.bom import plan_bom
from tests.conftest import DESIGNS

DGX = ("h100-256", "compute.server=dgx-h100")
# four dual-port 200G ConnectX-7 as the backend, with the QSFP112 optic the shipped catalog lacks
# (MMA1Z00-NS400: https://docs.nvidia.com/networking/display/MMA1Z00NS400T/Overview)
DUAL_CATALOG = {
    "servers": {"hgx-h100": {"backend": {"nic": "cx7-2x200g-qsfp112", "count": 4}}},
    "transceivers": {
        "MMA1Z00-NS400": {
            "description": "NVIDIA LinkX single-port 400G SR4 multimode QSFP112, flat top (ConnectX-7/BlueField-3)",
            "fits": ["qsfp112"],
            "protocols": ["infiniband", "ethernet"],
            "speeds_gbps": [400, 200],
            "media": "mmf",
            "fiber_connector": "mpo12-apc",
            "reach_m": 50,
            "power_w": 8,
            "price": {"usd": 900, "source": "estimate: as the OSFP MMA4Z00-NS400", "date": "2026-12"},
        }
    },
}


def _system_cages(plan: Plan) -> dict[tuple[str, str], tuple[str, int]]:
    """(server, backend port) -> (server, cage index), from the catalog entry the design uses."""
    be = plan.catalog.servers[plan.design.compute.server].backend
    assert be is not None and be.cages is not None
    return {
        (d.name, be.name.format(i=i)): (d.name, c)
        for d in plan.devices
        if d.kind == "server"
        for c, cage in enumerate(be.cages.ports)
        for i in cage
    }


def _optics_per_end(plan: Plan) -> tuple[Counter[str], Counter[str]]:
    """Transceivers (part -> count) plugged into the servers' system cages and into the switch cages
    their links reach, one per cage, read from the cable records' links."""
    sys_cage = _system_cages(plan)
    servers = {d.name for d in plan.devices if d.kind == "server"}
    switch_cage: dict[tuple[str, str], tuple[str, str]] = {}
    for d in plan.devices:
        if d.kind == "switch":
            for p in port_table(plan.catalog.switches[d.model]):
                switch_cage[(d.name, p.name)] = (d.name, str(p.cage))
    server_side: dict[tuple[str, int], str] = {}
    switch_side: dict[tuple[str, str], str] = {}
    assert plan.cables is not None
    for c in plan.cables:
        for k in c.links:
            lk = plan.links[k]
            if lk.network != "backend" or lk.a_device not in servers:  # not the management nodes' links
                continue
            for dev, port, part in (
                (lk.a_device, lk.a_port, c.a_transceiver),
                (lk.b_device, lk.b_port, c.b_transceiver),
            ):
                if (dev, port) in sys_cage and part:
                    server_side[sys_cage[(dev, port)]] = part
                elif (dev, port) in switch_cage and part:
                    switch_side[switch_cage[(dev, port)]] = part
    return Counter(server_side.values()), Counter(switch_side.values())


def test_dgx_counts_one_flat_top_twin_transceiver_per_system_cage(compiled: Callable[..., Plan]) -> None:
    plan = compiled(*DGX)
    servers = [d for d in plan.devices if d.kind == "server"]
    be = plan.catalog.servers["dgx-h100"].backend
    assert be is not None and be.cages is not None
    at_servers, at_switches = _optics_per_end(plan)
    assert sum(at_servers.values()) == len(servers) * len(be.cages.ports) == len(servers) * 4
    for part in at_servers:
        x = plan.catalog.transceivers[part]
        assert x.ports == 2 and be.cages.connector in x.fits  # a flat-top twin: it fits the system cage
    for part in at_switches:
        x = plan.catalog.transceivers[part]
        assert x.ports == 2 and "osfp" in x.fits and be.cages.connector not in x.fits  # finned
    # the switch side is still one twin per leaf cage: two server ports per cage
    server_leaf = [
        lk
        for lk in plan.links
        if lk.network == "backend" and lk.tier == "server-leaf" and lk.a_device in {s.name for s in servers}
    ]
    assert sum(at_switches.values()) == len(server_leaf) // 2


def test_dgx_twin_transceiver_fibers_go_to_the_two_rails_nvidia_wires(compiled: Callable[..., Plan]) -> None:
    plan = compiled(*DGX)
    be = plan.catalog.servers["dgx-h100"].backend
    assert be is not None and be.cages is not None
    devs = plan.index()
    leaf_of = {
        (lk.a_device, lk.a_port): lk.b_device
        for lk in plan.links
        if lk.network == "backend" and lk.tier == "server-leaf"
    }
    cable_of = {}
    assert plan.cables is not None
    for c in plan.cables:
        for k in c.links:
            lk = plan.links[k]
            cable_of[(lk.a_device, lk.a_port)] = c
    for d in (d for d in plan.devices if d.kind == "server"):
        for cage in be.cages.ports:
            ports = [be.name.format(i=i) for i in cage]
            leaves = [leaf_of[(d.name, p)] for p in ports]
            assert [devs[leaf].attrs["rail"] for leaf in leaves] == cage  # GPU i's NIC on rail i
            assert len(set(leaves)) == 2  # one twin transceiver, two fibers, two leaves
            # both fibers leave from the one flat-top twin transceiver of the cage
            assert {cable_of[(d.name, p)].a_transceiver for p in ports} == {"MMA4Z00-NS-FLT"}


def test_dgx_bom_transceivers_match_the_cable_plan(cli, tmp_path: Path) -> None:
    out = tmp_path / "dgx"
    r = cli("compile", DESIGNS / "h100-256.yaml", "--set", DGX[1], "--out", out, "-q")
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text())
    bom = json.loads((out / "bom.json").read_text())
    lines = Counter({ln["part"]: ln["quantity"] for ln in bom["lines"] if ln["kind"] == "transceiver"})
    assert lines == Counter(plan["cabling"]["transceiver_parts"])
    servers = sum(1 for d in plan["devices"] if d["kind"] == "server")
    assert lines["MMA4Z00-NS-FLT"] == servers * 4


def test_hgx_single_port_cages_keep_single_port_optics(compiled: Callable[..., Plan]) -> None:
    """The HGX's NICs are PCIe cards with a cage each: no system twin cages, no flat-top twins."""
    plan = compiled("h100-256")
    assert plan.catalog.servers["hgx-h100"].backend.cages is None
    assert "MMA4Z00-NS-FLT" not in plan.cabling.transceiver_parts


def _dual(tmp_path: Path, **design: object) -> Plan:
    path = tmp_path / "dual.yaml"
    path.write_text(yaml.safe_dump({"extends": str(DESIGNS / "h100-256.yaml"), "catalog": DUAL_CATALOG, **design}))
    return compile_file(path)[0]


def test_a_dual_port_backend_nic_is_two_rails_for_invariants_and_cabling(tmp_path: Path) -> None:
    """Every port the cable plan knows on a server is a backend port the fabric connects: a dual-port
    backend NIC is two ports, two rails, as the invariants and the cable plan both count it."""
    plan = _dual(tmp_path)
    nic = plan.catalog.nics["cx7-2x200g-qsfp112"]
    per_server = nic.ports * 4
    assert plan.networks.backend.rails == per_server
    servers = {d.name for d in plan.devices if d.kind == "server"}
    used = Counter(lk.a_device for lk in plan.links if lk.network == "backend" and lk.a_device in servers)
    assert set(used.values()) == {per_server}
    ports = Counter((lk.a_device, lk.a_port) for lk in plan.links if lk.a_device in servers and lk.network == "backend")
    assert {p for _, p in ports} == {f"mlx5_{i}" for i in range(per_server)} and set(ports.values()) == {1}


def test_dual_port_backend_rails_set_to_every_port_compiles(tmp_path: Path) -> None:
    plan = _dual(tmp_path, backend={"rails": 8})
    assert plan.networks.backend.rails == 8
    # the NICs are priced per card, not per port
    servers = sum(1 for d in plan.devices if d.kind == "server")
    (nics,) = [ln for ln in plan_bom(plan).lines if ln.part == "cx7-2x200g-qsfp112" and "backend" in ln.description]
    assert nics.quantity == servers * DUAL_CATALOG["servers"]["hgx-h100"]["backend"]["count"]


@pytest.mark.parametrize(
    ("ports", "says"),
    [
        ([[0, 1], [2, 3], [4, 5], [6, 6]], "exactly once"),
        ([[0, 1], [2, 3], [4, 5], [6], [7]], "same number of ports"),
    ],
)
def test_bad_system_cages_are_refused_at_the_field(tmp_path: Path, ports: list[list[int]], says: str) -> None:
    design = tmp_path / "d.yaml"
    design.write_text(
        yaml.safe_dump(
            {
                "extends": str(DESIGNS / "h100-256.yaml"),
                "compute": {"server": "dgx-h100"},
                "catalog": {"servers": {"dgx-h100": {"backend": {"cages": {"connector": "osfp-rhs", "ports": ports}}}}},
            }
        )
    )
    with pytest.raises(DesignError) as exc:
        compile_file(design)
    (p,) = exc.value.problems
    assert p.field == "catalog.servers.dgx-h100.backend.cages.ports" and says in p.message
    assert "d.yaml" in (p.where or "")


def test_dgx_top_of_rack_cage_meets_one_leaf_cage_on_one_twin_cable(compiled: Callable[..., Plan]) -> None:
    """With the leaf in the rack, a system cage's two rails land on one twin leaf cage, so the cage
    takes one flat-top-to-finned twin cable instead of two optics and two fibers."""
    plan = compiled("h100-1024-tor", "compute.server=dgx-h100")
    sys_cage = _system_cages(plan)
    assert plan.cables is not None
    by_cage: dict[tuple[str, int], list[object]] = {}
    for c in plan.cables:
        for k in c.links:
            lk = plan.links[k]
            if (lk.a_device, lk.a_port) in sys_cage:
                by_cage.setdefault(sys_cage[(lk.a_device, lk.a_port)], []).append(c.id)
    servers = sum(1 for d in plan.devices if d.kind == "server")
    assert len(by_cage) == servers * 4
    for ids in by_cage.values():
        assert len(ids) == 2 and len(set(ids)) == 1  # both links in one cable record
    twin = {c.id: c for c in plan.cables if c.id in {ids[0] for ids in by_cage.values()}}
    for c in twin.values():
        end = plan.catalog.cables[c.catalog]
        assert c.physical == 1 and end.a_end is not None and end.b_end is not None
        assert "osfp-rhs" in end.a_end.fits and "osfp" in end.b_end.fits and end.a_end.ports == end.b_end.ports == 2


def test_nvidias_127_dgx_superpod_counts_508_system_transceivers(compiled: Callable[..., Plan]) -> None:
    # the yardstick: 127 DGX H100 (one slot to the subnet managers) behind 4 twin cages each
    plan = compiled("h100-1016-superpod", "compute.server=dgx-h100")
    servers = [d for d in plan.devices if d.kind == "server"]
    at_servers, _ = _optics_per_end(plan)
    assert len(servers) == 127 and sum(at_servers.values()) == 508
    # the subnet-manager hosts still reach the freed slot's leaf ports, each on its own link
    sm = [lk for lk in plan.links if lk.network == "backend" and lk.a_device.startswith("mgmt")]
    assert sm and all(lk.tier == "server-leaf" for lk in sm)
