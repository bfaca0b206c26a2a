"""The network plane of a device or link, as the fabric wrote it: a multi-plane backend's leaves and
spines carry `plane` (plane1, plane2, ...; backend.planes with spine_grouping: per_plane), and a link is
in the plane of its switch end. Everything else (single-plane fabrics, the frontend, the OOB, per-rail
spine planes, which are rails, not network planes) has no plane: "". Model layer: the cable plan's
labels and the renderers read it alike."""

from __future__ import annotations

from generators.model.plan import Device, Link


def device_plane(d: Device) -> str:
    p = d.attrs.get("plane")
    return p if isinstance(p, str) and p.startswith("plane") else ""


def link_plane(devs: dict[str, Device], lk: Link) -> str:
    """A backend link's plane; a plane switch's management (OOB) cable is in no network plane."""
    if lk.network != "backend":
        return ""
    return device_plane(devs[lk.a_device]) or device_plane(devs[lk.b_device])


def plane_order(p: str) -> int:
    """Sort key of a plane name, in number order (plane2 before plane10); no plane ("") first."""
    return int(p.removeprefix("plane") or 0)


def planes(devs: dict[str, Device]) -> list[str]:
    """The plan's planes, in number order (plane2 before plane10)."""
    found = {device_plane(d) for d in devs.values()} - {""}
    return sorted(found, key=plane_order)
