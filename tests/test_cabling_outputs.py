"""The files technicians and tools read: cables.csv, the NetBox cable import, per-rack sheets (printed by a real
headless Chromium), floor.svg, and byte-identical output on recompile."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from generators.renderers import render_all
from generators.renderers.cabling import CABLE_COLUMNS, RACK_COLUMNS
from generators.renderers.netbox_csv import STEP_OF
from generators.views.netbox_model import NETBOX_TYPE
from tests.conftest import DESIGNS, ROOT
from tests.realtools import chromium_print_pdf, pdf_page_count

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def files(compiled) -> dict[str, str]:
    return render_all(compiled("h100-256"))


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_cables_csv_has_the_issue_columns_and_one_row_per_link(compiled, files) -> None:
    plan = compiled("h100-256")
    text = files["cabling/cables.csv"]
    assert text.splitlines()[0] == ",".join(CABLE_COLUMNS)
    assert CABLE_COLUMNS == [
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
        "plane",
    ]
    rows = _rows(text)
    assert len(rows) == len(plan.links)
    assert {(r["a_device"], r["a_port"], r["b_device"], r["b_port"]) for r in rows} == {
        (lk.a_device, lk.a_port, lk.b_device, lk.b_port) for lk in plan.links
    }
    assert {r["media"] for r in rows} <= {"dac", "acc", "aoc", "mmf", "smf", "cat6"}
    for r in rows:
        assert float(r["length_m"]) <= float(r["reach_m"])
        assert bool(r["a_transceiver"]) == (r["media"] in ("mmf", "smf"))


def test_netbox_import_columns(compiled, files) -> None:
    rows = _rows(files["netbox/10-cables.csv"])
    assert list(rows[0]) == list(STEP_OF["dcim/cables"].columns)
    plan = compiled("h100-256")
    # one row per NetBox cable: a twin or splitter cable names all its ports on a side in one cell
    assert len(rows) == sum(c.physical for c in plan.cables)
    assert sum(len(r["side_a_name"].split(",")) * len(r["side_b_name"].split(",")) > 1 for r in rows) > 0
    ends = {(d, p) for r in rows for s in "ab" for d, p in _side(r, s)}
    assert ends == {e for lk in plan.links for e in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))}
    for r in rows:
        assert r["side_a_type"] == r["side_b_type"] == "dcim.interface"
        assert r["type"] in set(NETBOX_TYPE.values()) and r["status"] == "planned"
        assert r["length_unit"] == "m" and float(r["length"]) > 0
        assert len(r["color"]) == 6 and int(r["color"], 16) >= 0
        assert r["side_a_site"] == r["side_b_site"] == "dc1"


def _side(row: dict[str, str], side: str) -> list[tuple[str, str]]:
    names = row[f"side_{side}_name"].split(",")
    devices = row[f"side_{side}_device"].split(",")
    return list(zip(devices * len(names) if len(devices) == 1 else devices, names, strict=True))


def test_every_rack_has_a_sheet_listing_both_ends_of_its_cables(compiled, files) -> None:
    plan = compiled("h100-256")
    touching: dict[str, int] = {}
    for lk in plan.links:
        ra, rb = plan.device(lk.a_device).rack, plan.device(lk.b_device).rack
        touching[ra] = touching.get(ra, 0) + 1
        if rb != ra:
            touching[rb] = touching.get(rb, 0) + 1
    for r in plan.racks:
        name = r.name
        rows = _rows(files[f"cabling/racks/{name}.csv"])
        assert list(rows[0]) == RACK_COLUMNS
        assert len(rows) == touching[name]
        assert [int(x["pull_order"]) for x in rows] == list(range(1, len(rows) + 1))
        # pull order: tray runs (longest first) before runs to the next rack and in-rack patching
        rank = {"tray": 0, "adjacent": 1, "rack": 2}
        assert [rank[x["route"]] for x in rows] == sorted(rank[x["route"]] for x in rows)
        html = files[f"cabling/racks/{name}.html"]
        assert f"Rack {name}" in html and "<svg" in html
        assert all(x["label"] in html for x in rows)


def test_floor_svg_is_valid_svg(compiled, files) -> None:
    plan = compiled("h100-256")
    root = ET.fromstring(files["floor.svg"])
    assert root.tag == f"{SVG}svg"
    assert len(root.attrib["viewBox"].split()) == 4 and float(root.attrib["width"]) > 0
    titles = [t.text or "" for t in root.iter(f"{SVG}title")]
    for r in plan.racks:
        assert any(t.startswith(f"{r.name}: {r.role}") for t in titles)
    assert len([e for e in root.iter(f"{SVG}line") if e.find(f"{SVG}title") is not None]) == len(plan.trays.segments)
    if shutil.which("xmllint"):
        subprocess.run(["xmllint", "--noout", "-"], input=files["floor.svg"].encode(), check=True)


def test_recompiling_gives_byte_identical_files(tmp_path: Path) -> None:
    """Two separate processes with different hash seeds, so no set or dict order can leak in."""
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"o{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "generators.cli",
                "compile",
                str(DESIGNS / "h100-1024-vms.yaml"),
                "--out",
                str(out),
                "-q",
            ],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        outs.append(out)
    a = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    b = sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    assert a == b and len(a) > 40
    for rel in a:
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel


@pytest.mark.browser
def test_rack_sheets_print_in_headless_chromium(compiled, files, tmp_path: Path) -> None:
    plan = compiled("h100-256")
    for rel, text in files.items():
        if rel.startswith("cabling/racks/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    pages = {}
    for r in plan.racks:
        pdf = chromium_print_pdf(tmp_path / f"cabling/racks/{r.name}.html", tmp_path / f"{r.name}.pdf")
        pages[r.name] = pdf_page_count(pdf)
    assert all(n >= 1 for n in pages.values()), pages
    # the elevation page, then the cable table continuing over as many pages as it needs
    busiest = max(plan.racks, key=lambda r: len(_rows(files[f"cabling/racks/{r.name}.csv"])))
    assert pages[busiest.name] >= 2
    if shutil.which("pdftotext"):
        text = subprocess.run(
            ["pdftotext", str(tmp_path / f"{busiest.name}.pdf"), "-"], capture_output=True, text=True, check=True
        ).stdout
        first = _rows(files[f"cabling/racks/{busiest.name}.csv"])[0]
        assert f"Rack {busiest.name}" in text and first["label"] in text
