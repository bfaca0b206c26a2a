"""DIR/index.html: what a compile wrote, one line on each part, so a user knows what to open first.

Made from the paths every other renderer wrote (`render_all`, `render_into`), so it lists exactly what
is there. Every top-level file and folder must have a line in PARTS: a new artifact family cannot land
undescribed (the compile fails naming it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from generators.model.plan import Plan
from generators.text.templating import environment

INDEX = "index.html"

# top-level file or folder -> (what it is, the file to open first in a folder, or "")
PARTS: dict[str, tuple[str, str]] = {
    "bom.html": ("the bill of materials with prices and their sources, by category (also bom.csv, bom.json)", ""),
    "bom.csv": ("the bill of materials as a spreadsheet", ""),
    "bom.json": ("the bill of materials as JSON", ""),
    "floor.html": ("the floor: rows, racks, trays and what stands where (floor.svg: the drawing alone)", ""),
    "floor.svg": ("the floor drawing", ""),
    "failure-domains.csv": (
        "a multi-plane backend: what one switch, one plane or one rack of switches takes away (GPUs losing "
        "bandwidth, bisection kept)",
        "",
    ),
    "plan.json": (
        "the compiled plan every file here comes from: devices, links, cables, racks, each stage's facts",
        "",
    ),
    "cabling": (
        "the cable plan: every cable with its id, label, medium and length; rack and row sheets, labels",
        "cables.csv",
    ),
    "frontend": ("frontend switch configs, a folder per switch", ""),
    "backend": ("RoCE backend switch configs, a folder per switch", ""),
    "oob": ("out-of-band switch configs, and the Kea DHCP server's config for the BMCs", "kea-dhcp4.conf"),
    "infiniband": ("the InfiniBand subnet manager: OpenSM files, the expected topology, UFM bodies", "opensm.conf"),
    "hosts": ("each server's backend network config (netplan, NCCL) for a RoCE backend", ""),
    "storage": ("what the storage cluster is told of each tenant's network", "tenants.json"),
    "slurm": ("Slurm: the topology (tree and blocks), nodes and GRES", "topology.conf"),
    "ztp": (
        "zero-touch provisioning: per switch, the file its OS's ZTP fetches first (named by its DHCP option "
        "in oob/kea-dhcp4.conf); `railyard serve-ztp` serves them",
        "switches.json",
    ),
    "netbox": ("NetBox bulk-import files, in import order, and how to import them", "README.md"),
}
# what to open first, in this order, when the compile wrote it
FIRST = ("cabling/cables.csv", "bom.html", "floor.html")


def render_index(plan: Plan, paths: Iterable[str]) -> dict[str, str]:
    """index.html for the files at `paths` (every other renderer's)."""
    files: Counter[str] = Counter()
    for p in paths:
        files[p.split("/", 1)[0]] += 1
    unknown = sorted(set(files) - set(PARTS))
    if unknown:
        raise RuntimeError(
            f"the output holds {', '.join(unknown)}, which index.html does not describe: add it to PARTS"
        )
    have = set(paths) if not isinstance(paths, set) else paths
    rows = []
    for top in sorted(files, key=lambda t: (t not in ("cabling", "bom.html", "floor.html"), "/" in t, t)):
        what, first = PARTS[top]
        is_dir = files[top] > 1 or top not in have
        link = f"{top}/{first}" if is_dir and first and f"{top}/{first}" in have else (f"{top}/" if is_dir else top)
        rows.append({"name": top + ("/" if is_dir else ""), "link": link, "what": what, "files": files[top]})
    html = (
        environment(autoescape=True, trim=False)
        .get_template("index.html.j2")
        .render(design=plan.design.name, description=plan.design.description, rows=rows, total=sum(files.values()))
    )
    return {INDEX: html}


def open_next(paths: Iterable[str]) -> list[str]:
    """The files to open first, as a compile's last lines list them."""
    have = set(paths)
    return [INDEX, *(p for p in FIRST if p in have)]
