"""Placement strategies: how a design's `backend.placement` makes the compute racks and the backend leaf
racks of each block, and where the block's spine racks stand in its network row unless the design sets
`site.spine_rack_position`. Everything else (spines, cores, the frontend, storage, the floor, the OOB
network) is placed the same way for every strategy.

A new strategy is one class here: a subclass of `Strategy` with its `name` (registered on definition)
and its `racks`; its name joins `backend.placement`'s choices in the design schema, which
tests/test_placement.py holds equal to `STRATEGIES`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal

from generators.model.design import Design
from generators.model.errors import DesignError
from generators.model.plan import Device, Plan
from generators.model.planes import device_plane, plane_order
from generators.stages.placement.racks import Block, Item, Limits, Rack, pack

SpinePosition = Literal["start", "middle", "end"]


@dataclass(slots=True)
class BackendInputs:
    """What a strategy places: the backend's leaves and servers, grouped into blocks (a 2-tier fabric is
    one block, a 3-tier one a block per pod), and where its racks go (`blocks[b].compute`, `.leaves`)."""

    plan: Plan
    design: Design
    lim: Limits  # a rack's usable units, power and OOB endpoints
    item: Callable[[str], Item]  # a device by name as a rack item (its units and power)
    leaves: list[Device]  # the backend leaves, in plan order
    servers: list[Device]  # the compute servers, in plan order
    su_block: dict[int, int]  # scalable unit -> its block
    block_of_server: dict[str, int]
    blocks: list[Block]
    per_rack: int  # servers one compute rack holds (power, units, OOB ports, site.rack.servers_per_rack)


STRATEGIES: dict[str, Strategy] = {}


class Strategy:
    """One value of `backend.placement`."""

    name: ClassVar[str]
    spine_position: ClassVar[SpinePosition]  # a block's spine racks in its network row, by default

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        STRATEGIES[cls.name] = cls()

    def racks(self, x: BackendInputs) -> None:
        """Append each block's compute racks and leaf racks to `x.blocks`."""
        raise NotImplementedError


class DedicatedRacks(Strategy):
    """NVIDIA's reference: servers fill compute racks scalable unit by unit (a rack system's racks are made
    before any strategy runs), each unit's leaves share leaf racks in the block's network row, and the
    spine racks stand at the row's end."""

    name = "dedicated_racks"
    spine_position: ClassVar[SpinePosition] = "end"

    def racks(self, x: BackendInputs) -> None:
        by_su: dict[int, list[Device]] = defaultdict(list)
        for s in x.servers if x.design.compute.system is None else []:
            by_su[s.attrs["su"]].append(s)
        for su in sorted(by_su):
            members = by_su[su]
            b = x.su_block.get(su, 0)
            for k in range(0, len(members), x.per_rack):
                x.blocks[b].compute.append(
                    Rack("compute", [x.item(s.name) for s in members[k : k + x.per_rack]], b, layout="bottom")
                )
        # leaf racks: a scalable unit's leaves together; with a network row per plane, a unit's leaves of
        # one plane together, no rack holding two planes (each plane's racks stand in its own row)
        by_plane = x.design.site.network_rows == "per_plane"
        by_su_leaves: dict[tuple[str, int], list[Item]] = defaultdict(list)
        for lf in x.leaves:
            by_su_leaves[(device_plane(lf) if by_plane else "", lf.attrs["su"])].append(x.item(lf.name))
        for b in range(len(x.blocks)):
            for plane in sorted({p for p, _ in by_su_leaves}, key=plane_order):
                groups = [g for (p, su), g in sorted(by_su_leaves.items()) if p == plane and x.su_block[su] == b]
                racks = pack(groups, x.lim, "leaf", b)
                for r in racks:
                    r.plane = plane
                x.blocks[b].leaves += racks


class VirtualModularSwitch(DedicatedRacks):
    """The playbook's virtual modular switch: the racks of dedicated_racks, but the spine racks stand in
    the middle of the network row, between the two halves of the leaf racks, so leaf-spine runs stay
    short (often copper)."""

    name = "virtual_modular_switch"
    spine_position = "middle"


class TopOfRack(Strategy):
    """A leaf in each server rack (backend.topology: top_of_rack): the leaf mid-rack among the servers it
    serves; no leaf racks. The spine racks stand mid-row."""

    name = "top_of_rack"
    spine_position = "middle"

    def racks(self, x: BackendInputs) -> None:
        by_leaf: dict[str, list[str]] = defaultdict(list)
        for lk in x.plan.links:
            if lk.network == "backend" and lk.tier == "server-leaf" and lk.a_device in x.block_of_server:
                lst = by_leaf[lk.b_device]
                if not lst or lst[-1] != lk.a_device:
                    lst.append(lk.a_device)
        rack = x.design.site.rack
        for lf in x.leaves:
            members = by_leaf[lf.name]
            items = [x.item(h) for h in members]
            half = (len(items) + 1) // 2
            rack_items = [*items[:half], x.item(lf.name), *items[half:]]
            kw = sum(i.kw for i in rack_items)
            units = sum(i.units for i in rack_items)
            if kw > x.lim.kw + 1e-9 or units > x.lim.units:
                over = "site.rack.power_kw" if kw > x.lim.kw + 1e-9 else "site.rack.units"
                raise DesignError.one(
                    over,
                    f"a top-of-rack rack holds leaf {lf.name} and its {len(members)} servers: {kw:.1f} kW "
                    f"and {units}U (plus the out-of-band switch), over the {rack.power_kw} kW / "
                    f"{rack.units}U rack",
                    "raise site.rack.power_kw / units, or lower backend.servers_per_leaf",
                )
            b = x.su_block.get(lf.attrs["su"], 0)
            x.blocks[b].compute.append(Rack("compute", rack_items, b, layout="tor"))
