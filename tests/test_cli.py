"""The command line: errors name the field and YAML line, exit 2, write nothing; output is deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import DESIGNS

REF = DESIGNS / "h100-1024-reference.yaml"


def test_compile_writes_plan_and_summary(cli, tmp_path):
    r = cli("compile", REF, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "leaf-spine" in r.output and "1,024" in r.output
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert plan["schema"] == "railyard.plan/1"
    dev = plan["devices"][0]
    assert {"name", "kind", "role"} <= set(dev)
    sw = next(d for d in plan["devices"] if d["kind"] == "switch")
    assert sw["network"] in ("backend", "frontend", "oob")
    lk = plan["links"][0]
    assert {"network", "tier", "speed_gbps", "a", "b"} <= set(lk)
    assert set(lk["a"]) == {"device", "port"}


def test_compile_is_byte_identical(cli, tmp_path):
    for d in ("a", "b"):
        assert cli("compile", REF, "--out", tmp_path / d, "-q").exit_code == 0
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_recompile_keeps_a_file_the_user_added(cli, tmp_path):
    # railyard deletes only what its manifest says it wrote (tests/test_output_folder.py has the rest)
    out = tmp_path / "out"
    assert cli("compile", REF, "--out", out, "-q").exit_code == 0
    (out / "notes.txt").write_text("mine")
    assert cli("compile", REF, "--out", out, "-q").exit_code == 0
    assert (out / "notes.txt").read_text() == "mine"


def test_refuses_to_overwrite_foreign_directory(cli, tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    r = cli("compile", REF, "--out", tmp_path)
    assert r.exit_code == 2
    assert (tmp_path / "mine.txt").read_text() == "keep me"


# Each fabric invariant, broken by a design, must name the field, exit 2 and write nothing.
BROKEN = [
    pytest.param(
        ["tenants=[]", "backend.su_size=64"],
        "backend.su_size",
        "needs more ports than its model QM9700",
        id="port-count",
    ),
    pytest.param(["backend.oversubscription=3:1"], "backend.oversubscription", "measure 2.91:1", id="ratio"),
    pytest.param(["backend.rails=4"], "backend.rails", "mlx5_4 is connected 0 times", id="nic-once"),
    pytest.param(
        ["management.backend_attached=2"], "management.backend_attached", "is used by 2 links", id="port-twice"
    ),
    pytest.param(["storage.speed=200G"], "storage.speed", "cannot run 200G", id="speed-both-ends"),
]


@pytest.mark.parametrize(("sets", "field", "text"), BROKEN)
def test_invariant_violations_name_the_field(cli, tmp_path, sets, field, text):
    design = DESIGNS / ("h100-1024-optimized.yaml" if "storage.speed=200G" in sets else "h100-1024-reference.yaml")
    args = ["compile", design, "--out", tmp_path / "out"]
    for s in sets:
        args += ["--set", s]
    r = cli(*args)
    assert r.exit_code == 2
    assert f"{field}: " in r.stderr and text in r.stderr
    assert "--set" in r.stderr  # where the bad value came from
    assert "Traceback" not in r.output + r.stderr
    assert not (tmp_path / "out").exists()


def _design(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "d.yaml"
    p.write_text(text)
    return p


def test_yaml_line_of_bad_value(cli, tmp_path):
    p = _design(tmp_path, "name: x\ncompute:\n  count: 64\nbackend:\n  oversubscription: fast\n")
    r = cli("validate", p)
    assert r.exit_code == 2
    assert "d.yaml:5: backend.oversubscription" in r.stderr
    assert "ratio" in r.stderr


def test_unknown_field_is_named_with_line(cli, tmp_path):
    p = _design(tmp_path, "name: x\ncompute:\n  count: 64\n  gpus_per_server: 8\n")
    r = cli("validate", p)
    assert r.exit_code == 2
    assert "d.yaml:4: compute.gpus_per_server: unknown field" in r.stderr


def test_unquoted_ratio_is_not_base_60(cli, tmp_path):
    # YAML 1.1 reads 2:1 as 121; railyard reads it as the ratio it looks like
    p = _design(
        tmp_path, "name: x\ncompute: {count: 64}\nbackend: {oversubscription: 2:1}\nmanagement: {backend_attached: 0}\n"
    )
    r = cli("validate", p)
    assert r.exit_code == 0, r.stderr


def test_extends_reports_the_line_in_the_file_that_set_it(cli, tmp_path):
    (tmp_path / "base.yaml").write_text("name: base\ncompute: {count: 64}\n")
    child = _design(tmp_path, "extends: base.yaml\nname: child\ncompute:\n  count: 70\n")
    r = cli("validate", child)
    assert r.exit_code == 2
    assert "d.yaml:4: compute.count" in r.stderr
    assert "scalable units" in r.stderr


def test_circular_extends(cli, tmp_path):
    (tmp_path / "a.yaml").write_text("extends: b.yaml\nname: a\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\nname: b\n")
    r = cli("validate", tmp_path / "a.yaml")
    assert r.exit_code == 2 and "circular extends" in r.stderr


def test_tenant_sharing_a_server_is_refused(cli):
    r = cli(
        "validate", REF, "--set", "tenants=[{name: a, servers: ['gpu[001-010]']}, {name: b, servers: ['gpu[010-020]']}]"
    )
    assert r.exit_code == 2
    assert "gpu010 is rented by both 'a' and 'b'" in r.stderr


def test_unknown_catalog_part(cli):
    r = cli("validate", REF, "--set", "backend.switch=QM9999")
    assert r.exit_code == 2
    assert "backend.switch: unknown switch model 'QM9999'" in r.stderr and "QM9700" in r.stderr


def test_schema_is_json_schema(cli):
    r = cli("schema")
    assert r.exit_code == 0
    schema = json.loads(r.stdout)
    assert "compute" in schema["properties"]
    assert schema["definitions"]["Backend"]["properties"]["topology"]["enum"] == ["rail_optimized", "top_of_rack"]


def test_set_overrides_for_what_if(cli, tmp_path):
    r = cli("compile", REF, "--out", tmp_path / "o", "--set", "backend.oversubscription=2:1", "-q")
    assert r.exit_code == 0
    plan = json.loads((tmp_path / "o" / "plan.json").read_text())
    assert plan["networks"]["backend"]["spines"] == 8
