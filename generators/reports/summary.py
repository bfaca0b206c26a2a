"""Counts a reviewer reads first: derived from the plan only, shared by `compile` and reports."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.table import Table

from generators.model.plan import Plan
from generators.model.sections import OobFacts
from generators.stages import backend_net
from generators.stages.netplan import summary_rows
from generators.views import ztp

NETWORKS = ("backend", "frontend", "oob")


def counts(plan: Plan) -> dict[str, Any]:
    servers = [d for d in plan.devices if d.kind == "server"]
    gpus_per = plan.catalog.servers[plan.design.compute.server].gpus
    switches: Counter[tuple[str, str]] = Counter()
    for d in plan.devices:
        if d.kind == "switch":
            switches[(d.network or "", d.role)] += 1
    links: Counter[tuple[str, str]] = Counter((lk.network, lk.tier) for lk in plan.links)
    return {
        "servers": len(servers),
        "gpus": len(servers) * gpus_per,
        "storage_servers": sum(d.kind == "storage" for d in plan.devices),
        "management_nodes": sum(d.kind == "management" for d in plan.devices),
        "switches": {f"{n}/{r}": c for (n, r), c in sorted(switches.items())},
        "links": {f"{n}/{t}": c for (n, t), c in sorted(links.items())},
        "racks": dict(sorted(Counter(r.role for r in plan.racks).items())),
        "cabling": plan.cabling.to_dict() if plan.cabling is not None else {},
    }


def _scale_up(plan: Plan) -> str:
    """The rack system's scale-up fabric as its vendor names it (UALink on Helios): the plan's network
    and role are `nvlink` for every rack system (one vocabulary), the table says what the site has."""
    rs = plan.catalog.rack_systems.get(plan.design.compute.system or "")
    return rs.scale_up if rs is not None else "nvlink"


def summary_table(plan: Plan) -> Table:
    c = counts(plan)
    scale_up = _scale_up(plan)

    def named(word: str) -> str:
        return scale_up if word == "nvlink" else word

    t = Table(title=f"railyard: {plan.design.name}", show_lines=False)
    t.add_column("what")
    t.add_column("network")
    t.add_column("count", justify="right")
    t.add_row("servers", "", f"{c['servers']:,}")
    t.add_row("GPUs", "", f"{c['gpus']:,}")
    t.add_row("storage servers", "", str(c["storage_servers"]))
    t.add_row("management nodes", "", str(c["management_nodes"]))
    for key, n in c["switches"].items():
        net, role = key.split("/")
        t.add_row(f"switches: {named(role)}", named(net), f"{n:,}")
    for key, n in c["links"].items():
        net, tier = key.split("/")
        t.add_row(f"links: {named(tier)}", named(net), f"{n:,}")
    # a dedicated storage fabric is a network of its own (its cost is the BoM's storage category)
    for net in (*NETWORKS, *(["storage"] if "storage" in plan.networks else [])):
        if net not in plan.networks:
            continue
        info = plan.networks[net]
        if not isinstance(info, OobFacts):
            o = info.oversubscription
            t.add_row("oversubscription", net, f"{o.requested} (measured {o.measured or '?'})")
            t.add_row("tiers", net, str(info.tiers))
        if info.spare_ports is not None:
            t.add_row("spare switch ports", net, f"{info.spare_ports:,}")
    sl = plan.slurm
    if sl:
        t.add_row("slurm switches by level", "backend", " / ".join(str(n) for n in sl.switches_per_level))
        t.add_row("slurm blocks (sizes)", "backend", f"{sl.blocks} ({','.join(map(str, sl.block_sizes))})")
    ib = plan.infiniband
    if ib:
        t.add_row("subnet managers", "backend", ", ".join(s.node for s in ib.subnet_managers))
        t.add_row("partition keys", "backend", ", ".join(f"{p.name} {p.pkey}" for p in ib.partitions))
    bis = plan.networks.backend.bisection
    if bis:
        t.add_row("bisection (max-flow)", "backend", f"{bis.ratio:.0%} of {bis.demand_gbps:,} Gb/s")
    for row in [*summary_rows(plan), *backend_net.summary_rows(plan)]:
        t.add_row(*row)
    if (ztp_row := ztp.summary_row(plan)) is not None:
        t.add_row(*ztp_row)
    for role, n in c["racks"].items():
        t.add_row(f"racks: {role}", "", f"{n:,}")
    cab = c["cabling"]
    if cab:
        for key, n in cab["cables"].items():
            net, media = key.split("/")
            t.add_row(f"cables: {media}", net, f"{n:,}")
        for net, n in cab["transceivers"].items():
            if n:
                t.add_row("transceivers", net, f"{n:,}")
        t.add_row("copper (DAC/ACC)", "", f"{cab['copper_m']:,.0f} m")
        t.add_row("fiber (AOC/MMF/SMF)", "", f"{cab['fiber_m']:,.0f} m")
        t.add_row("Cat6", "", f"{cab['cat6_m']:,.0f} m")
        t.add_row("fullest tray segment", "", f"{cab['max_tray_fill']:.0%}")
    _bom_rows(t, plan)
    return t


def _bom_rows(t: Table, plan: Plan) -> None:
    bom = plan.bom
    if not bom:
        return
    t.add_row("cost: cluster total", "", f"${bom.total_usd:,.0f}")
    for net in NETWORKS:
        t.add_row("cost: network", net, f"${bom.by_category.get(net, 0):,.0f}")
    t.add_row("cost: per compute server, excl. storage", "", f"${bom.per_server_excl_storage_usd:,.0f}")
    t.add_row("cost: per GPU", "", f"${bom.per_gpu_usd:,.0f}")
    st = bom.storage or {}
    if st:
        t.add_row(
            "storage: usable / bandwidth", "", f"{st['usable_tb'] / 1000:,.2f} PB / {st['bandwidth_gbps']:,.0f} GB/s"
        )
