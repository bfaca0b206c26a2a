"""Cumulus Linux NVUE configs of a Spectrum-X backend (b300-spectrumx on SN5600-800G-CL): one
startup.yaml per backend switch, checked against the plan's links, the backend network plan and the
cable sheet, never against a compiled output.

NVUE's own schema (the OpenAPI document each Cumulus Linux release publishes) is not available offline
(no package on PyPI ships it), so the documents are checked for the NVUE shape railyard relies on: a
list holding one ``set:`` mapping, and the paths the NVUE reference documents for each feature.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Callable
from ipaddress import IPv4Interface
from pathlib import Path
from typing import Any

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.design import tenant_members
from generators.model.errors import DesignError
from generators.model.plan import Plan, required
from generators.renderers import render_all
from generators.vendors import render_backend
from tests.conftest import DESIGNS, rendered_files, rendered_yaml

Compiled = Callable[..., Plan]
SX = "b300-spectrumx"
FABRIC = ("leaf-spine", "spine-core")


def _docs(compiled: Compiled, *overrides: str) -> dict[str, dict[str, Any]]:
    """{switch: its startup.yaml's `set` mapping}, after checking the document's NVUE shape."""
    docs = rendered_yaml(compiled, SX, *overrides)  # parsed once per run: 59 files, 3 MB
    out: dict[str, dict[str, Any]] = {}
    for path in docs:
        m = re.fullmatch(r"backend/([^/]+)/startup\.yaml", path)
        if m is None:
            continue
        doc = docs[path]
        assert isinstance(doc, list) and len(doc) == 1 and list(doc[0]) == ["set"], path
        out[m.group(1)] = doc[0]["set"]
    return out


def _backend_switches(plan: Plan) -> list[str]:
    return [d.name for d in plan.devices if d.kind == "switch" and d.network == "backend"]


def test_one_startup_yaml_per_backend_switch_named_for_it(compiled: Compiled) -> None:
    plan = compiled(SX)
    docs = _docs(compiled)
    assert sorted(docs) == sorted(_backend_switches(plan))
    assert all(d["system"]["hostname"] == name for name, d in docs.items())
    files = rendered_files(compiled, SX)
    assert not [p for p in files if p.startswith("backend/") and not p.endswith("/startup.yaml")]


def test_every_fabric_link_is_a_bgp_unnumbered_session_from_both_ends(compiled: Compiled) -> None:
    plan = compiled(SX)
    docs = _docs(compiled)
    want: dict[str, set[str]] = {n: set() for n in docs}
    for lk in plan.links:
        if lk.network == "backend" and lk.tier in FABRIC:
            want[lk.a_device].add(lk.a_port)
            want[lk.b_device].add(lk.b_port)
    assert any(want.values())
    for name, d in docs.items():
        neighbors = d["vrf"]["default"]["router"]["bgp"]["neighbor"]
        assert set(neighbors) == want[name], f"{name}: a session per fabric port, no others"
        for port, n in neighbors.items():
            assert (n["type"], n["remote-as"]) == ("unnumbered", "external"), (name, port)
            assert "ip" not in d["interface"][port], f"{name} {port}: unnumbered, no address"
            assert n["address-family"]["l2vpn-evpn"]["enable"] == "on"  # carries the tenants' type-5 routes


def test_every_server_port_has_its_31_in_its_tenants_vrf(compiled: Compiled) -> None:
    plan = compiled(SX)
    bn = required(plan.backend_net, "backend_net")
    docs = _docs(compiled)
    owner = {h: t for t, hs in tenant_members(plan.design).items() for h in hs}
    vrf_of = {v.tenant: v.name for v in bn.vrfs}
    by_port = {(p.switch, p.port): p for p in bn.ports}
    server_links = [lk for lk in plan.links if lk.network == "backend" and lk.tier == "server-leaf"]
    assert server_links
    seen: set[str] = set()
    for lk in server_links:
        ip = docs[lk.b_device]["interface"][lk.b_port]["ip"]
        planned = by_port[(lk.b_device, lk.b_port)]
        assert list(ip["address"]) == [planned.address], (lk.b_device, lk.b_port)
        assert ip["vrf"] == vrf_of[owner.get(lk.a_device)], f"{lk.b_device} {lk.b_port}: its server's tenant's VRF"
        net = IPv4Interface(planned.address).network
        assert net.prefixlen == 31 and str(net) not in seen
        seen.add(str(net))
    for name, d in docs.items():
        # the tenants' /31s are known inside their VRFs only: the default VRF announces the loopback alone
        assert list(d["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]["network"]) == [
            s.loopback for s in bn.switches if s.name == name
        ]


def test_asn_router_id_and_loopback_are_the_plans(compiled: Compiled) -> None:
    plan = compiled(SX)
    bn = required(plan.backend_net, "backend_net")
    docs = _docs(compiled)
    for s in bn.switches:
        bgp = docs[s.name]["router"]["bgp"]
        assert (bgp["autonomous-system"], bgp["router-id"]) == (s.asn, s.loopback.split("/")[0])
        assert list(docs[s.name]["interface"]["lo"]["ip"]["address"]) == [s.loopback]


def test_tenant_vrfs_are_evpn_type5_on_their_leaves_only(compiled: Compiled) -> None:
    plan = compiled(SX)
    bn = required(plan.backend_net, "backend_net")
    assert bn.overlay == "evpn-type5"
    docs = _docs(compiled)
    for s in bn.switches:
        d = docs[s.name]
        assert set(d["vrf"]) - {"default"} == set(s.vrfs), s.name
        assert ("nve" in d) == bool(s.vrfs), f"{s.name}: a VTEP exactly where tenant VRFs end"
        if s.vrfs:
            assert d["nve"]["vxlan"]["source"]["address"] == s.loopback.split("/")[0]
    for v in bn.vrfs:
        for leaf in v.leaves:
            vrf = docs[leaf]["vrf"][v.name]
            assert list(vrf["evpn"]["vni"]) == [v.l3vni]
            bgp = vrf["router"]["bgp"]
            assert list(bgp["route-import"]["from-evpn"]["route-target"]) == [v.route_target]
            assert list(bgp["route-export"]["to-evpn"]["route-target"]) == [v.route_target]
    assert len({v.route_target for v in bn.vrfs}) == len(bn.vrfs) >= 2


def test_roce_lossless_adaptive_routing_and_pfc_watchdog(compiled: Compiled) -> None:
    plan = compiled(SX)
    bn = required(plan.backend_net, "backend_net")
    docs = _docs(compiled)
    for p in bn.ports:
        port = docs[p.switch]["interface"][p.port]
        assert port["qos"]["pfc-watchdog"] == {"state": "enable"}, (p.switch, p.port)
        assert port["link"]["mtu"] == bn.switch_mtu == 9216
        assert ("router" in port) == p.fabric, f"{p.switch} {p.port}: adaptive routing on fabric ports only"
        if p.fabric:
            assert port["router"]["adaptive-routing"]["enable"] == "on"
    for d in docs.values():
        assert d["qos"]["roce"] == {"enable": "on", "mode": "lossless"}
        assert d["router"]["adaptive-routing"]["enable"] == "on"


def test_port_names_and_breakouts_match_the_cable_sheet(compiled: Compiled) -> None:
    plan = compiled(SX)
    docs = _docs(compiled)
    rows = [
        r
        for r in csv.DictReader(io.StringIO(rendered_files(compiled, SX)["cabling/cables.csv"]))
        if r["network"] == "backend"
    ]
    ends = {(r[f"{e}_device"], r[f"{e}_port"]) for r in rows for e in "ab" if r[f"{e}_device"] in docs}
    assert ends
    configured = {(n, p) for n, d in docs.items() for p, i in d["interface"].items() if "description" in i}
    assert configured == ends, "every cabled switch port is configured under its cable-sheet name, and no other"
    whole = plan.catalog.switches[plan.design.backend.switch]
    speed = plan.networks.backend.speed_gbps
    split_n = whole.breakout_for(speed)
    (group,) = whole.port_groups
    assert split_n == 2 and group.lanes is not None
    for name, port in ends:
        parent = re.fullmatch(r"(swp\d+)s\d+", port)
        assert parent, f"{name} {port}: a split Cumulus port"
        assert docs[name]["interface"][parent.group(1)]["link"]["breakout"] == {
            f"{split_n}x": {"lanes-per-port": group.lanes // split_n}
        }


def test_cumulus_and_sonic_chassis_build_the_same_cluster(compiled: Compiled) -> None:
    """The OS is the only difference: the same devices, links (ports renamed), cables, optics and BoM
    apart from the switch's model key."""
    cl, sonic = compiled(SX), compiled(SX, "backend.switch=SN5600-800G")
    assert [(d.name, d.role, d.kind) for d in cl.devices] == [(d.name, d.role, d.kind) for d in sonic.devices]
    assert [(lk.a_device, lk.b_device, lk.tier, lk.speed_gbps) for lk in cl.links] == [
        (lk.a_device, lk.b_device, lk.tier, lk.speed_gbps) for lk in sonic.links
    ]
    # cable ids hash their ends' port names, which the OS renames (swp1s0 for Ethernet0): the rest is equal
    assert [(c.parts, c.routed_m) for c in cl.cables or []] == [(c.parts, c.routed_m) for c in sonic.cables or []]
    bom_cl, bom_sonic = required(cl.bom, "bom"), required(sonic.bom, "bom")

    def lines(bom: Any) -> Counter[tuple[object, ...]]:
        return Counter((x.category, x.kind, x.sku, x.quantity, x.unit_usd) for x in bom.lines)

    assert lines(bom_cl) == lines(bom_sonic) and bom_cl.total_usd == bom_sonic.total_usd
    assert {x.part for x in bom_cl.lines} - {x.part for x in bom_sonic.lines} == {"SN5600-800G-CL@2x400G"}
    assert cl.catalog.switches["SN5600-800G-CL"].os == "cumulus"
    # the SONiC chassis renders no NVUE file (its backend configs are the SONiC renderer's)
    assert not [p for p in render_backend(sonic) if p.endswith("startup.yaml")]


def test_the_same_design_renders_byte_identical_configs(compiled: Compiled) -> None:
    first = {p: t for p, t in rendered_files(compiled, SX).items() if p.startswith("backend/")}
    again = {p: t for p, t in render_all(compile_file(DESIGNS / f"{SX}.yaml")[0]).items() if p.startswith("backend/")}
    assert first == again and first


def test_a_cumulus_switch_with_sonic_port_names_is_refused_naming_the_catalog_field(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(DESIGNS / f"{SX}.yaml"),
                "catalog": {
                    "switches": {
                        "SN5600-800G-CL": {
                            "port_groups": [
                                {
                                    "count": 64,
                                    "speed_gbps": 800,
                                    "breakout": {400: 2},
                                    "connector": "osfp",
                                    "lanes": 8,
                                    "name": "Ethernet{lane}",
                                }
                            ]
                        }
                    }
                },
            }
        )
    )
    with pytest.raises(DesignError) as exc:
        render_backend(compile_file(path)[0])
    (p,) = exc.value.problems
    assert p.field == "catalog.switches.SN5600-800G-CL.port_groups"
    assert "'Ethernet0'" in p.message and "swp{n}" in p.hint


def test_a_breakout_name_without_a_breakout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(DESIGNS / f"{SX}.yaml"),
                "catalog": {
                    "switches": {
                        "SN5600-CL": {
                            "port_groups": [
                                {
                                    "count": 128,
                                    "speed_gbps": 400,
                                    "connector": "osfp",
                                    "ports_per_cage": 2,
                                    "lanes": 4,
                                    "name": "swp{cage}s{s}",
                                    "breakout_name": "swp{n}",
                                }
                            ]
                        }
                    }
                },
            }
        )
    )
    with pytest.raises(DesignError) as exc:
        compile_file(path)
    (p,) = exc.value.problems
    assert p.field == "catalog.switches.SN5600-CL.port_groups.0.breakout_name" and "no breakout" in p.message
    assert p.where.startswith(str(path))
