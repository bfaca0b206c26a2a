"""Arista EOS frontend through pyavd: AVD accepts the inputs railyard derives from the plan, and the
EOS configs it renders carry the plan's ASNs, cabling, tenants and addresses."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import yaml

from generators.model.plan import Plan
from generators.vendors.eos import AvdValidationError, avd_inputs, render_frontend_eos
from tests.conftest import rendered_files

EOS = ("frontend.vendor=eos", "frontend.switch=DCS-7060DX5-64S")


def eos_files(compiled: Callable[..., Plan], name: str) -> dict[str, str]:
    return rendered_files(compiled, name, *EOS)


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
    """A wrong input (a string where AVD wants a number) makes the renderer fail with AVD's message."""
    import generators.vendors.eos as mod

    real = mod.avd_inputs

    def broken(plan: Plan) -> tuple[dict, dict]:
        fabric, hosts = real(plan)
        fabric["bgp_maximum_paths"] = "many"
        return fabric, hosts

    monkeypatch.setattr(mod, "avd_inputs", broken)
    with pytest.raises(AvdValidationError, match="bgp_maximum_paths"):
        render_frontend_eos(compiled("h100-256", *EOS))


def test_eos_configs_follow_the_plan(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *EOS)
    files = eos_files(compiled, "h100-256")
    np_ = plan.netplan
    fe = [d for d in plan.devices if d.network == "frontend" and d.kind == "switch"]
    assert sorted(p for p in files if p.endswith("eos.cfg") and p.startswith("frontend/")) == sorted(
        f"frontend/{d.name}/eos.cfg" for d in fe)
    assert not [p for p in files if p.startswith("frontend/") and p.endswith(("frr.conf", "config_db.json"))]
    for d in fe:
        cfg = files[f"frontend/{d.name}/eos.cfg"]
        assert f"\nrouter bgp {np_.asn[d.name]}\n" in cfg
        assert f"ip address {np_.loopbacks[d.name]}" in cfg
        cabled = {lk.a_port if lk.a_device == d.name else lk.b_port for lk in plan.links
                  if lk.tier == "leaf-spine" and d.name in (lk.a_device, lk.b_device)}
        assert set(re.findall(r"neighbor interface (\S+) peer-group", cfg)) == cabled
    leaf1 = files["frontend/fe-leaf01/eos.cfg"]
    acme = next(n for n in np_.networks if n["name"] == "acme")
    assert f"vxlan vrf {acme['vrf']} vni {acme['l3vni']}" in leaf1
    assert f"vxlan vlan {acme['hosts']['vlan']} vni {acme['hosts']['vni']}" in leaf1
    assert f"route-target import evpn 64512:{acme['l3vni']}" in leaf1  # same RTs as the SONiC configs
    assert f"ip address virtual {acme['hosts']['gateway']}/" in leaf1
    # the storage leaves trunk every network's storage VLAN to the storage front-ends
    storage_vlans = ",".join(str(n["storage"]["vlan"]) for n in np_.networks)
    assert f"switchport trunk allowed vlan {storage_vlans}" in files["frontend/fe-leaf03/eos.cfg"]
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
