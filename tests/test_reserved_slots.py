"""compute.reserved_slots: NVIDIA's 127-node 4-SU SuperPOD, whose last unit's 32nd node slot carries the
UFM / subnet-manager hosts' backend ports, and partial last scalable units in general."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import hostlist
import pytest

from generators.model.plan import Plan
from tests.conftest import DESIGNS, rendered_files

Compiled = Callable[..., Plan]
REF = "h100-1024-reference"
SUPERPOD = "h100-1016-superpod"  # REF with count 127, reserved_slots 1, backend_attached 2


def _backend_ports(plan: Plan, device: str) -> dict[str, tuple[str, str]]:
    """device's backend links: its port -> (leaf, leaf port)."""
    return {
        lk.a_port: (lk.b_device, lk.b_port) for lk in plan.links if lk.network == "backend" and lk.a_device == device
    }


def test_the_last_unit_has_one_server_fewer(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    servers = [d for d in plan.devices if d.kind == "server"]
    assert len(servers) == 127
    per_su = [sum(d.attrs["su"] == u for d in servers) for u in (1, 2, 3, 4)]
    assert per_su == [32, 32, 32, 31]
    # the rails stay whole: every unit has its 8 rail leaves with the full design's uplinks
    full = compiled(REF)
    assert plan.networks.backend.leaves == full.networks.backend.leaves
    assert plan.networks.backend.spines == full.networks.backend.spines


def test_ufm_hosts_take_the_removed_servers_leaf_ports(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    full = compiled(REF)
    last = [d.name for d in full.devices if d.kind == "server"][-1]
    slot = _backend_ports(full, last)  # what the 128th server used, port by port
    taken = [leaf_port for node in ("mgmt01", "mgmt02") for leaf_port in _backend_ports(plan, node).values()]
    assert len(taken) == 2
    assert set(taken) <= set(slot.values())
    # one port per rail, rails in order: mgmt01 on the rail-0 leaf, mgmt02 on the rail-1 leaf
    assert [leaf for leaf, _ in taken] == [slot["mlx5_0"][0], slot["mlx5_1"][0]]
    # and nobody else uses any of the removed server's ports
    others = {
        (lk.b_device, lk.b_port)
        for lk in plan.links
        if lk.network == "backend" and lk.a_device not in ("mgmt01", "mgmt02")
    }
    assert not others & set(slot.values())
    assert [sm.to_dict() for sm in plan.networks.backend.subnet_manager_ports] == [
        {"node": n, "port": "mlx5_0", "leaf": lf, "leaf_port": p}
        for n, (lf, p) in zip(("mgmt01", "mgmt02"), taken, strict=True)
    ]


def test_cable_sheet_lists_the_ufm_links_at_the_slots_leaf_ports(compiled: Compiled) -> None:
    files = rendered_files(compiled, SUPERPOD)
    rows = list(csv.DictReader(io.StringIO(files["cabling/cables.csv"])))
    plan = compiled(SUPERPOD)
    sm_ports = plan.networks.backend.subnet_manager_ports
    want = {(sm.node, sm.port, sm.leaf, sm.leaf_port) for sm in sm_ports}
    got = {
        (r["a_device"], r["a_port"], r["b_device"], r["b_port"])
        for r in rows
        if r["a_device"].startswith("mgmt") and r["network"] == "backend"
    }
    assert got == want


def test_slurm_sees_127_nodes_and_no_ufm_host(compiled: Compiled) -> None:
    files = rendered_files(compiled, SUPERPOD)
    for name in ("slurm/topology.conf", "slurm/topology-block.conf"):
        nodes = [
            h
            for line in files[name].splitlines()
            if not line.startswith("#") and "Nodes=" in line
            for h in hostlist.expand_hostlist(line.split("Nodes=")[1].split()[0])
        ]
        assert len(nodes) == len(set(nodes)) == 127, name
        assert not any(h.startswith("mgmt") for h in nodes)
    block = files["slurm/topology-block.conf"]
    assert "BlockName=su4 Nodes=gpu[097-127]" in block
    # slurmctld takes the first BlockSizes value as the base block and refuses a block below it
    assert "BlockSizes=31,62,124" in block


def test_subnet_managers_are_the_ufm_hosts(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    assert plan.infiniband is not None
    assert [(s.device, s.on_switch) for s in plan.infiniband.subnet_managers] == [("mgmt01", False), ("mgmt02", False)]
    files = rendered_files(compiled, SUPERPOD)
    assert "mgmt01 mlx5_0" in files["infiniband/node-name-map"]
    assert "mgmt01 mlx5_0 (subnet manager)" in files["infiniband/partitions.conf"]
    assert "gpu128" not in files["infiniband/topology.net"]


def test_bom_and_netbox_have_one_server_fewer(compiled: Compiled) -> None:
    full, part = rendered_files(compiled, REF), rendered_files(compiled, SUPERPOD)

    def servers(files: dict[str, str]) -> int:
        rows = csv.DictReader(io.StringIO(files["bom.csv"]))
        return next(int(r["quantity"]) for r in rows if r["kind"] == "server" and r["category"] == "compute")

    assert servers(full) - servers(part) == 1
    devices = list(csv.DictReader(io.StringIO(part["netbox/08-devices.csv"])))
    names = {r["name"] for r in devices}
    assert "gpu127" in names and "gpu128" not in names
    cables = part["netbox/10-cables.csv"]
    assert "gpu128" not in cables and "mgmt01" in cables


def test_a_partial_unit_without_ufm_hosts_warns_of_the_free_ports(compiled: Compiled) -> None:
    plan = compiled(REF, "compute.count=126", "compute.reserved_slots=2", "management.backend_attached=0")
    assert sum(d.kind == "server" and d.attrs["su"] == 4 for d in plan.devices) == 30
    warned = [w for w in plan.warnings if w.field == "compute.reserved_slots"]
    assert len(warned) == 1 and "16 leaf ports" in warned[0].message
    assert plan.networks.backend.oversubscription.measured == "1:1"


def test_full_designs_do_not_warn(compiled: Compiled) -> None:
    assert not [w for w in compiled(REF).warnings if w.field == "compute.reserved_slots"]


def test_tenant_of_the_partial_unit_rents_its_servers(compiled: Compiled) -> None:
    tenants = ("tenants.0.scalable_units=[1]", 'tenants.2.servers=["gpu[033-048]"]', "tenants.1.scalable_units=[3, 4]")
    plan = compiled(SUPERPOD, *tenants)
    nodes = rendered_files(compiled, SUPERPOD, *tenants)["slurm/nodes.conf"]
    line = next(ln for ln in nodes.splitlines() if ln.startswith("PartitionName=globex"))
    assert "Nodes=gpu[065-127] " in line
    assert plan.infiniband is not None
    globex = next(p for p in plan.infiniband.partitions if p.name == "globex")
    assert globex.servers == "gpu[065-127]" and globex.ports == 63 * 8


def _design(tmp_path: Path, compute: str) -> Path:
    p = tmp_path / "d.yaml"
    p.write_text(f"extends: {DESIGNS / (REF + '.yaml')}\nname: d\ncompute:\n  server: hgx-h100\n{compute}")
    return p


@pytest.mark.parametrize(
    ("compute", "line", "field", "text"),
    [
        ("  count: 127\n", 5, "compute.count", "compute.reserved_slots: 1"),
        ("  count: 96\n  reserved_slots: 32\n", 6, "compute.reserved_slots", "reserve fewer than backend.su_size"),
        ("  count: 126\n  reserved_slots: 1\n", 5, "compute.count", "set compute.count to 127"),
    ],
)
def test_bad_slots_name_field_and_line(
    cli: Callable[..., object], tmp_path: Path, compute: str, line: int, field: str, text: str
) -> None:
    r = cli("validate", _design(tmp_path, compute))
    assert r.exit_code == 2  # type: ignore[attr-defined]
    err = r.stderr  # type: ignore[attr-defined]
    assert f"d.yaml:{line}: {field}: " in err and text in err
    assert "Traceback" not in err


def test_more_ufm_ports_than_the_slots_have_is_refused(cli: Callable[..., object], tmp_path: Path) -> None:
    p = _design(tmp_path, "  count: 127\n  reserved_slots: 1\nmanagement:\n  count: 9\n  backend_attached: 9\n")
    r = cli("validate", p)
    assert r.exit_code == 2  # type: ignore[attr-defined]
    err = r.stderr  # type: ignore[attr-defined]
    assert "d.yaml:9: management.backend_attached: " in err and "reserve 2 slots" in err


def test_top_of_rack_refuses_reserved_slots(cli: Callable[..., object]) -> None:
    r = cli("validate", DESIGNS / "h100-1024-tor.yaml", "--set", "compute.reserved_slots=1")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "compute.reserved_slots: " in r.stderr and "rail_optimized" in r.stderr  # type: ignore[attr-defined]
