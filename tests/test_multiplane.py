"""Multi-plane backends (issue 40): backend.plane_split nic_port breaks every backend NIC port out into
backend.planes legs, one per plane, each plane a rail-optimized fabric of its own at the leg's speed.
A ConnectX-8 (800G, 4 x 200G lanes: catalog nics.cx8-800g-osfp) broken out 2 ways is NVIDIA's
dual-plane Spectrum-X, which b300-spectrumx writes by hand (hgx-b300-2x400gbe); the split must give the
same fabric NVIDIA's HGX AI Factory RA sizes (32 leaves, 16 spines for 128 HGX B300:
https://docs.nvidia.com/enterprise-reference-architectures/hgx-ai-factory/latest/networking-physical-topologies.html).
Expectations come from the NIC's lanes, the planes and the switch radix, and from the compiled links."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable

import networkx as nx
import pytest
import yaml

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.renderers import render_all
from generators.views.netbox_model import NbObject
from tests.conftest import DESIGNS, rendered_files, site_cells

SX = DESIGNS / "b300-spectrumx.yaml"
SPLIT = ("compute.server=hgx-b300", "backend.plane_split=nic_port")


def _split(*extra: str) -> Plan:
    return compile_file(SX, [*SPLIT, *extra])[0]


@pytest.fixture(scope="module")
def split() -> Plan:
    return _split()


@pytest.fixture(scope="module")
def split_files(split: Plan) -> dict[str, str]:
    """render_all(split), rendered once for the module's tests (which only read it)."""
    return render_all(split)


def test_nic_split_matches_the_hand_written_dual_plane(split: Plan, compiled: Callable[..., Plan]) -> None:
    ref = compiled("b300-spectrumx")
    be, want = split.networks.backend, ref.networks.backend
    # 8 ConnectX-8 x 2 legs = 16 rails of 400G, as the hand-written 2 x 400GbE NIC gives
    assert (be.rails, be.speed_gbps, be.leaves, be.spines, be.tiers) == (16, 400, 32, 16, 2)
    assert (be.rails, be.speed_gbps, be.leaves, be.spines, be.tiers) == (
        want.rails,
        want.speed_gbps,
        want.leaves,
        want.spines,
        want.tiers,
    )
    assert be.planes == 2 and be.nic_split is True and want.nic_split is None
    assert be.switch_model == "SN5600-800G-CL@2x400G"  # 64 x 800G as 128 x 400G
    assert be.bisection is not None and be.bisection.ratio == 1
    # the split NIC: the same card, 2 ports of 400G on 2 lanes each, both legs in the one OSFP cage
    srv = split.catalog.servers["hgx-b300"]
    assert srv.backend is not None and srv.backend.nic == "cx8-800g-osfp@2x400G"
    nic = split.catalog.nics[srv.backend.nic]
    assert (nic.ports, nic.speed_gbps, nic.lanes) == (2, 400, 2)
    assert nic.price == split.catalog.nics["cx8-800g-osfp"].price
    assert srv.backend.cages is not None and srv.backend.cages.ports[3] == [6, 7]


def test_each_leg_lands_in_its_plane(split: Plan) -> None:
    devs = split.index()
    legs: dict[tuple[str, int], set[str]] = {}
    for lk in split.links:
        if lk.network != "backend" or lk.tier != "server-leaf" or not lk.a_device.startswith("gpu"):
            continue
        i = int(lk.a_port.removeprefix("mlx5_"))
        nic, plane = divmod(i, 2)
        leaf = devs[lk.b_device]
        # NIC k's leg p is on a plane-p leaf of rail k, named for both
        assert leaf.attrs["plane"] == f"plane{plane + 1}"
        assert leaf.name.startswith(f"plane{plane + 1}-su") and f"-rail{nic}-leaf" in leaf.name
        legs.setdefault((lk.a_device, nic), set()).add(leaf.attrs["plane"])
    assert set(map(len, legs.values())) == {2}  # every NIC reaches both planes
    g = nx.Graph(
        (lk.a_device, lk.b_device) for lk in split.links if lk.network == "backend" and lk.tier != "server-leaf"
    )
    parts = list(nx.connected_components(g))
    assert len(parts) == 2
    assert sorted(len({devs[n].attrs["plane"] for n in p}) for p in parts) == [1, 1]
    per_plane = Counter(devs[n].attrs["plane"] for p in parts for n in p if devs[n].role == "spine")
    assert per_plane == {"plane1": 8, "plane2": 8}


@pytest.mark.parametrize(
    ("planes", "field", "words"),
    [
        (3, "backend.planes", "do not divide the 4 lanes"),
        (8, "backend.planes", "more planes than cx8-800g-osfp has lanes"),
        (4, "backend.planes", "SN5600-800G-CL cannot break its ports out to"),
    ],
)
def test_bad_planes_name_the_field(planes: int, field: str, words: str) -> None:
    with pytest.raises(DesignError) as exc:
        _split(f"backend.planes={planes}")
    assert any(p.field == field and words in p.message for p in exc.value.problems), exc.value.problems


def test_bad_planes_exit_2_without_output(cli: Callable[..., object], tmp_path: object) -> None:
    out = tmp_path / "out"  # type: ignore[operator]
    r = cli("compile", SX, "--out", out, *[a for s in SPLIT for a in ("--set", s)], "--set", "backend.planes=3")
    assert r.exit_code == 2, r.output  # type: ignore[attr-defined]
    assert "backend.planes" in r.output and "Traceback" not in r.output  # type: ignore[attr-defined]
    assert not out.exists()


def test_a_nic_split_needs_planes() -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / "h100-256.yaml", ["backend.plane_split=nic_port"])
    assert [p.field for p in exc.value.problems] == ["backend.plane_split"]


def test_the_plane_on_every_cable_row_label_and_sheet(
    split: Plan, split_files: dict[str, str], compiled: Callable[..., Plan]
) -> None:
    files = split_files
    rows = list(csv.DictReader(io.StringIO(files["cabling/cables.csv"])))
    devs = split.index()
    assert {r["plane"] for r in rows if r["network"] == "backend"} == {"plane1", "plane2"}
    for r in rows:
        if r["network"] != "backend":
            assert r["plane"] == ""
            continue
        sw = devs[r["b_device"]]  # the switch end: a leaf or spine of the link's plane
        assert r["plane"] == sw.attrs["plane"]
        # a NIC broken out into planes: the label says which plane the leg is in
        assert r["label"].startswith(f"{r['plane']}: ")
    sheet = next(p for p in files if p.startswith("cabling/racks/") and p.endswith(".csv"))
    racks = list(csv.DictReader(io.StringIO(files[sheet])))
    assert "plane" in racks[0]
    html = files[sheet.removesuffix(".csv") + ".html"]
    assert "<th>plane</th>" in html
    # a single-plane design: the column is there, empty, and its labels and sheets carry no plane
    single = rendered_files(compiled, "h100-256")
    one = list(csv.DictReader(io.StringIO(single["cabling/cables.csv"])))
    assert {r["plane"] for r in one} == {""} and not any(r["label"].startswith("plane") for r in one)
    assert not any("<th>plane</th>" in t for p, t in single.items() if p.startswith("cabling/racks/"))


# DeepSeek's multi-plane fat tree: "Insights into DeepSeek-V3: Scaling Challenges and Reflections on
# Hardware for AI Architectures" (Zhao et al., ISCA 2025, arXiv 2505.09343, https://arxiv.org/html/2505.09343v1),
# section 5.1 and its table comparing FT2, MPFT, FT3, SF and DF: MPFT has 16,384 endpoints on 768
# switches and costs $72M, $4.39k per endpoint; FT3 $7.5k per endpoint (the table's figures as quoted at
# https://eeumee.net/tag/networkarchitecture, looked up 2026-12). Its planes: 8 GPU-NIC pairs per node,
# each in a plane of its own, each plane a two-tier fat tree of 64-port 400G InfiniBand switches
# (2,048 endpoints: 64 leaves with 32 down and 32 up, under 32 spines), so 16,384 leaf-spine links.
DEEPSEEK_ENDPOINTS, DEEPSEEK_SWITCHES, DEEPSEEK_USD_PER_ENDPOINT = 16_384, 768, 4_390


@pytest.mark.large
def test_deepseek_8plane_reproduces_the_published_counts(compiled: Callable[..., Plan]) -> None:
    plan = compiled("deepseek-8plane-16k")
    devs = plan.index()
    be = plan.networks.backend
    switches = [d for d in plan.devices if d.network == "backend" and d.kind == "switch"]
    hosts = [lk for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"]
    trunks = [lk for lk in plan.links if lk.network == "backend" and lk.tier == "leaf-spine"]
    assert len(hosts) == DEEPSEEK_ENDPOINTS
    assert len(switches) == DEEPSEEK_SWITCHES
    assert (be.tiers, be.planes, be.leaves, be.spines, be.cores) == (2, 8, 512, 256, 0)
    assert len(trunks) == 16_384 and not any(lk.tier == "spine-core" for lk in plan.links if lk.network == "backend")
    # every plane a 2,048-endpoint fat tree of its own: 64 leaves, 32 spines, 2,048 hosts
    per_plane = Counter((devs[d.name].attrs["plane"], d.role) for d in switches)
    assert per_plane == {(f"plane{p}", r): n for p in range(1, 9) for r, n in (("leaf", 64), ("spine", 32))}
    assert Counter(devs[lk.b_device].attrs["plane"] for lk in hosts) == {f"plane{p}": 2048 for p in range(1, 9)}
    assert be.bisection is not None and be.bisection.ratio == 1
    # optics: one single-port 400G optic per NIC; one twin-port optic per switch cage (2 ports each:
    # 16,384 leaf downlinks, 16,384 leaf uplinks, 16,384 spine downlinks)
    cab = plan.cabling
    assert cab is not None and cab.transceivers["backend"] == 16_384 + 3 * 16_384 // 2
    assert plan.bom is not None
    per_endpoint = plan.bom.backend_fabric_usd / len(hosts)
    # the catalog's prices, not DeepSeek's, set the figure: it lands within 15% of the paper's $4.39k
    assert abs(per_endpoint - DEEPSEEK_USD_PER_ENDPOINT) / DEEPSEEK_USD_PER_ENDPOINT < 0.15, per_endpoint


@pytest.mark.large
def test_compare_two_tier_planes_against_a_three_tier_tree(cli: Callable[..., object]) -> None:
    """The same 16,384 GPUs as one 3-tier fat tree (h100-16k) and as 8 planes of 2 tiers: the planes
    drop the core layer and a third of the optics and cost less per endpoint, as the paper finds."""
    r = cli("compare", "--sites", "--markdown", DESIGNS / "h100-16k.yaml", DESIGNS / "deepseek-8plane-16k.yaml")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    rows = site_cells(r.output)  # type: ignore[attr-defined]
    three, planes = rows["h100-16k"], rows["deepseek-8plane-16k"]
    assert three[1] == planes[1] == "16,384"
    assert three[2].endswith(" / 256") and planes[2] == "512 / 256 / 0"  # no core layer
    assert (three[-2], planes[-2]) == ("1", "8")

    def usd(cell: str) -> float:
        return float(cell.strip("$").replace(",", ""))

    assert usd(planes[-1]) < usd(three[-1])
    assert int(planes[5].replace(",", "")) < int(three[5].replace(",", ""))  # fewer transceivers


@pytest.mark.large
def test_every_plane_is_proven_non_blocking_on_its_own(split: Plan, compiled: Callable[..., Plan]) -> None:
    for plan in (split, compiled("deepseek-8plane-16k")):
        be = plan.networks.backend
        assert be.planes is not None and be.plane_bisection is not None
        assert [pb.plane for pb in be.plane_bisection] == [f"plane{p + 1}" for p in range(be.planes)]
        # each plane's hosts' bandwidth: the backend server-leaf links' speeds, by their leaf's plane
        devs = plan.index()
        hosts: Counter[str] = Counter()
        for lk in plan.links:
            if lk.network == "backend" and lk.tier == "server-leaf":
                hosts[devs[lk.b_device].attrs["plane"]] += lk.speed_gbps
        for pb in be.plane_bisection:
            # half the plane's hosts' bandwidth crosses its cut, all of it carried
            assert pb.demand_gbps == hosts[pb.plane] // 2 and pb.ratio == 1 and pb.max_flow_gbps == pb.demand_gbps


# quadplane-131k cut to 16 servers in units of 8: the same parts, NICs and switches broken out
QUAD = DESIGNS / "quadplane-131k.yaml"
QUAD_SMALL = (
    "compute.count=16",
    "backend.su_size=8",
    "storage.count=8",
    "storage.capacity_pb=2",
    "name=quadplane-small",
)


@pytest.fixture(scope="module")
def quad() -> Plan:
    return compile_file(QUAD, list(QUAD_SMALL))[0]


def test_breakout_cabling_one_optic_per_nic_each_leg_to_its_own_switch(quad: Plan) -> None:
    cat = quad.catalog
    devs = quad.index()
    be = quad.networks.backend
    assert (be.planes, be.speed_gbps, be.switch_model) == (4, 200, "TH6-64x1600G@8x200G")
    assert cat.switches["TH6-64x1600G@8x200G"].ports == 512  # 64 x 1.6T as 512 x 200G
    nics = 16 * 8
    legs: dict[tuple[str, int], set[str]] = {}
    for c in quad.cables or []:
        if c.network != "backend":
            continue
        for k in c.links:
            lk = quad.links[k]
            if lk.tier == "server-leaf":
                assert (c.a_transceiver, c.b_transceiver) == ("OSFP-800G-DR4-4x200G", "OSFP-1.6T-DR8-8x200G")
                assert (c.a_fanout, c.b_fanout) == ("FANOUT-MPO12APC-4LC-1M", "FANOUT-MPO16APC-8LC-1M")
                nic = int(lk.a_port.removeprefix("mlx5_")) // 4
                legs.setdefault((lk.a_device, nic), set()).add(lk.b_device)
            else:
                assert c.a_transceiver == c.b_transceiver == "OSFP-1.6T-DR8-8x200G"
            # each link its own duplex LC fiber, within the 200G-DR1 optics' reach
            assert c.media == "smf" and cat.cables[c.catalog].fiber_connector == "lc-duplex"
            assert max(c.length_m) <= c.reach_m <= 500
    # the four legs of every NIC reach four different switches, one in each plane
    assert len(legs) == nics
    assert all(len(sw) == 4 and len({devs[s].attrs["plane"] for s in sw}) == 4 for sw in legs.values())
    # the BoM: one 800G optic and one 4-way fan-out per NIC; one DR8 and one 8-way fan-out per switch cage
    cab = quad.cabling
    assert cab is not None
    host_links = sum(1 for lk in quad.links if lk.network == "backend" and lk.tier == "server-leaf")
    trunk_links = sum(1 for lk in quad.links if lk.network == "backend" and lk.tier == "leaf-spine")
    switch_cages = (host_links + 2 * trunk_links) // 8
    assert cab.transceiver_parts["OSFP-800G-DR4-4x200G"] == nics
    assert cab.transceiver_parts["OSFP-1.6T-DR8-8x200G"] == switch_cages
    assert cab.cable_parts["FANOUT-MPO12APC-4LC-1M"] == nics
    assert cab.cable_parts["FANOUT-MPO16APC-8LC-1M"] == switch_cages
    bom = {ln.part: ln.quantity for ln in (quad.bom.lines if quad.bom else [])}
    assert bom["OSFP-800G-DR4-4x200G"] == nics and bom["FANOUT-MPO16APC-8LC-1M"] == switch_cages
    assert bom["cx8-800g-osfp@4x200G"] == nics  # the card itself, once per NIC


def test_host_side_plane_map_and_network_operator_template(
    split: Plan, split_files: dict[str, str], compiled: Callable[..., Plan]
) -> None:
    files = split_files
    devs = split.index()
    doc = yaml.safe_load(files["hosts/gpu001/planes.yaml"])
    assert [n["nic"] for n in doc["nics"]] == list(range(8))
    for n in doc["nics"]:
        # NIC k's two legs: ports 2k and 2k+1, plane1 and plane2, each on a leaf of its plane and rail k
        assert [leg["rdma"] for leg in n["legs"]] == [f"mlx5_{2 * n['nic']}", f"mlx5_{2 * n['nic'] + 1}"]
        assert [leg["plane"] for leg in n["legs"]] == ["plane1", "plane2"]
        for leg in n["legs"]:
            assert devs[leg["leaf"]].attrs["plane"] == leg["plane"] and f"-rail{n['nic']}-leaf" in leg["leaf"]
            lk = next(lk for lk in split.links if lk.a_device == "gpu001" and lk.a_port == leg["rdma"])
            assert (lk.b_device, lk.b_port) == (leg["leaf"], leg["leaf_port"])
            assert leg["address"].endswith("/31")
    # NVIDIA Network Operator: the ConnectX-8 (PCI device 1023) in Spectrum-X multiplane mode, 2 planes
    tpl = yaml.safe_load(files["hosts/network-operator/nicconfigurationtemplate.yaml"])
    assert tpl["kind"] == "NicConfigurationTemplate" and tpl["spec"]["nicSelector"] == {"nicType": "1023"}
    sx = tpl["spec"]["template"]["spectrumXOptimized"]
    assert sx["enabled"] is True and sx["multiplaneMode"] == "swplb" and sx["numberOfPlanes"] == 2
    assert tpl["spec"]["template"]["linkType"] == "Ethernet"
    # the hand-written dual-plane NIC (no plane_split) gets neither
    ref = rendered_files(compiled, "b300-spectrumx")
    assert not [p for p in ref if p.endswith("planes.yaml") or "network-operator" in p]


# OpenAI's MRC fabric (published through OCP, May 2026; Araujo et al., arXiv:2605.04333): every 800G NIC
# split 8 x 100G into 8 planes, "a 64-port 800Gb/s switch now handles 512 ports at 100Gb/s, enabling full
# connectivity for 131,000 GPUs using only two tiers". designs/spectrumx-8plane-131k.yaml is that site
# (16,384 servers of 8 GPUs, units of 256); compiled here cut to 2 of its 64 units, with every switch
# and link of a unit as the full site has them. bench/multiplane.py compiles the whole site.
EIGHT = DESIGNS / "spectrumx-8plane-131k.yaml"
EIGHT_SMALL = ("compute.count=512", "storage.count=8", "storage.capacity_pb=2", "name=eightplane-small")
MRC_RADIX, MRC_GPUS = 512, 131_072


@pytest.fixture(scope="module")
def eight() -> Plan:
    return compile_file(EIGHT, list(EIGHT_SMALL))[0]


@pytest.fixture(scope="module")
def eight_inventory(eight: Plan) -> list[NbObject]:
    """The NetBox inventory of `eight`, made once for the module's tests (which only read it)."""
    from generators.views.netbox_inventory import inventory

    return inventory(eight)


def test_8plane_131k_is_two_tiers_of_512_port_planes(eight: Plan) -> None:
    full = yaml.safe_load(EIGHT.read_text())
    gpus_per_server = eight.catalog.servers[full["compute"]["server"]].gpus
    # the full site: one leg of every GPU in each plane, so a plane's endpoints are all 131,072 GPUs,
    # which a two-tier plane of 512-port switches holds exactly (radix^2 / 2)
    assert full["compute"]["count"] * gpus_per_server == MRC_GPUS == MRC_RADIX**2 // 2
    be = eight.networks.backend
    assert (be.planes, be.tiers, be.speed_gbps, be.cores) == (8, 2, 100, 0)
    assert be.switch_model == "SN5600-512x100G@8x100G"
    radix = eight.catalog.switches[be.switch_model].ports
    assert radix == MRC_RADIX  # 64 x 800G as 512 x 100G
    # a leaf: half its radix down, half up (1:1); each unit of 256 servers one leaf per plane and NIC
    assert (be.downlinks_per_leaf, be.uplinks_per_leaf) == (radix // 2, radix // 2)
    units = 512 // 256
    assert be.leaves == units * 8 * 8
    # every backend switch's ports within its breakout radix, each port used once, on its names
    names = set(eight.catalog.switches[be.switch_model].port_names())
    used: dict[str, set[str]] = {}
    for lk in eight.links:
        if lk.network != "backend":
            continue
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            if eight.index()[dev].kind == "switch":
                assert port not in used.setdefault(dev, set()), (dev, port)
                used[dev].add(port)
    assert max(map(len, used.values())) <= radix
    assert {len(p) for d, p in used.items() if eight.index()[d].role == "leaf"} == {radix}
    assert all(p <= names for p in used.values())
    # every plane proven 1:1 by its own max-flow
    assert be.plane_bisection is not None and [pb.plane for pb in be.plane_bisection] == [
        f"plane{p}" for p in range(1, 9)
    ]
    assert all(pb.ratio == 1 and pb.max_flow_gbps == pb.demand_gbps > 0 for pb in be.plane_bisection)


def test_8plane_nic_legs_reach_8_planes_with_the_plane_on_every_label_row_and_netbox_object(
    eight: Plan, eight_inventory: list[NbObject]
) -> None:
    from generators.views.netbox_model import PLANE_FIELD

    devs = eight.index()
    legs: dict[tuple[str, int], set[str]] = {}
    for lk in eight.links:
        if lk.network == "backend" and lk.tier == "server-leaf" and devs[lk.a_device].kind == "server":
            nic = int(lk.a_port.removeprefix("bnxt_re")) // 8
            legs.setdefault((lk.a_device, nic), set()).add(devs[lk.b_device].attrs["plane"])
    assert len(legs) == 512 * 8 and {len(p) for p in legs.values()} == {8}
    files = render_all(eight)
    rows = list(csv.DictReader(io.StringIO(files["cabling/cables.csv"])))
    backend = [r for r in rows if r["network"] == "backend"]
    assert {r["plane"] for r in backend} == {f"plane{p}" for p in range(1, 9)}
    for r in backend:
        assert r["plane"] == devs[r["b_device"]].attrs["plane"] and r["label"].startswith(f"{r['plane']}: ")
        if r["tier"] == "server-leaf":  # an 800G DR8 broken out 8 x 100G at both ends, a fiber per leg
            assert (r["a_transceiver"], r["b_transceiver"]) == ("OSFP-800G-DR8-8x100G", "OSFP-800G-DR8-8x100G")
    assert all(r["plane"] == "" for r in rows if r["network"] != "backend")
    # NetBox: every switch and cable of a plane carries it in the railyard_plane custom field, nothing else does
    objs = eight_inventory
    network = {c.id: c.network for c in eight.cables or []}
    for o in objs:
        cf = o.fields.get("custom_fields", {})
        if o.endpoint == "dcim/devices":
            assert cf.get(PLANE_FIELD, "") == (devs[o.key].attrs.get("plane") or ""), o.key
        elif o.endpoint == "dcim/cables":
            ends = [t.interface.key.split(":")[0] for t in o.fields["a_terminations"] + o.fields["b_terminations"]]
            backend_cable = network[o.key.split(".")[0]] == "backend"
            want = {devs[d].attrs.get("plane") for d in ends} - {None} if backend_cable else set()
            assert set(cf.get(PLANE_FIELD, "").split()) == want, o.key
        else:
            assert PLANE_FIELD not in cf
    planed = [o for o in objs if PLANE_FIELD in o.fields.get("custom_fields", {})]
    assert {o.endpoint for o in planed} == {"dcim/devices", "dcim/cables"}
    assert sum(o.endpoint == "dcim/cables" for o in planed) == len(backend)


def test_the_push_writes_and_compares_the_plane_custom_field(eight_inventory: list[NbObject]) -> None:
    from generators.handover.netbox_sync import _body, _diff, _Ids
    from generators.views.netbox_model import KEY_FIELD, PLANE_FIELD, PUSHED_FIELD, SITE_FIELD, Ref

    objs = eight_inventory
    ids = _Ids()
    for o in objs:  # as a dry run numbers the objects it would create
        ids.placeholder(o.endpoint, o.key)
    leaf = next(o for o in objs if o.endpoint == "dcim/devices" and o.key.startswith("plane3-"))
    body = _body(leaf, ids, tag_id=7, site="dc1")
    book = {KEY_FIELD: leaf.key, SITE_FIELD: "dc1", PUSHED_FIELD: body["custom_fields"][PUSHED_FIELD]}
    assert body["custom_fields"] == {**book, PLANE_FIELD: "plane3"} and body["tags"] == [7]
    assert body["role"] == ids.ids[tuple(leaf.fields["role"])] and isinstance(leaf.fields["role"], Ref)
    # a switch NetBox holds without its plane (a push before planes) is updated; with it, left alone
    have = {**body, "tags": [{"id": 7}], "custom_fields": book}
    assert _diff(body, have) == ["custom_fields"]
    have["custom_fields"] = {**book, PLANE_FIELD: "plane3"}
    assert _diff(body, have) == []


# The floor of a multi-plane site (site.network_rows: per_plane, as both 131k designs set it): each plane
# has a network row of its own, holding its leaf and spine racks, so its leaf-spine fibers stay in that
# row's trays. At the full 131,072 GPUs each plane has ~131k of them: in one network row shared by every
# plane (per_block) ~1M would fill its trays 256%, above the 50% limit (bench/multiplane.py compiles it).


def test_each_plane_has_a_network_row_of_its_own(eight: Plan) -> None:
    devs = eight.index()
    racks = {r.name: r for r in eight.racks}
    plane_of_rack: dict[str, set[str]] = {}
    for d in eight.devices:
        if d.network == "backend" and d.kind == "switch":
            assert d.rack is not None
            plane_of_rack.setdefault(d.rack, set()).add(d.attrs["plane"])
    # no rack holds two planes' switches, and a plane's leaf and spine racks all stand in one row
    assert {len(p) for p in plane_of_rack.values()} == {1}
    row_of_plane: dict[str, set[str]] = {}
    for rack, (plane,) in plane_of_rack.items():
        row_of_plane.setdefault(plane, set()).add(racks[rack].row)
    assert sorted(row_of_plane, key=lambda p: int(p[5:])) == [f"plane{p}" for p in range(1, 9)]
    assert {len(rows) for rows in row_of_plane.values()} == {1}
    assert len({next(iter(rows)) for rows in row_of_plane.values()}) == 8
    # the plane rows hold both kinds of its switches: every leaf-spine cable runs within its plane's row
    for c in eight.cables or []:
        lk = eight.links[c.links[0]]
        if lk.network == "backend" and lk.tier == "leaf-spine":
            a, b = devs[lk.a_device], devs[lk.b_device]
            assert a.rack is not None and b.rack is not None
            assert racks[a.rack].row == racks[b.rack].row in row_of_plane[a.attrs["plane"]]


def test_a_row_per_plane_takes_the_leaf_spine_fibers_out_of_one_rows_trays(eight: Plan) -> None:
    shared = compile_file(EIGHT, [*EIGHT_SMALL, "site.network_rows=per_block"])[0]
    assert shared.trays is not None and eight.trays is not None

    # the same backend cables, the fullest tray segment fuller in one shared network row than in eight
    def backend(plan: Plan) -> int:
        return sum(c.network == "backend" for c in plan.cables or [])

    assert backend(shared) == backend(eight) > 0
    per_block = max(s.fill for s in shared.trays.segments)
    per_plane = max(s.fill for s in eight.trays.segments)
    assert per_plane * 4 < per_block, (per_plane, per_block)
    # trays an eighth of the design's: the shared row is refused, naming the field and both fixes; a row
    # per plane fits
    thin = ("site.tray.levels=1", "site.tray.depth_mm=150")
    assert per_plane * 8 < 0.5 < per_block * 8
    with pytest.raises(DesignError) as exc:
        compile_file(EIGHT, [*EIGHT_SMALL, "site.network_rows=per_block", *thin])
    p = exc.value.problems[0]
    assert p.field == "site.tray.width_mm" and "full (limit 50%" in p.message
    assert "site.tray.levels" in p.hint and "site.network_rows: per_plane" in p.hint
    fits = compile_file(EIGHT, [*EIGHT_SMALL, *thin])[0]
    assert fits.trays is not None and max(s.fill for s in fits.trays.segments) <= 0.5
    # a row per plane does not lift the check: trays far too small are still refused
    with pytest.raises(DesignError) as exc:
        compile_file(EIGHT, [*EIGHT_SMALL, "site.tray.levels=1", "site.tray.depth_mm=50", "site.tray.width_mm=300"])
    p = exc.value.problems[0]
    assert p.field == "site.tray.width_mm" and "site.network_rows" not in p.hint


def test_a_row_per_plane_needs_planes(cli: Callable[..., object], tmp_path: object) -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / "h100-256.yaml", ["site.network_rows=per_plane"])
    assert [p.field for p in exc.value.problems] == ["site.network_rows"]
    assert "backend.planes" in exc.value.problems[0].message
    out = tmp_path / "out"  # type: ignore[operator]
    r = cli("compile", DESIGNS / "h100-256.yaml", "--out", out, "--set", "site.network_rows=per_plane")
    assert r.exit_code == 2 and "site.network_rows" in r.output, r.output  # type: ignore[attr-defined]
    assert "Traceback" not in r.output and not out.exists()  # type: ignore[attr-defined]


def test_growing_a_multi_plane_site_moves_no_plane_switch_or_server(eight: Plan) -> None:
    from tests.test_growth import moved

    # one more unit of 256 servers: each plane's new leaf racks join its own row beside the standing ones
    head = compile_file(EIGHT, [*EIGHT_SMALL[1:], "compute.count=768"])[0]
    assert len(head.networks.backend.plane_bisection or []) == 8
    assert head.networks.backend.leaves == eight.networks.backend.leaves * 3 // 2
    devs = eight.index()
    gone = moved(eight, head)
    # nothing of the backend or the compute racks moves (the central frontend racks re-balance as the
    # frontend spines grow: a layout of every design, not of the plane rows)
    assert not [n for n in gone if devs[n].network == "backend" or devs[n].kind == "server"], gone
    racks = {r.name: r.row for r in eight.racks}
    assert {racks[r.name] for r in eight.racks if r.role in ("leaf", "spine")} <= {r.row for r in head.racks}
    assert all((r.name, r.row) in {(h.name, h.row) for h in head.racks} for r in eight.racks if r.role != "frontend")
