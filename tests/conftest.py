"""Shared fixtures: compiled example designs (cached per session) and a CLI runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.renderers import render_all
from tests.netbox_service import netbox  # noqa: F401  (the session fixture: a real NetBox on loopback)

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ROOT / "designs"
EXAMPLES = sorted(p.stem for p in DESIGNS.glob("*.yaml") if p.stem != "catalog")
# shipped designs too large to compile in a test sweep: bench/ compiles them whole, and their own tests
# compile them cut down (131,072 GPUs: quadplane-131k ~1M backend links, spectrumx-8plane-131k ~2.1M;
# tests/test_multiplane.py)
BENCH_ONLY = frozenset({"quadplane-131k", "spectrumx-8plane-131k"})
COMPILED_EXAMPLES = [n for n in EXAMPLES if n not in BENCH_ONLY]


_PLANS: dict[tuple[str, tuple[str, ...]], Plan] = {}


@pytest.fixture(scope="session")
def compiled() -> Callable[..., Plan]:
    """compiled("h100-1024-reference", "backend.oversubscription=2:1", ...) -> Plan (cached)."""

    def get(name: str, *overrides: str) -> Plan:
        key = (name, overrides)
        if key not in _PLANS:
            _PLANS[key] = compile_file(DESIGNS / f"{name}.yaml", list(overrides))[0]
        return _PLANS[key]

    return get


_FILES: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}


def rendered_files(compiled: Callable[..., Plan], name: str, *overrides: str) -> dict[str, str]:
    """Every artifact of an example design (cached): {relative path: text}."""
    key = (name, overrides)
    if key not in _FILES:
        _FILES[key] = render_all(compiled(name, *overrides))
    return _FILES[key]


@pytest.fixture
def cli() -> Callable[..., object]:
    from generators.cli import app

    runner = CliRunner()

    def run(*args: str) -> object:
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return run
