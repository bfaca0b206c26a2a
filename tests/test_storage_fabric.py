"""storage.network: dedicated: a storage fabric of its own, as NVIDIA's DGX SuperPOD builds it
(designs/dgx-h100-superpod-4su.yaml), and the frontend storage every other design keeps.

The counts are derived here from the design's rules and the catalog (ports, ratio, servers, cages),
not read back from the compiler's own network facts."""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from generators.model.design import ratio_value
from generators.model.geometry import device_size
from generators.model.plan import Plan
from generators.model.ports import port_table
from generators.stages.bom import plan_bom
from tests.conftest import DESIGNS, rendered_files

Compiled = Callable[..., Plan]
SUPERPOD = "dgx-h100-superpod-4su"


def _storage_leaf_rule(plan: Plan) -> tuple[int, int, int, int]:
    """(leaf ports at the storage speed, compute-server downlinks, uplinks, uplink speed) from the design's
    rules: host ports at the storage speed, uplinks at the switch's native speed (NDR 400G on a QM9700 under
    NDR200 DGX ports), as many downlinks as the ratio allows with uplinks an even number, so a leaf reaches
    >= 2 spines."""
    fab = plan.design.storage.fabric
    assert fab is not None
    model = plan.catalog.switches[fab.switch]
    speed = plan.networks.storage.speed_gbps if plan.networks.storage else 0
    ports = sum(1 for p in port_table(model) if speed in p.speeds)
    up_speed = max(g.speed_gbps for g in model.port_groups)
    ratio = ratio_value(fab.oversubscription)

    def uplinks(d: int) -> int:
        return math.ceil(Fraction(d * speed) / (ratio * up_speed))

    if fab.servers_per_leaf is not None:  # the design's leaf (NVIDIA's SuperPOD: 32 DGX, a pair per unit)
        down = fab.servers_per_leaf
        up = uplinks(down)
        return ports, down, up + up % 2, up_speed
    down = max(d for d in range(1, ports) if d + uplinks(d) <= ports)
    up = uplinks(down)
    if up % 2:
        assert down + up < ports  # room for the extra uplink without giving a downlink back
        up += 1
    return ports, down, up, up_speed


def _storage_server_downlinks(plan: Plan, up: int, up_speed: int) -> int:
    """A storage servers' leaf: as much downlink bandwidth as uplink (1:1), as far as its ports go."""
    fab, st = plan.design.storage.fabric, plan.design.storage
    assert fab is not None
    ports = sum(1 for p in port_table(plan.catalog.switches[fab.switch]) if st.speed in p.speeds)
    return min(up * up_speed // st.speed, ports - up)


def _links(plan: Plan, network: str, tier: str) -> list:
    return [lk for lk in plan.links if lk.network == network and lk.tier == tier]


def test_the_storage_fabric_is_sized_by_the_ratio_and_the_servers_storage_ports(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    design, catalog = plan.design, plan.catalog
    dgx = catalog.servers[design.compute.server]
    sides = len(dgx.storage_ports)  # one leaf of a pair per storage port
    ports, down, up, up_speed = _storage_leaf_rule(plan)
    servers = design.compute.count
    st = design.storage
    compute_leaves = sides * math.ceil(servers / down)
    s_down = _storage_server_downlinks(plan, up, up_speed)
    storage_leaves = sides * math.ceil(st.count * st.ports_per_server / sides / s_down)
    leaves = compute_leaves + storage_leaves
    # 2 tiers: the design's spines, else the fewest (at least 2) that divide the uplinks and take every
    # leaf's share
    fab = design.storage.fabric
    assert fab is not None
    spines = fab.spines_per_group or next(
        s for s in range(max(2, math.ceil(leaves * up / ports)), up + 1) if up % s == 0
    )
    switches = [d for d in plan.devices if d.kind == "switch" and d.network == "storage"]
    assert Counter(d.role for d in switches) == {"leaf": leaves, "spine": spines}
    # the storage servers' leaves are numbered apart (stor-svcNN), so more servers rename none of them
    assert sorted(d.name for d in switches if d.role == "leaf") == [
        *(f"stor-leaf{i:02d}" for i in range(1, compute_leaves + 1)),
        *(f"stor-svc{i:02d}" for i in range(1, storage_leaves + 1)),
    ]
    assert len(_links(plan, "storage", "server-leaf")) == servers * sides + st.count * st.ports_per_server
    assert len(_links(plan, "storage", "leaf-spine")) == leaves * up
    assert {lk.speed_gbps for lk in _links(plan, "storage", "leaf-spine")} == {up_speed}
    speeds = Counter(lk.speed_gbps for lk in _links(plan, "storage", "server-leaf"))
    assert speeds == Counter({plan.networks.storage.speed_gbps: servers * sides}) + Counter(
        {st.speed: st.count * st.ports_per_server}
    )
    assert not _links(plan, "storage", "spine-core")


def test_storage_leaves_keep_their_ratios_and_every_dgx_is_dual_homed(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    fab = plan.design.storage.fabric
    assert fab is not None
    devs = plan.index()
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for lk in plan.links:
        if lk.network == "storage" and lk.tier == "server-leaf":
            down[lk.b_device] += lk.speed_gbps
        elif lk.network == "storage" and lk.tier == "leaf-spine":
            up[lk.a_device] += lk.speed_gbps
    for leaf in down:
        want = Fraction(1) if devs[leaf].attrs["service"] else ratio_value(fab.oversubscription)
        assert Fraction(down[leaf], up[leaf]) <= want, leaf
    dgx_ports = plan.catalog.servers[plan.design.compute.server].storage_ports
    homes: dict[str, list[str]] = {}
    for lk in _links(plan, "storage", "server-leaf"):
        if devs[lk.a_device].kind == "server":
            assert lk.a_port in dgx_ports
            homes.setdefault(lk.a_device, []).append(lk.b_device)
    assert len(homes) == plan.design.compute.count
    assert all(len(set(h)) == len(dgx_ports) for h in homes.values())  # each port on another leaf


def test_storage_servers_leave_the_frontend_for_the_storage_fabric(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    devs = plan.index()
    storage = {d.name for d in plan.devices if d.kind == "storage"}
    assert not [lk for lk in plan.links if lk.network == "frontend" and lk.a_device in storage]
    on_fabric = Counter(lk.a_device for lk in _links(plan, "storage", "server-leaf") if lk.a_device in storage)
    assert on_fabric == dict.fromkeys(storage, plan.design.storage.ports_per_server)
    assert all(
        devs[lk.b_device].attrs["service"] for lk in _links(plan, "storage", "server-leaf") if lk.a_device in storage
    )
    # the frontend still dual-homes every DGX on ports the storage fabric does not take
    fe = {lk.a_port for lk in plan.links if lk.network == "frontend" and devs[lk.a_device].kind == "server"}
    assert fe and not fe & set(plan.catalog.servers[plan.design.compute.server].storage_ports)


def test_compute_fabric_counts_twin_cages_and_the_ufm_ports(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    design, catalog = plan.design, plan.catalog
    dgx = catalog.servers[design.compute.server]
    assert dgx.backend is not None and dgx.backend.cages is not None
    rails = dgx.backend.count
    ufm = design.management.backend_attached * catalog.servers[design.management.server].backend.count  # type: ignore[union-attr]
    assert len(_links(plan, "backend", "server-leaf")) == design.compute.count * rails + ufm
    slots = design.compute.count + design.compute.reserved_slots
    # a 1:1 rail leaf: one uplink per server slot, whether or not a server stands in it
    assert len(_links(plan, "backend", "leaf-spine")) == slots * rails
    # one flat-top twin transceiver per system cage, none per NIC
    cages = len(dgx.backend.cages.ports)
    at_cage: dict[tuple[str, int], str] = {}
    cage_of = {dgx.backend.name.format(i=i): c for c, cage in enumerate(dgx.backend.cages.ports) for i in cage}
    servers = {d.name for d in plan.devices if d.kind == "server"}  # not the UFM hosts' own HCAs
    assert plan.cables is not None
    for c in plan.cables:
        for k in c.links:
            lk = plan.links[k]
            if lk.network == "backend" and lk.a_device in servers and lk.a_port in cage_of and c.a_transceiver:
                at_cage[(lk.a_device, cage_of[lk.a_port])] = c.a_transceiver
    assert len(at_cage) == design.compute.count * cages  # 127 x 4 = 508
    assert {catalog.transceivers[t].fits[0] for t in at_cage.values()} == {dgx.backend.cages.connector}


def test_storage_transceivers_one_per_port_at_the_hosts_and_per_cage_at_the_switches(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    catalog = plan.catalog
    devs = plan.index()
    cage = {
        (d.name, p.name): p.cage
        for d in plan.devices
        if d.kind == "switch"
        for p in port_table(catalog.switches[d.model])
    }
    host_end: dict[tuple[str, str], str] = {}
    switch_end: dict[tuple[str, int], str] = {}
    assert plan.cables is not None
    for c in plan.cables:
        for k in c.links:
            lk = plan.links[k]
            if lk.network != "storage":
                continue
            for dev, port, part in (
                (lk.a_device, lk.a_port, c.a_transceiver),
                (lk.b_device, lk.b_port, c.b_transceiver),
            ):
                if not part:
                    continue
                if devs[dev].kind == "switch":
                    switch_end[(dev, cage[(dev, port)])] = part
                else:
                    host_end[(dev, port)] = part
    host_ports = len(_links(plan, "storage", "server-leaf"))
    assert len(host_end) == host_ports  # every host port is optical: QSFP112 SR4 at the NIC
    assert {catalog.transceivers[p].fits[0] for p in host_end.values()} == {"qsfp112"}
    # the switch ends: one twin-port transceiver per cage the optical links use
    used_cages = {(lk.b_device, cage[(lk.b_device, lk.b_port)]) for lk in _links(plan, "storage", "server-leaf")}
    assert set(switch_end) >= used_cages
    want = Counter(host_end.values()) + Counter(switch_end.values())
    bom = {ln.part: ln.quantity for ln in plan_bom(plan).lines if ln.category == "storage" and ln.kind == "transceiver"}
    assert bom == dict(want)
    switches = Counter(d.model for d in plan.devices if d.kind == "switch" and d.network == "storage")
    assert {
        ln.part: ln.quantity for ln in plan_bom(plan).lines if ln.category == "storage" and ln.kind == "switch"
    } == dict(switches)


def test_racks_pdus_and_power(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    design, catalog = plan.design, plan.catalog
    rack = design.site.rack
    dgx = catalog.servers[design.compute.server]
    per_rack = min(int(rack.power_kw // dgx.power_kw), rack.units // dgx.rack_units)
    per_su = Counter(d.attrs["su"] for d in plan.devices if d.kind == "server")
    assert plan.racks is not None
    compute = [r for r in plan.racks if r.role == "compute"]
    assert len(compute) == sum(math.ceil(n / per_rack) for n in per_su.values())
    pdus = 2 * math.ceil(rack.power_kw / catalog.pdus[rack.pdu].capacity_kw)  # A+B, each carries the rack
    assert {r.pdus for r in plan.racks} == {pdus}
    in_rack: dict[str, float] = {}
    for d in plan.devices:
        if d.rack is not None and d.kind != "pdu":
            in_rack[d.rack] = in_rack.get(d.rack, 0.0) + device_size(catalog, d)[1]
    for r in plan.racks:
        assert r.power_kw == pytest.approx(in_rack.get(r.name, 0.0), abs=0.05), r.name
        assert r.power_kw <= rack.power_kw
    full = [r for r in compute if r.power_kw >= per_rack * dgx.power_kw]
    assert len(full) == sum(n // per_rack for n in per_su.values())
    # the storage fabric stands in network racks beside the storage servers, never among the compute
    roles = {r.name: r.role for r in plan.racks}
    assert {roles[d.rack] for d in plan.devices if d.network == "storage" and d.rack} == {"storage"}


def test_opensm_files_for_a_second_subnet(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    files = rendered_files(compiled, SUPERPOD)
    assert "infiniband/opensm.conf" in files and "infiniband/storage/opensm.conf" in files
    conf = files["infiniband/storage/opensm.conf"]
    assert "root_guid_file /etc/opensm/storage/root_guids" in conf
    net = files["infiniband/storage/topology.net"]
    links = _links(plan, "storage", "server-leaf") + _links(plan, "storage", "leaf-spine")
    # every link at both ends, nothing of the compute fabric
    assert sum(1 for ln in net.splitlines() if ln.startswith("[")) == 2 * len(links)
    assert "mlx5_" not in net and "su1-rail0-leaf" not in net
    roots = [ln for ln in files["infiniband/storage/root_guids"].splitlines() if not ln.startswith("#")]
    assert len(roots) == sum(1 for d in plan.devices if d.network == "storage" and d.role == "spine")
    # every tenant reaches the storage servers: their ports are full members of the default partition
    parts = files["infiniband/storage/partitions.conf"]
    default = parts.split("Default=")[1].split(";")[0]
    storage = [d.name for d in plan.devices if d.kind == "storage"]
    assert all(f"# {s} eth0 (storage server)" in default for s in storage)


def test_an_infiniband_storage_fabric_gets_its_subnet_manager_beside_a_roce_backend(compiled: Compiled) -> None:
    """The storage fabric's OpenSM files come from its own switches' OS, whatever the backend runs: a RoCE
    backend beside an InfiniBand storage fabric once left the storage subnet with no subnet-manager files."""
    sets = ("backend.technology=roce", "backend.switch=SN5600")
    plan = compiled(SUPERPOD, *sets)
    files = rendered_files(compiled, SUPERPOD, *sets)
    assert plan.infiniband is None and plan.infiniband_storage is not None
    assert not any(k.startswith("infiniband/") and not k.startswith("infiniband/storage/") for k in files)
    # the same storage subnet, keys and files as beside an InfiniBand backend
    ib = rendered_files(compiled, SUPERPOD)
    storage = {k: v for k, v in ib.items() if k.startswith("infiniband/storage/")}
    switches = [d.name for d in plan.devices if d.network == "storage" and d.kind == "switch"]
    assert switches
    assert sorted(storage) == sorted(
        f"infiniband/storage/{f}"
        for f in (
            "node-name-map",
            "opensm.conf",
            "partitions.conf",
            "root_guids",
            "topology.net",
            *(f"{s}/mgmt.cfg" for s in switches),  # each storage switch's own management plane
        )
    )
    assert {k: files[k] for k in storage} == storage
    assert plan.infiniband_storage == compiled(SUPERPOD).infiniband_storage


def test_frontend_storage_is_the_default_and_unchanged(compiled: Compiled) -> None:
    plan = compiled("h100-256")
    explicit = compiled("h100-256", "storage.network=frontend")
    assert explicit.to_dict() == plan.to_dict()
    assert "storage" not in plan.networks
    assert "network" not in plan.to_dict()["design"]["storage"]
    storage = {d.name for d in plan.devices if d.kind == "storage"}
    fe = {lk.a_device for lk in plan.links if lk.network == "frontend" and lk.a_device in storage}
    assert fe == storage
    assert not any(k.startswith("infiniband/storage/") for k in rendered_files(compiled, "h100-256"))


def _design(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "d.yaml"
    p.write_text(f"extends: {DESIGNS / (SUPERPOD + '.yaml')}\nname: d\n{body}")
    return p


def _parent_line(text: str) -> int:
    """The line of the example design that holds `text` (the field the child design leaves alone)."""
    lines = (DESIGNS / f"{SUPERPOD}.yaml").read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if ln.strip() == text)


@pytest.mark.parametrize(
    ("body", "line", "field", "text"),
    [
        ("storage:\n  fabric:\n    switch: SN4600\n", 5, "storage.fabric.switch", "is an ethernet switch"),
        ("storage:\n  fabric:\n    ports_per_server: 3\n", 5, "storage.fabric.ports_per_server", "has 2 storage ports"),
        (
            "compute:\n  server: hgx-h100\n  config: {frontend_nic: bluefield3-b3220}\n"
            "storage:\n  network: dedicated\n",
            7,
            "storage.network",
            "no storage ports",
        ),
        ("compute:\n  config: {frontend_nic_count: 1}\n", 4, "compute.config.frontend_nic_count", "is not one of its"),
        # the storage servers' speed must be one the fabric's switch runs (a QM9700: 400G, 200G)
        ("storage:\n  speed: 100G\n", 4, "storage.speed", "which no port of the storage fabric's QM9700 runs"),
        # the design's storage leaf must hold its servers and the uplinks the ratio asks
        ("storage:\n  fabric:\n    servers_per_leaf: 40\n", 5, "storage.fabric.servers_per_leaf", "more than a"),
        ("storage:\n  fabric:\n    spines_per_group: 5\n", 5, "storage.fabric.spines_per_group", "do not split"),
        (
            "storage:\n  fabric:\n    technology: ethernet\n",
            "switch: QM9700",
            "storage.fabric.switch",
            "is an infiniband switch",
        ),
    ],
)
def test_a_bad_storage_fabric_is_refused_at_its_field_and_line(
    cli: Callable[..., object], tmp_path: Path, body: str, line: int | str, field: str, text: str
) -> None:
    r = cli("validate", _design(tmp_path, body))
    assert r.exit_code == 2  # type: ignore[attr-defined]
    err = r.stderr  # type: ignore[attr-defined]
    where = f"d.yaml:{line}" if isinstance(line, int) else f"{SUPERPOD}.yaml:{_parent_line(line)}"
    assert f"{where}: {field}: " in err and text in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("storage:\n  network: frontend\n", "storage.fabric: is set, but storage.network is frontend"),
        ("storage:\n  network: dedicated\n  fabric: null\n", "storage.fabric: storage.network: dedicated needs"),
    ],
)
def test_network_and_fabric_must_agree(cli: Callable[..., object], tmp_path: Path, body: str, text: str) -> None:
    r = cli("validate", _design(tmp_path, body))
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert text in r.stderr  # type: ignore[attr-defined]


def test_storage_bandwidth_is_measured_on_the_storage_fabric(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    st = plan.design.storage
    model = plan.catalog.storage_servers[st.server]
    _, _, up, up_speed = _storage_leaf_rule(plan)
    sides = len(plan.catalog.servers[plan.design.compute.server].storage_ports)
    s_down = _storage_server_downlinks(plan, up, up_speed)
    leaves = sides * math.ceil(st.count * st.ports_per_server / sides / s_down)  # the storage servers' leaf pairs
    bw = plan.networks.frontend.storage_bandwidth
    assert bw["throughput_gbytes"] == st.count * model.throughput_gbps
    assert bw["uplink_gbytes"] == leaves * up * up_speed / 8
    assert [p["leaves"] for p in bw["pairs"]] == [
        sorted(d.name for d in plan.devices if d.network == "storage" and d.role == "leaf" and d.attrs["service"])
    ]


def test_netbox_gets_the_storage_fabric_from_the_plan(compiled: Compiled) -> None:
    plan = compiled(SUPERPOD)
    files = rendered_files(compiled, SUPERPOD)
    devices = list(csv.DictReader(io.StringIO(files["netbox/08-devices.csv"])))
    role = {r["name"]: r["role"] for r in devices}
    switches = [d for d in plan.devices if d.kind == "switch" and d.network == "storage"]
    assert {role[d.name] for d in switches} == {"storage-leaf", "storage-spine"}
    assert all(role[d.name] == f"storage-{d.role}" for d in switches)
    cables = list(csv.DictReader(io.StringIO(files["netbox/10-cables.csv"])))
    # a twin cable lists its two interfaces at each end, in the same order
    ends = {
        (c["side_a_device"], a, c["side_b_device"], b)
        for c in cables
        for a, b in zip(c["side_a_name"].split(","), c["side_b_name"].split(","), strict=True)
    }
    storage = [lk for lk in plan.links if lk.network == "storage"]
    assert all((lk.a_device, lk.a_port, lk.b_device, lk.b_port) in ends for lk in storage)
    # the DGX's storage ports are InfiniBand interfaces in its device type, its frontend ports Ethernet
    types = files["netbox/07-device-types.yaml"]
    dgx = types.split("model: dgx-h100")[1].split("\n---")[0]
    stor_ports = plan.catalog.servers[plan.design.compute.server].storage_ports
    for p in stor_ports:
        assert re.search(rf"name: {p}\n\s+type: infiniband-", dgx), p
    assert re.search(r"name: eth0\n\s+type: \d+gbase-", dgx)


def test_an_ethernet_storage_fabric_is_built_and_priced_with_a_warning(compiled: Compiled) -> None:
    # an SN4600 runs 200G: the DGX storage ports (NDR 400G on the InfiniBand fabric) run 200GbE on it
    ethernet = ("storage.fabric.technology=ethernet", "storage.fabric.switch=SN4600", "storage.fabric.speed=200G")
    plan = compiled(SUPERPOD, *ethernet)
    switches = Counter(d.model for d in plan.devices if d.kind == "switch" and d.network == "storage")
    assert set(switches) == {"SN4600"}
    assert any(w.field == "storage.fabric.technology" and "no switch configs" in w.message for w in plan.warnings)
    assert plan.cables is not None
    # every cable and optic of the storage fabric is an Ethernet part (the InfiniBand-only parts stay out)
    cables = [c for c in plan.cables if c.network == "storage"]
    assert cables
    for c in cables:
        parts = [plan.catalog.transceivers[t] for t in (c.a_transceiver, c.b_transceiver) if t]
        family = plan.catalog.cables.get(c.catalog)
        assert all("ethernet" in p.protocols for p in parts) and (family is None or "ethernet" in family.protocols)
    files = rendered_files(compiled, SUPERPOD, *ethernet)
    assert not any(k.startswith("infiniband/storage/") for k in files)
    assert "infiniband/opensm.conf" in files  # the compute fabric is still InfiniBand
