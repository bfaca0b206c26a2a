"""`railyard netbox push` and `pull` against a real NetBox on PostgreSQL (tests/netbox_service.py):
push h100-256 into a fresh NetBox (killed half-way, then run again to complete it), push again (no
change), push its 2:1 variant (only the dropped spines and their cables go), delete one cable by hand
and pull it back as missing."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest

from generators.handover.netbox_sync import Client
from generators.views.netbox_inventory import inventory
from generators.views.netbox_model import KEY_FIELD, TAG
from tests import test_identity_stability as stability
from tests.conftest import DESIGNS, ROOT

pytestmark = pytest.mark.netbox
DESIGN = DESIGNS / "h100-256.yaml"
# h100-256 at 1:1 (four backend spines) -> as shipped, 2:1 (tests/test_identity_stability.py)
BASE_SET, HEAD_SET = stability.BASE_SET, stability.HEAD_SET
BASE = tuple(a for s in BASE_SET for a in ("--set", s))
HEAD = tuple(a for s in HEAD_SET for a in ("--set", s))


@pytest.fixture(scope="module")
def nb(netbox: Any) -> Client:
    c = Client(netbox.url, netbox.token)
    yield c
    c.close()


@pytest.fixture(scope="module")
def env(netbox: Any) -> dict[str, str]:
    return {"NETBOX_TOKEN": netbox.token}


def _run(cli_env: Any, *args: str) -> Any:
    from typer.testing import CliRunner

    from generators.cli import app

    runner = CliRunner()
    return runner.invoke(app, [str(a) for a in args], env=cli_env, catch_exceptions=False)


def _mine(nb: Client, endpoint: str) -> dict[str, dict[str, Any]]:
    return {o["custom_fields"][KEY_FIELD]: o for o in nb.all(endpoint, tag=TAG)}


def _interfaces(nb: Client) -> dict[str, dict[str, Any]]:
    """Every interface of railyard's devices, as `device:port` (the ports NetBox made from railyard's
    device types carry railyard's tag only once railyard has set something on them)."""
    ids = sorted(o["id"] for o in _mine(nb, "dcim/devices").values())
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(ids), 50):
        for o in nb.all("dcim/interfaces", device_id=ids[i : i + 50]):
            out[f"{o['device']['name']}:{o['name']}"] = o
    return out


def _count(nb: Client, endpoint: str, **params: Any) -> int:
    """How many objects NetBox holds at an endpoint, as its list answer counts them."""
    page = nb.request("GET", f"{endpoint}/?limit=1&" + "&".join(f"{k}={v}" for k, v in params.items()))
    return int(page["count"])


class _Relay(http.server.ThreadingHTTPServer):
    """A pass-through in front of NetBox, so the test knows what reached it: `devices` is set once
    NetBox has answered a POST of devices, and `server_close` joins every connection's thread, each
    of which ends only when NetBox has answered what it forwarded and the client has gone."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.devices = threading.Event()
        super().__init__(("127.0.0.1", 0), _Forward)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as railyard's client speaks to NetBox
    server: _Relay

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        up = http.client.HTTPConnection(
            self.server.upstream.hostname or "127.0.0.1", self.server.upstream.port, timeout=600
        )
        keep = ("Authorization", "Accept", "Content-Type")
        up.request(self.command, self.path, body or None, {h: self.headers[h] for h in keep if h in self.headers})
        answer = up.getresponse()
        data = answer.read()
        up.close()
        if self.command == "POST" and self.path.startswith("/api/dcim/devices/") and answer.status < 300:
            self.server.devices.set()
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.getheader("Content-Type") or "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the push was killed: NetBox has done the work all the same

    do_GET = do_POST = do_PATCH = do_DELETE = _forward

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def killed_push(netbox: Any, env: dict[str, str], nb: Client) -> dict[str, int]:
    """The first push, run as a user runs it (a process of its own) and killed (SIGKILL: no clean-up of
    any kind) once NetBox has made some of its devices, with other requests still in flight: racks
    and types written, devices part-way, no cable or address yet. Returns what NetBox held then, once
    it had answered every request the push had sent (a user who re-runs at once can race NetBox
    still writing the killed push's last requests: each one of those refuses, and a run after that
    completes; not what is tested here)."""
    assert _count(nb, "dcim/devices") == 0, "the killed push is the first into this NetBox"
    relay = _Relay(netbox.url)
    serving = threading.Thread(target=relay.serve_forever, daemon=True)
    serving.start()
    child = "import sys\nfrom generators.cli import main\nsys.argv = ['railyard', *sys.argv[1:]]\nmain()\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", child, "netbox", "push", str(DESIGN), "--url", relay.url, *BASE],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while proc.poll() is None and not relay.devices.wait(0.5):
            pass  # woken by NetBox's answer to the first devices; the poll notices a push that died
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        relay.shutdown()
        relay.server_close()  # joins each connection's thread: NetBox has answered all it was sent
    assert proc.returncode == -signal.SIGKILL, f"the push ended before it was killed: {err.decode()[-2000:]}"
    return {e: _count(nb, e) for e in ("dcim/devices", "dcim/cables", "ipam/ip-addresses")}


@pytest.fixture(scope="module")
def first_push(killed_push: dict[str, int], netbox: Any, env: dict[str, str], nb: Client) -> Any:
    res = _run(env, "netbox", "push", DESIGN, "--url", netbox.url, *BASE)
    assert res.exit_code == 0, res.output
    return res


def test_a_push_killed_half_way_completes_on_the_next_with_no_duplicates(
    killed_push: dict[str, int], first_push: Any, nb: Client, compiled: Any
) -> None:
    """A push can die half-way (issue 43: a deadlock stopped the GB200 push at 649 of 749 devices):
    the same push run again completes it, and NetBox then holds each object once."""
    plan = compiled("h100-256", *BASE_SET)
    want = inventory(plan)
    n_devices = len(plan.devices)
    # killed half-way: some devices written, not all of the site
    assert 0 < killed_push["dcim/devices"] <= n_devices, killed_push
    assert killed_push["dcim/cables"] < sum(1 for o in want if o.endpoint == "dcim/cables"), killed_push
    # the re-run created what was missing, and every object is there once: every object NetBox holds,
    # tagged or not, is one of railyard's keys, and no key twice
    assert "railyard did create" in first_push.output
    for e in ("dcim/devices", "dcim/cables", "ipam/ip-addresses", "dcim/racks", "ipam/prefixes", "dcim/power-feeds"):
        keys = [(o["custom_fields"] or {}).get(KEY_FIELD) for o in nb.all(e)]
        planned = sorted(o.key for o in want if o.endpoint == e)
        assert sorted(k or "" for k in keys) == planned, (e, len(keys), len(planned))


def test_a_fresh_netbox_gets_every_device_interface_and_cable(first_push: Any, nb: Client, compiled: Any) -> None:
    plan = compiled("h100-256", *BASE_SET)
    devices = _mine(nb, "dcim/devices")
    assert set(devices) == {d.name for d in plan.devices}
    for d in plan.devices:
        got = devices[d.name]
        assert got["rack"] is not None and got["rack"]["name"] == d.rack, d.name
        if d.unit is None:
            assert got["position"] is None, d.name
        else:
            assert got["position"] == d.unit, d.name
    cables = _mine(nb, "dcim/cables")
    physical = sum(c.physical for c in plan.cables or [])
    want = [o for o in inventory(plan) if o.endpoint == "dcim/cables"]
    assert len(cables) == len(want) == physical
    # every planned link's two ports are joined by a NetBox cable
    joined = set()
    for c in cables.values():
        ends = frozenset(
            (t["object"]["device"]["name"], t["object"]["name"])
            for side in ("a_terminations", "b_terminations")
            for t in c[side]
        )
        joined.add(ends)
    for lk in plan.links:
        assert any({(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)} <= e for e in joined), lk
    interfaces = _interfaces(nb)
    want_if = {o.key: o for o in inventory(plan) if o.endpoint == "dcim/interfaces"}
    assert interfaces.keys() == want_if.keys()
    for key, o in want_if.items():
        got = interfaces[key]
        assert (got["type"]["value"], got["speed"], got["description"]) == (
            o.fields["type"],
            o.fields.get("speed"),
            o.fields.get("description", ""),
        ), key
        mode = o.fields.get("mode")
        assert (got["mode"] and got["mode"]["value"]) == mode, key
        if mode == "access":
            assert got["untagged_vlan"]["vid"] == int(o.fields["untagged_vlan"].key.split("/")[1]), key
        elif mode == "tagged":
            assert sorted(v["vid"] for v in got["tagged_vlans"]) == sorted(
                int(r.key.split("/")[1]) for r in o.fields["tagged_vlans"]
            ), key
        # railyard tags what it set something on (a cabled port, a bond, a loopback), no more
        assert (TAG in {t["slug"] for t in got["tags"]}) == bool(
            o.fields.get("description") or mode or o.fields["type"] in ("virtual", "lag")
        ), key
    ips = nb.all("ipam/ip-addresses", tag=TAG)
    assert ips and all(
        ip["assigned_object_type"] == "dcim.interface" and ip["assigned_object_id"]
        for ip in ips
        if ip["role"] is None or ip["role"]["value"] not in ("anycast", "vip")
    )
    assert "railyard did create" in first_push.output
    # the power: a panel per row and feed, a feed per PDU whip, each on its rack as the inventory has it
    feeds = {(f["custom_fields"] or {}).get(KEY_FIELD): f for f in nb.all("dcim/power-feeds", tag=TAG)}
    want_feeds = {o.key: o.fields for o in inventory(plan) if o.endpoint == "dcim/power-feeds"}
    assert feeds.keys() == want_feeds.keys() and len(feeds) == sum(d.role == "pdu" for d in plan.devices)
    for key, f in feeds.items():
        w = want_feeds[key]
        got = (f["power_panel"]["name"], f["rack"]["name"], f["supply"]["value"], f["voltage"], f["amperage"])
        assert got == (w["power_panel"].key, w["rack"].key, w["supply"], w["voltage"], w["amperage"]), key
    panels = {p["name"] for p in nb.all("dcim/power-panels", tag=TAG)}
    assert panels == {f"{r.row}-{x}" for r in plan.racks for x in "AB"}  # h100-256: 2N, feeds A and B


def test_a_second_push_changes_nothing(first_push: Any, netbox: Any, env: dict[str, str]) -> None:
    res = _run(env, "netbox", "push", DESIGN, "--url", netbox.url, *BASE)
    assert res.exit_code == 0, res.output
    assert "railyard did create 0, update 0 and delete 0 NetBox objects" in res.output, res.output
    dry = _run(env, "netbox", "push", DESIGN, "--url", netbox.url, *BASE, "--dry-run")
    assert "railyard would create 0, update 0 and delete 0" in dry.output, dry.output


def test_a_dry_run_names_every_device_that_would_move(
    first_push: Any, netbox: Any, env: dict[str, str], compiled: Any
) -> None:
    """Moves are work orders, not a count of updates (issue 43): three servers a rack instead of four
    re-racks most servers, and the dry run names each with its rack and unit, from -> to."""
    from generators.reports.diff import device_moves

    moves = device_moves(
        compiled("h100-256", *BASE_SET), compiled("h100-256", *BASE_SET, "site.rack.servers_per_rack=3")
    )
    assert len(moves) > 10
    dry = _run(
        env, "netbox", "push", DESIGN, "--url", netbox.url, *BASE, "--set", "site.rack.servers_per_rack=3", "--dry-run"
    )
    assert dry.exit_code == 0, dry.output
    assert f"{len(moves):,} devices would move (from -> to):" in dry.output, dry.output
    for m in moves:
        if m.base_unit is not None and m.head_unit is not None:
            assert f"  {m.device}: {m.base_rack} U{m.base_unit} -> {m.head_rack} U{m.head_unit}\n" in dry.output, m


def test_two_to_one_removes_exactly_the_dropped_spines_and_their_cables(
    first_push: Any, netbox: Any, env: dict[str, str], nb: Client, compiled: Any
) -> None:
    endpoints = ("dcim/devices", "dcim/cables", "ipam/ip-addresses")
    before = {e: _mine(nb, e) for e in endpoints}
    before["dcim/interfaces"] = _interfaces(nb)
    base, head = compiled("h100-256", *BASE_SET), compiled("h100-256", *HEAD_SET)
    dry = _run(env, "netbox", "push", DESIGN, "--url", netbox.url, *HEAD, "--dry-run")
    assert dry.exit_code == 0 and "railyard would" in dry.output
    assert _mine(nb, "dcim/cables").keys() == before["dcim/cables"].keys(), "a dry run writes nothing"
    res = _run(env, "netbox", "push", DESIGN, "--url", netbox.url, *HEAD)
    assert res.exit_code == 0, res.output
    after = {e: _mine(nb, e) for e in endpoints}
    after["dcim/interfaces"] = _interfaces(nb)
    dropped = {d.name for d in base.devices} - {d.name for d in head.devices}
    assert dropped == {"spine03", "spine04"}
    assert set(before["dcim/devices"]) - set(after["dcim/devices"]) == dropped
    assert set(after["dcim/devices"]) <= set(before["dcim/devices"])
    # what stays keeps its NetBox id: patched in place, never deleted and re-created
    for e in (*endpoints, "dcim/interfaces"):
        kept = after[e]
        assert all(kept[k]["id"] == o["id"] for k, o in before[e].items() if k in kept), e
    gone_if = {k for k, o in before["dcim/interfaces"].items() if k.split(":")[0] in dropped}
    assert set(before["dcim/interfaces"]) - set(after["dcim/interfaces"]) == gone_if
    want_cables = {o.key for o in inventory(head) if o.endpoint == "dcim/cables"}
    gone = set(before["dcim/cables"]) - set(after["dcim/cables"])
    assert gone == set(before["dcim/cables"]) - want_cables and set(after["dcim/cables"]) == want_cables

    def devices_of(c: dict[str, Any]) -> set[str]:
        return {t["object"]["device"]["name"] for side in ("a_terminations", "b_terminations") for t in c[side]}

    spine_cables = {k for k in gone if devices_of(before["dcim/cables"][k]) & dropped}
    assert len(spine_cables) == 66  # 2 spines x 32 leaf ports + their 2 management cables
    # nothing else goes or comes: the spines that stay keep their units and every other device its
    # out-of-band port (tests/test_identity_stability.py checks the same on the plans)
    assert gone == spine_cables
    assert set(after["dcim/cables"]) <= set(before["dcim/cables"])


def test_pull_reports_a_cable_deleted_in_netbox_with_both_ends(
    first_push: Any, netbox: Any, env: dict[str, str], nb: Client, compiled: Any
) -> None:
    sets = HEAD
    push = _run(env, "netbox", "push", DESIGN, "--url", netbox.url, *sets)  # whatever the tests before left
    assert push.exit_code == 0, push.output
    clean = _run(env, "netbox", "pull", DESIGN, "--url", netbox.url, *sets)
    assert clean.exit_code == 0 and "as-built matches the plan" in clean.output, clean.output
    plan = compiled("h100-256", *HEAD_SET)
    cables = _mine(nb, "dcim/cables")
    key = sorted(cables)[0]
    nb.request("DELETE", f"dcim/cables/{cables[key]['id']}/")
    res = _run(env, "netbox", "pull", DESIGN, "--url", netbox.url, *sets, "--json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.output)
    (f,) = doc["findings"]
    assert f["kind"] == "missing" and f["cable_id"] == key
    units = {d.name: (d.rack, d.unit) for d in plan.devices}
    assert len(f["ends"]) >= 2
    for e in f["ends"]:
        assert (e["rack"], e["unit"]) == units[e["device"]] and e["rack"] is not None
