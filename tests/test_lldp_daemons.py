"""`railyard verify --lldp` on real lldpd output: h100-256's frontend and out-of-band switches as network
namespaces wired by veths exactly as the plan cables them (switch management ports as eth0, as SONiC
names them), Debian's lldpd in each, two cables swapped and one missing in the wiring; the tables
`lldpctl -f json0` prints must give exactly those three faults, with rack, unit and label."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.model.plan import Plan
from tests.conftest import DESIGNS
from tests.lldpfaults import drop, os_name, swap, wiring_of
from tests.netns_fabric import live_processes, lldp_fabric, lldpctl_json0, wait_until
from tests.realtools import require

pytestmark = pytest.mark.daemons


def test_verify_lldp_on_real_lldpd_finds_two_swapped_and_one_missing(
    compiled: Callable[..., Plan], cli: Callable[..., Any], tmp_path: Path
) -> None:
    plan = compiled("h100-256")
    idx = plan.index()
    switches = sorted(d.name for d in plan.devices if d.kind == "switch" and d.network in ("frontend", "oob"))
    w = wiring_of(plan, ["frontend", "oob"])
    # only switch-to-switch cables exist in the namespaces: the servers' links have no table at either
    # end and must come out as not covered, never as missing
    w = {a: b for a, b in w.items() if a[0] in switches and b[0] in switches}
    ups = sorted(e for e in w if e[0] == "fe-leaf02" and w[e][0].startswith("fe-spine"))
    x, y = ups[0], next(e for e in ups if w[e][0] != w[ups[0]][0])
    planned_pair = {frozenset((x, w[x])), frozenset((y, w[y]))}
    gone = next(e for e in sorted(w) if e[0].startswith("oob-agg"))  # an access-agg uplink, pulled
    gone_link = frozenset((gone, w[gone]))
    swap(w, x, y)
    drop(w, gone)
    links = sorted({tuple(sorted((a, b))) for a, b in w.items()})
    wires = [(a[0], os_name(plan, a), b[0], os_name(plan, b)) for a, b in links]
    expect = {d: sum(1 for e in w if e[0] == d) for d in switches}
    t0 = time.monotonic()
    with lldp_fabric(switches, wires) as nodes:

        def heard(d: str) -> int:
            doc = json.loads(lldpctl_json0(nodes[d]))
            return sum(len(b.get("interface", [])) for b in doc["lldp"])

        ok = wait_until(lambda: all(heard(d) == expect[d] for d in switches), timeout=90, interval=2)
        assert ok, {d: (heard(d), expect[d]) for d in switches}
        files = []
        for d in switches:
            f = tmp_path / f"{d}.json"
            f.write_text(lldpctl_json0(nodes[d]))
            files += ["--lldp", f]
        netns = [n.netns for n in nodes.values()]
        sockets = [n.socket for n in nodes.values()]
    seconds = time.monotonic() - t0
    listed = subprocess.run([require("ip"), "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert not [ns for ns in netns if ns in listed], "namespaces left behind"
    assert not live_processes(str(sockets[0].parent)), "lldpd left running"

    r = cli("verify", DESIGNS / "h100-256.yaml", *files, "--json")
    assert r.exit_code == 1, r.output
    rep = json.loads(r.output)
    assert rep["faulty_links"] == 3 and not rep["extra"] and not rep["one_sided"] and not rep["unknown_nodes"]
    (s,) = rep["swapped"]
    (m,) = rep["missing"]

    def ends(lk: dict[str, Any]) -> frozenset[tuple[str, str]]:
        return frozenset(((lk["a"]["device"], lk["a"]["port"]), (lk["b"]["device"], lk["b"]["port"])))

    assert {ends(lk) for lk in s["planned"]} == planned_pair
    assert ends(m) == gone_link
    labels = {
        frozenset(((plan.links[k].a_device, plan.links[k].a_port), (plan.links[k].b_device, plan.links[k].b_port))): (
            c.id,
            label,
        )
        for c in plan.cables or []
        for k, label in zip(c.links, c.labels, strict=True)
    }
    for lk in (*s["planned"], m):
        assert (lk["cable_id"], lk["label"]) == labels[ends(lk)]
        for end in (lk["a"], lk["b"]):
            assert (end["rack"], end["unit"]) == (idx[end["device"]].rack, idx[end["device"]].unit)
    servers = sum(
        1
        for lk in plan.links
        if lk.network in ("frontend", "oob") and not (lk.a_device in switches and lk.b_device in switches)
    )
    assert rep["not_covered"] == servers
    text = cli("verify", DESIGNS / "h100-256.yaml", *files).output
    assert "1 swapped pair, 1 missing, 0 extra" in text and f"label {m['label']!r}" in text
    print(f"lldpd namespace fabric: {len(switches)} switches, {len(links)} cables, {seconds:.1f} s")
