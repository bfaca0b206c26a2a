"""`railyard compare`: designs side by side, cost by category, each against the first design.

The comparison reads nothing but each design's BoM (which reads nothing but its plan), so a delta
here is exactly what the designs' differences cost: the playbook's backend savings (top-of-rack,
virtual modular switch, 2:1) show up as the backend row's percentage. Designs of different sizes
(GPU counts) get each category per GPU as well, a note saying so, and deltas only on rows that scale
with nothing (per GPU, per server): a total's percentage would mostly measure the size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from rich.table import Table

from generators.model.plan import Plan
from generators.model.sections import Bom
from generators.renderers.bom import usd
from generators.reports.summary import counts
from generators.stages.bom import CATEGORIES, CATEGORY_TITLES, pct

# (key in bom.json, label, scales with the design's size) for the headline rows under the categories
TOTAL_ROWS = (
    ("total_usd", "total", True),
    ("per_server_excl_storage_usd", "per compute server, excl. storage", False),
    ("per_server_usd", "per compute server", False),
    ("per_gpu_usd", "per GPU", False),
    ("node_usd", "compute node", False),
)


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    values: tuple[float, ...]
    emphasis: bool = False
    unit: Literal["usd", "count"] = "usd"
    # a delta is shown only where it compares like with like: a per-GPU or per-server figure, or a
    # total of designs of one size (a 1,024-GPU design's backend costs more than a 256-GPU one's)
    comparable: bool = True
    group: str = "categories"  # rows of one group are drawn together; a new group starts a table section

    def deltas(self) -> tuple[float, ...]:
        base = self.values[0]
        return tuple(pct(v, base) for v in self.values)


def same_size(boms: list[Bom]) -> bool:
    return len({b.gpus for b in boms}) == 1


def size_note(boms: list[Bom]) -> str | None:
    """The warning a comparison of designs of different sizes needs, or None when they are one size."""
    if same_size(boms):
        return None
    sizes = list(dict.fromkeys(b.gpus for b in boms))  # distinct, in the designs' order
    return f"designs differ in size ({' vs '.join(f'{n:,}' for n in sizes)} GPUs): compare the per-GPU rows"


def compare_rows(boms: list[Bom]) -> list[Row]:
    same = same_size(boms)
    rows = [
        Row("GPUs", tuple(float(b.gpus) for b in boms), unit="count", comparable=False, group="size"),
        Row("GPU servers", tuple(float(b.servers) for b in boms), unit="count", comparable=False, group="size"),
    ]
    present = [c for c in CATEGORIES if any(b.by_category.get(c, 0.0) for b in boms)]
    for c in present:
        vals = tuple(float(b.by_category.get(c, 0.0)) for b in boms)
        rows.append(Row(CATEGORY_TITLES[c], vals, emphasis=same and c == "backend", comparable=same))
    if not same:
        # each category over each design's own GPU count: the figures that compare across sizes
        for c in present:
            vals = tuple(float(b.by_category.get(c, 0.0)) / b.gpus if b.gpus else math.nan for b in boms)
            rows.append(Row(f"{CATEGORY_TITLES[c]} per GPU", vals, emphasis=c == "backend", group="per GPU"))
    for key, label, scales in TOTAL_ROWS:
        vals = tuple(float(b.node["unit_usd"] if key == "node_usd" else getattr(b, key)) for b in boms)
        rows.append(
            Row(
                label,
                vals,
                emphasis=key in ("total_usd", "per_server_excl_storage_usd"),
                comparable=same or not scales,
                group="totals",
            )
        )
    return rows


def _delta(d: float) -> str:
    if math.isnan(d):
        return "n/a"
    if abs(d) < 0.05:
        return "±0.0%"
    return f"{d:+.1f}%"


def _cells(row: Row) -> list[str]:
    out = []
    for i, (v, d) in enumerate(zip(row.values, row.deltas(), strict=True)):
        text = f"{v:,.0f}" if row.unit == "count" else "n/a" if math.isnan(v) else usd(v)
        out.append(text if i == 0 or not row.comparable else f"{text} ({_delta(d)})")
    return out


def compare_table(boms: list[Bom]) -> Table:
    note = size_note(boms)
    t = Table(
        title=f"railyard compare: cost by category, deltas against {boms[0].design}",
        caption=note,
        caption_style="bold yellow",
    )
    t.add_column("", no_wrap=True)
    for i, b in enumerate(boms):
        t.add_column(f"{b.design}\n{b.gpus:,} GPUs" + ("" if i else " (base)"), justify="right")
    group = None
    for row in compare_rows(boms):
        if group is not None and row.group != group:
            t.add_section()
        group = row.group
        t.add_row(row.label, *_cells(row), style="bold" if row.emphasis else None)
    return t


def compare_markdown(boms: list[Bom]) -> str:
    note = size_note(boms)
    head = ["USD"] + [f"{b.design}" + ("" if i else " (base)") for i, b in enumerate(boms)]
    out = [f"**Note:** {note}", ""] if note else []
    out += ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(boms) + "|"]
    for row in compare_rows(boms):
        label = f"**{row.label}**" if row.emphasis else row.label
        out.append("| " + " | ".join([label, *_cells(row)]) + " |")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ what each design builds

BACKEND_TIERS = ("server-leaf", "leaf-spine", "spine-core")
BACKEND_HOSTS = "backend/server-leaf"  # counts(plan)["links"] key of the host ports on the backend


@dataclass(frozen=True, slots=True)
class SiteRow:
    """One design's build, read from its compiled plan: the closing table of a design review."""

    design: str
    servers: int
    gpus: int
    backend_switches: tuple[int, int, int]  # leaf, spine, core
    backend_links: tuple[int, int, int]  # per tier of BACKEND_TIERS
    other_switches: int  # every switch outside the backend (frontend, OOB, a storage fabric)
    transceivers: int  # every transceiver the cable plan buys, both ends, all networks
    racks: int
    compute_rack_kw: float  # the most loaded compute rack
    per_gpu_usd: float
    planes: int  # the backend's network planes (1: a single fabric)
    # the backend fabric's cost (switches, optics, cables) over its endpoints, the host ports on it: the
    # figure DeepSeek's multi-plane paper compares topologies by (ISCA 2025, arXiv 2505.09343)
    backend_per_endpoint_usd: float


def site_row(plan: Plan) -> SiteRow:
    c = counts(plan)
    sw, links = c["switches"], c["links"]
    assert plan.cabling is not None and plan.bom is not None, "a full compile has a cable plan and a BoM"
    compute = [r.power_kw for r in plan.racks if r.role == "compute"]
    return SiteRow(
        design=plan.design.name,
        servers=c["servers"],
        gpus=c["gpus"],
        backend_switches=tuple(sw.get(f"backend/{r}", 0) for r in ("leaf", "spine", "core")),
        backend_links=tuple(links.get(f"backend/{t}", 0) for t in BACKEND_TIERS),
        other_switches=sum(n for k, n in sw.items() if not k.startswith("backend/")),
        transceivers=sum(plan.cabling.transceivers.values()),
        racks=len(plan.racks),
        compute_rack_kw=max(compute, default=0.0),
        per_gpu_usd=plan.bom.per_gpu_usd,
        planes=plan.networks.backend.planes or 1,
        backend_per_endpoint_usd=plan.bom.backend_fabric_usd / hosts if (hosts := links.get(BACKEND_HOSTS, 0)) else 0.0,
    )


SITE_HEAD = (
    "design",
    "servers",
    "GPUs",
    "backend leaf/spine/core",
    "backend links per tier",
    "other switches",
    "transceivers",
    "racks",
    "kW per compute rack (max)",
    "cost per GPU",
    "backend planes",
    "backend cost per endpoint",
)


def _site_cells(r: SiteRow) -> list[str]:
    def slash(xs: tuple[int, ...]) -> str:
        return " / ".join(f"{x:,}" for x in xs)

    return [
        r.design,
        f"{r.servers:,}",
        f"{r.gpus:,}",
        slash(r.backend_switches),
        slash(r.backend_links),
        f"{r.other_switches:,}",
        f"{r.transceivers:,}",
        f"{r.racks:,}",
        f"{r.compute_rack_kw:.1f}",
        usd(r.per_gpu_usd),
        f"{r.planes:,}",
        usd(r.backend_per_endpoint_usd),
    ]


def sites_table(rows: list[SiteRow]) -> Table:
    t = Table(
        title="railyard compare --sites: what each design builds",
        caption="links per tier: " + " / ".join(BACKEND_TIERS),
    )
    for i, h in enumerate(SITE_HEAD):
        t.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for r in rows:
        t.add_row(*_site_cells(r))
    return t


def sites_markdown(rows: list[SiteRow]) -> str:
    out = ["| " + " | ".join(SITE_HEAD) + " |", "|---" + "|---:" * (len(SITE_HEAD) - 1) + "|"]
    out += ["| " + " | ".join(_site_cells(r)) + " |" for r in rows]
    return "\n".join(out) + f"\n\nBackend links per tier: {' / '.join(BACKEND_TIERS)}.\n"
