"""The NetBox inventory of compiled example plans: counts against the plan, references that resolve in
push order, stable unique keys, and NetBox's own vocabularies."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from generators.model.plan import Plan, dumps
from generators.views.addresses import addresses
from generators.views.netbox_inventory import INTERFACE_TYPES, inventory
from generators.views.netbox_model import ENDPOINTS, NETBOX_TYPE, NbObject, Ref, Termination

DESIGNS = ["h100-256", "h100-1024-tor", "h100-1024-reference"]
# NetBox 4.x CableTypeChoices that the cable plan's media map to
CABLE_TYPES = {"cat6", "dac-active", "dac-passive", "mmf-om4", "smf-os2", "aoc"}
_INV: dict[str, list[NbObject]] = {}


@pytest.fixture(params=DESIGNS)
def case(request: pytest.FixtureRequest, compiled: Callable[..., Plan]) -> tuple[Plan, list[NbObject]]:
    plan = compiled(request.param)
    if request.param not in _INV:
        _INV[request.param] = inventory(plan)
    return plan, _INV[request.param]


def by(inv: list[NbObject], endpoint: str) -> dict[str, NbObject]:
    return {o.key: o for o in inv if o.endpoint == endpoint}


def refs(value: Any) -> list[Ref]:
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, Termination):
        return [value.interface]
    if isinstance(value, list):
        return [r for v in value for r in refs(v)]
    return []


def test_keys_unique_and_endpoints_in_order(case: tuple[Plan, list[NbObject]]) -> None:
    _, inv = case
    keys = Counter((o.endpoint, o.key) for o in inv)
    assert [k for k, n in keys.items() if n > 1] == []
    order = [ENDPOINTS.index(o.endpoint) for o in inv]
    assert order == sorted(order)
    for o in inv:
        assert o.key and not {"tags", "custom_fields"} & set(o.fields)  # the sync adds those


def test_every_ref_resolves_earlier(case: tuple[Plan, list[NbObject]]) -> None:
    _, inv = case
    known = {(o.endpoint, o.key) for o in inv}
    for o in inv:
        for name, value in o.fields.items():
            for r in refs(value):
                assert (r.endpoint, r.key) in known, (o.endpoint, o.key, name, r)
                assert ENDPOINTS.index(r.endpoint) < ENDPOINTS.index(o.endpoint), (o.endpoint, o.key, name)
        for name, r in o.late.items():
            # a late field is set in a second pass, once every endpoint has been pushed
            assert (r.endpoint, r.key) in known, (o.endpoint, o.key, name, r)


def test_devices_at_their_units(case: tuple[Plan, list[NbObject]]) -> None:
    plan, inv = case
    devices = by(inv, "dcim/devices")
    types = by(inv, "dcim/device-types")
    assert len(devices) == len(plan.devices)
    for d in plan.devices:
        f = devices[d.name].fields
        if d.unit is None:
            assert "position" not in f and "face" not in f
            assert types[f["device_type"].key].fields["u_height"] == 0, d.name
        else:
            assert f["position"] == d.unit and f["face"] == "front"
            assert types[f["device_type"].key].fields["u_height"] > 0
        assert (f["rack"].key if "rack" in f else None) == d.rack


def test_racks_have_the_design_height(case: tuple[Plan, list[NbObject]]) -> None:
    plan, inv = case
    racks = by(inv, "dcim/racks")
    assert {k: o.fields["u_height"] for k, o in racks.items()} == {r.name: r.units for r in plan.racks}
    assert all(r.units == 48 for r in plan.racks)  # NetBox's default would be 42


def test_interfaces_cover_links_and_addresses(case: tuple[Plan, list[NbObject]]) -> None:
    plan, inv = case
    ifaces = by(inv, "dcim/interfaces")
    for lk in plan.links:
        assert f"{lk.a_device}:{lk.a_port}" in ifaces and f"{lk.b_device}:{lk.b_port}" in ifaces
    for a in addresses(plan):
        for dev, port in a.on:
            assert f"{dev}:{port}" in ifaces
    used = {o.fields["type"] for o in ifaces.values()}
    used |= {o.fields["type"] for o in by(inv, "dcim/interface-templates").values()}
    assert used <= INTERFACE_TYPES
    # each interface is named as its device type names the port
    templates = {(o.fields["device_type"].key, o.fields["name"]) for o in by(inv, "dcim/interface-templates").values()}
    devices = by(inv, "dcim/devices")
    physical = [o for o in ifaces.values() if o.fields["type"] not in ("virtual", "lag")]
    for o in physical:
        assert (devices[o.fields["device"].key].fields["device_type"].key, o.fields["name"]) in templates


def test_port_types_follow_the_hardware(compiled: Callable[..., Plan]) -> None:
    inv = inventory(compiled("h100-1024-reference"))
    t = {o.key: o.fields["type"] for o in inv if o.endpoint == "dcim/interface-templates"}
    assert t["QM9700:1/1/1"] == "infiniband-ndr" and t["QM9700:mgmt0"] == "1000base-t"
    assert t["hgx-h100:mlx5_0"] == "infiniband-ndr" and t["hgx-h100:bmc"] == "1000base-t"
    assert t["SN4600:Ethernet0"] == "200gbase-x-qsfp56"
    mgmt = {o.key for o in inv if o.endpoint == "dcim/interface-templates" and o.fields["mgmt_only"]}
    assert "QM9700:mgmt0" in mgmt and "hgx-h100:bmc" in mgmt and "hgx-h100:mlx5_0" not in mgmt


def test_one_netbox_cable_per_physical_cable(case: tuple[Plan, list[NbObject]]) -> None:
    plan, inv = case
    cables = by(inv, "dcim/cables")
    assert plan.cables is not None and plan.cabling is not None
    assert len(cables) == sum(c.physical for c in plan.cables) == sum(plan.cabling.cables.values())
    ends = Counter(
        t.interface.key for o in cables.values() for t in o.fields["a_terminations"] + o.fields["b_terminations"]
    )
    assert [k for k, n in ends.items() if n > 1] == []  # an interface takes one cable
    # every link's two ports are the two sides of one cable
    side = {
        t.interface.key: (o.key, s) for o in cables.values() for s in ("a", "b") for t in o.fields[f"{s}_terminations"]
    }
    for lk in plan.links:
        (ka, sa), (kb, sb) = side[f"{lk.a_device}:{lk.a_port}"], side[f"{lk.b_device}:{lk.b_port}"]
        assert ka == kb and sa != sb
    for c in plan.cables:
        if c.physical > 1:
            assert [cables[f"{c.id}.{n}"].fields["label"] for n in range(1, c.physical + 1)] == c.labels
        else:
            o = cables[c.id]
            assert o.fields["type"] == NETBOX_TYPE[c.media]
            # each link's two ports, once: a twin cage's two ports are two terminations
            assert len(o.fields["a_terminations"]) == len(o.fields["b_terminations"]) == len(c.links)
    for o in cables.values():
        assert o.fields["type"] in CABLE_TYPES and len(o.fields["label"]) <= 100  # NetBox's label limit
        assert o.fields["status"] == "planned" and o.fields["length_unit"] == "m"


def test_splitters_are_one_cable(compiled: Callable[..., Plan]) -> None:
    """Top-of-rack: a copper splitter from a twin leaf cage to two server NICs is one NetBox cable
    with the two NICs on one side and the cage's two ports on the other."""
    plan = compiled("h100-1024-tor")
    assert plan.cables is not None
    split = next(c for c in plan.cables if c.shape.startswith("split") and c.physical == 1)
    o = by(inventory(plan), "dcim/cables")[split.id]
    nics = [t.interface.key for t in o.fields["a_terminations"]]
    cage = [t.interface.key for t in o.fields["b_terminations"]]
    links = [plan.links[k] for k in split.links]
    assert nics == [f"{lk.a_device}:{lk.a_port}" for lk in links] and len(nics) == 2
    assert cage == [f"{lk.b_device}:{lk.b_port}" for lk in links] and len({lk.b_device for lk in links}) == 1
    assert o.fields["label"] == split.id and o.fields["type"] == "dac-passive"
    assert o.fields["description"] == "; ".join(split.labels)


def test_addresses_bound_and_primary(case: tuple[Plan, list[NbObject]]) -> None:
    plan, inv = case
    ifaces = by(inv, "dcim/interfaces")
    ips = by(inv, "ipam/ip-addresses")
    for o in ips.values():
        assert o.fields["assigned_object_type"] == "dcim.interface"
        assert o.fields["assigned_object_id"].key in ifaces
    # anycast gateways once per leaf that carries them; every other address once
    planned = addresses(plan)
    assert len(ips) == sum(len(a.on) for a in planned)
    assert all(len(a.on) == 1 for a in planned if a.role != "anycast")
    devices = by(inv, "dcim/devices")
    assert plan.netplan is not None
    for d in plan.devices:
        late = devices[d.name].late
        for name in ("primary_ip4", "oob_ip"):
            if name in late:
                # NetBox accepts a primary or OOB address only on the device's own interface
                ip = ips[late[name].key]
                assert ifaces[ip.fields["assigned_object_id"].key].fields["device"].key == d.name
        if d.name in plan.netplan.hosts or d.name in plan.netplan.loopbacks:
            assert "primary_ip4" in late
    assert all("oob_ip" in devices[r["device"]].late for r in plan.netplan.oob["ports"])


def test_ipam_matches_the_ip_plan(case: tuple[Plan, list[NbObject]]) -> None:
    plan, inv = case
    assert plan.netplan is not None
    assert set(by(inv, "ipam/vrfs")) == {n["vrf"] for n in plan.netplan.networks}
    assert set(by(inv, "tenancy/tenants")) == {n["tenant"] for n in plan.netplan.networks if n["tenant"]}
    assert {o.fields["asn"] for o in by(inv, "ipam/asns").values()} == set(plan.netplan.asn.values())
    assert len(by(inv, "ipam/prefixes")) == 3 + 2 * len(plan.netplan.networks) + 2 * len(plan.netplan.oob["subnets"])


def test_deterministic(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    assert inventory(plan) == inventory(plan)
    # a push from plan.json (railyard compile's output) writes exactly what a push from the design does
    assert inventory(Plan.from_dict(json.loads(dumps(plan)))) == inventory(plan)


def test_switch_ports_carry_the_vlans_their_configs_set(case: tuple[Plan, list[NbObject]]) -> None:
    from generators.views.switches import frontend_views, oob_views

    plan, inv = case
    ifaces = by(inv, "dcim/interfaces")
    seen = Counter()
    for net, views in (("frontend", frontend_views(plan)), ("oob", oob_views(plan))):
        for sw, view in views.items():
            for use in view.ports.values():
                f = ifaces[f"{sw}:{use.port}"].fields
                if use.tagged:
                    assert f["mode"] == "tagged" and f["untagged_vlan"] is None
                    assert [r.key for r in f["tagged_vlans"]] == [f"{net}/{v}" for v in use.tagged]
                    seen["tagged"] += 1
                elif use.untagged is not None:
                    assert f["mode"] == "access" and f["untagged_vlan"] == Ref("ipam/vlans", f"{net}/{use.untagged}")
                    seen["access"] += 1
                else:
                    assert f["mode"] is None and f["tagged_vlans"] == []
    assert seen["access"] > 0 and seen["tagged"] > 0  # server and BMC ports; the storage trunks
    # a server's port has no VLAN of its own: the leaf tags nothing for it
    servers = {d.name for d in plan.devices if d.kind == "server"}
    assert all(o.fields.get("mode") is None for o in ifaces.values() if o.fields["device"].key in servers)
