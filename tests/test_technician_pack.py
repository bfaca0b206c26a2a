"""The technician's pack (issue 17): rack sheets with a QR code per cable, tick boxes, grouped legs and PDU
outlets; row sheets with the bill of cables to stage; label-printer files. Checked on h100-1024-reference
as users get it, and printed by a real headless Chromium whose QR codes a real zbar decodes."""

from __future__ import annotations

import csv
import io
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from generators.compiler import compile_file
from generators.renderers import render_all
from generators.renderers.pack import BILL_COLUMNS, LABEL_COLUMNS, render_pack
from tests.conftest import DESIGNS, ROOT, rendered_files
from tests.realtools import chromium_print_pdf, pdf_page_count, require

REF = "h100-1024-reference"
QR_TITLE = re.compile(r'<svg width="\d+" height="\d+" class="segno"><title>([^<]+)</title>')


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def files(compiled) -> dict[str, str]:
    return rendered_files(compiled, REF)


@pytest.fixture(scope="module")
def pack(compiled) -> dict[str, str]:
    return render_pack(compiled(REF))


def test_label_files_hold_two_labels_per_link_matching_cables_csv(compiled, files) -> None:
    plan = compiled(REF)
    links = _rows(files["cabling/cables.csv"])
    labels: dict[str, list[dict[str, str]]] = {}
    for r in plan.racks:
        text = files[f"cabling/labels/{r.name}.csv"]
        assert text.splitlines()[0] == ",".join(LABEL_COLUMNS)
        labels[r.name] = _rows(text)
    got = Counter(
        (rack, x["cable_id"], x["end"], x["this_end"], x["far_end"], x["qr"])
        for rack, rows in labels.items()
        for x in rows
    )
    want: Counter[tuple[str, ...]] = Counter()
    for lk in links:
        a, b = lk["label"].split(" -- ")
        # each link is labelled once, at its A end's rack
        want[(lk["a_rack"], lk["cable_id"], "A", a, b, lk["cable_id"])] += 1
        want[(lk["a_rack"], lk["cable_id"], "B", b, a, lk["cable_id"])] += 1
    assert got == want
    assert sum(len(v) for v in labels.values()) == 2 * len(links)
    # the end labels are what the plan prints on the sheets: rack.unit.port
    assert all(re.fullmatch(r"[a-z0-9-]+\.(U\d+|P[AB]\d+)\.\S+", x["this_end"]) for v in labels.values() for x in v)


def test_zebra_labels_are_the_csv_labels_with_a_qr_code(compiled, files) -> None:
    plan = compiled(REF)
    for r in plan.racks:
        csv_labels = _rows(files[f"cabling/labels/{r.name}.csv"])
        zpl = files[f"cabling/labels/{r.name}.zpl"]
        labels = re.findall(r"\^XA(.*?)\^XZ", zpl, re.S)
        assert len(labels) == len(csv_labels) and zpl.count("^XA") == len(labels)
        for text, x in zip(labels, csv_labels, strict=True):
            # ^FH_: _XX is a hex byte, as the printer reads it
            fields = [
                bytes.fromhex(
                    "".join(f"{ord(c):02x}" if len(c) == 1 else c[1:] for c in re.findall(r"_[0-9A-F]{2}|.", f, re.S))
                ).decode()
                for f in re.findall(r"\^FD(.*?)\^FS", text)
            ]
            assert "^BQN,2," in text and fields[0] == f"MA,{x['qr']}"
            assert fields[1:4] == [f"{x['cable_id']} {x['end']}", x["this_end"], f"to {x['far_end']}"]


def test_row_bills_sum_to_the_cable_plan(compiled, files) -> None:
    plan = compiled(REF)
    total: Counter[str] = Counter()
    rows = {r.row for r in plan.racks}
    for row in rows:
        bill = _rows(files[f"cabling/rows/{row}.csv"])
        assert list(bill[0]) == BILL_COLUMNS
        assert len({(b["part"], b["length_m"]) for b in bill}) == len(bill)
        for b in bill:
            total[b["part"]] += int(b["cables"])
        html = files[f"cabling/rows/{row}.html"]
        assert all(
            f"<td>{r.name}</td>" in html and f"cabling/racks/{r.name}<" in html for r in plan.racks if r.row == row
        )
    assert dict(total) == plan.cabling.cable_parts
    # every row stages something: the example has cables leaving each row
    assert all(sum(int(b["cables"]) for b in _rows(files[f"cabling/rows/{row}.csv"])) > 0 for row in rows)


def test_every_pack_sheet_has_one_qr_per_cable_and_tick_boxes_per_end(compiled, pack) -> None:
    plan = compiled(REF)
    for r in plan.racks:
        ends = _rows(pack[f"cabling/racks/{r.name}.csv"])
        html = pack[f"cabling/racks/{r.name}.html"]
        codes = QR_TITLE.findall(html)
        # the rack's own code first, then one per cable: a twin or splitter once for all its legs
        assert codes[0] == f"cabling/racks/{r.name}.html"
        assert Counter(codes[1:]) == Counter({x["cable_id"]: 1 for x in ends})
        cables = html.split('<tbody class="cable"')[1:]
        assert len(cables) == len({x["cable_id"] for x in ends})
        # one cable's legs are one block, in pull order
        ids = [x["cable_id"] for x in ends]
        assert [c for n, c in enumerate(ids) if n == 0 or ids[n - 1] != c] == list(dict.fromkeys(ids))
        assert html.count('<td class="tick"></td><td class="tick"></td></tr>') == len(ends)


def test_pull_order_keeps_a_tray_path_together(compiled, files) -> None:
    plan = compiled(REF)
    grouped = 0
    for r in plan.racks:
        ends = _rows(files[f"cabling/racks/{r.name}.csv"])
        tray = [x["remote_rack"] for x in ends if x["route"] == "tray"]
        blocks = [c for n, c in enumerate(tray) if n == 0 or tray[n - 1] != c]
        assert len(blocks) == len(set(tray)), r.name
        grouped += len(tray) - len(blocks)
    assert grouped > 0


def test_every_racked_device_has_an_outlet_on_each_feed(compiled, files) -> None:
    plan = compiled(REF)
    for r in plan.racks:
        html = files[f"cabling/racks/{r.name}.html"]
        table = html.split('<table class="outlets">')[1].split("</table>")[0]
        pdus = {d.name: d.attrs["feed"] for d in plan.devices if d.rack == r.name and d.kind == "pdu"}
        feeds = sorted(set(pdus.values()))
        assert re.findall(r"<th>feed ([AB]): PDU</th>", table) == feeds
        rows = re.findall(r"<tr><td>\d+</td><td>([^<]+)</td>(.*)</tr>", table)
        racked = sorted(d.name for d in plan.devices if d.rack == r.name and d.unit is not None)
        assert sorted(dev for dev, _ in rows) == racked
        used = []
        for _, cells in rows:
            ends = re.findall(r'<td>(\S+) \(P[AB]\d+\)</td><td class=n>(\d+)</td><td class="tick"></td>', cells)
            # one cord per feed, each on a PDU of that feed
            assert [pdus[p] for p, _ in ends] == feeds
            used += ends
        # no outlet of a PDU is used twice, and a PDU's outlets are numbered from 1 without gaps
        assert len(set(used)) == len(used)
        for p in pdus:
            mine = sorted(int(o) for q, o in used if q == p)
            assert mine == list(range(1, len(mine) + 1))


def test_pack_cli_writes_html_only_without_chromium(cli, tmp_path: Path) -> None:
    out = tmp_path / "pack"
    res = cli("cabling", "pack", DESIGNS / "h100-256.yaml", "--out", out, "--html-only")
    assert res.exit_code == 0, res.output
    assert (out / "cabling/labels").is_dir() and not list(out.rglob("*.pdf"))
    assert QR_TITLE.search((out / "cabling/racks/r01-01.html").read_text())


def _decode(pdf: Path, tmp: Path) -> list[str]:
    subprocess.run(
        [require("pdftoppm"), "-r", "150", "-png", str(pdf), str(tmp / pdf.stem)], check=True, capture_output=True
    )
    found: list[str] = []
    for page in sorted(tmp.glob(f"{pdf.stem}-*.png")):
        r = subprocess.run(
            [require("zbarimg"), "-q", "--raw", "-Sqrcode.enable", str(page)], capture_output=True, text=True
        )
        assert r.returncode in (0, 4), r.stderr  # 4: no code on that page
        found += r.stdout.split()
    return found


@pytest.mark.browser
def test_pack_pdfs_carry_a_qr_per_cable_that_decodes_to_its_id(compiled, pack, tmp_path: Path) -> None:
    plan = compiled(REF)
    for rel, text in pack.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ends = {r.name: _rows(pack[f"cabling/racks/{r.name}.csv"]) for r in plan.racks}
    # two racks keep Chromium and zbar to ~15 s (a leaf rack is 70 pages): the compute rack with the most
    # twin legs, and the smallest switch rack (its far ends are everywhere)
    legs = max(
        (r for r in plan.racks if r.role == "compute"),
        key=lambda r: (len(ends[r.name]) - len({x["cable_id"] for x in ends[r.name]}), r.name),
    )
    switches = min(
        (r for r in plan.racks if r.role != "compute" and ends[r.name]), key=lambda r: (len(ends[r.name]), r.name)
    )
    assert len(ends[legs.name]) > len({x["cable_id"] for x in ends[legs.name]})
    for name in (legs.name, switches.name):
        pdf = chromium_print_pdf(tmp_path / f"cabling/racks/{name}.html", tmp_path / f"{name}.pdf")
        assert pdf_page_count(pdf) >= 2
        decoded = _decode(pdf, tmp_path)
        assert decoded[0] == f"cabling/racks/{name}.html"
        assert Counter(decoded[1:]) == Counter({x["cable_id"]: 1 for x in ends[name]}), name
    # printed twice, a sheet is byte-identical: the PDF dates are fixed
    again = chromium_print_pdf(tmp_path / f"cabling/racks/{legs.name}.html", tmp_path / "again.pdf")
    assert again.read_bytes() == (tmp_path / f"{legs.name}.pdf").read_bytes()
    row = plan.racks[0].row
    pdf = chromium_print_pdf(tmp_path / f"cabling/rows/{row}.html", tmp_path / f"row-{row}.pdf")
    assert _decode(pdf, tmp_path) == [f"cabling/rows/{row}.html"]


SPLITTER = ROOT / "tests/designs/ndr200-splitter.yaml"


def test_a_splitter_is_one_cable_on_the_bill_with_its_legs_under_it(tmp_path: Path) -> None:
    plan = compile_file(SPLITTER, [])[0]
    files = render_all(plan)
    splitters = [c for c in plan.cables if c.physical == 1 and len(c.links) > 1]
    assert splitters
    staged = Counter[str]()
    for row in plan.floor.rows:
        for b in _rows(files[f"cabling/rows/{row.name}.csv"]):
            staged[b["part"]] += int(b["cables"])
    # one physical cable per splitter, however many legs
    assert dict(staged) == plan.cabling.cable_parts
    assert sum(staged.values()) == sum(c.physical for c in plan.cables)
    for cab in splitters[:20]:
        rack = plan.device(plan.links[cab.links[0]].a_device).rack
        html = files[f"cabling/racks/{rack}.html"]
        block = html.split(f'<tbody class="cable" id="{cab.id}">')[1].split("</tbody>")[0]
        here = [
            j
            for j, k in enumerate(cab.links)
            if rack in (plan.device(plan.links[k].a_device).rack, plan.device(plan.links[k].b_device).rack)
        ]
        assert block.count("<tr") == len(here) and f'rowspan="{len(here)}"' in block
        assert all(cab.labels[j] in block for j in here)


@pytest.mark.browser
def test_railyard_cabling_pack_prints_every_sheet(cli, tmp_path: Path) -> None:
    """The command end to end on the 14-rack splitter design (~25 s of Chromium)."""
    plan = compile_file(SPLITTER, [])[0]
    out = tmp_path / "pack"
    res = cli("cabling", "pack", SPLITTER, "--out", out, "--jobs", "2")
    assert res.exit_code == 0, res.output
    pdfs = {p.relative_to(out).as_posix() for p in out.rglob("*.pdf")}
    assert pdfs == {f"cabling/racks/{r.name}.pdf" for r in plan.racks} | {
        f"cabling/rows/{row.name}.pdf" for row in plan.floor.rows
    }
    assert all(pdf_page_count(out / p) >= 1 for p in pdfs)
    # no trace of the folder Chromium printed from (a link would be an absolute file:// URI)
    assert not [p for p in pdfs if b"railyard-pack" in (out / p).read_bytes()]
    leaf = next(r.name for r in plan.racks if r.role == "leaf")
    cables = {x["cable_id"] for x in _rows((out / f"cabling/racks/{leaf}.csv").read_text())}
    decoded = _decode(out / f"cabling/racks/{leaf}.pdf", tmp_path)
    assert decoded[0] == f"cabling/racks/{leaf}.html" and Counter(decoded[1:]) == Counter(dict.fromkeys(cables, 1))
