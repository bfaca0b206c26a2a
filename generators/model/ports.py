"""Port tables: the one place a device model's ports are enumerated.

* `port_table`: a switch model's front-panel ports (name, group, role, speeds, connector, cage), cached.
* `port_ends`: per device model of a plan, the cage every port's plug goes into (cable plan and BoM).
* `host_port_speeds`: the speeds every port of a server-like device runs (invariants).
* `backend_ports`: a server's backend ports and their cages (the fabric, the invariants, the two above).

The fabric builder picks ports from a switch's table, the invariants check speeds against it, the cable
plan and the BoM bundle links by its cages, the InfiniBand stage numbers ports in its order and the
renderers list it. Building it once per model keeps all of them agreeing on names, order and cages.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generators.model.catalog import BackendPorts, Catalog, Switch
from generators.model.design import Design, resolved_config
from generators.model.plan import Device, Plan


@dataclass(frozen=True, slots=True)
class Port:
    """One front-panel port of a switch model, in the model's port order."""

    name: str
    group: int  # index into the model's port_groups
    role: str  # any, down, up
    speeds: frozenset[int]
    connector: str
    cage: int  # cage number on the device, from 1; twin-port cages hold two consecutive ports
    sub: int  # position in the cage, from 1
    ports_per_cage: int
    lane_gbps: int | None  # native speed / lanes; None: the catalog does not say


@dataclass(frozen=True, slots=True)
class End:
    """What the cable plan needs of a port: the cage a plug goes into; and what NetBox needs to type
    the port (native speed, protocol, management-only)."""

    connector: str
    cage: int  # cage number on the device (0: a fixed management port)
    ppc: int  # ports per cage
    speed_gbps: int = 1  # native speed of the port
    protocol: str = "ethernet"  # ethernet or infiniband
    mgmt: bool = False  # the device's management or BMC port
    lane_gbps: int | None = None  # native speed / lanes; None: the catalog does not say


def lane_rate(a: End, b: End) -> int | None:
    """A link's lane rate: the slower end's, since a link runs the lanes both ends can (a ConnectX-7 on a
    Quantum-X800 port runs NDR's 100G lanes); None when neither end's catalog entry says."""
    known = [e.lane_gbps for e in (a, b) if e.lane_gbps is not None]
    return min(known) if known else None


# keyed by id(); the model is kept in the value so the id cannot be reused while cached
_PORT_CACHE: dict[int, tuple[Switch, tuple[Port, ...]]] = {}


def port_table(model: Switch) -> tuple[Port, ...]:
    """The switch model's ports in order (cached per model)."""
    hit = _PORT_CACHE.get(id(model))
    if hit is None or hit[0] is not model:
        hit = _PORT_CACHE[id(model)] = (model, _switch_ports(model))
    return hit[1]


def _switch_ports(model: Switch) -> tuple[Port, ...]:
    out: list[Port] = []
    names = iter(model.port_names())
    cage = 0
    for gi, g in enumerate(model.port_groups):
        for i in range(g.count):
            # a group whose count the cage size does not divide ends on a partly used cage, which
            # still takes a number of its own
            if i % g.ports_per_cage == 0:
                cage += 1
            sub = i % g.ports_per_cage + 1
            out.append(
                Port(
                    next(names),
                    gi,
                    g.role,
                    frozenset({g.speed_gbps, *g.speeds_gbps}),
                    g.connector,
                    cage,
                    sub,
                    g.ports_per_cage,
                    g.lane_gbps,
                )
            )
    return tuple(out)


@dataclass(frozen=True, slots=True)
class BackendPort:
    """One backend port of a server model: one rail. `cage` counts from 0 among the backend cages."""

    name: str
    connector: str
    cage: int
    ppc: int


def backend_ports(catalog: Catalog, backend: BackendPorts) -> list[BackendPort]:
    """The server's backend ports in rail order: every port of every backend NIC, each in its NIC's own
    cage, or in the chassis cages the model's `cages` lists (DGX: twin-port cages, two rails each)."""
    nic = catalog.nics[backend.nic]
    n = nic.ports * backend.count
    if backend.cages is None:
        return [BackendPort(backend.name.format(i=i), nic.connector, i, 1) for i in range(n)]
    where = {i: (c, len(cage)) for c, cage in enumerate(backend.cages.ports) for i in cage}
    return [BackendPort(backend.name.format(i=i), backend.cages.connector, *where[i]) for i in range(n)]


def network_protocol(design: Design, network: str) -> str:
    """The protocol a network's links run: the backend's and a dedicated storage fabric's technology
    (InfiniBand or Ethernet); every other network is Ethernet."""
    if network == "backend":
        return "infiniband" if design.backend.technology == "infiniband" else "ethernet"
    if network == "storage" and design.storage.fabric is not None:
        return design.storage.fabric.technology
    return "ethernet"


def port_ends(plan: Plan, catalog: Catalog, design: Design) -> dict[str, dict[str, End]]:
    """Port name -> End, per device model (key "kind:model") of the plan's devices. The cable plan and
    the BoM both count transceivers per cage, so both read this one map."""
    out: dict[str, dict[str, End]] = {}
    cfg = resolved_config(design, catalog)

    # a server's backend NICs speak the backend's protocol (the same ConnectX-7 runs NDR or 400GbE),
    # its storage-fabric ports the storage fabric's
    backend_protocol = network_protocol(design, "backend")
    storage_protocol = network_protocol(design, "storage")
    stor_ports = set(catalog.servers[design.compute.server].storage_ports) if design.storage.fabric else set()

    def nic_ports(
        m: dict[str, End], nic_key: str, count: int, template: str, start: int, protocol: str = "ethernet"
    ) -> int:
        nic = catalog.nics[nic_key]
        for i in range(nic.ports * count):
            m[template.format(i=i)] = End(nic.connector, start, 1, nic.speed_gbps, protocol, lane_gbps=nic.lane_gbps)
            start += 1
        return start

    mgmt = End("rj45", 0, 1, 1, "ethernet", True)

    for d in plan.devices:
        key = f"{d.kind}:{d.model}"
        if key in out:
            continue
        m: dict[str, End] = {}
        if d.kind == "switch":
            sw = catalog.switches[d.model]
            for p in port_table(sw):
                m[p.name] = End(
                    p.connector, p.cage, p.ports_per_cage, max(p.speeds), sw.technology, lane_gbps=p.lane_gbps
                )
            m[sw.mgmt_port] = mgmt
        elif d.kind in ("server", "management"):
            sm = catalog.servers[d.model]
            c = 1
            if sm.backend:
                nic = catalog.nics[sm.backend.nic]
                bps = backend_ports(catalog, sm.backend)
                for bp in bps:
                    m[bp.name] = End(
                        bp.connector, c + bp.cage, bp.ppc, nic.speed_gbps, backend_protocol, lane_gbps=nic.lane_gbps
                    )
                c += max(bp.cage for bp in bps) + 1
            if d.kind == "server":
                nic_key, count = cfg.frontend_nic, cfg.frontend_nic_count
            else:
                nic_key, count = sm.defaults.frontend_nic, sm.defaults.frontend_nic_count
            nic_ports(m, nic_key, count, sm.frontend_port_name, c)
            if d.kind == "server":
                for name in stor_ports & set(m):
                    m[name] = replace(m[name], protocol=storage_protocol)
            m[sm.bmc_port] = mgmt
        elif d.kind == "storage":
            st = catalog.storage_servers[d.model]
            nic_ports(
                m,
                st.nic,
                st.nic_count,
                st.frontend_port_name,
                1,
                storage_protocol if design.storage.fabric else "ethernet",
            )
            m[st.bmc_port] = mgmt
        elif d.kind == "pdu":
            m[catalog.pdus[d.model].mgmt_port] = mgmt
        elif d.kind == "cdu":
            m[catalog.cdus[d.model].mgmt_port] = mgmt
        out[key] = m
    return out


def host_port_speeds(
    catalog: Catalog, dev: Device, fe_nic: str | None = None, fe_count: int | None = None
) -> dict[str, set[int]]:
    """Port name -> speeds of a server-like device, for the invariants. Compute servers pass their
    configured frontend NIC; other devices use their model's. The backend ports are backend_ports',
    as in port_ends and the fabric."""
    out: dict[str, set[int]] = {}
    if dev.kind == "pdu":
        return {catalog.pdus[dev.model].mgmt_port: {1}}
    if dev.kind == "cdu":
        return {catalog.cdus[dev.model].mgmt_port: {1}}
    if dev.kind == "storage":
        st = catalog.storage_servers[dev.model]
        nic = catalog.nics[st.nic]
        for i in range(nic.ports * st.nic_count):
            out[st.frontend_port_name.format(i=i)] = {nic.speed_gbps, *nic.speeds_gbps}
        out[st.bmc_port] = {1}
        return out
    m = catalog.servers[dev.model]
    if m.backend:
        nic = catalog.nics[m.backend.nic]
        for bp in backend_ports(catalog, m.backend):
            out[bp.name] = {nic.speed_gbps, *nic.speeds_gbps}
    nic = catalog.nics[fe_nic or m.defaults.frontend_nic]
    count = m.defaults.frontend_nic_count if fe_count is None else fe_count
    for i in range(nic.ports * count):
        out[m.frontend_port_name.format(i=i)] = {nic.speed_gbps, *nic.speeds_gbps}
    out[m.bmc_port] = {1}
    return out
