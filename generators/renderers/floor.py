"""The floor map, from plan.json only: `floor.svg` (a static, printable drawing of the hall) and
`floor.html` (the same drawing in one self-contained page with a search: a device, rack or cable id
highlights its rack(s) and draws a cable's tray route).

The drawing is in millimetres of floor (1 px per 20 mm at print size). Its viewBox is the box of
everything drawn, labels included, so rows placed at the room's edge keep their labels and end trays.
Text extents are estimated from the font size (DejaVu Sans averages 0.6 em per character); the margin
absorbs the error, and the browser test measures the real glyphs.

floor.html embeds what its script needs as one JSON blob, indexed rather than repeated: devices point
at racks by index, cables at devices by index, and a cable's route is looked up by its rack pair in a
table of tray paths (segment indices; the segment geometry is the drawing's own lines).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from html import escape
from typing import Any

from markupsafe import Markup

from generators.model.plan import Plan, required
from generators.renderers.cabling import _ENV
from generators.stages.cabling import tray_paths
from generators.views.colours import ROLE_COLOR

SCALE = 1 / 20  # px per mm at print size
CHAR_EM = 0.6  # average advance of a DejaVu Sans character, in em
MARGIN_MM = 400
TRAY_MM = 160  # stroke width of a tray line
RACK_FONT_MM = 180  # 9 px at print size: the smallest legible on an A3 print of a 16-row hall
ROUTE_COLOUR = "#d6008f"
# a column solid dark; any other keep-out hatched, so neither reads as a (grey) management rack
KEEPOUT_FILL = {True: "#333333", False: "url(#keepout-hatch)"}
HATCH = (
    '<defs><pattern id="keepout-hatch" width="200" height="200" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)"><rect width="200" height="200" fill="#eeeeee"/>'
    '<line x1="0" y1="0" x2="0" y2="200" stroke="#555" stroke-width="70"/></pattern></defs>'
)
UNKNOWN_ROLE_COLOUR = "#dddddd"
# tray shades in the legend, as fractions of the fill limit: what the drawing's gradient passes through
TRAY_SHADES = (
    ("empty", 0.0),
    ("lightly used (a tenth of its fill limit)", 0.1),
    ("at half its fill limit", 0.5),
    ("at its fill limit", 1.0),
)


def fill_colour(fill: float, limit: float) -> str:
    """A tray segment's shade: grey when empty, then green -> amber -> red as it approaches its limit."""
    if fill <= 0:
        return "#cfcfcf"
    t = min(1.0, fill / limit)
    if t < 0.5:
        a, b, f = (46, 125, 50), (249, 168, 37), t / 0.5
    else:
        a, b, f = (249, 168, 37), (198, 40, 40), (t - 0.5) / 0.5
    r, g, bl = (round(a[i] + (b[i] - a[i]) * f) for i in range(3))
    return f"#{r:02x}{g:02x}{bl:02x}"


def text_width_mm(text: str, font_mm: float) -> float:
    return CHAR_EM * font_mm * len(text)


@dataclass(slots=True)
class Bounds:
    """The box of everything drawn so far (mm)."""

    x0: float = float("inf")
    y0: float = float("inf")
    x1: float = float("-inf")
    y1: float = float("-inf")

    def add(self, xa: float, ya: float, xb: float, yb: float) -> None:
        self.x0, self.x1 = min(self.x0, xa, xb), max(self.x1, xa, xb)
        self.y0, self.y1 = min(self.y0, ya, yb), max(self.y1, ya, yb)

    def text(self, x: float, y: float, text: str, font_mm: float, anchor: str = "start") -> None:
        w = text_width_mm(text, font_mm)
        left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
        self.add(left, y - font_mm, left + w, y + 0.3 * font_mm)  # ascent above the baseline, descent below


def _g(v: float) -> str:
    return f"{v:g}"


def rack_label(name: str, width_mm: float, depth_mm: float) -> tuple[float, bool]:
    """(font size, rotated): the rack's full name along its longer side, as large as fits up to
    RACK_FONT_MM; a name too long for that is still written whole, smaller (its <title> repeats it)."""
    rotated = depth_mm > width_mm
    along, across = (depth_mm, width_mm) if rotated else (width_mm, depth_mm)
    font = min(RACK_FONT_MM, 0.9 * along / (CHAR_EM * max(1, len(name))), 0.8 * across)
    return round(font, 1), rotated


def _scale_bar_m(width_mm: float) -> int:
    """The longest round length (m) at most a quarter of the hall's width."""
    best = 1
    for m in (1, 2, 5, 10, 20, 50, 100, 200, 500):
        if m * 1000 <= max(width_mm / 4, 1000):
            best = m
    return best


def row_power(plan: Plan) -> list[dict[str, Any]]:
    """Per row of the floor: its racks, IT load and provisioned budget (kW), from the plan's racks."""
    floor = required(plan.floor, "floor")
    racks: dict[str, list[Any]] = defaultdict(list)
    for r in plan.racks:
        if r.role not in ("cdu", "sidecar"):  # an in-row CDU or sidecar draws facility power, not a rack budget
            racks[r.row].append(r)
    heat = {h.row: h for h in plan.cooling.rows} if plan.cooling is not None else {}
    out: list[dict[str, Any]] = []
    for row in floor.rows:
        p: dict[str, Any] = {
            "row": row.name,
            "racks": len(racks[row.name]),
            "kw": round(sum(r.power_kw for r in racks[row.name]), 1),
            "budget_kw": round(sum(r.power_budget_kw for r in racks[row.name]), 1),
        }
        if (h := heat.get(row.name)) is not None:
            p |= {
                "liquid_kw": round(h.liquid_kw, 1),
                "air_kw": round(h.air_kw, 1),
                "cdus": h.cdus,
                "cdu_kw": round(h.cdu_kw, 1),
                "weight_t": round(h.weight_kg / 1000, 1),
            }
        out.append(p)
    return out


def _rack_title(plan: Plan, r: Any) -> str:
    """A rack's tooltip: power and units; with a cooling plan its liquid/air split and weight, and for a
    CDU position whom it cools."""
    car = {c.rack: c for c in plan.power.sidecars}.get(r.name) if plan.power is not None else None
    if r.role == "sidecar" and car is not None:
        return (
            f"{r.name}: power sidecar {car.name} ({car.model}), feeds {', '.join(car.serves)} at 800 VDC: "
            f"{car.load_kw:g} kW shared, {car.capacity_kw:g} kW each"
        )
    if plan.cooling is not None:
        cdu = {c.rack: c for c in plan.cooling.cdus}.get(r.name)
        if r.role == "cdu" and cdu is not None:
            return (
                f"{r.name}: CDU {cdu.name} ({cdu.model}), cools {', '.join(cdu.serves)}: "
                f"{cdu.load_kw:g} of {cdu.capacity_kw:g} kW liquid"
            )
        h = {x.rack: x for x in plan.cooling.racks}[r.name]
        weight = "" if h.weight_kg is None else f", {h.weight_kg:g} kg"
        cooled = f", CDUs {', '.join(h.cdus)}" if h.cdus else ""
        return (
            f"{r.name}: {r.role}, {r.power_kw:g} of {r.power_budget_kw:g} kW (liquid {h.liquid_kw:g}, air "
            f"{h.air_kw:g}){_feeds(plan, r)}, {r.units_used} of {r.units}U{weight}{cooled}"
        )
    return (
        f"{r.name}: {r.role}, {r.power_kw:g} of {r.power_budget_kw:g} kW{_feeds(plan, r)}, {r.units_used} of {r.units}U"
    )


def _feeds(plan: Plan, r: Any) -> str:
    """How a rack is fed: its PDUs and their redundancy (none for a rack system's, fed by its power shelves;
    on 800 VDC, by its sidecars)."""
    if plan.power is not None:
        fed = {p.rack: p for p in plan.power.racks}.get(r.name)
        if fed is not None:
            return f", 800 VDC from {', '.join(fed.sidecars)} ({fed.feed_a:g} A)"
    return f", {r.pdus} PDUs {plan.design.site.rack.power_redundancy}" if r.pdus else ""


def floor_svg(plan: Plan) -> str:
    """The hall as one <svg> element (mm coordinates)."""
    floor = required(plan.floor, "floor")
    site = plan.design.site
    depth, end_ext = site.rack.depth_mm, site.floor.end_aisle_mm / 2
    xs = [p[0] for p in floor.outline_mm]
    ys = [p[1] for p in floor.outline_mm]
    hx0, hy0, hx1, hy1 = min(xs), min(ys), max(xs), max(ys)
    bounds = Bounds()
    bounds.add(hx0, hy0, hx1, hy1)
    body: list[str] = [
        '<polygon class="hall" points="'
        + " ".join(f"{x:g},{y:g}" for x, y in floor.outline_mm)
        + '" fill="#ffffff" stroke="#000" stroke-width="40"/>'
    ]
    drawn_keepouts: set[bool] = set()
    for k in floor.keepouts:
        column = bool(k.get("blocks_trays"))
        drawn_keepouts.add(column)
        what = "column (blocks trays)" if column else "keep-out"
        body.append(
            f'<rect class="keepout" x="{k["x_mm"]}" y="{k["y_mm"]}" width="{k["width_mm"]}" '
            f'height="{k["depth_mm"]}" fill="{KEEPOUT_FILL[column]}" stroke="#000" '
            f'stroke-width="20" stroke-dasharray="{"none" if column else "80 60"}">'
            f"<title>{what} {escape(k['name'])}</title></rect>"
        )
        bounds.add(k["x_mm"], k["y_mm"], k["x_mm"] + k["width_mm"], k["y_mm"] + k["depth_mm"])
    trays = plan.trays
    if trays:
        for s in trays.segments:
            (xa, ya), (xb, yb) = s.a_mm, s.b_mm
            body.append(
                f'<line class="tray" id="{s.id}" x1="{xa:g}" y1="{ya:g}" x2="{xb:g}" y2="{yb:g}" '
                f'stroke="{fill_colour(s.fill, trays.fill_limit)}" stroke-width="{TRAY_MM}" '
                f'stroke-linecap="round"><title>{s.id}: {s.fill:.1%} full, {s.length_m:g} m</title></line>'
            )
            bounds.add(
                min(xa, xb) - TRAY_MM / 2,
                min(ya, yb) - TRAY_MM / 2,
                max(xa, xb) + TRAY_MM / 2,
                max(ya, yb) + TRAY_MM / 2,
            )
    body.append('<g id="route"></g>')  # floor.html draws a searched cable's route here, above the trays
    for r in plan.racks:
        font, rotated = rack_label(r.name, r.width_mm, r.depth_mm)
        cx, cy = r.x_mm + r.width_mm / 2, r.y_mm + r.depth_mm / 2
        turn = f' transform="rotate(-90 {cx:g} {cy:g})"' if rotated else ""
        body.append(
            f'<g class="rack" id="rack-{escape(r.name)}" data-role="{escape(r.role)}">'
            f"<title>{escape(_rack_title(plan, r))}</title>"
            f'<rect x="{r.x_mm:g}" y="{r.y_mm:g}" width="{r.width_mm:g}" height="{r.depth_mm:g}" '
            f'fill="{ROLE_COLOR.get(r.role, UNKNOWN_ROLE_COLOUR)}" stroke="#222" stroke-width="15"/>'
            f'<text x="{cx:g}" y="{cy + font * 0.35:g}" font-size="{font:g}" text-anchor="middle"{turn}>'
            f"{escape(r.name)}</text></g>"
        )
        bounds.add(r.x_mm, r.y_mm, r.x_mm + r.width_mm, r.y_mm + r.depth_mm)
    power = {p["row"]: p for p in row_power(plan)}
    aisle = site.floor.aisle_mm
    for row in floor.rows:
        yc = row.y_mm + depth / 2
        # the name between the row's end tray and its first rack, above the tray stub into the row: the
        # end aisle is shared with the next column of rows, so nothing may reach past the tray
        room = end_ext - TRAY_MM / 2 - 120
        font = round(min(420, room / (CHAR_EM * len(row.name)), depth / 2 - TRAY_MM / 2 - 60), 1)
        x, y = row.x_mm - 60, yc - TRAY_MM / 2 - 40
        body.append(
            f'<text class="row-label" x="{x:g}" y="{y:g}" font-size="{font:g}" text-anchor="end">'
            f"{escape(row.name)}</text>"
        )
        bounds.text(x, y, row.name, font, "end")
        # its power in the aisle in front of it, clear of the aisle's tray (the front row's runs there)
        p = power[row.name]
        kw = f"row {row.name}: {p['kw']:g} of {p['budget_kw']:g} kW"
        if "liquid_kw" in p:
            kw += f" (liquid {p['liquid_kw']:g}, air {p['air_kw']:g}), {p['cdus']} CDUs"
        font = round(min(240, aisle / 2 - TRAY_MM / 2 - 140), 1)
        body.append(f'<text class="row-power" x="{row.x_mm:g}" y="{row.y_mm - 80:g}" font-size="{font:g}">{kw}</text>')
        bounds.text(row.x_mm, row.y_mm - 80, kw, font)
    # the hall's dimensions: its width under the drawing, its depth left of it
    yd = bounds.y1 + 500
    width_label = f"{(hx1 - hx0) / 1000:g} m"
    body.append(
        f'<g class="dimension"><line x1="{hx0:g}" y1="{yd:g}" x2="{hx1:g}" y2="{yd:g}" stroke="#000" '
        f'stroke-width="20"/><line x1="{hx0:g}" y1="{yd - 150:g}" x2="{hx0:g}" y2="{yd + 150:g}" '
        f'stroke="#000" stroke-width="20"/><line x1="{hx1:g}" y1="{yd - 150:g}" x2="{hx1:g}" '
        f'y2="{yd + 150:g}" stroke="#000" stroke-width="20"/><text x="{(hx0 + hx1) / 2:g}" '
        f'y="{yd + 450:g}" font-size="300" text-anchor="middle">hall width {width_label}</text></g>'
    )
    bounds.add(hx0, yd - 150, hx1, yd + 150)
    bounds.text((hx0 + hx1) / 2, yd + 450, f"hall width {width_label}", 300, "middle")
    xd = bounds.x0 - 500
    depth_label = f"hall depth {(hy1 - hy0) / 1000:g} m"
    ym = (hy0 + hy1) / 2
    body.append(
        f'<g class="dimension"><line x1="{xd:g}" y1="{hy0:g}" x2="{xd:g}" y2="{hy1:g}" stroke="#000" '
        f'stroke-width="20"/><line x1="{xd - 150:g}" y1="{hy0:g}" x2="{xd + 150:g}" y2="{hy0:g}" '
        f'stroke="#000" stroke-width="20"/><line x1="{xd - 150:g}" y1="{hy1:g}" x2="{xd + 150:g}" '
        f'y2="{hy1:g}" stroke="#000" stroke-width="20"/><text x="{xd - 200:g}" y="{ym:g}" font-size="300" '
        f'text-anchor="middle" transform="rotate(-90 {xd - 200:g} {ym:g})">{depth_label}</text></g>'
    )
    # rotated: the label's length runs along y, its height along x
    half = text_width_mm(depth_label, 300) / 2
    bounds.add(xd - 200 - 300, ym - half, xd + 150, ym + half)
    # a scale bar in whole metres, alternately black and white per step
    metres = _scale_bar_m(hx1 - hx0)
    step = max(1, metres // 5) if metres >= 5 else 1
    y_bar = bounds.y1 + 500
    bar = [f'<g class="scale-bar"><title>scale bar: {metres} m</title>']
    for n, m in enumerate(range(0, metres, step)):
        bar.append(
            f'<rect x="{hx0 + m * 1000:g}" y="{y_bar:g}" width="{step * 1000:g}" height="150" '
            f'fill="{"#000" if n % 2 == 0 else "#fff"}" stroke="#000" stroke-width="20"/>'
        )
    bar.append(
        f'<text x="{hx0:g}" y="{y_bar + 480:g}" font-size="280" text-anchor="middle">0</text>'
        f'<text x="{hx0 + metres * 1000:g}" y="{y_bar + 480:g}" font-size="280" text-anchor="middle">'
        f"{metres} m</text></g>"
    )
    body += bar
    bounds.add(hx0, y_bar, hx0 + metres * 1000, y_bar + 150)
    bounds.text(hx0, y_bar + 480, "0", 280, "middle")
    bounds.text(hx0 + metres * 1000, y_bar + 480, f"{metres} m", 280, "middle")
    body += _legend(plan, bounds, drawn_keepouts)
    x0, y0 = bounds.x0 - MARGIN_MM, bounds.y0 - MARGIN_MM
    w, h = bounds.x1 - bounds.x0 + 2 * MARGIN_MM, bounds.y1 - bounds.y0 + 2 * MARGIN_MM
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x0:g} {y0:g} {w:g} {h:g}" '
        f'width="{w * SCALE:.0f}" height="{h * SCALE:.0f}" font-family="DejaVu Sans, sans-serif">',
        f"<title>{escape(plan.design.name)}: floor of {escape(floor.site)}</title>",
        *([HATCH] if False in drawn_keepouts else []),
    ]
    return "\n".join([*head, *body, "</svg>"])


def _legend(plan: Plan, bounds: Bounds, keepouts: set[bool]) -> list[str]:
    """Every kind drawn, in a column right of the drawing: rack roles, keep-outs, tray shades, route."""
    roles = {r.role for r in plan.racks}
    entries: list[tuple[str, str, str]] = [
        ({"cdu": "in-row CDU", "sidecar": "power sidecar (800 VDC)"}.get(role, f"{role} rack"), c, "rect")
        for role, c in ROLE_COLOR.items()
        if role in roles
    ]
    entries += [(f"{role} rack", UNKNOWN_ROLE_COLOUR, "rect") for role in sorted(roles - ROLE_COLOR.keys())]
    entries += [
        ("column (blocks trays)" if col else "keep-out", KEEPOUT_FILL[col], "rect")
        for col in (True, False)
        if col in keepouts
    ]
    if plan.trays:
        lim = plan.trays.fill_limit
        entries += [(f"tray {label}", fill_colour(f * lim, lim), "line") for label, f in TRAY_SHADES]
    lx, top = bounds.x1 + 800, bounds.y0
    out = ['<g class="legend">']
    for n, (label, colour, shape) in enumerate(entries):
        y = top + 450 * n
        if shape == "rect":
            out.append(
                f'<rect x="{lx:g}" y="{y:g}" width="350" height="350" fill="{colour}" stroke="#222" stroke-width="15"/>'
            )
        else:
            out.append(
                f'<line x1="{lx:g}" y1="{y + 175:g}" x2="{lx + 350:g}" y2="{y + 175:g}" stroke="{colour}" '
                f'stroke-width="{TRAY_MM}"/>'
            )
        out.append(
            f'<text class="legend-entry" x="{lx + 480:g}" y="{y + 290:g}" font-size="300">{escape(label)}</text>'
        )
        bounds.add(lx, y, lx + 350, y + 350)
        bounds.text(lx + 480, y + 290, label, 300)
    out.append("</g>")
    return out


def floor_data(plan: Plan) -> dict[str, Any]:
    """What floor.html's script searches, indexed (see the module docstring)."""
    rack_ix = {r.name: i for i, r in enumerate(plan.racks)}
    devices = [d for d in plan.devices if d.rack is not None]
    dev_ix = {d.name: i for i, d in enumerate(devices)}
    plan_cables = plan.cables or []
    networks = sorted({c.network for c in plan_cables})
    media = sorted({c.media for c in plan_cables})
    net_ix = {n: i for i, n in enumerate(networks)}
    media_ix = {m: i for i, m in enumerate(media)}
    cables: list[list[Any]] = []
    for c in plan_cables:
        # legs flattened: a device, a port, b device, b port, per link. How a leg runs (in the rack, to
        # the next rack, through the trays) follows from its racks and the path table.
        row: list[Any] = [c.id, net_ix[c.network], media_ix[c.media]]
        for k in c.links:
            lk = plan.links[k]
            row += [dev_ix[lk.a_device], lk.a_port, dev_ix[lk.b_device], lk.b_port]
        cables.append(row)
    paths = {}
    for (a, b), segs in tray_paths(plan).items():
        ia, ib = sorted((rack_ix[a], rack_ix[b]))
        paths[f"{ia} {ib}"] = segs
    return {
        "design": plan.design.name,
        "racks": [[r.name, r.role, r.row, r.power_kw, r.units_used, r.units] for r in plan.racks],
        "devices": [[d.name, rack_ix[d.rack], d.unit] for d in devices if d.rack is not None],
        "cables": cables,
        "networks": networks,
        "media": media,
        "segments": [s.id for s in plan.trays.segments] if plan.trays else [],
        "paths": paths,
    }


def _json_script(data: dict[str, Any]) -> Markup:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    # inside <script> only "</" can end the element early
    return Markup(text.replace("</", "<\\/"))


def render_floor(plan: Plan) -> dict[str, str]:
    floor = plan.floor
    if floor is None:
        return {}
    svg = floor_svg(plan)
    xs = [p[0] for p in floor.outline_mm]
    ys = [p[1] for p in floor.outline_mm]
    rows = row_power(plan)
    html = _ENV.get_template("floor.html.j2").render(
        design=plan.design.name,
        site=floor.site,
        svg=Markup(svg),
        data=_json_script(floor_data(plan)),
        width_m=f"{(max(xs) - min(xs)) / 1000:g}",
        depth_m=f"{(max(ys) - min(ys)) / 1000:g}",
        rows=rows,
        racks=sum(1 for r in plan.racks if r.role not in ("cdu", "sidecar")),
        power=plan.power,
        kw=f"{sum(p['kw'] for p in rows):,.1f}",
        cooling=plan.cooling,
        budget_kw=f"{sum(p['budget_kw'] for p in rows):,.1f}",
        route_colour=ROUTE_COLOUR,
    )
    return {"floor.svg": svg + "\n", "floor.html": html}
