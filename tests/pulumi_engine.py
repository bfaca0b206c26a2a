"""Driving the real Pulumi engine from tests and benchmarks: a local file backend in a temp dir.

`engine_bin()` asks scripts/install-pulumi.sh for the bin dir (it uses a pulumi already on PATH, a
cached build, or builds one from the Go module proxy) and raises when there is no engine: the
engine tests fail, never skip. `Stack` runs the CLI against a project directory made for the test
from the repository's Pulumi.yaml, with `main:` pointing back at the real program, so stack config
files and state never land in the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from components.artifact import STORE
from components.site import GROUP_T
from generators.model.secrets import config_key

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "scripts" / "install-pulumi.sh"
ARTIFACT_T = "pulumi-python:dynamic/railyard:FileArtifact"  # one file per resource: stacks made before groups
SECRET_KEY = "4dabf18193072939515e22adb298388d"  # pulumi's marker of an encrypted value in the state
_BIN: list[Path] = []


class EngineMissing(RuntimeError):
    pass


def engine_bin() -> Path:
    """The directory holding pulumi, the Python language host and the dynamic-provider shim."""
    if _BIN:
        return _BIN[0]
    if not INSTALL.exists():
        raise EngineMissing(f"{INSTALL.relative_to(ROOT)} is missing: the engine cannot be found or built")
    proc = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=3600, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise EngineMissing(f"{INSTALL.name} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    bin_dir = Path(lines[-1])
    for exe in ("pulumi", "pulumi-language-python", "pulumi-language-python-exec", "pulumi-resource-pulumi-python"):
        if not os.access(bin_dir / exe, os.X_OK):
            raise EngineMissing(f"{INSTALL.name} printed {bin_dir}, which has no executable {exe}")
    _BIN.append(bin_dir)
    return bin_dir


def python_runtime() -> tuple[dict[str, Any], dict[str, str]]:
    """Runtime options and environment so the engine runs the program with this interpreter: the
    virtualenv it belongs to (scripts/setup.sh's .venv under scripts/test.sh), else this python."""
    if sys.prefix != sys.base_prefix:
        return {"toolchain": "pip", "virtualenv": sys.prefix}, {}
    return {"toolchain": "pip"}, {"PULUMI_PYTHON_CMD": sys.executable}


# What a stack of a shipped design needs to deploy its switch configs (docs/howto/day0.md): test values,
# each distinct, so a test can look for every one of them anywhere it must not be
SITE_SECRETS = {
    "switch_password": "Sw-test-pass-91c2e0",
    "snmp_auth_password": "Snmp-auth-test-5d1e",
    "snmp_priv_password": "Snmp-priv-test-0b7a",
    "bgp_password": "Bgp-md5-test-3f88a1",
}


class Stack:
    def __init__(
        self,
        workdir: Path,
        config: dict[str, Any],
        main: Path = ROOT,
        name: str = "test",
        skip_checkpoints: bool = False,
        pythonpath: Path | None = None,
        site_secrets: bool = True,
    ) -> None:
        self.dir = workdir / "project"
        self.state = workdir / "state"
        self.name = name
        for d in (self.dir, self.state, workdir / "home"):
            d.mkdir(parents=True, exist_ok=True)
        project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
        options, env = python_runtime()
        project["runtime"] = {"name": project["runtime"]["name"], "options": options}
        project.pop("stackConfigDir", None)
        self.project = project
        bin_dir = engine_bin()
        self.env = {
            **os.environ,
            **env,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PULUMI_HOME": str(workdir / "home"),
            "PULUMI_BACKEND_URL": self.state.as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": "railyard-test-passphrase",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "NO_COLOR": "1",
            # the program's compiled-site cache (components.sitecache), one per test: a second `up` of
            # the same design in a test runs from it, as a user's does
            "RAILYARD_CACHE": str(workdir / "cache"),
        }
        self.use_program(main, pythonpath)
        # the default is what users get: the file backend writes the state after every step
        self.env.pop("PULUMI_SKIP_CHECKPOINTS", None)
        if skip_checkpoints:
            self.env["PULUMI_SKIP_CHECKPOINTS"] = "true"
        self.run("stack", "init", name)
        if site_secrets:  # unless the test sets them (or leaves them out) itself
            config = {f"railyard:{config_key(n).split(':', 1)[1]}": Secret(v) for n, v in SITE_SECRETS.items()} | config
        self.configure(config)

    def use_program(self, main: Path, pythonpath: Path | None = None) -> None:
        """Point the project at another program; the stack (name, state, config) stays the same.
        `pythonpath` goes first on the program's and the provider process's import path, so a frozen
        copy of `components/` there is what both load (as `components.artifact`, as the state names it)."""
        self.project["main"] = str(main)
        (self.dir / "Pulumi.yaml").write_text(yaml.safe_dump(self.project, sort_keys=False))
        paths = [*([str(pythonpath)] if pythonpath else []), str(ROOT), os.environ.get("PYTHONPATH", "")]
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)

    def run(self, *args: str, check: bool = True, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
        cmd = [shutil.which("pulumi", path=self.env["PATH"]) or "pulumi", *args, "--non-interactive"]
        if args[0] not in ("stack",) or args[:2] == ("stack", "output"):
            cmd += ["--stack", self.name]
        proc = subprocess.run(
            cmd, cwd=self.dir, env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return proc

    def configure(self, config: dict[str, Any]) -> None:
        """Set the stack's config in one `config set-all` (a list in a second one, by path, after its old
        items are removed): each `pulumi` run costs a CLI start and a read and write of the stack file."""
        scalars: list[str] = []
        items: list[str] = []
        for key, value in config.items():
            secret = isinstance(value, Secret)
            if secret:
                value = value.value
            if isinstance(value, list):
                self.run("config", "rm", key, check=False)
                items += [arg for i, item in enumerate(value) for arg in ("--plaintext", f"{key}[{i}]={item}")]
            else:
                scalars += ["--secret" if secret else "--plaintext", f"{key}={value}"]
        if scalars:
            self.run("config", "set-all", *scalars)
        if items:
            self.run("config", "set-all", "--path", *items)

    def up(self) -> float:
        t0 = time.perf_counter()
        self.run("up", "--yes", "--skip-preview")
        return time.perf_counter() - t0

    def up_ops(self, *extra: str, typ: str = GROUP_T) -> dict[str, str]:
        """Run `up` and return what it did to resources of type `typ`: name -> op, for every op that is
        not `same` (a FileGroup's name is its component's, a FileArtifact's its path)."""
        proc = self.run("up", "--yes", "--skip-preview", "--json", *extra)
        out: dict[str, str] = {}
        for line in proc.stdout.splitlines():
            event = json.loads(line).get("resOutputsEvent") if line.startswith("{") else None
            if event and type_of(event["metadata"]["urn"]) == typ and event["metadata"]["op"] != "same":
                out[event["metadata"]["urn"].rsplit("::", 1)[1]] = event["metadata"]["op"]
        return out

    def preview(self, *extra: str) -> dict[str, Any]:
        """The planned steps, as `pulumi preview --json` reports them."""
        return json.loads(self.run("preview", "--json", *extra).stdout)

    def outputs(self) -> dict[str, Any]:
        return json.loads(self.run("stack", "output", "--json").stdout)

    def export(self) -> dict[str, Any]:
        return json.loads(self.run("stack", "export").stdout)

    def resources(self, typ: str = GROUP_T) -> list[dict[str, Any]]:
        return [r for r in self.export()["deployment"].get("resources", []) if r["type"] == typ]

    def held(self) -> dict[str, str]:
        """path -> name of the FileGroup whose outputs hold it (a secret group's map is encrypted: its
        paths are not here)."""
        return {
            path: r["urn"].rsplit("::", 1)[1]
            for r in self.resources()
            if SECRET_KEY not in r["outputs"]["files"]
            for path in r["outputs"]["files"]
        }


def type_of(urn: str) -> str:
    return urn.split("::")[2].rsplit("$", 1)[-1]


def step_ops(preview: dict[str, Any], typ: str = GROUP_T) -> dict[str, str]:
    """Resource name -> planned op of every step on a resource of type `typ` that is not `same`."""
    out: dict[str, str] = {}
    for step in preview.get("steps", []):
        urn = step.get("urn", "")
        # a --refresh preview lists a "refresh" step for every resource it re-read; those change nothing
        if type_of(urn) == typ and step["op"] not in ("same", "refresh"):
            out[urn.rsplit("::", 1)[1]] = step["op"]
    return out


def sha(entry: str | None) -> str | None:
    """The hash a group's entry for a file starts with (components.artifact.entry_text)."""
    return entry.split(" ", 1)[0] if entry else None


def changed_paths(preview: dict[str, Any]) -> set[str]:
    """The paths a preview's FileGroup steps would write or remove: keys added, dropped or changed
    between a group's old outputs and its new inputs (the map diff `preview --diff` prints); a secret
    group's map is encrypted, its paths are not among them."""
    out: set[str] = set()
    for step in preview.get("steps", []):
        if type_of(step.get("urn", "")) != GROUP_T or step["op"] in ("same", "refresh"):
            continue
        old = ((step.get("oldState") or {}).get("outputs") or {}).get("files") or {}
        new = ((step.get("newState") or {}).get("inputs") or {}).get("files") or {}
        if not isinstance(old, dict) or not isinstance(new, dict):  # a `#secret` group: "[secret]", no paths
            continue
        out |= {p for p in set(old) | set(new) if sha(old.get(p)) != sha(new.get(p))}
    return out


class Secret:
    def __init__(self, value: str) -> None:
        self.value = value


def snapshot(root: Path, store: bool = False) -> dict[str, tuple[str, int, int]]:
    """relative path -> (content, inode, mtime_ns) of every file under root; railyard's blob store
    (`.railyard/`, the contents the provider copies from) only with store=True."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and (store or p.relative_to(root).parts[0] != STORE):
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (p.read_text(), st.st_ino, st.st_mtime_ns)
    return out
