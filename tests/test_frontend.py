"""Frontend, storage, out-of-band and IP plan: properties of the plan and of the rendered files."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from ipaddress import IPv4Network, ip_interface, ip_network
from pathlib import Path

import pytest

from generators.asbuilt.isolation import audit_frontend
from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.renderers import render_all
from generators.renderers.netbox_csv import STEP_OF
from generators.stages.netplan import is_private_asn
from tests.conftest import DESIGNS, rendered_files

DONE_WHEN = ["h100-1024-reference", "h100-1024-optimized", "h100-256"]


def files_of(compiled: Callable[..., Plan], name: str) -> dict[str, str]:
    return rendered_files(compiled, name)


def problems(name: str, *overrides: str) -> list[tuple[str, str]]:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{name}.yaml", list(overrides))
    return [(p.field, p.message) for p in exc.value.problems]


# --------------------------------------------------------------------------------------- ASN plan


@pytest.mark.parametrize("name", [*DONE_WHEN, "h100-16k"])
def test_asn_plan_is_rfc7938(compiled: Callable[..., Plan], name: str) -> None:
    plan = compiled(name)
    asn = plan.netplan.asn
    fe = [d for d in plan.devices if d.network == "frontend" and d.kind == "switch"]
    leaves = [asn[d.name] for d in fe if d.role == "leaf"]
    assert len(set(leaves)) == len(leaves), "one ASN per leaf"
    spines_by_pod: dict[int, set[int]] = defaultdict(set)
    for d in fe:
        if d.role == "spine":
            spines_by_pod[int(d.attrs.get("pod", 1))].add(asn[d.name])
    assert all(len(a) == 1 for a in spines_by_pod.values()), "the spines of one pod share an ASN"
    assert len({next(iter(a)) for a in spines_by_pod.values()}) == len(spines_by_pod), "pods differ"
    cores = {asn[d.name] for d in fe if d.role == "core"}
    assert len(cores) <= 1
    layers = [set(leaves), *spines_by_pod.values(), cores]
    assert sum(len(x) for x in layers) == len(set().union(*layers)), "no ASN shared between layers"
    assert all(is_private_asn(a) for a in asn.values())
    # the frr.conf of each switch runs the planned ASN
    if name != "h100-16k":
        files = files_of(compiled, name)
        for d in fe:
            assert f"\nrouter bgp {asn[d.name]}\n" in files[f"frontend/{d.name}/frr.conf"]


def test_leaf_ports_and_pairs(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-1024-reference")
    devs = plan.index()
    sides: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier == "server-leaf":
            leaf = devs[lk.b_device]
            sides[lk.a_device].append((leaf.attrs["pair"], leaf.attrs["side"]))
    for host, where in sides.items():
        assert len(where) == 2 and where[0][0] == where[1][0] and {s for _, s in where} == {0, 1}, host
    files = files_of(compiled, "h100-1024-reference")
    db = json.loads(files["frontend/fe-svc01/config_db.json"])
    stor = [p for p in db["PORT"].values() if p.get("description", "").startswith("stor")]
    assert len(stor) == 8 and {p["speed"] for p in stor} == {"200000"}  # storage.speed 200G, own ports
    hosts = json.loads(files["frontend/fe-leaf01/config_db.json"])["PORT"]
    assert {p["speed"] for p in hosts.values() if p.get("description", "").startswith("gpu")} == {"200000"}
    assert {p["mtu"] for p in hosts.values()} == {"9100"}


@pytest.mark.parametrize("name", DONE_WHEN)
def test_fabric_interfaces_agree(compiled: Callable[..., Plan], name: str) -> None:
    """Every cabled leaf-spine port is a BGP unnumbered neighbor in frr.conf and link-local-only in
    config_db.json, on both ends, and nothing else is."""
    plan = compiled(name)
    files = files_of(compiled, name)
    want: dict[str, set[str]] = defaultdict(set)
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier in ("leaf-spine", "spine-core"):
            want[lk.a_device].add(lk.a_port)
            want[lk.b_device].add(lk.b_port)
    for sw, ports in want.items():
        frr = files[f"frontend/{sw}/frr.conf"]
        assert set(re.findall(r"^ neighbor (\S+) interface peer-group FABRIC$", frr, re.M)) == ports
        db = json.loads(files[f"frontend/{sw}/config_db.json"])
        assert set(db["INTERFACE"]) == ports
        assert all(v == {"ipv6_use_link_local_only": "enable"} for v in db["INTERFACE"].values())


# ---------------------------------------------------------------------------------------- IP plan


def _all_subnets(plan: Plan) -> list[tuple[str, IPv4Network]]:
    np_ = plan.netplan
    out = []
    for n in np_.networks:
        for seg in ("hosts", "storage"):
            out.append((f"{n['name']} {seg}", ip_network(n[seg]["subnet"])))
    for sw, sn in np_.oob["subnets"].items():
        for kind in ("bmc", "mgmt"):
            out.append((f"{sw} {kind}", ip_network(sn[kind]["subnet"])))
    out += [(f"{k} lo", ip_network(v)) for k, v in {**np_.loopbacks, **np_.vteps}.items()]
    return out  # type: ignore[return-value]


@pytest.mark.parametrize("name", [*DONE_WHEN, "h100-16k"])
def test_ip_plan_has_no_overlap(compiled: Callable[..., Plan], name: str) -> None:
    plan = compiled(name)
    nets = sorted(_all_subnets(plan), key=lambda x: (int(x[1].network_address), x[1].prefixlen))
    for (a, na), (b, nb) in itertools.pairwise(nets):
        assert not na.overlaps(nb), f"{a} {na} overlaps {b} {nb}"
    # every planned address is unique within its VRF, inside its subnet, and not its network/broadcast
    np_ = plan.netplan
    seen: Counter[tuple[str, str]] = Counter()
    for a in np_.hosts.values():
        seen[(a["vrf"], a["address"].split("/")[0])] += 1
    for per in np_.storage_addresses.values():
        for vrf, addrs in per.items():
            for x in addrs:
                seen[(vrf, x.split("/")[0])] += 1
    for r in np_.oob["ports"]:
        i = ip_interface(r["address"])
        assert i.ip not in (i.network.network_address, i.network.broadcast_address, ip_interface(r["gateway"]).ip)
        seen[("", str(i.ip))] += 1
    assert max(seen.values()) == 1
    pools = {k: ip_network(v) for k, v in plan.design.addressing.model_dump(mode="json").items() if k != "domain"}
    for n in np_.networks:
        assert ip_network(n["hosts"]["subnet"]).subnet_of(pools["tenants"])  # type: ignore[arg-type]
        assert ip_network(n["storage"]["subnet"]).subnet_of(pools["storage"])  # type: ignore[arg-type]
        assert n["hosts"]["members"] + 8 + 2 <= ip_network(n["hosts"]["subnet"]).num_addresses


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("addressing.tenants=10.64.0.0/26", "addressing.tenants"),
        ("addressing.storage=10.96.0.0/28", "addressing.storage"),
        ("addressing.bmc=10.253.0.0/27", "addressing.bmc"),
        ("addressing.management=10.254.0.0/26", "addressing.management"),
        ("addressing.loopbacks=10.255.0.0/29", "addressing.loopbacks"),
    ],
)
def test_pool_exhaustion_names_the_pool(override: str, field: str) -> None:
    got = problems("h100-256", override)
    assert field in [f for f, _ in got], got
    msg = next(m for f, m in got if f == field)
    assert "cannot hold" in msg or "addresses" in msg


def test_pool_overlap_names_the_pool() -> None:
    got = problems("h100-256", "addressing.storage=10.64.0.0/16")
    assert got == [("addressing.storage", "10.64.0.0/16 overlaps addressing.tenants (10.64.0.0/11)")]


def test_bad_pool_via_cli_writes_nothing(cli: Callable[..., object], tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("compile", DESIGNS / "h100-256.yaml", "--out", out, "--set", "addressing.tenants=10.64.0.0/27")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "addressing.tenants" in r.output  # type: ignore[attr-defined]
    assert not out.exists()


# -------------------------------------------------------------------------------------- isolation


@pytest.mark.parametrize("name", DONE_WHEN)
def test_no_vlan_vni_vrf_shared_between_tenants(compiled: Callable[..., Plan], name: str) -> None:
    nets = compiled(name).netplan.networks
    vlans = [v for n in nets for v in (n["hosts"]["vlan"], n["storage"]["vlan"], n["l3vni_vlan"])]
    vnis = [v for n in nets for v in (n["hosts"]["vni"], n["storage"]["vni"], n["l3vni"])]
    vrfs = [n["vrf"] for n in nets]
    assert len(set(vlans)) == len(vlans) and len(set(vnis)) == len(vnis) and len(set(vrfs)) == len(vrfs)
    assert audit_frontend(compiled(name), files_of(compiled, name)) == []


@pytest.mark.parametrize(
    ("overrides", "field", "text"),
    [
        (["tenants.1.vlan=1010"], "tenants.1.vlan", "VLAN 1010 is shared by acme and globex"),
        (["tenants.1.l3vni=50001"], "tenants.1.l3vni", "VNI 50001 is shared by acme and globex"),
        (["tenants.1.vrf=Vrf_acme"], "tenants.1.vrf", "VRF Vrf_acme is shared by acme and globex"),
        (["tenants.0.storage_vlan=1000"], "tenants.0.storage_vlan", "VLAN 1000 is shared by infra and acme"),
        (
            ["frontend.evpn.l3vni_vlan_base=1010"],
            "frontend.evpn.vlan_base",
            "VLAN 1010 is shared by infra and acme (l3vni vlan and vlan, set by frontend.evpn.l3vni_vlan_base and "
            "frontend.evpn.vlan_base)",
        ),
    ],
)
def test_isolation_broken_on_purpose_is_refused(overrides: list[str], field: str, text: str) -> None:
    got = problems("h100-256", *overrides)
    assert any(f == field and text in m for f, m in got), got


def test_isolation_audit_catches_a_leaked_vlan(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    files = dict(files_of(compiled, "h100-256"))
    nets = {n["name"]: n for n in plan.netplan.networks}
    # put globex's hosts VLAN into acme's VRF on one leaf, as a typo in a hand edit would
    path = "frontend/fe-leaf02/config_db.json"
    db = json.loads(files[path])
    db["VLAN_INTERFACE"][f"Vlan{nets['globex']['hosts']['vlan']}"]["vrf_name"] = nets["acme"]["vrf"]
    files[path] = json.dumps(db)
    found = audit_frontend(plan, files)
    assert any(f"VLAN {nets['globex']['hosts']['vlan']} is bound to several VRFs" in f for f in found), found
    assert any("access VLAN 1020 is in Vrf_acme, but gpu017 belongs to Vrf_globex" in f for f in found), found
    # and a storage VLAN mapped onto another tenant's VNI
    files = dict(files_of(compiled, "h100-256"))
    path = "frontend/fe-svc01/config_db.json"
    db = json.loads(files[path])
    key = next(k for k, v in db["VXLAN_TUNNEL_MAP"].items() if v["vlan"] == f"Vlan{nets['globex']['storage']['vlan']}")
    db["VXLAN_TUNNEL_MAP"][key]["vni"] = str(nets["acme"]["storage"]["vni"])
    files[path] = json.dumps(db)
    found = audit_frontend(plan, files)
    assert any(f"VNI {nets['acme']['storage']['vni']} is used by" in f for f in found), found


def test_storage_reaches_each_tenant_only_in_its_vrf(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-1024-reference")
    files = files_of(compiled, "h100-1024-reference")
    nets = plan.netplan.networks
    for sw in ("fe-svc01", "fe-svc02"):
        db = json.loads(files[f"frontend/{sw}/config_db.json"])
        for n in nets:
            vid = n["storage"]["vlan"]
            assert db["VLAN_INTERFACE"][f"Vlan{vid}"]["vrf_name"] == n["vrf"]
            members = {
                k.split("|")[1]
                for k, v in db["VLAN_MEMBER"].items()
                if k.startswith(f"Vlan{vid}|") and v["tagging_mode"] == "tagged"
            }
            assert len(members) == 8  # the 8 storage front-end ports of this leaf, tagged
    # compute leaves carry no storage VLAN: storage subnets reach them only as routes in the VRF
    db = json.loads(files["frontend/fe-leaf01/config_db.json"])
    assert not {n["storage"]["vlan"] for n in nets} & {int(k[4:]) for k in db["VLAN"]}
    spec = json.loads(files["storage/tenants.json"])
    assert [t["name"] for t in spec["tenants"]] == ["infra", "acme", "globex", "initech"]
    for t in spec["tenants"]:
        snet = ip_network(t["subnet"])
        assert all(ip_interface(f["address"]).ip in snet for f in t["frontend_addresses"])
        assert len(t["frontend_addresses"]) == 16  # 8 servers x 2 ports
        assert t["vast"]["vippool"]["vlan"] == t["vlan"] and t["weka"]["interface_group"]["vlan"] == t["vlan"]
        assert t["client_networks"] == [n["hosts"]["subnet"] for n in nets if n["vrf"] == t["vrf"]]


# -------------------------------------------------------------------------------------- storage BW


def test_storage_bandwidth_reported(compiled: Callable[..., Plan]) -> None:
    bw = compiled("h100-256").networks.frontend.storage_bandwidth
    assert bw["throughput_gbytes"] == 8 * 40  # 8 x nvme-storage-1u at 40 GB/s
    assert bw["nic_limited_gbytes"] == 8 * 2 * 100 / 8  # 2 x 100G ports each
    assert bw["uplink_gbytes"] == 2 * 32 * 100 / 8  # two service leaves, 32 x 100G uplinks each


def test_storage_bandwidth_that_does_not_fit_is_an_error() -> None:
    got = problems("h100-256", "frontend.oversubscription=8:1")
    ((field, msg),) = [(f, m) for f, m in got if "GB/s" in m]
    assert field == "frontend.oversubscription"
    assert "deliver 320 GB/s" in msg and "throughput_gbps" in msg and "carry 200 GB/s" in msg


def test_compile_prints_frontend_summary(cli: Callable[..., object], tmp_path: Path) -> None:
    r = cli("compile", DESIGNS / "h100-1024-optimized.yaml", "--out", tmp_path / "o")
    out = r.output  # type: ignore[attr-defined]
    assert r.exit_code == 0, out  # type: ignore[attr-defined]
    for text in (
        "switches: leaf",
        "frontend",
        "oversubscription",
        "storage throughput",
        "320 GB/s",
        "NIC-limited 200 GB/s",
        "storage leaf uplinks",
        "800 GB/s",
    ):
        assert text in out, text


# ------------------------------------------------------------------------------------------- OOB


@pytest.mark.parametrize("name", DONE_WHEN)
def test_every_management_port_is_planned(compiled: Callable[..., Plan], name: str) -> None:
    plan = compiled(name)
    np_ = plan.netplan
    rows = np_.oob["ports"]
    by_dev = Counter(r["device"] for r in rows)
    want = [
        d.name
        for d in plan.devices
        if d.kind in ("server", "storage", "management", "pdu")
        or (d.kind == "switch" and (d.network in ("backend", "frontend") or d.role == "spine"))
    ]
    assert sorted(by_dev) == sorted(want) and set(by_dev.values()) == {1}
    for r in rows:
        sn = np_.oob["subnets"][r["switch"]][r["kind"]]
        assert ip_interface(r["address"]).network == ip_network(sn["subnet"])
    assert len({(r["switch"], r["kind"], r["circuit_id"]) for r in rows}) == len(rows)
    files = files_of(compiled, name)
    for sw, sn in np_.oob["subnets"].items():
        if sn["os"] == "sonic":
            db = json.loads(files[f"oob/{sw}/config_db.json"])
            assert db["VLAN"][f"Vlan{sn['bmc']['vlan']}"]["dhcp_servers"] == np_.dhcp_servers
            members = {k.split("|")[1]: k.split("|")[0] for k in db["VLAN_MEMBER"]}
            for r in rows:
                if r["switch"] == sw:
                    assert members[r["switch_port"]] == f"Vlan{r['vlan']}"
                    assert r["circuit_id"] == f"{sw}:{r['switch_port']}"
                    assert db["PORT"][r["switch_port"]]["alias"] == r["switch_port"]  # %p in circuit-id
        else:
            text = files[f"oob/{sw}/startup.yaml"]
            assert "use-pif-circuit-id" in text
    kea = json.loads(files["oob/kea-dhcp4.conf"])["Dhcp4"]
    reservations = [(s["subnet"], r["circuit-id"], r["ip-address"]) for s in kea["subnet4"] for r in s["reservations"]]
    assert len(reservations) == len(rows)
    assert {ip for _, _, ip in reservations} == {r["address"].split("/")[0] for r in rows}


# ---------------------------------------------------------------------------------------- IPAM


@pytest.mark.parametrize("name", DONE_WHEN)
def test_ip_addresses_csv_is_netbox_import_format(compiled: Callable[..., Plan], name: str) -> None:
    files = files_of(compiled, name)
    columns = list(STEP_OF["ipam/ip-addresses"].columns)
    rows = list(csv.DictReader(io.StringIO(files["netbox/16-ip-addresses.csv"])))
    assert list(rows[0]) == columns
    assert columns[:2] == ["address", "vrf"] and "status" in columns and "dns_name" in columns
    # one row per address and device: an anycast gateway is one NetBox address per leaf carrying it
    keys = Counter((r["vrf"], str(ip_interface(r["address"]).ip), r["device"]) for r in rows)
    assert max(keys.values()) == 1
    assert {r["status"] for r in rows} == {"active"}
    vrfs = {r["name"] for r in csv.DictReader(io.StringIO(files["netbox/13-vrfs.csv"]))}
    tenants = {r["name"] for r in csv.DictReader(io.StringIO(files["netbox/01-tenants.csv"]))}
    assert {r["vrf"] for r in rows} - {""} <= vrfs
    assert {r["tenant"] for r in rows} - {""} <= tenants
    plan = compiled(name)
    assert tenants == {t.name for t in plan.design.tenants}
    # every planned address is in NetBox: hosts, storage VIPs, BMCs, switch management, loopbacks
    n_expected = (
        len(plan.netplan.hosts)
        + len(plan.netplan.oob["ports"])
        + len(plan.netplan.loopbacks)
        + len(plan.netplan.vteps)
        + sum(len(a) for per in plan.netplan.storage_addresses.values() for a in per.values())
        + 2 * len(plan.netplan.networks)
        + 2 * len(plan.netplan.oob["subnets"])
    )
    assert len({(r["vrf"], r["address"]) for r in rows}) == n_expected


def test_outputs_are_deterministic(compiled: Callable[..., Plan]) -> None:
    again = compile_file(DESIGNS / "h100-256.yaml", [])[0]
    assert render_all(again) == files_of(compiled, "h100-256")


# ------------------------------------------------------------------------------------- vendors


def test_vendor_must_match_the_switch_os() -> None:
    got = problems("h100-256", "frontend.vendor=eos")
    assert ("frontend.switch", "AS7816-64X runs sonic, but frontend.vendor is eos") in got


def test_infra_is_a_reserved_tenant_name() -> None:
    got = problems("h100-256", "tenants.0.name=infra")
    assert "tenants.0.name" in [f for f, _ in got]
