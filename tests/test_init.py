"""`railyard init`: a starting design for every GPU system railyard knows, sized in whole scalable units,
that compiles as written, with every field commented; it never overwrites a file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generators.model.catalog import load_catalog
from generators.model.design.starter import STARTS, _start_of, systems
from generators.model.errors import DesignError

Cli = Callable[..., Any]
CATALOG = load_catalog()


def _startable(system: str, technology: str) -> bool:
    try:
        _start_of(CATALOG, technology, system)
    except DesignError:
        return False
    return True


# every system with a start on each backend technology
CASES = [(s, t) for t in ("infiniband", "roce") for s in systems(CATALOG) if _startable(s, t)]


def test_every_system_has_a_start_and_every_start_a_system() -> None:
    # (hgx-b300-2x400gbe's NIC presents Ethernet ports only: a RoCE start)
    assert {s for s, _ in CASES} == set(systems(CATALOG))
    assert {s for _, s in STARTS} <= set(systems(CATALOG))


@pytest.mark.parametrize(("system", "technology"), CASES)
def test_a_start_compiles_as_written(cli: Cli, tmp_path: Path, system: str, technology: str) -> None:
    design = tmp_path / "site.yaml"
    r = cli("init", design, "--system", system, "--gpus", "100", "--backend", technology)
    assert r.exit_code == 0, r.output
    text = design.read_text()
    doc = yaml.safe_load(text)
    assert doc["backend"]["technology"] == technology
    assert system in (doc["compute"].get("server"), doc["compute"].get("system"))
    # every field of the file has a comment above it
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#") and ":" in line and i > 0:
            assert lines[i - 1].lstrip().startswith("#"), f"no comment above {line!r}"
    assert f"next: railyard validate {design}" in r.stdout
    assert cli("validate", design).exit_code == 0


def test_a_start_is_whole_scalable_units_of_at_least_the_gpus_asked(cli: Cli, tmp_path: Path) -> None:
    design = tmp_path / "b200.yaml"
    r = cli("init", design, "--system", "dgx-b200", "--gpus", "2000")
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(design.read_text())
    assert doc["name"] == "dgx-b200-2048" and doc["compute"] == {"server": "dgx-b200", "count": 256}
    assert "2,048 GPUs in 256 servers (8 scalable units), from b200-1024" in r.stdout
    nvl = tmp_path / "nvl.yaml"
    assert cli("init", nvl, "--system", "gb300-nvl72", "--gpus", "1").exit_code == 0
    doc = yaml.safe_load(nvl.read_text())
    assert doc["compute"] == {"system": "gb300-nvl72", "racks": 8}  # one scalable unit: 8 racks


def test_init_never_overwrites_a_file(cli: Cli, tmp_path: Path) -> None:
    design = tmp_path / "site.yaml"
    design.write_text("name: mine\n")
    r = cli("init", design, "--gpus", "256")
    assert r.exit_code == 2 and "railyard init never overwrites a file" in r.stderr, r.output
    assert design.read_text() == "name: mine\n"
    r = cli("init", design, "--gpus", "256", "--force", design)
    assert r.exit_code == 0 and design.read_text().startswith("# yaml-language-server"), r.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--system", "hgx-h200"], "unknown GPU system 'hgx-h200'"),
        (["--system", "dgx-b300", "--backend", "roce"], "no shipped roce design is built of dgx-b300"),
        (["--gpus", "0"], "ask for at least one GPU"),
    ],
)
def test_a_start_that_cannot_be_made_says_why(cli: Cli, tmp_path: Path, args: list[str], says: str) -> None:
    r = cli("init", tmp_path / "x.yaml", *args)
    assert r.exit_code == 2 and says in r.stderr, r.output
    assert not (tmp_path / "x.yaml").exists()
