"""The NetBox objects a site needs, as railyard keys them: the contract between the pure inventory
(`netbox_inventory.inventory(plan)`) and the REST sync (`netbox_sync`).

Every object railyard writes carries railyard's stable key in the custom field `railyard_id` and the
tag `railyard`, so a second push finds it again and a push after a design change updates or removes
only what railyard made. References between objects name the other object by (endpoint, key); the
sync turns them into NetBox ids once the referenced object exists, which is why endpoints are pushed
in `ENDPOINTS` order and removed in reverse.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

TAG = "railyard"
KEY_FIELD = "railyard_id"
# the network plane of a multi-plane backend's switches and cables (plane1, plane2, ...), a custom field
# the push makes once a site has planes; railyard's own name, so it never meets a site's own `plane`
PLANE_FIELD = "railyard_plane"
# the railyard site (its dcim/sites key) an object belongs to: keys are unique within a site, and a push
# reads, updates and deletes only its own site's objects, so many railyard sites share one NetBox
SITE_FIELD = "railyard_site"
# what railyard last wrote to the object's owned fields (a short digest per field), so a later push
# tells a change made in NetBox since (the site team's) from a change of the design
PUSHED_FIELD = "railyard_pushed"
# endpoints whose objects belong to one site (scoped by SITE_FIELD); the others (tenants, manufacturers,
# roles, device types and their interface templates, RIRs, ASNs, VRFs) have names NetBox holds unique
# across sites, so railyard sites share them
SITE_SCOPED: frozenset[str] = frozenset(
    {
        "dcim/sites",
        "dcim/locations",
        "dcim/racks",
        "dcim/power-panels",
        "dcim/power-feeds",
        "dcim/devices",
        "dcim/interfaces",
        "dcim/cables",
        "ipam/vlans",
        "ipam/prefixes",
        "ipam/ip-addresses",
    }
)

# NetBox's cable type (dcim.choices.CableTypeChoices) of each medium of the cable plan
NETBOX_TYPE = {
    "dac": "dac-passive",
    "acc": "dac-active",
    "aoc": "aoc",
    "mmf": "mmf-om4",
    "smf": "smf-os2",
    "cat6": "cat6",
}

# dependency order of the REST endpoints railyard writes (create in this order, delete in reverse)
ENDPOINTS: tuple[str, ...] = (
    "extras/tags",
    "tenancy/tenants",
    "dcim/sites",
    "ipam/vlans",  # before interfaces: access and trunk ports name their VLANs
    "dcim/locations",
    "dcim/racks",
    "dcim/power-panels",  # a row's feed side (AC) or a power sidecar's busway (800 VDC)
    "dcim/power-feeds",  # one per circuit into a rack: a PDU's or AC shelf's whip, a sidecar's DC feed
    "dcim/manufacturers",
    "dcim/device-roles",
    "dcim/device-types",
    "dcim/interface-templates",
    "dcim/devices",
    "dcim/interfaces",
    "dcim/cables",
    "ipam/rirs",
    "ipam/asns",
    "ipam/vrfs",
    "ipam/prefixes",
    "ipam/ip-addresses",
)


class Ref(NamedTuple):
    """Another railyard object, by endpoint and key; the sync replaces it with that object's NetBox id.
    A NamedTuple, not a frozen dataclass: a 98,304-GPU site makes ~2M of them, and a tuple is built
    and hashed in C (a frozen dataclass's __init__ and __hash__ run in Python)."""

    endpoint: str
    key: str


class Termination(NamedTuple):
    """One end of a cable: a railyard interface (endpoint dcim/interfaces)."""

    interface: Ref


class _NoLate(dict[str, "Ref"]):
    """The empty `late` of every object that has none, one shared instance (NO_LATE): an empty dict
    each was ~64 bytes of each of the ~1.6M objects of a 98,304-GPU site. Read-only, so sharing it is
    safe."""

    def _refuse(self, *_: object, **__: object) -> None:
        raise TypeError("NO_LATE is shared by every NbObject without late fields: give the object its own dict")

    # every mutator refuses, whatever dict's own signature for it
    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _refuse  # type: ignore[assignment]


NO_LATE: dict[str, Ref] = _NoLate()


@dataclass(slots=True)
class NbObject:
    """One NetBox object. `fields` are the REST body railyard owns (values may be Ref, lists of Ref, or
    for cables `a_terminations`/`b_terminations` lists of Termination); fields railyard does not
    name are left as NetBox has them. `key` is unique within the endpoint and stable across compiles."""

    endpoint: str
    key: str
    fields: dict[str, Any] = field(default_factory=dict)
    # a few objects railyard updates after the device's interfaces and addresses exist
    # (device primary_ip4 / oob_ip): field -> Ref, applied in a second pass
    late: dict[str, Ref] = field(default_factory=dict)
