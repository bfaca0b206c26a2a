"""`pip install .` into a new virtualenv gives a working `railyard`: its catalog, shipped designs and
templates come as package data, the runtime dependencies are enough for init, validate and compile, and
the extras are what they say (EOS switches need `railyard[eos]`, and say so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv with `pip install <this checkout>` (runtime dependencies only), its bin folder."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    pip = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return env_dir / "bin"


def run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(bin_dir / "railyard"), *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_an_installed_railyard_inits_validates_and_compiles(installed: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(installed / "python"), "-c", "import generators, pydantic; print(generators.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert where.returncode == 0 and str(ROOT) not in where.stdout, where.stdout  # the installed copy
    assert run(installed, tmp_path, "--version").stdout.startswith("railyard ")
    r = run(installed, tmp_path, "init", "site.yaml", "--system", "hgx-h100", "--gpus", "256")
    assert r.returncode == 0, r.stderr
    r = run(installed, tmp_path, "validate", "site.yaml", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["ok"], r.stdout + r.stderr
    r = run(installed, tmp_path, "compile", "site.yaml", "--out", "out", "-q")
    assert r.returncode == 0, r.stderr
    for f in ("index.html", "plan.json", "cabling/cables.csv", "slurm/topology.conf", "bom.html"):
        assert (tmp_path / "out" / f).is_file(), f
    assert run(installed, tmp_path, "schema").stdout.startswith("{")


def test_without_the_eos_extra_an_eos_design_says_what_to_install(installed: Path, tmp_path: Path) -> None:
    design = ROOT / "tests" / "designs" / "h100-256-roce-eos.yaml"
    assert subprocess.run([str(installed / "python"), "-c", "import pyavd"], capture_output=True).returncode != 0
    r = run(installed, tmp_path, "validate", str(design))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "the Python package pyavd, which is not installed" in r.stderr
    assert "pip install 'railyard[eos]'" in r.stderr


def test_the_wheel_holds_the_data_and_no_tests(tmp_path: Path) -> None:
    import zipfile

    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    [wheel] = tmp_path.glob("railyard-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"generators/designs/catalog.yaml", "generators/designs/h100-1024-reference.yaml"} <= names
    assert any(n.startswith("generators/templates/") and n.endswith(".j2") for n in names)
    assert not any(n.startswith(("tests/", "bench/", "scripts/")) for n in names)
    meta = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith("METADATA"))
    assert "License-Expression: Apache-2.0" in meta
    runtime = [ln for ln in meta.splitlines() if ln.startswith("Requires-Dist:") and "extra ==" not in ln]
    assert not [ln for ln in runtime if any(t in ln for t in ("pytest", "hypothesis", "ruff", "pyavd", "mkdocs"))]


def test_without_the_netbox_extra_push_says_what_to_install(installed: Path, tmp_path: Path) -> None:
    # the runtime set has no HTTP client: compile writes NetBox's import files without one
    assert subprocess.run([str(installed / "python"), "-c", "import httpx"], capture_output=True).returncode != 0
    design = ROOT / "designs" / "h100-256.yaml"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run(
        [str(installed / "railyard"), "netbox", "push", str(design), "--url", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "NETBOX_TOKEN": "nbt_abc.def"},
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "pip install 'railyard[netbox]'" in r.stderr and "nbt_abc.def" not in r.stderr
