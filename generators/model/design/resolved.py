"""The resolved design as the stages read it: server names, the backend's speed, the chassis with the
catalog's defaults filled in, the storage fabric's ports, the catalog rack, tenants' servers, and a
rack system's design turned into its trays (`resolve_system`). Pure functions of a validated design."""

from __future__ import annotations

import hostlist

from generators.model.catalog import Catalog, ServerConfig
from generators.model.design.schema import Design
from generators.model.errors import DesignError, Problem
from generators.model.yamlload import SourceMap, where


def server_width(count: int) -> int:
    return max(3, len(str(count)))


def server_count(design: Design) -> int:
    """compute.count: the design's own, or racks x trays for a rack system (resolve_system sets it)."""
    count = design.compute.count
    assert count is not None  # the schema requires it without compute.system, resolve_system sets it with one
    return count


def server_names(design: Design) -> list[str]:
    count = server_count(design)
    w = server_width(count)
    return [f"{design.compute.hostname_prefix}{i:0{w}d}" for i in range(1, count + 1)]


def backend_speed(design: Design, catalog: Catalog) -> int:
    """Gb/s of every backend link: backend.speed, else the backend NIC's native speed."""
    if design.backend.speed is not None:
        return design.backend.speed
    srv = catalog.servers[design.compute.server]
    assert srv.backend is not None  # the loader refused a GPU server without backend NICs
    return catalog.nics[srv.backend.nic].speed_gbps


def _fabric_nic_for_management(design: Design, catalog: Catalog) -> str | None:
    """The NIC a backend-attached management node (UFM, subnet manager) must carry on this fabric, when the
    management model's own cannot run the fabric's speed: the compute servers' backend NIC (the NIC of the
    fabric the node sits on, e.g. a ConnectX-8 on XDR where mgmt-1u has a ConnectX-7). None: keep its own."""
    mm = catalog.servers.get(design.management.server)
    srv = catalog.servers.get(design.compute.server or "")
    if mm is None or mm.backend is None or not design.management.backend_attached or srv is None:
        return None
    if srv.backend is None:
        return None
    speed = backend_speed(design, catalog)
    own = catalog.nics[mm.backend.nic]
    fabric = catalog.nics[srv.backend.nic]
    if speed in (own.speed_gbps, *own.speeds_gbps) or speed not in (fabric.speed_gbps, *fabric.speeds_gbps):
        return None
    return srv.backend.nic


def management_model(design: Design, catalog: Catalog) -> str:
    """The catalog key of the management nodes as they sit on this backend: management.server, or its
    variant carrying the fabric's NIC (`with_management_on_fabric` adds it), `<server>@<nic>`."""
    nic = _fabric_nic_for_management(design, catalog)
    return design.management.server if nic is None else f"{design.management.server}@{nic}"


def with_management_on_fabric(design: Design, catalog: Catalog) -> Catalog:
    """The catalog plus the management model `management_model` names when it is a variant: the same node
    with the fabric's NIC in place of its own backend NIC (one per backend port as before), so UFM on an
    XDR fabric needs no catalog overlay. The plan's catalog records the variant, and the BoM prices its NIC."""
    key = management_model(design, catalog)
    if key == design.management.server or key in catalog.servers:
        return catalog
    base = catalog.servers[design.management.server]
    nic = key.split("@", 1)[1]
    assert base.backend is not None  # _fabric_nic_for_management returns None without one
    derived = base.model_copy(
        update={
            "backend": base.backend.model_copy(update={"nic": nic}),
            "description": f"{base.description}, with the backend fabric's NIC ({nic}) in place of {base.backend.nic}",
        }
    )
    return catalog.model_copy(update={"servers": {**catalog.servers, key: derived}})


def resolved_config(design: Design, catalog: Catalog) -> ServerConfig:
    base = catalog.servers[design.compute.server].defaults
    over = {k: v for k, v in design.compute.config.model_dump().items() if v is not None}
    return base.model_copy(update=over)


def storage_fabric_ports(design: Design, catalog: Catalog) -> list[str]:
    """The compute servers' ports on the dedicated storage fabric, in leaf order (port p to leaf side p)."""
    fab = design.storage.fabric
    if fab is None:
        return []
    ports = catalog.servers[design.compute.server].storage_ports
    return ports[: fab.ports_per_server or len(ports)]


def storage_fabric_speed(design: Design, catalog: Catalog) -> int:
    """The compute servers' storage port speed: the fabric's, or the frontend NIC's native one."""
    fab = design.storage.fabric
    assert fab is not None
    return fab.speed or catalog.nics[resolved_config(design, catalog).frontend_nic].speed_gbps


def rack_model_key(design: Design, catalog: Catalog) -> str | None:
    """The catalog rack a design uses: the named one, else the one matching its units and footprint."""
    r = design.site.rack
    if r.model is not None:
        return r.model
    for key, m in sorted(catalog.racks.items()):
        if (m.units, m.width_mm, m.depth_mm) == (r.units, r.width_mm, r.depth_mm):
            return key
    return None


def attached_nodes(design: Design) -> str:
    """What the backend-attached management nodes are, in the backend technology's words."""
    return "subnet-manager nodes" if design.backend.technology == "infiniband" else "backend-attached management nodes"


def tenant_members(design: Design) -> dict[str, list[str]]:
    """Servers of each tenant, in server order (the design is already validated)."""
    order = {h: i for i, h in enumerate(server_names(design))}
    out: dict[str, list[str]] = {}
    for t in design.tenants:
        members: set[str] = set()
        for su in t.scalable_units:
            first = (su - 1) * design.backend.su_size
            members.update(list(order)[first : first + design.backend.su_size])
        for expr in t.servers:
            members.update(h for h in hostlist.expand_hostlist(expr) if h in order)
        out[t.name] = sorted(members, key=order.__getitem__)
    return out


def resolve_system(design: Design, catalog: Catalog, src: SourceMap) -> Design:
    """A design of rack-scale systems as the stages read it: compute.server the system's compute tray,
    compute.count racks x trays, and backend.su_size the system's scalable unit (su_racks x trays) unless
    the design sets it. The scalable unit stays counted in servers (compute trays), as for every design:
    tenants' scalable_units, leaves_per_rail and the Slurm blocks all count servers; it must hold whole
    racks, since an NVLink domain is never split between units."""
    c = design.compute
    if c.system is None:
        return design
    problems = [
        Problem(
            f"compute.{f}",
            "is set together with compute.system: a rack system's servers are its "
            "compute trays (compute.racks x trays)",
            f"remove compute.{f}, or remove compute.system and compute.racks",
            where(src, ("compute", f)),
        )
        for f in ("server", "count")
        if f in c.model_fields_set
    ]
    rs = catalog.rack_systems.get(c.system)
    if rs is None:
        problems.append(
            Problem(
                "compute.system",
                f"unknown rack system {c.system!r}",
                f"use one of: {', '.join(sorted(catalog.rack_systems)) or 'none in the catalog'}",
                where(src, ("compute", "system")),
            )
        )
    if problems:
        raise DesignError(problems)
    assert rs is not None and c.racks is not None
    b = design.backend
    su = b.su_size if "su_size" in b.model_fields_set else rs.su_racks * rs.trays
    bad: list[tuple[str, str, str]] = []
    if su % rs.trays:
        bad.append(
            (
                "backend.su_size",
                f"{su} servers is not a whole number of {c.system} racks ({rs.trays} compute "
                "trays each): a scalable unit holds whole NVLink domains",
                f"use a multiple of {rs.trays}, e.g. {rs.su_racks * rs.trays} (NVIDIA's {rs.su_racks} racks)",
            )
        )
    elif su % b.leaves_per_rail:
        bad.append(
            (
                "backend.leaves_per_rail",
                f"{b.leaves_per_rail} leaves per rail do not split a {su}-tray scalable unit evenly",
                f"use a divisor of {su}",
            )
        )
    if design.site.rack.servers_per_rack is not None:
        bad.append(
            (
                "site.rack.servers_per_rack",
                f"is set, but a {c.system} rack holds its {rs.trays} compute trays",
                "remove site.rack.servers_per_rack",
            )
        )
    if bad:
        raise DesignError([Problem(f, m, fx, where(src, tuple(f.split(".")))) for f, m, fx in bad])
    compute = c.model_copy(update={"server": rs.tray, "count": c.racks * rs.trays})
    return design.model_copy(update={"compute": compute, "backend": b.model_copy(update={"su_size": su})})
