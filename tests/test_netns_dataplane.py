"""The config_db.json -> namespace translator (tests/netns_dataplane.py) on the generated files, without
daemons: it must read back what the plan decided (so the namespace tests build the configs' data plane,
not one of their own), and refuse what it cannot build."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from generators.model.plan import Plan
from tests import netns_dataplane as ndp
from tests.conftest import rendered_files


def config_db(compiled: Callable[..., Plan], switch: str, *overrides: str) -> dict[str, Any]:
    return json.loads(rendered_files(compiled, "h100-256", *overrides)[f"frontend/{switch}/config_db.json"])


def test_a_service_leaf_reads_back_as_the_plan_built_it(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    np_ = plan.netplan
    assert np_ is not None
    dp = ndp.from_config_db("fe-svc01", config_db(compiled, "fe-svc01"))
    assert dp.vtep == np_.loopbacks["fe-svc01"].split("/")[0]
    assert dp.vrfs == {n["vrf"]: n["l3vni"] for n in np_.networks}
    storage_ports = sorted(
        lk.b_port
        for lk in plan.links
        if lk.network == "frontend"
        and lk.tier == "server-leaf"
        and lk.b_device == "fe-svc01"
        and lk.a_device.startswith("stor")
    )
    assert storage_ports
    for n in np_.networks:
        seg = dp.segments[n["storage"]["vlan"]]
        assert (seg.vrf, seg.vni, seg.mac) == (n["vrf"], n["storage"]["vni"], np_.anycast_gateway_mac)
        assert seg.addresses == (f"{n['storage']['gateway']}/{n['storage']['subnet'].split('/')[1]}",)
        assert sorted(seg.tagged) == storage_ports and not seg.untagged  # a trunk to every storage server
        l3 = dp.segments[n["l3vni_vlan"]]
        assert (l3.vrf, l3.vni, l3.addresses, l3.mac) == (n["vrf"], n["l3vni"], (), None)  # the system MAC
    assert {s for s, _ in dp.memberships(storage_ports[0])} == {dp.segments[n["storage"]["vlan"]] for n in np_.networks}


def test_a_release_with_sag_gives_the_sag_gateway_mac(compiled: Callable[..., Plan]) -> None:
    doc = config_db(compiled, "fe-leaf01", "frontend.sonic_release=master")
    dp = ndp.from_config_db("fe-leaf01", doc)
    gateways = [s for s in dp.segments.values() if s.addresses]
    assert gateways and {s.mac for s in gateways} == {doc["SAG"]["GLOBAL"]["gateway_mac"]}
    del doc["SAG"]
    with pytest.raises(ndp.Untranslatable, match="static anycast gateway but SAG has no gateway_mac"):
        ndp.from_config_db("fe-leaf01", doc)


def test_what_it_cannot_build_is_refused_by_name(compiled: Callable[..., Plan]) -> None:
    doc = config_db(compiled, "fe-leaf01")
    with pytest.raises(ndp.Untranslatable, match="tables PORTCHANNEL have no namespace translation"):
        ndp.from_config_db("fe-leaf01", {**doc, "PORTCHANNEL": {"PortChannel1": {}}})
    moved = {**doc, "VXLAN_TUNNEL": {"vtep": {"src_ip": "192.0.2.1"}}}
    with pytest.raises(ndp.Untranslatable, match=r"src_ip 192\.0\.2\.1 is on no LOOPBACK_INTERFACE"):
        ndp.from_config_db("fe-leaf01", moved)
    vlan = next(k for k, v in doc["VLAN_INTERFACE"].items() if "|" not in k and "mac_addr" in v)
    wrong = {**doc, "VLAN_INTERFACE": {**doc["VLAN_INTERFACE"], vlan: {"vrf_name": "Vrf_nobody"}}}
    with pytest.raises(ndp.Untranslatable, match=f"{vlan} vrf_name Vrf_nobody is not in VRF"):
        ndp.from_config_db("fe-leaf01", wrong)


def test_routed_ports_in_a_vrf_read_back(compiled: Callable[..., Plan]) -> None:
    """oob.uplink: frontend makes OOB uplinks routed ports of the infra VRF on the service leaves."""
    plan = compiled("h100-256", "oob.uplink=frontend")
    uplinks = sorted(
        lk.b_port if lk.b_device == "fe-svc01" else lk.a_port
        for lk in plan.links
        if lk.tier == "access-leaf" and "fe-svc01" in (lk.a_device, lk.b_device)
    )
    assert uplinks
    dp = ndp.from_config_db("fe-svc01", config_db(compiled, "fe-svc01", "oob.uplink=frontend"))
    infra = next(n["vrf"] for n in (plan.netplan.networks if plan.netplan else []) if n["index"] == 0)
    assert {p: (r.vrf, r.addresses) for p, r in dp.routed.items()} == {p: (infra, ()) for p in uplinks}
