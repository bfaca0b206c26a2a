"""The bulk-import files (netbox/NN-*.csv, 07-device-types.yaml) imported the way a site team does:
logged in to a fresh NetBox 4.7 as a user, each file POSTed to its UI import page in the numbered
order, then every object counted back through the REST API.

This module starts its own NetBox (`running_netbox`, module scope) instead of the session fixture
`netbox`: the push tests fill that one with the same h100-256 site, and an import into a NetBox that
already has the site's names is refused (as it should be), so sharing it would make the result
depend on test order.

It imports h100-256 cut to four servers (SETS): all eight rails on one backend leaf, two storage
servers, ~1,970 objects NetBox makes instead of ~3,530 (an import costs NetBox ~90 ms of CPU per
object). That is enough: every numbered file still has rows (the test checks each step has its
file), the leaf-spine links are still twin-port cables (8 rows of two terminations a side), the
device-types YAML holds the same seven types with every interface template, and each file's objects
are all counted back.
"""

from __future__ import annotations

import csv
import html
import http.cookiejar
import io
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from generators.model.plan import Plan
from generators.renderers.netbox_csv import STEPS
from generators.views.netbox_inventory import inventory
from tests.conftest import rendered_files
from tests.netbox_service import NetBox, installed, running_netbox

pytestmark = pytest.mark.netbox
DESIGN = "h100-256"  # the smallest shipped design, cut to one rack (see the module's docstring)
SETS = (
    "compute.count=4",
    "backend.su_size=4",
    "backend.rails_per_leaf=8",  # one leaf, its uplinks to the spines twin-port cables
    "storage.count=2",
    "storage.capacity_pb=0.1",
    'tenants.0.servers=["gpu[001-002]"]',
    'tenants.1.servers=["gpu003"]',
)


class Browser:
    """A logged-in UI session: cookies (session, CSRF) and form POSTs, as a browser sends them."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def get(self, path: str) -> str:
        with self.opener.open(self.url + path, timeout=120) as r:
            return r.read().decode()

    def post(self, path: str, form: dict[str, str]) -> tuple[str, str]:
        """-> (the URL it ended on after redirects, the page)."""
        self.get(path)  # the page sets the CSRF cookie, as loading the form does in a browser
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": self.csrf(), **form}).encode()
        req = urllib.request.Request(self.url + path, data=body, method="POST", headers={"Referer": self.url + path})
        with self.opener.open(req, timeout=600) as r:
            return r.geturl(), r.read().decode()

    def login(self, username: str, password: str) -> None:
        where, _ = self.post("/login/", {"username": username, "password": password, "next": "/"})
        assert "/login/" not in where, "login refused"


def _errors(page: str) -> list[str]:
    """NetBox's messages on a refused import page ("Record 3 side_a_name: ...")."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    return sorted({m.strip() for m in re.findall(r"Record \d+[^\n]{0,300}", text)}) or [text[-3000:]]


@pytest.fixture(scope="module")
def fresh_netbox() -> Iterator[tuple[NetBox, Any]]:
    inst = installed()
    with running_netbox(inst) as nb:
        yield nb, inst


@pytest.fixture(scope="module")
def imported(fresh_netbox: tuple[NetBox, Any], compiled: Callable[..., Plan]) -> dict[str, float]:
    """Import every file in its numbered order; -> seconds per file."""
    nb, inst = fresh_netbox
    files = rendered_files(compiled, DESIGN, *SETS)
    ui = Browser(nb.url)
    ui.login(inst.username, inst.password)
    page_of = {s.path: s for s in STEPS}
    ordered = sorted(p for p in files if p.startswith("netbox/") and p != "netbox/README.md")
    assert ordered == [s.path for s in STEPS]  # every step has its file, and the names sort in import order
    took: dict[str, float] = {}
    for path in ordered:
        step = page_of[path]
        t0 = time.monotonic()
        where, page = ui.post(step.page, {"data": files[path], "format": step.fmt, "csv_delimiter": ","})
        took[path] = time.monotonic() - t0
        # success redirects to the object list, filtered to this request's objects
        assert "modified_by_request" in where, f"{path} refused by {step.page}: {_errors(page)}"
    return took


def _count(nb: NetBox, endpoint: str, **query: str) -> int:
    q = urllib.parse.urlencode({"limit": 1, **query})
    return int(nb.request("GET", f"/api/{endpoint}/?{q}")["count"])


def _all(nb: NetBox, endpoint: str, **query: str) -> list[dict[str, Any]]:
    q = urllib.parse.urlencode({"limit": 5000, **query})
    page = nb.request("GET", f"/api/{endpoint}/?{q}")
    assert page["next"] is None
    return list(page["results"])


def _rows(files: dict[str, str], path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files[path])))


def test_every_file_imports_in_the_documented_order(imported: dict[str, float], compiled: Callable[..., Plan]) -> None:
    readme = rendered_files(compiled, DESIGN, *SETS)["netbox/README.md"]
    positions = [readme.index(f"`{p.split('/', 1)[1]}`") for p in imported]
    assert positions == sorted(positions), "the README lists the files in import order"
    print("import seconds:", {p: round(s, 1) for p, s in imported.items()})


def test_racks_devices_cables_and_addresses_are_all_there(
    imported: dict[str, float], fresh_netbox: tuple[NetBox, Any], compiled: Callable[..., Plan]
) -> None:
    nb, _ = fresh_netbox
    plan = compiled(DESIGN, *SETS)
    files = rendered_files(compiled, DESIGN, *SETS)

    racks = {r["name"]: r for r in _all(nb, "dcim/racks")}
    assert {n: r["u_height"] for n, r in racks.items()} == {r.name: r.units for r in plan.racks}
    assert {r.units for r in plan.racks} != {42}, "the design's height, not NetBox's default"

    devices = {d["name"]: d for d in _all(nb, "dcim/devices")}
    assert set(devices) == {d.name for d in plan.devices}
    for d in plan.devices:
        got = devices[d.name]
        assert (got["rack"] or {}).get("name") == d.rack, d.name
        assert got["position"] == (None if d.unit is None else d.unit), d.name

    # every interface of the inventory: made from the type's templates, or imported (virtual)
    objects = inventory(plan)
    want_ifaces = {o.key for o in objects if o.endpoint == "dcim/interfaces"}
    got_ifaces = {f"{i['device']['name']}:{i['name']}" for i in _all(nb, "dcim/interfaces")}
    assert got_ifaces == want_ifaces

    cable_rows = _rows(files, "netbox/10-cables.csv")
    cables = _all(nb, "dcim/cables")
    assert len(cables) == len(cable_rows) == sum(c.physical for c in plan.cables or [])
    joined = set()
    for c in cables:
        joined.add(
            frozenset(
                (t["object"]["device"]["name"], t["object"]["name"])
                for side in ("a_terminations", "b_terminations")
                for t in c[side]
            )
        )
    for lk in plan.links:
        assert any({(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)} <= e for e in joined), lk
    assert (
        sum(len(c["a_terminations"]) + len(c["b_terminations"]) > 2 for c in cables)
        == sum("," in r["side_a_name"] + r["side_b_name"] for r in cable_rows)
        > 0
    )

    ip_rows = _rows(files, "netbox/16-ip-addresses.csv")
    ips = _all(nb, "ipam/ip-addresses")
    assert len(ips) == len(ip_rows)
    bound = {
        (ip["address"], ip["assigned_object"]["device"]["name"], ip["assigned_object"]["name"])
        for ip in ips
        if ip["assigned_object_type"] == "dcim.interface"
    }
    assert bound == {(r["address"], r["device"], r["interface"]) for r in ip_rows if r["device"]}
    for r in ip_rows:
        if r["is_primary"] == "true":
            assert (devices[r["device"]]["primary_ip4"] or {}).get("address") == r["address"], r
        if r["is_oob"] == "true":
            assert (devices[r["device"]]["oob_ip"] or {}).get("address") == r["address"], r
    assert any(r["is_primary"] == "true" for r in ip_rows) and any(r["is_oob"] == "true" for r in ip_rows)

    for path, endpoint in (
        ("netbox/15-prefixes.csv", "ipam/prefixes"),
        ("netbox/14-vlans.csv", "ipam/vlans"),
        ("netbox/13-vrfs.csv", "ipam/vrfs"),
        ("netbox/12-asns.csv", "ipam/asns"),
        ("netbox/03-locations.csv", "dcim/locations"),
        ("netbox/01-tenants.csv", "tenancy/tenants"),
    ):
        assert _count(nb, endpoint) == len(_rows(files, path)), endpoint
    types = {t["model"]: t for t in _all(nb, "dcim/device-types")}
    assert sum(t["interface_template_count"] for t in types.values()) == sum(
        o.endpoint == "dcim/interface-templates" for o in objects
    )
    prefixes = _all(nb, "ipam/prefixes")
    assert all(p["scope_type"] == "dcim.site" and p["scope"]["name"] == plan.floor.site for p in prefixes)
    assert sum(p["vlan"] is not None for p in prefixes) == sum(
        bool(r["vlan"]) for r in _rows(files, "netbox/15-prefixes.csv")
    )
