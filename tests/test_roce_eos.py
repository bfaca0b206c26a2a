"""Arista EOS RoCE backends: backend/<switch>/eos.cfg from AVD structured config (pyavd validates it;
the text is pyavd's), on the all-Arista test design tests/designs/h100-256-roce-eos.yaml (one scalable
unit, two tenants renting servers, so every leaf carries both tenants' VRFs). Expectations come from
the plan (plan.links, plan.backend_net), never from a rendered file."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from pyavd import validate_structured_config

from generators.compiler import compile_file
from generators.model.errors import DesignError
from generators.model.plan import Plan, required
from generators.model.sections import BackendNet
from generators.renderers import render_all
from generators.vendors.eos import AvdValidationError, backend_structured_config, render_backend
from tests.conftest import DESIGNS, ROOT

EOS_ROCE = ROOT / "tests/designs/h100-256-roce-eos.yaml"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return compile_file(EOS_ROCE, [])[0]


@pytest.fixture(scope="module")
def files(plan: Plan) -> dict[str, str]:
    return render_all(plan)


def _bn(plan: Plan) -> BackendNet:
    return required(plan.backend_net, "backend_net")


def _block(cfg: str, header: str) -> list[str]:
    """The lines of one top-level EOS config section (`interface Ethernet1/1`), without its header."""
    lines = cfg.splitlines()
    start = lines.index(header)
    out: list[str] = []
    for ln in lines[start + 1 :]:
        if ln == "!" or not ln.startswith(" "):
            break
        out.append(ln.strip())
    return out


def _bgp_vrf(cfg: str, vrf: str) -> list[str]:
    """The `vrf <name>` section inside `router bgp`."""
    body = _block(cfg, next(ln for ln in cfg.splitlines() if ln.startswith("router bgp ")))
    start = body.index(f"vrf {vrf}")
    out: list[str] = []
    for ln in body[start + 1 :]:
        if ln == "!":
            break
        out.append(ln)
    return out


def test_every_backend_switch_gets_one_eos_cfg_and_every_artifact_is_written(plan: Plan, files: dict[str, str]) -> None:
    switches = [d.name for d in plan.devices if d.kind == "switch" and d.network == "backend"]
    assert switches
    assert sorted(p for p in files if p.startswith("backend/")) == sorted(f"backend/{s}/eos.cfg" for s in switches)
    for s in switches:
        assert files[f"backend/{s}/eos.cfg"].startswith(
            f"! {s}: EOS config from railyard design {plan.design.name}, AVD structured config validated by pyavd\n"
        )
        assert f"\nhostname {s}\n" in files[f"backend/{s}/eos.cfg"]
    # the rest of the design is there too: the EOS frontend, the hosts' backend files, cable sheets
    servers = {d.name for d in plan.devices if d.kind == "server"}
    assert {p.split("/")[1] for p in files if p.startswith("hosts/")} == servers
    assert any(p.startswith("frontend/") and p.endswith("eos.cfg") for p in files)
    assert {"bom.csv", "plan.json"} <= set(files) and any(p.startswith("cabling/") for p in files)


def test_every_fabric_link_runs_unnumbered_ebgp_at_both_ends(plan: Plan, files: dict[str, str]) -> None:
    asn = {s.name: s.asn for s in _bn(plan).switches}
    links = [lk for lk in plan.links if lk.network == "backend" and lk.a_device in asn and lk.b_device in asn]
    assert links
    for lk in links:
        for me, port, peer in ((lk.a_device, lk.a_port, lk.b_device), (lk.b_device, lk.b_port, lk.a_device)):
            cfg = files[f"backend/{me}/eos.cfg"]
            intf = _block(cfg, f"interface {port}")
            assert "ipv6 enable" in intf and "no switchport" in intf, (me, port)
            assert not any(ln.startswith("ip address") for ln in intf), f"{me} {port} is unnumbered"
            assert f"   neighbor interface {port} peer-group BACKEND-FABRIC remote-as {asn[peer]}\n" in cfg
    for s in _bn(plan).switches:
        cfg = files[f"backend/{s.name}/eos.cfg"]
        # IPv4 routes over the IPv6 link-local sessions (RFC 5549), the overlay between loopbacks
        assert "neighbor BACKEND-FABRIC next-hop address-family ipv6 originate" in cfg
        assert "ip routing ipv6 interfaces" in cfg and "ipv6 unicast-routing" in cfg


def test_every_server_port_carries_the_plans_31_in_its_vrf(plan: Plan, files: dict[str, str]) -> None:
    bn = _bn(plan)
    hosts = [p for p in bn.ports if not p.fabric]
    servers = {d.name for d in plan.devices if d.kind == "server"}
    assert hosts and {p.peer for p in hosts} == servers
    for p in hosts:
        intf = _block(files[f"backend/{p.switch}/eos.cfg"], f"interface {p.port}")
        assert f"vrf {p.vrf}" in intf and f"ip address {p.address}" in intf, (p.switch, p.port)
        assert f"description {p.peer}:{p.peer_port}" in intf


def test_asn_router_id_and_loopback_are_the_plans(plan: Plan, files: dict[str, str]) -> None:
    for s in _bn(plan).switches:
        cfg = files[f"backend/{s.name}/eos.cfg"]
        rid = s.loopback.split("/")[0]
        bgp = _block(cfg, f"router bgp {s.asn}")
        assert f"router-id {rid}" in bgp
        assert "maximum-paths 64 ecmp 64" in bgp and "bgp bestpath as-path multipath-relax" in bgp
        assert f"network {s.loopback}" in bgp
        assert f"ip address {s.loopback}" in _block(cfg, "interface Loopback0")


def test_every_used_port_is_lossless_for_roce(plan: Plan, files: dict[str, str]) -> None:
    bn = _bn(plan)
    q = bn.qos
    by_switch: dict[str, list[str]] = defaultdict(list)
    for p in bn.ports:
        by_switch[p.switch].append(p.port)
    for s in bn.switches:
        cfg = files[f"backend/{s.name}/eos.cfg"]
        for port in by_switch[s.name]:
            intf = _block(cfg, f"interface {port}")
            assert "qos trust dscp" in intf and "priority-flow-control on" in intf, (s.name, port)
            assert f"priority-flow-control priority {q.roce_priority} no-drop" in intf
            assert sum(ln.startswith("priority-flow-control priority") for ln in intf) == 1, "only RoCE is lossless"
            queue = intf[intf.index(f"tx-queue {q.roce_priority}") + 1]
            assert queue.startswith("random-detect ecn minimum-threshold"), (s.name, port, queue)
            assert f"service-profile {'ROCE'}" in intf
        # every DSCP has one traffic class: RoCE's and CNP's their own, nothing else shares them
        tc: dict[int, int] = {}
        for m in re.finditer(r"^qos map dscp ([\d ]+) to traffic-class (\d)$", cfg, re.M):
            for d in m.group(1).split():
                assert int(d) not in tc
                tc[int(d)] = int(m.group(2))
        assert sorted(tc) == list(range(64))
        assert [d for d, t in tc.items() if t == q.roce_priority] == [q.roce_dscp]
        assert [d for d, t in tc.items() if t == q.cnp_priority] == [q.cnp_dscp]
        profile = _block(cfg, "qos profile ROCE")
        assert profile[profile.index(f"tx-queue {q.cnp_priority}") + 1] == "priority strict"
        assert "priority-flow-control pause watchdog action drop" in cfg


def test_tenant_vrfs_have_the_plans_rd_and_route_targets(plan: Plan, files: dict[str, str]) -> None:
    bn = _bn(plan)
    vrfs = {v.name: v for v in bn.vrfs}
    tenants = {t.name for t in plan.design.tenants}
    assert tenants <= {v.tenant for v in bn.vrfs}
    seen: dict[str, set[str]] = defaultdict(set)  # route target -> VRFs using it, over every config
    for s in bn.switches:
        cfg = files[f"backend/{s.name}/eos.cfg"]
        rid = s.loopback.split("/")[0]
        assert bool(s.vrfs) == ("interface Vxlan1" in cfg), "only leaves with tenant ports are VTEPs"
        for name in s.vrfs:
            v = vrfs[name]
            body = _bgp_vrf(cfg, name)
            assert f"rd {rid}:{v.l3vni}" in body
            rts = {ln.split()[-1] for ln in body if ln.startswith("route-target")}
            assert rts == {v.route_target}
            assert f"route-target import evpn {v.route_target}" in body
            assert f"route-target export evpn {v.route_target}" in body
            assert "redistribute connected" in body
            assert f"vxlan vrf {name} vni {v.l3vni}" in _block(cfg, "interface Vxlan1")
            seen[v.route_target].add(name)
    assert len([v for v in bn.vrfs if v.tenant in tenants]) == len(tenants)
    assert all(len(names) == 1 for names in seen.values()), "no two VRFs share a route target"
    assert len(seen) >= len(tenants)


def test_avd_validation_of_the_backend_is_not_a_formality(plan: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    """A structured config AVD's schema refuses fails the render with AVD's own message."""
    import generators.vendors.eos as mod

    real = mod.backend_structured_config

    def broken(*args: object) -> dict:
        sc = real(*args)  # type: ignore[arg-type]
        sc["ethernet_interfaces"][0]["speed"] = "fast"
        return sc

    monkeypatch.setattr(mod, "backend_structured_config", broken)
    with pytest.raises(AvdValidationError, match=r"ethernet_interfaces\.0\.speed"):
        render_backend(plan)


def test_a_switch_os_that_cannot_do_roce_is_still_refused_by_name(tmp_path: Path) -> None:
    d = tmp_path / "d.yaml"
    # an Ethernet Spectrum-4 run by MLNX-OS (Onyx): railyard has no RoCE rendering for that OS
    d.write_text(f"extends: {DESIGNS / 'h100-512-roce.yaml'}\ncatalog:\n  switches:\n    SN5600:\n      os: mlnx-os\n")
    with pytest.raises(DesignError) as e:
        compile_file(d, [])
    [p] = [p for p in e.value.problems if p.field == "backend.switch"]
    assert "runs mlnx-os" in p.message and "cannot configure as a RoCE backend switch" in p.message
    assert "eos" in p.hint and "sonic" in p.hint


def test_a_leaf_never_carries_one_uplinks_routes_to_another(plan: Plan, files: dict[str, str]) -> None:
    asn = {s.name: s.asn for s in _bn(plan).switches}
    peers: dict[str, set[int]] = defaultdict(set)
    for lk in plan.links:
        if lk.network == "backend" and lk.a_device in asn and lk.b_device in asn:
            peers[lk.a_device].add(asn[lk.b_device])
            peers[lk.b_device].add(asn[lk.a_device])
    for s in _bn(plan).switches:
        cfg = files[f"backend/{s.name}/eos.cfg"]
        listed = {int(m) for m in re.findall(r"^ip as-path access-list FROM-FABRIC permit \^(\d+)_ any$", cfg, re.M)}
        if s.role != "leaf":
            assert not listed and "route-map FABRIC-OUT" not in cfg
            continue
        assert listed == peers[s.name]
        assert "route-map FABRIC-OUT deny 10" in cfg
        for group in ("BACKEND-FABRIC", "EVPN-OVERLAY-PEERS"):
            assert f"      neighbor {group} route-map FABRIC-OUT out\n" in cfg, (s.name, group)


def test_avd_accepts_every_backend_structured_config_without_deprecations(plan: Plan) -> None:
    bn = _bn(plan)
    for s in bn.switches:
        r = validate_structured_config(backend_structured_config(plan, s, [p for p in bn.ports if p.switch == s.name]))
        assert list(r.validation_result.violations) == [], s.name
        assert list(r.validation_result.deprecations) == [], s.name
