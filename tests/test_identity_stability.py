"""Identities that technicians print and NetBox stores must not move when an unrelated part of the
design changes: going h100-256 1:1 -> 2:1 drops spine03/04, and with them exactly their cables, their
out-of-band ports and their addresses; every other device keeps its rack, unit, cables, OOB port and
addresses. Pure compiler (the same change pushed into a real NetBox: tests/test_netbox_push.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from generators.model.geometry import device_size
from generators.model.plan import Plan
from generators.stages.placement.oob import oob_groups
from generators.stages.placement.racks import Item, Limits, Rack, limits, pdu_name, pdus_per_rack, stack_units
from generators.views.netbox_inventory import inventory

# h100-256 is 2:1 as shipped; at 1:1 it has four backend spines (and no spare leaf port for the SM
# hosts), so the change is BASE -> HEAD
BASE_SET = ("backend.oversubscription=1:1", "management.backend_attached=0")
HEAD_SET = ("management.backend_attached=0",)


def _link_key(plan: Plan, i: int) -> frozenset[tuple[str, str]]:
    lk = plan.links[i]
    return frozenset({(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)})


def _touches(plan: Plan, i: int, gone: set[str]) -> bool:
    lk = plan.links[i]
    return lk.a_device in gone or lk.b_device in gone


def _only_dropped_changed(base: Plan, head: Plan, gone: set[str]) -> None:
    """Everything of `head` is `base` without the devices `gone` and what touched them."""
    bdev, hdev = base.index(), head.index()
    assert set(bdev) - set(hdev) == gone and set(hdev) <= set(bdev)
    for name, d in hdev.items():
        assert (d.rack, d.unit) == (bdev[name].rack, bdev[name].unit), name
    # links, by their two ends
    keep = {_link_key(base, i) for i in range(len(base.links)) if not _touches(base, i, gone)}
    assert {_link_key(head, i) for i in range(len(head.links))} == keep
    # cables, by id, with the same labels (a label names rack, unit and port of both ends)
    bc = {c.id: c for c in base.cables or []}
    hc = {c.id: c for c in head.cables or []}
    dropped = {k for k, c in bc.items() if any(_touches(base, i, gone) for i in c.links)}
    assert set(hc) == set(bc) - dropped
    for k, c in hc.items():
        assert c.labels == bc[k].labels, k
        assert (c.media, c.catalog, c.length_m) == (bc[k].media, bc[k].catalog, bc[k].length_m), k
    # every address of the network plan
    bn, hn = base.netplan, head.netplan
    assert bn is not None and hn is not None
    for f in ("asn", "loopbacks", "vteps", "hosts", "storage_addresses"):
        b, h = getattr(bn, f), getattr(hn, f)
        assert h == {k: v for k, v in b.items() if k not in gone}, f
    assert hn.networks == bn.networks
    assert hn.oob["subnets"] == bn.oob["subnets"]
    assert hn.oob["ports"] == [r for r in bn.oob["ports"] if r["device"] not in gone]


def test_two_to_one_drops_the_spines_and_nothing_else_moves(compiled: Callable[..., Plan]) -> None:
    base, head = compiled("h100-256", *BASE_SET), compiled("h100-256", *HEAD_SET)
    gone = {d.name for d in base.devices} - {d.name for d in head.devices}
    assert gone == {"spine03", "spine04"}
    _only_dropped_changed(base, head, gone)
    # the 64 leaf-spine cables and the two management cables of the dropped spines, nothing more
    assert len(base.cables or []) - len(head.cables or []) == 66


def test_two_to_one_changes_in_netbox_only_what_touched_the_dropped_spines(compiled: Callable[..., Plan]) -> None:
    """What `railyard netbox push` would send: the spines, their interfaces, cables and addresses go;
    nothing is added; only the leaf ports they were cabled to (their peer) and their rack (its units
    used) change."""
    base, head = compiled("h100-256", *BASE_SET), compiled("h100-256", *HEAD_SET)
    gone = {"spine03", "spine04"}
    b = {(o.endpoint, o.key): o for o in inventory(base)}
    h = {(o.endpoint, o.key): o for o in inventory(head)}
    assert set(h) <= set(b)
    removed = Counter(e for e, _ in set(b) - set(h))
    assert removed == {"dcim/devices": 2, "dcim/interfaces": 130, "dcim/cables": 66, "ipam/ip-addresses": 2}
    peers = {f"{lk.a_device}:{lk.a_port}" for lk in base.links if lk.b_device in gone}
    peers |= {f"{lk.b_device}:{lk.b_port}" for lk in base.links if lk.a_device in gone}
    changed = {k for k in h if h[k].fields != b[k].fields}
    assert {k for e, k in changed if e == "dcim/interfaces"} <= peers
    assert {e for e, _ in changed} <= {"dcim/interfaces", "dcim/racks"}
    assert {k for e, k in changed if e == "dcim/racks"} <= {base.device(n).rack for n in gone}


def test_two_to_one_in_dedicated_spine_racks(compiled: Callable[..., Plan]) -> None:
    """The reference design (spine racks at the end of the row) drops spine09-16 the same way."""
    base = compiled("h100-1024-reference")
    head = compiled("h100-1024-reference", "backend.oversubscription=2:1")
    gone = {d.name for d in base.devices} - {d.name for d in head.devices}
    assert gone == {f"spine{i:02d}" for i in range(9, 17)}
    _only_dropped_changed(base, head, gone)


def test_a_vtep_does_not_move_when_the_router_count_does(compiled: Callable[..., Plan]) -> None:
    """EOS leaves source VXLAN from a loopback of their own: one OOB access switch per rack adds
    routers, which must not renumber the VTEPs (nor the router ids before them)."""
    eos = ("frontend.vendor=eos", "frontend.switch=DCS-7060DX5-64S")
    few, many = compiled("h100-256", *eos), compiled("h100-256", *eos, "oob.racks_per_switch=1")
    assert few.netplan and many.netplan
    assert len(many.netplan.loopbacks) > len(few.netplan.loopbacks)
    assert few.netplan.vteps and many.netplan.vteps == few.netplan.vteps
    assert {k: v for k, v in many.netplan.loopbacks.items() if k in few.netplan.loopbacks} == few.netplan.loopbacks


# ------------------------------------------------------------------------------ placement: units


LIM = Limits(units=47, kw=40.0, endpoints=44)


def _switch_rack(n: int, units: int = 1) -> Rack:
    return Rack("spine", [Item(f"spine{i + 1:02d}", units, 1.0) for i in range(n)])


def test_switches_stack_up_from_a_fixed_anchor_whatever_else_shares_the_rack() -> None:
    four = dict((it.name, u) for it, u in stack_units(_switch_rack(4), 48, LIM))
    two = dict((it.name, u) for it, u in stack_units(_switch_rack(2), 48, LIM))
    assert four == {"spine01": 24, "spine02": 25, "spine03": 26, "spine04": 27}
    assert two == {k: v for k, v in four.items() if k in two}


def test_a_stack_that_reaches_the_oob_unit_continues_below_the_anchor() -> None:
    got = [u for _, u in stack_units(_switch_rack(14, units=2), 48, LIM)]
    assert got == [24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 22, 20]
    full = [u for _, u in stack_units(_switch_rack(47), 48, LIM)]
    assert sorted(full) == list(range(1, 48))  # every usable unit, no collision


def test_servers_still_stack_from_the_bottom() -> None:
    rack = Rack("compute", [Item(f"gpu{i:03d}", 8, 10.0) for i in range(1, 5)], layout="bottom")
    assert [u for _, u in stack_units(rack, 48, LIM)] == [1, 9, 17, 25]


# ------------------------------------------------------------------------------ OOB ports


def _ports(plan: Plan) -> dict[str, tuple[str, str]]:
    return {f"{r['device']}:{r['port']}": (r["switch"], r["switch_port"]) for r in plan.netplan.oob["ports"]}


def test_a_racks_pdus_take_its_first_oob_ports_then_devices_bottom_up(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *BASE_SET)
    devs = plan.index()
    by_rack: dict[str, list[tuple[int, str]]] = {}
    order = {}
    for r in plan.netplan.oob["ports"]:
        d = devs[r["device"]]
        if d.network == "oob":
            continue  # the aggregation switches' management ports come last in their group
        order.setdefault(r["switch"], []).append(d)
    for sw, eps in order.items():
        for d in eps:
            by_rack.setdefault(f"{sw}/{d.rack}", []).append((-1 if d.unit is None else d.unit, d.name))
    for key, seq in by_rack.items():
        units = [u for u, _ in seq]
        assert units == sorted(units), key  # PDUs (zero-U) first, then by unit


def test_a_rack_losing_a_device_does_not_renumber_its_neighbours_oob_ports(compiled: Callable[..., Plan]) -> None:
    """Several racks on one access switch get fixed, even blocks of its ports; removing a device from
    the first rack of a group (by hand: no design knob drops a server in the middle) leaves the
    ports of every other rack as they were."""
    plan = compiled("h100-256")
    design, catalog = plan.design, plan.catalog
    lim = limits(design, catalog)
    rows = {name: i for i, name in enumerate(sorted({r.row for r in plan.racks}))}
    racks = []
    for r in sorted(plan.racks, key=lambda r: (r.row, r.position)):
        mine = sorted(
            (
                d
                for d in plan.devices
                if d.rack == r.name and d.kind != "pdu" and not (d.network == "oob" and d.role == "leaf")
            ),
            key=lambda d: d.unit,
        )
        layout = "bottom" if r.role in ("compute", "storage", "management") else "centre"
        rk = Rack(r.role, [Item(d.name, *device_size(catalog, d)) for d in mine], layout=layout)
        rk.name, rk.row, rk.position = r.name, rows[r.row], r.position
        racks.append(rk)
    agg = next(r for r in racks if any(i.name.startswith("oob-agg") for i in r.items))
    og = oob_groups(racks, agg, plan, catalog, design, lim)
    groups, group_racks, agg_group = og.groups, og.racks, og.agg_group
    gi = next(i for i, g in enumerate(group_racks) if len(g) > 1 and i != agg_group)
    first = group_racks[gi][0]
    victim = next(it for it in first.items[1:-1] or first.items)
    first.items.remove(victim)
    again = oob_groups(racks, agg, plan, catalog, design, lim).groups

    def slots(gs: list[list[Any]]) -> dict[str, tuple[int, int]]:
        return {e[0]: (g, k) for g, grp in enumerate(gs) for k, e in enumerate(grp) if e is not None}

    before, after = slots(groups), slots(again)
    assert victim.name in before and victim.name not in after
    # the devices above it in its own rack slide down a unit and a port; the other racks keep theirs
    own = {it.name for it in first.items} | {
        pdu_name(design, first.name, k) for k in range(pdus_per_rack(design, catalog, first.role))
    }
    assert {k: v for k, v in after.items() if k not in own} == {
        k: v for k, v in before.items() if k not in own and k != victim.name
    }
    assert all(after[k][0] == gi for k in own)


@pytest.mark.parametrize("sets", [BASE_SET, HEAD_SET, ()])
def test_oob_ports_and_addresses_follow_the_port(compiled: Callable[..., Plan], sets: tuple[str, ...]) -> None:
    """An address is fixed by the access port (a replaced server gets the same one), so stable ports
    are stable addresses: every address is unique and its host part follows the port's position."""
    plan = compiled("h100-256", *sets)
    addrs = [r["address"] for r in plan.netplan.oob["ports"]]
    assert len(addrs) == len(set(addrs))
    assert len(_ports(plan)) == len(addrs)
