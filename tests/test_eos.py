"""Arista EOS frontend through pyavd: railyard builds each switch's AVD structured config from the plan
and renders it as pyavd's eos_cli_config_gen templates do (tests/test_eos_text.py); the EOS configs
carry the plan's ASNs, cabling, tenants and addresses, and they are byte for byte what AVD's own
eos_designs makes of the AVD inputs railyard writes (frontend/avd/fabric.yml, hosts.yml), on 2- and
3-tier designs."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyavd import get_device_config, validate_structured_config

from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.renderers import render_all
from generators.vendors import eos_text
from generators.vendors.eos import (
    AvdValidationError,
    avd_inputs,
    backend_structured_config,
    eos_cli,
    frontend_structured_config,
    oob_structured_config,
    pyavd_cli,
    render_frontend,
)
from generators.views.switches import frontend_views, oob_views
from tests.conftest import ROOT, rendered_files

EOS = ("frontend.vendor=eos", "frontend.switch=DCS-7060DX5-64S")
ROCE_EOS = ROOT / "tests/designs/h100-256-roce-eos.yaml"
THREE_TIER = ROOT / "tests/designs/h100-eos-3tier.yaml"
_TEST_DESIGNS: dict[Path, tuple[Plan, dict[str, str]]] = {}


def eos_files(compiled: Callable[..., Plan], name: str) -> dict[str, str]:
    return rendered_files(compiled, name, *EOS)


def design_files(path: Path) -> tuple[Plan, dict[str, str]]:
    """(plan, every artifact) of a design under tests/designs (cached)."""
    if path not in _TEST_DESIGNS:
        plan = compile_file(path, [])[0]
        _TEST_DESIGNS[path] = plan, render_all(plan)
    return _TEST_DESIGNS[path]


@pytest.mark.parametrize("name", ["h100-256", "h100-1024-reference"])
def test_avd_validate_inputs_passes(compiled: Callable[..., Plan], name: str) -> None:
    from pyavd import validate_inputs

    fabric, hosts = avd_inputs(compiled(name, *EOS))
    for host, node_type in hosts.items():
        r = validate_inputs({**fabric, "type": node_type})
        assert r.validated_data is not None, [v.message for v in r.validation_result.violations]
        assert list(r.validation_result.violations) == []
        assert list(r.validation_result.deprecations) == [], host


def test_avd_validation_is_not_a_formality(compiled: Callable[..., Plan], monkeypatch: pytest.MonkeyPatch) -> None:
    """A structured config AVD's schema refuses (a string where it wants a number) fails the render with
    AVD's own message naming the key."""
    import generators.vendors.eos as mod

    real = mod.frontend_structured_config

    def broken(*args: Any) -> dict[str, Any]:
        sc = real(*args)
        sc["router_bgp"]["maximum_paths"]["paths"] = "many"
        return sc

    monkeypatch.setattr(mod, "frontend_structured_config", broken)
    with pytest.raises(AvdValidationError, match=r"router_bgp\.maximum_paths\.paths"):
        render_frontend(compiled("h100-256", *EOS))


def eos_structured_configs(plan: Plan) -> dict[str, dict[str, Any]]:
    """{network/switch: structured config} of every EOS switch of the plan: frontend, RoCE backend, OOB."""
    views = frontend_views(plan) if plan.netplan is not None and plan.netplan.vendor == "eos" else {}
    out = {f"frontend/{n}": frontend_structured_config(plan, v, views) for n, v in views.items()}
    bn = plan.backend_net
    if bn is not None and plan.catalog.switches[plan.networks.backend.switch].os == "eos":
        by_switch = bn.ports_by_switch()
        out |= {f"backend/{s.name}": backend_structured_config(plan, s, by_switch[s.name]) for s in bn.switches}
    out |= {
        f"oob/{n}": oob_structured_config(plan, v)
        for n, v in oob_views(plan).items()
        if plan.catalog.switches[v.device.model].os == "eos"
    }
    return out


def _eos_designs_configs(files: dict[str, str], hosts: list[str] | None = None) -> dict[str, str]:
    """EOS configs as AVD's eos_designs makes them from the fabric.yml and hosts.yml railyard wrote, as
    an arista.avd inventory would (validate_inputs, get_avd_facts over every host, then each host's
    structured config rendered by pyavd's own get_device_config); `hosts`: only these (facts still
    cover the whole fabric)."""
    from pyavd import get_avd_facts, get_device_structured_config, validate_inputs

    fabric = yaml.safe_load(files["frontend/avd/fabric.yml"])
    node_type = yaml.safe_load(files["frontend/avd/hosts.yml"])
    # the inputs differ by `type` only, so one validation per node type is the inventory's per-host one
    by_type = {}
    for t in sorted(set(node_type.values())):
        r = validate_inputs({**fabric, "type": t})
        assert r.validated_data is not None, [v.message for v in r.validation_result.violations][:5]
        assert list(r.validation_result.violations) == [] and list(r.validation_result.deprecations) == [], t
        by_type[t] = r.validated_data
    validated = {h: by_type[t] for h, t in node_type.items()}
    facts = get_avd_facts(validated)
    return {
        h: get_device_config(get_device_structured_config(h, validated[h], facts))
        for h in (hosts if hosts is not None else list(node_type))
    }


def _direct(files: dict[str, str], host: str) -> str:
    """The eos.cfg railyard wrote, without its one-line header."""
    head, _, body = files[f"frontend/{host}/eos.cfg"].partition("\n")
    assert re.fullmatch(
        rf"! {host}: EOS config from railyard design \S+, AVD structured config validated by pyavd", head
    )
    return body


@pytest.mark.parametrize("design", ["h100-256", "h100-256-roce-eos"])
def test_two_tier_eos_cfg_is_what_eos_designs_makes_of_the_written_avd_inputs(
    compiled: Callable[..., Plan], design: str
) -> None:
    """Every frontend switch: the eos.cfg from railyard's own structured config is byte for byte the one
    AVD's eos_designs renders from frontend/avd/*.yml. Both paths agree, and fabric.yml is honest."""
    if design == "h100-256":
        plan, files = compiled(design, *EOS), eos_files(compiled, design)
    else:
        plan, files = design_files(ROCE_EOS)
    fe = [d.name for d in plan.devices if d.kind == "switch" and d.network == "frontend"]
    assert {d.role for d in plan.devices if d.name in fe} == {"leaf", "spine"}
    reference = _eos_designs_configs(files)
    assert sorted(reference) == sorted(fe)
    for host in fe:
        assert _direct(files, host) == reference[host], host


def test_three_tier_eos_cfg_is_what_eos_designs_makes_of_the_written_avd_inputs() -> None:
    """The same on a 3-tier frontend (AVD node types l3leaf, spine, super-spine), for the first and last
    switch of every tier and pod (eos_designs' facts span the whole fabric either way); the cores relay
    EVPN between the pods' spines in both."""
    plan, files = design_files(THREE_TIER)
    assert plan.networks.frontend.tiers == 3
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    for d in plan.devices:
        if d.kind == "switch" and d.network == "frontend":
            groups[(d.role, int(d.attrs.get("pod", 0)) if d.role != "core" else 0)].append(d.name)
    assert {r for r, _ in groups} == {"leaf", "spine", "core"} and len({p for r, p in groups if r == "spine"}) >= 2
    sample = sorted({n for names in groups.values() for n in (names[0], names[-1])})
    reference = _eos_designs_configs(files, sample)
    for host in sample:
        assert _direct(files, host) == reference[host], host
    core = next(h for h in sample if h.startswith("fe-core"))
    assert "address-family evpn" in reference[core] and "next-hop-unchanged" in reference[core]


def test_eos_cli_renders_what_pyavds_get_device_config_renders() -> None:
    """pyavd's public get_device_config builds a new template environment per call; railyard renders with
    its own template (eos_text) when the structured config keeps to the keys railyard builds, else with
    pyavd's templates in one environment (pyavd_cli). Both give get_device_config's text on every EOS
    switch of the all-Arista design: frontend, RoCE backend, OOB; every one of them takes eos_text."""
    plan, _ = design_files(ROCE_EOS)
    structured = eos_structured_configs(plan)
    assert {n.split("/")[0] for n in structured} == {"frontend", "backend", "oob"}
    for sc in structured.values():
        validated = validate_structured_config(sc).validated_data
        assert validated is not None
        assert eos_text.misfit(validated) is None, sc["hostname"]
        reference = get_device_config(validated)
        assert eos_cli(validated) == reference, sc["hostname"]
        assert pyavd_cli(validated) == reference, sc["hostname"]


def test_eos_configs_follow_the_plan(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *EOS)
    files = eos_files(compiled, "h100-256")
    np_ = plan.netplan
    fe = [d for d in plan.devices if d.network == "frontend" and d.kind == "switch"]
    assert sorted(p for p in files if p.endswith("eos.cfg") and p.startswith("frontend/")) == sorted(
        f"frontend/{d.name}/eos.cfg" for d in fe
    )
    assert not [p for p in files if p.startswith("frontend/") and p.endswith(("frr.conf", "config_db.json"))]
    for d in fe:
        cfg = files[f"frontend/{d.name}/eos.cfg"]
        assert f"\nrouter bgp {np_.asn[d.name]}\n" in cfg
        assert f"ip address {np_.loopbacks[d.name]}" in cfg
        cabled = {
            lk.a_port if lk.a_device == d.name else lk.b_port
            for lk in plan.links
            if lk.tier == "leaf-spine" and d.name in (lk.a_device, lk.b_device)
        }
        assert set(re.findall(r"neighbor interface (\S+) peer-group", cfg)) == cabled
    leaf1 = files["frontend/fe-leaf01/eos.cfg"]
    acme = next(n for n in np_.networks if n["name"] == "acme")
    assert f"vxlan vrf {acme['vrf']} vni {acme['l3vni']}" in leaf1
    assert f"vxlan vlan {acme['hosts']['vlan']} vni {acme['hosts']['vni']}" in leaf1
    assert f"route-target import evpn 64512:{acme['l3vni']}" in leaf1  # same RTs as the SONiC configs
    assert f"ip address virtual {acme['hosts']['gateway']}/" in leaf1
    # the storage leaves trunk every network's storage VLAN to the storage front-ends
    storage_vlans = ",".join(str(n["storage"]["vlan"]) for n in np_.networks)
    assert f"switchport trunk allowed vlan {storage_vlans}" in files["frontend/fe-svc01/eos.cfg"]
    inputs = yaml.safe_load(files["frontend/avd/fabric.yml"])
    assert inputs["underlay_rfc5549"] is True and inputs["overlay_routing_protocol"] == "ebgp"
    assert yaml.safe_load(files["frontend/avd/hosts.yml"])["fe-spine01"] == "spine"
    # OOB aggregation switches of the EOS model are rendered by pyavd too, BGP to each access switch
    agg = files["oob/oob-agg1/eos.cfg"]
    for lk in plan.links:
        if lk.tier == "access-agg" and lk.b_device == "oob-agg1":
            assert f"neighbor interface {lk.b_port} peer-group OOB-ACCESS remote-as {np_.asn[lk.a_device]}" in agg


def test_eos_pyavd_is_pinned() -> None:
    import pyavd

    assert pyavd.__version__ == "6.4.0"


@pytest.mark.large
def test_16k_gpu_eos_frontend_compiles_in_3_tiers(compiled: Callable[..., Plan]) -> None:
    """designs/h100-16k.yaml with an EOS frontend: 2,048 servers need 3 tiers of 64-port 7060X5s (pods of
    spines under cores). Every frontend switch gets an eos.cfg AVD's schema accepted (the render refuses
    any other), AVD accepts fabric.yml for every node type, and each core and spine peers over exactly the
    links the plan cables, underlay on each link and EVPN with each neighbouring switch's loopback."""
    from pyavd import validate_inputs

    plan = compiled("h100-16k", *EOS)
    files = rendered_files(compiled, "h100-16k", *EOS)
    assert plan.networks.frontend.tiers == 3
    np_ = plan.netplan
    assert np_ is not None
    fe = {d.name: d for d in plan.devices if d.kind == "switch" and d.network == "frontend"}
    assert {d.role for d in fe.values()} == {"leaf", "spine", "core"}
    assert sorted(p for p in files if p.startswith("frontend/") and not p.startswith("frontend/avd/")) == sorted(
        f"frontend/{n}/eos.cfg" for n in fe
    )
    node_type = yaml.safe_load(files["frontend/avd/hosts.yml"])
    assert {node_type[n] for n, d in fe.items() if d.role == "core"} == {"super-spine"}
    fabric = yaml.safe_load(files["frontend/avd/fabric.yml"])
    for t in sorted(set(node_type.values())):
        r = validate_inputs({**fabric, "type": t})
        assert list(r.validation_result.violations) == [] and list(r.validation_result.deprecations) == [], t
    links: dict[str, set[tuple[str, str]]] = defaultdict(set)  # switch -> {(port, peer)} of its fabric links
    for lk in plan.links:
        if lk.network == "frontend" and lk.tier in ("leaf-spine", "spine-core"):
            links[lk.a_device].add((lk.a_port, lk.b_device))
            links[lk.b_device].add((lk.b_port, lk.a_device))
    checked = 0
    for name, d in fe.items():
        if d.role == "leaf":
            continue
        cfg = files[f"frontend/{name}/eos.cfg"]
        assert f"\nrouter bgp {np_.asn[name]}\n" in cfg
        underlay = set(re.findall(r"neighbor interface (\S+) peer-group IPv4-UNDERLAY-PEERS remote-as (\d+)", cfg))
        assert underlay == {(port, str(np_.asn[peer])) for port, peer in links[name]}, name
        overlay = set(re.findall(r"neighbor (\S+) peer group EVPN-OVERLAY-PEERS\n   neighbor \1 remote-as (\d+)", cfg))
        assert overlay == {(np_.loopbacks[peer].split("/")[0], str(np_.asn[peer])) for _, peer in links[name]}, name
        if d.role == "core":
            assert {fe[peer].role for _, peer in links[name]} == {"spine"}
            assert "neighbor EVPN-OVERLAY-PEERS next-hop-unchanged" in cfg  # relays the VTEPs' next hops
        checked += 1
    assert checked == sum(d.role != "leaf" for d in fe.values()) > 100
