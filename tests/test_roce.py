"""RoCE backends: the backend network plan (plan.backend_net), the SONiC backend configs and the hosts'
netplan and NCCL files, on compiled shipped designs. Expectations come from the plan's links, cables
and the design's tenants, not from a compiled output."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from ipaddress import IPv4Interface, ip_network
from pathlib import Path

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.design import tenant_members
from generators.model.errors import DesignError
from generators.model.plan import Plan, required
from generators.stages import backend_net
from tests.conftest import DESIGNS, rendered_files
from tests.realtools import frr_check, netplan_check

Compiled = Callable[..., Plan]
# (design, overrides): the shipped RoCE designs rent whole units; h100-256 as RoCE rents servers, so its
# leaves carry two tenants' ports and the infra VRF's
MIXED = ("h100-256", "backend.technology=roce", "backend.switch=SN5600")
ROCE = [("h100-512-roce",), ("b300-spectrumx",), MIXED]


@pytest.mark.parametrize("design", ROCE)
def test_every_backend_switch_has_an_rfc7938_asn(compiled: Compiled, design: tuple[str, ...]) -> None:
    plan = compiled(*design)
    bn = required(plan.backend_net, "backend_net")
    switches = [d for d in plan.devices if d.kind == "switch" and d.network == "backend"]
    assert [s.name for s in bn.switches] == [d.name for d in switches]
    by_role: dict[str, list[int]] = defaultdict(list)
    for s in bn.switches:
        by_role[s.role].append(s.asn)
    assert len(set(by_role["leaf"])) == len(by_role["leaf"]), "each leaf has its own ASN"
    net = plan.design.backend.network
    assert sorted(by_role["leaf"]) == [net.leaf_asn_base + n for n in range(1, len(by_role["leaf"]) + 1)]
    devs = plan.index()
    group_asn: dict[tuple[object, object], set[int]] = defaultdict(set)
    for s in bn.switches:
        if s.role == "spine":
            group_asn[(devs[s.name].attrs.get("plane"), devs[s.name].attrs.get("pod"))].add(s.asn)
    assert all(len(a) == 1 for a in group_asn.values()), "the spines of a group share one ASN"
    assert not set(by_role["leaf"]) & (set(by_role["spine"]) | set(by_role["core"]))
    loopbacks = [s.loopback for s in bn.switches]
    assert len(set(loopbacks)) == len(loopbacks)
    assert all(
        IPv4Interface(lo) in plan.design.addressing.backend or IPv4Interface(lo).ip in plan.design.addressing.backend
        for lo in loopbacks
    )


@pytest.mark.parametrize("design", ROCE)
def test_every_server_port_has_a_31_in_its_rails_block(compiled: Compiled, design: tuple[str, ...]) -> None:
    plan = compiled(*design)
    bn = required(plan.backend_net, "backend_net")
    devs = plan.index()
    server_links = [lk for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"]
    hosts = [p for p in bn.ports if not p.fabric]
    assert len(hosts) == len(server_links)
    assert {(p.switch, p.port) for p in hosts} == {(lk.b_device, lk.b_port) for lk in server_links}
    blocks = {r.rail: ip_network(r.block) for r in bn.rails}
    seen: set[str] = set()
    for p in hosts:
        assert p.address is not None and p.peer_address is not None and p.rail is not None
        sw, nic = IPv4Interface(p.address), IPv4Interface(p.peer_address)
        assert sw.network.prefixlen == 31 and sw.network == nic.network
        assert int(sw.ip) % 2 == 0 and int(nic.ip) == int(sw.ip) + 1, "switch side even, NIC side odd"
        assert sw.network.subnet_of(blocks[p.rail])  # type: ignore[arg-type]
        if "rail" in devs[p.switch].attrs:
            assert p.rail == devs[p.switch].attrs["rail"], "a leaf's ports are on its own rail's block"
        seen.add(str(sw.network))
    assert len(seen) == len(hosts), "no /31 is used twice"
    rails = list(blocks.values())
    assert not any(a.overlaps(b) for i, a in enumerate(rails) for b in rails[i + 1 :])


@pytest.mark.parametrize("design", ROCE)
def test_tenants_cannot_reach_each_other_on_the_backend(compiled: Compiled, design: tuple[str, ...]) -> None:
    plan = compiled(*design)
    bn = required(plan.backend_net, "backend_net")
    members = tenant_members(plan.design)
    vrf_of_tenant = {v.tenant: v.name for v in bn.vrfs}
    assert len({v.l3vni for v in bn.vrfs}) == len(bn.vrfs), "no L3VNI shared between VRFs"
    assert len({v.route_target for v in bn.vrfs}) == len(bn.vrfs), "no route target shared between VRFs"
    owner = {h: t for t, hs in members.items() for h in hs}
    for p in (p for p in bn.ports if not p.fabric):
        assert p.vrf == vrf_of_tenant[owner.get(p.peer)], f"{p.switch} {p.port} is in its server's tenant's VRF"
    per_vrf = Counter(p.vrf for p in bn.ports if not p.fabric)
    links_of = Counter(lk.a_device for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf")
    for t, hs in members.items():
        assert per_vrf[vrf_of_tenant[t]] == sum(links_of[h] for h in hs)
    for v in bn.vrfs:
        assert set(v.leaves) == {p.switch for p in bn.ports if p.vrf == v.name}


def test_a_backend_pool_overlapping_another_pool_is_refused(compiled: Compiled) -> None:
    with pytest.raises(DesignError) as e:
        compiled("b300-spectrumx", "addressing.backend=10.96.0.0/14")
    assert any(p.field == "addressing.backend" and "overlaps" in p.message for p in e.value.problems)


def test_a_backend_pool_too_small_names_the_field(compiled: Compiled) -> None:
    with pytest.raises(DesignError) as e:
        compiled("b300-spectrumx", "addressing.backend=10.128.0.0/24")
    assert [p.field for p in e.value.problems] == ["addressing.backend"]
    assert "shorter prefix" in e.value.problems[0].hint


@pytest.mark.parametrize("field", ["backend.sonic_release=202505", "backend.network.leaf_asn_base=4210000000"])
def test_roce_fields_on_an_infiniband_backend_are_refused(compiled: Compiled, field: str) -> None:
    with pytest.raises(DesignError) as e:
        compiled("h100-256", field)
    assert [p.field for p in e.value.problems] == [
        field.split("=")[0].rsplit(".", 1)[0] if "network." in field else field.split("=")[0]
    ]


# --------------------------------------------------------------------------------- what users get

# b300-spectrumx ships on Cumulus (tests/test_cumulus_backend.py); its SONiC chassis is the same cluster
# mi355x-1024-roce: AMD MI355X nodes on Pollara 400 (issue 41), a SONiC backend like h100-512-roce's
RENDERED = [("h100-512-roce",), ("b300-spectrumx", "backend.switch=SN5600-800G"), ("mi355x-1024-roce",)]


def test_a_leaf_with_two_tenants_keeps_each_port_in_its_own_vrf(compiled: Compiled) -> None:
    plan = compiled(*MIXED)
    bn = required(plan.backend_net, "backend_net")
    members = tenant_members(plan.design)
    assert len(bn.vrfs) == 1 + len(members), "infra (unrented servers) and each tenant"
    shared = [s for s in bn.switches if len(s.vrfs) > 1]
    assert shared, "the design puts two networks on one leaf"
    owner = {h: t for t, hs in members.items() for h in hs}
    tenant_of_vrf = {v.name: v.tenant for v in bn.vrfs}
    for p in bn.ports:
        if not p.fabric:
            assert p.vrf is not None and tenant_of_vrf[p.vrf] == owner.get(p.peer)


SONIC_CABLE_CLASSES = (5, 40, 300)  # SONiC's pg_profile_lookup.ini cable lengths


def _db(files: dict[str, str], switch: str) -> dict:
    return json.loads(files[f"backend/{switch}/config_db.json"])


def _routed_m(plan: Plan) -> dict[int, float]:
    out: dict[int, float] = {}
    for c in plan.cables or []:
        for j, k in enumerate(c.links):
            out[k] = c.routed_m[j] if len(c.routed_m) == len(c.links) else c.routed_m[0]
    return out


def _switch_ports(plan: Plan) -> dict[str, dict[str, tuple[int, float, str, str]]]:
    """switch -> port -> (speed, routed metres, peer, peer port), from the plan's links and cables."""
    devs = plan.index()
    metres = _routed_m(plan)
    out: dict[str, dict[str, tuple[int, float, str, str]]] = defaultdict(dict)
    for k, lk in enumerate(plan.links):
        if lk.network != "backend":
            continue
        for me, port, peer, peer_port in (
            (lk.a_device, lk.a_port, lk.b_device, lk.b_port),
            (lk.b_device, lk.b_port, lk.a_device, lk.a_port),
        ):
            if devs[me].kind == "switch":
                out[me][port] = (lk.speed_gbps, metres[k], peer, peer_port)
    return out


@pytest.mark.parametrize("name", RENDERED, ids=lambda d: d[0])
def test_a_config_per_backend_switch_and_per_server(compiled: Compiled, name: tuple[str, ...]) -> None:
    files = rendered_files(compiled, *name)
    plan = compiled(*name)
    switches = {d.name for d in plan.devices if d.kind == "switch" and d.network == "backend"}
    servers = {d.name for d in plan.devices if d.kind == "server"}
    assert {p.split("/")[1] for p in files if p.startswith("backend/")} == switches
    assert all(f"backend/{s}/{f}" in files for s in switches for f in ("config_db.json", "frr.conf"))
    assert {p.split("/")[1] for p in files if p.startswith("hosts/")} == servers
    assert all(f"hosts/{s}/{f}" in files for s in servers for f in ("netplan.yaml", "nccl.env"))


@pytest.mark.parametrize("name", RENDERED, ids=lambda d: d[0])
def test_every_used_port_is_lossless_for_its_speed_and_cable_class(compiled: Compiled, name: tuple[str, ...]) -> None:
    files = rendered_files(compiled, *name)
    plan = compiled(*name)
    for sw, ports in _switch_ports(plan).items():
        db = _db(files, sw)
        assert db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["ROCE"]["48"] == "6"
        assert {v for k, v in db["DSCP_TO_TC_MAP"]["ROCE"].items() if k not in ("26", "48")} == {"0"}
        assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
        for port, (speed, metres, _, _) in ports.items():
            assert db["PORT"][port]["admin_status"] == "up" and db["PORT"][port]["speed"] == str(speed * 1000)
            assert db["PORT"][port]["mtu"] == "9100"
            qos = db["PORT_QOS_MAP"][port]
            assert qos["pfc_enable"] == "3" and qos["dscp_to_tc_map"] == "ROCE" and qos["pfcwd_sw_enable"] == "3"
            cls = next(c for c in SONIC_CABLE_CLASSES if metres <= c)
            assert db["CABLE_LENGTH"]["AZURE"][port] == f"{cls}m"
            profile = db["BUFFER_PG"][f"{port}|3"]["profile"]
            assert profile == f"pg_lossless_{speed * 1000}_{cls}m_profile"
            assert db["BUFFER_PROFILE"][profile]["pool"] == "ingress_lossless_pool"
            assert db["BUFFER_PG"][f"{port}|0"]["profile"] == "ingress_lossy_profile"
            assert db["QUEUE"][f"{port}|3"]["wred_profile"] == "ROCE_LOSSLESS"
            assert db["SCHEDULER"][db["QUEUE"][f"{port}|6"]["scheduler"]]["type"] == "STRICT"
            assert db["BUFFER_QUEUE"][f"{port}|3"]["profile"] == "egress_lossless_profile"
            assert db["PFC_WD"][port]["action"] == "drop"
        unused = set(db["PORT"]) - set(ports)
        assert all(db["PORT"][p]["admin_status"] == "down" for p in unused)
        assert not unused & set(db["PORT_QOS_MAP"])


def test_headroom_grows_with_the_cable() -> None:
    from generators.vendors.sonic import lossless_profile

    xoff = [int(lossless_profile(400, m, 9100)[1]["xoff"]) for m in SONIC_CABLE_CLASSES]
    assert xoff == sorted(xoff) and len(set(xoff)) == 3
    assert int(lossless_profile(800, 40, 9100)[1]["xoff"]) > int(lossless_profile(400, 40, 9100)[1]["xoff"])


@pytest.mark.parametrize("name", RENDERED, ids=lambda d: d[0])
def test_hosts_addresses_and_routes_match_their_leaf(compiled: Compiled, name: tuple[str, ...]) -> None:
    """Each NIC's /31 is its leaf port's, the NIC side odd; its rail's route goes via that leaf only;
    the NCCL devices are the server's backend ports in rail order."""
    files = rendered_files(compiled, *name)
    plan = compiled(*name)
    devs = plan.index()
    leaf_addr: dict[tuple[str, str], tuple[str, str]] = {}  # (server, port) -> (leaf, its address)
    for sw, ports in _switch_ports(plan).items():
        iface = _db(files, sw)["INTERFACE"]
        for port, (_, _, peer, peer_port) in ports.items():
            if devs[peer].kind == "server":
                [addr] = [k.split("|")[1] for k in iface if k.startswith(f"{port}|")]
                leaf_addr[(peer, peer_port)] = (sw, addr)
    be = plan.catalog.servers[plan.design.compute.server].backend
    assert be is not None and be.netdev is not None
    for s in (d.name for d in plan.devices if d.kind == "server"):
        net = yaml.safe_load(files[f"hosts/{s}/netplan.yaml"])["network"]
        assert net["version"] == 2
        mine = sorted(
            ((p, v) for (h, p), v in leaf_addr.items() if h == s), key=lambda x: devs[x[1][0]].attrs.get("rail", 0)
        )
        assert len(net["ethernets"]) == len(mine)
        tables = set()
        for port, (leaf, addr) in mine:
            i = int(port.removeprefix(be.name.split("{")[0]))
            assert devs[leaf].attrs["rail"] == i, "backend port i is rail i's, on that rail's leaf"
            nic = net["ethernets"][be.netdev.format(i=i)]
            [mine_addr] = nic["addresses"]
            a, b = IPv4Interface(addr), IPv4Interface(mine_addr)
            assert a.network == b.network and a.network.prefixlen == 31 and int(b.ip) == int(a.ip) + 1
            assert nic["mtu"] < 9100
            assert {r["via"] for r in nic["routes"]} == {str(a.ip)}, "the rail's route points at its own leaf"
            # main table: this rail's block (the other NICs' rails are other blocks: a peer on this rail
            # is reached through this NIC only); NIC i's own table: the whole pool, so whatever is sent
            # from NIC i's address leaves on NIC i
            [main] = [r for r in nic["routes"] if "table" not in r]
            rail_block = ip_network(main["to"])
            [rule] = nic["routing-policy"]
            [own] = [r for r in nic["routes"] if r.get("table") == rule["table"]]
            assert b.ip in rail_block and len(nic["routes"]) == 2
            assert ip_network(own["to"]) == ip_network(plan.design.addressing.backend)
            assert rule["from"] == str(b.ip)
            tables.add(rule["table"])
        assert len(tables) == len(mine), "a routing table per NIC"
        blocks = [ip_network(n["routes"][0]["to"]) for n in net["ethernets"].values()]
        assert not any(x.overlaps(y) for i, x in enumerate(blocks) for y in blocks[i + 1 :])
        env = dict(
            line.split("=", 1)
            for line in files[f"hosts/{s}/nccl.env"].splitlines()
            if line and not line.startswith("#")
        )
        assert env["NCCL_IB_HCA"] == "=" + ",".join(f"{p}:1" for p, _ in mine)
        assert env["NCCL_IB_GID_INDEX"] == "3" and env["NCCL_IB_TC"] == str(26 << 2)


@pytest.mark.parametrize("name", RENDERED, ids=lambda d: d[0])
def test_no_tenant_vrf_holds_another_tenants_server_ports(compiled: Compiled, name: tuple[str, ...]) -> None:
    files = rendered_files(compiled, *name)
    plan = compiled(*name)
    devs = plan.index()
    owner = {h: t for t, hs in tenant_members(plan.design).items() for h in hs}
    vrf_tenants: dict[str, set[str | None]] = defaultdict(set)
    l3vni: dict[str, str] = {}
    for sw, ports in _switch_ports(plan).items():
        db = _db(files, sw)
        for port, (_, _, peer, _) in ports.items():
            if devs[peer].kind == "server":
                vrf_tenants[db["INTERFACE"][port]["vrf_name"]].add(owner.get(peer))
            else:
                assert db["INTERFACE"][port] == {"ipv6_use_link_local_only": "enable"}
        for vrf, v in db.get("VRF", {}).items():
            assert l3vni.setdefault(vrf, v["vni"]) == v["vni"]
    assert all(len(ts) == 1 for ts in vrf_tenants.values()), vrf_tenants
    assert len(set(l3vni.values())) == len(l3vni), "no L3VNI shared between VRFs"
    assert {next(iter(ts)) for ts in vrf_tenants.values()} >= set(tenant_members(plan.design))


@pytest.mark.parametrize("name", RENDERED, ids=lambda d: d[0])
def test_frr_runs_the_planned_asn_and_each_vrfs_own_route_target(compiled: Compiled, name: tuple[str, ...]) -> None:
    files = rendered_files(compiled, *name)
    plan = compiled(*name)
    bn = required(plan.backend_net, "backend_net")
    rts = {v.name: v.route_target for v in bn.vrfs}
    for s in bn.switches:
        conf = files[f"backend/{s.name}/frr.conf"]
        db = _db(files, s.name)
        assert f"router bgp {s.asn}\n" in conf and db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == str(s.asn)
        assert "bgp bestpath as-path multipath-relax" in conf and "maximum-paths 64" in conf
        for vrf in s.vrfs:
            block = conf.split(f"router bgp {s.asn} vrf {vrf}\n")[1].split("\nexit\n")[0]
            assert {ln.split()[-1] for ln in block.splitlines() if "route-target" in ln} == {rts[vrf]}
        assert bool(s.vrfs) == ("VXLAN_TUNNEL" in db), "only leaves with tenant ports are VTEPs"


def test_a_roce_server_without_interface_names_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "d.yaml"
    d.write_text(
        f"extends: {DESIGNS / 'h100-512-roce.yaml'}\ncatalog:\n  servers:\n    hgx-h100:\n"
        "      backend: {netdev: null}\n"
    )
    with pytest.raises(DesignError) as e:
        compile_file(d, [])
    [p] = [p for p in e.value.problems if p.field == "compute.server"]
    assert "netdev" in p.message and "netdev" in p.hint


@pytest.mark.daemons
@pytest.mark.parametrize("name", RENDERED, ids=lambda d: d[0])
def test_every_backend_frr_conf_passes_vtysh(compiled: Compiled, name: tuple[str, ...], tmp_path: Path) -> None:
    files = rendered_files(compiled, *name)
    confs = sorted(p for p in files if p.startswith("backend/") and p.endswith("frr.conf"))
    assert confs
    for rel in confs:
        path = tmp_path / rel.replace("/", "_")
        path.write_text(files[rel])
        ok, out = frr_check(path)
        assert ok, f"{rel}: {out}"


@pytest.mark.daemons
def test_netplan_accepts_every_hosts_backend_netplan(compiled: Compiled, tmp_path: Path) -> None:
    files = rendered_files(compiled, "h100-512-roce")
    hosts = sorted(p for p in files if p.startswith("hosts/") and p.endswith("netplan.yaml"))
    for rel in hosts:
        root = tmp_path / rel.split("/")[1]
        ok, out = netplan_check(files[rel], root)
        assert ok, f"{rel}: {out}"
        units = sorted(p.name for p in (root / "run" / "systemd" / "network").glob("*.network"))
        assert len(units) == len(yaml.safe_load(files[rel])["network"]["ethernets"])
    bad = files[hosts[0]].replace("routing-policy:", "routing-polcy:")
    ok, out = netplan_check(bad, tmp_path / "bad")
    assert not ok and "routing-polcy" in out


# --------------------------------------------------------------------------------- the technology's words

IB_WORDS = ("subnet", "SM ", "SM)", "UFM", "OpenSM", "InfiniBand", "partition")


@pytest.mark.parametrize(
    ("name", "override", "field"),
    [
        ("b300-spectrumx", "management.backend_attached=2", "management.backend_attached"),
        ("h100-512-roce", "compute.count=60", "compute.count"),
    ],
)
def test_ethernet_errors_use_no_infiniband_words(compiled: Compiled, name: str, override: str, field: str) -> None:
    with pytest.raises(DesignError) as e:
        compiled(name, override)
    hits = [p for p in e.value.problems if p.field == field]
    assert hits
    for p in hits:
        assert not [w for w in IB_WORDS if w in p.message + p.hint], p.render()
        assert "management nodes" in p.message + p.hint


def test_the_summary_says_what_a_roce_backend_gets_and_what_not(
    compiled: Compiled, cli: Callable[..., object], tmp_path: Path
) -> None:
    plan = compiled("h100-512-roce")
    rows = {what: value for what, net, value in backend_net.summary_rows(plan) if net == "backend"}
    assert rows["backend configs"].startswith("SONiC (config_db.json + frr.conf), release 202605")
    assert "eBGP unnumbered" in rows["backend configs"] and "EVPN type-5" in rows["backend configs"]
    assert "DSCP 26 lossless (PFC 3, ECN)" in rows["RoCE QoS"] and "CNP DSCP 48" in rows["RoCE QoS"]
    assert rows["host files"].startswith(f"{plan.design.compute.count} x hosts/<server>/netplan.yaml")
    assert rows["not configured"].startswith("adaptive routing and packet spraying")
    r = cli("compile", DESIGNS / "h100-512-roce.yaml", "-o", tmp_path / "out")
    text = " ".join(r.output.split())  # the printed table (its cells wrap)
    assert "backend configs" in text and "not configured" in text
    assert not [w for w in IB_WORDS if w in text]


@pytest.mark.parametrize("name", ["h100-512-roce", "b300-spectrumx"])
def test_an_ethernet_bom_uses_no_infiniband_words(compiled: Compiled, name: str) -> None:
    """What a buyer reads of an Ethernet site (the BoM in every format; the printed summary is checked
    above) names no subnet manager: the management node is a management node, not a subnet-manager node."""
    files = rendered_files(compiled, name)
    read = {p: t for p, t in files.items() if p.startswith("bom.")}
    assert {"bom.csv", "bom.json", "bom.html"} <= set(read)
    for path, text in read.items():
        assert not [w for w in IB_WORDS if w in text], path
