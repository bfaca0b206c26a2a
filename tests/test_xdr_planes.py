"""Co-packaged-optics switches with planes inside, and a 4-plane ConnectX-8 XDR site (issue 40, items 5
and 6). The Quantum-X800 Photonics Q3450-LD (catalog switches.Q3450-LD): 144 x 800G MPO ports on 4
ASICs, each port's 4 x 200G lanes one to each ASIC ("Each 800G physical port splits into 4 x 200G lanes,
with each lane connecting to a different ASIC", https://transurfing-volatility.ghost.io/on-cpo-pt4/), 18
replaceable external laser modules (https://en.wedoany.com/shortnews/193917.html). designs/xdr-4plane-1152
is b300-xdr (2 SU x 72 DGX B300) on it: 4 planes, each ASIC k of every box joined by lane k of every link,
each plane an InfiniBand subnet of its own. Expectations come from the catalog entries and the compiled
links; the OpenSM checks run the real OpenSM on ibsim, one plane at a time."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.geometry import device_size
from generators.model.plan import Plan
from generators.renderers import render_all
from generators.stages.infiniband import planned_subnet
from tests.conftest import DESIGNS, site_cells
from tests.realtools import ibsim_fabric, parse_ibnetdiscover

NAME = "xdr-4plane-1152"
BOX = "Q3450-LD"
PLANES = [f"plane{k}" for k in range(1, 5)]


@pytest.fixture(scope="module")
def xdr(compiled: Callable[..., Plan]) -> Plan:
    return compiled(NAME)


@pytest.fixture(scope="module")
def files(xdr: Plan) -> dict[str, str]:
    return render_all(xdr)


def _backend_switches(plan: Plan) -> list[str]:
    return [d.name for d in plan.devices if d.network == "backend" and d.kind == "switch"]


def test_the_catalog_entries_name_their_sources_and_estimates(xdr: Plan) -> None:
    box = xdr.catalog.switches[BOX]
    assert (box.technology, box.rack_units, box.planes, box.ports) == ("infiniband", 4, 4, 144)
    assert {(g.speed_gbps, g.lanes, g.connector) for g in box.port_groups} == {(800, 4, "cpo-mpo")}
    assert box.lasers is not None and box.lasers.count == 18
    sn6800 = xdr.catalog.switches["SN6800-CL"]
    assert sn6800.ports == 512 and sn6800.port_groups[0].speed_gbps == 800 and sn6800.lasers is not None
    for price in (box.price, box.lasers.price, sn6800.price, sn6800.lasers.price):
        # no list price is public: each says it is an estimate and what anchors it
        assert price.source.startswith("estimate: ") and "http" in price.source
    port = xdr.catalog.transceivers["Q3450-LD-CPO-port"]
    assert port.built_in and port.fits == ["cpo-mpo"] and port.protocols == ["infiniband"] and port.price.usd == 0


def test_switches_per_plane_and_tier_within_the_asics_radix(xdr: Plan) -> None:
    """2 SU of 8 rail leaves, 8 spines: 24 boxes; every plane 16 leaf and 8 spine ASICs of 144 x 200G."""
    devs = xdr.index()
    be = xdr.networks.backend
    boxes = Counter(devs[s].role for s in _backend_switches(xdr))
    assert boxes == {"leaf": 16, "spine": 8} and {devs[s].model for s in _backend_switches(xdr)} == {BOX}
    assert (be.planes, be.tiers, be.speed_gbps, be.downlinks_per_leaf, be.uplinks_per_leaf) == (4, 2, 800, 72, 72)
    # every box port used once, within its 144 ports, on their names; a leaf uses all 144
    names = set(xdr.catalog.switches[BOX].port_names())
    used: dict[str, set[str]] = {}
    for lk in xdr.links:
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            if lk.network == "backend" and devs[dev].kind == "switch":
                assert port not in used.setdefault(dev, set()), (dev, port)
                used[dev].add(port)
    assert all(p <= names for p in used.values()) and max(map(len, used.values())) <= 144
    assert {len(p) for d, p in used.items() if devs[d].role == "leaf"} == {144}
    # each plane's subnet: ASIC k of every box, as many ports as the box has (one lane of each)
    for plane in PLANES:
        sn = planned_subnet(xdr, plane=plane)
        switches = [d for d, (k, _) in sn.kind.items() if k == "Switch"]
        assert all(d.endswith(f" {plane}") for d in sn.order)
        tiers = Counter(devs[d.removesuffix(f" {plane}")].role for d in switches)
        assert tiers == {"leaf": 16, "spine": 8}
        assert {sn.kind[d][1] for d in switches} == {144}
        assert sorted(sn.roots) == sorted(f"{s} {plane}" for s in _backend_switches(xdr) if devs[s].role == "spine")
        hcas = [d for d, (k, _) in sn.kind.items() if k == "Ca"]
        assert len(hcas) == sum(lk.network == "backend" and lk.tier == "server-leaf" for lk in xdr.links) == 1152


def test_every_plane_is_proven_non_blocking(xdr: Plan) -> None:
    be = xdr.networks.backend
    assert be.plane_bisection is not None and [pb.plane for pb in be.plane_bisection] == PLANES
    lane = xdr.catalog.switches[BOX].port_groups[0].speed_gbps // 4
    hosts = sum(lk.network == "backend" and lk.tier == "server-leaf" for lk in xdr.links)
    for pb in be.plane_bisection:
        # half of the plane's 1,152 host lanes of 200G cross its cut, all of it carried
        assert pb.demand_gbps == hosts * lane // 2 == 115_200
        assert pb.max_flow_gbps == pb.demand_gbps and pb.ratio == 1
    assert be.bisection is not None and be.bisection.demand_gbps == 4 * 115_200 and be.bisection.ratio == 1


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        # planes of separate switches on a box that has them inside
        (("backend.spine_grouping=per_plane", "backend.planes=4"), "backend.planes", "has its 4 planes inside"),
        # a port run at 2 of its 4 lanes would leave two planes without it
        (("backend.speed=400",), "backend.speed", "fewer lanes would leave planes without the port"),
        # a NIC that cannot run one lane in each plane (a catalog overlay giving the CX-8 2 lanes)
        (("catalog.nics.cx8-800g-osfp.lanes=2",), "backend.switch", "cannot run planarized"),
    ],
)
def test_bad_input_names_the_field(
    overrides: tuple[str, ...], field: str, words: str, cli: Callable[..., object], tmp_path: Path
) -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{NAME}.yaml", list(overrides))
    assert any(p.field == field and words in p.message for p in exc.value.problems), exc.value.problems
    out = tmp_path / "out"
    r = cli("compile", DESIGNS / f"{NAME}.yaml", "--out", out, *[a for o in overrides for a in ("--set", o)])
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    assert field in r.output and "Traceback" not in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_a_catalog_switch_whose_planes_do_not_divide_its_lanes_is_refused(tmp_path: Path) -> None:
    design = tmp_path / "d.yaml"
    design.write_text(f"extends: {DESIGNS / (NAME + '.yaml')}\ncatalog:\n  switches:\n    Q3450-LD:\n      planes: 3\n")
    with pytest.raises(DesignError) as exc:
        compile_file(design)
    assert [(p.field, p.message.startswith("3 ASICs each take one share")) for p in exc.value.problems] == [
        ("catalog.switches.Q3450-LD.planes", True)
    ], exc.value.problems


def test_no_transceiver_on_the_switch_side_and_the_lasers_in_the_bom(xdr: Plan, files: dict[str, str]) -> None:
    cat = xdr.catalog
    devs = xdr.index()
    nics = sum(1 for lk in xdr.links if lk.network == "backend" and lk.tier == "server-leaf")
    for c in xdr.cables or []:
        if c.network != "backend":
            continue
        ends = {c.a_transceiver, c.b_transceiver}
        # one MPO-12/APC single-mode fiber per 800G link; the switch end is the box's own optics
        assert "Q3450-LD-CPO-port" in ends and c.media == "smf" and c.a_fanout is None and c.b_fanout is None
        assert cat.cables[c.catalog].fiber_connector == "mpo12-apc"
        if devs[xdr.links[c.links[0]].a_device].kind == "switch":
            assert ends == {"Q3450-LD-CPO-port"}
        else:
            assert ends == {"OSFP-800G-DR4", "Q3450-LD-CPO-port"}
    cab = xdr.cabling
    assert cab is not None and "Q3450-LD-CPO-port" not in cab.transceiver_parts
    assert cab.transceivers["backend"] == nics == cab.transceiver_parts["OSFP-800G-DR4"] == 1152
    # the BoM: 24 boxes, 18 laser modules each, each line at its catalog price; no CPO "transceiver" bought
    assert xdr.bom is not None
    lines = {ln.part: ln for ln in xdr.bom.lines if ln.category == "backend"}
    box = cat.switches[BOX]
    assert box.lasers is not None
    assert lines[BOX].quantity == 24 and lines[BOX].unit_usd == box.price.usd
    els = lines[box.lasers.sku]
    assert (els.kind, els.quantity, els.unit_usd) == ("laser", 24 * 18, box.lasers.price.usd)
    assert "25 W each (450 W per switch" in els.description
    assert "Q3450-LD-CPO-port" not in lines
    rows = list(csv.DictReader(io.StringIO(files["bom.csv"])))
    assert any(r["part"] == box.lasers.sku and r["quantity"] == "432" for r in rows)
    # their power: a box draws its own plus its lasers', and its rack carries that
    spine = next(d for d in xdr.devices if d.network == "backend" and d.role == "spine")
    assert device_size(cat, spine) == (4, (box.power_w + 18 * 25) / 1000)
    rack = next(rk for rk in xdr.racks if rk.name == spine.rack)
    in_rack = [d for d in xdr.devices if d.rack == rack.name and d.kind == "switch" and d.model == BOX]
    assert rack.power_kw >= len(in_rack) * 4.75


def test_each_plane_its_own_subnet_manager_config(xdr: Plan, files: dict[str, str]) -> None:
    """infiniband/plane<k>/: OpenSM options, partitions, roots, node names and the expected fabric of each
    plane; no whole-backend OpenSM config (no SM reaches two planes). GUIDs are the plane's own."""
    assert not [p for p in files if re.fullmatch(r"infiniband/[^/]+\.(conf|net)|infiniband/root_guids", p)]
    prefixes = set()
    guids: dict[str, set[str]] = {}
    keys = set()
    for plane in PLANES:
        d = f"infiniband/{plane}/"
        conf = files[d + "opensm.conf"]
        assert f"root_guid_file /etc/opensm/{plane}/root_guids" in conf
        prefixes |= set(re.findall(r"^subnet_prefix (0x[0-9a-f]{16})$", conf, re.M))
        nodes = parse_ibnetdiscover(files[d + "topology.net"])
        assert Counter(n.kind for n in nodes.values()) == {"Switch": 24, "Ca": 1152}
        assert {ln.speed for n in nodes.values() for ln in n.links.values()} == {"1xXDR"}  # one lane a plane
        guids[plane] = {f"{n.guid:016x}" for n in nodes.values()}
        roots = files[d + "root_guids"].split("\n")[1:-1]
        assert len(roots) == 8 and all(r.endswith(f" {plane}") for r in roots)
        keys.add(tuple(re.findall(r"^(\w+)=(0x[0-9a-f]{4})", files[d + "partitions.conf"], re.M)))
        assert (d + "ufm/requests.json") in files
    assert len(prefixes) == 4 and "0xfe80000000000000" not in prefixes
    assert all(not (guids[a] & guids[b]) for a in PLANES for b in PLANES if a < b)
    assert keys == {(("Default", "0x7fff"), ("acme", "0x1001"), ("globex", "0x1002"))}  # the same keys in each
    ib = xdr.infiniband
    assert ib is not None and ib.planes is not None and [p.plane for p in ib.planes] == PLANES
    assert [(s.device, s.node) for s in ib.planes[2].subnet_managers] == [
        ("spine01", "spine01 plane3"),
        ("spine02", "spine02 plane3"),
    ]
    assert {p.name: p.ports for p in ib.partitions} == {"Default": 8, "acme": 4 * 576, "globex": 4 * 576}


def _plane_config(files: dict[str, str], plane: str, tmp_path: Path) -> Path:
    """One plane's compiled OpenSM files (not UFM's) in a folder of their own, their /etc/opensm/<plane>
    paths pointed at it, as an OpenSM of that plane reads them."""
    ib = tmp_path / plane
    ib.mkdir()
    for rel, text in files.items():
        if rel.startswith(f"infiniband/{plane}/") and "/ufm/" not in rel:
            (ib / rel.rsplit("/", 1)[1]).write_text(text.replace(f"/etc/opensm/{plane}", str(ib)))
    return ib


def _for_ibsim(text: str) -> str:
    """ibsim 0.10 parses speeds up to HDR: simulate an XDR lane as an HDR one (routing ignores speed)."""
    return re.sub(r"\b(\d)xXDR\b", r"\1xHDR", text)


@pytest.mark.parametrize("plane", ["plane1", "plane4"])
def test_opensm_runs_each_plane_as_a_subnet_of_its_own(
    xdr: Plan, files: dict[str, str], plane: str, tmp_path: Path
) -> None:
    """One plane's files on ibsim: OpenSM identifies it as a fat tree of its ASICs, gives every node of the
    plane (and nothing else) a LID, and the ports carry the plane's own subnet prefix."""
    ib = _plane_config(files, plane, tmp_path)
    (tmp_path / "sim.net").write_text(_for_ibsim(files[f"infiniband/{plane}/topology.net"]))
    with ibsim_fabric(tmp_path / "sim.net", tmp_path / "sim") as fab:
        run = fab.opensm(routing="ftree", extra_args=["-F", str(ib / "opensm.conf")])
        assert run.subnet_up and run.fat_tree_identified and not run.fell_back, run.log
        assert run.errors == [] and run.parse_errors == [], run.log
        assert "FatTree rank (roots to leaf switches): 2" in run.log
        assert "Fabric has 8 switches at rank 0 (roots)" in run.log
        assert "Fabric has 1152 CAs, 1152 CA ports" in run.log
        # LIDs in the plane's own space: every node of the plane has one, unique
        lids = [fab.lid(f"gpu{i:03d} mlx5_0 {plane}") for i in (1, 144)] + [fab.lid(f"spine08 {plane}")]
        assert len(set(lids)) == 3 and all(0 < x < 0xC000 for x in lids)
        k = int(plane.removeprefix("plane"))
        info = fab.run(["smpquery", "portinfo", str(lids[0]), "1"]).stdout
        assert re.search(rf"GidPrefix:\.+0xfe800000000000{k:02x}", info), info


def test_compare_sites_sets_the_planes_beside_the_single_plane_site(cli: Callable[..., object]) -> None:
    """The same 144 DGX B300 on Q3400 (pluggable optics at both ends) and on Q3450-LD: 4 planes, the same
    boxes and links, and only the NICs' optics bought."""
    r = cli("compare", "--sites", "--markdown", DESIGNS / "b300-xdr.yaml", DESIGNS / f"{NAME}.yaml")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    rows = site_cells(r.output)  # type: ignore[attr-defined]
    one, four = rows["b300-xdr"], rows[NAME]
    assert one[1] == four[1] == "1,152" and one[2] == four[2] == "16 / 8 / 0" and one[3] == four[3]
    assert (one[-2], four[-2]) == ("1", "4")
    # b300-xdr: a DR4 per NIC and a twin-port optic per switch cage (1,152 down, 2 x 1,152 trunk ends)
    assert (one[5], four[5]) == (f"{1152 + 3 * 1152 // 2:,}", "1,152")


def _deepseek_small(tmp_path: Path) -> Plan:
    """deepseek-8plane-16k cut to 4 units of 32 servers: 8 planes of 4 leaves and 2 spines each."""
    design = tmp_path / "deepseek-small.yaml"
    design.write_text(
        f"extends: {DESIGNS / 'deepseek-8plane-16k.yaml'}\n"
        "name: deepseek-small\ncompute: {count: 128}\nstorage: {count: 8, capacity_pb: 2}\n"
        "tenants:\n  - {name: acme, scalable_units: [1, 2]}\n  - {name: globex, scalable_units: [3, 4]}\n"
    )
    return compile_file(design)[0]


def test_a_fabric_of_planes_gets_a_subnet_manager_in_every_plane(tmp_path: Path) -> None:
    """Planes of separate switches (DeepSeek's): each plane's subnet holds only its own switches and the
    host ports cabled to them, its subnet managers on its own spines (an SM in plane1 reaches no other)."""
    plan = _deepseek_small(tmp_path)
    devs = plan.index()
    ib = plan.infiniband
    assert ib is not None and ib.planes is not None
    assert [p.plane for p in ib.planes] == [f"plane{k}" for k in range(1, 9)]
    files = render_all(plan)
    for pf in ib.planes:
        sn = planned_subnet(plan, plane=pf.plane)
        switches = [d for d, (k, _) in sn.kind.items() if k == "Switch"]
        assert {devs[s].attrs["plane"] for s in switches} == {pf.plane}
        assert Counter(devs[s].role for s in switches) == {"leaf": 4, "spine": 2}
        assert [m.device for m in pf.subnet_managers] == sorted(pf.root_switches) == pf.root_switches
        assert all(devs[m.device].attrs["plane"] == pf.plane for m in pf.subnet_managers)
        hosts = [
            lk
            for lk in plan.links
            if lk.network == "backend" and lk.tier == "server-leaf" and devs[lk.b_device].attrs["plane"] == pf.plane
        ]
        assert sum(k == "Ca" for k, _ in sn.kind.values()) == len(hosts) == 128
        assert f"subnet_prefix {pf.subnet_prefix}" in files[f"infiniband/{pf.plane}/opensm.conf"]
    assert len({pf.subnet_prefix for pf in ib.planes}) == 8
    # verify --plane: one plane's discovery against that plane's links; without it, the other planes missing
    from generators.asbuilt.verify import verify_fabric

    one = files["infiniband/plane3/topology.net"]
    assert verify_fabric(plan, one, plane="plane3").ok
    whole = verify_fabric(plan, one)
    assert not whole.ok and whole.planned_links == 8 * whole.discovered_links
    assert not any(p.startswith("infiniband/") and p.count("/") == 1 and p.endswith(".conf") for p in files)


def test_opensm_sweeps_one_plane_of_a_fabric_of_planes(tmp_path: Path) -> None:
    plan = _deepseek_small(tmp_path)
    files = render_all(plan)
    ib = _plane_config(files, "plane5", tmp_path)
    net = re.sub(r"\b4xNDR\b", "4xHDR", files["infiniband/plane5/topology.net"])
    (tmp_path / "sim.net").write_text(net)
    with ibsim_fabric(tmp_path / "sim.net", tmp_path / "sim") as fab:
        run = fab.opensm(routing="ftree", extra_args=["-F", str(ib / "opensm.conf")])
        assert run.subnet_up and run.fat_tree_identified and not run.fell_back, run.log
        assert run.errors == [] and run.parse_errors == [], run.log
        assert "Fabric has 2 switches at rank 0 (roots)" in run.log
        assert "Fabric has 128 CAs, 128 CA ports" in run.log
        # the plane's NIC ports: rail 4 of every server (plane r + 1 holds rail r)
        assert fab.lid("gpu001 mlx5_4") != fab.lid("gpu128 mlx5_4")
        with pytest.raises(LookupError):
            fab.node("gpu001 mlx5_0")  # plane1's port is in another subnet


def test_planes_csv_maps_each_host_port_to_its_lane_in_every_plane(xdr: Plan, files: dict[str, str]) -> None:
    rows = list(csv.DictReader(io.StringIO(files["infiniband/planes.csv"])))
    hosts = [lk for lk in xdr.links if lk.network == "backend" and lk.tier == "server-leaf"]
    assert len(rows) == 4 * len(hosts) == 4 * 1152
    by_port: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rows:
        by_port.setdefault((r["host"], r["port"]), []).append(r)
    nodes = {p: parse_ibnetdiscover(files[f"infiniband/{p}/topology.net"]) for p in PLANES}
    for lk in hosts:
        legs = by_port[(lk.a_device, lk.a_port)]
        # one lane in each plane, all on the one box port the fiber plugs into
        assert [r["plane"] for r in legs] == PLANES
        assert {(r["switch"], r["switch_port"]) for r in legs} == {(lk.b_device, lk.b_port)}
        for r in legs:
            assert r["plane_node"] == f"{lk.a_device} {lk.a_port} {r['plane']}"
            assert r["switch_asic"] == f"{lk.b_device} {r['plane']}"
            hca = next(n for n in nodes[r["plane"]].values() if n.desc == r["plane_node"])
            (link,) = hca.links.values()
            assert link.peer_port == int(r["asic_port"])  # the plane's topology.net agrees
    assert {r["subnet_prefix"] for r in rows} == {f"0xfe800000000000{k:02x}" for k in range(1, 5)}


def test_failure_domains_of_planes_inside_the_switches(xdr: Plan, files: dict[str, str]) -> None:
    """A box takes its ASICs of all four planes; one plane takes a lane of every GPU's port and no box."""
    be = xdr.networks.backend
    assert be.failure_domains is not None and be.plane_bisection is not None
    rows = {r.scenario: r for r in be.failure_domains}
    assert list(rows) == ["leaf", "spine", "plane", "leaf rack", "spine rack"]
    gpus = sum(1 for d in xdr.devices if d.kind == "server") * xdr.catalog.servers["dgx-b300"].gpus
    # a leaf box is rail k of its unit's 72 servers: those GPUs (one NIC each) are cut off
    assert (rows["leaf"].switches, rows["leaf"].gpus_losing_bandwidth, rows["leaf"].gpus_cut_off) == (1, 72, 72)
    plane = rows["plane"]
    per_plane = be.plane_bisection[0].max_flow_gbps
    assert (plane.failed, plane.switches, plane.gpus_losing_bandwidth, plane.gpus_cut_off) == ("plane1", 0, gpus, 0)
    assert plane.worst_gpu_bandwidth_kept == 0.75 and plane.bisection_gbps == 3 * per_plane
    assert plane.bisection_kept == 0.75
    csv_rows = list(csv.DictReader(io.StringIO(files["failure-domains.csv"])))
    assert [r["failure"] for r in csv_rows] == list(rows)


def test_verify_checks_one_plane_against_its_discovery(
    files: dict[str, str], cli: Callable[..., object], tmp_path: Path
) -> None:
    """A plane is discovered apart (its own subnet): verify --plane compares it with that plane's lanes,
    and finds a lane missing, or another plane's discovery given for it."""
    design = DESIGNS / f"{NAME}.yaml"
    net = tmp_path / "plane2.net"
    net.write_text(files["infiniband/plane2/topology.net"])
    r = cli("verify", design, "--ibnetdiscover", net, "--plane", "plane2", "--json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    # gpu001's lane in plane2 unplugged: both ends of the record gone
    text = files["infiniband/plane2/topology.net"]
    gone = "\n".join(ln for ln in text.split("\n") if '"gpu001 mlx5_0 plane2"' not in ln or ln.startswith("Ca"))
    hca = next(b for b in gone.split("\n\n") if '# "gpu001 mlx5_0 plane2"' in b)
    net.write_text(gone.replace(hca, "\n".join(hca.split("\n")[:2])))
    r = cli("verify", design, "--ibnetdiscover", net, "--plane", "plane2", "--json")
    assert r.exit_code == 1, r.output  # type: ignore[attr-defined]
    missing = [m for m in json.loads(r.output)["missing"]]  # type: ignore[attr-defined]
    assert [(m["a"]["device"], m["a"]["port"], m["b"]["device"]) for m in missing] == [
        ("gpu001", "mlx5_0", "su1-rail0-leaf")
    ]
    # plane1's discovery is not plane2: none of its nodes is a plane2 node
    net.write_text(files["infiniband/plane1/topology.net"])
    r = cli("verify", design, "--ibnetdiscover", net, "--plane", "plane2")
    assert r.exit_code == 1 and "unknown devices" in r.output  # type: ignore[attr-defined]
    # a plane the design does not have, and a discovery of planes inside the switches without --plane
    bad: list[tuple[tuple[str, ...], str]] = [
        (("--plane", "plane9"), "'plane9' is not a plane"),
        ((), "planes are inside its switches"),
    ]
    for extra, words in bad:
        r = cli("verify", design, "--ibnetdiscover", net, *extra)
        assert r.exit_code == 2 and "--plane" in r.output and words in r.output, r.output  # type: ignore[attr-defined]
