"""Secrets at deploy without Pulumi (issue 38): `railyard compile --secrets FILE --deploy DIR` writes the
compiled folder with placeholders and the deploy folder with the values, and no secret value reaches
any output stream, plan.json, the compiled folder or an error message, of a compile that works and of
every way one fails. The real `railyard` command in a subprocess, every stream captured. (The Pulumi
side: tests/test_pulumi_engine.py::test_no_secret_value_in_any_stream_of_a_deploy.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from generators.model.secrets import referenced
from tests.conftest import DESIGNS, ROOT

SECRETS = {
    "switch_password": "Sw-leak-check-1a2b3c",
    "snmp_auth_password": "Snmp-leak-auth-4d5e",
    "snmp_priv_password": "Snmp-leak-priv-6f70",
    "bgp_password": "Bgp-leak-md5-8192a",
    "tacacs_key": "Tacacs-leak-b3c4d5",
}
AAA = 'management.tacacs_servers=[{"address": "10.9.0.1"}]'


def railyard(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("railyard")
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=900)


def secrets_file(path: Path, values: dict[str, str], mode: int = 0o600) -> Path:
    path.write_text("".join(f"{k}: {v}\n" for k, v in values.items()))
    path.chmod(mode)
    return path


def no_value_in(text: str, where: str, values: dict[str, str] = SECRETS) -> None:
    for name, v in values.items():
        assert v not in text, f"the value of {name} is in {where}"


def tree_text(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_compile_fills_the_deploy_folder_and_nothing_else(tmp_path: Path) -> None:
    out, deploy = tmp_path / "out", tmp_path / "deploy"
    sf = secrets_file(tmp_path / "secrets.yaml", SECRETS)
    r = railyard("compile", DESIGNS / "h100-256.yaml", "--set", AAA, "-o", out, "--secrets", sf, "--deploy", deploy)
    assert r.returncode == 0, r.stderr
    no_value_in(r.stdout + r.stderr, "compile's output")
    assert f"files to {deploy}/ (" in r.stdout and "with secrets filled in, mode 0600)" in r.stdout
    compiled, deployed = tree_text(out), tree_text(deploy)
    for path, data in compiled.items():
        no_value_in(data.decode("utf-8", "replace"), f"the compiled {path}")
    assert set(compiled) == set(deployed)
    holding = {p for p, d in compiled.items() if referenced(d.decode("utf-8", "replace"))}
    assert len(holding) > 20 and "plan.json" not in holding
    assert {"frontend/fe-leaf01/frr.conf", "frontend/fe-leaf01/users.sh", "oob/oob-r01-01/config_db.json"} <= holding
    for path, data in deployed.items():
        text = data.decode("utf-8", "replace")
        mode = stat.S_IMODE((deploy / path).stat().st_mode)
        if path in holding:
            assert not referenced(text) and mode == 0o600, path
        elif path != ".railyard-manifest.json":
            assert data == compiled[path] and mode == 0o644, path
    assert stat.S_IMODE(deploy.stat().st_mode) == 0o700
    assert stat.S_IMODE((deploy / ".railyard-manifest.json").stat().st_mode) == 0o600
    frr = (deploy / "frontend/fe-leaf01/frr.conf").read_text()
    assert f"neighbor FABRIC password {SECRETS['bgp_password']}" in frr
    users = (deploy / "frontend/fe-leaf01/users.sh").read_text()
    assert "user admin 'sudo,docker,redis,adm' '$6$" in users and SECRETS["switch_password"] not in users
    db = json.loads((deploy / "frontend/fe-leaf01/config_db.json").read_text())
    assert db["TACPLUS"]["global"]["passkey"] == SECRETS["tacacs_key"]
    # a second run writes the same bytes (salts are the compiler's), and keeps the modes
    again = railyard("compile", DESIGNS / "h100-256.yaml", "--set", AAA, "-o", out, "--secrets", sf, "--deploy", deploy)
    assert again.returncode == 0 and tree_text(deploy) == deployed
    assert stat.S_IMODE((deploy / "frontend/fe-leaf01/frr.conf").stat().st_mode) == 0o600
    # --json says what it wrote, and no value either
    j = railyard(
        "compile", DESIGNS / "h100-256.yaml", "--set", AAA, "-o", out, "--secrets", sf, "--deploy", deploy, "--json"
    )
    assert j.returncode == 0
    no_value_in(j.stdout + j.stderr, "compile --json")
    assert json.loads(j.stdout)["deploy"] == {
        "dir": str(deploy),
        "files": len(compiled) - 1,
        "with_secrets": len(holding),
    }


@pytest.mark.parametrize(
    ("change", "says"),
    [
        # a value one OS or another would read as syntax: named by its key and the rule, never echoed
        (lambda v: {**v, "bgp_password": "Bgp:has@syntax#1"}, "bgp_password: must be 8-64 letters"),
        (lambda v: {**v, "tacacs_key": "short"}, "tacacs_key: must be 8-64 letters"),
        # a secret the files need and the file lacks: every one named, with its config key
        (lambda v: {k: x for k, x in v.items() if k not in ("bgp_password", "tacacs_key")}, "railyard:bgpPassword"),
        # not YAML: only the line is said (YAML's own message would quote the text)
        (lambda v: {**v, "switch_password": "Sw-leak-check-1a2b3c: [oops"}, "line 1 is not YAML"),
        (lambda v: {**v, "Bad Name": "Whatever-12345"}, "a key is not a secret name"),
    ],
)
def test_a_failing_compile_prints_no_value_and_writes_nothing(tmp_path: Path, change, says: str) -> None:
    out, deploy = tmp_path / "out", tmp_path / "deploy"
    values = change(dict(SECRETS))
    sf = tmp_path / "secrets.yaml"
    sf.write_text("".join(f"{k}: {v}\n" for k, v in values.items()))
    sf.chmod(0o600)
    r = railyard("compile", DESIGNS / "h100-256.yaml", "--set", AAA, "-o", out, "--secrets", sf, "--deploy", deploy)
    assert r.returncode == 2, r.stdout + r.stderr
    assert says in r.stderr, r.stderr
    no_value_in(r.stdout + r.stderr, "the error", {**SECRETS, **values})
    assert "Traceback" not in r.stderr
    assert not out.exists() and not deploy.exists(), "nothing half-written"


def test_the_secrets_file_must_be_its_owners_and_go_with_deploy(tmp_path: Path) -> None:
    sf = secrets_file(tmp_path / "secrets.yaml", SECRETS, mode=0o644)
    r = railyard(
        "compile", DESIGNS / "h100-256.yaml", "-o", tmp_path / "o", "--secrets", sf, "--deploy", tmp_path / "d"
    )
    assert r.returncode == 2 and "readable by others (mode 0644)" in r.stderr and f"chmod 600 {sf}" in r.stderr
    no_value_in(r.stdout + r.stderr, "the error")
    sf.chmod(0o600)
    r = railyard("compile", DESIGNS / "h100-256.yaml", "-o", tmp_path / "o", "--secrets", sf)
    assert r.returncode == 2 and "--secrets needs --deploy" in r.stderr
    r = railyard("compile", DESIGNS / "h100-256.yaml", "-o", tmp_path / "o", "--deploy", tmp_path / "d")
    assert r.returncode == 2 and "--deploy needs --secrets" in r.stderr
    r = railyard(
        "compile", DESIGNS / "h100-256.yaml", "-o", tmp_path / "o", "--secrets", sf, "--deploy", tmp_path / "o"
    )
    assert r.returncode == 2 and "--deploy: is the --out folder" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "d").exists()
    assert os.stat(sf).st_mode & 0o777 == 0o600
