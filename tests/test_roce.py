"""RoCE backends: the backend network plan (plan.backend_net), the SONiC backend configs and the hosts'
netplan and NCCL files, on compiled shipped designs. Expectations come from the plan's links, cables
and the design's tenants, not from a compiled output."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from ipaddress import IPv4Interface, ip_network

import pytest

from generators.model.design import tenant_members
from generators.model.errors import DesignError
from generators.model.plan import Plan, required

Compiled = Callable[..., Plan]
ROCE = ["b300-spectrumx"]


@pytest.mark.parametrize("name", ROCE)
def test_every_backend_switch_has_an_rfc7938_asn(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    bn = required(plan.backend_net, "backend_net")
    switches = [d for d in plan.devices if d.kind == "switch" and d.network == "backend"]
    assert [s.name for s in bn.switches] == [d.name for d in switches]
    by_role: dict[str, list[int]] = defaultdict(list)
    for s in bn.switches:
        by_role[s.role].append(s.asn)
    assert len(set(by_role["leaf"])) == len(by_role["leaf"]), "each leaf has its own ASN"
    net = plan.design.backend.network
    assert sorted(by_role["leaf"]) == [net.leaf_asn_base + n for n in range(1, len(by_role["leaf"]) + 1)]
    devs = plan.index()
    group_asn: dict[tuple[object, object], set[int]] = defaultdict(set)
    for s in bn.switches:
        if s.role == "spine":
            group_asn[(devs[s.name].attrs.get("plane"), devs[s.name].attrs.get("pod"))].add(s.asn)
    assert all(len(a) == 1 for a in group_asn.values()), "the spines of a group share one ASN"
    assert not set(by_role["leaf"]) & (set(by_role["spine"]) | set(by_role["core"]))
    loopbacks = [s.loopback for s in bn.switches]
    assert len(set(loopbacks)) == len(loopbacks)
    assert all(IPv4Interface(lo) in plan.design.addressing.backend or
               IPv4Interface(lo).ip in plan.design.addressing.backend for lo in loopbacks)


@pytest.mark.parametrize("name", ROCE)
def test_every_server_port_has_a_31_in_its_rails_block(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    bn = required(plan.backend_net, "backend_net")
    devs = plan.index()
    server_links = [lk for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"]
    hosts = [p for p in bn.ports if not p.fabric]
    assert len(hosts) == len(server_links)
    assert {(p.switch, p.port) for p in hosts} == {(lk.b_device, lk.b_port) for lk in server_links}
    blocks = {r.rail: ip_network(r.block) for r in bn.rails}
    seen: set[str] = set()
    for p in hosts:
        assert p.address is not None and p.peer_address is not None and p.rail is not None
        sw, nic = IPv4Interface(p.address), IPv4Interface(p.peer_address)
        assert sw.network.prefixlen == 31 and sw.network == nic.network
        assert int(sw.ip) % 2 == 0 and int(nic.ip) == int(sw.ip) + 1, "switch side even, NIC side odd"
        assert sw.network.subnet_of(blocks[p.rail])  # type: ignore[arg-type]
        if "rail" in devs[p.switch].attrs:
            assert p.rail == devs[p.switch].attrs["rail"], "a leaf's ports are on its own rail's block"
        seen.add(str(sw.network))
    assert len(seen) == len(hosts), "no /31 is used twice"
    rails = list(blocks.values())
    assert not any(a.overlaps(b) for i, a in enumerate(rails) for b in rails[i + 1:])


@pytest.mark.parametrize("name", ROCE)
def test_tenants_cannot_reach_each_other_on_the_backend(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    bn = required(plan.backend_net, "backend_net")
    members = tenant_members(plan.design)
    vrf_of_tenant = {v.tenant: v.name for v in bn.vrfs}
    assert len({v.l3vni for v in bn.vrfs}) == len(bn.vrfs), "no L3VNI shared between VRFs"
    assert len({v.route_target for v in bn.vrfs}) == len(bn.vrfs), "no route target shared between VRFs"
    owner = {h: t for t, hs in members.items() for h in hs}
    for p in (p for p in bn.ports if not p.fabric):
        assert p.vrf == vrf_of_tenant[owner.get(p.peer)], f"{p.switch} {p.port} is in its server's tenant's VRF"
    per_vrf = Counter(p.vrf for p in bn.ports if not p.fabric)
    links_of = Counter(lk.a_device for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf")
    for t, hs in members.items():
        assert per_vrf[vrf_of_tenant[t]] == sum(links_of[h] for h in hs)
    for v in bn.vrfs:
        assert set(v.leaves) == {p.switch for p in bn.ports if p.vrf == v.name}


def test_a_backend_pool_overlapping_another_pool_is_refused(compiled: Compiled) -> None:
    with pytest.raises(DesignError) as e:
        compiled("b300-spectrumx", "addressing.backend=10.96.0.0/14")
    assert any(p.field == "addressing.backend" and "overlaps" in p.message for p in e.value.problems)


def test_a_backend_pool_too_small_names_the_field(compiled: Compiled) -> None:
    with pytest.raises(DesignError) as e:
        compiled("b300-spectrumx", "addressing.backend=10.128.0.0/24")
    assert [p.field for p in e.value.problems] == ["addressing.backend"]
    assert "shorter prefix" in e.value.problems[0].hint


@pytest.mark.parametrize("field", ["backend.sonic_release=202505", "backend.network.leaf_asn_base=4210000000"])
def test_roce_fields_on_an_infiniband_backend_are_refused(compiled: Compiled, field: str) -> None:
    with pytest.raises(DesignError) as e:
        compiled("h100-256", field)
    assert [p.field for p in e.value.problems] == [field.split("=")[0].rsplit(".", 1)[0]
                                                   if "network." in field else field.split("=")[0]]
