"""Placement: the floor (rows of rack positions, aisles, keep-outs), racks by role, every device in a
rack and rack unit, PDUs, and the out-of-band network rewired rack-locally.

Where things stand decides what the cables can be, so this stage only places; `generators.stages.cabling`
measures the routes and picks the media from what it finds here. The layout is built from blocks:

* a block is one fabric's scalable units (2-tier) or one pod (3-tier): its compute rows, split in
  two halves around the block's network row;
* the network row holds the block's backend leaf racks, centred in the row, and its spine racks,
  placed by `site.spine_rack_position`: `middle` between the two halves of the leaf racks (the
  playbook's virtual modular switch), `end`/`start` at the end of the row (dedicated network racks,
  NVIDIA's reference); top-of-rack leaves stand mid-rack among their servers instead. Which compute
  and leaf racks a block has, and the default spine position, is the `backend.placement` strategy's
  (`strategies`: one class each);
* central racks (backend cores, frontend spines and service leaves, OOB aggregation, storage,
  management) fill the free positions of the network row of block `site.central_block` (the first unless set),
  then rows of their own.

Rows are either generated (`site.floor.row_positions` per row, blocks in columns so the hall stays
roughly square) or given in `site.rows`, filled in order. Keep-outs block the positions they cover.

Modules: `racks` (items, racks, packing, PDUs, units in a rack), `strategies`, `contents` (the racks a
design needs), `floor` (rows and their geometry), `oob` (rack-local access switch groups), `cooling`,
`checks` (power, feeds, rows, floor load), `records` (the plan's racks and floor sections); this module
is the stage.
"""

from __future__ import annotations

from collections import defaultdict

from generators.model.catalog import Catalog
from generators.model.design import rack_model_key
from generators.model.errors import DesignError
from generators.model.plan import Device, Plan
from generators.model.sections import PlanWarning
from generators.model.vocabulary import Kind, Role
from generators.stages.fabric import Builder
from generators.stages.oob import Host, build_oob, oob_sizing, sizing_group
from generators.stages.placement.checks import check_racks, check_rows
from generators.stages.placement.contents import all_racks, rack_contents
from generators.stages.placement.cooling import add_cdus, cooling_section
from generators.stages.placement.floor import (
    arrange,
    blocked_positions,
    check_floor,
    name_racks,
    outline,
    row_geometry,
)
from generators.stages.placement.oob import oob_groups, switch_numbers
from generators.stages.placement.power import add_sidecars, power_section
from generators.stages.placement.racks import (
    Item,
    limits,
    max_pdus_per_rack,
    pdu_feed,
    pdu_name,
    rack_pdus,
    stack_units,
)
from generators.stages.placement.records import floor_record, rack_record


def place(plan: Plan, catalog: Catalog) -> None:
    """The placement stage: racks on the floor, devices in racks and units, PDUs, rack-local OOB."""
    design = plan.design
    site = design.site
    # the out-of-band network is built here, once the racks are known: sites put the access switches
    # in the racks they serve
    lim = limits(design, catalog)

    n_aggs = 2 if design.oob.uplink == "aggregation" else 0
    for _ in range(6):
        contents = rack_contents(plan, design, catalog, lim, n_aggs)
        blocked: dict[str, set[int]] = {}
        for _ in range(6):
            src = arrange(contents, design, catalog, blocked)
            while src.manual and len(src.rows) < len(site.rows):
                src.take()  # declared rows left empty still stand on the floor and carry trays
            width, depth = row_geometry(src, design)
            again = blocked_positions(src.rows, design)
            if again == blocked:
                break
            blocked = again
        else:
            raise DesignError.one(
                "site.floor.keepouts",
                "could not lay rows out around the keep-outs",
                "give the rows explicitly in site.rows",
            )
        racks = all_racks(contents)
        name_racks(racks, src.rows)
        add_cdus(plan, racks, design, catalog)
        add_sidecars(plan, racks, design)
        og = oob_groups(racks, contents.agg_rack, plan, catalog, design, lim)
        groups, agg_group = og.groups, og.agg_group
        need = 2 * oob_sizing(catalog, design, [len(g) for g in groups], sizing_group(groups, agg_group))[1]
        if need == n_aggs:
            break
        n_aggs = need
    room = outline(design, width, depth)
    check_floor(src, design, room)

    # devices into racks and units
    by_name = {d.name: d for d in plan.devices}
    b = Builder(catalog, plan.devices, plan.links, by_name)
    numbers = switch_numbers(og, [r.positions for r in src.rows], lim.endpoints + max_pdus_per_rack(design, catalog))
    info = build_oob(
        b, design, groups, agg_group, [Host(h.name, first) for h, (first, _) in zip(og.hosts, numbers, strict=True)]
    )
    unit_of: dict[str, tuple[str, int]] = {}
    for r in racks:
        for it, u in stack_units(r, site.rack.units, lim):
            unit_of[it.name] = (r.name, u)
    # each group's access switch stands in its host rack (placement.oob), in the unit kept free for it
    host = dict(enumerate(og.hosts))
    oob_model = catalog.switches[design.oob.switch]
    top = site.rack.units - oob_model.rack_units + 1
    hosted: dict[str, int] = defaultdict(int)  # a rack system's rack hosts several, stacked down from the top
    for d in plan.devices:
        if d.network == "oob" and d.role == "leaf":
            rk = host[d.attrs["group"]]
            unit_of[d.name] = (rk.name, top - hosted[rk.name] * oob_model.rack_units)
            hosted[rk.name] += 1
            rk.items.append(Item(d.name, oob_model.rack_units, oob_model.power_w / 1000))
    for d in plan.devices:
        if d.name in unit_of:
            d.rack, d.unit = unit_of[d.name]
            if (d.kind == "cdu" and catalog.cdus[d.model].placement == "in_row") or d.role == Role.POWER_SIDECAR:
                d.unit = None  # it is the whole position, not a unit in a rack
    # PDUs: zero-U, in the rear channels; 2N: A and B feeds alternately, N+1: a feed each (pdu_feed)
    for r in racks:
        for k in range(rack_pdus(design, catalog, r)):
            feed, n = pdu_feed(design, k)
            dev = Device(
                pdu_name(design, r.name, k),
                Kind.PDU,
                Role.PDU,
                site.rack.pdu,
                attrs={"feed": feed.upper(), "slot": f"P{feed.upper()}{n}"},
            )
            dev.rack, dev.unit = r.name, None
            plan.devices.append(dev)
    check_racks(racks, design, catalog)
    plan.cooling = cooling_section(racks, src.rows, design, catalog)
    if site.floor.max_load_kg_m2 is not None and plan.cooling is None:
        plan.warnings.append(
            PlanWarning(
                "site.floor.max_load_kg_m2",
                "not checked: the catalog weighs rack systems and CDUs only, and this "
                "design has neither; check the racks' weight with their vendors",
            )
        )
    check_rows(racks, src.rows, design, catalog, plan.cooling)
    plan.power = power_section(racks, design, catalog)
    plan.networks.oob = info
    plan.racks = [rack_record(r, src.rows, design, catalog) for r in sorted(racks, key=lambda r: (r.row, r.position))]
    plan.floor = floor_record(src.rows, design, room, rack_model_key(design, catalog))
