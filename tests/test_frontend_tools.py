"""The generated frontend and out-of-band configs against the real tools: FRR's vtysh, Kea, and a
live BGP fabric of FRR instances in network namespaces wired exactly as the plan cables it."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from generators.model.plan import Plan
from generators.model.secrets import fill, placeholder
from tests.conftest import COMPILED_EXAMPLES, rendered_files
from tests.netns_fabric import frr_fabric, md5_failures, wait_until
from tests.pulumi_engine import SITE_SECRETS
from tests.realtools import frr_check, kea_check, require

pytestmark = pytest.mark.daemons

DONE_WHEN = ["h100-1024-reference", "h100-1024-optimized", "h100-256"]
# issue 41's systems: their SONiC frontend and OOB configs through the same tools
NEXT_SYSTEMS = ["vr-nvl72-576", "vr-nvl72-1152", "mi355x-1024-roce", "helios-576", "vru-kyber-800vdc-1152"]


def files_of(compiled: Callable[..., Plan], name: str) -> dict[str, str]:
    return rendered_files(compiled, name)


@pytest.mark.parametrize("name", DONE_WHEN + NEXT_SYSTEMS)
def test_every_frr_conf_passes_vtysh(compiled: Callable[..., Plan], name: str, tmp_path: Path) -> None:
    files = files_of(compiled, name)
    # the frontend's and OOB's (a SONiC RoCE backend's own are tests/test_roce.py's)
    confs = sorted(p for p in files if p.endswith("frr.conf") and p.split("/")[0] in ("frontend", "oob"))
    plan = compiled(name)
    sonic_switches = [
        d.name
        for d in plan.devices
        if d.kind == "switch" and d.network in ("frontend", "oob") and plan.catalog.switches[d.model].os == "sonic"
    ]
    assert len(confs) == len(sonic_switches)  # every SONiC switch of both networks has one
    for rel in confs:
        path = tmp_path / rel.replace("/", "_")
        path.write_text(files[rel])
        ok, out = frr_check(path)
        assert ok, f"{rel}: {out}"


@pytest.mark.parametrize("name", COMPILED_EXAMPLES)
def test_every_shipped_frr_conf_passes_vtysh_as_deployed(
    compiled: Callable[..., Plan], name: str, tmp_path: Path
) -> None:
    """Issue 38: every frr.conf of every shipped design (frontend, OOB aggregation and access, RoCE
    backend: every SONiC switch) with its BGP password filled as a deployment fills it, through FRR's own
    parser (vtysh -C); each one authenticates its sessions."""
    files = files_of(compiled, name)
    plan = compiled(name)
    sonic = {
        d.name
        for d in plan.devices
        if d.kind == "switch"
        and d.network in ("frontend", "backend", "oob")
        and plan.catalog.switches[d.model].os == "sonic"
    }
    confs = sorted(p for p in files if p.endswith("/frr.conf"))
    assert {p.split("/")[1] for p in confs} == sonic and len(confs) == len(sonic)
    for rel in confs:
        text = fill(files[rel], SITE_SECRETS, rel)
        assert f" password {SITE_SECRETS['bgp_password']}\n" in text, rel
        path = tmp_path / rel.replace("/", "_")
        path.write_text(text)
        ok, out = frr_check(path)
        assert ok, f"{rel}: {out}"


def test_a_broken_frr_conf_fails_vtysh(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    text = files_of(compiled, "h100-256")["frontend/fe-leaf01/frr.conf"]
    bad = tmp_path / "frr.conf"
    lines = text.splitlines()
    n = next(i for i, ln in enumerate(lines) if ln == " neighbor FABRIC remote-as external")
    lines[n] = " neighbor FABRIC remote-as externall"
    bad.write_text("\n".join(lines) + "\n")
    ok, out = frr_check(bad)
    assert not ok
    assert f"line {n + 1}: % Unknown command" in out


@pytest.mark.parametrize("name", DONE_WHEN + NEXT_SYSTEMS)
def test_kea_accepts_the_generated_config(compiled: Callable[..., Plan], name: str, tmp_path: Path) -> None:
    text = files_of(compiled, name)["oob/kea-dhcp4.conf"]
    conf = tmp_path / "kea-dhcp4.conf"
    conf.write_text(text)
    ok, out = kea_check(conf)
    assert ok, out
    doc = json.loads(text)["Dhcp4"]
    n = sum(len(s["reservations"]) for s in doc["subnet4"])
    assert n == len(compiled(name).netplan.oob["ports"])
    # the same port planned twice would hand two BMCs one address: Kea must refuse that file
    sub = next(s for s in doc["subnet4"] if len(s["reservations"]) >= 2)
    sub["reservations"][1]["ip-address"] = sub["reservations"][0]["ip-address"]
    dup = tmp_path / "dup.conf"
    dup.write_text(json.dumps({"Dhcp4": doc}))
    ok, out = kea_check(dup)
    assert not ok
    assert "There's already a reservation for this address" in out


def test_h100_256_frontend_runs_in_namespaces(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    """One namespace per frontend switch, a veth per cabled leaf-spine link named as the config names
    the ports, FRR per namespace on the generated frr.conf: every session Established (IPv4 and
    EVPN), every loopback reachable from every leaf; all torn down afterwards."""
    require("ip")
    plan = compiled("h100-256")
    files = files_of(compiled, "h100-256")
    fe = sorted(d.name for d in plan.devices if d.kind == "switch" and d.network == "frontend")
    # as deployed: the BGP session password filled in (every session is TCP-MD5 authenticated)
    configs = {n: fill(files[f"frontend/{n}/frr.conf"], SITE_SECRETS) for n in fe}
    links = [
        (lk.a_device, lk.a_port, lk.b_device, lk.b_port)
        for lk in plan.links
        if lk.network == "frontend" and lk.a_device in configs and lk.b_device in configs
    ]
    assert len(links) == 128
    lo = {n: a.split("/")[0] for n, a in plan.netplan.loopbacks.items() if n in configs}
    leaves = [n for n in fe if n.startswith("fe-leaf")]
    expected = {n: sum(n in (a, b) for a, _, b, _ in links) for n in fe}
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    with frr_fabric(configs, links, tmp_path / "fabric") as fab:
        timings["setup"] = fab.setup_seconds
        netns = [sw.netns for sw in fab.switches.values()]

        def all_established(afi: str) -> bool:
            for n in fe:
                st = fab.bgp_peers(n, afi)
                if len(st) != expected[n] or set(st.values()) != {"Established"}:
                    return False
            return True

        ok = wait_until(lambda: all_established("ipv4"), timeout=120)
        timings["ipv4_established"] = time.monotonic() - t0
        assert ok, {n: fab.bgp_peers(n) for n in fe}
        assert wait_until(lambda: all_established("evpn"), timeout=60), {n: fab.bgp_peers(n, "evpn") for n in fe}
        timings["evpn_established"] = time.monotonic() - t0

        def routes_in(n: str) -> bool:
            sw = fab.switches[n]
            table = sw.vtysh_json("show ip route json")
            return all(f"{lo[o]}/32" in table for o in fe if o != n)

        assert wait_until(lambda: all(routes_in(n) for n in leaves), timeout=60)

        # ECMP across every parallel uplink: a leaf reaches a spine loopback over its 16 links to it. The
        # route is there as soon as one session carries it and gains a next hop per session as they
        # converge: wait until zebra shows all 16 active (a single read saw fewer on a busy machine)
        def active_hops() -> int:
            routes = fab.switches["fe-leaf01"].vtysh_json(f"show ip route {lo['fe-spine01']}/32 json")
            entries = routes.get(f"{lo['fe-spine01']}/32", [])
            return len([h for h in entries[0]["nexthops"] if h.get("active")]) if entries else 0

        assert wait_until(lambda: active_hops() == 16, timeout=60), f"{active_hops()} active next hops, not 16"
        failed = []
        for a in leaves:
            for b in fe:
                if a != b and not wait_until(
                    lambda a=a, b=b: fab.switches[a].ping(lo[a], lo[b]), timeout=10, interval=0.5
                ):
                    failed.append(f"{a} -> {b}")
        assert not failed, failed
        timings["reachable"] = time.monotonic() - t0
    timings["torn_down"] = time.monotonic() - t0
    listed = subprocess.run([require("ip"), "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert not [ns for ns in netns if ns in listed], "namespaces left behind"
    print("namespace fabric timings (s):", {k: round(v, 1) for k, v in timings.items()})


def test_bgp_sessions_are_authenticated_and_a_wrong_password_is_refused(
    compiled: Callable[..., Plan], tmp_path: Path
) -> None:
    """Three switches of h100-256's frontend from railyard's frr.conf with the password placeholder
    filled as a deployment fills it: fe-leaf01 and fe-spine01 with the stack's BGP password, fe-leaf02
    with another. The kernel's TCP-MD5 (RFC 2385) check lets leaf01's sessions up and keeps every one of
    leaf02's down, while its links and FRR are up (it is the password alone), and FRR shows the key
    configured on the sessions that came up."""
    require("ip")
    plan = compiled("h100-256")
    files = files_of(compiled, "h100-256")
    good = dict(SITE_SECRETS)
    wrong = {**SITE_SECRETS, "bgp_password": "Not-the-bgp-key-77"}
    for n in ("fe-leaf01", "fe-leaf02", "fe-spine01"):
        assert f"neighbor FABRIC password {placeholder('bgp_password')}" in files[f"frontend/{n}/frr.conf"]
    configs = {
        "fe-leaf01": fill(files["frontend/fe-leaf01/frr.conf"], good),
        "fe-spine01": fill(files["frontend/fe-spine01/frr.conf"], good),
        "fe-leaf02": fill(files["frontend/fe-leaf02/frr.conf"], wrong),
    }
    links = [
        (lk.a_device, lk.a_port, lk.b_device, lk.b_port)
        for lk in plan.links
        if lk.network == "frontend" and lk.a_device in configs and lk.b_device in configs
    ]
    per_leaf = {leaf: [lk for lk in links if leaf in (lk[0], lk[2])] for leaf in ("fe-leaf01", "fe-leaf02")}
    assert all(per_leaf.values())
    with frr_fabric(configs, links, tmp_path / "fabric") as fab:

        def up(leaf: str) -> list[str]:
            return [p for p, st in fab.bgp_peers(leaf).items() if st == "Established"]

        wired = {leaf: {lk[1] if lk[0] == leaf else lk[3] for lk in per_leaf[leaf]} for leaf in per_leaf}
        assert wait_until(lambda: set(up("fe-leaf01")) == wired["fe-leaf01"], timeout=120), fab.bgp_peers("fe-leaf01")
        # leaf02 tried as long: the kernels of both ends report segments dropped for a bad TCP-MD5 signature
        # (what refuses the wrong key, RFC 2385), and not one of its sessions is up
        ends = (fab.switches["fe-leaf02"].netns, fab.switches["fe-spine01"].netns)
        assert wait_until(lambda: all(md5_failures(ns) > 0 for ns in ends), timeout=120), [
            md5_failures(ns) for ns in ends
        ]
        assert up("fe-leaf02") == [], fab.bgp_peers("fe-leaf02")
        port = sorted(wired["fe-leaf01"])[0]
        doc = fab.switches["fe-leaf01"].vtysh_json(f"show bgp neighbors {port} json")
        text = json.dumps(doc)
        assert SITE_SECRETS["bgp_password"] not in text, "FRR shows that a key is set, never the key"
        running = fab.switches["fe-leaf01"].vtysh("show running-config")
        assert f"neighbor FABRIC password {SITE_SECRETS['bgp_password']}" in running
        # FRR on leaf02 knows every one of its peers (the links and router advertisements work) and keeps
        # trying them: only the authentication fails
        assert wired["fe-leaf02"] <= set(fab.bgp_peers("fe-leaf02"))
