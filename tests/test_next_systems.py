"""The systems issue 41 plans next, as shipped designs: Vera Rubin NVL72 on Spectrum-X (vr-nvl72-576,
vr-nvl72-1152), an AMD Instinct MI355X RoCE cluster (mi355x-1024-roce) and AMD Helios racks (helios-576),
and a Helios rack on a floor rated below its weight.

Sources, and what they do not give:

- NVIDIA's Vera Rubin NVL72 AI Factory RA
  (https://docs.nvidia.com/reference-architectures/vera-rubin-nvl72-ai-factory/networking-physical-topologies.md
  and network-logical-architecture.md, looked up 2026-12) states the compute fabric's rules: Spectrum-X
  Ethernet, "a full non-blocking fat tree", leaf-spine, "rail-optimized ... through their respective
  ConnectX-9 SuperNICs", the converged fabric's "two 400 Gb/s ports to two separate switches", and compute
  merged into the converged fabric at small design points. Its per-size switch and cable tables were not
  readable in the stored copies railyard's engineers can search, so no count below is copied from an RA
  table: each is derived from those rules and the published system specs (18 compute trays of 4 Rubin
  GPUs, 9 NVLink switch trays and 4 power shelves of 110 kW per rack, 1.6 Tb/s of scale-out per GPU) and
  the leaf's radix (Spectrum-6 SN6810: 102.4 Tb/s, 128 x 800G). The merged small-size fabric is not built.
- AMD publishes the MI355X node's NICs (8 Pollara 400, one per GPU) but no per-size cluster table; Helios
  has no public cluster reference at all (searched 2026-12). Their counts follow the same way from the
  rails and the switch radix.

Every expectation is computed here from those rules, then compared with the compiled plan."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from generators.model.catalog import RackSystem
from generators.model.plan import Plan, required
from tests.conftest import DESIGNS, rendered_files, site_cells

Compiled = Callable[..., Plan]
VR = ["vr-nvl72-576", "vr-nvl72-1152"]
MI355X, HELIOS = "mi355x-1024-roce", "helios-576"
KYBER = "vru-kyber-800vdc-1152"  # Vera Rubin Ultra (Kyber) racks on 800 VDC power sidecars


def _system(plan: Plan) -> RackSystem:
    assert plan.design.compute.system is not None
    return plan.catalog.rack_systems[plan.design.compute.system]


def _fewest_spines(leaves: int, uplinks: int, radix: int) -> int:
    """The fewest spines of a plane that take every leaf's uplinks in equal bundles (a leaf's uplinks
    split evenly over its spines) within the spine's ports."""
    return next(s for s in range(1, uplinks + 1) if uplinks % s == 0 and leaves * uplinks // s <= radix)


def _backend(plan: Plan) -> tuple[list[str], list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    sw = [d for d in plan.devices if d.kind == "switch" and d.network == "backend"]
    leaves = [d.name for d in sw if d.role == "leaf"]
    spines = [d.name for d in sw if d.role == "spine"]
    down = [(lk.a_device, lk.b_device) for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"]
    up = [(lk.a_device, lk.b_device) for lk in plan.links if lk.network == "backend" and lk.tier == "leaf-spine"]
    return leaves, spines, down, up


# ------------------------------------------------------------------------------ Vera Rubin NVL72


@pytest.mark.parametrize("name", VR)
def test_vr_nvl72_racks_are_the_published_system(compiled: Compiled, name: str) -> None:
    """18 compute trays (4 Rubin + 2 Vera), 9 NVLink 6 switch trays, 4 x 110 kW shelves per rack; the
    rack draws 180-230 kW (Max-Q to Max-P) and 3 of its 4 shelves carry it (N+1); 100% liquid cooled."""
    plan = compiled(name)
    rs, cat = _system(plan), plan.catalog
    racks = required(plan.design.compute.racks, "compute.racks")
    assert (rs.trays, rs.nvlink_switches, rs.power_shelves) == (18, 9, 4)
    tray = cat.servers[rs.tray]
    assert (tray.gpus, tray.cpu_sockets, tray.defaults.cpu) == (4, 2, "nvidia-vera")
    assert cat.pdus[rs.power_shelf].capacity_kw == 110
    kw = rs.power_kw(cat)
    assert 180 <= kw <= 230
    assert (rs.power_shelves - 1) * cat.pdus[rs.power_shelf].capacity_kw >= kw  # N+1
    assert rs.liquid_fraction == 1.0
    by_rack: dict[str, Counter[str]] = defaultdict(Counter)
    for d in plan.devices:
        if d.rack is not None:
            by_rack[d.rack][d.model] += 1
    systems = [r for r, c in by_rack.items() if c[rs.nvlink_switch]]
    assert len(systems) == racks
    for r in systems:
        c = by_rack[r]
        assert (c[rs.tray], c[rs.nvlink_switch], c[rs.power_shelf], c[rs.mgmt_switch]) == (18, 9, 4, 2), r
    servers = [d for d in plan.devices if d.kind == "server" and d.model == rs.tray]
    assert len(servers) * tray.gpus == 72 * racks
    # every rack's heat goes to liquid
    heat = {h.rack: h for h in required(plan.cooling, "cooling").racks}
    assert all(heat[r].air_kw == 0 and heat[r].liquid_kw == pytest.approx(kw) for r in systems)
    # the shelves are on each system rack's sheet and in the rack's BoM line
    files = rendered_files(compiled, name)
    assert all(files[f"cabling/racks/{r}.html"].count(f"({rs.power_shelf})") == 4 for r in systems)
    [line] = [ln for ln in required(plan.bom, "bom").lines if ln.part == plan.design.compute.system]
    assert line.quantity == racks and f"4 x {rs.power_shelf}" in line.description


@pytest.mark.parametrize("name", VR)
def test_vr_nvl72_compute_fabric_is_rail_optimized_non_blocking_and_dual_plane(compiled: Compiled, name: str) -> None:
    """1.6 Tb/s per GPU as 2 x 800GbE, one port per plane: 8 rails per tray. A unit of 8 racks has 144
    trays per rail; an SN6810 at 1:1 takes at most 64 of its 128 ports down, so the fewest equal leaves
    of a unit's rail are 3 of 48 down and 48 up. Each plane's leaves go to spines of their own (the
    fewest that take 48 uplinks per leaf in equal bundles within 128 ports)."""
    plan = compiled(name)
    rs, cat = _system(plan), plan.catalog
    racks = required(plan.design.compute.racks, "compute.racks")
    nic = cat.nics[required(cat.servers[rs.tray].backend, "backend").nic]
    assert nic.ports * nic.speed_gbps == 1600 and nic.speed_gbps == 800
    rails, units, radix = 4 * nic.ports, racks // rs.su_racks, cat.switches["SN6810-CL"].ports
    trays_per_rail = rs.su_racks * rs.trays
    per_leaf = next(
        trays_per_rail // n
        for n in range(1, trays_per_rail + 1)
        if trays_per_rail % n == 0 and trays_per_rail // n <= radix // 2
    )
    assert per_leaf == 48
    leaves_per_rail = trays_per_rail // per_leaf
    leaves, spines, down, up = _backend(plan)
    assert len(leaves) == units * rails * leaves_per_rail
    assert len(down) == racks * rs.trays * rails
    assert len(up) == len(down)  # 1:1
    plane_leaves = len(leaves) // 2
    per_plane = _fewest_spines(plane_leaves, per_leaf, radix)
    assert len(spines) == 2 * per_plane
    assert {"vr-nvl72-576": (24, 12), "vr-nvl72-1152": (48, 24)}[name] == (len(leaves), len(spines))
    # the planes stay apart: a leaf's uplinks all go to its plane's spines
    # rail r is in plane r mod 2 (a GPU's two ports are consecutive rails)
    plane_of_leaf = {d.name: d.attrs["rail"] % 2 for d in plan.devices if d.network == "backend" and d.role == "leaf"}
    spines_of: dict[str, set[str]] = defaultdict(set)
    for a, b in up:
        spines_of[a].add(b)
    by_plane: dict[int, set[str]] = defaultdict(set)
    for leaf, ss in spines_of.items():
        by_plane[plane_of_leaf[leaf]] |= ss
    assert len(by_plane) == 2 and not set.intersection(*by_plane.values())
    assert all(len(s) == per_plane for s in by_plane.values())
    facts = required(plan.networks.backend, "backend")
    assert facts.oversubscription.measured == "1:1"
    assert facts.bisection is not None and facts.bisection.ratio == 1.0


@pytest.mark.parametrize("name", VR)
def test_vr_nvl72_counts_and_buys_only_pluggable_optics(compiled: Compiled, name: str) -> None:
    """The SN6810's fibers plug into its co-packaged optics: every backend fiber has one pluggable optic
    per ConnectX-9 port (each port its own cage) and none at a switch, so the backend's transceiver total
    is its server-leaf link count and the BoM has no line for the switch's own optical ports."""
    plan = compiled(name)
    cpo = [k for k, x in plan.catalog.transceivers.items() if x.built_in]
    # the catalog's co-packaged ports (SN6810's and Q3450-LD's); this design's fibers end in SN6810's
    assert "SN6810-CPO-port" in cpo
    ends = {t for c in required(plan.cables, "cables") for t in (c.a_transceiver, c.b_transceiver) if t}
    assert "SN6810-CPO-port" in ends
    _, _, down, _ = _backend(plan)
    assert required(plan.cabling, "cabling").transceivers["backend"] == len(down)
    bom = required(plan.bom, "bom")
    assert not [ln for ln in bom.lines if ln.part in cpo]
    assert sum(ln.quantity for ln in bom.lines if ln.kind == "transceiver" and ln.category == "backend") == len(down)


def test_vr_nvl72_two_sizes_share_the_rack_and_scale_by_units(compiled: Compiled) -> None:
    small, large = (compiled(n) for n in VR)
    assert _system(small) == _system(large)
    assert required(small.design.compute.racks, "racks") * 2 == required(large.design.compute.racks, "racks")
    s_leaves, _, s_down, _ = _backend(small)
    l_leaves, _, l_down, _ = _backend(large)
    assert (len(l_leaves), len(l_down)) == (2 * len(s_leaves), 2 * len(s_down))


# ------------------------------------------------------------------------------------ AMD MI355X


def test_mi355x_cluster_is_eight_pollara_rails_non_blocking(compiled: Compiled) -> None:
    """8 MI355X and 8 Pollara 400 per node (1:1), 16 nodes (128 GPUs) per rack; a 128 x 400GbE leaf at
    1:1 takes 64 nodes of a rail, so a 64-node unit has one leaf per rail."""
    plan = compiled(MI355X)
    model = plan.catalog.servers[plan.design.compute.server or ""]
    backend = required(model.backend, "backend")
    assert (model.gpus, backend.nic, backend.count) == (8, "pollara-400", 8)
    assert plan.catalog.nics["pollara-400"].speed_gbps == 400
    nodes = [d for d in plan.devices if d.kind == "server" and d.model == plan.design.compute.server]
    assert len(nodes) * model.gpus == 1024
    per_rack = Counter(d.rack for d in nodes)
    assert set(per_rack.values()) == {16}
    leaves, spines, down, up = _backend(plan)
    radix = plan.catalog.switches[plan.design.backend.switch].ports
    units = len(nodes) // plan.design.backend.su_size
    assert len(leaves) == units * 8
    assert len(down) == len(up) == len(nodes) * 8
    assert len(spines) == math.ceil(len(up) / radix)
    assert (len(leaves), len(spines)) == (16, 8)
    # a node's NIC i (ionic_i) is on its unit's rail-i leaf
    rail_of = {d.name: d.attrs["rail"] for d in plan.devices if d.network == "backend" and d.role == "leaf"}
    for lk in plan.links:
        if lk.network == "backend" and lk.tier == "server-leaf":
            assert rail_of[lk.b_device] == int(lk.a_port.removeprefix("ionic_"))


# ----------------------------------------------------------------------------------------- Helios


def test_helios_rack_is_one_ualink_domain_of_72_gpus(compiled: Compiled) -> None:
    """72 MI455X in 18 trays of 4 per rack, its scale-up switch trays UALink (named so in the BoM and
    the cable sheet, never NVLink), 3 Vulcano 800G per GPU (12 rails), ~3.2 t, one Slurm block per rack."""
    plan = compiled(HELIOS)
    rs, cat = _system(plan), plan.catalog
    racks = required(plan.design.compute.racks, "compute.racks")
    assert (rs.scale_up, rs.trays, cat.servers[rs.tray].gpus) == ("ualink", 18, 4)
    assert cat.switches[rs.nvlink_switch].technology == "ualink"
    assert rs.weight_kg == pytest.approx(7000 * 0.45359237, abs=1)
    backend = required(cat.servers[rs.tray].backend, "backend")
    assert (backend.nic, backend.count, cat.nics[backend.nic].speed_gbps) == ("vulcano-800g", 12, 800)
    blocks = required(plan.slurm, "slurm").topology_blocks
    rack_of = {d.name: d.rack for d in plan.devices}
    assert len(blocks) == racks and {len(b.nodes) for b in blocks} == {rs.trays}
    assert all(len({rack_of[n] for n in b.nodes}) == 1 for b in blocks)  # a block is one rack's domain
    files = rendered_files(compiled, HELIOS)
    bom = files["bom.csv"]
    assert "UALink backplane" in bom and "NVLink" not in bom
    internal = next(v for k, v in files.items() if k.startswith("cabling/") and "internal" in k)
    assert "UALink backplane" in internal and "NVLink" not in internal
    # and the compile's summary table names the switch trays' fabric UALink too
    from rich.console import Console

    from generators.reports.summary import summary_table

    console = Console(width=200, record=True)
    console.print(summary_table(plan))
    table = console.export_text()
    assert "switches: ualink" in table and "nvlink" not in table.lower()
    # 12 rails; a 64 x 800G leaf at 1:1 takes 32 down: a unit's 144 trays per rail on 6 leaves of 24;
    # each rail a fabric of its own over the fewest spines that take its leaves' 24 uplinks
    leaves, spines, down, up = _backend(plan)
    radix = cat.switches[plan.design.backend.switch].ports
    assert len(leaves) == 12 * 6 and len(down) == len(up) == racks * 18 * 12
    assert len(spines) == 12 * _fewest_spines(6, 24, radix) == 36


def test_a_helios_rack_on_a_floor_rated_below_its_weight_is_refused(cli: Callable[..., object], tmp_path: Path) -> None:
    """A 3,175 kg double-wide rack on 1.2 x 1.2 m is 2,205 kg/m2: on a 1,500 kg/m2 floor the compile
    stops (exit 2, nothing written), names the field and the rating that carries it, and that rating
    compiles."""
    out = tmp_path / "out"
    r = cli("compile", DESIGNS / f"{HELIOS}.yaml", "-o", out, "--set", "site.floor.max_load_kg_m2=1500")
    text = " ".join(r.output.split())  # type: ignore[attr-defined]
    assert r.exit_code == 2, text  # type: ignore[attr-defined]
    assert "Traceback" not in text
    assert "site.floor.max_load_kg_m2: rack r01-01 weighs 3,175 kg on 1200 x 1200 mm: 2,205 kg/m2" in text
    assert "over the floor's 1500 kg/m2" in text
    assert "fix: stand the racks on a floor rated for at least 2205 kg/m2" in text
    assert "set site.floor.max_load_kg_m2: 2205" in text
    assert not out.exists()
    ok = cli("compile", DESIGNS / f"{HELIOS}.yaml", "-o", out, "-q", "--set", "site.floor.max_load_kg_m2=2205")
    assert ok.exit_code == 0, ok.output  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------------- all of them


def test_the_new_designs_appear_in_compare_sites(cli: Callable[..., object], compiled: Compiled) -> None:
    names = [*VR, MI355X, HELIOS, KYBER]
    r = cli("compare", "--sites", "--markdown", *[DESIGNS / f"{n}.yaml" for n in names])
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    cells = site_cells(r.output)  # type: ignore[attr-defined]
    assert list(cells) == names
    for n in names:
        plan = compiled(n)
        gpus = sum(plan.catalog.servers[d.model].gpus for d in plan.devices if d.kind == "server")
        assert cells[n][1] == f"{gpus:,}"
        assert cells[n][6] == f"{len(plan.racks):,}"  # the sidecar positions of the 800 VDC site counted
