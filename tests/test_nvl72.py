"""Rack-scale systems (GB200/GB300 NVL72): the catalog's rack_systems, compute: {system, racks}, the racks
as placed (trays, NVLink switch trays, power shelves, management switches, kW), the backend as NVIDIA
sizes it (4 rails, leaves per scalable unit of 8 racks) at 1, 2, 4 and 8 units, the Slurm blocks (one per
rack) and the BoM (one line per rack).

Counts are derived from the design's rules (racks, trays, rails, leaves_per_rail, the switch radix, the
ratio) and the catalog, not copied from a compiled output."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from fractions import Fraction

import hostlist
import pytest
import yaml

from generators.compiler import compile_file
from generators.model.catalog import RackSystem
from generators.model.design import ratio_value
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.sections import SlurmBlock as Block
from generators.stages.slurm import check_blocks, check_topology_yaml, slurm_blocks
from tests.conftest import DESIGNS, rendered_files

Compiled = Callable[..., Plan]
GB200, GB300 = "gb200-nvl72-1152", "gb300-nvl72-4608"
NO_TENANTS = "tenants=[]"  # the shipped tenants rent units a smaller variant does not have


def _system(plan: Plan) -> RackSystem:
    assert plan.design.compute.system is not None
    return plan.catalog.rack_systems[plan.design.compute.system]


def _refused(name: str, *sets: str) -> list[tuple[str, str]]:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{name}.yaml", list(sets))
    return [(p.field, p.message) for p in exc.value.problems]


# ------------------------------------------------------------------------------------- the racks


@pytest.mark.parametrize("name", [GB200, GB300])
def test_each_system_rack_holds_its_fixed_contents_and_draws_the_systems_power(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    rs, cat = _system(plan), plan.catalog
    by_rack: dict[str, list] = defaultdict(list)
    for d in plan.devices:
        if d.rack is not None:
            by_rack[d.rack].append(d)
    nvl = {r.name: r for r in plan.racks or [] if any(d.network == "nvlink" for d in by_rack[r.name])}
    assert len(nvl) == plan.design.compute.racks
    want_kw = (
        cat.servers[rs.tray].power_kw * rs.trays
        + cat.switches[rs.nvlink_switch].power_w / 1000 * rs.nvlink_switches
        + cat.switches[rs.mgmt_switch].power_w / 1000 * rs.mgmt_switches
    )
    for rack in nvl.values():
        devs = by_rack[rack.name]
        kinds = Counter((d.kind, d.role, d.model) for d in devs)
        assert kinds == {
            ("server", "compute", rs.tray): rs.trays,
            ("switch", "nvlink", rs.nvlink_switch): rs.nvlink_switches,
            ("pdu", "power-shelf", rs.power_shelf): rs.power_shelves,
            ("switch", "leaf", rs.mgmt_switch): rs.mgmt_switches,
        }, rack.name
        assert rack.power_kw == pytest.approx(want_kw)
        assert rack.power_kw <= plan.design.site.rack.power_kw
        assert rack.pdus == 0  # the power shelves feed the busbar
        units = sorted(u for d in devs for u in range(d.unit, d.unit + _units(plan, d)))
        assert len(units) == len(set(units)) == rack.units_used <= rs.rack_units
    # a rack is one NVLink domain: its trays are consecutive servers, the same ones the Slurm block holds
    servers = [d.name for d in plan.devices if d.kind == "server"]
    assert len(servers) == rs.trays * plan.design.compute.racks
    first_rack = {d.rack for d in plan.devices if d.name in servers[: rs.trays]}
    assert len(first_rack) == 1


def _units(plan: Plan, d) -> int:  # type: ignore[no-untyped-def]
    cat = plan.catalog
    if d.kind == "pdu":
        return cat.pdus[d.model].rack_units
    if d.kind == "switch":
        return cat.switches[d.model].rack_units
    return cat.servers[d.model].rack_units


def test_nvlink_switch_trays_and_power_shelves_are_on_the_oob_of_their_own_rack(compiled: Compiled) -> None:
    plan = compiled(GB200)
    idx = plan.index()
    links: dict[str, list] = defaultdict(list)
    for lk in plan.links:
        links[lk.a_device].append(lk)
        links[lk.b_device].append(lk)
    managed = [d for d in plan.devices if d.network == "nvlink" or d.role == "power-shelf"]
    assert len(managed) == plan.design.compute.racks * (_system(plan).nvlink_switches + _system(plan).power_shelves)
    for d in managed:
        (lk,) = links[d.name]  # the management port only: the NVLink backplane is not routed
        other = idx[lk.b_device if lk.a_device == d.name else lk.a_device]
        assert (lk.network, other.network, other.role) == ("oob", "oob", "leaf")
        assert other.rack == d.rack  # the rack's own management switch


def test_every_tray_is_a_slurm_node_with_its_gpus_and_one_block_per_rack(compiled: Compiled) -> None:
    plan = compiled(GB200)
    rs = _system(plan)
    files = rendered_files(compiled, GB200)
    nodes = [ln for ln in files["slurm/nodes.conf"].splitlines() if ln.startswith("NodeName=")]
    named = [h for ln in nodes for h in hostlist.expand_hostlist(ln.split()[0].removeprefix("NodeName="))]
    servers = [d.name for d in plan.devices if d.kind == "server"]
    assert named == servers
    gpus = plan.catalog.servers[rs.tray].gpus
    assert all(f"Gres=gpu:{gpus}" in ln for ln in nodes)
    block = files["slurm/topology-block.conf"].splitlines()
    blocks = [hostlist.expand_hostlist(ln.split("Nodes=")[1]) for ln in block if ln.startswith("BlockName=")]
    rack_of = {d.name: d.rack for d in plan.devices if d.kind == "server"}
    assert len(blocks) == plan.design.compute.racks
    assert all(len(b) == rs.trays and len({rack_of[h] for h in b}) == 1 for b in blocks)
    sizes = [int(s) for s in next(ln for ln in block if ln.startswith("BlockSizes=")).split("=")[1].split(",")]
    racks = plan.design.compute.racks
    assert sizes == [rs.trays * 2**k for k in range(int(math.log2(racks)) + 1)]


def test_a_block_that_splits_a_rack_or_loses_a_node_is_refused(compiled: Compiled) -> None:
    plan = compiled(GB200)
    blocks, sizes = slurm_blocks(plan)
    nodes = [d.name for d in plan.devices if d.kind == "server"]
    assert check_blocks(blocks, sizes, nodes) == []
    short = [Block(blocks[0].name, blocks[0].nodes[:-1]), *blocks[1:]]
    assert any("fewer than the base block size" in p.message for p in check_blocks(short, sizes, nodes))
    assert any("in no block" in p.message for p in check_blocks(short, sizes, nodes))
    assert any("power of two" in p.message for p in check_blocks(blocks, [18, 54], nodes))


def test_the_bom_prices_the_rack_system_once_per_rack(compiled: Compiled) -> None:
    plan = compiled(GB200)
    rs = _system(plan)
    bom = plan.bom
    assert bom is not None
    by_part = {ln.part: ln for ln in bom.lines}
    line = by_part[plan.design.compute.system]
    assert (line.quantity, line.unit_usd) == (plan.design.compute.racks, rs.price.usd)
    # its parts are in that line, not priced again
    assert rs.tray not in by_part and rs.nvlink_switch not in by_part and rs.power_shelf not in by_part
    oob_access = sum(1 for d in plan.devices if d.network == "oob" and d.role == "leaf")
    in_systems = plan.design.compute.racks * rs.mgmt_switches
    oob_lines = [ln for ln in bom.lines if ln.category == "oob" and ln.part == plan.design.oob.switch]
    assert sum(ln.quantity for ln in oob_lines) == oob_access - in_systems
    enclosures = sum(ln.quantity for ln in bom.lines if ln.kind == "rack" and ln.category == "rack")
    cdu_positions = sum(1 for r in plan.racks or [] if r.role == "cdu")  # an in-row CDU is not an enclosure
    assert enclosures == len(plan.racks or []) - plan.design.compute.racks - cdu_positions


# ------------------------------------------------------------------------------------- the fabric


def _spines(leaves: int, up: int, radix: int) -> int:
    """Spines of a 2-tier fat tree: each leaf's uplinks split evenly over the spines (up / S links to
    each), and a spine's ports take every leaf's share: the fewest S dividing up with leaves * up / S <=
    radix."""
    return next(s for s in range(1, up + 1) if up % s == 0 and leaves * (up // s) <= radix)


# the shipped GB200 design sets NVIDIA's spine layer (tests/test_published_rows.py); unset, the spines are the
# fewest that fit, which these rules derive
AUTO_SPINES = ("backend.pods=scalable_units", "backend.spines_per_group=null", "backend.spine_downlinks=null")


@pytest.mark.parametrize(("name", "sus"), [(GB300, 1), (GB300, 2), (GB300, 4), (GB300, 8), (GB200, 1), (GB200, 2)])
def test_backend_counts_per_tier_follow_the_rules(compiled: Compiled, name: str, sus: int) -> None:
    rs_racks = 8  # NVIDIA's scalable unit (rack_systems.*.su_racks)
    auto = AUTO_SPINES if name == GB200 else ()
    plan = compiled(name, f"compute.racks={sus * rs_racks}", NO_TENANTS, *auto)
    rs, cat, be = _system(plan), plan.catalog, plan.design.backend
    assert rs.su_racks == rs_racks and be.su_size == rs.su_racks * rs.trays  # su_size counted in trays
    tray = cat.servers[rs.tray]
    assert tray.backend is not None
    rails = tray.backend.count  # one rail per tray NIC index
    nics = sus * be.su_size * rails
    down = be.su_size // be.leaves_per_rail
    up = math.ceil(Fraction(down) / ratio_value(be.oversubscription))
    radix = cat.switches[be.switch].ports
    leaves = sus * rails * be.leaves_per_rail
    assert leaves <= radix  # two tiers at these sizes
    net = plan.networks.backend
    tiers = Counter(lk.tier for lk in plan.links if lk.network == "backend")
    roles = Counter(d.role for d in plan.devices if d.kind == "switch" and d.network == "backend")
    assert (net.rails, net.tiers, net.scalable_units) == (rails, 2, sus)
    assert roles == {"leaf": leaves, "spine": _spines(leaves, up, radix)}
    assert tiers == {"server-leaf": nics, "leaf-spine": leaves * up}
    # every NIC once (each tray's NIC i on a rail-i leaf of its unit), ratio and bisection measured
    per_port = Counter(
        (lk.a_device, lk.a_port) for lk in plan.links if lk.tier == "server-leaf" and lk.network == "backend"
    )
    assert len(per_port) == nics and set(per_port.values()) == {1}
    assert net.oversubscription.measured == "1:1" and net.bisection.ratio == 1.0


def test_each_gb200_leaf_serves_one_rack(compiled: Compiled) -> None:
    """NVIDIA's GB200 leaf takes one rack's 18 trays on its rail (leaves_per_rail 8 = the unit's 8 racks):
    every backend leaf's servers stand in one rack, and each rack's trays reach one leaf per rail."""
    plan = compiled(GB200)
    devs = plan.index()
    racks_of: dict[str, set[str | None]] = defaultdict(set)
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf":
            racks_of[lk.b_device].add(devs[lk.a_device].rack)
    rs = _system(plan)
    assert len(racks_of) == plan.design.compute.racks * 4 and all(len(r) == 1 for r in racks_of.values())
    per_leaf = Counter(lk.b_device for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf")
    assert set(per_leaf.values()) == {rs.trays}


# ------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("sets", "field"),
    [
        (("compute.count=288",), "compute.count"),
        (("compute.server=hgx-b200",), "compute.server"),
        (("compute.system=gb200-nvl36",), "compute.system"),
        (("site.rack.power_kw=120",), "site.rack.power_kw"),
        (("site.rack.units=42",), "site.rack.units"),
        (("backend.su_size=100",), "backend.su_size"),
        (("oob.switch=AS4630-54TE",), "oob.switch"),
        (("site.rack.servers_per_rack=9",), "site.rack.servers_per_rack"),
    ],
)
def test_a_rack_system_design_that_cannot_stand_is_refused_at_the_field(sets: tuple[str, ...], field: str) -> None:
    assert field in [f for f, _ in _refused(GB200, *sets)]


def test_a_compute_tray_alone_is_not_a_server_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    problems = _refused("h100-256", "compute.server=gb200-compute-tray")
    assert "compute.server" in [f for f, _ in problems]
    assert any("compute.system: gb200-nvl72" in m or "gb200-nvl72" in m for _, m in problems)


def test_racks_without_a_system_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert "compute.racks" in [f for f, _ in _refused("h100-256", "compute.racks=4")]


def test_a_rack_system_whose_parts_do_not_add_up_is_refused_in_the_catalog() -> None:
    problems = _refused(GB200, "catalog.rack_systems.gb200-nvl72.nvlink_links=1000")
    assert any(f.endswith("rack_systems.gb200-nvl72.nvlink_links") for f, _ in problems), problems
    problems = _refused(GB200, "catalog.rack_systems.gb200-nvl72.power_shelves=3")
    assert any(f.endswith("rack_systems.gb200-nvl72.power_shelves") for f, _ in problems), problems


def test_the_nvlink_backplane_is_listed_per_rack_as_internal_and_never_routed(compiled: Compiled) -> None:
    plan = compiled(GB200)
    rs = _system(plan)
    rows = rendered_files(compiled, GB200)["cabling/internal.csv"].splitlines()[1:]
    nvl_racks = {d.rack for d in plan.devices if d.network == "nvlink"}
    assert sorted(r.split(",")[0] for r in rows) == sorted(nvl_racks)
    assert all(r.split(",")[4:] == [str(rs.nvlink_links), str(rs.nvlink_cables), "no", "no"] for r in rows)
    # not in the routed cable plan: no cable has an NVLink switch tray's port at either end
    assert plan.cables is not None
    ends = {e for lk in plan.links for e in (lk.a_device, lk.b_device) if lk.network != "oob"}
    assert not any(d.network == "nvlink" and d.name in ends for d in plan.devices)
    assert "cabling/internal.csv" not in rendered_files(compiled, "h100-256")


def test_topology_yaml_holds_the_tree_as_default_and_the_racks_as_blocks(compiled: Compiled) -> None:
    plan = compiled(GB200)
    files = rendered_files(compiled, GB200)
    doc = yaml.safe_load(files["slurm/topology.yaml"])
    nodes = [d.name for d in plan.devices if d.kind == "server"]
    assert check_topology_yaml(doc, nodes) == []
    tree, block = doc
    assert (tree["topology"], tree["cluster_default"], block["topology"], block["cluster_default"]) == (
        "fabric",
        True,
        "nvlink",
        False,
    )
    conf = [ln for ln in files["slurm/topology-block.conf"].splitlines() if ln.startswith("BlockName=")]
    assert [f"BlockName={b['block']} Nodes={b['nodes']}" for b in block["block"]["blocks"]] == conf
    leaves = [ln for ln in files["slurm/topology.conf"].splitlines() if ln.startswith("SwitchName=")]
    assert len(tree["tree"]["switches"]) == len(leaves)
    assert "slurm/topology.yaml" not in rendered_files(compiled, "h100-256")


@pytest.mark.parametrize(
    ("breaks", "says"),
    [
        (lambda d: d[0].pop("cluster_default"), "cluster_default"),
        (lambda d: d[1]["block"]["blocks"][1].update(nodes=d[1]["block"]["blocks"][0]["nodes"]), "more than one block"),
        (lambda d: d[1]["block"].update(block_sizes=[18, 54]), "power of two"),
        (lambda d: d[1].update(blocks=[]), "unknown attributes"),
        (lambda d: d[0]["tree"]["switches"][0].update(children="x"), "`children` or `nodes`"),
        (lambda d: d.append({"cluster_default": False, "topology": "x", "flat": True}), "first attribute"),
    ],
)
def test_a_topology_yaml_broken_on_purpose_is_caught(compiled: Compiled, breaks, says: str) -> None:  # type: ignore[no-untyped-def]
    plan = compiled(GB200)
    doc = yaml.safe_load(rendered_files(compiled, GB200)["slurm/topology.yaml"])
    breaks(doc)
    problems = check_topology_yaml(doc, [d.name for d in plan.devices if d.kind == "server"])
    assert any(says in m for m in problems), problems


def test_a_tenant_renting_part_of_a_rack_is_refused() -> None:
    problems = _refused(GB200, 'tenants=[{name: a, servers: ["gpu[001-010]"]}]')
    assert [f for f, _ in problems] == ["tenants.0"]


@pytest.mark.daemons
def test_slurmctld_2205_takes_the_nvl72_tree_and_nodes(compiled: Compiled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Debian's slurmctld 22.05 (no block plugin, no topology.yaml) keeps accepting topology.conf and the
    trays as nodes; the block files are checked by railyard's own rules above."""
    from tests.realtools import run_slurmctld
    from tests.test_slurm_ib_daemons import slurm_conf_for_test

    plan = compiled(GB200)
    conf, extra = slurm_conf_for_test(rendered_files(compiled, GB200))
    r = run_slurmctld(tmp_path, conf, extra)
    assert r.errors == [] and r.warnings == [], r.log
    servers = [d.name for d in plan.devices if d.kind == "server"]
    assert sorted(r.nodes_parsed) == sorted(servers)
    assert r.nodes_parsed[servers[0]]["Gres"] == f"gpu:{plan.catalog.servers[_system(plan).tray].gpus}"
    leaves = {sw for sw, info in r.topology_parsed.items() if info["nodes"]}
    assert {n for sw in leaves for n in r.topology_parsed[sw]["nodes"]} == set(servers)


def test_three_tiers_at_4_sus_give_each_spine_as_many_core_links_as_leaf_links(compiled: Compiled) -> None:
    """GB200 at 4 units outgrows two tiers of QM9700; at 1:1 a spine's uplinks to the cores match the
    downlinks its pod uses, not its full half of ports (a pod that does not fill the spines bought cores
    and optics for ports nothing fed)."""
    plan = compiled(GB200, "compute.racks=32", NO_TENANTS)
    net = plan.networks.backend
    assert net.tiers == 3 and plan.design.backend.oversubscription == "1:1"
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    per_core: Counter[str] = Counter()
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "leaf-spine":
            down[lk.b_device] += 1
        elif lk.network == "backend" and lk.tier == "spine-core":
            up[lk.a_device] += 1
            per_core[lk.b_device] += 1
    assert set(up) == set(down) and all(up[s] == down[s] for s in down)
    assert sum(up.values()) == sum(down.values())
    radix = plan.catalog.switches[plan.design.backend.switch].ports
    assert max(down.values()) <= radix // 2 and max(per_core.values()) <= radix
    assert net.oversubscription.measured == "1:1" and net.bisection.ratio == 1.0
