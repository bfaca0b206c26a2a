"""The command line behaves as engineers expect of a tool: --version and -V, -h on every command, help with
an example and no Python types, shell completion, --json on the commands that report, a progress line on
a terminal during a long compile, and an output folder that says what to open first."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from generators import __version__
from generators.cli import app
from tests.conftest import DESIGNS, ROOT

Cli = Callable[..., Any]
SMALL = DESIGNS / "h100-256.yaml"


def _commands() -> Iterator[tuple[str, ...]]:
    """Every command path, groups included: ("compile",), ("cabling", "mark"), ..."""

    def walk(cmd: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        yield path
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(app), ())


COMMANDS = list(_commands())
LEAVES = [c for c in COMMANDS if c and not hasattr(typer.main.get_command(app).get_command(None, c[0]), "commands")]
LEAVES += [c for c in COMMANDS if len(c) == 2]


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(cli: Cli, flag: str) -> None:
    r = cli(flag)
    assert r.exit_code == 0 and r.stdout == f"railyard {__version__}\n"


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "railyard")
def test_every_command_answers_h_with_readable_help(cli: Cli, path: tuple[str, ...]) -> None:
    r = cli(*path, "-h")
    assert r.exit_code == 0, r.output
    assert r.stdout == cli(*path, "--help").stdout
    # no Python type in sight: list[str], <path>, <int range>, ... (the metavar says what to write)
    assert not re.search(r"<(list\[|path>|str>|int|float|bool)", r.stdout), r.stdout


@pytest.mark.parametrize("path", sorted(set(LEAVES)), ids=" ".join)
def test_every_command_help_has_an_example(cli: Cli, path: tuple[str, ...]) -> None:
    text = " ".join(cli(*path, "-h").stdout.split())
    assert f"Example: railyard {' '.join(path)} " in text, text


# as the installed `railyard` script runs (its name is what a shell completes)
RAILYARD = [sys.executable, "-c", "import sys; from generators.cli import main; sys.argv[0] = 'railyard'; main()"]


def test_shell_completion_completes_commands_and_options() -> None:
    script = subprocess.run([*RAILYARD, "completion", "bash"], capture_output=True, text=True, cwd=ROOT)
    assert script.returncode == 0 and "_RAILYARD_COMPLETE=complete_bash" in script.stdout
    env = {**os.environ, "PYTHONPATH": str(ROOT), "_RAILYARD_COMPLETE": "complete_bash"}

    def complete(words: str) -> list[str]:
        done = subprocess.run(
            RAILYARD,
            env={**env, "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)},
            capture_output=True,
            text=True,
        )
        return done.stdout.split()

    assert set(complete("railyard comp")) == {"completion", "compile", "compare"}
    assert "--out" in complete("railyard compile --o")


# ------------------------------------------------------------------------------------------ --json


def test_validate_json(cli: Cli) -> None:
    r = cli("validate", SMALL, "--json")
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc.pop("management")["secrets"]["bgp_password"] == "railyard:bgpPassword"
    assert doc == {"ok": True, "design": "h100-256", "warnings": []}
    r = cli("validate", SMALL, "--json", "--set", "backend.switch=QM9790")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["problems"][0]["field"] == "backend.switch"
    assert doc["problems"][0]["fix"].startswith("did you mean 'QM9700'")


def test_compile_json(cli: Cli, tmp_path: Path) -> None:
    r = cli("compile", SMALL, "--out", tmp_path / "o", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["ok"] and doc["design"] == "h100-256" and doc["facts"]["gpus"] == 256
    assert doc["files"] == len(json.loads((tmp_path / "o" / ".railyard-manifest.json").read_text())["files"])


def test_compare_json(cli: Cli) -> None:
    r = cli("compare", SMALL, DESIGNS / "h100-1024-reference.yaml", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["designs"] == ["h100-256", "h100-1024-reference"]
    gpus = next(row for row in doc["rows"] if row["label"] == "GPUs")
    assert gpus["values"] == [256, 1024]


# ------------------------------------------------------------------------------- long steps, output


def test_a_compile_on_a_terminal_shows_its_steps_and_in_a_pipe_does_not(tmp_path: Path) -> None:
    main, sub = pty.openpty()
    cmd = [*RAILYARD, "compile", str(SMALL), "--out", str(tmp_path / "t")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=sub, env=env)
    os.close(sub)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the compile ended
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait() == 0
    text = seen.decode("utf-8", "replace")
    # the status line names the step as it runs (a fast stage may come and go between two redraws)
    assert "compiling h100-256" in text and "compiling h100-256: rendering and writing" in text, text[-2000:]
    piped = subprocess.run(
        [*cmd[:-1], str(tmp_path / "p")], capture_output=True, text=True, env={**env, "TERM": "dumb"}
    )
    assert piped.returncode == 0 and "compiling h100-256" not in piped.stderr


def test_the_output_says_what_to_open_first(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = cli("compile", SMALL, "--out", out, "-q")
    assert r.exit_code == 0
    assert r.stdout.splitlines()[-1] == (
        f"open next: {out / 'index.html'}, {out / 'cabling/cables.csv'}, {out / 'bom.html'}, {out / 'floor.html'}"
    )
    index = (out / "index.html").read_text()
    tops = {p.name for p in out.iterdir() if not p.name.startswith(".") and p.name != "index.html"}
    for top in tops:  # every file and folder at the top is linked, with a line on what it is
        assert f"<code>{top}{'/' if (out / top).is_dir() else ''}</code>" in index, top
    for link in re.findall(r'href="([^"]+)"', index):
        assert (out / link).exists(), link
