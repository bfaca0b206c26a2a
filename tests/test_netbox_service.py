"""Smoke tests of the real NetBox the `netbox` fixture starts (tests/netbox_service.py).

They prove what the push and pull of issue 13 stand on: the pinned version answers, a v2 token
goes as `Authorization: Bearer nbt_<key>.<secret>`, objects round-trip, and one list POST (and one
list PATCH) carries hundreds of objects, since one object per request ran at ~9 rows/s.
Each test names its objects uniquely, so the tests share one instance in any order.
"""

from __future__ import annotations

import uuid

import pytest

from tests.netbox_service import ApiError, NetBox

pytestmark = pytest.mark.netbox


def test_status_reports_the_pinned_version(netbox: NetBox) -> None:
    status = netbox.request("GET", "/api/status/")
    assert status["netbox-version"] == netbox.version
    assert status["netbox-version"].startswith("4.7.")
    assert status["python-version"].startswith("3.12.")


def test_the_api_wants_the_bearer_token(netbox: NetBox) -> None:
    assert netbox.token.startswith("nbt_")
    with pytest.raises(ApiError) as no_token:
        netbox.request("GET", "/api/dcim/sites/", token=False)
    assert no_token.value.status == 403
    key = netbox.token.split(".", 1)[0]
    wrong = NetBox(url=netbox.url, token=f"{key}.not-the-secret", version=netbox.version, root=netbox.root)
    with pytest.raises(ApiError) as bad_secret:
        wrong.request("GET", "/api/dcim/sites/")
    assert bad_secret.value.status == 403
    assert "results" in netbox.request("GET", "/api/dcim/sites/")


def test_site_round_trips(netbox: NetBox) -> None:
    slug = f"railyard-smoke-{uuid.uuid4().hex[:8]}"
    created = netbox.request(
        "POST",
        "/api/dcim/sites/",
        {"name": slug, "slug": slug, "status": "planned", "description": "railyard smoke test"},
    )
    got = netbox.request("GET", f"/api/dcim/sites/{created['id']}/")
    assert (got["name"], got["slug"], got["status"]["value"], got["description"]) == (
        slug,
        slug,
        "planned",
        "railyard smoke test",
    )
    found = netbox.request("GET", f"/api/dcim/sites/?slug={slug}")
    assert [s["id"] for s in found["results"]] == [created["id"]]


def test_one_list_post_creates_200_objects(netbox: NetBox) -> None:
    run = uuid.uuid4().hex[:8]
    tags = [
        {"name": f"batch-{run}-{i:03d}", "slug": f"batch-{run}-{i:03d}", "description": f"batch {run}"}
        for i in range(200)
    ]
    created = netbox.request("POST", "/api/extras/tags/", tags)
    assert [t["slug"] for t in created] == [t["slug"] for t in tags]
    assert len({t["id"] for t in created}) == 200

    listed = netbox.request("GET", f"/api/extras/tags/?description=batch {run}&limit=1000".replace(" ", "%20"))
    assert listed["count"] == 200
    assert {t["slug"] for t in listed["results"]} == {t["slug"] for t in tags}

    # A change to many objects is one list PATCH by id, as a re-push after an edit would send it.
    patched = netbox.request(
        "PATCH", "/api/extras/tags/", [{"id": t["id"], "description": f"batch {run} changed"} for t in created]
    )
    assert {t["description"] for t in patched} == {f"batch {run} changed"}
    again = netbox.request("GET", f"/api/extras/tags/?description=batch {run} changed&limit=1000".replace(" ", "%20"))
    assert again["count"] == 200
