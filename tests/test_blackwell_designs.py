"""The Blackwell example designs (issue #14): designs/b200-1024.yaml (128 HGX B200 on NDR, NVIDIA's SU of
32) and designs/b300-xdr.yaml (144 DGX B300 on Quantum-X800 XDR, NVIDIA's XDR SU of 72). Every count is
derived from the design's own rules (servers, su_size, the catalog's radix and rails, the 1:1 ratio,
rack units and power), never copied from the compiled output."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

import pytest

from generators.model.catalog import Catalog
from generators.model.plan import Plan
from generators.model.ports import backend_ports, lane_rate, port_ends
from tests.conftest import rendered_files

Compiled = Callable[..., Plan]
DESIGNS = ["b200-1024", "b300-xdr"]


def _rails(catalog: Catalog, server: str) -> int:
    be = catalog.servers[server].backend
    assert be is not None
    return len(backend_ports(catalog, be))


def _ratio(plan: Plan) -> Fraction:
    down, up = str(plan.design.backend.oversubscription).split(":")
    return Fraction(int(down), int(up))


def _expected(plan: Plan) -> dict[str, int]:
    """The fabric a rail-optimized two-tier fat tree of these parts must have."""
    d, cat = plan.design, plan.catalog
    servers = d.compute.count
    su = math.ceil(servers / d.backend.su_size)
    rails = _rails(cat, d.compute.server)
    radix = cat.switches[d.backend.switch].ports
    leaves = su * rails  # one leaf per rail per scalable unit
    down = d.backend.su_size  # every server of the unit on its rail's leaf
    up = int(down / _ratio(plan))
    assert down + up <= radix, "the design's unit does not fit the leaf"
    return {
        "servers": servers,
        "leaves": leaves,
        "spines": math.ceil(leaves * up / radix),
        "server-leaf": servers * rails,
        "leaf-spine": leaves * up,
        "rails": rails,
        "radix": radix,
    }


@pytest.mark.parametrize("name", DESIGNS)
def test_switches_and_links_per_tier(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    want = _expected(plan)
    sw = Counter(dv.role for dv in plan.devices if dv.kind == "switch" and dv.network == "backend")
    assert sw == {"leaf": want["leaves"], "spine": want["spines"]}
    links = Counter(lk.tier for lk in plan.links if lk.network == "backend")
    assert links == {"server-leaf": want["server-leaf"], "leaf-spine": want["leaf-spine"]}
    assert sum(dv.kind == "server" for dv in plan.devices) == want["servers"]
    assert (
        want["servers"] * plan.catalog.servers[plan.design.compute.server].gpus
        == {"b200-1024": 1024, "b300-xdr": 1152}[name]
    )  # the GPU count the design is named and documented for


def test_b300_xdr_is_nvidias_two_su_xdr_superpod(compiled: Compiled) -> None:
    """NVIDIA's B300 XDR RA, Table 3, 2 SU: 144 nodes, 16 leaves, 8 spines, 1,152 + 1,152 cables; the
    rule-derived counts above meet the published table."""
    want = _expected(compiled("b300-xdr"))
    assert (want["servers"], want["leaves"], want["spines"], want["server-leaf"], want["leaf-spine"]) == (
        144,
        16,
        8,
        1152,
        1152,
    )


@pytest.mark.parametrize("name", DESIGNS)
def test_transceivers_per_kind_and_per_cage(compiled: Compiled, name: str) -> None:
    """Dedicated network racks put every backend run beyond copper's reach, so every backend link is a
    pair of optics: one twin-port part per switch cage in use, and one part per server cage (DGX B300:
    one single-port OSFP per ConnectX-8; HGX B200: one per ConnectX-7)."""
    plan = compiled(name)
    want = _expected(plan)
    cat = plan.catalog
    sw = cat.switches[plan.design.backend.switch]
    ppc = sw.port_groups[0].ports_per_cage
    used_ports = want["server-leaf"] + 2 * want["leaf-spine"]  # switch ends: one per host link, two per uplink
    be = cat.servers[plan.design.compute.server].backend
    assert be is not None
    server_cages = want["servers"] * (len(be.cages.ports) if be.cages else want["rails"])
    rows = [
        r
        for r in csv.DictReader(io.StringIO(rendered_files(compiled, name)["cabling/cables.csv"]))
        if r["network"] == "backend"
    ]
    assert all(r["a_transceiver"] and r["b_transceiver"] for r in rows)
    parts = plan.cabling.transceiver_parts if plan.cabling else {}
    twin = {p: n for p, n in parts.items() if cat.transceivers[p].ports == 2 and "osfp" in cat.transceivers[p].fits}
    single = {p: n for p, n in parts.items() if cat.transceivers[p].ports == 1}
    assert sum(twin.values()) == used_ports // ppc
    assert sum(single.values()) == server_cages
    bom = {
        r["sku"]: int(r["quantity"])
        for r in csv.DictReader(io.StringIO(rendered_files(compiled, name)["bom.csv"]))
        if r["kind"] == "transceiver" and r["category"] == "backend"
    }
    assert bom == {**twin, **single}


@pytest.mark.parametrize("name", DESIGNS)
def test_racks_pdus_and_power(compiled: Compiled, name: str) -> None:
    plan = compiled(name)
    d, cat = plan.design, plan.catalog
    sm = cat.servers[d.compute.server]
    per_rack = min(d.site.rack.units // sm.rack_units, int(d.site.rack.power_kw // sm.power_kw))
    compute = [r for r in plan.racks if r.role == "compute"]
    assert len(compute) == math.ceil(d.compute.count / per_rack)
    pdu = cat.pdus[d.site.rack.pdu]
    load: Counter[str] = Counter()  # kW per rack, from the catalog's figure for every device in it
    for dv in plan.devices:
        if dv.rack is not None and dv.kind == "switch":
            load[dv.rack] += cat.switches[dv.model].power_w / 1000
        elif dv.rack is not None and dv.kind in ("server", "management"):
            load[dv.rack] += cat.servers[dv.model].power_kw
        elif dv.rack is not None and dv.kind == "storage":
            load[dv.rack] += cat.storage_servers[dv.model].power_kw
    servers = Counter(dv.rack for dv in plan.devices if dv.kind == "server")
    assert {servers[r.name] for r in compute} == {per_rack}  # whole racks: count is a multiple here
    for r in plan.racks:
        assert r.power_kw == pytest.approx(load[r.name], abs=0.001)
        assert r.power_kw <= d.site.rack.power_kw
    for r in compute:
        assert per_rack * sm.power_kw <= r.power_kw < per_rack * sm.power_kw + 1  # + an OOB switch at most
        need = math.ceil(r.power_kw / pdu.capacity_kw)
        if d.site.rack.power_redundancy == "2N":  # either feed alone carries the rack
            assert r.pdus == 2 * need
        else:  # N+1 (b300-xdr, as NVIDIA's RA): the rack carried with any one PDU down
            assert r.pdus == need + 1 and (r.pdus - 1) * pdu.capacity_kw >= r.power_kw
    for r in plan.racks:
        assert sum(dv.kind == "pdu" and dv.rack == r.name for dv in plan.devices) == r.pdus


def test_b300_xdr_cables_keep_to_the_xdr_rule(compiled: Compiled) -> None:
    """No multimode, AOC or passive copper on the XDR fabric, read from the cable sheet; every backend
    link runs 200G lanes, so the catalog's XDR rule governs every one."""
    plan = compiled("b300-xdr")
    ends = port_ends(plan, plan.catalog, plan.design)
    models = {dv.name: f"{dv.kind}:{dv.model}" for dv in plan.devices}
    lanes = {
        lane_rate(ends[models[lk.a_device]][lk.a_port], ends[models[lk.b_device]][lk.b_port])
        for lk in plan.links
        if lk.network == "backend"
    }
    assert lanes == {200}
    found = plan.catalog.media_rule(800, 200, "infiniband")
    assert found is not None
    rule = found[1]
    rows = [
        r
        for r in csv.DictReader(io.StringIO(rendered_files(compiled, "b300-xdr")["cabling/cables.csv"]))
        if r["network"] == "backend"
    ]
    assert len(rows) == sum(lk.network == "backend" for lk in plan.links)
    assert not {r["media"] for r in rows} & {"mmf", "aoc", "dac"}
    assert {r["media"] for r in rows} <= set(rule.media)
    for r in rows:
        for x in (r["a_transceiver"], r["b_transceiver"]):
            assert not x or 200 in plan.catalog.transceivers[x].lane_gbps, r


def test_dgx_b300_backend_is_eight_single_port_cages(compiled: Compiled) -> None:
    """The DGX B300 brings each ConnectX-8 out to its own 800G OSFP (no twin system cages): eight host
    optics per DGX, each to its own rail leaf."""
    plan = compiled("b300-xdr")
    rows = [
        r
        for r in csv.DictReader(io.StringIO(rendered_files(compiled, "b300-xdr")["cabling/cables.csv"]))
        if r["network"] == "backend" and r["tier"] == "server-leaf"
    ]
    per_server = Counter(r["a_device"] for r in rows)
    assert set(per_server.values()) == {_rails(plan.catalog, "dgx-b300")} == {8}
    leaves = {(r["a_device"], r["b_device"]) for r in rows}
    assert len(leaves) == len(rows)  # each port to a different (rail) leaf
