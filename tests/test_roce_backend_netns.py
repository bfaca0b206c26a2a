"""h100-512-roce's RoCE backend for real: the generated backend config_db.json translated into
loopbacks, tenant VRFs, L3VNI bridges/VXLAN devices and routed /31 server ports in network namespaces
(tests/netns_dataplane.py), the generated frr.conf applied as is, and hosts as namespaces whose NICs are
configured from their generated netplan.yaml; then BGP, EVPN type-5 routes, rail-local paths, cross-rail
routing inside a tenant, tenant isolation and the leaves' refusal to be transit are checked.

Sampled to stay bounded on two cores: the tenants are one scalable unit each (acme su1, globex su2), so
isolation needs both units' leaves; rails 0 and 1 only (su1-rail0/1-leaf, su2-rail0/1-leaf), all four
spines (shared by every rail: each leaf has 8 links to each) and every cabled link among them
(4 x 4 x 8 = 128); ~25 s here. Hosts: the first two servers of each tenant, their NICs of rails 0 and 1
(the other rails' leaves are not sampled). What the design promises and is checked:
- same rail, same tenant: one leaf (a unit's rail-r NICs all end on its rail-r leaf), the host sends from
  NIC r via NIC r's leaf and the leaf delivers on a connected /31: the path never meets a spine;
- another rail, same tenant: the host still sends from NIC r out NIC r (its netplan's table r), the
  leaf's tenant VRF routes it to the other rail's leaf (type-5, VXLAN) over the spines;
- another tenant: no answer, and no route in the VRF (FRR and kernel) nor in the underlay.
The lossless QoS tables are not exercised (veths have no PFC): see tests/netns_dataplane.py.

FRR 8.4's zebra (Debian 12) can drop a remote VTEP's router MAC during convergence while keeping its
routes (FRRouting/frr#12391, see netns_fabric.reimport_type5): the test checks every leaf's router MACs
once its routes are in and re-imports a leaf's type-5 routes when one is missing (a pytest warning says
so), up to three rounds, then fails. The bug struck in 16 of 48 runs beside two busy-looping processes;
before the repair, such a run failed its cross-rail ping (3 of 4 full-suite runs on 2026-12-03). The MACs
are checked once the underlay to every VTEP has all its paths, whose changes are what re-announces the
routes. So that the repair is proven in every run, not only when the bug strikes, one leaf always
re-imports its routes before the pings.

A route-target leak is found by the route checks, not the pings: the kernel encapsulates with its VXLAN
device's VNI, not the route's label, so a leaked route is black-holed here where an ASIC would forward
it (tried: su1-rail0-leaf importing globex's route target fails the VRF route check, pings stay silent).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from ipaddress import IPv4Interface
from pathlib import Path

import pytest
import yaml

from generators.model.plan import Plan
from generators.model.secrets import fill
from generators.model.sections import BackendPort
from tests import netns_dataplane as ndp
from tests.conftest import rendered_files
from tests.netns_fabric import (
    Fabric,
    Switch,
    evpn_routes,
    frr_fabric,
    live_processes,
    pings,
    remote_rmacs,
    repair_router_macs,
    run_in,
    transit,
    vrf_routes,
    wait_until,
)
from tests.pulumi_engine import SITE_SECRETS
from tests.realtools import require

pytestmark = pytest.mark.daemons

DESIGN = "h100-512-roce"
REIMPORTS = 3  # rounds of re-importing a leaf's type-5 routes before the test fails (see rmac_missing)
RAILS = (0, 1)
SPINES = ("spine01", "spine02", "spine03", "spine04")
PER_TENANT = 2


def _ip(iface: str) -> str:
    return iface.split("/")[0]


def _net(iface: str) -> str:
    return str(IPv4Interface(iface).network)


def route_get(netns: str, dst: str, src: str | None = None) -> dict[str, str] | None:
    """The kernel's choice for `dst` (from `src`): dev, gateway, ...; None when it has no route."""
    r = run_in(netns, ["ip", "-j", "route", "get", dst, *(["from", src] if src else [])], check=False)
    return json.loads(r.stdout)[0] if r.returncode == 0 else None


def l3vni_segment(dp: ndp.SwitchDataplane, vrf: str) -> ndp.Segment:
    """The VRF's L3VNI segment on a leaf (its bridge, VXLAN device and VNI)."""
    [seg] = [g for g in dp.segments.values() if g.vrf == vrf and g.vni is not None]
    return seg


def overlay_state(sw: Switch, dp: ndp.SwitchDataplane, vrf: str, far_vtep: str) -> str:
    """What the kernel of one leaf holds for a VRF's traffic to another VTEP, for a failure message: the
    underlay ping between the VTEPs, the L3VNI bridge's neighbours (the far VTEP's router MAC) and the
    VXLAN device's forwarding entries (router MAC -> VTEP)."""
    seg = l3vni_segment(dp, vrf)
    ns = sw.netns_of(vrf)
    under = ping_src(sw.netns, dp.vtep or "", far_vtep)
    neigh = run_in(ns, ["ip", "neigh", "show", "dev", seg.bridge], check=False).stdout.strip()
    fdb = run_in(ns, ["bridge", "fdb", "show", "dev", seg.vxlan], check=False).stdout.strip()
    # zebra's own view: whether it learned the far VTEP's router MAC (then the kernel lacks what it holds)
    rmac = " ".join(sw.vtysh(f"show evpn rmac vni {seg.vni}").split())
    return (
        f"{dp.name}: underlay ping to {far_vtep} {'ok' if under else 'FAILED'}; neigh [{neigh}]; fdb [{fdb}]; "
        f"zebra [{rmac}]"
    )


def ping_src(netns: str, src: str, dst: str) -> bool:
    r = run_in(netns, [require("ping"), "-n", "-q", "-c", "1", "-W", "1", "-I", src, dst], timeout=10, check=False)
    return r.returncode == 0


def test_h100_512_roce_backend_in_namespaces(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    require("ip")
    require("bridge")
    plan = compiled(DESIGN)
    files = rendered_files(compiled, DESIGN)
    bn = plan.backend_net
    assert bn is not None
    devs = plan.index()
    leaves = sorted(s.name for s in bn.switches if s.role == "leaf" and devs[s.name].attrs["rail"] in RAILS)
    sampled = (*leaves, *SPINES)
    # as deployed: every session authenticated with the stack's BGP password (TCP-MD5)
    configs = {n: fill(files[f"backend/{n}/frr.conf"], SITE_SECRETS) for n in sampled}
    dps = {n: ndp.from_config_db(n, json.loads(files[f"backend/{n}/config_db.json"])) for n in sampled}
    links = [
        (lk.a_device, lk.a_port, lk.b_device, lk.b_port)
        for lk in plan.links
        if lk.network == "backend" and lk.a_device in configs and lk.b_device in configs
    ]
    assert len(links) == len(leaves) * len(SPINES) * 8
    vrf_of = {s.name: s.vrfs for s in bn.switches}
    assert all(len(vrf_of[n]) == 1 for n in leaves), "a unit's leaves carry its one tenant here"
    tenants = sorted({vrf_of[n][0] for n in leaves})
    assert len(tenants) == 2, tenants

    # the sampled NICs: (host, leaf-side port record); the first PER_TENANT servers of each tenant
    server_ports: dict[str, list[BackendPort]] = {}
    for p in bn.ports:
        if not p.fabric and p.switch in leaves:
            server_ports.setdefault(p.peer, []).append(p)
    hosts: dict[str, str] = {}  # host -> tenant VRF
    for vrf in tenants:
        for h in sorted(h for h, ps in server_ports.items() if ps[0].vrf == vrf)[:PER_TENANT]:
            hosts[h] = vrf
    assert len(hosts) == PER_TENANT * len(tenants)
    nic: dict[tuple[str, int], BackendPort] = {
        (h, p.rail): p for h in hosts for p in server_ports[h] if p.rail is not None
    }
    assert set(nic) == {(h, r) for h in hosts for r in RAILS}
    netplan = {h: yaml.safe_load(files[f"hosts/{h}/netplan.yaml"]) for h in hosts}
    # the host side is named as its netplan names the NIC that holds the /31's odd address
    ifname = {
        (h, r): next(
            n for n, e in netplan[h]["network"]["ethernets"].items() if p.peer_address in e.get("addresses", [])
        )
        for (h, r), p in nic.items()
    }
    hostns: dict[str, str] = {}

    def dataplane(fab: Fabric) -> None:
        for n in leaves:
            ndp.build(fab.switches[n], dps[n])
        for h in hosts:
            hostns[h] = fab.add_netns(h)
            run_in(hostns[h], ["sysctl", "-qw", "net.ipv4.ip_forward=0"])  # a host never routes between rails
        for (h, r), p in sorted(nic.items()):
            assert ndp.attach(fab.switches[p.switch], dps[p.switch], p.port, hostns[h], ifname[(h, r)]) == [
                ifname[(h, r)]
            ]
        for h in hosts:
            ndp.apply_netplan(hostns[h], netplan[h], [ifname[(h, r)] for r in RAILS])

    t0 = time.monotonic()
    timings: dict[str, float] = {}
    with frr_fabric(
        configs, links, tmp_path / "fabric", vrfs={n: list(dps[n].vrfs) for n in leaves}, dataplane=dataplane
    ) as fab:
        timings["setup"] = fab.setup_seconds
        token = fab.token
        made = list(fab.created)
        wired = {n: sum(n in (a, b) for a, _, b, _ in links) for n in sampled}

        def not_established() -> dict[str, dict[str, int]]:
            out = {}
            for n in sampled:
                for afi in ("ipv4", "evpn"):
                    up = list(fab.bgp_peers(n, afi).values()).count("Established")
                    if up != wired[n]:
                        out.setdefault(n, {})[afi] = up
            return out

        assert wait_until(lambda: not not_established(), timeout=60), (not_established(), wired)
        timings["established"] = time.monotonic() - t0

        # type-5: every sampled NIC's /31, in its tenant's VRF on every sampled leaf of that tenant (from
        # the other leaves as EVPN prefix routes; the /31's own leaf has it connected)
        vtep = {n: dps[n].vtep for n in leaves}
        tenant_leaves = {v: [n for n in leaves if vrf_of[n] == [v]] for v in tenants}

        def prefix_missing() -> list[str]:
            missing = []
            for n in leaves:
                [vrf] = vrf_of[n]
                have = {
                    (r["prefix"], r["nexthops"][0]["ip"]) for r in evpn_routes(fab, n, "prefix") if r.get("nexthops")
                }
                routes = vrf_routes(fab, n, vrf)
                for (h, _), p in nic.items():
                    if hosts[h] != vrf:
                        continue
                    sub = _net(p.address)
                    if p.switch != n and (f"[5]:[0]:[31]:[{sub.split('/')[0]}]", vtep[p.switch]) not in have:
                        missing.append(f"{n}: no type-5 {sub} from {p.switch}")
                    if sub not in routes:
                        missing.append(f"{n}: {sub} not in {vrf}")
            return missing

        assert wait_until(lambda: not prefix_missing(), timeout=30), prefix_missing()
        assert all(len(ls) == len(RAILS) for ls in tenant_leaves.values())
        timings["routes"] = time.monotonic() - t0

        # the VTEPs' underlay: only over the leaf's uplinks, ECMP across every spine and every link to it
        # (maximum-paths 64: 4 spines x 8 links). Waited for before the router MACs are checked: a change in
        # the paths to a VTEP has bgpd re-announce that VTEP's type-5 routes, the churn in which FRR 8.4
        # drops a router MAC. The paths complete 0.4-5.5 s after the type-5 routes are in, and a run that
        # checked the MACs before then (all in) lost two during the pings; none has since, in 10 loaded runs
        spine_port = {(a, p): b for a, p, b, _ in links} | {(b, q): a for a, _, b, q in links}

        def vtep_hops(n: str, m: str) -> list[str]:
            doc = fab.switches[n].vtysh_json(f"show ip route {vtep[m]}/32 json")
            return [
                spine_port.get((n, x.get("interfaceName", "")), f"not an uplink: {x}")
                for e in doc.get(f"{vtep[m]}/32", [])
                for x in e["nexthops"]
                if x.get("active")
            ]

        def underlay_done(n: str, m: str) -> bool:
            hops = vtep_hops(n, m)
            return set(hops) == set(SPINES) and len(hops) == wired[n]

        for n in leaves:
            for m in (m for m in leaves if m != n and vrf_of[m] == vrf_of[n]):
                assert wait_until(lambda n=n, m=m: underlay_done(n, m), timeout=20), (
                    f"{n} -> {m}'s VTEP via {sorted(vtep_hops(n, m))} (want {wired[n]} paths over {SPINES})"
                )
        timings["underlay"] = time.monotonic() - t0

        # zebra must hold the router MAC of every other VTEP of the leaf's tenant (the kernel's neighbour
        # for the type-5 routes' onlink next hop). FRR 8.4 can lose one during convergence while keeping
        # the routes (a bug of FRR's, see reimport_type5): such a leaf re-imports its routes, told as a
        # warning. A re-import is itself a burst of route changes, and one did not bring every route and
        # router MAC back within 30 s (the probe's below, in 1 of 34 runs beside two busy loops): a leaf
        # still short re-imports again, up to REIMPORTS rounds; after that the test fails
        vni = {n: l3vni_segment(dps[n], vrf_of[n][0]).vni for n in leaves}

        def rmac_missing() -> dict[str, set[str]]:
            out = {}
            for n in leaves:
                want = {vtep[m] for m in tenant_leaves[vrf_of[n][0]] if m != n}
                if lost := want - remote_rmacs(fab, n, vni[n]):
                    out[n] = lost
            return out

        def short() -> dict[str, object]:
            out: dict[str, list[str]] = {
                n: [f"router MAC of {v}" for v in sorted(lost)] for n, lost in rmac_missing().items()
            }
            for m in prefix_missing():
                leaf, what = m.split(": ", 1)
                out.setdefault(leaf, []).append(what)
            return dict(out)

        # the repair runs in every run, not only when the bug strikes (16 of 48 loaded runs): leaves[0]
        # re-imports its type-5 routes (reimport_type5 fails unless zebra's VRF empties), every route and
        # router MAC must come back, and the pings below go through the re-imported state
        repair_router_macs(fab, lambda n: vrf_of[n][0], rmac_missing, short, leaves[0], REIMPORTS)
        timings["re-imported"] = time.monotonic() - t0

        for h, vrf in hosts.items():
            for o in (o for o in hosts if o != h and hosts[o] == vrf):
                for r in RAILS:
                    me, them = nic[(h, r)], nic[(o, r)]
                    src, dst = _ip(me.peer_address), _ip(them.peer_address)
                    # same rail: out NIC r to its own leaf, which holds the peer's /31 itself
                    got = route_get(hostns[h], dst, src)
                    assert got is not None and got["dev"] == ifname[(h, r)] and got.get("gateway") == _ip(me.address), (
                        f"{h} {src} -> {dst}: {got}"
                    )
                    assert me.switch == them.switch, "a unit's rail-r NICs share its rail-r leaf"
                    leaf = fab.switches[me.switch]
                    hop = route_get(leaf.netns_of(vrf), dst)
                    assert hop is not None and hop["dev"] == them.port and "gateway" not in hop, (
                        f"{me.switch} -> {dst}: {hop} (not its port {them.port} to {o})"
                    )
                    assert wait_until(lambda s=src, d=dst, h=h: ping_src(hostns[h], s, d), timeout=15, interval=0.5), (
                        f"{h} {src} -> {o} {dst} (rail {r})"
                    )
                    # another rail: still out NIC r (netplan's table r), then routed by the tenant's VRF to the
                    # other rail's leaf, over VXLAN, whose underlay path is the spines
                    s = next(x for x in RAILS if x != r)
                    far = nic[(o, s)]
                    fdst = _ip(far.peer_address)
                    got = route_get(hostns[h], fdst, src)
                    assert got is not None and got["dev"] == ifname[(h, r)], f"{h} {src} -> {fdst}: {got}"
                    fr = leaf.vtysh_json(f"show ip route vrf {vrf} {_net(far.address)} json")
                    hops = {x.get("ip") for e in fr.get(_net(far.address), []) for x in e["nexthops"]}
                    assert hops == {vtep[far.switch]}, f"{me.switch} {vrf} {_net(far.address)}: {hops}"
                    # bounded, but longer than on one leaf (15 s failed once in a full-suite run, before the
                    # underlay was waited for); a failure says both directions' state and each leaf's kernel
                    # and zebra view
                    back = fab.switches[far.switch]
                    assert wait_until(lambda s=src, d=fdst, h=h: ping_src(hostns[h], s, d), timeout=45, interval=0.5), (
                        f"{h} {src} -> {o} {fdst} (rail {r} -> {s}); underlay to "
                        f"{vtep[far.switch]}: {route_get(leaf.netns, vtep[far.switch])}"
                        f"; back from {far.switch}: underlay to {vtep[me.switch]}: "
                        f"{route_get(back.netns, vtep[me.switch])}, {vrf} to {src}: "
                        f"{route_get(back.netns_of(vrf), src)}; sessions not "
                        f"established: {not_established()}; "
                        f"{overlay_state(leaf, dps[me.switch], vrf, vtep[far.switch])}; "
                        f"{overlay_state(back, dps[far.switch], vrf, vtep[me.switch])}"
                    )
        timings["rails"] = time.monotonic() - t0

        # isolation: nothing of the other tenant answers, from any NIC, and neither the tenant's VRF
        # (FRR, kernel) nor the underlay (a leaf's default VRF, the spines) has a route to it
        foreign = {h: [_ip(p.peer_address) for (o, _), p in nic.items() if hosts[o] != vrf] for h, vrf in hosts.items()}
        answered = pings([(hostns[h], t) for h, ts in foreign.items() for t in ts])
        reached = sorted(
            f"{h} ({hosts[h]}) -> {t}" for (ns, t), ok in answered.items() if ok for h in hosts if hostns[h] == ns
        )
        assert not reached, reached
        for n in leaves:
            [vrf] = vrf_of[n]
            others = [p for (o, _), p in nic.items() if hosts[o] != vrf]
            kernel = run_in(fab.switches[n].netns_of(vrf), ["ip", "route", "show"]).stdout
            frr = vrf_routes(fab, n, vrf)
            leaked = [_net(p.address) for p in others if _net(p.address) in frr or _net(p.address) in kernel]
            leaked += [
                _ip(p.peer_address)
                for p in others
                if route_get(fab.switches[n].netns_of(vrf), _ip(p.peer_address)) is not None
            ]
            assert not leaked, f"{n} {vrf} has routes to the other tenant: {leaked}"
        for n in sampled:
            underlay = [
                _ip(p.peer_address)
                for p in nic.values()
                if route_get(fab.switches[n].netns, _ip(p.peer_address)) is not None
            ]
            assert not underlay, f"{n}'s underlay routes tenant NICs: {underlay}"

        # never transit: what a leaf advertises to a spine, in both families, it originated itself (one
        # session to each spine: its 8 parallel sessions share one policy)
        for n in leaves:
            for port in {spine_port[(n, p)]: p for a, p, _, q in links if a == n}.values():
                passed = transit(fab, n, port, vtep[n])
                assert not passed, f"{n} is transit: {passed}"
        timings["checked"] = time.monotonic() - t0
    timings["torn_down"] = time.monotonic() - t0
    listed = subprocess.run([require("ip"), "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert not [n for n in made if n in listed], "namespaces left behind"
    assert not live_processes(f"railyard-frr-{token}-"), "FRR daemons left running"
    print("RoCE backend namespace fabric timings (s):", {k: round(v, 1) for k, v in timings.items()})
