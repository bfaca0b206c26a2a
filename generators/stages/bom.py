"""The costed bill of materials, derived only from the compiled plan and the catalog embedded in it.

Every quantity is counted from the plan itself (devices, links, the cable plan's cables and
transceivers, racks), every price comes from one catalog entry, and nothing here knows which design
it is pricing: two designs differ in cost only because their plans differ. That is what lets
`railyard compare` attribute a saving to a design choice.

Categories follow the playbook's quote structure: compute (servers and their configurable parts),
rack, the three networks, storage, management nodes and software.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from generators.model.catalog import Catalog, Price, ServerConfig, ServerModel
from generators.model.design import Design, resolved_config
from generators.model.plan import Plan
from generators.model.ports import port_ends
from generators.model.sections import Bom, BomLine, PlanWarning
from generators.model.storage import HA_MIN_SERVERS, size_storage

BOM_SCHEMA = Bom.SCHEMA
CATEGORIES = ("compute", "rack", "backend", "frontend", "oob", "storage", "management", "software")
NETWORK_CATEGORIES = ("backend", "frontend", "oob")
KINDS = ("server", "component", "rack", "pdu", "cdu", "switch", "laser", "transceiver", "cable", "license")
CATEGORY_TITLES = {
    "compute": "Compute servers",
    "rack": "Racks and PDUs",
    "backend": "Backend fabric",
    "frontend": "Frontend network",
    "oob": "Out-of-band network",
    "storage": "Storage",
    "management": "Management nodes",
    "software": "Software licenses",
}


@dataclass(frozen=True, slots=True)
class Line:
    category: str
    kind: str  # one of KINDS
    part: str  # catalog key
    sku: str  # vendor part number where the catalog has one, else the key
    description: str
    quantity: float
    unit: str  # each, TB, endpoint, GPU-year
    unit_usd: float
    source: str
    date: str

    @property
    def total_usd(self) -> float:
        return self.quantity * self.unit_usd

    def record(self) -> BomLine:
        """The line as the plan and bom.json carry it: rounded money, whole quantities as integers."""
        return BomLine(
            category=self.category,
            kind=self.kind,
            part=self.part,
            sku=self.sku,
            description=self.description,
            quantity=_num(self.quantity),
            unit=self.unit,
            unit_usd=_money(self.unit_usd),
            total_usd=_money(self.total_usd),
            source=self.source,
            date=self.date,
        )


def _money(x: float) -> float:
    return round(x + 0.0, 2)


def _num(x: float) -> int | float:
    return int(x) if float(x).is_integer() else round(x, 3)


class _Lines:
    """Collects lines, merging repeats of one part at one price within a category (e.g. the same NIC
    bought for compute servers in two places) so the BoM has one line per part, in first-seen order."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, str, str, float], Line] = {}

    def add(
        self,
        category: str,
        kind: str,
        part: str,
        description: str,
        quantity: float,
        price: Price,
        *,
        sku: str = "",
        unit: str = "each",
    ) -> None:
        if quantity <= 0:
            return
        key = (category, part, unit, price.usd)
        old = self._lines.get(key)
        if old is not None:
            quantity += old.quantity
        self._lines[key] = Line(
            category, kind, part, sku or part, description, quantity, unit, price.usd, price.source, price.date
        )

    def lines(self) -> list[Line]:
        cat = {c: i for i, c in enumerate(CATEGORIES)}
        kind = {k: i for i, k in enumerate(KINDS)}
        # category, then kind; network parts by name (a cable family's lengths side by side), the rest
        # in the order they were met (a server's chassis, CPU, memory, NICs)
        seen = {key: i for i, key in enumerate(self._lines)}
        return [
            ln
            for _, ln in sorted(
                self._lines.items(),
                key=lambda kv: (
                    cat[kv[1].category],
                    kind[kv[1].kind],
                    kv[1].part if kv[1].kind in ("switch", "laser", "transceiver", "cable") else "",
                    seen[kv[0]],
                ),
            )
        ]


# ------------------------------------------------------------------------------------------- compute


NodePart = tuple[str, str, str, float, str, Price]  # kind, part, description, quantity, unit, price


def node_parts(catalog: Catalog, model_key: str, cfg: ServerConfig, backend_nics: int) -> list[NodePart]:
    """One server's priced parts. The chassis price excludes everything a configuration can change,
    so a mid-range CPU, less RAM or no DPU shows as a cheaper line, not as a different server."""
    m: ServerModel = catalog.servers[model_key]
    cpu = catalog.cpus[cfg.cpu]
    # a management node on the fabric's NIC (`mgmt-1u@cx8-800g-osfp`, design.management_model) is the same
    # chassis: listed under the catalog's key, its NIC on the backend NIC line
    chassis = model_key.split("@", 1)[0]
    parts: list[NodePart] = [
        (
            "server",
            chassis,
            catalog.servers[chassis].description if chassis in catalog.servers else m.description,
            1,
            "each",
            m.price,
        ),
        ("component", cfg.cpu, cpu.description, m.cpu_sockets, "each", cpu.price),
    ]
    dimm_key, dimm = _dimm_for(catalog, cfg.memory_gb)
    parts.append(
        (
            "component",
            dimm_key,
            f"{dimm.description} ({cfg.memory_gb} GB per server)",
            cfg.memory_gb // dimm.gb_per_dimm,
            "each",
            dimm.price,
        )
    )
    if m.backend is not None and backend_nics:
        nic = catalog.nics[m.backend.nic]
        parts.append(("component", m.backend.nic, f"{nic.description} (backend)", backend_nics, "each", nic.price))
    if cfg.frontend_nic_count:
        nic = catalog.nics[cfg.frontend_nic]
        role = "frontend DPU" if nic.is_dpu else "frontend"
        parts.append(
            ("component", cfg.frontend_nic, f"{nic.description} ({role})", cfg.frontend_nic_count, "each", nic.price)
        )
    if cfg.nvme_tb and m.nvme_per_tb is not None:
        parts.append(("component", f"{chassis}-nvme", "Local NVMe SSD capacity", cfg.nvme_tb, "TB", m.nvme_per_tb))
    return parts


def _dimm_for(catalog: Catalog, memory_gb: int) -> tuple[str, Any]:
    """The DIMM that builds the capacity from whole DIMMs, largest first (fewest slots used)."""
    fitting = sorted(
        ((k, d) for k, d in catalog.memory.items() if memory_gb % d.gb_per_dimm == 0),
        key=lambda kd: (-kd[1].gb_per_dimm, kd[0]),
    )
    if not fitting:
        raise ValueError(f"no DIMM in the catalog builds {memory_gb} GB")
    return fitting[0]


def node_price(catalog: Catalog, model_key: str, cfg: ServerConfig, backend_nics: int | None = None) -> float:
    m = catalog.servers[model_key]
    n = (m.backend.count if m.backend else 0) if backend_nics is None else backend_nics
    return sum(q * p.usd for _, _, _, q, _, p in node_parts(catalog, model_key, cfg, n))


def system_racks(plan: Plan) -> set[str]:
    """The racks that are a rack system's (they hold its NVLink switch trays): sold whole, with their
    enclosure, trays, switch trays, power shelves and management switches."""
    return {d.rack for d in plan.devices if d.network == "nvlink" and d.rack is not None}


def _shelf_note(catalog: Catalog, key: str, n: int) -> str:
    """What a rack's shelves hold when the catalog says: their PSUs and the DC they take (none said: "")."""
    shelf = catalog.pdus[key]
    parts = [f"{shelf.psus * n} PSUs of {shelf.psu_kw:g} kW"] if shelf.psus and shelf.psu_kw else []
    if shelf.input_vdc is not None:
        parts.append(f"{shelf.input_vdc} VDC in")
    return f" ({', '.join(parts)})" if parts else ""


def _system_lines(out: _Lines, design: Design, catalog: Catalog) -> dict[str, Any]:
    """A rack system is one line per rack at the system's price: its trays, NVLink switch trays and
    backplane, power shelves and management switches are in it, not priced again."""
    key, racks = design.compute.system, design.compute.racks
    assert key is not None and racks is not None
    rs = catalog.rack_systems[key]
    desc = (
        f"{rs.description}: {rs.trays} x {rs.tray}, {rs.nvlink_switches} x {rs.nvlink_switch} and the "
        f"{rs.scale_up_name} backplane ({rs.nvlink_links} links, {rs.nvlink_cables} copper cables), "
        f"{rs.power_shelves} x {rs.power_shelf}{_shelf_note(catalog, rs.power_shelf, rs.power_shelves)}, "
        f"{rs.mgmt_switches} x {rs.mgmt_switch}, {rs.rack_units}U rack"
    )
    out.add("compute", "server", key, desc, racks, rs.price, unit="rack")
    return {
        "model": rs.tray,
        "system": key,
        "config": resolved_config(design, catalog).model_dump(mode="json"),
        "unit_usd": _money(rs.price.usd / rs.trays),
        "parts": [
            {
                "part": key,
                "description": desc,
                "quantity": _num(1 / rs.trays),
                "unit": "rack",
                "unit_usd": _money(rs.price.usd),
                "total_usd": _money(rs.price.usd / rs.trays),
            }
        ],
    }


def _compute_lines(out: _Lines, plan: Plan, design: Design, catalog: Catalog) -> dict[str, Any]:
    if design.compute.system is not None:
        return _system_lines(out, design, catalog)
    servers = Counter(d.model for d in plan.devices if d.kind == "server")
    cfg = resolved_config(design, catalog)
    node: dict[str, Any] = {}
    for model_key, n in sorted(servers.items()):
        m = catalog.servers[model_key]
        nics = m.backend.count if m.backend else 0
        parts = node_parts(catalog, model_key, cfg, nics)
        for kind, part, desc, q, unit, price in parts:
            out.add("compute", kind, part, desc, q * n, price, unit=unit)
        node = {
            "model": model_key,
            "config": cfg.model_dump(mode="json"),
            "unit_usd": _money(sum(q * p.usd for _, _, _, q, _, p in parts)),
            "parts": [
                {
                    "part": part,
                    "description": desc,
                    "quantity": _num(q),
                    "unit": unit,
                    "unit_usd": _money(p.usd),
                    "total_usd": _money(q * p.usd),
                }
                for _, part, desc, q, unit, p in parts
            ],
        }
    return node


def _management_lines(out: _Lines, plan: Plan, catalog: Catalog) -> None:
    for d in plan.devices:
        if d.kind != "management":
            continue
        m = catalog.servers[d.model]
        # only nodes that run the subnet manager need a backend HCA (playbook: two of the three)
        nics = (m.backend.count if m.backend else 0) if d.attrs.get("subnet_manager") else 0
        for kind, part, desc, q, unit, price in node_parts(catalog, d.model, m.defaults, nics):
            out.add("management", kind, part, desc, q, price, unit=unit)


# ------------------------------------------------------------------------------------------ networks


def _switch_lines(out: _Lines, plan: Plan, catalog: Catalog) -> None:
    sold = system_racks(plan)  # their management switches (the OOB access switches there) come with them
    counts = Counter(
        (d.network, d.model)
        for d in plan.devices
        if d.kind == "switch" and d.network != "nvlink" and not (d.network == "oob" and d.rack in sold)
    )
    for (network, model_key), n in sorted(counts.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        sw = catalog.switches[model_key]
        out.add(network or "oob", "switch", model_key, sw.description, n, sw.price, sku=sw.sku)
        if sw.lasers is not None:
            # a co-packaged-optics switch's external laser modules: field-replaceable, so a line of their own
            ls = sw.lasers
            what = (
                f"{ls.description}: {ls.count} per {model_key}, {ls.power_w:g} W each "
                f"({ls.count * ls.power_w:g} W per switch, in its rack's power)"
            )
            out.add(network or "oob", "laser", ls.sku, what, n * ls.count, ls.price, sku=ls.sku)


# ------------------------------------------------------------------------------ racks, cables, optics


def _rack_lines(out: _Lines, plan: Plan, catalog: Catalog) -> None:
    sold = system_racks(plan)
    # an in-row CDU's row position is the CDU itself, not an enclosure
    # (and a power sidecar's is the sidecar)
    racks = [r for r in plan.racks or [] if r.name not in sold and r.role not in ("cdu", "sidecar")]
    model_key = plan.floor.rack_model if plan.floor is not None else None
    if racks and model_key:
        rk = catalog.racks[model_key]
        out.add("rack", "rack", model_key, rk.description, len(racks), rk.price)
    in_racks = [d for d in plan.devices if d.kind == "pdu" and d.role not in ("power-shelf", "power-sidecar")]
    rack_pdus = Counter(d.model for d in in_racks)
    for key, n in sorted(rack_pdus.items()):
        pdu = catalog.pdus[key]
        out.add("rack", "pdu", key, pdu.description, n, pdu.price)
    if plan.power is not None:
        # the sidecars on the floor: the placement's count (per group of racks, the spare included)
        sc = catalog.pdus[plan.power.sidecar]
        desc = (
            f"{sc.description}; on the floor beside the racks it feeds, 1 per {plan.power.racks_per_sidecar} "
            f"rack(s) of each group, {plan.power.redundancy}"
        )
        out.add("rack", "pdu", plan.power.sidecar, desc, len(plan.power.sidecars), sc.price)
    for key, n in sorted(Counter(d.model for d in plan.devices if d.kind == "cdu").items()):
        cdu = catalog.cdus[key]
        out.add("rack", "cdu", key, cdu.description, n, cdu.price)


def _stocked(catalog: Catalog) -> dict[str, tuple[str, float, Price]]:
    """Cable SKU -> (family description, length in m, price)."""
    return {ln.sku: (c.description, ln.m, ln.price) for c in catalog.cables.values() for ln in c.lengths}


def _cable_lines(out: _Lines, plan: Plan, design: Design, catalog: Catalog) -> dict[str, Any]:
    """Cables and transceivers from the cable plan, in the category of the network they serve.

    One line per stocked SKU (what procurement orders). A transceiver is counted once per cage:
    the two ports of a twin-port OSFP cage share one twin-port transceiver, so counting per link
    would double the switch-side optics."""
    cables = plan.cables
    if cables is None:  # a plan compiled without the cable plan has nothing to count here
        return {}
    stock = _stocked(catalog)
    ports = port_ends(plan, catalog, design)  # the cable plan's own port -> cage map
    devs = plan.index()
    seen_cages: set[tuple[str, int]] = set()
    cable_n: Counter[tuple[str, str]] = Counter()  # (network, SKU) -> physical cables
    xcvr_n: Counter[tuple[str, str]] = Counter()  # (network, part) -> transceivers
    fan_cages: set[tuple[str, int]] = set()  # a broken-out optic's fan-out: one per cage, as the optic
    for c in cables:
        net = c.network
        # "parts" names the stocked SKU of each physical cable: one per link for fibers and single
        # cables, one for a twin-port DAC or splitter that serves two links
        for sku in c.parts[: c.physical]:
            cable_n[(net, sku)] += 1
        xa, xb = c.a_transceiver, c.b_transceiver
        if not (xa or xb):
            continue
        for k in c.links:
            lk = plan.links[k]
            for dev, port, part, fan in (
                (lk.a_device, lk.a_port, xa, c.a_fanout),
                (lk.b_device, lk.b_port, xb, c.b_fanout),
            ):
                if not part or catalog.transceivers[part].built_in:  # a switch's own optics: not bought
                    continue
                d = devs[dev]
                cage = (dev, ports[f"{d.kind}:{d.model}"][port].cage)
                if cage not in seen_cages:
                    seen_cages.add(cage)
                    xcvr_n[(net, part)] += 1
                if fan is not None and cage not in fan_cages:
                    fan_cages.add(cage)
                    cable_n[(net, fan)] += 1
    for (net, sku), n in cable_n.items():
        desc, metres, price = stock[sku]
        out.add(net, "cable", sku, f"{desc}, {metres:g} m", n, price, sku=sku)
    for (net, part), n in xcvr_n.items():
        x = catalog.transceivers[part]
        out.add(net, "transceiver", part, x.description, n, x.price, sku=part)
    return {
        net: {
            "cables": sum(n for (nn, _), n in cable_n.items() if nn == net),
            "transceivers": sum(n for (nn, _), n in xcvr_n.items() if nn == net),
        }
        for net in NETWORK_CATEGORIES
        if any(nn == net for nn, _ in (*cable_n, *xcvr_n))
    }


# ------------------------------------------------------------------------------------------- storage


def _storage_lines(out: _Lines, plan: Plan, design: Design, catalog: Catalog) -> dict[str, Any]:
    st = design.storage
    servers = [d for d in plan.devices if d.kind == "storage"]
    if not servers:
        return {}
    model = catalog.storage_servers[st.server]
    sizing = size_storage(model, len(servers), st.capacity_pb, st.ports_per_server, st.speed)
    nic = catalog.nics[model.nic]
    n = len(servers)
    out.add("storage", "server", st.server, model.description, n, model.price)
    out.add("storage", "component", model.nic, f"{nic.description} (storage frontend)", n * model.nic_count, nic.price)
    drives = sizing.drives_per_server
    out.add(
        "storage",
        "component",
        f"{st.server}-drive",
        f"{model.drive_tb:g} TB NVMe drive ({drives} of {model.drive_bays} bays per server)",
        n * drives,
        model.drive_price,
    )
    hardware = n * (model.price.usd + model.nic_count * nic.price.usd + drives * model.drive_price.usd)
    license_usd = 0.0
    if st.license is not None:
        lic = catalog.licenses[st.license]
        usable = round(sizing.usable_tb, 2)
        out.add(
            "storage",
            "license",
            st.license,
            f"{lic.description} ({usable:,.0f} TB usable)",
            usable,
            lic.price,
            unit="TB",
        )
        license_usd = usable * lic.price.usd
    total = hardware + license_usd
    return {
        **sizing.to_dict(),
        "model": st.server,
        "hardware_usd": _money(hardware),
        "license_usd": _money(license_usd),
        "license_share": round(license_usd / total, 4) if total else 0.0,
    }


# ------------------------------------------------------------------------------------------ software


def _software_lines(out: _Lines, plan: Plan, design: Design, catalog: Catalog, gpus: int) -> dict[str, Any]:
    sw = design.software
    info: dict[str, Any] = {}
    if design.backend.technology == "infiniband":  # an Ethernet backend has no subnet manager to name
        info["subnet_manager"] = sw.subnet_manager
        # UFM is licensed per endpoint: every host channel adapter on the fabric (compute NICs and the
        # subnet-manager nodes' own HCAs); switches are free.
        hosts = {d.name for d in plan.devices if d.kind in ("server", "management", "storage")}
        endpoints = sum(
            1 for lk in plan.links if lk.network == "backend" and (lk.a_device in hosts or lk.b_device in hosts)
        )
        info["backend_endpoints"] = endpoints
        if sw.subnet_manager == "ufm":
            lic = catalog.licenses[sw.ufm_license]
            out.add("software", "license", sw.ufm_license, lic.description, endpoints, lic.price, unit="endpoint")
    if sw.cluster_manager is not None:
        lic = catalog.licenses[sw.cluster_manager.license]
        years = sw.cluster_manager.term_years
        out.add(
            "software",
            "license",
            sw.cluster_manager.license,
            f"{lic.description} ({years}-year term)",
            gpus * years,
            lic.price,
            unit="GPU-year",
        )
        info["cluster_manager"] = {"license": sw.cluster_manager.license, "term_years": years}
    return info


# ---------------------------------------------------------------------------------------------- bom


def build_bom(plan: Plan, catalog: Catalog | None = None) -> Bom:
    """The BoM as a JSON-ready dict (the shape of DIR/bom.json and plan.json's `bom`)."""
    catalog = catalog or plan.catalog
    design = plan.design
    servers = sum(1 for d in plan.devices if d.kind == "server")
    gpus = servers * catalog.servers[design.compute.server].gpus
    out = _Lines()
    node = _compute_lines(out, plan, design, catalog)
    _rack_lines(out, plan, catalog)
    _switch_lines(out, plan, catalog)
    media = _cable_lines(out, plan, design, catalog)
    storage = _storage_lines(out, plan, design, catalog)
    _management_lines(out, plan, catalog)
    software = _software_lines(out, plan, design, catalog, gpus)
    lines = out.lines()

    by_category = {c: 0.0 for c in CATEGORIES}
    for ln in lines:
        by_category[ln.category] += ln.total_usd
    total = sum(by_category.values())
    excl_storage = total - by_category["storage"]
    warnings: list[PlanWarning] = []
    if 0 < design.storage.count < HA_MIN_SERVERS:
        warnings.append(
            PlanWarning(
                field="storage.count",
                message=f"{design.storage.count} storage servers: storage software vendors "
                f"(Weka, VAST) want at least {HA_MIN_SERVERS} for high availability",
            )
        )
    return Bom(
        schema=BOM_SCHEMA,
        design=design.name,
        currency="USD",
        servers=servers,
        gpus=gpus,
        total_usd=_money(total),
        per_server_usd=_money(total / servers),
        per_gpu_usd=_money(total / gpus) if gpus else 0.0,
        per_server_excl_storage_usd=_money(excl_storage / servers),
        per_gpu_excl_storage_usd=_money(excl_storage / gpus) if gpus else 0.0,
        backend_fabric_usd=_money(by_category["backend"]),
        by_category={c: _money(v) for c, v in by_category.items()},
        node=node,
        networks=media,
        storage=storage,
        software=software,
        warnings=warnings,
        lines=[ln.record() for ln in lines],
    )


def bom_stage(plan: Plan, catalog: Catalog) -> None:
    """Compiler stage: price the finished plan (runs after placement and cabling)."""
    plan.bom = build_bom(plan, catalog)


def plan_bom(plan: Plan) -> Bom:
    """The plan's BoM, computed when an older plan.json has none."""
    bom = plan.bom
    return bom if bom is not None else build_bom(plan)


def pct(new: float, base: float) -> float:
    return (new - base) / base * 100.0 if base else math.nan
