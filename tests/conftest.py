"""Shared fixtures: compiled example designs, the files they render and those files' parsed YAML (each
made once per test process), a CLI runner and one whose compiles of a shipped design come from those
caches; the `large` marker's rules; the order and grouping of the modules for pytest-xdist."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.renderers import render_all
from tests.netbox_service import netbox  # noqa: F401  (the session fixture: a real NetBox on loopback)

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ROOT / "designs"
EXAMPLES = sorted(p.stem for p in DESIGNS.glob("*.yaml") if p.stem != "catalog")
# shipped designs too large to compile in a test sweep (131,072 GPUs: quadplane-131k ~1M backend links,
# spectrumx-8plane-131k ~2.1M; each compiles whole in about a minute of CPU and 2-3 GB):
# tests/test_multiplane.py compiles them cut down, bench/multiplane.py compiles them whole
BENCH_ONLY = frozenset({"quadplane-131k", "spectrumx-8plane-131k"})
COMPILED_EXAMPLES = [n for n in EXAMPLES if n not in BENCH_ONLY]

# Designs whose compile and render take many seconds (h100-16k: 16,384 GPUs): a test that uses one is
# marked `large` (by hand, or by this file when a parameter names the design), so `-m "not large"` leaves
# them out while developing
LARGE_DESIGNS = frozenset({"h100-16k", "deepseek-8plane-16k"})

Key = tuple[str, tuple[str, ...]]
_COMPILED: dict[Key, tuple[Any, ...]] = {}  # (plan, design, catalog), as compile_file returns them
_FILES: dict[Key, dict[str, str]] = {}
_PLAN_KEYS: dict[int, Key] = {}  # id(plan) -> its key, for the CLI runner's render_all
_RUNNING: list[pytest.Item] = []  # the test being run: compiled() checks its `large` marker


def _compiled(name: str, overrides: tuple[str, ...]) -> tuple[Any, ...]:
    if name in LARGE_DESIGNS and _RUNNING and _RUNNING[-1].get_closest_marker("large") is None:
        pytest.fail(
            f"{_RUNNING[-1].nodeid} compiles {name}, a large design: mark the test @pytest.mark.large",
            pytrace=False,
        )
    key = (name, overrides)
    if key not in _COMPILED:
        _COMPILED[key] = compile_file(DESIGNS / f"{name}.yaml", list(overrides))
        _PLAN_KEYS[id(_COMPILED[key][0])] = key
    return _COMPILED[key]


@pytest.fixture(scope="session")
def compiled() -> Callable[..., Plan]:
    """compiled("h100-1024-reference", "backend.oversubscription=2:1", ...) -> Plan (cached)."""

    def get(name: str, *overrides: str) -> Plan:
        plan: Plan = _compiled(name, overrides)[0]
        return plan

    return get


def rendered_files(compiled: Callable[..., Plan], name: str, *overrides: str) -> dict[str, str]:
    """Every artifact of an example design (cached): {relative path: text}."""
    key = (name, overrides)
    if key not in _FILES:
        _FILES[key] = render_all(compiled(name, *overrides))
    return _FILES[key]


class _ParsedYaml(Mapping[str, Any]):
    """{path: document} of one design's rendered .yaml/.yml files, each parsed on first use with libyaml."""

    def __init__(self, files: dict[str, str]) -> None:
        self._files = files
        self._docs: dict[str, Any] = {}

    def __getitem__(self, path: str) -> Any:
        if path not in self._docs:
            if not path.endswith((".yaml", ".yml")):
                raise KeyError(f"{path} is not a rendered YAML file")
            self._docs[path] = yaml.load(self._files[path], Loader=yaml.CSafeLoader)
        return self._docs[path]

    def __iter__(self) -> Iterator[str]:
        return (p for p in self._files if p.endswith((".yaml", ".yml")))

    def __len__(self) -> int:
        return sum(1 for _ in self)


_YAML: dict[Key, _ParsedYaml] = {}


def rendered_yaml(compiled: Callable[..., Plan], name: str, *overrides: str) -> Mapping[str, Any]:
    """The parsed documents of an example design's rendered YAML files (cached): {relative path: document}.
    PyYAML's pure-Python loader took ~7 s per Cumulus test for b300-spectrumx's files; this parses each
    file once per run, in C. The documents are shared: a test must not change one (copy it first)."""
    key = (name, overrides)
    if key not in _YAML:
        _YAML[key] = _ParsedYaml(rendered_files(compiled, name, *overrides))
    return _YAML[key]


def site_cells(output: str) -> dict[str, list[str]]:
    """`compare --sites --markdown`'s table: each design's name -> the rest of its row's cells."""
    rows = [line for line in output.splitlines() if line.startswith("| ") and not line.startswith("| design")]
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in r.strip("|").split("|")] for r in rows)}


@pytest.fixture
def cli() -> Callable[..., object]:
    from generators.cli import app

    runner = CliRunner()

    def run(*args: str) -> object:
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture
def cli_on_caches(monkeypatch: pytest.MonkeyPatch, cli: Callable[..., object]) -> Callable[..., object]:
    """The `cli` runner, but a compile of a shipped design (designs/<name>.yaml, no catalog option) and
    the render of a plan so compiled come from the session caches `compiled` and `rendered_files` fill:
    a command on h100-16k costs no fresh compile and render when another test made them. It replaces
    generators.cli.compile_file and render_all, and fails here, loudly, if those change their name or
    parameters (the runner would otherwise compile for real, slowly, and still pass)."""
    import generators.cli as cli_module

    want = {
        "compile_file": ["path", "overrides", "catalog_path", "on_stage"],
        "render_all": ["plan"],
    }
    for name, params in want.items():
        fn = getattr(cli_module, name, None)
        if fn is None or list(inspect.signature(fn).parameters) != params:
            pytest.fail(f"cli_on_caches: generators.cli.{name}({', '.join(params)}) changed: update tests/conftest.py")
    real_compile, real_render = cli_module.compile_file, cli_module.render_all

    def compile_cached(
        path: Path, overrides: list[str] | None = None, catalog_path: Path | None = None, on_stage: Any = None
    ) -> tuple[Any, ...]:
        path = Path(path).resolve()
        if catalog_path is None and path.parent == DESIGNS and path.suffix == ".yaml" and path.stem in EXAMPLES:
            return _compiled(path.stem, tuple(overrides or ()))
        return real_compile(path, overrides, catalog_path, on_stage)

    def render_cached(plan: Plan) -> dict[str, str]:
        key = _PLAN_KEYS.get(id(plan))
        if key is not None and _COMPILED.get(key, (None,))[0] is plan:
            if key not in _FILES:
                _FILES[key] = real_render(plan)
            return dict(_FILES[key])
        return real_render(plan)

    monkeypatch.setattr(cli_module, "compile_file", compile_cached)
    monkeypatch.setattr(cli_module, "render_all", render_cached)
    return cli


# ---------------------------------------------------------------------------------------------------------
# Markers, order and pytest-xdist groups
# ---------------------------------------------------------------------------------------------------------

# scripts/test.sh runs pytest-xdist with --dist loadfile: a module's tests run on one worker, so its
# module-scoped fixtures are made once. The scheduler below (pytest_xdist_make_scheduler) joins the modules
# of SHARED_SCOPES into one scope: those sharing the NetBox session fixture run on one worker, and it
# starts once (~15 s and ~1 GB). Scopes go to the two workers in collection order, so the longest come
# first: they start at once and the short ones fill in behind them (seconds of one process on this 2-core
# machine, 2026-12-05; a module not listed runs after these in its usual order). pytest-xdist's own
# --dist loadgroup with xdist_group marks would do this, but its groups are lost under pytest 9.2
# (pytest-dev/pytest-xdist#1386: it renames node ids through an attribute pytest 9.2 no longer reads).
SLOWEST_FIRST = (
    "netbox",
    "test_pulumi_engine",
    "test_netbox_csv_import",
    "test_output_transaction",
    "test_sonic_yang",
    "test_slurm_ib_daemons",
    "test_frontend_evpn",
    "test_roce_backend_netns",
    "test_frontend_tools",
    "test_review_diff",
    "test_eos",
    "test_packaging",
    "test_realtools",
    "test_lldp_daemons",
    "test_yaml_text",
    "test_netbox_hostile",
    "test_engine_smoke",
    "test_review_script",
    "test_pulumi_config",
    "test_docs",
    "test_bom",
)
SHARED_SCOPES = {
    "tests/test_netbox_push.py": "netbox",
    "tests/test_netbox_service.py": "netbox",
    "tests/test_netbox_sites.py": "netbox",
}


def _scope(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    return SHARED_SCOPES.get(module, module)


def _names_a_large_design(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    for value in callspec.params.values():
        values = value if isinstance(value, (tuple, list)) else (value,)
        if any(isinstance(v, str) and v in LARGE_DESIGNS for v in values):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _names_a_large_design(item):
            item.add_marker(pytest.mark.large)
    # a stable sort: a scope's tests keep their order
    rank = {name: n for n, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda it: rank.get(Path(_scope(it.nodeid)).stem, len(rank)))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: absent when it is not installed
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """--dist loadfile, with the modules of SHARED_SCOPES in one scope."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return Scheduling(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _RUNNING.append(item)
    try:
        return (yield)
    finally:
        _RUNNING.pop()
