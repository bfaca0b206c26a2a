"""The NetBox bulk-import files (`netbox/NN-<object>.{csv,yaml}` and `netbox/README.md`): the whole
site as NetBox 4.7's own import pages take it, for a site team without API access.

They are a translation of the REST push's inventory (`handover.netbox_inventory.inventory`), not a
second inventory: every `NbObject` becomes one row (or, for an interface template, one entry of its
device type's YAML document), and every `Ref` becomes the natural name NetBox's import forms look the
other object up by (a site, rack or device by name, a device type by model, a VLAN by site and vid).
A field of the inventory that no import form can carry is named in `NOT_IN_CSV` with the reason, and
the translation refuses any other field, so a field added to the inventory fails here until it is
given a column or a reason.

What NetBox 4.7's import forms decide (dcim/ipam/tenancy ``forms/bulk_import.py``):
- interface templates have no import page of their own; the Device Types page takes them nested in
  a YAML (or JSON) device type, the device-type library's format, so step 07 is YAML;
- a device gets its interfaces from its type's templates when it is created, so the interfaces file
  holds only the virtual ones railyard adds (loopbacks, SVIs, a server's bond); a template-made
  interface's speed, peer description, bond membership and VLANs would need an update, which an import
  does only by NetBox id;
- a cable's side takes several terminations (`"eth0,eth1"`, one device or one per name), so a twin
  or splitter cable is one row, as it is one NetBox cable;
- an address names its device and interface, and `is_primary` / `is_oob` set the device's primary
  and out-of-band address, so no step after the addresses is needed;
- a prefix is scoped by `scope_name`, a VLAN by `vlan_site` and its vid; an ASN has no site column.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from generators.model.plan import Plan
from generators.text.csvtext import csv_text
from generators.text.templating import environment
from generators.text.yamltext import SAFE_DUMPER
from generators.views.netbox_model import NbObject, Ref, Termination

NETBOX_VERSION = "4.7"


@dataclass(frozen=True, slots=True)
class Step:
    """One import: the file, the inventory endpoint it holds and NetBox's import page for it."""

    number: int
    name: str  # file stem after the number
    endpoint: str
    fmt: str  # csv or yaml
    columns: tuple[str, ...] = ()  # CSV header (YAML: the keys of a device type)

    @property
    def path(self) -> str:
        return f"netbox/{self.number:02d}-{self.name}.{self.fmt}"

    @property
    def page(self) -> str:
        """The UI page of the import (under the NetBox URL)."""
        return f"/{self.endpoint}/import/"


# Import order: each file refers only to objects of the files before it. The numbers are fixed (a
# design without ASNs just has no 11/12), so a file keeps its name across designs.
STEPS: tuple[Step, ...] = (
    Step(1, "tenants", "tenancy/tenants", "csv", ("name", "slug", "description")),
    Step(2, "sites", "dcim/sites", "csv", ("name", "slug", "status", "description")),
    Step(3, "locations", "dcim/locations", "csv", ("site", "name", "slug", "status", "description")),
    Step(
        4,
        "racks",
        "dcim/racks",
        "csv",
        (
            "site",
            "location",
            "name",
            "status",
            "width",
            "u_height",
            "outer_width",
            "outer_depth",
            "outer_unit",
            "description",
        ),
    ),
    Step(5, "manufacturers", "dcim/manufacturers", "csv", ("name", "slug")),
    Step(6, "device-roles", "dcim/device-roles", "csv", ("name", "slug", "color", "vm_role")),
    Step(
        7,
        "device-types",
        "dcim/device-types",
        "yaml",
        ("manufacturer", "model", "slug", "part_number", "u_height", "is_full_depth", "description", "interfaces"),
    ),
    Step(
        8,
        "devices",
        "dcim/devices",
        "csv",
        (
            "name",
            "role",
            "manufacturer",
            "device_type",
            "site",
            "location",
            "rack",
            "position",
            "face",
            "status",
            "tenant",
        ),
    ),
    Step(
        9,
        "interfaces",
        "dcim/interfaces",
        "csv",
        ("device", "name", "type", "mgmt_only", "speed", "description", "lag"),
    ),
    Step(
        10,
        "cables",
        "dcim/cables",
        "csv",
        (
            "side_a_site",
            "side_a_device",
            "side_a_type",
            "side_a_name",
            "side_b_site",
            "side_b_device",
            "side_b_type",
            "side_b_name",
            "type",
            "status",
            "label",
            "color",
            "length",
            "length_unit",
            "description",
        ),
    ),
    Step(11, "rirs", "ipam/rirs", "csv", ("name", "slug", "is_private", "description")),
    Step(12, "asns", "ipam/asns", "csv", ("asn", "rir", "description")),
    Step(13, "vrfs", "ipam/vrfs", "csv", ("name", "rd", "tenant", "enforce_unique", "description")),
    Step(14, "vlans", "ipam/vlans", "csv", ("site", "vid", "name", "tenant", "status", "description")),
    Step(
        15,
        "prefixes",
        "ipam/prefixes",
        "csv",
        (
            "prefix",
            "vrf",
            "tenant",
            "vlan_site",
            "vlan",
            "status",
            "scope_type",
            "scope_name",
            "is_pool",
            "description",
        ),
    ),
    Step(
        16,
        "ip-addresses",
        "ipam/ip-addresses",
        "csv",
        (
            "address",
            "vrf",
            "tenant",
            "status",
            "role",
            "dns_name",
            "description",
            "device",
            "interface",
            "is_primary",
            "is_oob",
        ),
    ),
    # numbered after the first sixteen (so no file of a design without power objects is renamed); they
    # refer only to the site, its locations and racks (steps 02-04)
    Step(17, "power-panels", "dcim/power-panels", "csv", ("site", "location", "name", "description")),
    Step(
        18,
        "power-feeds",
        "dcim/power-feeds",
        "csv",
        (
            "site",
            "power_panel",
            "location",
            "rack",
            "name",
            "status",
            "type",
            "supply",
            "phase",
            "voltage",
            "amperage",
            "max_utilization",
            "description",
        ),
    ),
)
STEP_OF = {s.endpoint: s for s in STEPS}

# Inventory objects no file holds, and why (the README says it too)
NOT_WRITTEN: dict[str, str] = {
    "extras/tags": "the `railyard` tag and `railyard_id` custom field are the REST push's bookkeeping; imported "
    "objects carry neither, so `railyard netbox push` does not adopt them",
    "dcim/interface-templates": "nested in their device type's YAML document (step 07): NetBox has no import page "
    "for them",
}
# Inventory fields an import cannot set, by endpoint, and why
_PLANE = (
    "a multi-plane backend's plane: the `railyard_plane` custom field the REST push makes; the import has no "
    "column for it, as NetBox refuses a custom-field column before the field exists (every cable's plane is "
    "in the `plane` column of cabling/cables.csv)"
)
NOT_IN_CSV: dict[str, dict[str, str]] = {
    "ipam/asns": {"sites": "NetBox's ASN import has no site column"},
    "dcim/devices": {"custom_fields": _PLANE},
    "dcim/cables": {"custom_fields": _PLANE},
    "dcim/interfaces": {
        "speed": "the link speed of a cabled port",
        "description": "the peer port of a cabled port (its cable shows it too)",
        "lag": "a server frontend port's membership in its `bond0` (the bond itself is imported)",
        "mode": "a frontend or out-of-band switch port's 802.1Q mode and its VLANs (`untagged_vlan`, "
        "`tagged_vlans`), as the switch config sets them",
    },
}


class _Names:
    """The natural name of every inventory object, as NetBox's import forms look it up."""

    def __init__(self, objects: list[NbObject]) -> None:
        # endpoint -> key -> object: no key object per entry (building ~1M Refs as keys cost ~1 s at
        # 98,304 GPUs, NamedTuple's __new__ runs in Python; plain (endpoint, key) tuples ~90 MB there)
        self.by_key: dict[str, dict[str, NbObject]] = defaultdict(dict)
        for o in objects:
            self.by_key[o.endpoint][o.key] = o

    def obj(self, ref: Ref) -> NbObject:
        endpoint, key = ref
        return self.by_key[endpoint][key]

    def __call__(self, ref: Ref) -> str:
        o = self.obj(ref)
        if o.endpoint == "dcim/device-types":
            return str(o.fields["model"])  # the device import looks a type up by model
        if o.endpoint == "ipam/vlans":
            return str(o.fields["vid"])  # the prefix import by vid, within `vlan_site`
        return str(o.fields["name"])


def _cell(v: Any, names: _Names) -> str:
    if v is None:
        return ""
    if isinstance(v, Ref):
        return names(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


class _Taker:
    """Reads an object's fields for its row and remembers which it read, so `done` can refuse a field
    neither written nor named in NOT_IN_CSV."""

    def __init__(self, o: NbObject, names: _Names) -> None:
        self.o, self.names, self.used = o, names, set[str]()

    def raw(self, field: str) -> Any:
        self.used.add(field)
        return self.o.fields.get(field)

    def __call__(self, *fields: str) -> dict[str, str]:
        return {f: _cell(self.raw(f), self.names) for f in fields if f in self.o.fields}

    def done(self, lost: frozenset[str] = frozenset()) -> None:
        left = self.o.fields.keys() - self.used  # empty for nearly every object: the rest only then
        if left:
            left -= NOT_IN_CSV.get(self.o.endpoint, {}).keys()
            left -= lost
        if left:
            raise ValueError(f"{self.o.endpoint} {self.o.key}: no import column for {sorted(left)}")


@dataclass
class Translation:
    """The import files' rows, and what of the inventory they do not carry."""

    rows: dict[str, list[dict[str, Any]]]  # endpoint -> rows (YAML: documents)
    from_template: list[NbObject]  # interfaces NetBox makes from a template (no row of their own)
    lost: dict[str, int]  # "<endpoint>.<field>" -> objects whose value no import carries


def translate(objects: list[NbObject], release: bool = False) -> Translation:
    """NbObjects (the inventory, in ENDPOINTS order) -> rows per import file.

    With `release`, the caller hands the inventory over: the list is emptied once indexed, and each
    cable (nothing refers to one) is let go once its row is made. The cables are a third of a site's
    objects and the largest (at 32,768 GPUs 136k of 532k objects, ~1 kB each), so their rows take the
    memory they free instead of adding to it: the NetBox files were the compile's peak at 98,304 GPUs."""
    names = _Names(objects)
    by_ep: dict[str, list[NbObject]] = defaultdict(list)
    for o in objects:
        by_ep[o.endpoint].append(o)
    if release:
        objects.clear()
    rows: dict[str, list[dict[str, Any]]] = {s.endpoint: [] for s in STEPS}
    lost: dict[str, int] = defaultdict(int)

    def simple(endpoint: str, *fields: str) -> None:
        for o in by_ep[endpoint]:
            t = _Taker(o, names)
            rows[endpoint].append(t(*fields))
            t.done()

    simple("tenancy/tenants", "name", "slug", "description")
    simple("dcim/sites", "name", "slug", "status", "description")
    simple("dcim/locations", "site", "name", "slug", "status", "description")
    simple("dcim/racks", *STEP_OF["dcim/racks"].columns)
    simple("dcim/manufacturers", "name", "slug")
    simple("dcim/power-panels", "site", "location", "name", "description")
    # a feed is found by its panel within its site, its rack within the site and location
    for o in by_ep["dcim/power-feeds"]:
        t = _Taker(o, names)
        panel = names.obj(t.raw("power_panel"))
        row = {"site": names(panel.fields["site"]), "power_panel": str(panel.fields["name"])}
        row["location"] = names(names.obj(o.fields["rack"]).fields["location"])
        row |= t(*STEP_OF["dcim/power-feeds"].columns[3:])
        rows["dcim/power-feeds"].append(row)
        t.done()
    simple("dcim/device-roles", "name", "slug", "color", "vm_role")

    # device types with their interface templates nested, in the inventory's order
    templates: dict[str, list[NbObject]] = defaultdict(list)
    for o in by_ep["dcim/interface-templates"]:
        templates[o.fields["device_type"].key].append(o)
    template_of: dict[tuple[str, str], dict[str, Any]] = {}  # (type key, port) -> template fields
    for o in by_ep["dcim/device-types"]:
        t = _Taker(o, names)
        doc: dict[str, Any] = {}
        for f in ("manufacturer", "model", "slug", "part_number", "u_height", "is_full_depth", "description"):
            if f in o.fields:
                v = t.raw(f)
                # YAML keeps numbers and booleans typed; only a reference becomes a name
                doc[f] = names(v) if isinstance(v, Ref) else v
        iface_docs = []
        for it in templates[o.key]:
            tt = _Taker(it, names)
            tt.raw("device_type")  # implied by the document it is in
            iface_docs.append({"name": tt.raw("name"), "type": tt.raw("type"), "mgmt_only": tt.raw("mgmt_only")})
            tt.done()
            template_of[(o.key, it.fields["name"])] = it.fields
        if iface_docs:
            doc["interfaces"] = iface_docs
        rows["dcim/device-types"].append(doc)
        t.done()

    # devices; their late primary_ip4 / oob_ip become the addresses' is_primary / is_oob
    primary: set[Ref] = set()
    oob: set[Ref] = set()
    type_of: dict[str, str] = {}
    for o in by_ep["dcim/devices"]:
        t = _Taker(o, names)
        row = t("name", "role", "device_type", "site", "location", "rack", "position", "face", "status", "tenant")
        dt = o.fields["device_type"]
        type_of[o.key] = dt.key
        # the import finds a type by manufacturer and model together
        row["manufacturer"] = names(names.obj(dt).fields["manufacturer"])
        rows["dcim/devices"].append(row)
        t.done()
        for f, ref in o.late.items():
            if f == "primary_ip4":
                primary.add(ref)
            elif f == "oob_ip":
                oob.add(ref)
            else:
                raise ValueError(f"dcim/devices {o.key}: no import column for late {f}")

    from_template: list[NbObject] = []
    virtual: list[dict[str, str]] = []
    # per field of a template-made interface: how many set it (not the template's default), which no
    # import carries; counted in locals, most of a site's objects are such interfaces
    speed = description = mode = lag = 0
    for o in by_ep["dcim/interfaces"]:
        fields = o.fields
        tpl = template_of.get((type_of[fields["device"].key], fields["name"]))
        if tpl is not None:
            # NetBox made it with the device: what the template has must be what the inventory wants
            if tpl["type"] != fields["type"] or tpl["mgmt_only"] != fields["mgmt_only"]:
                raise ValueError(f"dcim/interfaces {o.key}: differs from its template {tpl}")
            from_template.append(o)
            speed += bool(fields.get("speed"))
            description += bool(fields.get("description"))
            mode += bool(fields.get("mode"))
            lag += "lag" in o.late
            continue
        t = _Taker(o, names)
        row = t("device", "name", "type", "mgmt_only", "speed", "description")
        if "lag" in o.late:
            row["lag"] = names(o.late["lag"])
        virtual.append(row)
        t.done()
    if from_template:
        for f, n in (("speed", speed), ("description", description), ("mode", mode), ("lag", lag)):
            lost[f"dcim/interfaces.{f}"] += n
    # a bond before the ports it bonds: the import looks each row's lag up when it reaches it
    rows["dcim/interfaces"] = sorted(virtual, key=lambda r: r["type"] != "lag")

    sides = [
        (
            side,
            f"{side}_terminations",
            f"side_{side}_site",
            f"side_{side}_device",
            f"side_{side}_type",
            f"side_{side}_name",
        )
        for side in ("a", "b")
    ]
    cables = by_ep.pop("dcim/cables", [])
    cables.reverse()  # popped from the end: inventory order
    while cables:
        o = cables.pop()
        if release:
            del names.by_key[o.endpoint][o.key]
        t = _Taker(o, names)
        row = {}
        for side, field, site_col, device_col, type_col, name_col in sides:
            terms: list[Termination] = t.raw(field)
            ifaces = [names.obj(x.interface) for x in terms]
            devices = [names.obj(i.fields["device"]) for i in ifaces]
            port_names = [str(i.fields["name"]) for i in ifaces]
            dev_names = [str(d.fields["name"]) for d in devices]
            sites = {names(d.fields["site"]) for d in devices}
            if len(sites) != 1 or any("," in n for n in (*port_names, *dev_names)):
                raise ValueError(f"dcim/cables {o.key}: side {side} is not one import cell")
            row[site_col] = sites.pop()
            # one device for every name, else one per name (NetBox pairs them by position)
            row[device_col] = dev_names[0] if len(set(dev_names)) == 1 else ",".join(dev_names)
            row[type_col] = "dcim.interface"
            row[name_col] = ",".join(port_names)
        row |= t("type", "status", "label", "color", "length", "length_unit", "description")
        rows["dcim/cables"].append(row)
        t.done()

    simple("ipam/rirs", "name", "slug", "is_private", "description")
    simple("ipam/asns", "asn", "rir", "description")
    simple("ipam/vrfs", "name", "rd", "tenant", "enforce_unique", "description")
    simple("ipam/vlans", "site", "vid", "name", "tenant", "status", "description")
    vids: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows["ipam/vlans"]:
        vids[(r["site"], r["vid"])] += 1

    for o in by_ep["ipam/prefixes"]:
        t = _Taker(o, names)
        row = t("prefix", "vrf", "tenant", "status", "is_pool", "description")
        if o.fields.get("scope_type") is not None:
            row["scope_type"] = t.raw("scope_type")
            row["scope_name"] = names(t.raw("scope_id"))
        vlan = t.raw("vlan")
        if vlan is not None:
            site = names(names.obj(vlan).fields["site"])
            if vids[(site, names(vlan))] != 1:
                raise ValueError(f"ipam/prefixes {o.key}: VLAN {names(vlan)} is not unique in site {site}")
            row |= {"vlan_site": site, "vlan": names(vlan)}
        rows["ipam/prefixes"].append(row)
        t.done()

    for o in by_ep["ipam/ip-addresses"]:
        t = _Taker(o, names)
        row = t("address", "vrf", "tenant", "status", "role", "dns_name", "description")
        if o.fields.get("assigned_object_type") is not None:
            if t.raw("assigned_object_type") != "dcim.interface":
                raise ValueError(f"ipam/ip-addresses {o.key}: only interface bindings import")
            iface = names.obj(t.raw("assigned_object_id"))
            me = Ref(o.endpoint, o.key)
            row |= {
                "device": names(iface.fields["device"]),
                "interface": str(iface.fields["name"]),
                "is_primary": _cell(me in primary, names),
                "is_oob": _cell(me in oob, names),
            }
            primary.discard(me)
            oob.discard(me)
        rows["ipam/ip-addresses"].append(row)
        t.done()
    if primary or oob:
        raise ValueError(f"primary or OOB addresses bound to no interface: {sorted(map(str, primary | oob))}")
    return Translation(rows, from_template, dict(lost))


def _csv(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    """csv.DictWriter's text (restval "", "\n" line ends), through renderers.csvtext: the same
    bytes, a third of DictWriter's time on the ~1M rows of a 98,304-GPU site."""
    names = set(columns)
    table = []
    for r in rows:
        if not names.issuperset(r):
            # DictWriter's extrasaction="raise": a column the header lacks is a bug here, not a silent drop
            raise ValueError("dict contains fields not in fieldnames: " + ", ".join(map(repr, r.keys() - names)))
        table.append([r.get(c, "") for c in columns])
    return csv_text(list(columns), table)


def _yaml(docs: list[dict[str, Any]]) -> str:
    # one document per device type, as the device-type library files are; key order as written
    # (PyYAML's pure-Python emitter was a third of these files' time)
    return yaml.dump_all(docs, Dumper=SAFE_DUMPER, sort_keys=False, explicit_start=True, allow_unicode=True, width=120)


_ENV = environment(autoescape=False, trim=False)

# how each step's rows become its file
_FORMATS: dict[str, Callable[[list[dict[str, Any]], Step], str]] = {
    "csv": lambda rows, s: _csv(s.columns, rows),
    "yaml": lambda rows, s: _yaml(rows),
}


def render_netbox_csv(plan: Plan) -> dict[str, str]:
    if plan.netplan is None or plan.cables is None or plan.floor is None:
        return {}
    # imported here, not at the top: netbox_inventory imports the cabling and IP renderers, whose
    # package imports this module, so a top-level import would be circular
    from generators.views.netbox_inventory import inventory

    objects = inventory(plan)
    tr = translate(objects, release=True)
    del objects  # emptied by translate
    out: dict[str, str] = {}
    steps = []
    for s in STEPS:
        rows = tr.rows[s.endpoint]
        if not rows:
            continue
        out[s.path] = _FORMATS[s.fmt](rows, s)
        n_templates = sum(len(d.get("interfaces", [])) for d in rows) if s.fmt == "yaml" else 0
        steps.append({"step": s, "rows": len(rows), "templates": n_templates})
    out["netbox/README.md"] = _ENV.get_template("netbox_import.md.j2").render(
        design=plan.design.name,
        version=NETBOX_VERSION,
        steps=steps,
        not_written=NOT_WRITTEN,
        not_in_csv=NOT_IN_CSV,
        lost=tr.lost,
        from_template=len(tr.from_template),
        # every inventory interface is made from a template or has a row of its own (translate)
        interfaces=len(tr.from_template) + len(tr.rows["dcim/interfaces"]),
    )
    return out
