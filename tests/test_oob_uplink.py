"""oob.uplink: frontend (NVIDIA's reference: the out-of-band network uplinked into in-band): no OOB
aggregation pair; every access switch's uplinks end on free ports of the frontend service leaves,
routed in the infra VRF there. Checked on what a user gets: the plan, the cable plan, the BoM and the
rendered switch configs."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from generators.asbuilt.isolation import audit_frontend
from generators.model.plan import Plan
from generators.views.netbox_inventory import inventory
from tests.conftest import DESIGNS, rendered_files

FRONTEND = ("oob.uplink=frontend",)


def _uplinks(plan: Plan) -> list[tuple[str, str, str, str]]:
    """(access switch, its port, frontend leaf, leaf port) of every OOB uplink into the frontend."""
    devs = plan.index()
    out = []
    for lk in plan.links:
        a, b = devs[lk.a_device], devs[lk.b_device]
        if a.network == "oob" and a.kind == "switch" and b.network == "frontend":
            out.append((a.name, lk.a_port, b.name, lk.b_port))
    return out


def test_oob_access_switches_uplink_into_the_frontend_service_leaves(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *FRONTEND)
    devs = plan.index()
    oob = [d for d in plan.devices if d.kind == "switch" and d.network == "oob"]
    assert oob and all(d.role == "leaf" for d in oob)  # no aggregation switch
    ups = _uplinks(plan)
    per_switch = Counter(sw for sw, _, _, _ in ups)
    want = plan.design.oob.uplinks_per_switch
    assert per_switch == {d.name: want for d in oob}
    for sw in per_switch:
        leaves = [leaf for s, _, leaf, _ in ups if s == sw]
        assert len(set(leaves)) == want  # each uplink on another leaf: one leaf down keeps the switch reachable
        assert all(devs[leaf].role == "leaf" and devs[leaf].attrs.get("service") for leaf in leaves)
    # a leaf port carries one link only (the invariants passed, but say it where it matters)
    assert len({(leaf, port) for _, _, leaf, port in ups}) == len(ups)
    # no link of the OOB network goes anywhere else upward
    assert not [lk for lk in plan.links if lk.network == "oob" and lk.tier == "access-agg"]


def test_the_cable_plan_and_bom_follow_the_frontend_uplink(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *FRONTEND)
    assert plan.cables is not None and plan.bom is not None
    cabled = {
        tuple(sorted([(plan.links[i].a_device, plan.links[i].a_port), (plan.links[i].b_device, plan.links[i].b_port)]))
        for c in plan.cables
        for i in c.links
    }
    for sw, port, leaf, leaf_port in _uplinks(plan):
        assert tuple(sorted([(sw, port), (leaf, leaf_port)])) in cabled
    rows = rendered_files(compiled, "h100-256", *FRONTEND)["cabling/cables.csv"].splitlines()
    assert sum(",access-leaf," in r for r in rows) == len(_uplinks(plan))
    # the BoM buys the switches that exist: the aggregation pair is gone from the OOB category
    default = compiled("h100-256")
    agg_model = default.networks.oob.aggregation_switch

    def oob_switches(p: Plan) -> Counter[str]:
        assert p.bom is not None
        return Counter(
            {ln.part: int(ln.quantity) for ln in p.bom.lines if ln.category == "oob" and ln.kind == "switch"}
        )

    assert oob_switches(default)[agg_model] == default.networks.oob.aggregation_switches > 0
    assert oob_switches(plan) == Counter(d.model for d in plan.devices if d.kind == "switch" and d.network == "oob")
    assert agg_model not in oob_switches(plan)
    # NetBox gets the switches that exist, and the uplink cables like any other
    nb = inventory(plan)
    assert not [o for o in nb if o.endpoint == "dcim/devices" and o.key.startswith("oob-agg")]
    assert {o.key.split(".")[0] for o in nb if o.endpoint == "dcim/cables"} == {c.id for c in plan.cables}


def test_the_frontend_leaf_configs_route_the_uplinks_in_the_infra_vrf(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *FRONTEND)
    files = rendered_files(compiled, "h100-256", *FRONTEND)
    infra = next(n["vrf"] for n in plan.netplan.networks if n["name"] == "infra")
    by_leaf: dict[str, list[tuple[str, str]]] = {}
    for sw, port, leaf, leaf_port in _uplinks(plan):
        by_leaf.setdefault(leaf, []).append((leaf_port, f"{sw}:{port}"))
    assert by_leaf
    for leaf, ports in by_leaf.items():
        db = json.loads(files[f"frontend/{leaf}/config_db.json"])
        frr = files[f"frontend/{leaf}/frr.conf"]
        vrf_block = frr.split(f"router bgp {plan.netplan.asn[leaf]} vrf {infra}\n", 1)[1].split("\nexit\n", 1)[0]
        for port, peer in ports:
            assert db["PORT"][port]["admin_status"] == "up" and db["PORT"][port]["description"] == peer
            assert db["INTERFACE"][port] == {"vrf_name": infra, "ipv6_use_link_local_only": "enable"}
            assert f" neighbor {port} interface peer-group OOB" in vrf_block
            # not an underlay peer: the leaves' underlay carries only their own prefixes
            assert f" neighbor {port} interface peer-group FABRIC" not in frr
    # tenants still see only their own segments: the uplinks sit in the provider's VRF alone
    assert audit_frontend(plan, files) == []
    # the access switches' side is an ordinary routed uplink, described as going to the frontend
    for sw in {s for s, _, _, _ in _uplinks(plan)}:
        conf = files[f"oob/{sw}/frr.conf"]
        assert "neighbor FABRIC description frontend service leaves" in conf
        for s, port, _, _ in _uplinks(plan):
            if s == sw:
                assert f" neighbor {port} interface peer-group FABRIC" in conf


def test_the_default_keeps_the_aggregation_pair_and_slurm_does_not_see_the_difference(
    compiled: Callable[..., Plan],
) -> None:
    default = compiled("h100-256")
    assert default.design.oob.uplink == "aggregation"
    assert not _uplinks(default)
    assert any(d.network == "oob" and d.role == "spine" for d in default.devices)
    a = rendered_files(compiled, "h100-256")
    b = rendered_files(compiled, "h100-256", *FRONTEND)
    slurm = sorted(p for p in a if p.startswith("slurm/"))
    assert slurm and all(a[p] == b.get(p) for p in slurm)


def test_too_few_free_leaf_ports_is_refused_with_the_field(cli) -> None:
    r = cli(
        "validate",
        DESIGNS / "h100-1024-reference.yaml",
        "--set",
        "oob.uplink=frontend",
        "--set",
        "oob.uplinks_per_switch=4",
        "--set",
        "oob.racks_per_switch=1",
    )
    assert r.exit_code == 2
    assert "oob.uplink: the frontend service leaves have too few free 100G ports" in r.output
    assert "set oob.uplink: aggregation" in r.output


def test_frontend_uplink_needs_a_sonic_frontend_and_no_aggregation_model(cli, tmp_path: Path) -> None:
    p = tmp_path / "d.yaml"
    p.write_text(
        f"extends: {DESIGNS / 'h100-256.yaml'}\nfrontend:\n  vendor: eos\n  switch: DCS-7060DX5-64S\n"
        "oob:\n  uplink: frontend\n  aggregation_switch: SN4600\n"
    )
    r = cli("validate", p)
    assert r.exit_code == 2
    assert f"{p.name}:6: oob.uplink: frontend needs a SONiC frontend" in r.output
    assert f"{p.name}:7: oob.aggregation_switch: is set, but oob.uplink: frontend" in r.output
