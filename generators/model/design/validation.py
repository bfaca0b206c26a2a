"""The design against the parts catalog: cross-field rules that need the catalog, each naming the field
the user wrote and a fix that works. `check_against_catalog` returns them all; the loader raises."""

from __future__ import annotations

import difflib
import math
from collections import Counter
from typing import Any

import hostlist

from generators.model.catalog import Catalog
from generators.model.design.resolved import (
    attached_nodes,
    backend_speed,
    rack_model_key,
    resolved_config,
    server_count,
    server_names,
    server_width,
    storage_fabric_ports,
    storage_fabric_speed,
    tenant_members,
)
from generators.model.design.schema import Design
from generators.model.netdesign import DEFAULT_SONIC_RELEASE, SONIC_RIF_MAC
from generators.model.netos import network_os, serving
from generators.model.storage import size_storage
from generators.model.vocabulary import DUTY_TEXT, Duty


def check_against_catalog(design: Design, catalog: Catalog) -> list[tuple[tuple[str, ...], str, str]]:
    """Cross-field rules that need the catalog. Returns (field path, message, fix) triples."""
    out: list[tuple[tuple[str, ...], str, str]] = []

    def bad(path: str, msg: str, fix: str) -> None:
        out.append((tuple(path.split(".")), msg, fix))

    def known(path: str, key: str | None, table: dict[str, Any], what: str) -> bool:
        if key is not None and key not in table:
            close = difflib.get_close_matches(key, list(table), n=1, cutoff=0.6) or difflib.get_close_matches(
                key.lower(), [k.lower() for k in table], n=1, cutoff=0.6
            )
            if close:
                name = next(k for k in table if k.lower() == close[0].lower())
                bad(path, f"unknown {what} {key!r}", f"did you mean {name!r}? (`railyard schema` lists every one)")
            else:
                bad(path, f"unknown {what} {key!r}", f"use one of: {', '.join(sorted(table))}")
            return False
        return True

    c, b, f = design.compute, design.backend, design.frontend
    if known("compute.server", c.server, catalog.servers, "server model"):
        model = catalog.servers[c.server]
        if not model.gpus or model.backend is None:
            bad("compute.server", f"{c.server} has no GPUs or no backend NICs", "pick a GPU server model")

        cfg = resolved_config(design, catalog)
        known("compute.config.cpu", cfg.cpu, catalog.cpus, "CPU")
        if known("compute.config.frontend_nic", cfg.frontend_nic, catalog.nics, "NIC"):
            nic = catalog.nics[cfg.frontend_nic]
            if nic.ports * cfg.frontend_nic_count < f.ports_per_server:
                bad(
                    "frontend.ports_per_server",
                    f"{f.ports_per_server} ports but the server has "
                    f"{cfg.frontend_nic_count} x {cfg.frontend_nic} ({nic.ports} ports each)",
                    "add frontend NICs in compute.config or use fewer ports",
                )
            if f.speed != nic.speed_gbps and f.speed not in nic.speeds_gbps:
                bad(
                    "frontend.speed",
                    f"{f.speed}G is not a speed of {cfg.frontend_nic}",
                    f"use {nic.speed_gbps}G or a NIC that runs {f.speed}G",
                )
        mem = cfg.memory_gb
        if mem % 64:
            bad("compute.config.memory_gb", f"{mem} GB is not a whole number of 64 GB DIMMs", "e.g. 1024 or 2048")
        _check_slots(design, catalog, bad)

    if known("backend.switch", b.switch, catalog.switches, "switch model"):
        sw = catalog.switches[b.switch]
        want = "infiniband" if b.technology == "infiniband" else "ethernet"
        if sw.technology != want:
            bad(
                "backend.switch",
                f"{b.switch} is an {sw.technology} switch but backend.technology is {b.technology}",
                "pick a switch of the backend's technology",
            )
        _check_backend_speed(design, catalog, bad)
    for path, key in (
        ("frontend.switch", f.switch),
        ("frontend.spine_switch", f.spine_switch),
        ("oob.switch", design.oob.switch),
        ("oob.aggregation_switch", design.oob.aggregation_switch),
    ):
        if (
            known(path, key, catalog.switches, "switch model")
            and key is not None
            and catalog.switches[key].technology != "ethernet"
        ):
            bad(path, f"{key} is not an Ethernet switch", "pick an Ethernet switch")

    want_os = network_os(f.vendor).name
    for path, key in (("frontend.switch", f.switch), ("frontend.spine_switch", f.spine_switch)):
        if key in catalog.switches and catalog.switches[key].os != want_os:
            bad(
                path,
                f"{key} runs {catalog.switches[key].os}, but frontend.vendor is {f.vendor}",
                f"pick a {want_os} switch model or set frontend.vendor to match the switch",
            )
    if design.oob.uplink == "frontend":
        if design.oob.aggregation_switch is not None:
            bad(
                "oob.aggregation_switch",
                "is set, but oob.uplink: frontend has no OOB aggregation switches",
                "remove oob.aggregation_switch, or set oob.uplink: aggregation",
            )
        if want_os != "sonic":
            # the uplinks end in the infra VRF of the frontend leaves; only the SONiC renderer writes that
            bad(
                "oob.uplink",
                f"frontend needs a SONiC frontend (frontend.vendor is {f.vendor}): railyard "
                "renders the OOB uplink ports in the leaves' infra VRF for SONiC only",
                "set oob.uplink: aggregation, or frontend.vendor: sonic",
            )
    _check_sonic_releases(design, catalog, bad)
    # a switch stands only where its OS's vendor module can configure it (the frontend: checked above)
    flagged = {p for p, _, _ in out}
    roles: list[tuple[str, str, Duty]] = [("oob.switch", design.oob.switch, Duty.OOB_ACCESS)]
    if design.oob.uplink == "aggregation":
        roles.append(
            (
                "oob.aggregation_switch",
                design.oob.aggregation_switch or f.spine_switch or f.switch,
                Duty.OOB_AGGREGATION,
            )
        )
    roles.append(("backend.switch", b.switch, Duty.INFINIBAND if b.technology == "infiniband" else Duty.ROCE))
    # a switch's OS renders through a package this Python must have (EOS: pyavd, an extra of railyard's)
    chosen = [("frontend.vendor", None, f.vendor), *((p, k, None) for p, k, _ in roles)]
    for path, key, os_name in chosen:
        os_name = os_name or (catalog.switches[key].os if key in catalog.switches else None)
        if os_name is None or tuple(path.split(".")) in flagged:
            continue
        row = network_os(os_name)
        if row.missing():
            bad(
                path,
                f"{key or os_name} runs {os_name}, whose configs railyard renders through the Python package "
                f"{row.requires}, which is not installed",
                f"pip install 'railyard[{row.extra}]' (or {row.requires} from requirements.txt), or pick a "
                "switch of another OS",
            )
            flagged.add(tuple(path.split(".")))
    for path, key, role in roles:
        if key in catalog.switches and tuple(path.split(".")) not in flagged:
            os_ = catalog.switches[key].os
            if role not in network_os(os_).serves:
                bad(
                    path,
                    f"{key} runs {os_}, which railyard cannot configure as {DUTY_TEXT[role]}",
                    f"pick a switch model running {' or '.join(serving(role))}",
                )

    st = design.storage
    if known("storage.server", st.server, catalog.storage_servers, "storage server model"):
        snic = catalog.nics[catalog.storage_servers[st.server].nic]
        sm = catalog.storage_servers[st.server]
        if snic.ports * sm.nic_count < st.ports_per_server:
            bad(
                "storage.ports_per_server",
                f"{st.server} has {snic.ports * sm.nic_count} frontend ports",
                "use fewer ports per storage server",
            )
        if st.speed != snic.speed_gbps and st.speed not in snic.speeds_gbps:
            bad("storage.speed", f"{st.speed}G is not a speed of {sm.nic}", f"use {snic.speed_gbps}G")
        sizing = size_storage(sm, st.count, st.capacity_pb, st.ports_per_server, st.speed)
        if not sizing.fits:
            need = math.ceil(sizing.target_tb / sm.usable_fraction / (sm.drive_bays * sm.drive_tb))
            bad(
                "storage.capacity_pb",
                f"{st.capacity_pb:g} PB usable needs {sizing.drives_per_server} drives in each "
                f"of {st.count} servers but {st.server} has {sm.drive_bays} bays",
                f"set storage.count to at least {need}, or storage.capacity_pb to at most "
                f"{math.floor(st.count * sm.drive_bays * sm.drive_tb * sm.usable_fraction / 100) / 10:g} "
                f"(what {st.count} full servers hold)",
            )
    _check_license(bad, catalog, "storage.license", st.license, "tb")
    if st.fabric is not None:
        _check_storage_fabric(design, catalog, bad, known)
    soft = design.software
    if soft.subnet_manager == "ufm" and b.technology == "infiniband":
        _check_license(bad, catalog, "software.ufm_license", soft.ufm_license, "endpoint")
    if soft.cluster_manager is not None:
        _check_license(bad, catalog, "software.cluster_manager.license", soft.cluster_manager.license, "gpu_year")
    m = design.management
    if (
        known("management.server", m.server, catalog.servers, "server model")
        and m.backend_attached
        and catalog.servers[m.server].backend is None
    ):
        bad("management.backend_attached", f"{m.server} has no backend NIC", "set it to 0 or pick another model")

    _check_site(design, catalog, bad, known)
    _check_rack_system(design, catalog, bad)
    _check_power(design, catalog, bad)
    _check_tenants(design, bad)
    if design.compute.system is not None and not any(p[0] == "tenants" for p, _, _ in out):
        _check_whole_racks(design, catalog, bad)
    return out


def check_plane_split(design: Design, catalog: Catalog) -> list[tuple[tuple[str, ...], str, str]]:
    """backend.plane_split: nic_port can break the backend NIC's ports out into backend.planes ports: the
    planes divide the port's SerDes lanes (so every leg keeps whole lanes), and the backend switch runs
    the plane's speed (whole ports or its breakout). Checked before the split NIC is derived from it."""
    b = design.backend
    if b.plane_split != "nic_port" or b.planes is None:
        return []
    out: list[tuple[tuple[str, ...], str, str]] = []

    def bad(path: str, msg: str, fix: str) -> None:
        out.append((tuple(path.split(".")), msg, fix))

    srv = catalog.servers.get(design.compute.server)
    if srv is None or srv.backend is None or srv.backend.nic not in catalog.nics:
        return out  # check_against_catalog names the unknown server
    n, key = b.planes, srv.backend.nic
    nic = catalog.nics[key]
    if srv.backend.cages is not None:
        bad(
            "backend.plane_split",
            f"{design.compute.server} brings its NIC ports out to chassis cages (catalog backend.cages), "
            "whose plugs serve whole ports; railyard breaks out only ports in the NIC's own cage",
            "use plane_split: rails, or a server model whose NICs have cages of their own",
        )
        return out
    if nic.lanes is None:
        bad(
            "backend.planes",
            f"{key} (the backend NIC of {design.compute.server}) gives no SerDes lanes in the catalog, so "
            "its ports cannot be broken out into planes",
            f"add lanes: to nics.{key} in the catalog (a design's catalog: overlay can), or plane_split: rails",
        )
        return out
    if n > nic.lanes:
        bad(
            "backend.planes",
            f"{n} planes is more planes than {key} has lanes per port ({nic.lanes} x "
            f"{nic.speed_gbps // nic.lanes}G): every plane needs at least one lane",
            f"use at most {nic.lanes} planes (a divisor of {nic.lanes}), or a NIC with more lanes",
        )
        return out
    if nic.lanes % n:
        divisors = [d for d in range(2, nic.lanes + 1) if nic.lanes % d == 0]
        bad(
            "backend.planes",
            f"{n} planes do not divide the {nic.lanes} lanes of a {key} port: a leg would run a fraction of a lane",
            f"use {' or '.join(map(str, divisors))} planes",
        )
        return out
    speed = nic.speed_gbps // n
    if b.speed is not None and b.speed != speed:
        bad(
            "backend.speed",
            f"{b.speed}G, but {n} planes of a {nic.speed_gbps}G {key} port run {speed}G each",
            f"leave backend.speed out (the plane's {speed}G), or change backend.planes",
        )
    sw = catalog.switches.get(b.switch)
    if sw is not None:
        whole = {s for g in sw.port_groups for s in (g.speed_gbps, *g.speeds_gbps)}
        split = {s: k for g in sw.port_groups for s, k in g.breakout.items()}
        if speed not in whole and speed not in split:
            runs = sorted(whole | set(split))
            bad(
                "backend.planes",
                f"{n} planes run {speed}G per leg, a speed {b.switch} cannot break its ports out to "
                f"(its ports run {', '.join(f'{s}G' for s in runs)}"
                + (f"; breakout: {', '.join(f'{k} x {s}G' for s, k in sorted(split.items()))}" if split else "")
                + ")",
                f"use a plane count whose speed the switch runs, or a switch whose ports break out to {speed}G",
            )
    return out


def check_inside_planes(design: Design, catalog: Catalog) -> list[tuple[tuple[str, ...], str, str]]:
    """A backend switch with planes inside (Switch.planes: every port's lanes one to each of its ASICs,
    Quantum-X800 Q3450-LD) makes every link carry one lane in each plane: the host ports run planarized,
    all their lanes, one per plane, and the fabric is one set of boxes, not planes of its own."""
    b = design.backend
    sw = catalog.switches.get(b.switch)
    if sw is None or sw.planes is None:
        return []
    out: list[tuple[tuple[str, ...], str, str]] = []
    k = sw.planes
    inside = f"{b.switch} has its {k} planes inside (each port's lanes go one to each of its {k} ASICs)"
    if b.planes is not None:
        out.append(
            (
                ("backend", "planes"),
                f"{inside}, so its fabric is one set of boxes whose every link carries the {k} planes; "
                "backend.planes builds planes of separate switches",
                "leave backend.planes, plane_split and spine_grouping: per_plane out: the planes come with the switch",
            )
        )
        return out
    srv = catalog.servers.get(design.compute.server)
    nic = catalog.nics.get(srv.backend.nic) if srv is not None and srv.backend is not None else None
    if srv is not None and srv.backend is not None and nic is not None and (nic.lanes is None or nic.lanes % k):
        lanes = "no lanes in the catalog" if nic.lanes is None else f"{nic.lanes} lanes per port"
        out.append(
            (
                ("backend", "switch"),
                f"{inside}, but {srv.backend.nic} (the backend NIC of {design.compute.server}) has {lanes}: "
                f"it cannot run planarized, one lane in each of the {k} planes",
                f"a NIC whose ports have a multiple of {k} lanes (ConnectX-8: 4 x 200G), or a switch without "
                "planes inside (Q3400)",
            )
        )
    native = {g.speed_gbps for g in sw.port_groups}
    if b.speed is not None and b.speed not in native:
        out.append(
            (
                ("backend", "speed"),
                f"{b.speed}G: a port of {b.switch} runs all its lanes, one per plane, at "
                f"{'/'.join(f'{s}G' for s in sorted(native))}; fewer lanes would leave planes without the port",
                "leave backend.speed out",
            )
        )
    return out


def _check_backend_speed(design: Design, catalog: Catalog, bad: Any) -> None:
    """backend.speed is one the backend NICs and the backend switch's ports both run (whole or split)."""
    b = design.backend
    srv = catalog.servers.get(design.compute.server)
    if srv is None or srv.backend is None or srv.backend.nic not in catalog.nics:
        return
    nic = catalog.nics[srv.backend.nic]
    eth, speed = nic.ethernet_speeds_gbps, backend_speed(design, catalog)
    if b.technology == "roce" and eth is not None and speed not in eth:
        at = "backend.speed" if b.speed is not None else "compute.server"
        # the same GPUs behind a NIC that runs Ethernet at its native speed (ConnectX-8 as 2 x 400GbE)
        split = [
            k
            for k, s in catalog.servers.items()
            if s.backend
            and s.gpu_model == srv.gpu_model
            and s.backend.nic in catalog.nics
            and catalog.nics[s.backend.nic].ethernet_speeds_gbps is None
        ]
        bad(
            at,
            f"{srv.backend.nic} (the backend NIC of {design.compute.server}) runs "
            f"{', '.join(f'{s}G' for s in sorted(eth))} per port on Ethernet, not {speed}G",
            (
                f"use a server model whose NIC presents its Ethernet ports ({', '.join(sorted(split))}), "
                if split
                else "use a server model with an Ethernet backend NIC, "
            )
            + "or backend.technology: infiniband",
        )
    if b.technology == "roce":
        # the hosts' netplan addresses each backend port by its Linux name, which only the catalog knows
        for at, key in (
            ("compute.server", design.compute.server),
            *([("management.server", design.management.server)] if design.management.backend_attached else []),
        ):
            m = catalog.servers.get(key)
            if m is not None and m.backend is not None and m.backend.netdev is None:
                bad(
                    at,
                    f"{key} names no Linux interfaces for its backend ports (catalog servers.{key}.backend."
                    "netdev), which the hosts' netplan of a RoCE backend needs",
                    f'add netdev: "<name>{{i}}" to servers.{key}.backend in the catalog (a design\'s catalog: '
                    "overlay can), the names the OS image gives the ports",
                )
    if b.speed is None:
        return
    if b.speed != nic.speed_gbps and b.speed not in nic.speeds_gbps:
        bad(
            "backend.speed",
            f"{b.speed}G is not a speed of {srv.backend.nic} (the backend NIC of "
            f"{design.compute.server} runs {', '.join(f'{s}G' for s in sorted({nic.speed_gbps, *nic.speeds_gbps}))})",
            f"use one of those, or leave backend.speed out for the NIC's native {nic.speed_gbps}G",
        )
    sw = catalog.switches[b.switch]
    runs = {s for g in sw.port_groups for s in (g.speed_gbps, *g.speeds_gbps, *g.breakout)}
    if b.speed not in runs:
        bad(
            "backend.speed",
            f"{b.speed}G is not a speed the ports of {b.switch} run ({', '.join(f'{s}G' for s in sorted(runs))})",
            "pick a backend switch whose ports (or their breakout) run this speed, or another speed",
        )


def _check_storage_fabric(design: Design, catalog: Catalog, bad: Any, known: Any) -> None:
    """A dedicated storage fabric: a switch of its technology, compute servers with storage ports the
    frontend does not use, at a speed both ends run."""
    fab, st, f = design.storage.fabric, design.storage, design.frontend
    assert fab is not None
    if known("storage.fabric.switch", fab.switch, catalog.switches, "switch model"):
        sw = catalog.switches[fab.switch]
        if sw.technology != fab.technology:
            bad(
                "storage.fabric.switch",
                f"{fab.switch} is an {sw.technology} switch but storage.fabric.technology is {fab.technology}",
                "pick a switch of the storage fabric's technology",
            )
        elif fab.technology == "infiniband" and Duty.INFINIBAND not in network_os(sw.os).serves:
            bad(
                "storage.fabric.switch",
                f"{fab.switch} runs {sw.os}, which railyard cannot configure as {DUTY_TEXT[Duty.INFINIBAND]}",
                f"pick a switch model running {' or '.join(serving(Duty.INFINIBAND))}",
            )
    model = catalog.servers.get(design.compute.server)
    if model is None:
        return
    if not model.storage_ports:
        bad(
            "storage.network",
            f"{design.compute.server} has no storage ports in the catalog (servers."
            f"{design.compute.server}.storage_ports is empty)",
            "add storage_ports (the frontend-NIC ports that "
            "carry storage, e.g. [eth2, eth3]) to the server model, in the catalog or a catalog: overlay, or set "
            "storage.network: frontend",
        )
        return
    if fab.ports_per_server is not None and fab.ports_per_server > len(model.storage_ports):
        bad(
            "storage.fabric.ports_per_server",
            f"{fab.ports_per_server} ports but {design.compute.server} has "
            f"{len(model.storage_ports)} storage ports ({', '.join(model.storage_ports)})",
            f"use at most {len(model.storage_ports)}",
        )
        return
    cfg = resolved_config(design, catalog)
    nic = catalog.nics.get(cfg.frontend_nic)
    if nic is None:
        return
    have = [model.frontend_port_name.format(i=i) for i in range(nic.ports * cfg.frontend_nic_count)]
    frontend = set(have[: f.ports_per_server])
    for p in storage_fabric_ports(design, catalog):
        if p not in have:
            bad(
                "compute.config.frontend_nic_count",
                f"storage port {p} of {design.compute.server} is not one of its "
                f"{cfg.frontend_nic_count} x {cfg.frontend_nic} ports ({', '.join(have)})",
                "add frontend NICs in compute.config.frontend_nic_count or use fewer storage ports",
            )
        elif p in frontend:
            bad(
                "storage.fabric.ports_per_server",
                f"storage port {p} is also a frontend port (frontend.ports_per_server: {f.ports_per_server})",
                "use fewer frontend ports, or storage ports the frontend does not take",
            )
    speed = storage_fabric_speed(design, catalog)
    if speed != nic.speed_gbps and speed not in nic.speeds_gbps:
        bad("storage.fabric.speed", f"{speed}G is not a speed of {cfg.frontend_nic}", f"use {nic.speed_gbps}G")
    groups = catalog.switches[fab.switch].port_groups if fab.switch in catalog.switches else []
    runs = {x for g in groups for x in (g.speed_gbps, *g.speeds_gbps, *g.breakout)}
    if groups and st.speed != speed and st.speed not in runs:
        # the storage servers have leaves of their own, so their ports may run another speed than the compute
        # servers' (NVIDIA's SuperPOD: NDR 400G DGX ports, 200G storage appliances), one the switch runs
        bad(
            "storage.speed",
            f"{st.speed}G, which no port of the storage fabric's {fab.switch} runs (the compute servers' "
            f"storage ports run {speed}G)",
            f"set storage.speed to {speed}G, or a speed {fab.switch} runs",
        )


def _check_sonic_releases(design: Design, catalog: Catalog, bad: Any) -> None:
    """A release is asked of SONiC switches only, and the frontend's must model a shared gateway MAC."""
    f, o = design.frontend, design.oob
    if f.vendor == "sonic":
        if f.sonic_release not in SONIC_RIF_MAC:
            bad(
                "frontend.sonic_release",
                f"SONiC {f.sonic_release} models neither a static anycast gateway (the "
                "SAG table, master only) nor a chosen MAC on a VLAN interface (VLAN_INTERFACE mac_addr, from "
                "202505), so railyard cannot give every leaf the hosts' one gateway address and MAC",
                f"set frontend.sonic_release to one of {', '.join(sorted(SONIC_RIF_MAC))} (default "
                f"{DEFAULT_SONIC_RELEASE})",
            )
    elif "sonic_release" in f.model_fields_set:
        bad(
            "frontend.sonic_release",
            f"is set, but frontend.vendor is {f.vendor}: no frontend switch runs SONiC",
            "remove frontend.sonic_release",
        )
    b = design.backend
    for name in ("sonic_release", "network"):
        if name in b.model_fields_set and (
            b.technology != "roce"
            or (name == "sonic_release" and b.switch in catalog.switches and catalog.switches[b.switch].os != "sonic")
        ):
            why = (
                f"backend.technology is {b.technology}"
                if b.technology != "roce"
                else f"{b.switch} runs {catalog.switches[b.switch].os}, not SONiC"
            )
            bad(
                f"backend.{name}",
                f"is set, but {why}: it configures SONiC RoCE backend switches"
                if name == "sonic_release"
                else f"is set, but {why}: it numbers a RoCE backend's BGP",
                f"remove backend.{name}",
            )
    models = [o.switch] + ([o.aggregation_switch or f.spine_switch or f.switch] if o.uplink == "aggregation" else [])
    if "sonic_release" in o.model_fields_set and all(
        m in catalog.switches and catalog.switches[m].os != "sonic" for m in models
    ):
        bad(
            "oob.sonic_release",
            f"is set, but no out-of-band switch runs SONiC ({', '.join(dict.fromkeys(models))} "
            f"run {', '.join(dict.fromkeys(catalog.switches[m].os for m in models))})",
            "remove oob.sonic_release, or pick a SONiC model for oob.switch",
        )


def _check_slots(design: Design, catalog: Catalog, bad: Any) -> None:
    """Scalable units are whole, except for compute.reserved_slots at the end of the last one."""
    c, b, m = design.compute, design.backend, design.management
    count, r = server_count(design), c.reserved_slots
    if r == 0 and c.system is not None and c.racks is not None and count % b.su_size:
        # a rack system's count is derived (racks x trays): blame the racks the design wrote, in racks
        trays = count // c.racks
        per_su = b.su_size // trays
        lo, hi = c.racks // per_su * per_su, -(-c.racks // per_su) * per_su
        bad(
            "compute.racks",
            f"{c.racks} {c.system} racks is not a whole number of {per_su}-rack scalable units "
            f"(backend.su_size {b.su_size} = {per_su} racks of {trays} trays)",
            f"use a multiple of {per_su} racks ({', '.join(str(n) for n in dict.fromkeys((lo, hi)) if n)}), or set "
            f"backend.su_size to a multiple of {trays} trays that divides {count}",
        )
        return
    if r == 0:
        if count % b.su_size:
            full = -(-count // b.su_size) * b.su_size
            bad(
                "compute.count",
                f"{count} servers is not a whole number of {b.su_size}-server scalable units",
                f"use a multiple of backend.su_size ({b.su_size}), change backend.su_size, or leave the last "
                f"unit's free slots to the {attached_nodes(design)} with compute.reserved_slots: {full - count}",
            )
        return
    if b.topology != "rail_optimized":
        bad(
            "compute.reserved_slots",
            f"{r} reserved slots need a rail_optimized backend (topology is {b.topology})",
            "set compute.reserved_slots: 0 and a whole number of scalable units",
        )
        return
    if r >= b.su_size:
        bad(
            "compute.reserved_slots",
            f"{r} slots is the whole {b.su_size}-server scalable unit or more",
            f"reserve fewer than backend.su_size ({b.su_size}) slots, or drop a scalable unit from compute.count",
        )
        return
    if (count + r) % b.su_size:
        fit = -(-count // b.su_size) * b.su_size - r
        bad(
            "compute.count",
            f"{count} servers plus {r} reserved slots is not a whole number of {b.su_size}-server scalable units",
            f"set compute.count to {fit} (or compute.reserved_slots to {-(-count // b.su_size) * b.su_size - count})",
        )
        return
    mm = catalog.servers.get(m.server)
    srv = catalog.servers.get(c.server)
    if mm is None or mm.backend is None or srv is None or srv.backend is None or not m.backend_attached:
        return
    rails = b.rails or srv.backend.count
    need = m.backend_attached * mm.backend.count
    if need > r * rails:
        bad(
            "management.backend_attached",
            f"{m.backend_attached} nodes x {mm.backend.count} backend ports need "
            f"{need} leaf ports but compute.reserved_slots: {r} frees {r * rails} ({rails} rails each)",
            f"reserve {-(-need // rails)} slots or attach fewer nodes",
        )


def _check_license(bad: Any, catalog: Catalog, path: str, key: str | None, unit: str) -> None:
    if key is None:
        return
    lic = catalog.licenses.get(key)
    if lic is None:
        bad(path, f"unknown license {key!r}", f"use one of: {', '.join(sorted(catalog.licenses))}")
    elif lic.unit != unit:
        bad(
            path,
            f"{key} is priced per {lic.unit}, not per {unit}",
            f"use a license priced per {unit}: "
            f"{', '.join(sorted(k for k, v in catalog.licenses.items() if v.unit == unit)) or 'none in the catalog'}",
        )


def _check_site(design: Design, catalog: Catalog, bad: Any, known: Any) -> None:
    r = design.site.rack
    key = rack_model_key(design, catalog)
    if key is None:
        bad(
            "site.rack",
            f"no catalog rack is {r.units}U {r.width_mm} x {r.depth_mm} mm",
            f"set site.rack.model to one of {', '.join(sorted(catalog.racks))} or add the rack to the catalog",
        )
    elif known("site.rack.model", key, catalog.racks, "rack model"):
        m = catalog.racks[key]
        if r.model is not None and (m.units, m.width_mm, m.depth_mm) != (r.units, r.width_mm, r.depth_mm):
            bad(
                "site.rack.model",
                f"{key} is {m.units}U {m.width_mm} x {m.depth_mm} mm but site.rack says "
                f"{r.units}U {r.width_mm} x {r.depth_mm} mm",
                "make site.rack.units/width_mm/depth_mm match the model",
            )
    known("site.rack.pdu", r.pdu, catalog.pdus, "PDU model")
    names = [row.name for row in design.site.rows]
    for i, n in enumerate(names):
        if n in names[:i]:
            bad(f"site.rows.{i}.name", f"row {n!r} is declared twice", "give each row its own name")
    placed = [row.x_mm is not None and row.y_mm is not None for row in design.site.rows]
    if any(placed) and not all(placed):
        i = placed.index(False)
        bad(f"site.rows.{i}", "some rows have x_mm/y_mm and this one does not", "place every row or none")


def _check_rack_system(design: Design, catalog: Catalog, bad: Any) -> None:
    """A rack system's rack stands whole in a site rack: its power and height within site.rack, its
    in-rack management switches the out-of-band access switches, its fabric rail-optimized. A compute
    tray is a server only inside its system."""
    c = design.compute
    trays = {rs.tray: key for key, rs in catalog.rack_systems.items()}
    if c.system is None:
        if c.server in trays:
            bad(
                "compute.server",
                f"{c.server} is the compute tray of rack system {trays[c.server]}, which is "
                "bought and placed as whole racks",
                f"set compute.system: {trays[c.server]} and compute.racks instead of compute.server and compute.count",
            )
        if design.site.cooling is not None:
            bad(
                "site.cooling",
                f"{c.server} servers are air cooled: no rack of this design has a liquid loop for a CDU to serve",
                "remove site.cooling",
            )
        return
    rs = catalog.rack_systems[c.system]
    r = design.site.rack
    kw = rs.power_kw(catalog)
    if r.power_kw < kw:
        bad(
            "site.rack.power_kw",
            f"{r.power_kw:g} kW is below the {kw:g} kW a {c.system} rack draws",
            f"provision at least {kw:g} kW per rack (site.rack.power_kw)",
        )
    if r.units < rs.rack_units:
        bad(
            "site.rack.units",
            f"{r.units}U racks, but a {c.system} rack is {rs.rack_units}U",
            f"set site.rack.units to {rs.rack_units} (and a catalog rack of that height)",
        )
    if design.oob.switch != rs.mgmt_switch:
        bad(
            "oob.switch",
            f"{design.oob.switch}, but the {c.system} rack's own management switches ({rs.mgmt_switches} "
            f"x {rs.mgmt_switch}) are its out-of-band access switches",
            f"set oob.switch: {rs.mgmt_switch}",
        )
    cool = design.site.cooling
    if cool is None:
        bad(
            "site.cooling",
            f"a {c.system} rack is liquid cooled ({rs.liquid_fraction:.0%} of its "
            f"{kw:g} kW to liquid) and the design names no CDU",
            "add site.cooling: {cdu: <one of "
            f"{', '.join(sorted(catalog.cdus)) or 'the catalog cdus'}>, racks_per_cdu: N, redundancy: N+1}}",
        )
    elif cool.cdu not in catalog.cdus:
        bad("site.cooling.cdu", f"unknown CDU {cool.cdu!r}", f"use one of: {', '.join(sorted(catalog.cdus))}")
    else:
        cdu = catalog.cdus[cool.cdu]
        liquid = rs.liquid_kw(catalog)
        if cdu.placement == "in_rack":
            if cool.racks_per_cdu is not None:
                bad(
                    "site.cooling.racks_per_cdu",
                    f"{cool.cdu} is an in-rack CDU: it serves the rack it stands in",
                    "remove racks_per_cdu, or use an in-row CDU",
                )
            if liquid > cdu.capacity_kw + 1e-9:
                bad(
                    "site.cooling.cdu",
                    f"a {c.system} rack puts {liquid:g} kW into its liquid loop, over the "
                    f"{cdu.capacity_kw:g} kW one {cool.cdu} removes",
                    "use a larger CDU (site.cooling.cdu)",
                )
        elif liquid > cdu.capacity_kw + 1e-9:
            bad(
                "site.cooling.cdu",
                f"one {c.system} rack puts {liquid:g} kW into its liquid loop, over the "
                f"{cdu.capacity_kw:g} kW one {cool.cdu} removes",
                "use a larger CDU (site.cooling.cdu)",
            )
        elif cool.racks_per_cdu is not None and cool.racks_per_cdu * liquid > cdu.capacity_kw + 1e-9:
            most = int(cdu.capacity_kw // liquid)
            spare = " (the spare only covers a failed one)" if cool.redundancy == "N+1" else ""
            bad(
                "site.cooling.racks_per_cdu",
                f"{cool.racks_per_cdu} racks x {liquid:g} kW liquid = "
                f"{cool.racks_per_cdu * liquid:g} kW, over the {cdu.capacity_kw:g} kW one {cool.cdu} removes"
                f"{spare}",
                f"set site.cooling.racks_per_cdu to at most {most}, or use a larger CDU",
            )
    if design.backend.topology != "rail_optimized":
        bad(
            "backend.topology",
            f"{design.backend.topology} for a {c.system} rack: its trays' NICs are rails "
            "(NIC i of every tray on rail i)",
            "set backend.topology: rail_optimized",
        )


def sidecars(catalog: Catalog) -> list[str]:
    """The catalog's power sidecars (pdus entries standing on the floor)."""
    return sorted(k for k, p in catalog.pdus.items() if p.placement == "in_row")


def _check_power(design: Design, catalog: Catalog, bad: Any) -> None:
    """site.power: 800 VDC sidecars feed only a rack system whose power shelves take 800 VDC, one
    sidecar carries at least one rack, and a rack system with DC-input shelves is not left on AC."""
    power, system = design.site.power, design.compute.system
    rs = catalog.rack_systems.get(system) if system is not None else None
    shelf = catalog.pdus.get(rs.power_shelf) if rs is not None else None
    if catalog.pdus.get(design.site.rack.pdu) is not None and catalog.pdus[design.site.rack.pdu].placement != "rack":
        bad(
            "site.rack.pdu",
            f"{design.site.rack.pdu} is a power sidecar that stands on the floor, not a rack PDU",
            "name a rack PDU here, and the sidecar in site.power.sidecar",
        )
    dc_in = shelf is not None and shelf.input_vdc is not None
    if power is None or power.architecture == "ac":
        if dc_in:
            assert shelf is not None and rs is not None and system is not None
            bad(
                "site.power" if power is None else "site.power.architecture",
                f"the {system} rack's power shelves ({rs.power_shelf}) take {shelf.input_vdc} VDC, not AC",
                f"set site.power: {{architecture: 800vdc, sidecar: <one of {', '.join(sidecars(catalog))}>}}",
            )
        if power is not None and power.sidecar is not None:
            bad(
                "site.power.sidecar",
                "a sidecar feeds 800 VDC, but architecture is ac",
                "remove it or set architecture: 800vdc",
            )
        return
    if system is None or rs is None or shelf is None:
        bad(
            "site.power.architecture",
            f"800vdc feeds rack systems' DC-input power shelves; {design.compute.server} servers take AC",
            "remove site.power (AC), or use a rack system whose power shelf takes 800 VDC (compute.system)",
        )
        return
    if shelf.input_vdc != 800:
        dc = [k for k, r in catalog.rack_systems.items() if catalog.pdus[r.power_shelf].input_vdc == 800]
        bad(
            "site.power.architecture",
            f"the {system} rack has no 800 VDC input: its power shelves ({rs.power_shelf}) take "
            f"{'AC' if shelf.input_vdc is None else f'{shelf.input_vdc} VDC'}",
            "set site.power.architecture: ac, or use a rack system with 800 VDC shelves "
            f"({', '.join(dc) or 'none in the catalog'})",
        )
        return
    if power.sidecar is None:
        bad(
            "site.power.sidecar",
            "800vdc needs the power sidecar that feeds the racks",
            f"set site.power.sidecar to one of {', '.join(sidecars(catalog)) or 'the catalog sidecars'}",
        )
        return
    sc = catalog.pdus.get(power.sidecar)
    if sc is None or sc.placement != "in_row":
        bad(
            "site.power.sidecar",
            f"{power.sidecar!r} is not a power sidecar (a pdus entry with placement: in_row)",
            f"use one of: {', '.join(sidecars(catalog)) or 'none in the catalog: add one'}",
        )
        return
    if sc.output_vdc != shelf.input_vdc:
        bad(
            "site.power.sidecar",
            f"{power.sidecar} puts out {sc.output_vdc} VDC; the {system} rack's shelves take {shelf.input_vdc} VDC",
            "use a sidecar of the shelves' input voltage",
        )
    kw = rs.power_kw(catalog)
    if kw > sc.capacity_kw + 1e-9:
        bad(
            "site.power.sidecar",
            f"a {system} rack draws {kw:g} kW, over the {sc.capacity_kw:g} kW one {power.sidecar} feeds",
            "use a larger sidecar (site.power.sidecar) or a catalog sidecar of more capacity_kw",
        )


def _check_whole_racks(design: Design, catalog: Catalog, bad: Any) -> None:
    """Tenants of a rack system rent whole racks (NVLink domains) or scalable units: a rack shared by
    two tenants would share its NVLink fabric, which no partition key or VRF isolates."""
    assert design.compute.system is not None
    trays = catalog.rack_systems[design.compute.system].trays
    order = {h: i for i, h in enumerate(server_names(design))}
    for i, (name, members) in enumerate(tenant_members(design).items()):
        racks = Counter(order[h] // trays for h in members)
        split = sorted(k + 1 for k, n in racks.items() if n != trays)
        if split:
            k = split[0] - 1
            first = design.compute.hostname_prefix + f"{k * trays + 1:0{server_width(server_count(design))}d}"
            bad(
                f"tenants.{i}",
                f"tenant {name!r} rents part of rack {split[0]} (its trays from {first}): a "
                f"{design.compute.system} rack is one NVLink domain of {trays} trays",
                f"rent whole racks (all {trays} trays of each) or scalable units",
            )


def _check_tenants(design: Design, bad: Any) -> None:
    names = set(server_names(design))
    count = server_count(design)
    sus = -(-count // design.backend.su_size) if design.backend.su_size else 0
    owner: dict[str, str] = {}
    seen_names: set[str] = set()
    for i, t in enumerate(design.tenants):
        base = f"tenants.{i}"
        if t.name == "infra":
            bad(
                f"{base}.name",
                "'infra' is the provider's own VRF (management nodes, unassigned servers)",
                "give the tenant another name",
            )
        if t.name in seen_names:
            bad(f"{base}.name", f"tenant {t.name!r} is declared twice", "give each tenant one entry")
        seen_names.add(t.name)
        members: list[str] = []
        for j, su in enumerate(t.scalable_units):
            if not 1 <= su <= sus:
                bad(
                    f"{base}.scalable_units.{j}",
                    f"scalable unit {su} does not exist (1..{sus})",
                    "use a unit number within the design",
                )
                continue
            w = server_width(count)
            first = (su - 1) * design.backend.su_size + 1
            members += [
                f"{design.compute.hostname_prefix}{k:0{w}d}"
                for k in range(first, min(first + design.backend.su_size, count + 1))
            ]
        for j, expr in enumerate(t.servers):
            try:
                expanded = hostlist.expand_hostlist(expr)
            except hostlist.BadHostlist as exc:
                bad(f"{base}.servers.{j}", f"bad hostlist {expr!r}: {exc}", 'write e.g. "gpu[001-016]"')
                continue
            unknown = [h for h in expanded if h not in names]
            if unknown:
                bad(
                    f"{base}.servers.{j}",
                    f"{len(unknown)} unknown servers, e.g. {unknown[0]}",
                    "name compute servers of this design",
                )
            members += [h for h in expanded if h in names]
        if not members:
            bad(base, f"tenant {t.name!r} rents no servers", "list scalable_units or servers")
        for h in members:
            if h in owner and owner[h] != t.name:
                bad(
                    base,
                    f"server {h} is rented by both {owner[h]!r} and {t.name!r}",
                    "a server belongs to at most one tenant; remove it from one of them",
                )
                break
            owner[h] = t.name
