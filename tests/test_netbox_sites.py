"""Many railyard sites in one real NetBox (tests/netbox_service.py), and the site team's edits there
(issue 43, items 4 and 6): site A (golden-eos) is pushed in the single-site layout of railyard before
sites (no `railyard_site`, no `railyard_pushed`: what a NetBox written by an older railyard holds) and
migrates on its next push without a delete; site B (golden-xdr, another system) goes in beside it;
both keep every device and cable, and a second push of each changes nothing in NetBox's change log.
A cable length and a rack description changed in NetBox are named and refused, then put back with
--overwrite. Whatever else the session's NetBox holds (test_netbox_push.py's h100-256) stays.

Both sites are pushed cut down (SMALL): every rail on one backend leaf (backend.rails_per_leaf=8: one
leaf, not eight), two storage servers and two management nodes, so A is ~1,900 NetBox objects instead
of ~2,450 and B ~2,250 instead of ~3,390. NetBox spends ~90 ms of CPU per object written, and none of
what is tested depends on the site's size: every object kind and every role of both designs is still
pushed (servers, bonds and tenant VLANs, rail leaf, spines, frontend, storage, management, OOB access
and aggregation, PDUs and feeds, prefixes and addresses), the migration patches every one of them in
place, the two sites still share device names (gpu001...), and the edits are one cable and one rack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generators.compiler import compile_file
from generators.handover.netbox_sync import Client
from generators.model.plan import Plan
from generators.views.netbox_inventory import inventory
from generators.views.netbox_model import KEY_FIELD, PUSHED_FIELD, SITE_FIELD, SITE_SCOPED, TAG
from tests.conftest import ROOT

pytestmark = pytest.mark.netbox
TESTS = ROOT / "tests" / "designs"
# every role of the golden designs, fewer of each (see the module's docstring)
SMALL = ("backend.rails_per_leaf=8", "storage.count=2", "storage.capacity_pb=0.1", "management.count=2")
# two sites with their own names and address pools (a NetBox holds one address once per VRF)
A = (
    TESTS / "golden-eos.yaml",
    (
        "site.name=nbs-a",
        "addressing.loopbacks=10.55.0.0/20",
        "addressing.management=10.54.0.0/16",
        "addressing.bmc=10.53.0.0/16",
        "addressing.tenants=10.0.0.0/11",
        "addressing.storage=10.40.0.0/16",
        "addressing.backend=172.21.0.0/16",
        *SMALL,
    ),
)
B = (
    TESTS / "golden-xdr.yaml",
    (
        "site.name=nbs-b",
        "addressing.loopbacks=10.155.0.0/20",
        "addressing.management=10.154.0.0/16",
        "addressing.bmc=10.153.0.0/16",
        "addressing.tenants=10.192.0.0/11",
        "addressing.storage=10.160.0.0/16",
        "addressing.backend=172.22.0.0/16",
        *SMALL,
    ),
)


def _plan(site: tuple[Path, tuple[str, ...]]) -> Plan:
    plan, _, _ = compile_file(site[0], list(site[1]))
    return plan


def _args(site: tuple[Path, tuple[str, ...]]) -> list[str]:
    return [str(site[0]), *(a for s in site[1] for a in ("--set", s))]


def _run(token: str, *args: str) -> Any:
    from typer.testing import CliRunner

    from generators.cli import app

    return CliRunner().invoke(app, list(args), env={"NETBOX_TOKEN": token}, catch_exceptions=False)


def _push(netbox: Any, site: tuple[Path, tuple[str, ...]], *extra: str) -> Any:
    return _run(netbox.token, "netbox", "push", *_args(site), "--url", netbox.url, *extra)


def _changes(nb: Client) -> int:
    """Every change NetBox's change log holds."""
    return int(nb.request("GET", "core/object-changes/?limit=1")["count"])


def _site_objects(nb: Client, endpoint: str, site: str) -> dict[str, dict[str, Any]]:
    return {
        o["custom_fields"][KEY_FIELD]: o
        for o in nb.all(endpoint, tag=TAG, **{f"cf_{SITE_FIELD}": site})
        if o["custom_fields"].get(SITE_FIELD) == site
    }


@pytest.fixture(scope="module")
def nb(netbox: Any) -> Iterator[Client]:
    c = Client(netbox.url, netbox.token)
    yield c
    c.close()


@pytest.fixture(scope="module")
def elsewhere(nb: Client) -> dict[str, int]:
    """What the session's NetBox held before: railyard devices and cables of other sites."""
    tagged = bool(nb.all("extras/tags", slug=TAG))  # a NetBox no railyard push has seen has no tag
    return {e: len(nb.all(e, tag=TAG)) if tagged else 0 for e in ("dcim/devices", "dcim/cables", "dcim/power-feeds")}


@pytest.fixture(scope="module")
def legacy_a(elsewhere: dict[str, int], netbox: Any, nb: Client) -> dict[str, dict[str, int]]:
    """Site A as a railyard before sites left it: pushed, then its site scope and push record taken
    off every object. Returns its objects' NetBox ids by endpoint and key."""
    res = _push(netbox, A)
    assert res.exit_code == 0, res.output
    ids: dict[str, dict[str, int]] = {}
    for e in sorted(SITE_SCOPED):
        mine = _site_objects(nb, e, "nbs-a")
        ids[e] = {k: o["id"] for k, o in mine.items()}
        rows = [{"id": o["id"], "custom_fields": {SITE_FIELD: None, PUSHED_FIELD: None}} for o in mine.values()]
        for i in range(0, len(rows), 100):
            nb.request("PATCH", f"{e}/", rows[i : i + 100])
    assert not _site_objects(nb, "dcim/devices", "nbs-a")
    return ids


@pytest.fixture(scope="module")
def migrated(legacy_a: dict[str, dict[str, int]], netbox: Any) -> Any:
    res = _push(netbox, A)
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture(scope="module")
def both(migrated: Any, netbox: Any) -> Any:
    res = _push(netbox, B)
    assert res.exit_code == 0, res.output
    return res


def test_the_single_site_layout_moves_into_its_site_without_a_delete(
    legacy_a: dict[str, dict[str, int]], migrated: Any, nb: Client
) -> None:
    out = migrated.output
    assert " create 0, " in out and " and delete 0 NetBox objects" in out, out
    n = sum(len(v) for v in legacy_a.values())
    assert f"{n:,} objects of the single-site layout did move into site nbs-a's scope" in out, out
    # every object is the one it was (patched in place, same NetBox id), now in site A's scope
    for e, ids in legacy_a.items():
        now = _site_objects(nb, e, "nbs-a")
        assert {k: o["id"] for k, o in now.items()} == ids, e
        assert all(o["custom_fields"][PUSHED_FIELD] for o in now.values()), e


def test_two_sites_in_one_netbox_keep_every_device_and_cable(both: Any, elsewhere: dict[str, int], nb: Client) -> None:
    assert "railyard site nbs-b (NetBox also holds " in both.output and "nbs-a" in both.output.split("\n")[0]
    for site, name in ((A, "nbs-a"), (B, "nbs-b")):
        want = inventory(_plan(site))
        for e in (
            "dcim/devices",
            "dcim/cables",
            "dcim/racks",
            "dcim/power-feeds",
            "ipam/prefixes",
            "ipam/ip-addresses",
        ):
            keys = {o.key for o in want if o.endpoint == e}
            assert set(_site_objects(nb, e, name)) == keys, (name, e)
        # the devices stand in their own NetBox site
        devices = _site_objects(nb, "dcim/devices", name)
        assert {o["site"]["name"] for o in devices.values()} == {name}
    # gpu001 and the like exist once per site: the same names, two NetBox devices
    a, b = _site_objects(nb, "dcim/devices", "nbs-a"), _site_objects(nb, "dcim/devices", "nbs-b")
    assert set(a) & set(b)
    assert all(a[k]["id"] != b[k]["id"] for k in set(a) & set(b))
    # what other sites of the session's NetBox hold is all still there
    for e, n in elsewhere.items():
        mine = len(_site_objects(nb, e, "nbs-a")) + len(_site_objects(nb, e, "nbs-b"))
        assert len(nb.all(e, tag=TAG)) == n + mine, e


def test_a_second_push_of_each_site_changes_nothing(both: Any, netbox: Any, nb: Client) -> None:
    before = _changes(nb)
    for site in (A, B, A):
        res = _push(netbox, site)
        assert res.exit_code == 0, res.output
        assert "railyard did create 0, update 0 and delete 0 NetBox objects" in res.output, res.output
    assert _changes(nb) == before, "NetBox's change log grew on a push that changes nothing"


def test_an_edit_in_netbox_is_named_and_refused_unless_overwrite(
    both: Any, netbox: Any, nb: Client, tmp_path: Path
) -> None:
    cables = _site_objects(nb, "dcim/cables", "nbs-a")
    key = sorted(cables)[0]
    design_len = next(o.fields["length"] for o in inventory(_plan(A)) if o.endpoint == "dcim/cables" and o.key == key)
    rack = sorted(_site_objects(nb, "dcim/racks", "nbs-a").values(), key=lambda r: r["name"])[0]
    nb.request("PATCH", f"dcim/cables/{cables[key]['id']}/", {"length": design_len + 40})
    nb.request("PATCH", f"dcim/racks/{rack['id']}/", {"description": "moved the PDU, see ticket 12"})
    before = _changes(nb)
    edits = tmp_path / "edits.json"
    res = _push(netbox, A, "--edits", str(edits))
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())  # the console wraps long lines
    assert "2 NetBox edits this push would revert (NetBox -> design):" in out, out
    assert f"dcim/cables {key}: length {design_len + 40:g} -> {design_len:g}" in out, out
    assert f"dcim/racks {rack['name']}: description moved the PDU, see ticket 12 -> " in out, out
    assert "railyard wrote nothing" in out and "--overwrite" in out, out
    assert _changes(nb) == before, "a refused push wrote to NetBox"
    doc = json.loads(edits.read_text())
    assert doc["site"] == "nbs-a" and doc["applied"] is False
    assert [(e["endpoint"], e["key"], e["field"]) for e in doc["edits"]] == [
        ("dcim/racks", rack["name"], "description"),
        ("dcim/cables", key, "length"),
    ]
    dry = _push(netbox, A, "--dry-run")
    said = " ".join(dry.output.split())
    assert dry.exit_code == 1 and "2 NetBox edits a push would revert; without --overwrite it refuses" in said, said
    assert f"dcim/cables {key}: length" in said and "railyard would create 0, update 2 and delete 0" in said, said
    # the other site's push is not held up by site A's edits
    other = _push(netbox, B)
    assert other.exit_code == 0 and "create 0, update 0 and delete 0" in other.output, other.output
    done = _push(netbox, A, "--overwrite")
    assert done.exit_code == 0, done.output
    assert "railyard did create 0, update 2 and delete 0" in done.output, done.output
    assert "2 NetBox edits this push reverted (--overwrite; NetBox -> design):" in " ".join(done.output.split())
    assert float(nb.request("GET", f"dcim/cables/{cables[key]['id']}/")["length"]) == design_len
    again = _push(netbox, A)
    assert again.exit_code == 0 and "create 0, update 0 and delete 0" in again.output, again.output
