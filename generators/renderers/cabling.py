"""Renderers of the physical plan, from plan.json only: the cable schedule (cabling/cables.csv), one
printable sheet per rack (cabling/racks/<rack>.csv and .html: elevation, then the rack's cables in
pull order with both ends). The floor map is renderers.floor. NetBox's cable import is
netbox/10-cables.csv (renderers.netbox_csv), with the rest of the site it needs.

Rows are formatted by hand rather than through a template engine per cell: a 65,536-GPU plan has
about a million sheet rows, and every value is from a validated design or the catalog.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from html import escape
from typing import Any

import segno

from generators.model.catalog import Catalog
from generators.model.geometry import device_size
from generators.model.plan import Device, Plan, required
from generators.model.planes import link_plane
from generators.model.sections import Rack as RackRecord
from generators.text.csvtext import csv_text
from generators.text.templating import environment
from generators.views.colours import ROLE_COLOR

CABLE_COLUMNS = [
    "cable_id",
    "label",
    "network",
    "tier",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "media",
    "part",
    "length_m",
    "reach_m",
    "a_transceiver",
    "b_transceiver",
    "plane",  # a multi-plane backend's network plane (plane1, ...); empty elsewhere
]
RACK_COLUMNS = [
    "pull_order",
    "cable_id",
    "label",
    "network",
    "tier",
    "route",
    "local_u",
    "local_device",
    "local_port",
    "local_transceiver",
    "remote_rack",
    "remote_u",
    "remote_device",
    "remote_port",
    "remote_transceiver",
    "media",
    "part",
    "length_m",
    "plane",
]
# NetBox cable types; every multimode part in the catalog is OM4, every single-mode part OS2
_ENV = environment(autoescape=True, trim=False)


def _num(x: float) -> str:
    return f"{x:g}"


def _u(d: Device) -> str:
    return "" if d.unit is None else str(d.unit)


def link_rows(plan: Plan) -> Iterator[dict[str, Any]]:
    """One record per link with both ends and the chosen part, in cable-id order."""
    devs = plan.index()
    links = plan.links
    for cab in plan.cables or []:
        xa, xb = cab.a_transceiver or "", cab.b_transceiver or ""
        for j, k in enumerate(cab.links):
            lk = links[k]
            yield {
                "cable_id": cab.id,
                "label": cab.labels[j],
                "network": lk.network,
                "tier": lk.tier,
                "a": devs[lk.a_device],
                "a_port": lk.a_port,
                "b": devs[lk.b_device],
                "b_port": lk.b_port,
                "media": cab.media,
                "part": cab.parts[j],
                "length_m": cab.length_m[j],
                "reach_m": cab.reach_m,
                "a_x": xa,
                "b_x": xb,
                "route": cab.route[j],
                "routed_m": cab.routed_m[j],
            }


def _cable_table(plan: Plan) -> list[list[str]]:
    """cables.csv rows (CABLE_COLUMNS but the plane) in cable-id order, then the route and the plane."""
    where = {d.name: (d.rack or "", _u(d)) for d in plan.devices}
    devs = plan.index()
    links = plan.links
    num: dict[float, str] = {}
    rows: list[list[str]] = []
    for cab in plan.cables or []:
        xa, xb = cab.a_transceiver or "", cab.b_transceiver or ""
        cid, media, reach = cab.id, cab.media, cab.reach_m
        reach_s = num.get(reach) or num.setdefault(reach, _num(reach))
        for j, k in enumerate(cab.links):
            lk = links[k]
            ra, ua = where[lk.a_device]
            rb, ub = where[lk.b_device]
            length = cab.length_m[j]
            rows.append(
                [
                    cid,
                    cab.labels[j],
                    lk.network,
                    lk.tier,
                    ra,
                    ua,
                    lk.a_device,
                    lk.a_port,
                    rb,
                    ub,
                    lk.b_device,
                    lk.b_port,
                    media,
                    cab.parts[j],
                    num.get(length) or num.setdefault(length, _num(length)),
                    reach_s,
                    xa,
                    xb,
                    cab.route[j],
                    link_plane(devs, lk),
                ]
            )
    return rows


def render_cabling(plan: Plan) -> dict[str, str]:
    if plan.cables is None:
        return {}
    table = _cable_table(plan)
    out: dict[str, str] = {}
    out["cabling/cables.csv"] = csv_text(CABLE_COLUMNS, ([*r[:18], r[19]] for r in table))
    out.update(render_rack_sheets(plan, table))
    if plan.design.compute.system is not None:
        out["cabling/internal.csv"] = csv_text(INTERNAL_COLUMNS, internal_rows(plan))
    return out


INTERNAL_COLUMNS = ["rack", "system", "cabling", "between", "links", "cables", "routed", "in_tray_fill"]


def internal_rows(plan: Plan) -> list[list[str]]:
    """A rack system's fixed cabling, per rack: the NVLink backplane between its compute trays and NVLink
    switch trays. It comes built into the rack, so it is listed for the record and the BoM, never routed,
    never labelled and never in a tray's fill."""
    system = plan.design.compute.system
    assert system is not None
    rs = plan.catalog.rack_systems[system]
    racks = sorted({d.rack for d in plan.devices if d.network == "nvlink" and d.rack is not None})
    between = f"{rs.trays} x {rs.tray} -- {rs.nvlink_switches} x {rs.nvlink_switch}"
    return [
        [
            r,
            system,
            "NVLink backplane (cable cartridges)" if rs.scale_up == "nvlink" else f"{rs.scale_up_name} backplane",
            between,
            str(rs.nvlink_links),
            str(rs.nvlink_cables),
            "no",
            "no",
        ]
        for r in racks
    ]


_RANK = {"tray": 0, "adjacent": 1, "rack": 2}
# Cable ids are "C-" and two 5-character groups of [0-9A-Z]: QR alphanumeric mode, version 1 (21 x 21
# modules). A fixed mask skips segno's mask scoring, which is three quarters of its time (2.5 -> 0.8 ms
# a code, 8 s -> 2 s of a 619-rack compile's rack codes); any mask decodes, the scoring only evens out
# the dark/light pattern, which printed at this size does not matter.
_QR_ID = re.compile(r"C-[0-9A-Z]{5}-[0-9A-Z]{5}")


def qr_svg(payload: str, scale: int = 2) -> str:
    """A QR code as inline SVG with the 4-module quiet zone scanners need."""
    if _QR_ID.fullmatch(payload):
        code = segno.make_qr(payload, error="m", version=1, mode="alphanumeric", mask=0, boost_error=False)
    else:
        code = segno.make_qr(payload, error="m", mask=0, boost_error=False)
    return code.svg_inline(scale=scale, border=4, title=payload)


def rack_sheet_path(rack: str) -> str:
    return f"cabling/racks/{rack}.html"


def pdu_outlets(devs: list[Device]) -> tuple[list[str], list[dict[str, Any]]]:
    """The rack's feeds, and per racked device (bottom-up) the PDU outlet it plugs into on each feed.

    The catalog does not model outlets or power supplies, so this is an assignment, not a fact: every
    racked device gets one cord per feed, devices bottom-up, dealt in turn over that feed's PDUs
    (a1, a2, ...), each PDU's outlets numbered from 1. The sheet says so."""
    feeds: dict[str, list[Device]] = defaultdict(list)
    for d in devs:
        if d.kind == "pdu" and "feed" in d.attrs:  # a rack system's power shelves feed its busbar, not cords
            feeds[str(d.attrs["feed"])].append(d)
    order = sorted(feeds)
    pdus = {f: sorted(feeds[f], key=lambda d: str(d.attrs["slot"])) for f in order}
    racked = sorted((d for d in devs if d.unit is not None), key=lambda d: (d.unit or 0, d.name))
    used: dict[str, int] = defaultdict(int)
    out: list[dict[str, Any]] = []
    for n, d in enumerate(racked):
        ends = []
        for f in order:
            pdu = pdus[f][n % len(pdus[f])]
            used[pdu.name] += 1
            ends.append({"pdu": pdu.name, "slot": pdu.attrs["slot"], "outlet": used[pdu.name]})
        out.append({"device": d.name, "u": d.unit, "ends": ends})
    return order, out


def _pull_order(entries: list[tuple[str, list[str]]]) -> list[list[str]]:
    """A rack's cable ends in pull order, each cable's legs together under it.

    Tray runs first (they lie at the bottom of the tray), grouped by the rack at the far end, since
    cables to one rack share one tray path: the longest path first. Then runs to the next rack, then
    in-rack patching bottom-up. A cable takes the place of its first leg."""
    path_m: dict[str, float] = defaultdict(float)
    for route, row in entries:
        if route == "tray":
            path_m[row[10]] = max(path_m[row[10]], float(row[17]))

    def key(e: tuple[str, list[str]]) -> tuple[Any, ...]:
        route, row = e
        rank = _RANK[route]
        far = row[10] if rank == 0 else ""
        return rank, -path_m[far] if rank == 0 else 0.0, far, int(row[6] or 0), row[2]

    first: dict[str, tuple[Any, ...]] = {}
    for e in entries:
        k = key(e)
        if e[1][1] not in first or k < first[e[1][1]]:
            first[e[1][1]] = k
    entries.sort(key=lambda e: (first[e[1][1]], e[1][1], key(e)))
    return [row for _, row in entries]


def render_rack_sheets(
    plan: Plan, table: list[list[str]], qr: bool = False, progress: Mapping[str, tuple[str, str]] | None = None
) -> dict[str, str]:
    """cabling/racks/<rack>.csv and .html. `qr` adds a QR code per cable (railyard cabling pack): at
    ~1 ms a code it is left out of `compile`, which a 100k-cable site would otherwise wait minutes for.
    `progress` (cable id -> (state, note), `cabling pack --progress`) ticks the boxes of cables pulled
    or tested and flags faulty ones with the finding; compile never passes it (its output is the design's
    alone)."""
    by_rack: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
    for r in table:
        # local end first: pull_order is filled in after sorting
        by_rack[r[4]].append(
            (
                r[18],
                [
                    "",
                    r[0],
                    r[1],
                    r[2],
                    r[3],
                    r[18],
                    r[5],
                    r[6],
                    r[7],
                    r[16],
                    r[8],
                    r[9],
                    r[10],
                    r[11],
                    r[17],
                    r[12],
                    r[13],
                    r[14],
                    r[19],
                ],
            )
        )
        if r[8] != r[4]:
            by_rack[r[8]].append(
                (
                    r[18],
                    [
                        "",
                        r[0],
                        r[1],
                        r[2],
                        r[3],
                        r[18],
                        r[9],
                        r[10],
                        r[11],
                        r[17],
                        r[4],
                        r[5],
                        r[6],
                        r[7],
                        r[16],
                        r[12],
                        r[13],
                        r[14],
                        r[19],
                    ],
                )
            )
    devices: dict[str, list[Device]] = defaultdict(list)
    for d in plan.devices:
        if d.rack is not None:
            devices[d.rack].append(d)
    floor = required(plan.floor, "floor")
    catalog = plan.catalog
    template = _ENV.get_template("rack_sheet.html.j2")
    out: dict[str, str] = {}
    memo: dict[str, str] = {}
    codes: dict[str, str] = {}

    def e(v: str) -> str:
        # device, port, part and rack names repeat on thousands of rows: escape each once
        r = memo.get(v)
        if r is None:
            r = memo[v] = escape(v)
        return r

    def code(cid: str) -> str:
        # a cable between two racks is on both sheets
        c = codes.get(cid)
        if c is None:
            c = codes[cid] = qr_svg(cid)
        return c

    heat = {h.rack: h for h in plan.cooling.racks} if plan.cooling is not None else {}
    # on 800 VDC: a rack's feed (sidecars, current, shelves) and a sidecar position's sidecar
    feeds = {f.rack: f for f in plan.power.racks} if plan.power is not None else {}
    cars = {c.rack: c for c in plan.power.sidecars} if plan.power is not None else {}
    # a multi-plane backend's sheets show each cable's plane (a column only there, so the sheets of a
    # single-plane design are as they were)
    has_planes = plan.design.backend.planes is not None
    for rack in plan.racks:
        name = rack.name
        rows = _pull_order(by_rack.get(name, []))
        for n, row in enumerate(rows, 1):
            row[0] = str(n)
        out[f"cabling/racks/{name}.csv"] = csv_text(RACK_COLUMNS, rows)
        devs = sorted(devices[name], key=lambda d: (d.unit is None, -(d.unit or 0), d.name))
        body: list[str] = []
        k = 0
        while k < len(rows):
            cid = rows[k][1]
            m = k
            while m < len(rows) and rows[m][1] == cid:
                m += 1
            legs = m - k
            cell = f"{code(cid)}<br>" if qr else ""
            ticks = '<td class="tick"></td><td class="tick"></td>'
            done = progress.get(cid) if progress else None
            fault_note = ""
            if done is not None:
                ticks = _TICKS[done[0]]
                if done[0] == "faulty":
                    cell = f'{cell}<span class="faulty">FAULTY</span><br>'
                    if done[1]:
                        fault_note = (
                            f'<tr class="fault"><td></td><td colspan="{18 if has_planes else 17}">'
                            f"faulty: {escape(done[1])}</td></tr>\n"
                        )
            body.append(f'<tbody class="cable" id="{cid}"' + (f' data-state="{done[0]}"' if done else "") + ">\n")
            for j, t in enumerate(rows[k:m]):
                lead = f'<td rowspan="{legs}" class="cid">{cell}{cid}</td>' if j == 0 else ""
                leg = ' class="leg"' if j else ""
                body.append(
                    f"<tr{leg}><td>{t[0]}</td>{lead}<td>{e(t[2])}</td><td>{e(t[3])}</td><td>{e(t[6])}</td>"
                    f"<td>{e(t[7])}</td><td>{e(t[8])}</td><td>{e(t[10])}</td><td>{e(t[11])}</td>"
                    f"<td>{e(t[12])}</td><td>{e(t[13])}</td><td>{e(t[15])}</td><td>{e(t[16])}</td>"
                    f"<td class=n>{e(t[17])}</td><td>{e(t[9])}</td><td>{e(t[14])}</td>"
                    + (f"<td>{e(t[18])}</td>" if has_planes else "")
                    + f"{ticks}</tr>\n"
                )
            if fault_note:
                body.append(fault_note)
            body.append("</tbody>\n")
            k = m
        out[rack_sheet_path(name)] = template.render(
            rack=rack,
            redundancy=plan.design.site.rack.power_redundancy,
            heat=heat.get(name),
            feed=feeds.get(name),
            sidecar=cars.get(name),
            site=floor.site,
            design=plan.design.name,
            elevation=_elevation(rack, devs, catalog),
            devices=[
                {"u": d.unit, "name": d.name, "model": d.model, "kind": d.kind, "slot": d.attrs.get("slot", "")}
                for d in devs
            ],
            power=pdu_outlets(devs),
            rack_qr=qr_svg(rack_sheet_path(name), scale=3),
            sheet=rack_sheet_path(name),
            labels=f"cabling/labels/{name}.csv",
            cable_rows="".join(body),
            planes=has_planes,
            cable_count=len(rows),
            cables=len({r[1] for r in rows}),
            progress=_sheet_progress({r[1] for r in rows}, progress) if progress is not None else None,
        )
    return out


# the two boxes (pulled, tested) of a cable already done; faulty: pulled, and the test failed
_TICKS = {
    "pulled": '<td class="tick done"></td><td class="tick"></td>',
    "tested": '<td class="tick done"></td><td class="tick done"></td>',
    "faulty": '<td class="tick done"></td><td class="tick bad"></td>',
}


def _sheet_progress(cables: set[str], progress: Mapping[str, tuple[str, str]]) -> str:
    counts = {s: sum(1 for c in cables if (progress.get(c) or ("", ""))[0] == s) for s in _TICKS}
    left = len(cables) - sum(counts.values())
    return (
        f"progress: {counts['tested']} tested, {counts['pulled']} pulled, {counts['faulty']} faulty, "
        f"{left} left of {len(cables)} cables"
    )


def _elevation(rack: RackRecord, devs: list[Device], catalog: Catalog) -> str:
    """Front elevation of a rack as inline SVG: numbered units, devices by kind, PDUs in the rear channels."""
    units = rack.units
    uh, left, width = 14, 28, 230
    h = units * uh + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="elevation" viewBox="0 0 {left + width + 50} {h}" '
        f'width="{left + width + 50}" height="{h}" role="img" aria-label="rack {escape(rack.name)} elevation">',
        f'<rect x="{left}" y="10" width="{width}" height="{units * uh}" fill="#fafafa" stroke="#333"/>',
    ]
    for u in range(1, units + 1):
        y = 10 + (units - u) * uh
        parts.append(f'<text x="{left - 4}" y="{y + uh - 3}" class="u">{u}</text>')
        parts.append(f'<line x1="{left}" y1="{y + uh}" x2="{left + width}" y2="{y + uh}" stroke="#ddd"/>')
    fill = {
        "server": "#8fb8de",
        "switch": "#f4a259",
        "storage": "#c9b458",
        "management": "#a0a0a0",
        "cdu": ROLE_COLOR["cdu"],
    }
    pdus = []
    for d in devs:
        if d.unit is None:
            if d.kind == "pdu":  # an in-row CDU is the whole position: nothing to draw in units
                pdus.append(d)
            continue
        hu = device_size(catalog, d)[0]
        y = 10 + (units - (d.unit + hu - 1)) * uh
        parts.append(
            f'<rect x="{left + 2}" y="{y + 1}" width="{width - 4}" height="{hu * uh - 2}" '
            f'fill="{fill.get(d.kind, "#ccc")}" stroke="#222"/>'
        )
        parts.append(
            f'<text x="{left + 8}" y="{y + min(hu * uh, 2 * uh) - 4}" class="d">{escape(d.name)} '
            f"({escape(d.model)})</text>"
        )
    for k, d in enumerate(pdus):
        x = left + width + 6 + k * 10
        parts.append(
            f'<rect x="{x}" y="10" width="8" height="{units * uh}" fill="#555"><title>{escape(d.name)} '
            f"{escape(str(d.attrs.get('slot', '')))}</title></rect>"
        )
    parts.append("</svg>")
    return "\n".join(parts)
