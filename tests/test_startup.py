"""What each command loads (issue #18): `railyard --help` and `schema` answer without the compiler,
`validate` without the renderers, and a compile imports a geometry or graph library only when its
design needs one. Checked on the modules a fresh process holds when the command is done; the times
themselves are bench/startup.py's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DESIGNS

ROOT = Path(__file__).resolve().parent.parent

# run as the installed `railyard` script does, then print the loaded module names (main() ends the
# process itself after running the atexit handlers)
_CHILD = (
    "import atexit, sys\nfrom generators.cli import main\nsys.argv = ['railyard', *sys.argv[1:]]\n"
    "atexit.register(lambda: print(' '.join(sorted(sys.modules)), file=sys.stderr))\nmain()\n"
)


def loaded(*args: str | Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(done.stderr.strip().splitlines()[-1].split())


def _under(mods: set[str], *roots: str) -> set[str]:
    return {m for m in mods if m.split(".")[0] in roots or any(m == r or m.startswith(r + ".") for r in roots)}


def test_help_loads_no_compiler_model_or_renderer() -> None:
    mods = loaded("--help")
    assert not _under(mods, "pydantic", "yaml", "jinja2", "segno", "networkx", "shapely", "numpy", "pyavd")
    assert not _under(mods, "rich"), "help and usage errors print through click; rich only when a command prints"
    assert not _under(
        mods,
        "generators.model.design",
        "generators.model.catalog",
        "generators.compiler",
        "generators.stages",
        "generators.renderers",
        "generators.vendors",
        "generators.handover.netbox_sync",
    )


def test_a_subcommand_help_loads_no_compiler() -> None:
    # (typer itself imports pydantic to coerce a command's parameters)
    mods = loaded("netbox", "push", "--help")
    assert not _under(
        mods,
        "generators.model.design",
        "generators.compiler",
        "generators.handover.netbox_sync",
        "ssl",
        "yaml",
        "jinja2",
    )


def test_schema_loads_the_model_but_not_the_compiler(tmp_path: Path) -> None:
    mods = loaded("schema")
    assert "generators.model.design" in mods
    assert not _under(
        mods,
        "generators.compiler",
        "generators.stages.cabling",
        "generators.renderers.cabling",
        "jinja2",
        "segno",
        "networkx",
        "shapely",
        "pyavd",
    )


def test_validate_compiles_but_renders_nothing() -> None:
    mods = loaded("validate", DESIGNS / "h100-1024-reference.yaml")
    assert "generators.compiler" in mods and "generators.stages.cabling" in mods  # it did compile
    assert not _under(
        mods,
        "jinja2",
        "segno",
        "pyavd",
        "shapely",
        "networkx",
        "generators.renderers.cabling",
        "generators.renderers.netbox_csv",
        "generators.renderers.floor",
    )


@pytest.mark.parametrize("design", ["h100-1024-reference", "h100-512-roce"])
def test_compile_loads_no_graph_or_geometry_library_without_keepouts(design: str, tmp_path: Path) -> None:
    mods = loaded("compile", DESIGNS / f"{design}.yaml", "-q", "--out", tmp_path / "out")
    assert (tmp_path / "out" / "plan.json").is_file()
    assert "jinja2" in mods and "generators.renderers.cabling" in mods  # it did render
    assert not _under(mods, "shapely", "numpy", "networkx", "pyavd")


def test_a_floor_with_keepouts_routes_trays_with_shapely() -> None:
    """The lazy import is real: a design whose keep-out blocks trays loads shapely and compiles."""
    design = ROOT / "tests" / "designs" / "floor-edge.yaml"
    assert "blocks_trays: true" in design.read_text()
    assert "shapely" in loaded("validate", design)


_ENDING = (
    "import atexit, sys\nfrom generators.cli import main\nmark = sys.argv[1]\n"
    "sys.argv = ['railyard', *sys.argv[2:]]\n"
    "atexit.register(lambda: open(mark, 'w').write('ran'))\nmain()\n"
)


@pytest.mark.parametrize(
    ("args", "status", "says"),
    [
        (["validate", str(DESIGNS / "h100-256.yaml")], 0, "ok: h100-256 is valid"),
        (["validate", "no-such-design.yaml"], 2, "cannot read"),
        (["no-such-command"], 2, "No such command"),
    ],
)
def test_a_command_ends_with_its_status_after_the_atexit_handlers(
    tmp_path: Path, args: list[str], status: int, says: str
) -> None:
    """main() ends the process without the interpreter's teardown (cli._end): the command's exit status,
    the atexit handlers run and what it printed all there, on both streams."""
    mark = tmp_path / "atexit-ran"
    done = subprocess.run(
        [sys.executable, "-c", _ENDING, str(mark), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == status, done.stderr[-3000:]
    assert says in done.stdout + done.stderr
    assert mark.read_text() == "ran"
