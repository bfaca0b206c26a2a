"""The technician's pack beyond the rack sheets (renderers.cabling): label-printer files and the row
sheets with the bill of cables to stage per row.

Each cable is labelled and staged once, at its A end's rack: cabling/labels/<rack>.csv holds both end
labels of every link whose A end is in that rack, and cabling/rows/<row>.csv counts the cables whose A
end is in that row. Over the site every link has exactly two labels and every cable is staged once.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping

from generators.model.plan import Plan, required
from generators.model.sections import Rack as RackRecord
from generators.renderers.cabling import (
    _ENV,
    _cable_table,
    _num,
    qr_svg,
    rack_sheet_path,
    render_rack_sheets,
)
from generators.text.csvtext import csv_text

# ZPL (cabling/labels/<rack>.zpl) is the same labels for Zebra printers, sent as is (e.g. `nc printer 9100`).
# one label per row, the header row naming the fields a label template binds to (Brady Workstation,
# DYMO Connect, Brother P-touch Editor all import a CSV like this as a database)
LABEL_COLUMNS = ["cable_id", "end", "this_end", "far_end", "network", "part", "qr"]
BILL_COLUMNS = ["part", "media", "length_m", "cables"]


def render_labels(plan: Plan) -> dict[str, str]:
    if plan.cables is None:
        return {}
    rack_of = {d.name: d.rack or "" for d in plan.devices}
    links = plan.links
    rows: dict[str, list[list[str]]] = {r.name: [] for r in plan.racks}
    for cab in plan.cables:
        for j, k in enumerate(cab.links):
            a, b = cab.labels[j].split(" -- ")
            part = cab.parts[j if j < cab.physical else 0]
            net = links[k].network
            rows[rack_of[links[k].a_device]] += [
                [cab.id, "A", a, b, net, part, cab.id],
                [cab.id, "B", b, a, net, part, cab.id],
            ]
    out: dict[str, str] = {}
    for rack, r in rows.items():
        out[f"cabling/labels/{rack}.csv"] = csv_text(LABEL_COLUMNS, r)
        out[f"cabling/labels/{rack}.zpl"] = "".join(_zpl(x) for x in r)
    return out


# printable ASCII but ZPL's ^ ~ and the ^FH_ escape character _
_ZPL_PLAIN = re.compile(r"[\x20-\x5d\x60-\x7d]*")


def _zpl_text(v: str) -> str:
    # ^FH_ lets a field carry ZPL's own command characters (and anything not plain ASCII) as _XX, one
    # per UTF-8 byte (^CI28)
    if _ZPL_PLAIN.fullmatch(v):
        return v
    return "".join(
        "".join(f"_{b:02X}" for b in c.encode()) if c in "^~_" or not (c.isascii() and c.isprintable()) else c
        for c in v
    )


def _zpl(row: list[str]) -> str:
    """One Zebra label, 2 x 1 in at 203 dpi: the QR code (model 2, error correction M) and both ends."""
    cid, end, here, far, net = row[0], row[1], row[2], row[3], row[4]
    return (
        "^XA^CI28^PW406^LL203\n"
        f"^FO10,20^BQN,2,4^FH_^FDMA,{_zpl_text(row[6])}^FS\n"
        f"^FO120,20^A0N,26,26^FH_^FD{_zpl_text(cid)} {end}^FS\n"
        f"^FO120,60^A0N,24,24^FH_^FD{_zpl_text(here)}^FS\n"
        f"^FO120,100^A0N,20,20^FH_^FDto {_zpl_text(far)}^FS\n"
        f"^FO120,140^A0N,20,20^FH_^FD{_zpl_text(net)}^FS\n"
        "^XZ\n"
    )


def row_bills(plan: Plan) -> dict[str, dict[tuple[str, str, float], int]]:
    """row -> (part, media, length) -> physical cables whose A end is in the row."""
    row_of_rack = {r.name: r.row for r in plan.racks}
    row_of = {d.name: row_of_rack.get(d.rack or "", "") for d in plan.devices}
    links = plan.links
    bills: dict[str, dict[tuple[str, str, float], int]] = {
        r.name: defaultdict(int) for r in required(plan.floor, "floor").rows
    }
    for cab in plan.cables or []:
        row = row_of[links[cab.links[0]].a_device]
        # a splitter is one cable for all its links: its first part and length, as the cable totals count it
        for j in range(cab.physical):
            bills[row][(cab.parts[j], cab.media, cab.length_m[j])] += 1
    return bills


def render_rows(plan: Plan) -> dict[str, str]:
    if plan.cables is None or plan.floor is None:
        return {}
    bills = row_bills(plan)
    racks: dict[str, list[RackRecord]] = defaultdict(list)
    for r in plan.racks:
        racks[r.row].append(r)
    ends: dict[str, int] = defaultdict(int)
    rack_of = {d.name: d.rack or "" for d in plan.devices}
    for lk in plan.links:
        ra, rb = rack_of[lk.a_device], rack_of[lk.b_device]
        ends[ra] += 1
        if rb != ra:
            ends[rb] += 1
    template = _ENV.get_template("row_sheet.html.j2")
    out: dict[str, str] = {}
    for row in plan.floor.rows:
        bill = sorted(bills[row.name].items())
        out[f"cabling/rows/{row.name}.csv"] = csv_text(BILL_COLUMNS, ([p, m, _num(x), str(n)] for (p, m, x), n in bill))
        out[f"cabling/rows/{row.name}.html"] = template.render(
            row=row,
            site=plan.floor.site,
            design=plan.design.name,
            racks=[
                {"rack": r, "sheet": rack_sheet_path(r.name).removesuffix(".html"), "ends": ends[r.name]}
                for r in sorted(racks[row.name], key=lambda r: r.position)
            ],
            bill=[{"part": p, "media": m, "length": _num(x), "count": n} for (p, m, x), n in bill],
            total=sum(n for _, n in bill),
            metres=_num(round(sum(x * n for (_, _, x), n in bill), 1)),
            row_qr=qr_svg(f"cabling/rows/{row.name}.html", scale=3),
        )
    return out


def render_pack(plan: Plan, progress: Mapping[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """What `railyard cabling pack` prints: the rack sheets with a QR code per cable, the row sheets and
    the label files (the PDFs are printed from these). `progress` (cable id -> (state, note), from
    `--progress FILE`) ticks the cables already done on the rack sheets."""
    if plan.cables is None:
        return {}
    out = render_rack_sheets(plan, _cable_table(plan), qr=True, progress=progress)
    out.update(render_rows(plan))
    out.update(render_labels(plan))
    return out
