"""Property: any small mutation of a shipped design either compiles with every invariant holding
(recomputed here from plan.json alone, not with railyard's own checks) or exits 2 with a message that
names a design field. Never a traceback, never exit 70, never "this is a railyard bug".

Bounded for CI: 40 examples on h100-256 (10-20 s on 2 cores), derandomized so a failure reproduces.
"""

from __future__ import annotations

import json
import re
import tempfile
from fractions import Fraction
from pathlib import Path

import networkx as nx
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from generators.cli import app
from generators.model.design import Design
from tests.conftest import DESIGNS

BASE = DESIGNS / "h100-256.yaml"
FIELDS = set(Design.model_fields)

junk = st.sampled_from(["x", "-1", "0", "[1, 2]", "{a: 1}", ".inf", ".nan", "''", "null", "1e400", "2:1", "true"])


def mostly(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Three parts sound values (so some compile), one part junk."""
    return st.one_of(valid, valid, valid, junk)


VALUES: dict[str, st.SearchStrategy[str]] = {
    "compute.count": mostly(st.sampled_from(["8", "16", "24", "32", "48", "64", "96", "128", "250"])),
    "backend.oversubscription": mostly(st.sampled_from(["1:1", "2:1", "3:1", "4:1", "1.5:1", "'2:1'"])),
    "backend.rails": mostly(st.sampled_from(["4", "8", "8", "9"])),
    "backend.su_size": mostly(st.sampled_from(["8", "16", "32", "64"])),
    "backend.topology": st.sampled_from(["rail_optimized", "top_of_rack", "mesh"]),
    "backend.placement": st.sampled_from(["dedicated_racks", "virtual_modular_switch", "top_of_rack", "x"]),
    "frontend.ports_per_server": mostly(st.sampled_from(["1", "2", "3"])),
    "frontend.speed": st.sampled_from(["100G", "200G", "400G", "7G", "0G"]),
    "frontend.oversubscription": st.sampled_from(["1:1", "2:1", "3:1", "5:1"]),
    "storage.count": mostly(st.integers(0, 24).map(str)),
    "storage.capacity_pb": mostly(st.floats(0.01, 50).map(repr)),
    "storage.ports_per_server": mostly(st.sampled_from(["1", "2", "3"])),
    "management.backend_attached": mostly(st.integers(0, 4).map(str)),
    "site.rack.power_kw": mostly(st.floats(5, 120).map(repr)),
    "oob.racks_per_switch": mostly(st.integers(1, 6).map(str)),
    "cabling.max_copper_m": mostly(st.floats(0.5, 10).map(repr)),
    "tenants": st.sampled_from(["[]", "[{name: a, servers: ['gpu[001-040]']}]", "[{name: A}]"]),
    "compute.cuont": st.just("3"),  # a misspelt key
}
overrides = st.lists(st.sampled_from(sorted(VALUES)), min_size=1, max_size=2, unique=True).flatmap(
    lambda keys: st.tuples(*(VALUES[k].map(lambda v, k=k: f"{k}={v}") for k in keys))
)
as_yaml = st.booleans()  # the same overrides as --set, or written into a design that extends the base


def ratio(text: str) -> Fraction:
    down, up = text.split(":")
    return Fraction(down) / Fraction(up)


def not_json(constant: str) -> None:
    raise AssertionError(f"plan.json holds {constant}, which is not JSON")


def check_invariants(plan: dict) -> None:
    """Every fabric invariant railyard promises, recomputed from plan.json."""
    devices = {d["name"]: d for d in plan["devices"]}
    assert len(devices) == len(plan["devices"]), "device names repeat"
    catalog = plan["catalog"]
    used: dict[tuple[str, str], int] = {}
    per_switch: dict[str, int] = {}
    for lk in plan["links"]:
        for e in ("a", "b"):
            end = (lk[e]["device"], lk[e]["port"])
            assert end[0] in devices, f"link to unknown device {end[0]}"
            used[end] = used.get(end, 0) + 1
            dev = devices[end[0]]
            if dev["kind"] == "switch" and end[1] != catalog["switches"][dev["model"]].get("mgmt_port"):
                per_switch[end[0]] = per_switch.get(end[0], 0) + 1
                groups = catalog["switches"][dev["model"]]["port_groups"]
                speeds = {g["speed_gbps"] for g in groups} | {s for g in groups for s in g.get("speeds_gbps", [])}
                assert lk["speed_gbps"] in speeds, f"{end} runs {lk['speed_gbps']}G"
    twice = [e for e, n in used.items() if n > 1]
    assert not twice, f"ports used twice: {twice[:3]}"
    for name, n in per_switch.items():
        ports = sum(g["count"] for g in catalog["switches"][devices[name]["model"]]["port_groups"])
        assert n <= ports, f"{name} uses {n} of {ports} ports"
    be = plan["networks"]["backend"]
    servers = [d for d in devices.values() if d["kind"] == "server"]
    backend = [lk for lk in plan["links"] if lk["network"] == "backend"]
    nics: dict[str, set[str]] = {s["name"]: set() for s in servers}
    for lk in backend:
        for e in ("a", "b"):
            if lk[e]["device"] in nics:
                nics[lk[e]["device"]].add(lk[e]["port"])
    assert all(len(p) == be["rails"] for p in nics.values()), "a server's NICs are not each connected once"
    g = nx.Graph()
    g.add_edges_from((lk["a"]["device"], lk["b"]["device"]) for lk in backend)
    assert nx.is_connected(g), "the backend is not connected"
    if be["topology"] == "rail_optimized":
        for leaf in (n for n, d in devices.items() if d.get("network") == "backend" and d.get("role") == "leaf"):
            rails = {
                lk["a"]["port"]
                for lk in backend
                if lk["b"]["device"] == leaf and devices[lk["a"]["device"]]["kind"] == "server"
            }
            assert len(rails) <= 1, f"{leaf} mixes rails {rails}"
    for net, exact in (("backend", True), ("frontend", False)):
        want = ratio(plan["networks"][net]["oversubscription"]["requested"])
        for leaf, d in devices.items():
            if d.get("network") != net or d.get("role") != "leaf":
                continue
            # backend: GPU servers' bandwidth (subnet-manager ports carry no job traffic); frontend: all
            down = sum(
                lk["speed_gbps"]
                for lk in plan["links"]
                if lk["network"] == net
                and lk["tier"] == "server-leaf"
                and leaf in (lk["a"]["device"], lk["b"]["device"])
                and (not exact or devices[lk["a"]["device"]]["kind"] == "server")
            )
            up = sum(
                lk["speed_gbps"]
                for lk in plan["links"]
                if lk["network"] == net
                and lk["tier"] == "leaf-spine"
                and leaf in (lk["a"]["device"], lk["b"]["device"])
            )
            if down and up:
                assert Fraction(down, up) <= want, f"{leaf}: {down}/{up} above {want}"


FIELD_LINE = re.compile(r"(?:^|: )([a-z_]+)(?:\.[\w<>-]+)*: ")


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(sets=overrides, in_yaml=as_yaml)
def test_mutated_design_compiles_soundly_or_names_a_field(sets: tuple[str, ...], in_yaml: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        args = ["compile", "-q", "--out", str(out)]
        if in_yaml:
            child = Path(tmp) / "child.yaml"
            child.write_text(f"extends: {BASE}\n" + child_yaml(sets))
            args.append(str(child))
        else:
            args.append(str(BASE))
            for s in sets:
                args += ["--set", s]
        r = CliRunner().invoke(app, args, catch_exceptions=False)
        event(f"exit {r.exit_code}")
        err = r.stderr
        assert "Traceback" not in r.output + err and "railyard bug" not in err, err
        assert r.exit_code in (0, 2), (r.exit_code, err)
        if r.exit_code == 0:
            check_invariants(json.loads((out / "plan.json").read_text(), parse_constant=not_json))
        else:
            named = [
                m.group(1)
                for line in err.splitlines()
                if not line.startswith((" ", "error:"))
                for m in [FIELD_LINE.search(line)]
                if m
            ]
            assert named and all(f in FIELDS for f in named), err
            assert not out.exists(), "a refused compile wrote output"


def child_yaml(sets: tuple[str, ...]) -> str:
    """The overrides as the YAML a user would write into a design that extends the base."""
    tree: dict = {}
    for item in sets:
        key, value = item.split("=", 1)
        *head, last = key.split(".")
        node = tree
        for part in head:
            node = node.setdefault(part, {})
        node[last] = value

    def emit(node: dict, depth: int) -> list[str]:
        lines = []
        for k, v in node.items():
            if isinstance(v, dict):
                lines += [f"{'  ' * depth}{k}:", *emit(v, depth + 1)]
            else:
                lines.append(f"{'  ' * depth}{k}: {v}")
        return lines

    return "\n".join(emit(tree, 0)) + "\n"
