"""designs/b300-spectrumx.yaml (HGX B300 on Spectrum-X, each ConnectX-8 as 2 x 400GbE, one port per
plane, on SN5600-800G leaves split 2 x 400G), backend.leaves_per_rail (the same design with 2 leaves per
rail per scalable unit), backend.speed (a ConnectX-8 at 400G on Quantum-2) and port breakout.

The counts are derived from the design's own rules (servers, su_size, leaves_per_rail, the switch
radix, the ratio) and the catalog, not copied from a compiled output."""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import hostlist
import jsonschema
import pytest
import yaml

from generators.compiler import compile_file
from generators.model.design import ratio_value
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.ports import backend_ports, port_table
from generators.model.yamlload import parse_yaml_text
from tests.conftest import DESIGNS, rendered_files

Compiled = Callable[..., Plan]
SX = "b300-spectrumx"
REF = "h100-1024-reference"
B300_AT_400 = ("compute.server=hgx-b300", "backend.speed=400G")
SPLIT = ("backend.leaves_per_rail=2",)  # each unit's rail on two leaves of 32 servers


def _rules(plan: Plan) -> dict[str, int]:
    """What the design's rules say the backend must be."""
    d, cat = plan.design, plan.catalog
    be = d.backend
    srv = cat.servers[d.compute.server]
    assert srv.backend is not None
    rails = len(backend_ports(cat, srv.backend))
    n_su = math.ceil(d.compute.count / be.su_size)
    down = be.su_size // be.leaves_per_rail
    up = math.ceil(Fraction(down) / ratio_value(be.oversubscription))
    leaves = n_su * rails * be.leaves_per_rail
    radix = cat.switches[cat.switch_at(be.switch, plan.networks.backend.speed_gbps)].ports
    return {
        "rails": rails,
        "n_su": n_su,
        "down": down,
        "up": up,
        "leaves": leaves,
        "radix": radix,
        "spines": math.ceil(leaves * up / radix),
    }


def _backend(plan: Plan, tier: str) -> list:
    return [lk for lk in plan.links if lk.network == "backend" and lk.tier == tier]


# ------------------------------------------------------------------------------------- the design


def test_switches_and_links_per_tier_follow_the_design_rules(compiled: Compiled) -> None:
    plan = compiled(SX)
    r = _rules(plan)
    be = plan.networks.backend
    switches = Counter(d.role for d in plan.devices if d.kind == "switch" and d.network == "backend")
    assert (be.tiers, switches["leaf"], switches["spine"], switches.get("core", 0)) == (
        2,
        r["leaves"],
        r["spines"],
        0,
    )
    assert (be.downlinks_per_leaf, be.uplinks_per_leaf) == (r["down"], r["up"])
    assert r["rails"] == 16  # 8 ConnectX-8 x 2 planes
    # a non-blocking 2-tier fabric fills the leaves exactly: half the radix down, half up
    assert r["down"] + r["up"] == r["radix"]
    servers = plan.design.compute.count
    assert len(_backend(plan, "server-leaf")) == servers * r["rails"]
    assert len(_backend(plan, "leaf-spine")) == r["leaves"] * r["up"]
    assert {lk.speed_gbps for lk in plan.links if lk.network == "backend"} == {400}
    assert be.oversubscription.measured == "1:1" and be.bisection.ratio == 1.0


def test_the_two_planes_of_a_connectx8_share_its_cage_and_reach_two_leaves(compiled: Compiled) -> None:
    """Port 2k and 2k+1 are NIC k's two 400GbE planes: one OSFP cage at the server, two rails, so two
    different leaves of the server's unit."""
    plan = compiled(SX)
    srv = plan.catalog.servers[plan.design.compute.server]
    assert srv.backend is not None
    cages = Counter(bp.cage for bp in backend_ports(plan.catalog, srv.backend))
    assert set(cages.values()) == {2} and len(cages) == srv.backend.count
    leaf_of = {lk.a_port: lk.b_device for lk in _backend(plan, "server-leaf") if lk.a_device == "gpu001"}
    for k in range(srv.backend.count):
        assert leaf_of[f"mlx5_{2 * k}"] != leaf_of[f"mlx5_{2 * k + 1}"]
    assert len(set(leaf_of.values())) == 16


def test_800gbe_on_one_connectx8_port_is_refused(tmp_path: Path) -> None:
    """ConnectX-8 runs 800G on XDR InfiniBand only: on Ethernet a port runs at most 400GbE."""
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump({"extends": str(DESIGNS / f"{SX}.yaml"), "compute": {"server": "hgx-b300"}}))
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    (p,) = [p for p in exc.value.problems if p.field == "compute.server"]
    assert "400G per port on Ethernet, not 800G" in p.message and "hgx-b300-2x400gbe" in p.hint
    assert p.where == f"{path}:{_line_of(path, 'server')}"


def test_each_rail_splits_a_unit_over_two_leaves_in_server_order(compiled: Compiled) -> None:
    plan = compiled(SX, *SPLIT)
    r = _rules(plan)
    su_size = plan.design.backend.su_size
    servers = [d.name for d in plan.devices if d.kind == "server"]
    on: dict[str, set[str]] = {}
    for lk in _backend(plan, "server-leaf"):
        on.setdefault(lk.b_device, set()).add(lk.a_device)
    for u in range(r["n_su"]):
        for rail in range(r["rails"]):
            for k in range(2):
                first = u * su_size + k * r["down"]
                assert on[f"su{u + 1}-rail{rail}-leaf{k + 1:02d}"] == set(servers[first : first + r["down"]])
    # and every NIC of a server is on its own rail's leaf of the same half
    idx = plan.index()
    for lk in _backend(plan, "server-leaf"):
        leaf = idx[lk.b_device]
        assert lk.a_port == f"mlx5_{leaf.attrs['rail']}"
        assert leaf.attrs["su"] == idx[lk.a_device].attrs["su"]


def test_transceivers_one_twin_per_cage_at_each_end(compiled: Compiled) -> None:
    plan = compiled(SX)
    assert plan.cabling is not None and plan.cables is not None
    cat = plan.catalog
    links = len([lk for lk in plan.links if lk.network == "backend"])
    # every backend cage holds two 400G ports (a split 800G OSFP at the switches, a ConnectX-8's two
    # planes at the servers), both in use, and leaves and spines stand in network racks (no copper
    # reaches): one twin-port optic per cage, half as many as link ends
    split = cat.switches[plan.networks.backend.switch_model]
    assert {p.ports_per_cage for p in port_table(split)} == {2}
    assert plan.cabling.transceivers["backend"] == links  # 2 ends per link, 2 ports per optic
    parts = plan.cabling.transceiver_parts
    assert all(cat.transceivers[p].ports == 2 and 400 in cat.transceivers[p].speeds_gbps for p in parts)
    # the flat-top twins sit in the servers' riding-heat-sink cages, one per ConnectX-8
    flat = sum(n for p, n in parts.items() if "osfp-rhs" in cat.transceivers[p].fits)
    assert flat == plan.design.compute.count * cat.servers[plan.design.compute.server].backend.count
    bom = {ln.part: ln.quantity for ln in plan.bom.lines if ln.category == "backend"}
    assert sum(bom[p] for p in parts) == links
    assert bom[plan.networks.backend.switch_model] == _rules(plan)["leaves"] + _rules(plan)["spines"]


def test_racks_pdus_and_power_per_rack(compiled: Compiled) -> None:
    plan = compiled(SX)
    d, cat = plan.design, plan.catalog
    assert plan.racks is not None
    rack = d.site.rack
    compute = [r for r in plan.racks if r.role == "compute"]
    assert len(compute) == math.ceil(d.compute.count / rack.servers_per_rack)
    power = {"server": cat.servers[d.compute.server].power_kw}
    by_rack: dict[str, list] = {}
    for dev in plan.devices:
        if dev.rack is not None:
            by_rack.setdefault(dev.rack, []).append(dev)

    def kw(dev) -> float:
        if dev.kind == "server":
            return power["server"]
        if dev.kind == "switch":
            return cat.switches[dev.model].power_w / 1000
        if dev.kind == "storage":
            return cat.storage_servers[dev.model].power_kw
        if dev.kind == "management":
            return cat.servers[dev.model].power_kw
        return 0.0

    for r in plan.racks:
        assert r.power_kw == pytest.approx(sum(kw(x) for x in by_rack[r.name]), abs=1e-6), r.name
        assert r.power_kw <= rack.power_kw
    for r in compute:
        assert sum(x.kind == "server" for x in by_rack[r.name]) == rack.servers_per_rack
        assert r.power_kw >= rack.servers_per_rack * power["server"]
        assert r.pdus == 3  # site.rack.pdus: {compute: 3}
    # every other rack: the default, enough that either feed alone carries the rack's budget
    default = 2 * math.ceil(rack.power_kw / cat.pdus[rack.pdu].capacity_kw)
    assert {r.pdus for r in plan.racks if r.role != "compute"} == {default}
    # the leaf racks hold the leaves, as many per rack as power allows beside the rack's OOB switch
    sw = cat.switches[d.backend.switch]
    oob = cat.switches[d.oob.switch]
    per_rack = min(
        math.floor((rack.power_kw - oob.power_w / 1000) / (sw.power_w / 1000)),
        (rack.units - oob.rack_units) // sw.rack_units,
    )
    leaf_racks = [r for r in plan.racks if r.role == "leaf"]
    assert len(leaf_racks) == math.ceil(_rules(plan)["leaves"] / per_rack)
    assert (
        sum(x.role == "leaf" and x.network == "backend" for r in leaf_racks for x in by_rack[r.name])
        == _rules(plan)["leaves"]
    )


def test_slurm_tree_has_a_switch_per_half_unit_and_blocks_stay_units(compiled: Compiled) -> None:
    files = rendered_files(compiled, SX, *SPLIT)
    plan = compiled(SX, *SPLIT)
    r = _rules(plan)
    su_size = plan.design.backend.su_size
    tree = [ln for ln in files["slurm/topology.conf"].splitlines() if ln.startswith("SwitchName=")]
    leaves = {
        ln.split()[0].removeprefix("SwitchName="): hostlist.expand_hostlist(ln.split("Nodes=")[1].split()[0])
        for ln in tree
        if "Nodes=" in ln
    }
    assert len(leaves) == r["n_su"] * 2
    assert all(len(nodes) == r["down"] for nodes in leaves.values())
    assert set(leaves) == {f"su{u}-leaf{k:02d}" for u in range(1, r["n_su"] + 1) for k in (1, 2)}
    block = files["slurm/topology-block.conf"]
    blocks = [ln for ln in block.splitlines() if ln.startswith("BlockName=")]
    assert len(blocks) == r["n_su"]
    assert all(len(hostlist.expand_hostlist(b.split("Nodes=")[1])) == su_size for b in blocks)
    assert f"BlockSizes={su_size},{2 * su_size}" in block
    # tenants rent whole units: a partition is a unit's servers, both halves
    nodes_conf = files["slurm/nodes.conf"]
    assert f"PartitionName=acme Nodes=gpu[001-{su_size:03d}]" in nodes_conf


def test_cable_sheet_names_the_split_leaves(compiled: Compiled) -> None:
    files = rendered_files(compiled, SX, *SPLIT)
    rows = [r for r in csv.DictReader(io.StringIO(files["cabling/cables.csv"])) if r["network"] == "backend"]
    plan = compiled(SX, *SPLIT)
    assert len(rows) == len([lk for lk in plan.links if lk.network == "backend"])
    first = next(r for r in rows if r["a_device"] == "gpu001" and r["a_port"] == "mlx5_0")
    half = next(r for r in rows if r["a_device"] == f"gpu{_rules(plan)['down'] + 1:03d}" and r["a_port"] == "mlx5_0")
    port0 = plan.catalog.switches[plan.networks.backend.switch_model].port_names()[0]
    assert (first["b_device"], first["b_port"]) == ("su1-rail0-leaf01", port0)
    assert (half["b_device"], half["b_port"]) == ("su1-rail0-leaf02", port0)


# ----------------------------------------------------------------------------------- backend.speed


def test_connectx8_at_400g_on_quantum2_gets_400g_links_and_optics(compiled: Compiled) -> None:
    plan = compiled(REF, *B300_AT_400)
    cat = plan.catalog
    assert plan.networks.backend.speed_gbps == 400
    assert {lk.speed_gbps for lk in plan.links if lk.network == "backend"} == {400}
    rows = [
        r
        for r in csv.DictReader(io.StringIO(rendered_files(compiled, REF, *B300_AT_400)["cabling/cables.csv"]))
        if r["network"] == "backend"
    ]
    ends = [x for r in rows for x in (r["a_transceiver"], r["b_transceiver"]) if x]
    # every backend optic runs 400G (the ConnectX-8's 800G parts would not link to a Quantum-2 port)
    assert ends and all(
        400 in cat.transceivers[x].speeds_gbps and 800 not in cat.transceivers[x].speeds_gbps for x in ends
    )
    # a NIC's OSFP is a single-port cage: one single-port 400G optic per server port
    nic_side = [r["a_transceiver"] for r in rows if r["a_device"].startswith("gpu")]
    assert len(nic_side) == plan.design.compute.count * _rules(plan)["rails"]
    assert all(cat.transceivers[x].ports == 1 for x in nic_side)
    assert plan.cabling is not None
    bom = {ln.part: ln.quantity for ln in plan.bom.lines if ln.category == "backend" and ln.kind == "transceiver"}
    assert bom == {p: n for p, n in plan.cabling.transceiver_parts.items() if p in set(ends)}
    assert bom[Counter(nic_side).most_common(1)[0][0]] >= len(nic_side)


def test_without_backend_speed_the_nic_runs_its_native_speed(compiled: Compiled) -> None:
    assert compiled(REF).networks.backend.speed_gbps == 400  # ConnectX-7
    assert compiled("b300-xdr").networks.backend.speed_gbps == 800  # ConnectX-8 on XDR
    assert compiled(SX).networks.backend.speed_gbps == 400  # ConnectX-8 as 2 x 400GbE
    assert "speed" not in compiled(REF).design.model_dump()["backend"]


def _design(tmp_path: Path, **backend: object) -> Path:
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump({"extends": str(DESIGNS / f"{SX}.yaml"), "backend": backend}))
    return path


def _line_of(path: Path, key: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.strip().startswith(f"{key}:"))


@pytest.mark.parametrize(
    ("speed", "says"),
    [
        ("800G", "not a speed of cx8-2x400gbe"),  # each of its two ports runs 400G and 200G only
        ("1600G", "not a speed of cx8-2x400gbe"),
    ],
)
def test_a_speed_the_nic_cannot_run_is_refused_at_the_field(tmp_path: Path, speed: str, says: str) -> None:
    path = _design(tmp_path, speed=speed)
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    p = next(p for p in exc.value.problems if p.field == "backend.speed")
    assert says in p.message and "400G" in p.message
    assert p.where == f"{path}:{_line_of(path, 'speed')}"


def test_a_speed_the_switch_ports_cannot_run_is_refused(tmp_path: Path) -> None:
    # a ConnectX-8 port runs 400GbE, but the catalog's SN4600 ports stop at 200G
    path = tmp_path / "d.yaml"
    path.write_text(
        yaml.safe_dump({"extends": str(DESIGNS / f"{SX}.yaml"), "backend": {"speed": "400G", "switch": "SN4600"}})
    )
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    (p,) = [p for p in exc.value.problems if p.field == "backend.speed"]
    assert "SN4600" in p.message and "400G" in p.message
    assert p.where == f"{path}:{_line_of(path, 'speed')}"


@pytest.mark.parametrize("n", [3, 5])
def test_leaves_per_rail_that_do_not_split_the_unit_are_refused(tmp_path: Path, n: int) -> None:
    path = _design(tmp_path, leaves_per_rail=n)
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    (p,) = exc.value.problems
    assert p.field == "backend.leaves_per_rail" and "64-server" in p.message and "divisor" in p.message
    assert p.where is not None and p.where.startswith(str(path))


def test_leaves_per_rail_needs_rail_optimized(tmp_path: Path) -> None:
    path = _design(
        tmp_path,
        leaves_per_rail=2,
        topology="top_of_rack",
        placement="top_of_rack",
        spine_grouping="shared",
        planes=None,
    )
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    assert any(p.field == "backend.leaves_per_rail" and "rail_optimized" in p.message for p in exc.value.problems)


def test_one_leaf_per_rail_keeps_the_historical_leaf_names(compiled: Compiled) -> None:
    plan = compiled(SX)
    leaves = sorted(d.name for d in plan.devices if d.network == "backend" and d.role == "leaf")
    assert leaves[0] == "su1-rail0-leaf" and all(n.endswith("-leaf") for n in leaves)
    assert plan.networks.backend.leaves_per_rail is None
    assert "leaves_per_rail" not in plan.networks.backend.to_dict()


# ------------------------------------------------------------------------------------------ breakout


def test_sn5600_800g_at_400g_splits_each_osfp_into_two_sonic_ports(compiled: Compiled) -> None:
    plan = compiled(SX, "backend.switch=SN5600-800G")
    cat = plan.catalog
    whole = cat.switches["SN5600-800G"]
    key = plan.networks.backend.switch_model
    split = cat.switches[key]
    assert key == "SN5600-800G@2x400G"
    assert split.ports == 2 * whole.ports and split.sku == whole.sku and split.price == whole.price
    # SONiC names a port by its first lane: 8-lane 800G ports are Ethernet0, Ethernet8, ...; split in
    # two, each 4-lane half is named by its own first lane
    assert whole.port_names()[:2] == ["Ethernet0", "Ethernet8"]
    table = port_table(split)
    assert [(p.name, p.cage, p.sub) for p in table[:4]] == [
        ("Ethernet0", 1, 1),
        ("Ethernet4", 1, 2),
        ("Ethernet8", 2, 1),
        ("Ethernet12", 2, 2),
    ]
    assert all(d.model == key for d in plan.devices if d.network == "backend" and d.kind == "switch")
    # one leaf per rail now takes the whole 64-server unit: 64 x 400G down, 64 up
    be = plan.networks.backend
    assert (be.downlinks_per_leaf, be.uplinks_per_leaf) == (plan.design.backend.su_size,) * 2
    assert {lk.speed_gbps for lk in plan.links if lk.network == "backend"} == {400}


def test_cumulus_names_a_split_port_after_its_800g_port(compiled: Compiled) -> None:
    """The shipped design runs the chassis with Cumulus Linux: the 800G ports are swp1..swp64 and a
    split one is swpNs0 and swpNs1 (Cumulus numbers the halves from 0), both in cage N."""
    plan = compiled(SX)
    cat = plan.catalog
    key = plan.networks.backend.switch_model
    assert key == "SN5600-800G-CL@2x400G" and cat.switches[key].os == "cumulus"
    whole = cat.switches["SN5600-800G-CL"]
    assert whole.port_names() == [f"swp{n}" for n in range(1, 65)]
    table = port_table(cat.switches[key])
    assert [(p.name, p.cage, p.sub) for p in table[:4]] == [
        ("swp1s0", 1, 1),
        ("swp1s1", 1, 2),
        ("swp2s0", 2, 1),
        ("swp2s1", 2, 2),
    ]
    used = {
        p
        for lk in plan.links
        if lk.network == "backend"
        for d, p in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
        if plan.device(d).kind == "switch"
    }
    assert used and all(p.startswith("swp") and "s" in p[3:] for p in used)


def test_a_split_cage_takes_one_twin_transceiver(compiled: Compiled) -> None:
    plan = compiled(SX)
    cat = plan.catalog
    assert plan.cables is not None
    split = cat.switches[plan.networks.backend.switch_model]
    cage = {p.name: p.cage for p in port_table(split)}
    idx = plan.index()
    used: set[tuple[str, int]] = set()
    for lk in plan.links:
        if lk.network != "backend":
            continue
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            if idx[dev].kind == "switch":
                used.add((dev, cage[port]))
    switch_side = [
        x
        for c in plan.cables
        if c.network == "backend"
        for dev, x in (
            (plan.links[c.links[0]].a_device, c.a_transceiver),
            (plan.links[c.links[0]].b_device, c.b_transceiver),
        )
        if x and idx[dev].kind == "switch"
    ]
    assert switch_side and all(cat.transceivers[x].ports == 2 for x in switch_side)
    # counted per cage: every used cage of the split switches holds one twin-port optic, not one per port
    assert plan.cabling is not None
    # (the servers' flat-top twins sit in riding-heat-sink cages; the switches' are finned)
    twin_total = sum(
        n
        for p, n in plan.cabling.transceiver_parts.items()
        if cat.transceivers[p].ports == 2 and "osfp-rhs" not in cat.transceivers[p].fits
    )
    assert twin_total == len(used)
    # the fabric fills its split switches (1:1, 64 down + 64 up), so both ports of every cage carry a
    # link and there are half as many optics as switch ports
    ports = sum(
        idx[dev].kind == "switch" for lk in plan.links if lk.network == "backend" for dev in (lk.a_device, lk.b_device)
    )
    assert ports == 2 * twin_total


@pytest.mark.parametrize(("split_key", "whole_key"), [("SN5600-800G", "SN5600"), ("SN5600-800G-CL", "SN5600-CL")])
def test_the_breakout_entry_wires_like_the_400g_catalog_entry(
    compiled: Compiled, split_key: str, whole_key: str
) -> None:
    """SN5600 (128 x 400G in 64 twin cages) and SN5600-800G split 2 x 400G are one chassis run one way:
    the same ports, links and optics, only the model key differs (with SONiC and with Cumulus names)."""
    split = compiled(SX, f"backend.switch={split_key}")
    old = compiled(SX, f"backend.switch={whole_key}")

    def wiring(plan: Plan) -> list[tuple[str, str, str, str, int]]:
        return [
            (lk.a_device, lk.a_port, lk.b_device, lk.b_port, lk.speed_gbps)
            for lk in plan.links
            if lk.network == "backend"
        ]

    assert wiring(split) == wiring(old)
    assert split.cabling is not None and old.cabling is not None
    assert split.cabling.transceiver_parts == old.cabling.transceiver_parts


def test_a_bad_breakout_in_a_catalog_overlay_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(DESIGNS / f"{SX}.yaml"),
                "catalog": {
                    "switches": {
                        "SN5600-800G": {
                            "port_groups": [
                                {
                                    "count": 64,
                                    "speed_gbps": 800,
                                    "breakout": {400: 3},
                                    "connector": "osfp",
                                    "lanes": 8,
                                    "name": "Ethernet{lane}",
                                }
                            ]
                        }
                    }
                },
            }
        )
    )
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    (p,) = exc.value.problems
    assert p.field.startswith("catalog.switches.SN5600-800G.port_groups")
    assert "breakout.400" in p.message and "divide the lanes" in p.message
    assert p.where is not None and p.where.startswith(str(path))


def test_a_breakout_without_lanes_is_refused_with_its_line(tmp_path: Path) -> None:
    # lanes became optional for the lane-rate media rules; a split still needs them to share
    path = tmp_path / "d.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(DESIGNS / f"{SX}.yaml"),
                "catalog": {
                    "switches": {
                        "SN5600-800G": {
                            "port_groups": [
                                {
                                    "count": 64,
                                    "speed_gbps": 800,
                                    "breakout": {400: 2},
                                    "connector": "osfp",
                                    "name": "Ethernet{lane}",
                                }
                            ]
                        }
                    }
                },
            }
        )
    )
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    (p,) = exc.value.problems
    assert p.field == "catalog.switches.SN5600-800G.port_groups.0.breakout"
    assert p.message.startswith("needs lanes")
    assert p.where is not None and p.where.startswith(str(path))


def test_the_design_validates_against_the_committed_schema() -> None:
    # what an editor checks the file against (designs/design.schema.json, as `railyard schema` writes it)
    schema = json.loads((DESIGNS / "design.schema.json").read_text())
    data, _ = parse_yaml_text((DESIGNS / f"{SX}.yaml").read_text(), f"{SX}.yaml")
    assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(data)] == []
    assert data["compute"]["server"] == "hgx-b300-2x400gbe"


def test_ufm_hosts_take_the_reserved_slot_on_the_second_leaf_of_its_rail(compiled: Compiled) -> None:
    """NVIDIA's 127-node SuperPOD with 2 leaves per rail: the 128th slot is the last of the second
    half of unit 4, so the UFM hosts take that slot's ports on the rails' second leaves."""
    plan = compiled("h100-1016-superpod", "backend.leaves_per_rail=2")
    full = compiled(REF, "backend.leaves_per_rail=2")
    last = [d.name for d in full.devices if d.kind == "server"][-1]
    slot = {lk.a_port: (lk.b_device, lk.b_port) for lk in full.links if lk.network == "backend" and lk.a_device == last}
    sm = plan.networks.backend.subnet_manager_ports
    assert [(p.leaf, p.leaf_port) for p in sm] == [slot["mlx5_0"], slot["mlx5_1"]]
    assert all(p.leaf.endswith("-leaf02") for p in sm)
    # the invariants accept the partial leaves: only the ones holding the slot run below the ratio
    assert plan.networks.backend.leaves == full.networks.backend.leaves


def test_three_tier_pods_hold_whole_units_of_split_rails(compiled: Compiled) -> None:
    plan = compiled(SX, *SPLIT, "backend.tiers=3", "backend.spine_grouping=shared", "backend.planes=null")
    leaves = [d for d in plan.devices if d.network == "backend" and d.role == "leaf"]
    pods_of_su: dict[int, set[int]] = {}
    for lf in leaves:
        pods_of_su.setdefault(lf.attrs["su"], set()).add(lf.attrs["pod"])
    # a pod never cuts a unit: all 32 leaves of a unit (16 rails x 2) are in one pod
    assert all(len(p) == 1 for p in pods_of_su.values())
    assert plan.networks.backend.leaves_per_pod % (_rules(plan)["rails"] * 2) == 0


def test_per_rail_planes_take_both_leaves_of_a_rail(compiled: Compiled) -> None:
    plan = compiled(SX, *SPLIT, "backend.spine_grouping=per_rail", "backend.planes=null")
    r = _rules(plan)
    idx = plan.index()
    for lk in _backend(plan, "leaf-spine"):
        leaf, spine = idx[lk.a_device], idx[lk.b_device]
        assert spine.attrs["plane"] == f"rail{leaf.attrs['rail']}"
    planes = {d.attrs["plane"] for d in plan.devices if d.network == "backend" and d.role == "spine"}
    assert len(planes) == r["rails"]
