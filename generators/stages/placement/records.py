"""The plan's racks and floor sections, from the placed racks and rows."""

from __future__ import annotations

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.geometry import rack_height_mm
from generators.model.sections import Floor, FloorRow
from generators.model.sections import Rack as RackRecord
from generators.stages.placement.floor import (
    Rect,
    RowGeom,
)
from generators.stages.placement.racks import (
    Rack,
    rack_pdus,
)


def rack_record(r: Rack, rows: list[RowGeom], design: Design, catalog: Catalog) -> RackRecord:
    row = rows[r.row]
    w, d = design.site.rack.width_mm, design.site.rack.depth_mm
    return RackRecord(
        name=r.name,
        role=r.role,
        row=row.name,
        position=r.position + 1,
        x_mm=round(row.x_mm + r.position * w, 1),
        y_mm=round(row.y_mm, 1),
        width_mm=w,
        depth_mm=d,
        units=design.site.rack.units,
        units_used=r.units,
        power_kw=round(r.kw, 3),
        power_budget_kw=design.site.rack.power_kw,
        pdus=rack_pdus(design, catalog, r),
    )


def floor_record(rows: list[RowGeom], design: Design, room: Rect, rack_model: str | None) -> Floor:
    site = design.site
    return Floor(
        site=site.name,
        rack_model=rack_model,
        outline_mm=[[round(x, 1), round(y, 1)] for x, y in room.corners()],
        rows=[
            FloorRow(
                name=r.name,
                x_mm=round(r.x_mm, 1),
                y_mm=round(r.y_mm, 1),
                positions=r.positions,
                blocked=sorted(p + 1 for p in r.blocked),
            )
            for r in rows
        ],
        keepouts=[k.model_dump() for k in site.floor.keepouts],
        rack_height_mm=round(rack_height_mm(site.rack.units), 1),
    )
