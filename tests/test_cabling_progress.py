"""Cabling progress (issue 17, item 4): `railyard cabling mark` and `status`, `verify --progress` and
`cabling pack --progress`, on h100-256 as users run them (the CLI), with expected counts derived from the
plan's cables and racks."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.asbuilt.ibnetdiscover import parse_net
from generators.asbuilt.progress import COLUMNS, Counts, Mark, current, read_events, record
from generators.model.plan import Plan
from generators.vendors.infiniband import render_infiniband
from generators.views.ibnetdiscover import format_net
from tests import ibfaults, lldpfaults
from tests.conftest import DESIGNS

NAME = "h100-256"
DESIGN = DESIGNS / f"{NAME}.yaml"
Cli = Callable[..., Any]


@pytest.fixture(scope="module")
def plan(compiled: Callable[..., Plan]) -> Plan:
    return compiled(NAME)


def home_row(plan: Plan) -> dict[str, str]:
    """cable id -> the row of its A end's rack (where it is labelled and staged)."""
    row_of_rack = {r.name: r.row for r in plan.racks}
    rack_of = {d.name: d.rack or "" for d in plan.devices}
    return {c.id: row_of_rack[rack_of[plan.links[c.links[0]].a_device]] for c in plan.cables or []}


def cables_of(plan: Plan, network: str) -> list[str]:
    return [c.id for c in plan.cables or [] if c.network == network]


def cable_of(plan: Plan, a: tuple[str, str], b: tuple[str, str]) -> str:
    for c in plan.cables or []:
        for k in c.links:
            lk = plan.links[k]
            if {(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)} == {a, b}:
                return c.id
    raise AssertionError(f"no cable for {a} {b}")


def states(path: Path) -> dict[str, str]:
    return {k: v.state for k, v in current(read_events(path)).items()}


def expected_rows(plan: Plan, state: dict[str, str]) -> list[dict[str, Any]]:
    rows = home_row(plan)
    out = []
    for row in plan.floor.rows:  # type: ignore[union-attr]
        mine = [c for c, r in rows.items() if r == row.name]
        n = Counter(state.get(c, "left") for c in mine)
        out.append(
            {
                "row": row.name,
                "total": len(mine),
                "pulled": n["pulled"],
                "tested": n["tested"],
                "faulty": n["faulty"],
                "left": n["left"],
            }
        )
    return out


def test_status_per_row_reflects_exactly_the_marks(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "site.progress.csv"
    rows = home_row(plan)
    by_row: dict[str, list[str]] = {}
    for c, r in rows.items():
        by_row.setdefault(r, []).append(c)
    first, second = list(by_row)[:2]
    pulled, tested, faulty = by_row[first][:3], by_row[second][:2], by_row[second][2]
    assert cli("cabling", "mark", DESIGN, *pulled, "pulled", "--progress", prog, "--by", "ana").exit_code == 0
    assert cli("cabling", "mark", DESIGN, *tested, "pulled", "--progress", prog).exit_code == 0
    assert cli("cabling", "mark", DESIGN, *tested, "tested", "--progress", prog).exit_code == 0
    r = cli("cabling", "mark", DESIGN, faulty, "faulty", "--note", "bent MPO", "--progress", prog)
    assert r.exit_code == 0 and "marked 1 cables faulty" in r.output
    want = {**dict.fromkeys(pulled, "pulled"), **dict.fromkeys(tested, "tested"), faulty: "faulty"}
    assert states(prog) == want

    r = cli("cabling", "status", DESIGN, "--progress", prog, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["rows"] == expected_rows(plan, want)
    assert doc["site"]["total"] == len(plan.cables or []) and doc["site"]["tested"] == 2
    assert [row["row"] for row in doc["rows"]] == [row.name for row in plan.floor.rows]  # type: ignore[union-attr]

    # per rack: every rack of the row, by position, adding up to the row
    r = cli("cabling", "status", DESIGN, "--progress", prog, "--json", "--by", "rack", "--row", second)
    (row,) = json.loads(r.stdout)["rows"]
    racks = sorted((x for x in plan.racks if x.row == second), key=lambda x: x.position)
    assert [x["rack"] for x in row["racks"]] == [x.name for x in racks]
    for f in ("total", "pulled", "tested", "faulty", "left"):
        assert sum(x[f] for x in row["racks"]) == row[f]

    # the text: a line per row with its counts and a bar, and the site
    text = cli("cabling", "status", DESIGN, "--progress", prog).stdout
    for exp in expected_rows(plan, want):
        line = next(x for x in text.splitlines() if x.startswith(f"row {exp['row']} "))
        assert line.split()[2:7] == [str(exp[f]) for f in ("total", "pulled", "tested", "faulty", "left")]
        assert re.search(r"\[[#=!.]{30}\]", line)
    assert "!" in next(x for x in text.splitlines() if x.startswith(f"row {second} "))  # one faulty still shows
    assert text.splitlines()[-1].startswith("site")


def test_the_progress_file_is_a_diffable_event_log(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    cid = cables_of(plan, "backend")[0]
    cli("cabling", "mark", DESIGN, cid, "pulled", "--progress", prog, "--by", "ana")
    before = prog.read_text()
    # the same state and note again records nothing
    r = cli("cabling", "mark", DESIGN, cid, "pulled", "--progress", prog, "--by", "ana")
    assert "marked 0 cables" in r.output and prog.read_text() == before
    cli("cabling", "mark", DESIGN, cid, "faulty", "--note", "dirty, fails, 'LOS'", "--progress", prog, "--by", "bo")
    after = prog.read_text()
    assert after.startswith(before)  # appended, never rewritten
    rows = list(csv.reader(io.StringIO(after)))
    assert rows[0] == COLUMNS
    assert [r[1:] for r in rows[1:]] == [[cid, "pulled", "ana", ""], [cid, "faulty", "bo", "dirty, fails, 'LOS'"]]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r[0]) for r in rows[1:])
    # a note stays on its line
    cli("cabling", "mark", DESIGN, cid, "faulty", "--note", "no light\n  at  the leaf", "--progress", prog)
    assert prog.read_text().splitlines()[-1].endswith(",no light at the leaf")
    # fixed: pulled again, then tested; cleared takes a mistaken mark back
    cli("cabling", "mark", DESIGN, cid, "pulled", "--progress", prog)
    cli("cabling", "mark", DESIGN, cid, "tested", "--progress", prog)
    assert states(prog) == {cid: "tested"}
    cli("cabling", "mark", DESIGN, cid, "cleared", "--progress", prog)
    assert states(prog) == {}


def test_out_of_order_marks_warn_and_a_rack_mark_only_moves_forward(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    rack = plan.racks[0].name
    rack_of = {d.name: d.rack for d in plan.devices}
    on_sheet = sorted(
        c.id
        for c in plan.cables or []
        if any(rack in (rack_of[plan.links[k].a_device], rack_of[plan.links[k].b_device]) for k in c.links)
    )
    done, bad = on_sheet[0], on_sheet[1]
    r = cli("cabling", "mark", DESIGN, done, "tested", "--progress", prog)
    assert r.exit_code == 0 and f"{done} was not marked pulled" in r.output
    cli("cabling", "mark", DESIGN, bad, "faulty", "--note", "no light", "--progress", prog)
    r = cli("cabling", "mark", DESIGN, "pulled", "--rack", rack, "--progress", prog)
    assert r.exit_code == 0 and f"marked {len(on_sheet) - 2} cables pulled" in r.output
    assert states(prog) == {**dict.fromkeys(on_sheet, "pulled"), done: "tested", bad: "faulty"}
    # named by id, a cable does go back, with a warning
    r = cli("cabling", "mark", DESIGN, done, "pulled", "--progress", prog)
    assert f"{done} was tested" in r.output and states(prog)[done] == "pulled"


def test_unknown_ids_rows_and_racks_are_refused(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    real = cables_of(plan, "backend")[5]
    typo = real[:-1] + ("Z" if real[-1] != "Z" else "Y")
    r = cli("cabling", "mark", DESIGN, real, typo, "pulled", "--progress", prog)
    assert r.exit_code == 2
    assert f"no cable {typo!r} in {NAME}" in r.output and f"did you mean {real}" in r.output
    assert not prog.exists()  # nothing marked, not even the good id
    r = cli("cabling", "mark", DESIGN, real, "done", "--progress", prog)
    assert r.exit_code == 2 and "the last argument must be the state" in r.output and "'done'" in r.output
    r = cli("cabling", "mark", DESIGN, "pulled", "--rack", "r99-99", "--progress", prog)
    assert r.exit_code == 2 and "no rack 'r99-99'" in r.output
    r = cli("cabling", "status", DESIGN, "--row", "r1", "--progress", prog)
    assert r.exit_code == 2 and "no row 'r1'" in r.output and "did you mean r01" in r.output
    prog.write_text(",".join(COLUMNS) + "\n2026-01-01T00:00:00Z,C-AAAAA-AAAAA,plugged,x,\n")
    r = cli("cabling", "status", DESIGN, "--progress", prog)
    assert r.exit_code == 2 and f"{prog} line 2: state 'plugged'" in r.output


def _mark_many(path: str, ids: list[str], who: str, start: Any) -> None:
    start.wait()  # both at once, or the second process would start after the first is done
    for c in ids:
        record(Path(path), [Mark(c, "pulled")], who)


def test_two_technicians_marking_at_once_lose_nothing(plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    ids = [c.id for c in plan.cables or []][:500]
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [
        ctx.Process(target=_mark_many, args=(str(prog), ids[i::2], who, start)) for i, who in enumerate(("ana", "bo"))
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    events = read_events(prog)
    assert sorted(e.cable_id for e in events) == sorted(ids)
    assert Counter(e.by for e in events) == {"ana": 250, "bo": 250}


def test_verify_infiniband_updates_progress(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    fe = cables_of(plan, "frontend")[0]
    cli("cabling", "mark", DESIGN, fe, "pulled", "--progress", prog)
    fabric = parse_net(render_infiniband(plan)["infiniband/topology.net"])
    ibfaults.swap(fabric, ("gpu001 mlx5_0", 1), ("gpu001 mlx5_1", 1))
    ibfaults.drop(fabric, ("gpu009 mlx5_4", 1))
    net = tmp_path / "site.net"
    net.write_text(format_net(fabric.values()))
    r = cli("verify", DESIGN, "--ibnetdiscover", net, "--progress", prog)
    assert r.exit_code == 1  # the fabric still differs from the plan
    swapped = {cable_of(plan, ("gpu001", f"mlx5_{i}"), (f"su1-rail{i}-leaf", "1/1/1")) for i in (0, 1)}
    rep = json.loads(cli("verify", DESIGN, "--ibnetdiscover", net, "--json").stdout)
    (missing,) = {m["cable_id"] for m in rep["missing"]}
    got = current(read_events(prog))
    backend = cables_of(plan, "backend")
    assert {c for c, e in got.items() if e.state == "faulty"} == swapped | {missing}
    assert {c for c, e in got.items() if e.state == "tested"} == set(backend) - swapped - {missing}
    assert got[fe].state == "pulled"  # not InfiniBand: not judged
    assert all("swapped with" in got[c].note and "exchange the cables at gpu001 mlx5_0" in got[c].note for c in swapped)
    assert got[missing].note.startswith("verify: missing") and got[missing].by == "railyard verify"
    assert f"{len(backend) - 3} cables marked tested, 3 faulty" in r.output
    # fixed and verified again: the three become tested, nothing else is recorded again
    lines = len(prog.read_text().splitlines())
    good = tmp_path / "good.net"
    good.write_text(render_infiniband(plan)["infiniband/topology.net"])
    assert cli("verify", DESIGN, "--ibnetdiscover", good, "--progress", prog).exit_code == 0
    assert len(prog.read_text().splitlines()) == lines + 3
    assert all(states(prog)[c] == "tested" for c in backend)


def test_verify_lldp_updates_progress(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    w = lldpfaults.wiring_of(plan)
    gone = ("gpu003", "eth0")
    gone_cable = cable_of(plan, gone, w[gone])
    lldpfaults.drop(w, gone)
    files = []
    for dev, text in lldpfaults.tables(plan, w).items():
        (tmp_path / f"{dev}.json").write_text(text)
        files += ["--lldp", tmp_path / f"{dev}.json"]
    r = cli("verify", DESIGN, *files, "--progress", prog)
    assert r.exit_code == 1
    got = current(read_events(prog))
    assert {c for c, e in got.items() if e.state == "faulty"} == {gone_cable}
    # tested: every Ethernet cable a given table sees; a BMC's or PDU's out-of-band cable is not seen
    silent = lldpfaults.silent_ends(plan)
    seen = {cable_of(plan, a, b) for a, b in w.items() if a not in silent and b not in silent}
    assert {c for c, e in got.items() if e.state == "tested"} == seen
    assert not set(got) & set(cables_of(plan, "backend"))


def test_pack_ticks_done_cables_and_flags_faulty(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    rack = next(r.name for r in plan.racks if r.role == "compute")
    rack_of = {d.name: d.rack for d in plan.devices}
    mine = [c.id for c in plan.cables or [] if rack_of[plan.links[c.links[0]].a_device] == rack]
    pulled, tested, faulty = mine[0], mine[1], mine[2]
    cli("cabling", "mark", DESIGN, pulled, tested, "pulled", "--progress", prog)
    cli("cabling", "mark", DESIGN, tested, "tested", "--progress", prog)
    cli("cabling", "mark", DESIGN, faulty, "faulty", "--note", "<LOS> on leg 2", "--progress", prog)
    out = tmp_path / "pack"
    r = cli("cabling", "pack", DESIGN, "-o", out, "--html-only", "--progress", prog)
    assert r.exit_code == 0, r.output
    html = (out / f"cabling/racks/{rack}.html").read_text()
    body = dict(re.findall(r'<tbody class="cable" id="(C-[^"]+)"[^>]*>(.*?)</tbody>', html, re.S))
    assert set(mine) <= set(body)

    def ticks(cid: str) -> list[str]:
        return re.findall(r'<td class="tick( done| bad)?"></td>', body[cid])[-2:]

    assert ticks(pulled) == [" done", ""] and ticks(tested) == [" done", " done"]
    assert ticks(faulty) == [" done", " bad"] and "FAULTY" in body[faulty]
    assert "faulty: &lt;LOS&gt; on leg 2" in body[faulty]
    assert all(ticks(c) == ["", ""] for c in mine[3:])
    assert "progress: 1 tested, 1 pulled, 1 faulty" in html
    # a cable the design no longer has is named, not silently dropped
    with prog.open("a") as fh:
        fh.write("2026-01-01T00:00:00Z,C-00000-00000,pulled,ana,\n")
    r = cli("cabling", "pack", DESIGN, "-o", out, "--html-only", "--progress", prog)
    assert r.exit_code == 0 and "1 cable ids in" in r.output and "C-00000-00000" in r.output
    # without --progress the pack is as before: no ticks
    plain = tmp_path / "plain"
    assert cli("cabling", "pack", DESIGN, "-o", plain, "--html-only").exit_code == 0
    assert "tick done" not in (plain / f"cabling/racks/{rack}.html").read_text()
    r = cli("cabling", "pack", DESIGN, "-o", tmp_path / "x", "--html-only", "--progress", tmp_path / "absent.csv")
    assert r.exit_code == 2 and "no progress file" in r.output


def test_compile_leaves_the_progress_file_untouched(cli: Cli, plan: Plan, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for p in DESIGNS.glob("*.yaml"):  # designs extend each other
        if p.stem != "catalog":
            shutil.copy(p, site)
    design = site / f"{NAME}.yaml"
    cid = cables_of(plan, "backend")[0]
    r = cli("cabling", "mark", design, cid, "pulled")
    assert r.exit_code == 0 and str(site / f"{NAME}.progress.csv") in r.output  # the default: beside the design
    prog = site / f"{NAME}.progress.csv"
    before = prog.read_bytes(), prog.stat().st_mtime_ns
    out = site / "out"
    assert cli("compile", design, "-o", out, "-q").exit_code == 0
    assert cli("compile", design, "-o", out, "-q").exit_code == 0
    assert (prog.read_bytes(), prog.stat().st_mtime_ns) == before
    assert not any("progress" in p.name for p in out.rglob("*"))  # compile output is the design's alone
    # a progress file inside an output folder would sit among files railyard replaces: refused
    r = cli("cabling", "mark", design, cid, "tested", "--progress", out / "progress.csv")
    assert r.exit_code == 2 and "an output folder railyard writes" in r.output
    assert states(prog) == {cid: "pulled"}


@pytest.mark.parametrize("parts", [(0, 0, 0, 7), (1, 0, 998, 1), (500, 250, 0, 250), (1, 1, 1, 1)])
def test_the_bar_is_always_full_width_and_shows_every_state(parts: tuple[int, int, int, int]) -> None:
    tested, pulled, faulty, left = parts
    c = Counts(sum(parts), pulled, tested, faulty)
    assert c.left == left
    bar = c.bar(30)
    assert len(bar) == 32 and bar[0] == "[" and bar[-1] == "]"
    for ch, n in zip("#=!.", parts, strict=True):
        assert (ch in bar) == (n > 0)
