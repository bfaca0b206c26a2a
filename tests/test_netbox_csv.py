"""The NetBox bulk-import files as a translation of the push's inventory, without a NetBox: every
inventory object is in exactly one row (an interface template in its device type's YAML document, an
interface NetBox makes from a template nowhere, the tag nowhere, each for a documented reason), and a
field the translation has no column for is refused rather than dropped. The import itself into a
real NetBox is tests/test_netbox_csv_import.py."""

from __future__ import annotations

import copy
import csv
import io
from collections import Counter
from collections.abc import Callable

import pytest
import yaml

from generators.model.plan import Plan
from generators.renderers.netbox_csv import NOT_IN_CSV, NOT_WRITTEN, STEP_OF, STEPS, translate
from generators.views.netbox_inventory import inventory
from generators.views.netbox_model import ENDPOINTS, NbObject, Ref
from tests.conftest import rendered_files

DESIGNS_ = ["h100-256", "h100-1024-tor"]  # the smallest, and the one with twin/splitter copper


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _by_endpoint(objects: list[NbObject]) -> dict[str, list[NbObject]]:
    out: dict[str, list[NbObject]] = {e: [] for e in ENDPOINTS}
    for o in objects:
        out[o.endpoint].append(o)
    return out


def _refers_to(endpoint: str, objects: list[NbObject]) -> set[str]:
    """The endpoints whose objects the CSV columns of this endpoint's objects name."""
    from generators.views.netbox_model import Termination

    out: set[str] = set()
    # a port's VLANs go with its mode, which no file carries (NOT_IN_CSV)
    skipped = set(NOT_IN_CSV.get(endpoint, {})) | (
        {"untagged_vlan", "tagged_vlans"} if endpoint == "dcim/interfaces" else set()
    )

    def walk(v: object) -> None:
        if isinstance(v, Ref):
            out.add(v.endpoint)
        elif isinstance(v, Termination):
            out.add(v.interface.endpoint)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for o in objects:
        if o.endpoint == endpoint:
            for k, v in o.fields.items():  # `late` fields are set after every step (is_primary, lag)
                if k not in skipped:
                    walk(v)
    out.discard(endpoint)
    return out


def test_every_endpoint_is_a_step_or_documented_as_not_written(compiled: Callable[..., Plan]) -> None:
    objects = inventory(compiled("h100-256"))
    assert set(ENDPOINTS) == {s.endpoint for s in STEPS} | set(NOT_WRITTEN)
    # numbered 1..n, each after every step it names objects of (the push's order, except that
    # VLANs come late: only the ports' VLANs, which no file carries, need them before the devices)
    for s in STEPS:
        for dep in _refers_to(s.endpoint, objects):
            assert dep not in STEP_OF or STEP_OF[dep].number < s.number, (s.endpoint, dep)
    assert [s.number for s in STEPS] == list(range(1, len(STEPS) + 1))


@pytest.mark.parametrize("name", DESIGNS_)
def test_every_inventory_object_is_in_exactly_one_row(compiled: Callable[..., Plan], name: str) -> None:
    plan = compiled(name)
    objects = inventory(plan)
    by = _by_endpoint(objects)
    files = rendered_files(compiled, name)
    tr = translate(objects)

    def rows(endpoint: str) -> list[dict[str, str]]:
        return _rows(files[STEP_OF[endpoint].path])

    for endpoint, key in (
        ("tenancy/tenants", "name"),
        ("dcim/sites", "name"),
        ("dcim/racks", "name"),
        ("dcim/manufacturers", "name"),
        ("dcim/device-roles", "name"),
        ("dcim/devices", "name"),
        ("ipam/rirs", "name"),
        ("ipam/vrfs", "name"),
    ):
        got = Counter(r[key] for r in rows(endpoint))
        assert got == Counter(str(o.fields[key]) for o in by[endpoint]), endpoint
        assert max(got.values()) == 1, endpoint
    assert Counter((r["site"], r["name"]) for r in rows("dcim/locations")) == Counter(
        (o.key.split("/")[0], o.fields["name"]) for o in by["dcim/locations"]
    )
    assert Counter(r["asn"] for r in rows("ipam/asns")) == Counter(str(o.fields["asn"]) for o in by["ipam/asns"])
    assert Counter(r["vid"] for r in rows("ipam/vlans")) == Counter(str(o.fields["vid"]) for o in by["ipam/vlans"])
    assert Counter(f"{r['vrf'] or 'global'}/{r['prefix']}" for r in rows("ipam/prefixes")) == Counter(
        o.key for o in by["ipam/prefixes"]
    )

    # device types with their templates nested: every template once, under its own type
    docs = list(yaml.safe_load_all(files[STEP_OF["dcim/device-types"].path]))
    assert [d["model"] for d in docs] == [o.fields["model"] for o in by["dcim/device-types"]]
    nested = Counter((d["model"], i["name"]) for d in docs for i in d.get("interfaces", []))
    assert nested == Counter((o.fields["device_type"].key, o.fields["name"]) for o in by["dcim/interface-templates"])

    # an interface is made by NetBox from its template, or is a row of the interfaces file: not both
    made = {o.key for o in tr.from_template}
    imported = Counter(f"{r['device']}:{r['name']}" for r in rows("dcim/interfaces"))
    assert max(imported.values()) == 1 and not made & set(imported)
    assert made | set(imported) == {o.key for o in by["dcim/interfaces"]}
    assert all(r["type"] in ("virtual", "lag") for r in rows("dcim/interfaces"))

    # one row per NetBox cable, with every termination of each side
    def ends(side: str, r: dict[str, str]) -> tuple[tuple[str, str], ...]:
        names = r[f"side_{side}_name"].split(",")
        devs = r[f"side_{side}_device"].split(",")
        return tuple(zip(devs * len(names) if len(devs) == 1 else devs, names, strict=True))

    got_cables = Counter((ends("a", r), ends("b", r), r["label"]) for r in rows("dcim/cables"))
    want_cables = Counter(
        (
            tuple(tuple(t.interface.key.split(":", 1)) for t in o.fields["a_terminations"]),
            tuple(tuple(t.interface.key.split(":", 1)) for t in o.fields["b_terminations"]),
            o.fields["label"],
        )
        for o in by["dcim/cables"]
    )
    assert got_cables == want_cables

    # every address once per device, bound to the interface the inventory binds it to
    got_ips = Counter((r["vrf"], r["address"], r["device"], r["interface"]) for r in rows("ipam/ip-addresses"))
    want_ips = Counter(
        (
            o.key.split("/", 1)[0].replace("global", ""),
            o.fields["address"],
            *(o.fields["assigned_object_id"].key.split(":", 1) if "assigned_object_id" in o.fields else ("", "")),
        )
        for o in by["ipam/ip-addresses"]
    )
    assert got_ips == want_ips
    # the devices' primary and OOB addresses (the push's second pass) are the rows' is_primary / is_oob
    ip_rows = rows("ipam/ip-addresses")
    primaries = {(r["device"], r["address"]) for r in ip_rows if r["is_primary"] == "true"}
    oobs = {(r["device"], r["address"]) for r in ip_rows if r["is_oob"] == "true"}
    key_to_ip = {o.key: o for o in by["ipam/ip-addresses"]}
    assert primaries == {
        (d.key, key_to_ip[d.late["primary_ip4"].key].fields["address"])
        for d in by["dcim/devices"]
        if "primary_ip4" in d.late
    }
    assert oobs == {
        (d.key, key_to_ip[d.late["oob_ip"].key].fields["address"]) for d in by["dcim/devices"] if "oob_ip" in d.late
    }


@pytest.mark.parametrize("name", DESIGNS_)
def test_racks_carry_the_designs_height_and_devices_their_unit(compiled: Callable[..., Plan], name: str) -> None:
    plan = compiled(name)
    files = rendered_files(compiled, name)
    racks = {r["name"]: r for r in _rows(files["netbox/04-racks.csv"])}
    assert {n: int(r["u_height"]) for n, r in racks.items()} == {r.name: r.units for r in plan.racks}
    devices = {r["name"]: r for r in _rows(files["netbox/08-devices.csv"])}
    for d in plan.devices:
        r = devices[d.name]
        assert r["rack"] == (d.rack or "") and r["position"] == ("" if d.unit is None else str(d.unit)), d.name
        assert r["face"] == ("" if d.unit is None else "front")


def test_files_have_their_step_columns_and_the_readme_lists_them_in_order(compiled: Callable[..., Plan]) -> None:
    files = rendered_files(compiled, "h100-256")
    paths = sorted(p for p in files if p.startswith("netbox/") and p != "netbox/README.md")
    assert paths == [s.path for s in STEPS]  # every step has rows on h100-256
    for s in STEPS:
        if s.fmt == "csv":
            assert files[s.path].splitlines()[0] == ",".join(s.columns), s.path
        else:
            for doc in yaml.safe_load_all(files[s.path]):
                assert set(doc) <= set(s.columns), s.path
    readme = files["netbox/README.md"]
    at = [readme.index(f"`{p.split('/', 1)[1]}` | `{s.page}`") for p, s in zip(paths, STEPS, strict=True)]
    assert at == sorted(at)
    for endpoint, fields in NOT_IN_CSV.items():
        for field in fields:
            assert f"`{field}`" in readme, (endpoint, field)


def test_a_field_without_a_column_is_refused(compiled: Callable[..., Plan]) -> None:
    objects = inventory(compiled("h100-256"))
    for endpoint in ("dcim/racks", "dcim/cables", "ipam/ip-addresses"):
        changed = copy.deepcopy(objects)
        next(o for o in changed if o.endpoint == endpoint).fields["airflow"] = "front-to-rear"
        with pytest.raises(ValueError, match="no import column for"):
            translate(changed)
    changed = copy.deepcopy(objects)
    next(o for o in changed if o.endpoint == "dcim/devices").late["primary_ip6"] = Ref("ipam/ip-addresses", "x")
    with pytest.raises(ValueError, match="late primary_ip6"):
        translate(changed)
