"""How a push tells the site team's edits in NetBox from a change of the design (no NetBox needed; the
real-NetBox run is tests/test_netbox_sites.py): the record railyard writes with each object
(`railyard_pushed`, a digest per owned field) against NetBox's answer in NetBox's own shapes."""

from __future__ import annotations

import copy
from typing import Any

from generators.compiler import compile_file
from generators.handover.netbox_sync import Edit, _body, _diff, _edits, _Ids, _pushed
from generators.views.netbox_inventory import inventory
from generators.views.netbox_model import PUSHED_FIELD, SITE_FIELD, NbObject
from tests.conftest import ROOT

DESIGN = ROOT / "tests" / "designs" / "golden-eos.yaml"


def _objects() -> tuple[list[NbObject], _Ids]:
    plan, _, _ = compile_file(DESIGN, None)
    objs = inventory(plan)
    ids = _Ids()
    for n, o in enumerate(objs, 1):  # as NetBox numbers them
        ids.ids[(o.endpoint, o.key)] = n
    return objs, ids


def _as_netbox(body: dict[str, Any]) -> dict[str, Any]:
    """The object as NetBox answers it: choices as value and label, numbers as floats, colours in
    capitals, nested objects with their id, tags as objects."""
    have: dict[str, Any] = {"id": 99}
    for k, v in body.items():
        if k == "tags":
            have[k] = [{"id": t, "slug": "railyard"} for t in v]
        elif k in ("type", "length_unit", "status", "face"):
            have[k] = {"value": v, "label": str(v).title()}
        elif k in ("length", "position", "u_height"):
            have[k] = float(v)
        elif k == "color":
            have[k] = v.upper()
        elif k in ("rack", "site", "location", "role", "device_type"):
            have[k] = {"id": v, "name": f"#{v}"}
        else:
            have[k] = copy.deepcopy(v)
    return have


def test_an_object_as_railyard_pushed_it_holds_no_edit_and_no_change() -> None:
    objs, ids = _objects()
    for o in objs:
        if o.endpoint in ("dcim/cables", "dcim/devices", "dcim/racks"):
            body = _body(o, ids, tag_id=1, site="dc1")
            have = _as_netbox(body)
            assert _diff(body, have) == [], o.key
            assert _edits(o.endpoint, o.key, o, body, have) == [], o.key
            assert body["custom_fields"][SITE_FIELD] == "dc1"
            assert set(_pushed(have)) >= set(o.fields) - {"status", "custom_fields"}, o.key


def test_a_length_changed_in_netbox_is_an_edit_a_length_changed_in_the_design_is_not() -> None:
    objs, ids = _objects()
    cable = next(o for o in objs if o.endpoint == "dcim/cables")
    body = _body(cable, ids, tag_id=1, site="dc1")
    have = _as_netbox(body)
    # the site team re-measured the cable: NetBox's length is no longer the one railyard recorded
    have["length"] = float(body["length"]) + 40
    assert _edits(cable.endpoint, cable.key, cable, body, have) == [
        Edit("dcim/cables", cable.key, "length", f"{body['length'] + 40:g}", f"{body['length']:g}")
    ]
    # the design changed the length instead: NetBox holds what railyard wrote, so it is an update
    moved = NbObject(cable.endpoint, cable.key, {**cable.fields, "length": cable.fields["length"] + 3})
    new = _body(moved, ids, tag_id=1, site="dc1")
    have = _as_netbox(body)
    assert "length" in _diff(new, have)
    assert _edits(moved.endpoint, moved.key, moved, new, have) == []
    # both: NetBox's edit would be reverted, so it is named
    have["length"] = float(body["length"]) + 40
    assert [e.field for e in _edits(moved.endpoint, moved.key, moved, new, have)] == ["length"]


def test_an_object_without_a_record_or_with_a_foreign_one_is_never_an_edit() -> None:
    """Objects of a railyard before records (or a record someone else wrote): a difference is the
    design's to make, as before."""
    objs, ids = _objects()
    rack = next(o for o in objs if o.endpoint == "dcim/racks")
    body = _body(rack, ids, tag_id=1, site="dc1")
    for record in (None, "", "not json", '["a list"]', '{"description": 5}'):
        have = _as_netbox(body)
        have["custom_fields"] = {**have["custom_fields"], PUSHED_FIELD: record}
        have["description"] = "changed by hand"
        assert "description" in _diff(body, have)
        assert _edits(rack.endpoint, rack.key, rack, body, have) == [], record


def test_tagged_vlans_netbox_lists_in_another_order_are_no_edit() -> None:
    """NetBox answers a trunk's VLANs in an order of its own: the record holds them as a set, so a
    design that changes the trunk is an update, not a revert of the site team's."""
    objs, ids = _objects()
    trunk = next(o for o in objs if o.endpoint == "dcim/interfaces" and len(o.fields.get("tagged_vlans", [])) >= 2)
    body = _body(trunk, ids, tag_id=1, site="dc1")
    have = _as_netbox(body)
    have["tagged_vlans"] = [{"id": v} for v in reversed(body["tagged_vlans"])]
    assert _diff(body, have) == []
    fewer = NbObject(trunk.endpoint, trunk.key, {**trunk.fields, "tagged_vlans": trunk.fields["tagged_vlans"][:1]})
    new = _body(fewer, ids, tag_id=1, site="dc1")
    assert "tagged_vlans" in _diff(new, have)
    assert _edits(fewer.endpoint, fewer.key, fewer, new, have) == []
    have["tagged_vlans"] = have["tagged_vlans"][:1]  # the site team dropped one VLAN by hand
    assert [e.field for e in _edits(trunk.endpoint, trunk.key, trunk, body, have)] == ["tagged_vlans"]
