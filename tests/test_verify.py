"""`railyard verify`: the diff between a discovered fabric and the plan (no daemons; the ibsim round trip is
in tests/test_slurm_ib_daemons.py)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from generators.asbuilt.ibnetdiscover import parse_net
from generators.asbuilt.verify import PlanLocator, switch_name, verify_fabric
from generators.model.plan import Plan
from generators.vendors.infiniband import render_infiniband
from generators.views.ibnetdiscover import NetNode, format_net
from tests.conftest import DESIGNS
from tests.ibfaults import by_desc, drop, set_speed, swap

Compiled = Callable[..., Plan]


@pytest.fixture(scope="module")
def plan256() -> Plan:
    from generators.compiler import compile_file

    return compile_file(DESIGNS / "h100-256.yaml")[0]


@pytest.fixture
def fabric(plan256: Plan) -> dict[str, NetNode]:
    """The expected fabric of h100-256, freshly parsed (tests damage it)."""
    return parse_net(render_infiniband(plan256)["infiniband/topology.net"])


def text(nodes: dict[str, NetNode]) -> str:
    return format_net(nodes.values())


def test_the_plan_itself_verifies(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    rep = verify_fabric(plan256, text(fabric))
    assert rep.ok and rep.faulty_links == 0
    assert rep.planned_links == rep.discovered_links == 8 * 32 + 2 + 8 * 16
    assert "OK: the discovered fabric matches the plan" in rep.text()


def test_rails_crossed_at_a_server(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    swap(fabric, ("gpu001 mlx5_0", 1), ("gpu001 mlx5_1", 1))
    rep = verify_fabric(plan256, text(fabric))
    assert not rep.missing and not rep.extra and not rep.slow
    (s,) = rep.swapped
    assert [(p.device, p.port) for p in s.at] == [("gpu001", "mlx5_0"), ("gpu001", "mlx5_1")]
    assert [(lk.a.device, lk.a.port, lk.b.device, lk.b.port) for lk in s.planned] == [
        ("gpu001", "mlx5_0", "su1-rail0-leaf", "1/1/1"),
        ("gpu001", "mlx5_1", "su1-rail1-leaf", "1/1/1"),
    ]
    assert sorted((lk.a.device, lk.a.port, lk.b.device, lk.b.port) for lk in s.found) == [
        ("gpu001", "mlx5_0", "su1-rail1-leaf", "1/1/1"),
        ("gpu001", "mlx5_1", "su1-rail0-leaf", "1/1/1"),
    ]
    assert rep.faulty_links == 2
    assert (
        "SWAPPED  exchange the cables at gpu001 mlx5_0 [rack r01-01 U1] and gpu001 mlx5_1 [rack r01-01 U1]"
        in rep.text()
    )


def test_two_servers_crossed_at_a_leaf(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    swap(fabric, ("su1-rail3-leaf", 1), ("su1-rail3-leaf", 2))
    (s,) = verify_fabric(plan256, text(fabric)).swapped
    assert sorted((p.device, p.port, p.ib_port) for p in s.at) == [
        ("su1-rail3-leaf", "1/1/1", 1),
        ("su1-rail3-leaf", "1/1/2", 2),
    ]


def test_missing_link_names_both_ends(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    up = next(p for p, lk in by_desc(fabric, "su1-rail2-leaf").links.items() if fabric[lk.peer].desc == "spine02")
    drop(fabric, ("su1-rail2-leaf", up))
    rep = verify_fabric(plan256, text(fabric))
    (m,) = rep.missing
    assert (m.a.device, m.a.port, m.a.ib_port) == ("su1-rail2-leaf", "1/21/1", up)
    assert m.b.device == "spine02" and m.b.ib_port is not None
    assert m.planned_speed == "4xNDR"
    assert rep.faulty_links == 1 and not rep.extra and not rep.swapped
    label = "r02-07.U26.1/21/1 -- r02-08.U25.1/9/1"
    (cid,) = [c.id for c in plan256.cables or [] if label in c.labels]
    # leaf-spine is a twin DAC here: one plug carries 1/21/1 and 1/21/2, and the report says so
    assert (
        f"MISSING  su1-rail2-leaf 1/21/1 (IB port 41) [rack r02-07 U26] (one plug with 1/21/2, twin cable "
        f"{cid}) <-> spine02"
    ) in rep.text()
    assert re.fullmatch(r"C-[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}", cid)
    assert f"cable {cid} label '{label}'" in rep.text()


def test_cable_in_the_wrong_port_is_missing_plus_extra(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    leaf = by_desc(fabric, "su1-rail0-leaf")
    lk = leaf.links.pop(5)  # gpu005 mlx5_0 moved from port 5 to the free port 60
    leaf.links[60] = replace(lk, port=60)
    ca = fabric[lk.peer]
    ca.links[1] = replace(ca.links[1], peer_port=60)
    rep = verify_fabric(plan256, text(fabric))
    assert [(m.a.device, m.b.port) for m in rep.missing] == [("gpu005", "1/3/1")]
    assert [(e.a.device, e.a.port, e.b.device, e.b.port, e.b.ib_port) for e in rep.extra] == [
        ("gpu005", "mlx5_0", "su1-rail0-leaf", "1/30/2", 60)
    ]
    assert rep.extra[0].note == "gpu005 mlx5_0 was planned to su1-rail0-leaf 1/3/1 (IB port 5) [rack r02-07 U24]"


def test_unknown_device_is_extra(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    leaf = by_desc(fabric, "su1-rail0-leaf")
    stranger = NetNode("Ca", "H-00000000000000a0", 0xA0, 1, "laptop mlx5_0")
    fabric[stranger.ident] = stranger
    from generators.views.ibnetdiscover import NetLink

    stranger.links[1] = NetLink(1, leaf.ident, 61, "4xNDR")
    leaf.links[61] = NetLink(61, stranger.ident, 1, "4xNDR")
    rep = verify_fabric(plan256, text(fabric))
    (e,) = rep.extra
    assert not e.a.known and e.a.device == "laptop mlx5_0 (GUID 0x00000000000000a0)" and e.b.device == "su1-rail0-leaf"
    assert rep.unknown_nodes == ["HCA 'laptop mlx5_0' (GUID 0x00000000000000a0)"]


def test_slow_link(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    set_speed(fabric, ("gpu007 mlx5_3", 1), "4xHDR")
    rep = verify_fabric(plan256, text(fabric))
    (s,) = rep.slow
    assert (s.a.device, s.a.port, s.found_speed, s.planned_speed) == ("gpu007", "mlx5_3", "4xHDR", "4xNDR")
    # on a simulator the expectation is HDR: then it is every other link that is "slow"
    assert len(verify_fabric(plan256, text(fabric), expect_speed="4xHDR").slow) == rep.planned_links - 1


def test_mlnx_os_switch_descriptions(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    assert switch_name("MF0;su1-rail0-leaf:MQM9700/U1") == "su1-rail0-leaf"
    for n in fabric.values():
        if n.kind == "Switch":
            n.desc = f"MF0;{n.desc}:MQM9700/U1"
    assert verify_fabric(plan256, text(fabric)).ok


def test_node_name_map_names_undescribed_devices(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    names = {}
    for n in fabric.values():
        names[n.guid] = n.desc
        n.desc = "MT4129 ConnectX7 Mellanox Technologies" if n.kind == "Ca" else "Quantum-2 Mellanox Technologies"
    assert not verify_fabric(plan256, text(fabric)).ok
    assert verify_fabric(plan256, text(fabric), node_names=names).ok


def test_a_removed_link_is_reported_with_rack_unit_and_label_at_both_ends(tmp_path: Path) -> None:
    """The issue's check, end to end on what a user gets: compile h100-256, take one link out of the
    compiled infiniband/topology.net, run `railyard verify --json` on it through the real command."""
    out = tmp_path / "out"
    design = DESIGNS / "h100-256.yaml"
    run = [sys.executable, "-m", "generators.cli"]
    subprocess.run([*run, "compile", str(design), "--out", str(out), "-q"], check=True)
    nodes = parse_net((out / "infiniband" / "topology.net").read_text())
    drop(nodes, ("gpu017 mlx5_3", 1))
    discovered = tmp_path / "discovered.net"
    discovered.write_text(format_net(nodes.values()))
    r = subprocess.run(
        [*run, "verify", str(design), "--ibnetdiscover", str(discovered), "--json"], capture_output=True, text=True
    )
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    (lk,) = rep["missing"]
    plan = json.loads((out / "plan.json").read_text())
    devices = {d["name"]: d for d in plan["devices"]}
    for end in (lk["a"], lk["b"]):
        dev = devices[end["device"]]
        assert end["rack"] == dev["rack"] and end["unit"] == dev["unit"] and end["rack"] and end["unit"]
    assert {lk["a"]["device"], lk["b"]["device"]} == {"gpu017", "su1-rail3-leaf"}
    # the label and cable id are the ones cables.csv gives the technician for that link
    with open(out / "cabling" / "cables.csv", newline="") as fh:
        rows = [row for row in csv.DictReader(fh) if {row["a_device"], row["b_device"]} == {"gpu017", "su1-rail3-leaf"}]
    (row,) = rows
    assert (lk["cable_id"], lk["label"]) == (row["cable_id"], row["label"])
    assert lk["label"].startswith(f"{devices['gpu017']['rack']}.") and "su1-rail3-leaf" not in lk["label"]


def test_swapped_cables_name_both_planned_labels(plan256: Plan, fabric: dict[str, NetNode]) -> None:
    loc = PlanLocator(plan256)
    gpu = plan256.device("gpu001")
    assert loc.location(("gpu001", "mlx5_0")) == loc.location(("gpu001", "bmc"))
    assert (loc.location(("gpu001", "mlx5_0")).rack, loc.location(("gpu001", "mlx5_0")).unit) == (gpu.rack, gpu.unit)
    swap(fabric, ("gpu001 mlx5_0", 1), ("gpu001 mlx5_1", 1))
    (s,) = verify_fabric(plan256, text(fabric)).swapped
    labels = {lk.label for lk in s.planned}
    want = {
        lab
        for c in plan256.cables
        for k, lab in zip(c.links, c.labels, strict=True)
        if plan256.links[k].a_device == "gpu001" and plan256.links[k].a_port in ("mlx5_0", "mlx5_1")
    }
    assert labels == want and len(want) == 2 and all(lk.cable_id for lk in s.planned)


def test_verify_cli(cli: Callable[..., object], plan256: Plan, fabric: dict[str, NetNode], tmp_path: Path) -> None:
    design = DESIGNS / "h100-256.yaml"
    good = tmp_path / "good.net"
    good.write_text(text(fabric))
    r = cli("verify", design, "--ibnetdiscover", good)
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    swap(fabric, ("gpu001 mlx5_0", 1), ("gpu001 mlx5_1", 1))
    drop(fabric, ("gpu009 mlx5_4", 1))
    bad = tmp_path / "bad.net"
    bad.write_text(text(fabric))
    r = cli("verify", design, "--ibnetdiscover", bad, "--json")
    assert r.exit_code == 1  # type: ignore[attr-defined]
    rep = json.loads(r.output)  # type: ignore[attr-defined]
    assert rep["faulty_links"] == 3 and len(rep["swapped"]) == 1 and len(rep["missing"]) == 1
    assert rep["missing"][0]["a"]["device"] == "gpu009" and rep["missing"][0]["b"]["port"] == "1/5/1"
    garbage = tmp_path / "garbage.net"
    garbage.write_text("this is not ibnetdiscover output\n")
    r = cli("verify", design, "--ibnetdiscover", garbage)
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "--ibnetdiscover" in r.output and "line 1: not ibnetdiscover topology output" in r.output  # type: ignore
    r = cli("verify", design, "--ibnetdiscover", tmp_path / "absent.net")
    assert r.exit_code == 2 and "cannot read" in r.output  # type: ignore[attr-defined]


def test_write_config_with_the_hardware_guids(
    cli: Callable[..., object], fabric: dict[str, NetNode], tmp_path: Path
) -> None:
    """After discovery the SM files get the real GUIDs: node GUIDs from the records, HCA port GUIDs as printed
    (mlx5 HCAs report a port GUID equal to the node GUID, not node + 1 as ibsim does)."""
    from generators.views.ibnetdiscover import NetLink

    for i, n in enumerate(sorted(fabric.values(), key=lambda n: n.desc)):
        n.guid = 0x0C42A10300000000 + 0x100 * i
        if n.kind == "Ca":
            lk = n.links[1]
            n.links[1] = NetLink(lk.port, lk.peer, lk.peer_port, lk.speed, port_guid=n.guid)
    discovered = tmp_path / "site.net"
    discovered.write_text(text(fabric))
    out = tmp_path / "as-built"
    r = cli("verify", DESIGNS / "h100-256.yaml", "--ibnetdiscover", discovered, "--write-config", out)
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    parts = (out / "infiniband/partitions.conf").read_text()
    assert f"  0x{by_desc(fabric, 'gpu001 mlx5_0').guid:016x}, 0x{by_desc(fabric, 'gpu001 mlx5_1').guid:016x}," in parts
    assert f"0x{by_desc(fabric, 'mgmt01 mlx5_0').guid:016x}=full" in parts
    roots = (out / "infiniband/root_guids").read_text()
    assert f"0x{by_desc(fabric, 'spine02').guid:016x}  # spine02" in roots
    written = parse_net((out / "infiniband/topology.net").read_text())
    assert {n.desc: (n.guid, n.port_guid(1)) for n in written.values()} == {
        n.desc: (n.guid, n.port_guid(1)) for n in fabric.values()
    }
    assert (out / "plan.json").exists()
    members = json.loads((out / "infiniband/ufm/acme-members.json").read_text())["guids"]
    assert members[0] == f"{by_desc(fabric, 'gpu001 mlx5_0').guid:016x}"

    # a server that was not discovered has no GUID: refuse rather than write a partial partitions.conf
    ca = by_desc(fabric, "gpu032 mlx5_7")
    drop(fabric, ("gpu032 mlx5_7", 1))
    del fabric[ca.ident]
    discovered.write_text(text(fabric))
    r = cli("verify", DESIGNS / "h100-256.yaml", "--ibnetdiscover", discovered, "--write-config", tmp_path / "x")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "--write-config: 1 fabric nodes were not discovered, e.g. 'gpu032 mlx5_7'" in r.output  # type: ignore
    assert not (tmp_path / "x").exists()


def test_verify_needs_an_infiniband_backend(
    cli: Callable[..., object], fabric: dict[str, NetNode], tmp_path: Path
) -> None:
    f = tmp_path / "f.net"
    f.write_text(text(fabric))
    r = cli(
        "verify",
        DESIGNS / "h100-256.yaml",
        "--set",
        "backend.technology=roce",
        "--set",
        "backend.switch=SN5600",
        "--ibnetdiscover",
        f,
    )
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "backend.technology: verify reads ibnetdiscover output: the backend is not InfiniBand" in r.output  # type: ignore
    r = cli("verify", DESIGNS / "h100-256.yaml", "--ibnetdiscover", f, "--speed", "fast")
    assert r.exit_code == 2 and "--speed: 'fast' is not an InfiniBand link speed" in r.output  # type: ignore
