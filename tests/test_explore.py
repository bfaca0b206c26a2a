"""`railyard explore`: the playbook's reference-vs-optimized search reproduces the shipped designs' costs,
every point's design file compiles to the point, the search is the same on one process, a pool, a real
Dask cluster on loopback and again with Optuna's seed, and bad spaces exit 2 naming the field and line.

All on real output: the command's own files, compiled again with `railyard compile`'s code path."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generators.compiler import compile_file
from generators.model.design import load_design
from tests.conftest import DESIGNS

Cli = Callable[..., Any]
BASE = DESIGNS / "h100-1024-reference.yaml"
PLAYBOOK = DESIGNS / "spaces" / "h100-1024-playbook.yaml"
SMALL = DESIGNS / "h100-256.yaml"


def _explore(cli: Cli, out: Path, *args: Any, base: Path = BASE, space: Path = PLAYBOOK) -> dict[str, Any]:
    r = cli("explore", base, "--space", space, "--out", out, *args)
    assert r.exit_code == 0, r.output
    return dict(json.loads((out / "points.json").read_text()))


@pytest.fixture(scope="module")
def playbook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    from typer.testing import CliRunner

    from generators.cli import app

    out = tmp_path_factory.mktemp("explore") / "playbook"
    r = CliRunner().invoke(app, ["explore", str(BASE), "--space", str(PLAYBOOK), "--out", str(out), "-j", "2"])
    assert r.exit_code == 0, r.output
    yield out, json.loads((out / "points.json").read_text())


def _point(doc: dict[str, Any], **labels: str) -> dict[str, Any]:
    (p,) = [p for p in doc["points"] if p["choices"] == labels]
    return dict(p)


def _cost(path: Path) -> float:
    plan, _, _ = compile_file(path)
    assert plan.bom is not None
    return plan.bom.total_usd


def test_the_playbook_space_is_searched_whole(playbook: tuple[Path, dict[str, Any]]) -> None:
    _, doc = playbook
    assert doc["method"] == "exhaustive" and doc["variants"] == doc["searched"] == 12
    refused = [p for p in doc["points"] if p["metrics"] is None]
    # top-of-rack at 2:1 puts 5 servers under a leaf: 52.7 kW, over the 44 kW rack the ToR layout takes
    assert {(p["choices"]["layout"], p["choices"]["oversubscription"]) for p in refused} == {("top_of_rack", "2:1")}
    for p in refused:
        assert not p["feasible"] and p["refusal"][0]["field"] == "site.rack.power_kw"
        assert p["refusal"][0]["where"].endswith("h100-1024-playbook.yaml:14")  # the ToR bundle's power line
    assert doc["feasible"] == 10


def test_every_point_compiles_to_its_own_capex(playbook: tuple[Path, dict[str, Any]]) -> None:
    out, doc = playbook
    for p in doc["points"]:
        if p["metrics"] is not None:
            assert _cost(out / p["design"]) == p["objectives"]["capex_usd"] == p["metrics"]["capex_usd"], p["id"]


@pytest.mark.parametrize(
    ("shipped", "labels"),
    [
        ("h100-1024-reference", {"layout": "reference", "oversubscription": "1:1", "chassis": "reference"}),
        ("h100-1024-vms", {"layout": "virtual_modular_switch", "oversubscription": "1:1", "chassis": "reference"}),
        ("h100-1024-tor", {"layout": "top_of_rack", "oversubscription": "1:1", "chassis": "reference"}),
        (
            "h100-1024-optimized",
            {"layout": "virtual_modular_switch", "oversubscription": "2:1", "chassis": "optimized"},
        ),
    ],
)
def test_the_shipped_designs_are_points_of_the_space(
    playbook: tuple[Path, dict[str, Any]], shipped: str, labels: dict[str, str]
) -> None:
    out, doc = playbook
    p = _point(doc, **labels)
    assert p["objectives"]["capex_usd"] == _cost(DESIGNS / f"{shipped}.yaml")
    # not only the cost: the point is the shipped design, field for field (the bundles say all it changes)
    mine = load_design(out / p["design"])[0].model_dump(exclude={"name", "description"})
    theirs = load_design(DESIGNS / f"{shipped}.yaml")[0].model_dump(exclude={"name", "description"})
    assert mine == theirs


def test_the_front_and_its_tables(playbook: tuple[Path, dict[str, Any]]) -> None:
    out, doc = playbook
    front = json.loads((out / "front.json").read_text())["points"]
    ids = [p["id"] for p in front]
    assert ids == [p["id"] for p in doc["points"] if p["front"]] or sorted(ids) == sorted(
        p["id"] for p in doc["points"] if p["front"]
    )
    feasible = [p for p in doc["points"] if p["feasible"]]
    keys = doc["objectives"]
    assert keys == ["capex_usd", "power_mw", "bisection"]

    def better_or_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
        o, q = a["objectives"], b["objectives"]
        return o["capex_usd"] <= q["capex_usd"] and o["power_mw"] <= q["power_mw"] and o["bisection"] >= q["bisection"]

    for p in feasible:  # on the front exactly when no feasible point dominates it
        dominated = any(better_or_equal(q, p) and q["objectives"] != p["objectives"] for q in feasible)
        assert p["front"] == (not dominated), p["id"]
    assert _point(doc, layout="virtual_modular_switch", oversubscription="2:1", chassis="optimized")["front"]
    csv_lines = (out / "front.csv").read_text().splitlines()
    assert csv_lines[0].startswith("point,layout,oversubscription,chassis,capex_usd") and len(csv_lines) == len(ids) + 1
    md = (out / "front.md").read_text()
    for i in ids:
        assert f"[{i}](points/{i}.yaml)" in md and f"(points/{i}.compare.md)" in md


def test_the_page_works_offline_and_links_what_is_there(playbook: tuple[Path, dict[str, Any]]) -> None:
    out, doc = playbook
    html = (out / "index.html").read_text()
    assert 'id="capex-power"' in html and 'id="capex-bisection"' in html
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inline
    assert not re.search(r"<script[^>]+src=", html), "a script from elsewhere"
    links = set(re.findall(r'href="([^"]+)"', html.split("</head>", 1)[1]))  # the page's, not plotly.js's
    assert links and all((out / link).is_file() for link in links)
    assert all(f"points/{p['id']}.yaml" in links for p in doc["points"])
    best = _point(doc, layout="virtual_modular_switch", oversubscription="2:1", chassis="optimized")["id"]
    compare = (out / "points" / f"{best}.compare.md").read_text()
    assert "**Backend fabric**" in compare and "(-32.1%)" in compare  # the playbook's 31.6%


def test_one_process_and_a_pool_write_the_same_bytes(
    cli: Cli, tmp_path: Path, playbook: tuple[Path, dict[str, Any]]
) -> None:
    out, _ = playbook
    one = tmp_path / out.name  # the same folder name: the point files' compare lines name it
    _explore(cli, one, "-j", "1")
    for name in ("points.json", "front.json", "front.md", "front.csv", "index.html"):
        assert (one / name).read_bytes() == (out / name).read_bytes(), name
    # a compare page names the folder it is in (the command to run it again); its table is the same
    mine, theirs = ((d / "points" / "p0008.compare.md").read_text().split("\n", 3)[3] for d in (one, out))
    assert mine == theirs


@pytest.mark.daemons  # a real scheduler and two worker processes on loopback
def test_a_dask_cluster_on_loopback_finds_the_same_front(
    cli: Cli, tmp_path: Path, playbook: tuple[Path, dict[str, Any]]
) -> None:
    from distributed import LocalCluster

    out, _ = playbook
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        assert len(cluster.workers) == 2
        there = tmp_path / out.name
        _explore(cli, there, "--cluster", cluster.scheduler_address)
    assert (there / "front.json").read_bytes() == (out / "front.json").read_bytes()
    assert (there / "points.json").read_bytes() == (out / "points.json").read_bytes()


def test_optuna_searches_a_large_space_reproducibly(cli: Cli, tmp_path: Path) -> None:
    space = tmp_path / "space.yaml"
    space.write_text(
        "fields:\n"
        "  backend.oversubscription: ['1:1', '2:1', '3:1']\n"
        "  storage.count: [8, 10, 12]\n"
        "  compute.config.memory_gb: [1024, 2048]\n"
        "objectives: [capex, bisection]\n"
        "search: {method: optuna, trials: 7, seed: 3, batch: 4}\n"
    )
    a = _explore(cli, tmp_path / "a", "-j", "1", base=SMALL, space=space)
    b = _explore(cli, tmp_path / "b", "-j", "2", base=SMALL, space=space)
    assert a["method"] == "optuna" and a["variants"] == 18 and a["searched"] == 7
    assert [p["overrides"] for p in a["points"]] == [p["overrides"] for p in b["points"]]
    assert (tmp_path / "a" / "front.json").read_text() == (tmp_path / "b" / "front.json").read_text()
    assert len({json.dumps(p["overrides"]) for p in a["points"]}) == 7  # no variant evaluated twice
    p = next(p for p in a["points"] if p["metrics"] is not None)
    assert _cost(tmp_path / "a" / p["design"]) == p["metrics"]["capex_usd"]


# --------------------------------------------------------------------------------------------- bad input


def _refused(cli: Cli, tmp_path: Path, text: str) -> str:
    space = tmp_path / "space.yaml"
    space.write_text(text)
    out = tmp_path / "out"
    r = cli("explore", SMALL, "--space", space, "--out", out)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and not out.exists()  # nothing written
    return " ".join(r.output.split())


def test_an_unknown_field_path_names_the_space_line(cli: Cli, tmp_path: Path) -> None:
    text = _refused(cli, tmp_path, "fields:\n  backend.oversubscriptoin: ['1:1', '2:1']\n")
    assert "space.yaml:2: backend.oversubscriptoin: unknown field" in text
    assert "did you mean 'oversubscription'?" in text


def test_an_unknown_path_inside_a_bundle_and_a_bad_value(cli: Cli, tmp_path: Path) -> None:
    text = _refused(
        cli,
        tmp_path,
        "choices:\n  layout:\n    tor: {backend.placment: top_of_rack}\nfields:\n  backend.switch: [QM9700, QM9790]\n",
    )
    assert "space.yaml:3: backend.placment: unknown field" in text and "did you mean 'placement'?" in text
    assert "space.yaml:5: backend.switch: unknown" in text and "QM9790" in text


def test_an_empty_space(cli: Cli, tmp_path: Path) -> None:
    assert "the space is empty" in _refused(cli, tmp_path, "objectives: [capex]\n")
    assert "holds no space" in _refused(cli, tmp_path, "")
    assert "fields.storage.count: lists no candidate value" in _refused(cli, tmp_path, "fields:\n  storage.count: []\n")


def test_an_unknown_key_or_metric(cli: Cli, tmp_path: Path) -> None:
    text = _refused(cli, tmp_path, "fields: {storage.count: [8]}\nobjective: [capex]\n")
    assert "space.yaml:2: objective: unknown field" in text and "did you mean 'objectives'?" in text
    text = _refused(cli, tmp_path, "fields: {storage.count: [8]}\nconstraints: {per_gpu: {max: 1}, watts: {max: 1}}\n")
    assert "constraints.watts: unknown metric" in text


def test_a_constraint_no_variant_meets_names_the_tightest_and_the_closest(cli: Cli, tmp_path: Path) -> None:
    text = _refused(
        cli,
        tmp_path,
        "fields:\n  backend.oversubscription: ['1:1', '2:1']\n  storage.count: [8, 12]\n"
        "constraints:\n  gpus: {min: 256}\n  per_gpu_usd: {max: 30000}\n",
    )
    assert "space.yaml:6: constraints.per_gpu_usd: no variant meets per_gpu_usd at most 30,000" in text
    # 1:1 leaves have no spare port for h100-256's backend-attached UFM nodes: refused, so not "closest"
    assert "met by 0 of the 2 variants that compile, 4 searched" in text
    # the closest first: 2:1 with the fewest storage servers
    assert re.search(
        r"the closest: p0003 \(backend.oversubscription=2:1, storage.count=8\): per_gpu_usd [0-9,.]+;", text
    ), text
