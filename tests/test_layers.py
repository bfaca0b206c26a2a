"""The layers the folders promise, held by the imports: data flows design -> model -> stages -> views ->
vendors and renderers -> reports, hand-over, as-built -> CLI and Pulumi components, and a module imports
only its own layer or the layers before it. Every import counts: at the top of a module, inside a
function, or under ``if TYPE_CHECKING``. The layer order and each layer's rule are in docs/architecture.md.
"""

from __future__ import annotations

import ast
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("generators", "components")

# Lowest first. A module of layer i may import layers 0..i; the first prefix that matches a module's
# dotted name gives its layer (`generators.model.plan` is in `generators.model`).
LAYERS: tuple[str, ...] = (
    "generators.gc_pause",  # no railyard import at all: the GC switch of the compile
    "generators.cachedir",  # the user's cache folder
    "generators.text",  # text formats: JSON, block YAML, CSV, the Jinja2 environment
    "generators.model",  # the design, the catalog, OS rows, vocabulary, the plan and its sections
    "generators.stages",  # the compiler's stages, each writing its own section of the plan
    "generators.compiler",  # the pipeline: design -> plan
    "generators.views",  # read-only projections of a finished plan
    "generators.vendors",  # switch configs, one renderer module per network OS
    "generators.output",  # the output folder: staged, committed whole
    "generators.renderers",  # plan -> files, every artifact family
    "generators.reports",  # summaries, review diffs, comparisons of compiled plans
    "generators.explore",  # the design-space search: variants compiled, measured, searched, written
    "generators.handover",  # the NetBox push
    "generators.asbuilt",  # what was found on site against the plan
    "generators.printing",  # sheets to PDF through headless Chromium
    "generators.cli",  # the railyard command
    "components",  # the Pulumi side
)


def layer_of(module: str) -> int | None:
    """The layer of a dotted module name (None: not railyard's). The bare `generators` package (an empty
    __init__) is below everything: it may import nothing of railyard's."""
    if module == "generators":
        return 0
    for i, prefix in enumerate(LAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return i
    if module.split(".")[0] in PACKAGES and module not in PACKAGES:
        raise AssertionError(f"{module} is in no layer: add its package to LAYERS (and docs/architecture.md)")
    return None


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import statement in the file, wherever it stands. `from a import
    b` counts as importing `a.b` when that is a module, else `a`."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the importing module's package, up level - 1
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").exists() or (
                    root / Path(*sub.split(".")) / "__init__.py"
                ).exists()
                out.append((node.lineno, sub if is_module else base))
    return out


def sources(root: Path) -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (root / pkg).rglob("*.py"))


def upward_imports(root: Path) -> list[str]:
    """Every import of a later layer, as `file:line: importer (layer) imports imported (layer)`."""
    bad = []
    for path in sources(root):
        me = module_name(path, root)
        mine = layer_of(me)
        assert mine is not None, me
        for line, target in imports(path, root):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                bad.append(
                    f"{path.relative_to(root)}:{line}: {me} ({LAYERS[mine]}) imports {target} ({LAYERS[theirs]})"
                )
    return bad


def module_cycles(root: Path) -> list[list[str]]:
    """Import cycles between railyard's modules (a package's __init__ counts as a module of its own)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sources(root):
        me = module_name(path, root)
        for _, target in imports(path, root):
            if target.split(".")[0] in PACKAGES and target != me:
                graph[me].add(target)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                cycles.append([*stack[stack.index(n) :], n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return cycles


def test_every_import_goes_to_its_own_layer_or_an_earlier_one() -> None:
    bad = upward_imports(ROOT)
    assert not bad, "imports against the layer order (docs/architecture.md):\n" + "\n".join(bad)


def test_no_import_cycle_between_modules() -> None:
    cycles = module_cycles(ROOT)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_every_railyard_module_is_in_a_layer() -> None:
    for path in sources(ROOT):
        assert layer_of(module_name(path, ROOT)) is not None, path


@pytest.mark.parametrize(
    ("file", "planted"),
    [
        # a model module reaching up to the CLI from inside a function
        ("generators/model/errors.py", "\ndef _planted():\n    from generators.cli import app\n    return app\n"),
        # a stage importing a view at the top
        ("generators/stages/bom.py", "\nfrom generators.views.switches import frontend_views  # noqa\n"),
        # a renderer importing the hand-over under TYPE_CHECKING
        (
            "generators/renderers/bom.py",
            "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import generators.handover.netbox_sync\n",
        ),
    ],
)
def test_a_planted_upward_import_is_caught(tmp_path: Path, file: str, planted: str) -> None:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    assert upward_imports(tmp_path) == []
    target = tmp_path / file
    target.write_text(target.read_text() + planted)
    bad = upward_imports(tmp_path)
    assert len(bad) == 1 and bad[0].startswith(file + ":"), bad


def test_a_planted_cycle_is_caught(tmp_path: Path) -> None:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    errors = tmp_path / "generators/model/errors.py"
    errors.write_text(errors.read_text() + "\nfrom generators.model import plan  # noqa\n")
    assert any("generators.model.errors" in c and "generators.model.plan" in c for c in module_cycles(tmp_path))
