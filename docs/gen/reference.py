"""The docs site's reference pages, generated from the code on every build (an mkdocs hook, see mkdocs.yml).

- reference/design-fields.md: every design field, from the JSON Schema `railyard schema` prints
  (generators.model.design.json_schema.design_schema over designs/catalog.yaml).
- reference/cli.md: every command and subcommand of `railyard`, from the click command typer builds of
  generators.cli.app: usage, help, and each argument and option as click's own help prints it.
- reference/outputs.md: every output file, as path patterns, from compiling designs in a temp folder:
  designs/h100-256.yaml, the one design per family that tests/golden.py names, and
  designs/dgx-h100-superpod-4su.yaml (an InfiniBand storage fabric); plus `cabling pack --html-only`.
  The one-line descriptions are OUTPUTS below, written by hand: the build fails when a compile makes a
  pattern OUTPUTS does not describe (a new artifact cannot go undocumented), or when OUTPUTS describes
  a pattern no compile makes (a removed one cannot stay documented).

Nothing is written into docs/: the pages are mkdocs "generated" files, alive for the build only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # mkdocs loads this file by path; railyard runs from the checkout
    sys.path.insert(0, str(ROOT))

# ---------------------------------------------------------------------------------------- design fields


def _ref(p: dict[str, Any]) -> str | None:
    """The model a property holds (directly, as `X | null`, or as the items of a list), if any."""
    if "$ref" in p:
        return str(p["$ref"]).rsplit("/", 1)[-1]
    for alt in p.get("anyOf", []):
        if "$ref" in alt:
            return str(alt["$ref"]).rsplit("/", 1)[-1]
    items = p.get("items", {})
    if p.get("type") == "array" and "$ref" in items:
        return str(items["$ref"]).rsplit("/", 1)[-1]
    return None


def _code(value: Any) -> str:
    """A value as YAML or JSON writes it, in a code span (strings quoted, so "2" and 2 differ)."""
    return _literal(json.dumps(value))


def _literal(text: str) -> str:
    return "`" + text + "`"  # a pipe in a code span does not split a table cell


def _bounds(p: dict[str, Any]) -> str:
    parts = []
    if "minimum" in p and "maximum" in p:
        parts.append(f"{p['minimum']}..{p['maximum']}")
    elif "minimum" in p:
        parts.append(f"≥ {p['minimum']}")
    elif "maximum" in p:
        parts.append(f"≤ {p['maximum']}")
    if "maxLength" in p:
        parts.append(f"at most {p['maxLength']} characters")
    if "maxItems" in p:
        parts.append(f"at most {p['maxItems']} items")
    return ", ".join(parts)


def _type(p: dict[str, Any], defs: dict[str, Any]) -> str:
    """A property's type as a reader wants it: `integer 1..8 or null`, `one of a, b`, `list of string`."""
    if "anyOf" in p:
        alts = [_type(a, defs) for a in p["anyOf"]]
        return " or ".join(dict.fromkeys(alts))
    if "$ref" in p:
        return "mapping (below)"
    if "enum" in p:
        return "one of " + ", ".join(_code(v) for v in p["enum"])
    t = p.get("type", "any")
    out = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "null": "null"}.get(t, t)
    if t == "array":
        items = p.get("items", {})
        out = "list of mappings (below)" if "$ref" in items else f"list of {_type(items, defs)}"
    elif t == "object":
        names = p.get("propertyNames", {}).get("enum")
        values = p.get("additionalProperties")
        if names:
            out = "mapping of " + ", ".join(_code(n) for n in names) + f" to {_type(values or {}, defs)}"
        elif isinstance(values, dict) and values.get("type") == "object":
            out = "mapping of key to its fields"
        else:
            out = "mapping"
    if "pattern" in p:
        out += " matching " + _literal(p["pattern"])
    bounds = _bounds(p)
    return f"{out} ({bounds})" if bounds else out


def _cell(text: str) -> str:
    """Text for a table cell: one line; outside code spans, pipes escaped and `<x>` kept as text rather
    than read as an HTML tag."""
    parts = " ".join(text.split()).split("`")
    for i in range(0, len(parts), 2):  # outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return "`".join(parts)


def field_rows(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], bool, str | None]]:
    """(section, field path, property, required, nested model) for every field, depth first; a section is
    the path of the mapping that holds the field ("" for the top level)."""
    defs = schema["definitions"]
    rows: list[tuple[str, str, dict[str, Any], bool, str | None]] = [
        ("", "extends", schema["properties"]["extends"], False, None)
    ]

    def walk(model: str, section: str) -> None:
        d = defs[model]
        required = set(d.get("required", []))
        prefix = section + "." if section else ""
        for name, prop in d.get("properties", {}).items():
            path = prefix + name
            sub = _ref(prop)
            rows.append((section, path, prop, name in required, sub))
            if sub:
                walk(sub, path + ("[]" if prop.get("type") == "array" else ""))

    walk("Design", "")
    return rows


def design_fields_md() -> str:
    from generators.model.catalog import load_catalog
    from generators.model.design.json_schema import design_schema

    schema = design_schema(load_catalog(ROOT / "designs" / "catalog.yaml"))
    defs = schema["definitions"]
    rows = field_rows(schema)
    # each section's own description: the model's, else the property's that holds it
    about = {"": defs["Design"].get("description", "")}
    for _, path, prop, _, sub in rows:
        if sub:
            about[path + ("[]" if prop.get("type") == "array" else "")] = defs[sub].get("description") or prop.get(
                "description", ""
            )
    table: dict[str, list[str]] = {}
    for section, path, prop, required, sub in rows:
        if sub:
            kind = "list of mappings (below)" if prop.get("type") == "array" else "mapping (below)"
            if any(a.get("type") == "null" for a in prop.get("anyOf", [])):
                kind += " or null"
            default = "`null`" if "default" in prop and prop["default"] is None else ""
            desc = prop.get("description") or defs[sub].get("description", "")
        else:
            kind = _type(prop, defs)
            default = _code(prop["default"]) if "default" in prop else ""
            desc = prop.get("description", "")
        if required:
            desc = "**required.** " + desc
        # a field's anchor is its path (`#backend.speed`); a mapping's is its own section's heading
        name = f"`{path}`" if sub else f'<span id="{path.replace("[]", "")}"></span>`{path}`'
        table.setdefault(section, []).append(f"| {name} | {_cell(kind)} | {_cell(default)} | {_cell(desc)} |")
    lines = [
        "# Design fields",
        "",
        "Every field of a design file, generated from the JSON Schema that `railyard schema` prints for",
        "`designs/catalog.yaml` (the same as `designs/design.schema.json`). Catalog keys (server, switch, NIC,",
        "CPU, license, rack, PDU, CDU and rack-system models) are listed as that catalog's keys; a site's own",
        "catalog (`--catalog FILE`, or a design's `catalog:` overlay) may offer others. A list of mappings is",
        "written `field[].subfield`. With `extends:` every field is optional; without it, the fields marked",
        '**required** must be there. Speeds are written `"200G"` or `200`, ratios `"2:1"` or `2`. What a',
        "schema cannot say (rules across fields or with the catalog's data) `railyard validate` checks: see",
        "[Input limits and exit codes](limits.md).",
        "",
    ]
    for section, entries in table.items():
        lines += [f"## `{section}`" if section else "## Top level", ""]
        if about.get(section):
            lines += [_cell(about[section]), ""]
        lines += ["| field | type | default | description |", "|---|---|---|---|", *entries, ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- CLI


def cli_md() -> str:
    import typer

    from generators.cli import app

    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="railyard")
    lines = [
        "# Command line",
        "",
        "Every `railyard` command, generated from the command line's own definitions (what",
        "`railyard COMMAND --help` prints). Exit codes are the same for every command: see",
        "[Input limits and exit codes](limits.md).",
        "",
    ]

    def walk(cmd: Any, ctx: Any, depth: int) -> None:
        path = ctx.command_path
        lines.extend([f"{'#' * min(depth, 4)} `{path}`", ""])
        lines.extend(["```", f"{path} {' '.join(cmd.collect_usage_pieces(ctx))}", "```", ""])
        if cmd.help:
            lines.extend([_cell(cmd.help), ""])
        params = [p for p in cmd.get_params(ctx) if p.name != "help"]
        records = [(p, p.get_help_record(ctx)) for p in params]
        records = [(p, r) for p, r in records if r]
        if records:
            lines.extend(["| argument or option | what |", "|---|---|"])
            for _, (names, text) in records:
                lines.append(f"| {_literal(' '.join(names.split()))} | {_cell(text)} |")
            lines.append("")
        subs = getattr(cmd, "commands", {})
        if subs:
            lines.extend(["| command | what |", "|---|---|"])
            for name, sub in subs.items():
                anchor = f"{path} {name}".replace(" ", "-")
                lines.append(f"| [`{path} {name}`](#{anchor}) | {_cell(sub.get_short_help_str(limit=200))} |")
            lines.append("")
        for name, sub in subs.items():
            walk(sub, sub.context_class(sub, info_name=name, parent=ctx), depth + 1)

    walk(root, ctx, 2)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- output files

# pattern -> what the file is. <switch>, <server>, <rack>, <row>, <tenant> stand for each one's name.
OUTPUTS: dict[str, str] = {
    "index.html": "open it first. compile: every top-level file and folder with a line on what it is; explore: "
    "the scatters of capex against power and bisection (plotly.js inline, works offline) and every point, "
    "each linking its design file and its comparison with the base",
    ".railyard-manifest.json": "every file railyard wrote into the folder, with its SHA-256: a later run "
    "replaces and removes only these ([Output folders](output-folders.md))",
    "plan.json": "the compiled plan (`railyard.plan/1`): the validated design and catalog, devices, links, "
    "networks and one section per stage; every other file is rendered from it",
    "bom.csv": "bill of materials, one row per part: category, kind, part, SKU, quantity, unit and extended "
    "price, price source and date",
    "bom.json": "the BoM's totals, per server, per GPU, per server excluding storage, by category, storage "
    "sizing, and its lines",
    "bom.html": "the BoM as printable tables and stacked bars (inline SVG, no external assets)",
    "floor.svg": "the floor map to print: racks in their role's colour, rows with their power, trays shaded "
    "by fill, keep-outs, scale and legend",
    "floor.html": "the floor map as one self-contained page with a search box (device, rack or cable id; "
    "`floor.html#q=gpu057`)",
    "failure-domains.csv": "a multi-plane backend (`backend.planes`, or planes inside its switches): one row per "
    "kind of failure (a leaf, "
    "a spine, a core, a plane, a leaf, spine or core rack), its worst member: the switches it takes down, "
    "the GPUs losing backend bandwidth and those cut off beyond their leaf, the worst GPU's share kept, and "
    "the planes' bisection max-flow left and its share ([Fabric](fabric.md))",
    "cabling/cables.csv": "one row per link: cable id, label, network, tier, both ends (rack, unit, device, "
    "port), media, part, length, reach, transceivers",
    "cabling/internal.csv": "rack-scale systems: each rack's NVLink backplane, listed and never routed",
    "cabling/racks/<rack>.csv": "the rack's cables in pull order, with both ends and labels",
    "cabling/racks/<rack>.html": "printable rack sheet (A4 landscape): elevation, cables in pull order with "
    "tick boxes, PDU outlets, QR codes",
    "cabling/racks/<rack>.pdf": "the rack sheet printed by headless Chromium (`cabling pack` without `--html-only`)",
    "cabling/rows/<row>.csv": "the bill of cables to stage for the row: counts per part and length",
    "cabling/rows/<row>.html": "the row sheet: its racks and the bill of cables to stage",
    "cabling/rows/<row>.pdf": "the row sheet printed by headless Chromium (`cabling pack` without `--html-only`)",
    "cabling/labels/<rack>.csv": "label-printer database for Brady Workstation, DYMO Connect or Brother "
    "P-touch Editor: one label per row, two per cable, QR payload the cable id",
    "cabling/labels/<rack>.zpl": "the same labels for Zebra printers (`nc <printer> 9100 < r01-01.zpl`)",
    "frontend/<switch>/config_db.json": "SONiC frontend switch: ports, loopback, VLANs, VRFs, VXLAN maps, the "
    "tenants' gateways, management VRF and plane (NTP, syslog, DNS, SNMPv3, TACACS+/RADIUS: [Day 0](../howto/day0.md))",
    "frontend/<switch>/users.sh": "SONiC switch's local users: SHA-512 crypt hashes (`chpasswd -e`) and SSH keys; "
    "run as root ([Day 0](../howto/day0.md))",
    "frontend/<switch>/frr.conf": "SONiC frontend switch: FRR with eBGP unnumbered underlay and EVPN overlay",
    "frontend/<switch>/eos.cfg": "Arista EOS frontend switch: the config pyavd renders from railyard's "
    "validated AVD structured config",
    "frontend/avd/fabric.yml": "the EOS frontend as AVD `eos_designs` inputs (with `hosts.yml`), for `arista.avd`",
    "frontend/avd/hosts.yml": "the AVD inventory that goes with `fabric.yml`",
    "oob/kea-dhcp4.conf": "ISC Kea: every BMC and management port reserved by relay circuit-id; a switch's "
    "reservation also answers its OS's ZTP option ([Zero-touch provisioning](../howto/ztp.md))",
    "ztp/switches.json": "zero-touch provisioning: per switch its OS, address, access port, DHCP options and "
    "every file it fetches; the switches without ZTP and why (`railyard serve-ztp` serves from it)",
    "ztp/<switch>/ztp.json": "SONiC ZTP JSON (DHCP option 67): installs frr.conf, then loads config_db.json",
    "ztp/<switch>/frr-conf.sh": "SONiC ZTP plugin script: puts the switch's frr.conf into /etc/sonic/frr/",
    "ztp/<switch>/bootstrap": "EOS ZTP boot script (DHCP option 67): copies eos.cfg to the startup-config",
    "ztp/<switch>/cumulus-ztp.sh": "Cumulus Linux ZTP script (DHCP option 239, CUMULUS-AUTOPROVISIONING): "
    "replaces the NVUE config with startup.yaml and applies it",
    "oob/<switch>/config_db.json": "SONiC out-of-band access or aggregation switch",
    "oob/<switch>/frr.conf": "FRR for a SONiC out-of-band switch",
    "oob/<switch>/users.sh": "SONiC out-of-band switch's local users (as `frontend/<switch>/users.sh`)",
    "oob/<switch>/startup.yaml": "Cumulus Linux (NVUE) out-of-band switch, for `nv config replace`",
    "oob/<switch>/eos.cfg": "Arista EOS out-of-band aggregation switch (via pyavd)",
    "backend/<switch>/config_db.json": "SONiC RoCE backend switch: ports at their (split) speed, MTU 9100, "
    "routed /31 server ports in their tenant's VRF, RoCEv2 lossless QoS",
    "backend/<switch>/frr.conf": "FRR for a SONiC RoCE backend switch: eBGP unnumbered, 64-way ECMP, the "
    "VRFs as EVPN type-5",
    "backend/<switch>/eos.cfg": "Arista EOS RoCE backend switch, with EOS's RoCE QoS",
    "backend/<switch>/users.sh": "SONiC RoCE backend switch's local users (as `frontend/<switch>/users.sh`)",
    "backend/<switch>/startup.yaml": "Cumulus Linux (NVUE) RoCE backend switch, for `nv config replace`",
    "hosts/<server>/netplan.yaml": "RoCE backend: each backend NIC's /31, MTU 9000, routes and a routing table per NIC",
    "hosts/<server>/planes.yaml": "RoCE backend whose NICs are broken out into planes (`backend.plane_split: "
    "nic_port`): each NIC's legs with their plane, RDMA device, interface, leaf and address",
    "hosts/network-operator/nicconfigurationtemplate.yaml": "the same: NVIDIA Network Operator's "
    "NicConfigurationTemplate, the NIC's Spectrum-X multiplane mode and plane count (a NIC the catalog gives a "
    "`pci_device_id`)",
    "hosts/<server>/nccl.env": "RoCE backend: `NCCL_IB_HCA` in rail order, GID index, traffic class, "
    "`NCCL_SOCKET_IFNAME`",
    "infiniband/<switch>/mgmt.cfg": "MLNX-OS InfiniBand switch's own management plane in its CLI: mgmt0 "
    "address, users, SNMPv3, NTP, syslog, DNS, AAA ([Day 0](../howto/day0.md))",
    "infiniband/<switch>/mgmt.nv": "NVOS InfiniBand switch's own management plane as `nv set` commands "
    "([Day 0](../howto/day0.md))",
    "infiniband/opensm.conf": "OpenSM: ftree routing, root GUID file, partitions, `part_enforce both`",
    "infiniband/partitions.conf": "one pkey per tenant over every rail of its servers; the default "
    "partition's full members are the subnet managers",
    "infiniband/root_guids": "the fabric's root switches for ftree routing",
    "infiniband/node-name-map": "GUID to plan name, for the InfiniBand tools",
    "infiniband/topology.net": "the expected fabric in ibnetdiscover format (placeholder GUIDs until "
    "`verify --write-config`)",
    "infiniband/ufm/requests.json": "UFM sites: the PKey REST requests in order",
    "infiniband/ufm/<tenant>-create.json": "UFM: the request body that creates the tenant's PKey",
    "infiniband/ufm/<tenant>-members.json": "UFM: the request body that adds the tenant's ports to its PKey",
    "infiniband/<plane>/opensm.conf": "a multi-plane InfiniBand backend: each plane's own OpenSM subnet (its "
    "ftree roots, subnet managers and `subnet_prefix`; [Slurm and InfiniBand](slurm-infiniband.md))",
    "infiniband/<plane>/partitions.conf": "the plane's partitions: the same tenant keys and servers in every plane",
    "infiniband/<plane>/root_guids": "the plane's root switches (its own spines, or ASIC k of each spine box)",
    "infiniband/<plane>/node-name-map": "GUID to plan name in the plane",
    "infiniband/<plane>/topology.net": "the plane's expected fabric in ibnetdiscover format",
    "infiniband/<plane>/ufm/requests.json": "UFM sites: the plane's PKey REST requests in order",
    "infiniband/<plane>/ufm/<tenant>-create.json": "UFM: the request body that creates the tenant's PKey in the plane",
    "infiniband/<plane>/ufm/<tenant>-members.json": "UFM: the body that adds the tenant's ports in the plane",
    "infiniband/planes.csv": "planes inside the switches (a Q3450-LD): each host port's lane in every plane, as "
    "that plane's subnet names it (HCA node, port GUID, switch ASIC and port, subnet prefix)",
    "infiniband/storage/opensm.conf": "a dedicated InfiniBand storage fabric's own OpenSM subnet",
    "infiniband/storage/partitions.conf": "the storage subnet's partitions: each tenant's key on its "
    "servers' storage ports",
    "infiniband/storage/root_guids": "the storage fabric's root switches",
    "infiniband/storage/node-name-map": "GUID to plan name on the storage fabric",
    "infiniband/storage/topology.net": "the expected storage fabric in ibnetdiscover format",
    "infiniband/storage/<switch>/mgmt.cfg": "MLNX-OS storage-fabric switch's own management plane (as "
    "`infiniband/<switch>/mgmt.cfg`)",
    "slurm/topology.conf": "Slurm topology/tree, derived from the backend graph",
    "slurm/topology-block.conf": "Slurm topology/block (23.11+): one block per unit (per rack for rack-scale systems)",
    "slurm/topology.yaml": "rack-scale systems, Slurm 25.05+: the fabric tree as default topology and the "
    "racks as topology `nvlink`",
    "slurm/nodes.conf": "nodes (CPUs, 97 % of RAM, `Gres=gpu:8`) and one partition per tenant plus the "
    "operators' default",
    "slurm/gres.conf": "the GPUs of each node",
    "slurm/slurm.conf": "a `slurm.conf` fragment that includes the others",
    "storage/tenants.json": "per tenant: storage VLAN, subnet and front-end addresses, as a VAST tenant + "
    "VIP pool and a Weka organization + NFS groups",
    "netbox/README.md": "the import order, each file's NetBox import page and row count, and what an "
    "import cannot carry",
    "netbox/01-tenants.csv": "NetBox import: tenants",
    "netbox/02-sites.csv": "NetBox import: the site",
    "netbox/03-locations.csv": "NetBox import: a location per rack row",
    "netbox/04-racks.csv": "NetBox import: racks at the design's height",
    "netbox/05-manufacturers.csv": "NetBox import: manufacturers",
    "netbox/06-device-roles.csv": "NetBox import: device roles",
    "netbox/07-device-types.yaml": "NetBox import: device types with their interface templates (YAML: "
    "NetBox has no CSV import for interface templates)",
    "netbox/08-devices.csv": "NetBox import: devices at their rack, unit and face",
    "netbox/09-interfaces.csv": "NetBox import: the virtual interfaces railyard adds (loopbacks, VLAN "
    "interfaces, bonds)",
    "netbox/10-cables.csv": "NetBox import: one row per NetBox cable",
    "netbox/11-rirs.csv": "NetBox import: RIRs",
    "netbox/12-asns.csv": "NetBox import: ASNs",
    "netbox/13-vrfs.csv": "NetBox import: VRFs",
    "netbox/14-vlans.csv": "NetBox import: VLANs",
    "netbox/15-prefixes.csv": "NetBox import: prefixes",
    "netbox/16-ip-addresses.csv": "NetBox import: IP addresses bound to their interfaces, primary and OOB set",
    "netbox/17-power-panels.csv": "NetBox import: power panels, a row's AC feed side or a power sidecar's "
    "800 VDC busway",
    "netbox/18-power-feeds.csv": "NetBox import: power feeds, one per circuit into a rack (a PDU or shelf whip, a "
    "sidecar's DC feed), with voltage, phase, amperage and utilization",
    "points.json": "explore: every point searched (`railyard.explore/1`): its choices, overrides (field path "
    "-> value), objectives and every metric, feasible, on the front, and the refusal (field, message, fix, "
    "where) that ruled it out",
    "front.json": "explore: the Pareto front of the feasible points, the same shape as points.json",
    "front.md": "explore: the front as a Markdown table, linking each point's design and comparison",
    "front.csv": "explore: the front as a spreadsheet: choices, objectives, capex per GPU, power, bisection",
    "points/<point>.yaml": "explore: the point as a design file, `extends:` the base plus its overrides; "
    "`railyard compile` of it is the point",
    "points/<point>.compare.md": "explore: what `railyard compare BASE points/<point>.yaml --markdown` prints, "
    "for each point that compiles",
}

# patterns no build-time run makes (printing needs Chromium), and why
NOT_MADE_HERE = {
    "cabling/racks/<rack>.pdf": "`cabling pack` prints PDFs with headless Chromium; the docs build runs it "
    "with `--html-only`",
    "cabling/rows/<row>.pdf": "as the rack sheets' PDFs",
}

# (label, command after `railyard`) run at build time; {out} is a fresh folder
RUNS: list[tuple[str, list[str]]] = [("h100-256", ["compile", "designs/h100-256.yaml", "--out", "{out}", "-q"])]


def _runs() -> list[tuple[str, list[str]]]:
    runs = list(RUNS)
    from tests.golden import DESIGNS  # one design per switch OS, backend technology and system family

    for name, design in DESIGNS.items():
        if name != "h100-256":
            runs.append((name, ["compile", str(design.relative_to(ROOT)), "--out", "{out}", "-q"]))
    runs.append(("dgx-h100-superpod-4su", ["compile", "designs/dgx-h100-superpod-4su.yaml", "--out", "{out}", "-q"]))
    # planes inside the switches: an InfiniBand subnet per plane (infiniband/<plane>/, planes.csv)
    runs.append(("xdr-4plane-1152", ["compile", "designs/xdr-4plane-1152.yaml", "--out", "{out}", "-q"]))
    runs.append(("pack h100-256", ["cabling", "pack", "designs/h100-256.yaml", "--out", "{out}", "--html-only"]))
    # NICs broken out into planes: the host side's plane map and Network Operator template (cut to 16 servers)
    quad = ["compute.count=16", "backend.su_size=8", "storage.count=8", "storage.capacity_pb=2"]
    runs.append(
        (
            "quadplane-131k (16 servers)",
            [
                "compile",
                "designs/quadplane-131k.yaml",
                "--out",
                "{out}",
                "-q",
                *[a for s in quad for a in ("--set", s)],
            ],
        )
    )
    runs.append(
        (EXPLORE, ["explore", "designs/h100-1024-reference.yaml", "--space", PLAYBOOK, "--out", "{out}", "-j", "1"])
    )
    return runs


EXPLORE = "explore h100-1024-playbook"
PLAYBOOK = "designs/spaces/h100-1024-playbook.yaml"


def pattern_of(
    path: str,
    devices: dict[str, str],
    racks: set[str],
    rows: set[str],
    tenants: set[str],
    points: frozenset[str] = frozenset(),
) -> str:
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "points" and parts[1].split(".", 1)[0] in points:
        return "points/<point>." + parts[1].split(".", 1)[1]
    for i, part in enumerate(parts[:-1]):
        if part in devices:
            parts[i] = "<switch>" if devices[part] == "switch" else "<server>"
        elif i == 1 and parts[0] == "infiniband" and re.fullmatch(r"plane\d+", part):
            parts[i] = "<plane>"  # a multi-plane backend's subnet per plane
    stem, dot, ext = parts[-1].partition(".")
    if stem in racks:
        parts[-1] = "<rack>" + dot + ext
    elif stem in rows:
        parts[-1] = "<row>" + dot + ext
    else:
        m = re.fullmatch(r"(.+)-(create|members)", stem)
        if m and m.group(1) in tenants:
            parts[-1] = f"<tenant>-{m.group(2)}" + dot + ext
    return "/".join(parts)


def _run(label: str, args: list[str], out: Path) -> tuple[str, list[str]]:
    cmd = [sys.executable, "-c", "from generators.cli import main; main()"] + [a.format(out=out) for a in args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"docs: `railyard {' '.join(args)}` failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return label, sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())


def compiled_patterns() -> dict[str, dict[str, int]]:
    """pattern -> {run label: file count}, over every build-time run."""
    found: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="railyard-docs-") as tmp:
        runs = _runs()
        outs = [Path(tmp) / f"run{i}" for i in range(len(runs))]
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda r: _run(*r[0], r[1]), zip(runs, outs, strict=True)))
        plan = json.loads((outs[0] / "plan.json").read_text())
        for (label, paths), out in zip(results, outs, strict=True):
            plan_file = out / "plan.json"
            p = json.loads(plan_file.read_text()) if plan_file.exists() else plan  # the pack writes no plan
            devices = {d["name"]: d["kind"] for d in p["devices"]}
            racks = {r["name"] for r in p["racks"]}
            rows = {r["row"] for r in p["racks"]}
            tenants = {t["name"] for t in p["design"]["tenants"]}
            explored = out / "points.json"
            points = (
                frozenset(q["id"] for q in json.loads(explored.read_text())["points"])
                if explored.exists()
                else frozenset()
            )
            for path in paths:
                pat = pattern_of(path, devices, racks, rows, tenants, points)
                found.setdefault(pat, {}).setdefault(label, 0)
                found[pat][label] += 1
    return found


def check_outputs(found: Iterable[str]) -> None:
    found = set(found)
    missing = sorted(found - OUTPUTS.keys())
    stale = sorted(OUTPUTS.keys() - found - NOT_MADE_HERE.keys())
    problems = []
    if missing:
        problems.append("output files with no description: " + ", ".join(missing))
    if stale:
        problems.append("described output files that no build-time compile makes: " + ", ".join(stale))
    if problems:
        raise RuntimeError(
            "docs/gen/reference.py OUTPUTS is out of date (" + "; ".join(problems) + "): describe each new "
            "pattern in one line there, or remove the one railyard no longer writes"
        )


def outputs_md(found: dict[str, dict[str, int]]) -> str:
    check_outputs(found)
    labels = [label for label, _ in _runs()]
    lines = [
        "# Output files",
        "",
        "Every file `railyard compile DESIGN --out DIR`, `railyard cabling pack` and `railyard explore BASE",
        "--space FILE --out DIR` write, as path patterns: `<switch>`, `<server>`, `<rack>`, `<row>`,",
        "`<tenant>` and `<point>` (an explore point's id) stand for each one's name. Generated at",
        "build time by compiling these designs into a temp folder (the build fails on a file this page does",
        "not describe): " + ", ".join(f"`{label}`" for label in labels) + ". The last column counts each",
        "pattern's files in `h100-256` (`designs/h100-256.yaml`), or names the designs that write it.",
        "",
        "What decides each file's content is under Reference: [Fabric](fabric.md), [Floor, racks and",
        "cables](floor.md), [Networks](networks.md), [RoCE backend](roce.md), [Slurm and",
        "InfiniBand](slurm-infiniband.md), [Bill of materials](bom.md). How a folder is written and replaced:",
        "[Output folders](output-folders.md).",
        "",
    ]
    groups: dict[str, list[str]] = {}
    for pat in OUTPUTS:
        top = pat.split("/", 1)[0] + "/" if "/" in pat else "top level"
        groups.setdefault(top, []).append(pat)
    for top, pats in groups.items():
        lines += [f"## {'`' + top + '`' if top != 'top level' else 'Top level'}", ""]
        lines += ["| path | what | written for |", "|---|---|---|"]
        for pat in pats:
            made = found.get(pat, {})
            if "h100-256" in made:
                where = f"h100-256: {made['h100-256']}"
            elif "pack h100-256" in made:
                where = f"`cabling pack` h100-256: {made['pack h100-256']}"
            elif made:
                where = ", ".join(made)
            else:
                where = _cell(NOT_MADE_HERE[pat])
            lines.append(f"| `{pat}` | {_cell(OUTPUTS[pat])} | {where} |")
        lines.append("")
    lines += [
        "## Other commands' files",
        "",
        "| command | writes |",
        "|---|---|",
        "| `railyard verify DESIGN --ibnetdiscover FILE --write-config DIR` | `DIR/plan.json` and "
        "`DIR/infiniband/` again, with the discovered node and port GUIDs, and `DIR/.railyard-manifest.json` |",
        "| `railyard diff BASE HEAD --out FILE [--full FILE]` | the review (markdown, or `railyard.review/1` "
        "JSON with `--format json`); `--full` the whole review |",
        "| `railyard cabling mark` | appends to the progress file, `<design>.progress.csv` beside the design "
        "(lock file `.<file>.lock` beside it) |",
        "| `scripts/review.sh ... --out FILE --full-dir DIR` | the pull-request comment and "
        "`DIR/<name>.review.md` per design |",
        "| `pulumi up` | the compiled files under the stack's `outDir`, and `<outDir>/.railyard/` (blob store, "
        "`owners.json`) |",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ mkdocs hook

PAGES = {
    "reference/design-fields.md": design_fields_md,
    "reference/cli.md": cli_md,
}


def generate() -> dict[str, str]:
    """Every generated page: docs path -> markdown."""
    pages = {path: make() for path, make in PAGES.items()}
    pages["reference/outputs.md"] = outputs_md(compiled_patterns())
    return pages


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in generate().items():
        files.append(File.generated(config, path, content=text))
    return files
