"""End-to-end smoke test of the real Pulumi engine, with no Pulumi Cloud.

scripts/install-pulumi.sh provides the engine (building it from the Go module proxy when needed);
the test then runs a tiny Python project whose only resource comes from a Python dynamic provider
that writes a file, against a local file backend: stack init, up, an idempotence preview, destroy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pulumi_engine import engine_bin

pytestmark = pytest.mark.engine

STEP_TIMEOUT_S = 600


@pytest.fixture(scope="session")
def pulumi_bin_dir() -> Path:
    # one way to find or build the engine for every engine test; a missing engine fails, never skips
    return engine_bin()


PULUMI_YAML = """\
name: railyard-engine-smoke
runtime: python
description: railyard's engine smoke test (dynamic provider writing a local file)
"""

# The provider lives in a module next to the program, not in __main__: dill then pickles it by
# reference, and the provider process (run from the project directory) imports it back.
PROVIDER_MODULE = '''\
from pathlib import Path

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult


class LocalFileProvider(ResourceProvider):
    """Stateless on purpose: every resource carries a pickled copy of its provider."""

    def create(self, props):
        Path(props["path"]).write_text(props["content"])
        return CreateResult(id_=props["path"], outs=dict(props))

    def diff(self, _id, olds, news):
        replaces = ["path"] if olds.get("path") != news.get("path") else []
        changes = bool(replaces) or olds.get("content") != news.get("content")
        return DiffResult(changes=changes, replaces=replaces, delete_before_replace=True)

    def update(self, _id, _olds, news):
        Path(news["path"]).write_text(news["content"])
        return UpdateResult(outs=dict(news))

    def delete(self, _id, props):
        Path(props["path"]).unlink(missing_ok=True)


class LocalFile(Resource):
    path: pulumi.Output[str]
    content: pulumi.Output[str]

    def __init__(self, name, path, content, opts=None):
        super().__init__(LocalFileProvider(), name, {"path": path, "content": content}, opts)
'''

PROGRAM = """\
import pulumi

from localfile import LocalFile

config = pulumi.Config()
marker = LocalFile("marker", path=config.require("target"), content="written by the Pulumi engine\\n")
pulumi.export("path", marker.path)
"""


def _run(pulumi: Path, args: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [str(pulumi), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
        check=False,
    )
    output = f"$ pulumi {' '.join(args)}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    assert proc.returncode == 0, output
    return proc.stdout


def test_dynamic_provider_up_preview_destroy(pulumi_bin_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    backend = tmp_path / "backend"
    home = tmp_path / "pulumi-home"
    for d in (project, backend, home):
        d.mkdir()
    (project / "Pulumi.yaml").write_text(PULUMI_YAML)
    (project / "localfile.py").write_text(PROVIDER_MODULE)
    (project / "__main__.py").write_text(PROGRAM)
    target = tmp_path / "marker.txt"

    env = {
        **os.environ,
        "PATH": f"{pulumi_bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PULUMI_BACKEND_URL": backend.as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": "test",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_HOME": str(home),
        # The program and the dynamic provider both run on this interpreter, which has the SDK.
        "PULUMI_PYTHON_CMD": sys.executable,
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "NO_COLOR": "1",
    }
    env.pop("PULUMI_ACCESS_TOKEN", None)
    pulumi = pulumi_bin_dir / "pulumi"

    _run(pulumi, ["stack", "init", "smoke", "--non-interactive"], project, env)
    _run(pulumi, ["config", "set", "target", str(target)], project, env)

    up = _run(pulumi, ["up", "--yes", "--skip-preview", "--non-interactive"], project, env)
    assert target.read_text() == "written by the Pulumi engine\n", up
    outputs = _run(pulumi, ["stack", "output", "path"], project, env)
    assert outputs.strip() == str(target)

    _run(pulumi, ["preview", "--expect-no-changes", "--non-interactive"], project, env)
    assert target.exists()

    _run(pulumi, ["destroy", "--yes", "--skip-preview", "--non-interactive"], project, env)
    assert not target.exists()

    # Nothing of the stack is left but its (empty) state in the local backend.
    state = _run(pulumi, ["stack", "export"], project, env)
    assert "LocalFile" not in state and "pulumi-python:dynamic" not in state
