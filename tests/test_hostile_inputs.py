"""Hostile and broken inputs: every one is refused with exit 2 and a message naming the field or file
(and YAML line), or works; none ends in a traceback, data loss or a runaway process."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DESIGNS, EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_single_homed_servers_compile(cli, tmp_path, name):
    # dual-homed storage under single-homed servers once put two links on one leaf port
    r = cli("compile", DESIGNS / f"{name}.yaml", "--set", "frontend.ports_per_server=1", "--out", tmp_path / "o",
            "-q")
    assert r.exit_code == 0, r.stderr
    plan = json.loads((tmp_path / "o" / "plan.json").read_text())
    used = [(lk[e]["device"], lk[e]["port"]) for lk in plan["links"] for e in ("a", "b")]
    assert len(used) == len(set(used))
    servers = {d["name"] for d in plan["devices"] if d["kind"] == "server"}
    fe = [lk for lk in plan["links"] if lk["network"] == "frontend" and lk["a"]["device"] in servers]
    assert len(fe) == len(servers)
