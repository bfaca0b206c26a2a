"""The floor map (issue 17, item 2): floor.svg keeps everything drawn in view (also for rows against the
walls) with every rack named, a scale bar, the hall's size and a complete legend; floor.html is one
self-contained page whose search, driven in a real headless Chromium, highlights the right rack and
draws a cable's tray route."""

from __future__ import annotations

import json
import re
import struct
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.renderers import render_all
from generators.stages.cabling import tray_paths
from tests.conftest import ROOT, rendered_files
from tests.realtools import chromium_dump_dom, chromium_screenshot

SVG = "{http://www.w3.org/2000/svg}"
REF = "h100-1024-reference"
EDGE = ROOT / "tests/designs/floor-edge.yaml"
RACK_G = re.compile(
    r'<g class="(rack(?: hit)?)" id="rack-([^"]+)"[^>]*><title>[^<]*</title><rect[^>]*/?>'
    r"(?:</rect>)?<text[^>]*>([^<]+)</text></g>"
)


@pytest.fixture(scope="module")
def edge() -> tuple[Plan, dict[str, str]]:
    plan = compile_file(EDGE, [])[0]
    return plan, render_all(plan)


def _viewbox(root: ET.Element) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in root.attrib["viewBox"].split())
    return x, y, x + w, y + h


def _drawn(root: ET.Element) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(what, box) of every rect, line, polygon and text anchor outside <defs> (a hatch pattern's tile
    is not drawn where it is defined)."""
    defs = {id(e) for d in root.iter(f"{SVG}defs") for e in d.iter()}
    out = []
    for e in root.iter():
        if id(e) in defs:
            continue
        tag = e.tag.removeprefix(SVG)
        a = e.attrib
        if tag == "rect":
            x, y = float(a["x"]), float(a["y"])
            out.append((f"rect {e.findtext(f'{SVG}title')}", (x, y, x + float(a["width"]), y + float(a["height"]))))
        elif tag == "line":
            half = float(a.get("stroke-width", 0)) / 2
            xs, ys = (float(a["x1"]), float(a["x2"])), (float(a["y1"]), float(a["y2"]))
            out.append((f"line {a.get('id', '')}", (min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)))
        elif tag == "polygon":
            pts = [tuple(map(float, p.split(","))) for p in a["points"].split()]
            out.append(
                (
                    "polygon",
                    (min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts)),
                )
            )
        elif tag == "text":
            x, y, size = float(a["x"]), float(a["y"]), float(a["font-size"])
            out.append((f"text {e.text}", (x, y - size, x, y)))
    return out


def _inside(box: tuple[float, ...], view: tuple[float, ...]) -> bool:
    return view[0] <= box[0] and view[1] <= box[1] and box[2] <= view[2] and box[3] <= view[3]


@pytest.mark.parametrize("which", ["edge", REF])
def test_floor_svg_keeps_everything_drawn_in_view_and_names_every_rack(which: str, compiled, edge) -> None:
    plan, files = edge if which == "edge" else (compiled(REF), rendered_files(compiled, REF))
    root = ET.fromstring(files["floor.svg"])
    view = _viewbox(root)
    drawn = _drawn(root)
    assert len(drawn) > len(plan.racks) + len(plan.trays.segments)
    assert [w for w, box in drawn if not _inside(box, view)] == []
    # the page's aspect is the viewBox's: nothing is squeezed or letter-boxed
    w, h = float(root.attrib["width"]), float(root.attrib["height"])
    assert abs(w / h - (view[2] - view[0]) / (view[3] - view[1])) < 0.01
    racks = {g.attrib["id"]: g for g in root.iter(f"{SVG}g") if g.attrib.get("class") == "rack"}
    assert sorted(racks) == sorted(f"rack-{r.name}" for r in plan.racks)
    for r in plan.racks:
        g = racks[f"rack-{r.name}"]
        assert g.findtext(f"{SVG}text") == r.name
        assert (g.findtext(f"{SVG}title") or "").startswith(f"{r.name}: {r.role}")
        # legible at print size (1 px per 20 mm): at least 7 px
        assert float(g.find(f"{SVG}text").attrib["font-size"]) >= 140
    rows = [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "row-label"]
    assert rows == [row.name for row in plan.floor.rows]


def test_floor_svg_rows_at_the_walls_keep_their_labels_and_end_trays(edge) -> None:
    plan, files = edge
    assert min(row.x_mm for row in plan.floor.rows) == 0 and min(row.y_mm for row in plan.floor.rows) == 0
    root = ET.fromstring(files["floor.svg"])
    view = _viewbox(root)
    # the end trays of a row at x = 0 run left of the wall, and its label left of them
    assert min(min(s.a_mm[0], s.b_mm[0]) for s in plan.trays.segments) < 0
    assert view[0] < min(min(s.a_mm[0], s.b_mm[0]) for s in plan.trays.segments) - 80
    labels = [t for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "row-label"]
    assert all(view[0] < float(t.attrib["x"]) - len(t.text or "") * float(t.attrib["font-size"]) * 0.6 for t in labels)


def test_floor_svg_has_a_scale_bar_the_hall_size_and_a_legend_of_every_kind_drawn(edge) -> None:
    plan, files = edge
    root = ET.fromstring(files["floor.svg"])
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    # the hall as the design gives it (tests/designs/floor-edge.yaml): 7500 x 6600 mm
    assert "hall width 7.5 m" in texts and "hall depth 6.6 m" in texts
    bar = next(g for g in root.iter(f"{SVG}g") if g.attrib.get("class") == "scale-bar")
    metres = int((bar.findtext(f"{SVG}title") or "").removeprefix("scale bar: ").removesuffix(" m"))
    assert sum(float(r.attrib["width"]) for r in bar.iter(f"{SVG}rect")) == metres * 1000
    assert [t.text for t in bar.iter(f"{SVG}text")] == ["0", f"{metres} m"]
    legend = [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "legend-entry"]
    assert {f"{r.role} rack" for r in plan.racks} <= set(legend)
    assert {"column (blocks trays)", "keep-out"} <= set(legend)
    assert [x for x in legend if x and x.startswith("tray ")] == [
        "tray empty",
        "tray lightly used (a tenth of its fill limit)",
        "tray at half its fill limit",
        "tray at its fill limit",
    ]
    # both keep-outs are drawn, the column solid and the other hatched, as their legend swatches
    kos = [r for r in root.iter(f"{SVG}rect") if r.attrib.get("class") == "keepout"]
    assert sorted((r.findtext(f"{SVG}title") or "").split()[-1] for r in kos) == ["col1", "crah1"]
    swatch = {
        t.text: r.attrib["fill"]
        for g in root.iter(f"{SVG}g")
        if g.attrib.get("class") == "legend"
        for r, t in zip(
            g.findall(f"{SVG}rect"),
            [t for t in g.findall(f"{SVG}text") if not (t.text or "").startswith("tray")],
            strict=False,
        )
    }
    assert {r.attrib["fill"] for r in kos} == {swatch["column (blocks trays)"], swatch["keep-out"]}
    # every row's power, the sum of its racks' (plan.racks)
    power = [t.text for t in root.iter(f"{SVG}text") if t.attrib.get("class") == "row-power"]
    want = defaultdict(float)
    for r in plan.racks:
        want[r.row] += r.power_kw
    assert [p.split(":")[0] for p in power] == [f"row {row.name}" for row in plan.floor.rows]
    for p, row in zip(power, plan.floor.rows, strict=True):
        assert abs(float(p.split(": ")[1].split()[0]) - want[row.name]) < 0.05


def _floor_graph(plan: Plan) -> nx.Graph:
    g = nx.Graph()
    for k, s in enumerate(plan.trays.segments):
        g.add_edge(tuple(s.a_mm), tuple(s.b_mm), k=k, weight=s.length_m)
    return g


def _centre(plan: Plan, rack: str) -> tuple[float, float]:
    r = next(x for x in plan.racks if x.name == rack)
    return r.x_mm + r.width_mm / 2, r.y_mm + r.depth_mm / 2


def _chain_ends(plan: Plan, segs: list[int]) -> set[tuple[float, float]]:
    """The two ends of a chain of segments (each end point used once); fails on a broken chain."""
    g = nx.Graph()
    for k in segs:
        s = plan.trays.segments[k]
        g.add_edge(tuple(s.a_mm), tuple(s.b_mm))
    assert nx.is_connected(g) and len(g.edges) == len(segs) and max(d for _, d in g.degree) <= 2
    return {n for n, d in g.degree if d == 1}


def test_tray_paths_run_between_the_two_racks_by_a_shortest_route(compiled) -> None:
    plan = compiled(REF)
    paths = tray_paths(plan)
    g = _floor_graph(plan)
    rack_of = {d.name: d.rack for d in plan.devices}
    tray_pairs = {
        tuple(sorted((rack_of[plan.links[k].a_device], rack_of[plan.links[k].b_device])))
        for c in plan.cables
        for k, kind in zip(c.links, c.route, strict=True)
        if kind == "tray"
    }
    assert set(paths) == tray_pairs and paths
    for (a, b), segs in paths.items():
        assert _chain_ends(plan, segs) == {_centre(plan, a), _centre(plan, b)}
        length = sum(plan.trays.segments[k].length_m for k in segs)
        assert abs(length - nx.shortest_path_length(g, _centre(plan, a), _centre(plan, b), weight="weight")) < 0.01
    # the run each cable was cut for covers its tray path
    for c in plan.cables:
        for k, kind, routed in zip(c.links, c.route, c.routed_m, strict=True):
            if kind == "tray":
                pair = tuple(sorted((rack_of[plan.links[k].a_device], rack_of[plan.links[k].b_device])))
                assert routed >= sum(plan.trays.segments[s].length_m for s in paths[pair]) - 0.01, c.id


def _blob(html: str) -> dict[str, Any]:
    text = html.split('<script type="application/json" id="floor-data">')[1].split("</script>")[0]
    return json.loads(text)


def test_floor_html_is_self_contained_and_indexes_every_rack_device_and_cable(compiled) -> None:
    plan = compiled(REF)
    html = rendered_files(compiled, REF)["floor.html"]
    # nothing fetched: no links, no external scripts, styles, fonts or images; the only URL is the SVG namespace
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * html.count(
        "http://www.w3.org/2000/svg"
    )
    assert not re.search(r"<link|<img|<iframe|\ssrc=|@import|@font-face|url\((?!#)", html)
    data = _blob(html)
    assert [r[0] for r in data["racks"]] == [r.name for r in plan.racks]
    placed = {d.name: (d.rack, d.unit) for d in plan.devices if d.rack is not None}
    assert {d[0]: (data["racks"][d[1]][0], d[2]) for d in data["devices"]} == placed
    assert [c[0] for c in data["cables"]] == [c.id for c in plan.cables]
    for c, row in zip(plan.cables, data["cables"], strict=True):
        legs = [row[k : k + 4] for k in range(3, len(row), 4)]
        want = [
            (plan.links[k].a_device, plan.links[k].a_port, plan.links[k].b_device, plan.links[k].b_port)
            for k in c.links
        ]
        assert [(data["devices"][a][0], pa, data["devices"][b][0], pb) for a, pa, b, pb in legs] == want
        assert (data["networks"][row[1]], data["media"][row[2]]) == (c.network, c.media)
    assert data["segments"] == [s.id for s in plan.trays.segments]
    # the page carries the drawing, and the row table the rows' power
    assert html.count('<g class="rack"') == len(plan.racks)
    assert re.findall(r'<tr data-row="([^"]+)">', html) == [row.name for row in plan.floor.rows]


def test_floor_html_is_byte_identical_on_rerender(compiled) -> None:
    plan = compiled(REF)
    assert render_all(plan)["floor.html"] == rendered_files(compiled, REF)["floor.html"]


# ---------------------------------------------------------------------------------- real Chromium


def _write(files: dict[str, str], tmp: Path, *names: str) -> None:
    for n in names:
        (tmp / n).write_text(files[n], encoding="utf-8")


def _racks_in_dom(dom: str) -> dict[str, tuple[str, str]]:
    return {rack: (cls, text) for cls, rack, text in RACK_G.findall(dom)}


@pytest.mark.browser
def test_floor_html_in_chromium_lists_every_rack_and_a_device_search_highlights_its_rack(
    compiled, tmp_path: Path
) -> None:
    plan = compiled(REF)
    _write(rendered_files(compiled, REF), tmp_path, "floor.html")
    servers = [d for d in plan.devices if d.kind == "server"]
    dev = servers[len(servers) // 2]
    page = (tmp_path / "floor.html").as_uri()
    dom = chromium_dump_dom(f"{page}#q={dev.name}")
    assert 'data-ready="1"' in dom  # the script ran to its end
    racks = _racks_in_dom(dom)
    assert {r: t for r, (_, t) in racks.items()} == {r.name: r.name for r in plan.racks}
    assert [r for r, (cls, _) in racks.items() if cls == "rack hit"] == [dev.rack]
    results = dom.split('<ol id="results">')[1].split("</ol>")[0]
    assert f"<strong>{dev.name}</strong> → rack {dev.rack}, U{dev.unit}" in results
    # each of its cables is listed as a link that searches for it
    mine = {
        c.id for c in plan.cables if any(dev.name in (plan.links[k].a_device, plan.links[k].b_device) for k in c.links)
    }
    assert set(re.findall(r'<a href="#q=(C-[0-9A-Z-]+)">', results)) == mine and mine
    # ?q= works as well as #q=, and a rack's name finds the rack alone
    dom = chromium_dump_dom(f"{page}?q={plan.racks[-1].name}")
    assert [r for r, (cls, _) in _racks_in_dom(dom).items() if cls == "rack hit"] == [plan.racks[-1].name]


@pytest.mark.browser
def test_floor_html_in_chromium_draws_a_searched_cables_tray_route(compiled, tmp_path: Path) -> None:
    plan = compiled(REF)
    _write(rendered_files(compiled, REF), tmp_path, "floor.html")
    rack_of = {d.name: d.rack for d in plan.devices}
    # the backend cable with the longest tray run: several segments, rows apart
    cab = max((c for c in plan.cables if c.route[0] == "tray"), key=lambda c: (max(c.routed_m), c.id))
    a, b = rack_of[plan.links[cab.links[0]].a_device], rack_of[plan.links[cab.links[0]].b_device]
    dom = chromium_dump_dom(f"{(tmp_path / 'floor.html').as_uri()}#q={cab.id.lower()}")
    assert sorted(r for r, (cls, _) in _racks_in_dom(dom).items() if cls == "rack hit") == sorted({a, b})
    route = dom.split('<g id="route">')[1].split("</g>")[0]
    drawn = re.findall(r'<line x1="[^"]+" y1="[^"]+" x2="[^"]+" y2="[^"]+" data-seg="(T-[0-9A-Z-]+)">', route)
    index = {s.id: k for k, s in enumerate(plan.trays.segments)}
    segs = [index[s] for s in drawn]
    assert len(segs) >= 3 and len(set(segs)) == len(segs)
    # an unbroken run from one rack's tray drop to the other's, as short as the trays allow
    assert _chain_ends(plan, segs) == {_centre(plan, a), _centre(plan, b)}
    g = _floor_graph(plan)
    assert (
        abs(
            sum(plan.trays.segments[k].length_m for k in segs)
            - nx.shortest_path_length(g, _centre(plan, a), _centre(plan, b), weight="weight")
        )
        < 0.01
    )
    results = dom.split('<ol id="results">')[1].split("</ol>")[0]
    lk = plan.links[cab.links[0]]
    assert f"<strong>{cab.id}</strong>" in results
    assert f"port {lk.a_port}" in results and f"port {lk.b_port}" in results and "(through the trays)" in results


_CHECK = """<!DOCTYPE html><html><body style="margin:0">{svg}<pre id="out"></pre><script>
const svg = document.querySelector("svg"), v = svg.getBoundingClientRect(), out = [];
for (const e of svg.querySelectorAll("rect, line, polygon, text")) {{
  if (e.closest("defs")) continue;
  const b = e.getBoundingClientRect();
  if (b.left < v.left - 0.5 || b.top < v.top - 0.5 || b.right > v.right + 0.5 || b.bottom > v.bottom + 0.5)
    out.push(e.tagName + " " + e.textContent);
}}
document.getElementById("out").textContent = JSON.stringify({{n: svg.querySelectorAll("text").length, out}});
</script></body></html>"""


@pytest.mark.browser
def test_floor_svg_glyphs_stay_in_view_in_chromium(edge, tmp_path: Path) -> None:
    """The viewBox is computed from estimated text widths: the real glyphs must fit it too."""
    _, files = edge
    (tmp_path / "check.html").write_text(_CHECK.format(svg=files["floor.svg"]), encoding="utf-8")
    dom = chromium_dump_dom((tmp_path / "check.html").as_uri())
    got = json.loads(dom.split('<pre id="out">')[1].split("</pre>")[0].replace("&quot;", '"'))
    assert got["n"] > 20 and got["out"] == []


def _png_size(png: Path) -> tuple[int, int]:
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.browser
def test_floor_html_screenshot_with_a_search_active(compiled, tmp_path: Path) -> None:
    plan = compiled(REF)
    _write(rendered_files(compiled, REF), tmp_path, "floor.html")
    page = (tmp_path / "floor.html").as_uri()
    cab = max((c for c in plan.cables if c.route[0] == "tray"), key=lambda c: (max(c.routed_m), c.id))
    shot = chromium_screenshot(f"{page}#q={cab.id}", tmp_path / "search.png")
    plain = chromium_screenshot(page, tmp_path / "plain.png")
    assert _png_size(shot) == (1600, 1000)
    # a drawn page, not a blank one (a white 1600 x 1000 PNG is about 10 kB), and the search changes it
    assert shot.stat().st_size > 50_000 and shot.read_bytes() != plain.read_bytes()
