"""InfiniBand renderers and tenant isolation (no daemons; tests/test_slurm_ib_daemons.py runs OpenSM on them)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from generators.asbuilt.ibnetdiscover import links_of, parse_net
from generators.model.catalog import Catalog
from generators.model.design import Tenant
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.sections import SubnetManager
from generators.stages import infiniband
from generators.stages.infiniband import (
    Member,
    Partition,
    isolation_problems,
    name_guids,
    subnet,
    switch_port_numbers,
    tenant_pkeys,
)
from generators.vendors.infiniband import render_infiniband
from tests.conftest import DESIGNS

Compiled = Callable[..., Plan]
REF = DESIGNS / "h100-1024-reference.yaml"


def parse_partitions(text: str) -> dict[str, tuple[int, str, list[str]]]:
    """partitions.conf -> {name: (pkey, flags, members)}: enough of OpenSM's grammar for these files."""
    body = " ".join(line.split("#", 1)[0] for line in text.splitlines())
    out = {}
    for stmt in (s.strip() for s in body.split(";")):
        if not stmt:
            continue
        head, members = stmt.split(":", 1)
        name, rest = head.split("=", 1)
        pkey, _, flags = rest.partition(",")
        out[name.strip()] = (int(pkey, 16), flags.strip(), [m.strip() for m in members.split(",") if m.strip()])
    return out


_RENDERED: dict[int, tuple[Plan, dict[str, str]]] = {}


def files(plan: Plan) -> dict[str, str]:
    """render_infiniband, once per plan object (the 16k fabric takes a second)."""
    hit = _RENDERED.get(id(plan))
    if hit is None or hit[0] is not plan:
        hit = _RENDERED[id(plan)] = (plan, render_infiniband(plan))
    return hit[1]


# --- GUIDs ----------------------------------------------------------------------------------------------


def test_guids_are_deterministic_unique_and_local() -> None:
    names = [f"gpu{i:04d} mlx5_{r}" for i in range(1, 513) for r in range(8)]
    a = name_guids(names)
    assert a == name_guids(reversed(names))
    assert len(set(a.values())) == len(names)
    assert all(g >> 56 == 0x02 and g & 0xF == 0 for g in a.values())  # locally administered, port nibble free


def test_guid_collisions_are_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(infiniband, "GUID_HASH_MASK", 0xF0)  # 16 possible values: collisions certain
    names = [f"n{i}" for i in range(12)]
    g = name_guids(names)
    assert len(set(g.values())) == 12
    assert g == name_guids(sorted(names, reverse=True))


# --- the expected fabric --------------------------------------------------------------------------------


def test_quantum2_port_numbers(compiled: Compiled) -> None:
    nums = switch_port_numbers(Catalog.model_validate(compiled("h100-256").catalog), "QM9700")
    assert (nums["1/1/1"], nums["1/1/2"], nums["1/2/1"], nums["1/32/2"]) == (1, 2, 3, 64)


@pytest.mark.parametrize("name", ["h100-1024-reference", "h100-1024-optimized", "h100-256"])
def test_topology_net_has_every_link_at_both_ends(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    nodes = parse_net(files(plan)["infiniband/topology.net"])
    backend = [lk for lk in plan.links if lk.network == "backend"]
    by_desc = {n.desc: n for n in nodes.values()}
    for n in nodes.values():  # both ends agree
        for p, lk in n.links.items():
            assert nodes[lk.peer].links[lk.peer_port].peer == n.ident
            assert nodes[lk.peer].links[lk.peer_port].peer_port == p
    assert len(links_of(nodes)) == len(backend)
    nums = switch_port_numbers(plan.catalog, "QM9700")
    for lk in backend:  # every planned link is there, port for port, at 400G = 4xNDR
        a = by_desc[f"{lk.a_device} {lk.a_port}"] if lk.a_port.startswith("mlx5_") else by_desc[lk.a_device]
        ap = 1 if a.kind == "Ca" else nums[lk.a_port]
        b = by_desc[lk.b_device]
        assert a.links[ap].peer == b.ident and a.links[ap].peer_port == nums[lk.b_port]
        assert a.links[ap].speed == "4xNDR"
    servers = [d for d in plan.devices if d.kind == "server"]
    assert sum(n.kind == "Ca" for n in nodes.values()) == 8 * len(servers) + plan.design.management.backend_attached


def test_sm_host_is_the_first_node(compiled: Compiled) -> None:
    ref = parse_net(files(compiled("h100-1024-reference"))["infiniband/topology.net"])
    assert next(iter(ref.values())).desc == "spine01"  # switch-embedded SM (backend_attached: 0)
    opt = parse_net(files(compiled("h100-1024-optimized"))["infiniband/topology.net"])
    assert next(iter(opt.values())).desc == "mgmt01 mlx5_0"


@pytest.mark.large
def test_root_guids_are_the_top_tier(compiled: Compiled) -> None:
    for name, roots in (
        ("h100-1024-reference", [f"spine{i:02d}" for i in range(1, 17)]),
        ("h100-256", ["spine01", "spine02"]),
        ("h100-16k", [f"core{i:03d}" for i in range(1, 257)]),
    ):
        f = files(compiled(name))
        nodes = {n.desc: n for n in parse_net(f["infiniband/topology.net"]).values()}
        lines = [ln for ln in f["infiniband/root_guids"].splitlines() if not ln.startswith("#")]
        assert [ln.split("#")[1].strip() for ln in lines] == roots
        assert [int(ln.split()[0], 16) for ln in lines] == [nodes[r].guid for r in roots]


def test_node_name_map_names_every_node(compiled: Compiled) -> None:
    f = files(compiled("h100-256"))
    nodes = parse_net(f["infiniband/topology.net"])
    entries = re.findall(r'^0x([0-9a-f]{16}) "([^"]+)"$', f["infiniband/node-name-map"], re.M)
    assert {int(g, 16): d for g, d in entries} == {n.guid: n.desc for n in nodes.values()}


# --- partitions -----------------------------------------------------------------------------------------


def _port_guids(plan: Plan) -> dict[str, list[str]]:
    """host -> its backend port GUIDs as written in partitions.conf (node GUID + 1)."""
    nodes = parse_net(files(plan)["infiniband/topology.net"])
    out: dict[str, list[str]] = {}
    for n in nodes.values():
        if n.kind == "Ca":
            out.setdefault(n.desc.split()[0], []).append(f"0x{n.guid + 1:016x}")
    return out


def test_reference_partitions(compiled: Compiled) -> None:
    plan = compiled("h100-1024-reference")
    parts = parse_partitions(files(plan)["infiniband/partitions.conf"])
    guids = _port_guids(plan)
    assert list(parts) == ["Default", "acme", "globex", "initech"]
    sn = subnet(plan)
    assert parts["Default"] == (
        0x7FFF,
        "ipoib, defmember=limited",
        ["ALL", "SELF=full", f"0x{sn.guid['spine01']:016x}=full", f"0x{sn.guid['spine02']:016x}=full"],
    )
    for name, pkey, hosts in (
        ("acme", 0x1001, range(1, 65)),
        ("globex", 0x1002, range(65, 97)),
        ("initech", 0x1003, range(97, 113)),
    ):
        key, flags, members = parts[name]
        assert key == pkey and "defmember=full" in flags
        # every rail of every rented server, nothing else
        assert sorted(members) == sorted(g for h in hosts for g in guids[f"gpu{h:03d}"])
    rented = {m for p in ("acme", "globex", "initech") for m in parts[p][2]}
    assert not rented & {g for h in range(113, 129) for g in guids[f"gpu{h:03d}"]}


def test_backend_attached_sm_nodes_are_full_default_members(compiled: Compiled) -> None:
    plan = compiled("h100-1024-optimized")
    text = files(plan)["infiniband/partitions.conf"]
    default = parse_partitions(text)["Default"][2]
    guids = _port_guids(plan)
    assert default == ["ALL", "SELF=full", f"{guids['mgmt01'][0]}=full", f"{guids['mgmt02'][0]}=full"]
    assert "managed switches" not in text


@pytest.mark.large
def test_switch_embedded_sm_is_documented(compiled: Compiled) -> None:
    f = files(compiled("h100-1024-reference"))
    assert (
        "embedded in the managed switches spine01, spine02 (management.backend_attached: 0)"
        in f["infiniband/opensm.conf"]
    )
    assert "its port is the\n# switch management port 0" in f["infiniband/partitions.conf"]
    big = files(compiled("h100-16k"))["infiniband/opensm.conf"]
    assert "WARNING: 17664 nodes exceed the ~2,000 NVIDIA states for a switch-embedded SM" in big


def test_connect_roots_only_when_the_sm_sits_on_a_root(compiled: Compiled) -> None:
    assert "\nconnect_roots TRUE\n" in files(compiled("h100-1024-reference"))["infiniband/opensm.conf"]
    assert "connect_roots" not in files(compiled("h100-1024-optimized"))["infiniband/opensm.conf"]


def test_opensm_conf_options(compiled: Compiled) -> None:
    text = files(compiled("h100-256"))["infiniband/opensm.conf"]
    opts = dict(ln.split(None, 1) for ln in text.splitlines() if ln and not ln.startswith("#"))
    assert opts["routing_engine"] == "ftree"
    assert opts["root_guid_file"] == "/etc/opensm/root_guids"
    assert opts["partition_config_file"] == "/etc/opensm/partitions.conf"
    assert opts["part_enforce"] == "both" and opts["no_partition_enforcement"] == "FALSE"


def test_ufm_bodies_match_partitions(compiled: Compiled) -> None:
    f = files(compiled("h100-1024-reference"))
    parts = parse_partitions(f["infiniband/partitions.conf"])
    requests = json.loads(f["infiniband/ufm/requests.json"])
    assert [(r["path"], r["body"]) for r in requests[:2]] == [
        ("/ufmRest/resources/pkeys/add", "acme-create.json"),
        ("/ufmRest/resources/pkeys", "acme-members.json"),
    ]
    for name in ("acme", "globex", "initech"):
        create = json.loads(f[f"infiniband/ufm/{name}-create.json"])
        members = json.loads(f[f"infiniband/ufm/{name}-members.json"])
        assert create == {
            "pkey": f"0x{parts[name][0]:04x}",
            "partition_name": name,
            "index0": False,
            "ip_over_ib": True,
        }
        assert members["membership"] == "full" and members["pkey"] == create["pkey"]
        assert ["0x" + g for g in members["guids"]] == parts[name][2]
        assert all(len(g) == 16 for g in members["guids"])  # UFM wants 16-20 hex digits


def test_roce_backend_has_no_infiniband_files(compiled: Compiled) -> None:
    plan = compiled("h100-256", "backend.technology=roce", "backend.switch=SN5600")
    assert files(plan) == {}
    assert plan.infiniband is None


def test_plan_records_keys_and_subnet_managers(compiled: Compiled) -> None:
    ib = compiled("h100-1024-optimized").infiniband
    assert ib.subnet_managers == [
        SubnetManager(device="mgmt01", node="mgmt01 mlx5_0", on_switch=False),
        SubnetManager(device="mgmt02", node="mgmt02 mlx5_0", on_switch=False),
    ]
    assert [(p.name, p.pkey, p.servers) for p in ib.partitions] == [
        ("Default", "0x7fff", ""),
        ("acme", "0x1001", "gpu[001-064]"),
        ("globex", "0x1002", "gpu[065-096]"),
        ("initech", "0x1003", "gpu[097-112]"),
    ]


# --- tenant isolation, broken on purpose ----------------------------------------------------------------


def test_pinned_keys_are_kept_and_skipped(compiled: Compiled) -> None:
    tenants = [Tenant(name="a", pkey=0x1002), Tenant(name="b"), Tenant(name="c")]
    design = compiled("h100-256").design.model_copy(update={"tenants": tenants})
    assert tenant_pkeys(design) == [(0, "a", 0x1002), (1, "b", 0x1001), (2, "c", 0x1003)]


def test_pkey_accepts_hex_strings(compiled: Compiled) -> None:
    plan = compiled("h100-256", 'tenants.1.pkey="0x2a0b"')
    assert parse_partitions(files(plan)["infiniband/partitions.conf"])["globex"][0] == 0x2A0B


def test_two_tenants_sharing_a_key_is_refused(cli: Callable[..., object], tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("compile", REF, "-o", out, "--set", "tenants.0.pkey=0x1005", "--set", "tenants.2.pkey=0x1005")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert (
        "tenants.2.pkey: tenants 'acme' and 'initech' share partition key 0x1005: their servers would reach each other"
    ) in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_two_tenants_sharing_a_server_is_refused(cli: Callable[..., object], tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("compile", REF, "-o", out, "--set", 'tenants.2.servers=["gpu[060-070]"]')
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "server gpu060 is rented by both 'acme' and 'initech'" in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_default_key_cannot_be_a_tenant_key(cli: Callable[..., object], tmp_path: Path) -> None:
    r = cli("validate", REF, "--set", "tenants.0.pkey=0x7fff")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "tenants.0.pkey" in r.output  # type: ignore[attr-defined]


def test_renderer_refuses_tenants_that_overlap_behind_validation(compiled: Compiled) -> None:
    """Defense in depth: a plan whose design no longer matches the partitions the stage chose (here two
    tenants edited to overlap after compiling) is refused by the renderer itself, naming the port."""
    plan = compiled("h100-1024-reference")
    tenants = list(plan.design.tenants)
    tenants[2] = tenants[2].model_copy(update={"servers": ["gpu[064-070]"]})  # gpu064 also belongs to acme (SU 2)
    bad = replace(plan, design=plan.design.model_copy(update={"tenants": tenants}))
    with pytest.raises(DesignError) as exc:
        render_infiniband(bad)
    text = str(exc.value)
    assert "holds gpu064 mlx5_0, a port of gpu064, which 'acme' does not rent (owner: initech)" in text


def _parts() -> tuple[list[Partition], dict[str, str]]:
    m = [Member(f"h{i} mlx5_0", f"h{i}", 0x10 * i + 1, True) for i in range(1, 5)]
    parts = [
        Partition("Default", 0x7FFF, [Member("sm mlx5_0", "sm", 0x1001, True)]),
        Partition("a", 0x1001, m[:2], 0, ["h1", "h2"]),
        Partition("b", 0x1002, m[2:], 1, ["h3", "h4"]),
    ]
    return parts, {"h1": "a", "h2": "a", "h3": "b", "h4": "b"}


def test_isolation_problems_on_good_partitions() -> None:
    parts, owner = _parts()
    assert isolation_problems(parts, owner) == []


def test_isolation_problems_shared_key() -> None:
    parts, owner = _parts()
    parts[2].pkey = 0x1001
    assert [(p.field, p.message) for p in isolation_problems(parts, owner)] == [
        ("tenants.1.pkey", "tenants 'a' and 'b' share partition key 0x1001: their servers would reach each other")
    ]


def test_isolation_problems_foreign_port_and_full_default() -> None:
    parts, owner = _parts()
    parts[1].members.append(parts[2].members[0])  # b's server port also in a's partition
    parts[0].members.append(Member("h4 mlx5_0", "h4", parts[2].members[1].port_guid, True))
    messages = [p.message for p in isolation_problems(parts, owner)]
    assert "partition 'a' (0x1001) holds h3 mlx5_0, a port of h3, which 'a' does not rent (owner: b)" in messages
    assert "port h3 mlx5_0 (0x0000000000000031) is a member of both 'a' and 'b': the two tenants share it" in messages
    assert (
        "h4 mlx5_0 is a full member of the default partition: as a full member it could reach every tenant" in messages
    )
