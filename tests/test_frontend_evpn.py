"""h100-256's frontend overlay for real: the generated config_db.json translated into bridges, VXLAN
devices, SVIs and VRFs in network namespaces (tests/netns_dataplane.py), the generated frr.conf applied
as is, hosts as namespaces on the leaves' server ports with the plan's addresses; then EVPN type-2/3/5
routes, tenant reachability and isolation, the leaves' refusal to be transit, and the shared gateway
MAC across a host's failover are checked.

Sampled to stay bounded on two cores: fe-leaf01 and fe-leaf02 (the compute leaf pair: every GPU server
has one port on each, so a host can fail over between them), fe-svc01 (a service leaf, with the storage
front-ends), both spines, and every cabled link among them (96). Hosts: two servers of each tenant
(acme, globex), active on different leaves of the pair, and one storage server (its eth0, on fe-svc01;
its eth1 is on fe-svc02, not sampled). A VRF is a namespace (the kernel has no VRF devices): see
tests/netns_fabric.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterable
from ipaddress import ip_network
from pathlib import Path

import pytest

from generators.model.plan import Plan
from generators.model.secrets import fill
from tests import netns_dataplane as ndp
from tests.conftest import rendered_files
from tests.netns_fabric import (
    Fabric,
    evpn_routes,
    frr_fabric,
    live_processes,
    ping_from,
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

DESIGN = "h100-256"
LEAVES = ("fe-leaf01", "fe-leaf02", "fe-svc01")
SPINES = ("fe-spine01", "fe-spine02")
# active leaf of each sampled server's active-backup pair: one per leaf, so L2 crosses VXLAN
SERVERS = {"gpu001": "fe-leaf01", "gpu002": "fe-leaf02", "gpu017": "fe-leaf01", "gpu018": "fe-leaf02"}
STORAGE = "stor01"
REIMPORTS = 3  # rounds of re-importing a leaf's EVPN routes into a VRF before the test fails


def neigh_mac(netns: str, ip: str, dev: str) -> str | None:
    out = run_in(netns, ["ip", "-j", "neigh", "show", ip, "dev", dev]).stdout
    entries = [e for e in json.loads(out or "[]") if "lladdr" in e]
    return entries[0]["lladdr"] if entries else None


def test_h100_256_frontend_evpn_in_namespaces(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    require("ip")
    require("bridge")
    plan = compiled(DESIGN)
    files = rendered_files(compiled, DESIGN)
    sampled = (*LEAVES, *SPINES)
    # as deployed: every session authenticated with the stack's BGP password (TCP-MD5)
    configs = {n: fill(files[f"frontend/{n}/frr.conf"], SITE_SECRETS) for n in sampled}
    dps = {n: ndp.from_config_db(n, json.loads(files[f"frontend/{n}/config_db.json"])) for n in sampled}
    links = [
        (lk.a_device, lk.a_port, lk.b_device, lk.b_port)
        for lk in plan.links
        if lk.network == "frontend" and lk.a_device in configs and lk.b_device in configs
    ]
    assert len(links) == 96
    np_ = plan.netplan
    assert np_ is not None
    nets = {n["vrf"]: n for n in np_.networks}
    tenant_of = {h: np_.hosts[h]["vrf"] for h in SERVERS}
    stor = json.loads(files["storage/tenants.json"])
    stor_addr = {
        t["vrf"]: next(a["address"] for a in t["frontend_addresses"] if a["server"] == STORAGE and a["port"] == "eth0")
        for t in stor["tenants"]
    }
    # (host, host port, leaf, leaf port) for the sampled servers' frontend ports on the sampled leaves
    cabled = []
    for lk in plan.links:
        if lk.network != "frontend" or lk.tier != "server-leaf":
            continue
        host, hp, leaf, lp = (
            (lk.a_device, lk.a_port, lk.b_device, lk.b_port)
            if lk.b_device in LEAVES
            else (lk.b_device, lk.b_port, lk.a_device, lk.a_port)
        )
        if host in (*SERVERS, STORAGE) and leaf in LEAVES:
            cabled.append((host, hp, leaf, lp))
    port_on = {(h, leaf): hp for h, hp, leaf, _ in cabled}
    hostns: dict[str, str] = {}
    ifaces: dict[tuple[str, str], list[str]] = {}

    def dataplane(fab: Fabric) -> None:
        for n in LEAVES:
            ndp.build(fab.switches[n], dps[n])
        for h in (*SERVERS, STORAGE):
            hostns[h] = fab.add_netns(h)
            # a host never routes between its networks (a storage server is on every tenant's VLAN)
            run_in(hostns[h], ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        for h, hp, leaf, lp in cabled:
            ifaces[(h, leaf)] = ndp.attach(fab.switches[leaf], dps[leaf], lp, hostns[h], hp)

    t0 = time.monotonic()
    timings: dict[str, float] = {}
    with frr_fabric(
        configs, links, tmp_path / "fabric", vrfs={n: list(dps[n].vrfs) for n in LEAVES}, dataplane=dataplane
    ) as fab:
        timings["setup"] = fab.setup_seconds
        token = fab.token
        made = list(fab.created)
        # servers: an active-backup bond over their two leaves (no bonding in this kernel: the backup
        # port is down and carries the bond's MAC, as a bond's slaves do), address and gateway per plan
        for h, active in SERVERS.items():
            ns = hostns[h]
            net = nets[tenant_of[h]]["hosts"]
            up, down = port_on[(h, active)], next(port_on[(h, lf)] for lf in LEAVES[:2] if lf != active)
            mac = json.loads(run_in(ns, ["ip", "-j", "link", "show", up]).stdout)[0]["address"]
            run_in(ns, ["ip", "link", "set", down, "down"])
            run_in(ns, ["ip", "link", "set", down, "address", mac])
            run_in(ns, ["ip", "addr", "add", np_.hosts[h]["address"], "dev", up])
            run_in(ns, ["ip", "route", "add", "default", "via", net["gateway"]])
        # the storage server: one interface per tenant's storage VLAN, a route back to that tenant's
        # clients through that VLAN's gateway (storage/tenants.json's client_networks)
        for t in stor["tenants"]:
            dev = f"eth0.{t['vlan']}"
            assert dev in ifaces[(STORAGE, "fe-svc01")]
            run_in(hostns[STORAGE], ["ip", "addr", "add", stor_addr[t["vrf"]], "dev", dev])
            for c in t["client_networks"]:
                run_in(hostns[STORAGE], ["ip", "route", "add", c, "via", t["gateway"], "dev", dev])

        def established() -> bool:
            for n in sampled:
                want = sum(n in (a, b) for a, _, b, _ in links)
                for afi in ("ipv4", "evpn"):
                    st = fab.bgp_peers(n, afi)
                    if len(st) < want or list(st.values()).count("Established") != want:
                        return False
            return True

        assert wait_until(established, timeout=60), {n: fab.bgp_peers(n, "evpn") for n in sampled}
        timings["established"] = time.monotonic() - t0

        # type-3 (IMET): every L2VNI of a leaf from every other sampled leaf that has it
        vtep = {n: dps[n].vtep for n in LEAVES}
        l2vnis = {
            n: {s.vni for s in dps[n].segments.values() if s.vni is not None} - set(dps[n].vrfs.values())
            for n in LEAVES
        }

        def imet_missing() -> list[str]:
            missing = []
            for n in LEAVES:
                got = {
                    (r["ip"], c.split(":")[-1])
                    for r in evpn_routes(fab, n, "multicast")
                    for c in r["extendedCommunity"]["string"].split()
                    if c.startswith("RT:")
                }
                zebra = fab.switches[n].vtysh_json("show evpn vni json")
                for m in LEAVES:
                    for vni in sorted(l2vnis[n] & l2vnis[m]) if m != n else ():
                        # zebra lists a VNI, and its remoteVteps key, only once it has one: absent is missing
                        remote = zebra.get(str(vni), {}).get("remoteVteps", [])
                        if (vtep[m], str(vni)) not in got or vtep[m] not in remote:
                            missing.append(f"{n}: VNI {vni} from {m}")
            return missing

        assert wait_until(lambda: not imet_missing(), timeout=30), imet_missing()
        # each leaf shares L2VNIs with the others (the infra hosts VLAN is on all three), so the check
        # above checked something on every leaf; the storage VLANs' other leaf (fe-svc02) is not sampled
        assert all(l2vnis[n] & (l2vnis[m]) for n in LEAVES for m in LEAVES if m != n)

        # hosts reach their gateway (this is also how the leaves learn them: ARP -> type-2)
        for h in SERVERS:
            gw = nets[tenant_of[h]]["hosts"]["gateway"]
            assert wait_until(lambda h=h, gw=gw: ping_from(hostns[h], gw), timeout=10, interval=0.5), f"{h} -> {gw}"
        for t in stor["tenants"]:
            assert wait_until(lambda t=t: ping_from(hostns[STORAGE], t["gateway"]), timeout=10, interval=0.5)

        # type-2: every sampled server's MAC+IP, on every other sampled leaf (fe-svc01 has no hosts
        # VLAN: it imports them through the tenant's L3VNI as /32 routes in the VRF)
        host_mac = {
            h: json.loads(run_in(hostns[h], ["ip", "-j", "link", "show", port_on[(h, a)]]).stdout)[0]["address"]
            for h, a in SERVERS.items()
        }

        def macip_missing() -> list[str]:
            missing = []
            for n in LEAVES:
                got = {(r.get("mac"), r.get("ip"), r["nexthops"][0]["ip"]) for r in evpn_routes(fab, n, "macip")}
                for h, active in SERVERS.items():
                    ip = np_.hosts[h]["address"].split("/")[0]
                    if active != n and (host_mac[h], ip, vtep[active]) not in got:
                        missing.append(f"{n}: {h} {host_mac[h]} {ip} via {active}")
                    if n == "fe-svc01" and f"{ip}/32" not in vrf_routes(fab, n, tenant_of[h]):
                        missing.append(f"{n}: no /32 for {h} in {tenant_of[h]}")
            return missing

        assert wait_until(lambda: not macip_missing(), timeout=30), macip_missing()

        # type-5: each tenant's hosts and storage subnets, in that tenant's VRF on the leaves without them
        def prefix_missing() -> list[str]:
            missing = []
            for n in LEAVES:
                have = {r["prefix"] for r in evpn_routes(fab, n, "prefix")}
                for vrf in dps[n].vrfs:
                    routes = vrf_routes(fab, n, vrf)
                    for kind in ("hosts", "storage"):
                        sub = nets[vrf][kind]["subnet"]
                        net = ip_network(sub)
                        if f"[5]:[0]:[{net.prefixlen}]:[{net.network_address}]" not in have or sub not in routes:
                            missing.append(f"{n}: {vrf} {kind} {sub}")
            return missing

        assert wait_until(lambda: not prefix_missing(), timeout=30), prefix_missing()
        timings["routes"] = time.monotonic() - t0

        # routed traffic (a server to storage) crosses its tenant's L3VNI between the server's leaf and
        # fe-svc01, so each end must hold the other's router MAC. FRR 8.4's zebra can lose one while keeping
        # the routes (FRRouting/frr#12391, see netns_fabric.reimport_type5), and the convergence above is a
        # burst of the route changes that trigger it, as the move further down is. A leaf short of one
        # re-imports its tenant's EVPN routes (a warning) before the first routed ping
        def rmacs_missing(vrf: str) -> dict[str, object]:
            out: dict[str, list[str]] = {}
            for h, active in SERVERS.items():
                if tenant_of[h] == vrf:
                    for n, other in ((active, "fe-svc01"), ("fe-svc01", active)):
                        if vtep[other] not in remote_rmacs(fab, n, dps[n].vrfs[vrf] or 0):
                            out.setdefault(n, []).append(vtep[other])
            return dict(out)

        def rmac_report(leaves: Iterable[str]) -> str:
            return "; ".join(
                f"{n} {vrf} [{' '.join(fab.switches[n].vtysh(f'show evpn rmac vni {vni}').split())}]"
                for n in sorted(set(leaves))
                for vrf, vni in sorted(dps[n].vrfs.items())
            )

        for vrf in sorted({tenant_of[h] for h in SERVERS}):
            repair_router_macs(
                fab, lambda _, v=vrf: v, lambda v=vrf: rmacs_missing(v), lambda v=vrf: rmacs_missing(v), None, REIMPORTS
            )

        # reachability inside a tenant: the other server of the pair (L2 over VXLAN) and storage (routed
        # over the L3VNI to another leaf)
        for h in SERVERS:
            vrf = tenant_of[h]
            peers = [o for o in SERVERS if o != h and tenant_of[o] == vrf]
            for target in [np_.hosts[o]["address"].split("/")[0] for o in peers] + [stor_addr[vrf].split("/")[0]]:
                assert wait_until(lambda h=h, t=target: ping_from(hostns[h], t), timeout=15, interval=0.5), (
                    f"{h} ({vrf}) cannot reach {target}; zebra's router MACs: {rmac_report((SERVERS[h], 'fe-svc01'))}"
                )

        # isolation: nothing of another network (the other tenant, the provider's infra) answers, and
        # the tenant's VRF has no route to it
        foreign: dict[tuple[str, str], list[str]] = {}
        for h in SERVERS:
            for other, n in nets.items():
                if other != tenant_of[h]:
                    foreign[(h, other)] = [
                        n["hosts"]["gateway"],
                        n["storage"]["gateway"],
                        stor_addr[other].split("/")[0],
                    ]
                    foreign[(h, other)] += [
                        np_.hosts[o]["address"].split("/")[0] for o in SERVERS if tenant_of[o] == other
                    ]
        answered = pings([(hostns[h], t) for (h, _), ts in foreign.items() for t in ts])
        reached = {
            f"{h} ({tenant_of[h]}) -> {t} ({other})"
            for (h, other), ts in foreign.items()
            for t in ts
            if answered[(hostns[h], t)]
        }
        assert not reached, reached
        for (h, other), targets in foreign.items():
            vrf, n = tenant_of[h], nets[other]
            for leaf in LEAVES:
                if vrf not in dps[leaf].vrfs:
                    continue
                kernel = run_in(fab.switches[leaf].netns_of(vrf), ["ip", "route", "show"]).stdout
                leaked = [
                    s
                    for s in (n["hosts"]["subnet"], n["storage"]["subnet"])
                    if s in vrf_routes(fab, leaf, vrf) or s in kernel
                ]
                leaked += [
                    t
                    for t in targets
                    if run_in(fab.switches[leaf].netns_of(vrf), ["ip", "route", "get", t], check=False).returncode == 0
                ]
                assert not leaked, f"{leaf} {vrf} has routes to {other}: {leaked}"

        # never transit: what a leaf advertises to a spine, in both families, it originated itself
        for n in LEAVES:
            asn = str(np_.asn[n])
            # one session to each spine (its 16 parallel sessions share one policy)
            ports = {b if a == n else a: p if a == n else q for a, p, b, q in links if n in (a, b)}
            for port in ports.values():
                passed = transit(fab, n, port, vtep[n])
                assert not passed, f"{n} ({asn}) is transit: {passed}"
        timings["checked"] = time.monotonic() - t0

        # the shared gateway: gpu001 fails over from fe-leaf01 to fe-leaf02; fe-leaf02's gateway answers
        # with the MAC fe-leaf01's did, the fabric moves the host (EVPN MAC mobility) and storage still answers
        h, old, new = "gpu001", "fe-leaf01", "fe-leaf02"
        ns, gw = hostns[h], nets[tenant_of[h]]["hosts"]["gateway"]
        before = neigh_mac(ns, gw, port_on[(h, old)])
        assert before == np_.anycast_gateway_mac
        run_in(ns, ["ip", "link", "set", port_on[(h, old)], "down"])
        run_in(ns, ["ip", "link", "set", port_on[(h, new)], "up"])
        run_in(ns, ["ip", "addr", "add", np_.hosts[h]["address"], "dev", port_on[(h, new)]])
        run_in(ns, ["ip", "route", "replace", "default", "via", gw, "dev", port_on[(h, new)]])
        assert wait_until(lambda: ping_from(ns, gw), timeout=10, interval=0.5)
        assert neigh_mac(ns, gw, port_on[(h, new)]) == before
        ip = np_.hosts[h]["address"].split("/")[0]

        def moved() -> bool:
            mac = fab.switches[old].vtysh_json(
                f"show evpn mac vni {nets[tenant_of[h]]['hosts']['vni']} mac {host_mac[h]} json"
            )
            route = fab.switches["fe-svc01"].vtysh_json(f"show ip route vrf {tenant_of[h]} {ip}/32 json")
            hops = [x.get("ip") for r in route.get(f"{ip}/32", []) for x in r["nexthops"]]
            return mac.get(host_mac[h], {}).get("type") == "remote" and hops == [vtep[new]]

        assert wait_until(moved, timeout=30), "the fabric did not follow gpu001 to fe-leaf02"
        # the move re-announces gpu001's /32 on fe-svc01 from fe-leaf02's VTEP: a replace, the kind in
        # which FRR 8.4's zebra can drop that VTEP's router MAC while keeping the route (FRRouting/frr#12391,
        # see netns_fabric.reimport_type5). A full-suite run's storage ping below failed once (2026-12-03)
        # before this check; it first caught the bug some two dozen runs later, fe-leaf02 without fe-svc01's router MAC
        # after the move, repaired in one round. Storage answers over the L3VNI, so fe-svc01 must hold
        # fe-leaf02's router MAC and fe-leaf02 fe-svc01's; a leaf short of one re-imports the tenant's EVPN
        # routes, up to REIMPORTS rounds (a warning)
        vrf = tenant_of[h]
        need = {"fe-svc01": vtep[new], new: vtep["fe-svc01"]}  # leaf -> the VTEP whose router MAC it needs
        l3vni = {n: dps[n].vrfs[vrf] for n in need}
        assert all(l3vni.values()), f"{vrf} has no L3VNI on {l3vni}"

        def rmac_missing() -> dict[str, str]:
            return {n: v for n, v in need.items() if v not in remote_rmacs(fab, n, l3vni[n] or 0)}

        def short() -> dict[str, object]:
            out: dict[str, object] = {n: f"router MAC of {v}" for n, v in rmac_missing().items()}
            return out if moved() else {**out, "fe-svc01": f"{ip}/32 via {vtep[new]}"}

        # the repair runs in every run, not only when the bug strikes (rarely, here): fe-svc01
        # re-imports the tenant's routes, gpu001's /32 among them (reimport_type5 fails unless zebra's VRF
        # empties), both router MACs and the /32 via fe-leaf02 must come back, and storage answers after it
        repair_router_macs(fab, lambda _: vrf, rmac_missing, short, "fe-svc01", REIMPORTS)
        target = stor_addr[vrf].split("/")[0]
        assert wait_until(lambda: ping_from(ns, target), timeout=15, interval=0.5), (
            f"{h} -> {target} after the move; zebra's router MACs: {rmac_report(need)}"
        )
        timings["failover"] = time.monotonic() - t0
    timings["torn_down"] = time.monotonic() - t0
    listed = subprocess.run([require("ip"), "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert not [n for n in made if n in listed], "namespaces left behind"
    assert not live_processes(f"railyard-frr-{token}-"), "FRR daemons left running"
    print("EVPN namespace fabric timings (s):", {k: round(v, 1) for k, v in timings.items()})
