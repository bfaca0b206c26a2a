"""Growing a site moves nothing that stands (issue 43): a design compiled at two sizes, the devices,
cables and addresses present in both must be the same in both. Sites are built in phases; a second
phase that re-racked, re-labelled or re-addressed the first would send technicians to undo working
equipment. Everything here is compiled output: rack and unit of every device, cable ids and labels
(keyed by the ports a cable joins), every address of the NetBox address plan and the out-of-band port
map, ASNs and loopbacks.

Where the layout genuinely must change (a virtual modular switch's right-hand leaf racks when a spine
rack is added), the change is the one stated, and the review lists it (tests/test_review_diff.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.model.plan import Plan
from generators.views.addresses import addresses
from tests.conftest import DESIGNS

# a rack system's scalable unit is 8 racks (576 GPUs); a cut-down base is a site's first phase, its tenant
# renting the unit that stands (the shipped designs' second tenants rent units that do not exist yet)
ONE_TENANT = "tenants=[{name: acme, scalable_units: [1]}]"
NVL72_1SU = ("compute.racks=8", ONE_TENANT)
NVL72_2SU = (ONE_TENANT,)
# h100-1024-reference as a three-tier fabric of four one-unit pods: a block (network row) per pod
THREE_TIER = ("backend.tiers=3", "backend.sus_per_pod=1")


# Every compiled shipped design (tests/conftest.py COMPILED_EXAMPLES less the `large` h100-16k and
# deepseek-8plane-16k) grown by one scalable unit (compute.count by su_size, compute.racks by 8 for a
# rack system) and, where the hall's generated rows allow, by one row of compute racks (the smallest
# growth that adds a row; a rack system's unit is a row of its own where the rows are 12-16 positions).
# h100-1024-vms is the stated exception (test_the_comparison_sees_a_move). helios-576 grows in rows of 20
# positions: its shipped 12 hold one unit's network row, and a second unit's (8 leaf and 4 spine racks,
# the frontend and central racks) stretches that row, which moves every rack in it (not fixed yet).
GROWTHS = [
    # h100-1024-reference: one more scalable unit of 32 servers (128 -> 160), as the issue measured:
    # 148 devices moved, 1,106 cable labels and 229 addresses changed before
    pytest.param("h100-1024-reference", (), ("compute.count=160",), id="1024-ref-one-unit"),
    # ... as a three-tier fabric, one more pod: its cores stand last among the central racks, so the
    # frontend and storage racks beside them stay (23 devices moved before)
    pytest.param("h100-1024-reference", THREE_TIER, (*THREE_TIER, "compute.count=160"), id="1024-ref-3tier-one-pod"),
    # one more row of compute racks (two units of 8 racks fill row r04)
    pytest.param("h100-1024-reference", (), ("compute.count=192",), id="1024-ref-one-row"),
    pytest.param("h100-1024-reference", ("compute.count=160",), ("compute.count=192",), id="1024-ref-160-192"),
    # the network row after two compute rows (site.compute_rows_before_network): a fixed place, so a unit
    # and a row added later stand after the last compute rack as before
    pytest.param(
        "h100-1024-reference",
        ("site.compute_rows_before_network=2",),
        ("site.compute_rows_before_network=2", "compute.count=192"),
        id="1024-ref-network-row-third",
    ),
    pytest.param("gb200-nvl72-1152", NVL72_1SU, NVL72_2SU, id="nvl72-one-unit"),
    pytest.param("h100-256", (), ("compute.count=64",), id="256-one-unit"),
    pytest.param("h100-256", (), ("compute.count=96",), id="256-one-row"),
    pytest.param("h100-512-roce", (), ("compute.count=96",), id="512-roce-one-unit"),
    pytest.param("h100-512-roce", (), ("compute.count=128",), id="512-roce-one-row"),
    pytest.param("h100-1024-tor", (), ("compute.count=160",), id="tor-one-unit"),
    pytest.param("h100-1024-tor", (), ("compute.count=192",), id="tor-one-row"),
    pytest.param("h100-1024-optimized", (), ("compute.count=160",), id="optimized-one-unit"),
    pytest.param("h100-1024-optimized", (), ("compute.count=192",), id="optimized-one-row"),
    pytest.param("b200-1024", (), ("compute.count=160",), id="b200-one-unit"),
    pytest.param("b200-1024", (), ("compute.count=192",), id="b200-one-row"),
    # 127 servers and the UFM hosts in the last slot of unit 4: unit 5 adds 32 slots
    pytest.param("h100-1016-superpod", (), ("compute.count=159",), id="1016-one-unit"),
    pytest.param("h100-1016-superpod", (), ("compute.count=191",), id="1016-one-row"),
    # ... with a dedicated InfiniBand storage fabric: a leaf pair per unit
    pytest.param("dgx-h100-superpod-4su", (), ("compute.count=159",), id="superpod-one-unit"),
    pytest.param("dgx-h100-superpod-4su", (), ("compute.count=191",), id="superpod-one-row"),
    # units of 72 (one row of 18 racks each)
    pytest.param("b300-xdr", (), ("compute.count=216",), id="b300-xdr-one-unit-row"),
    # units of 64 at two per rack (two rows each); dual-plane per-plane spines; the shipped second tenant
    # arrives with unit 2
    pytest.param("b300-spectrumx", ("compute.count=64", ONE_TENANT), (), id="b300-spectrumx-1-2-units"),
    pytest.param("b300-spectrumx", (), ("compute.count=192",), id="b300-spectrumx-2-3-units"),
    # units of 64, 8 racks; the compute row is 16 positions, so a row is the third unit on
    pytest.param("mi355x-1024-roce", (), ("compute.count=192",), id="mi355x-one-unit"),
    pytest.param("mi355x-1024-roce", (), ("compute.count=320",), id="mi355x-one-row"),
    # rack systems: 8 racks a unit; rows of 12-16 positions hold one unit and its CDUs, rows of 20 two
    pytest.param("vr-nvl72-1152", NVL72_1SU, NVL72_2SU, id="vr-1152-one-unit-row"),
    pytest.param("vr-nvl72-576", (), ("compute.racks=16",), id="vr-576-one-unit-row"),
    pytest.param("gb300-nvl72-spectrumx-576", (), ("compute.racks=16",), id="gb300-sx-one-unit"),
    pytest.param("gb300-nvl72-spectrumx-576", (), ("compute.racks=24",), id="gb300-sx-one-row"),
    pytest.param("gb300-nvl72-4608", NVL72_1SU, ("compute.racks=16", ONE_TENANT), id="gb300-4608-one-unit"),
    pytest.param("gb300-nvl72-4608", NVL72_1SU, ("compute.racks=24", ONE_TENANT), id="gb300-4608-one-row"),
    pytest.param(
        "helios-576", ("site.floor.row_positions=20",), ("site.floor.row_positions=20", "compute.racks=16"), id="helios"
    ),
]


def _cables(plan: Plan) -> dict[frozenset[tuple[str, str, str, str]], tuple[str, list[str]]]:
    """Each cable by the ports it joins: (id, labels)."""
    out = {}
    for c in plan.cables or []:
        ends = frozenset(
            (plan.links[i].a_device, plan.links[i].a_port, plan.links[i].b_device, plan.links[i].b_port)
            for i in c.links
        )
        out[ends] = (c.id, list(c.labels))
    return out


def _addresses(plan: Plan) -> dict[tuple[str, str, str, str], str]:
    """Every planned address by (device, interface, VRF, role)."""
    out = {}
    for a in addresses(plan):
        for dev, ifname in a.on:
            out[(dev, ifname, a.vrf, a.role)] = a.address
    return out


def moved(base: Plan, head: Plan) -> dict[str, tuple[tuple[str | None, int | None], tuple[str | None, int | None]]]:
    """Devices of both whose rack or unit differ: name -> ((rack, unit) before, after)."""
    b, h = base.index(), head.index()
    return {
        n: ((b[n].rack, b[n].unit), (h[n].rack, h[n].unit))
        for n in sorted(set(b) & set(h))
        if (b[n].rack, b[n].unit) != (h[n].rack, h[n].unit)
    }


def _kept(before: object, after: object) -> bool:
    """An identity kept: equal, or (a storage server's addresses by VRF) every VRF's addresses of before
    unchanged in after; a tenant arriving with a new unit adds its VRF's addresses, it changes none."""
    if isinstance(before, dict) and isinstance(after, dict):
        return all(after.get(k) == v for k, v in before.items())
    return before == after


def changed_identities(base: Plan, head: Plan) -> dict[str, list[str]]:
    """What changed for the devices and cables present in both: {kind: [what]}; empty when nothing did."""
    out: dict[str, list[str]] = {}
    out["moved"] = [f"{n} {a} -> {b}" for n, (a, b) in moved(base, head).items()]
    bc, hc = _cables(base), _cables(head)
    out["cables"] = [f"{bc[k]} -> {hc[k]}" for k in bc.keys() & hc.keys() if bc[k] != hc[k]]
    common = set(base.index()) & set(head.index())
    ba, ha = _addresses(base), _addresses(head)
    out["addresses"] = [f"{k}: {ba[k]} -> {ha[k]}" for k in ba.keys() & ha.keys() if ba[k] != ha[k]]
    # an address of a device in both that the head lost or moved to another interface
    out["addresses"] += [f"{k}: {ba[k]} gone" for k in ba.keys() - ha.keys() if k[0] in common]
    bn, hn = base.netplan, head.netplan
    assert bn is not None and hn is not None
    for f in ("asn", "loopbacks", "vteps", "hosts", "storage_addresses"):
        b, h = getattr(bn, f), getattr(hn, f)
        out[f] = [f"{k}: {b[k]} -> {h.get(k)}" for k in b if k in common and not _kept(b[k], h.get(k))]
    bo = {(r["device"], r["port"]): r for r in bn.oob["ports"]}
    ho = {(r["device"], r["port"]): r for r in hn.oob["ports"]}
    out["oob ports"] = [f"{k}: {bo[k]} -> {ho.get(k)}" for k in bo if k[0] in common and bo[k] != ho.get(k)]
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize(("design", "base_set", "head_set"), GROWTHS)
def test_growing_a_site_moves_nothing_that_stands(
    compiled: Callable[..., Plan], design: str, base_set: tuple[str, ...], head_set: tuple[str, ...]
) -> None:
    base, head = compiled(design, *base_set), compiled(design, *head_set)
    # the growth is real: more servers, and every device of the smaller site is still there
    assert len([d for d in head.devices if d.kind == "server"]) > len([d for d in base.devices if d.kind == "server"])
    assert set(base.index()) <= set(head.index())
    assert changed_identities(base, head) == {}
    # and it is not vacuous: the cables and addresses compared are most of the smaller site's
    assert len(_cables(base).keys() & _cables(head).keys()) > len(base.cables or []) // 2
    assert len(_addresses(base).keys() & _addresses(head).keys()) == len(_addresses(base))


def test_the_comparison_sees_a_move(compiled: Callable[..., Plan]) -> None:
    """The virtual modular switch puts its spine racks between the two halves of its leaf racks: one more
    unit needs a second spine rack, and the right-hand leaf rack moves one position, with its devices'
    cable labels and its access switch. That is the stated exception, and the check above would see it."""
    base, head = compiled("h100-1024-vms"), compiled("h100-1024-vms", "compute.count=160")
    racks = {a[0] for a, _ in moved(base, head).values()}
    assert racks == {"r02-09"}, racks  # the right-hand leaf rack, nothing else
    assert {b[0] for _, b in moved(base, head).values()} == {"r02-10"}
    assert changed_identities(base, head).keys() >= {"moved", "cables"}


def test_central_racks_stand_in_the_block_the_design_names(compiled: Callable[..., Plan]) -> None:
    """site.central_block puts the cores (and storage, frontend spines, management) in that pod's
    network row, for a site planned whole (h100-16k: the middle of 16 pods, so the pods' trunks do not
    all crowd the first pod's trays); unset, the first pod's row, which adding pods never moves."""

    def rows(plan: Plan) -> tuple[set[str], dict[int, str]]:
        cores = {d.rack.split("-")[0] for d in plan.devices if d.role == "core" and d.rack}
        spines = {
            int(d.attrs["pod"]): d.rack.split("-")[0]
            for d in plan.devices
            if d.role == "spine" and d.network == "backend" and d.rack
        }
        return cores, spines

    cores, spines = rows(compiled("h100-1024-reference", *THREE_TIER))
    assert len(spines) == 4 and cores == {spines[1]}
    cores, spines = rows(compiled("h100-1024-reference", *THREE_TIER, "site.central_block=2"))
    assert cores == {spines[2]}


def test_a_central_block_beyond_the_design_is_refused(cli: Callable[..., Any]) -> None:
    args = [a for s in (*THREE_TIER, "site.central_block=5") for a in ("--set", s)]
    r = cli("validate", DESIGNS / "h100-1024-reference.yaml", *args)
    assert r.exit_code == 2
    text = r.stderr
    assert "site.central_block: is 5 but the design has 4 blocks" in text and "Traceback" not in text
    assert "use a number from 1 to 4" in text


def test_the_network_row_stands_after_the_compute_rows_the_design_names(compiled: Callable[..., Plan]) -> None:
    """site.compute_rows_before_network: the block's network row (its leaf racks) after that many compute
    rows, the rest of its compute rows after it (deepseek-8plane-16k: 16 of 32, so no server is more than
    an optic's 100 m from its leaves)."""
    for before in (0, 1, 2):
        plan = compiled("h100-1024-reference", f"site.compute_rows_before_network={before}")
        rows = sorted({r.name.split("-")[0] for r in plan.racks})
        leaf_rows = {r.name.split("-")[0] for r in plan.racks if r.role == "leaf"}
        compute_rows = {r.name.split("-")[0] for r in plan.racks if r.role == "compute"}
        assert leaf_rows == {rows[before]}, (before, leaf_rows)
        assert set(rows[:before]) <= compute_rows and len(compute_rows) == 2  # 2 rows of 16, either side


def test_a_recompile_that_moves_what_stands_is_refused_unless_allowed(
    cli: Callable[..., Any], compiled: Callable[..., Plan], tmp_path: Path
) -> None:
    """`compile` into a folder holding the same site's output: a growth that moves nothing writes; one
    that moves a placed device (h100-1024-vms's right-hand leaf rack, the stated exception) is refused,
    exit 2, naming the moves, nothing written, until --allow-moves says the moves are meant."""
    out = tmp_path / "site"
    vms = DESIGNS / "h100-1024-vms.yaml"
    assert cli("compile", vms, "--out", out, "-q").exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    r = cli("compile", vms, "--out", out, "-q", "--set", "compute.count=160")
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    said = " ".join(r.stderr.split())
    moves = moved(compiled("h100-1024-vms"), compiled("h100-1024-vms", "compute.count=160"))
    assert f"--out: {len(moves)} devices of h100-1024-vms that {out}/plan.json places would move: " in said
    (name, ((rack, unit), (to_rack, to_unit))) = sorted(moves.items(), key=lambda m: (m[1][0][0], m[1][0][1], m[0]))[0]
    assert f"{name} {rack} U{unit} -> {to_rack} U{to_unit}" in said
    assert f"and {len(moves) - 10} more" in said and "run again with --allow-moves" in said
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before, "a refusal wrote nothing"
    r = cli("compile", vms, "--out", out, "-q", "--set", "compute.count=160", "--allow-moves")
    assert r.exit_code == 0, r.stderr
    # the reference design grows by a unit into its folder: nothing moves, nothing to allow
    ref = DESIGNS / "h100-1024-reference.yaml"
    assert cli("compile", ref, "--out", tmp_path / "ref", "-q").exit_code == 0
    r = cli("compile", ref, "--out", tmp_path / "ref", "-q", "--set", "compute.count=160")
    assert r.exit_code == 0, r.stderr
