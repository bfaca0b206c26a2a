"""Rack geometry: heights in a rack and the size of each device, from the catalog. Placement puts
devices at these heights, the cable plan measures its runs from them and NetBox gets their sizes.
"""

from __future__ import annotations

from generators.model.catalog import Catalog
from generators.model.plan import Device

U_MM = 44.45  # one rack unit
BASE_MM = 100.0  # plinth and bottom frame below U1
TOP_MM = 100.0  # roof frame above the top unit


def rack_height_mm(units: int) -> float:
    return BASE_MM + units * U_MM + TOP_MM


def unit_centre_mm(unit: int, height: int) -> float:
    """Height above the floor of the middle of a device occupying `height` units from `unit` up."""
    return BASE_MM + (unit - 1 + height / 2) * U_MM


def device_size(catalog: Catalog, dev: Device) -> tuple[int, float]:
    """(rack units, kW) of a device."""
    if dev.kind in ("server", "management"):
        m = catalog.servers[dev.model]
        return m.rack_units, m.power_kw
    if dev.kind == "storage":
        s = catalog.storage_servers[dev.model]
        return s.rack_units, s.power_kw
    if dev.kind == "switch":
        sw = catalog.switches[dev.model]
        return sw.rack_units, sw.draw_w / 1000
    if dev.kind == "pdu":
        return catalog.pdus[dev.model].rack_units, 0.0
    if dev.kind == "cdu":
        cdu = catalog.cdus[dev.model]
        # an in-row CDU is fed by the facility's mechanical power, not from the rack position it stands on
        return cdu.rack_units, cdu.power_kw if cdu.placement == "in_rack" else 0.0
    raise ValueError(f"no size for {dev.kind}")
