"""The NetBox client's concurrency, on a stand-in HTTP server (a unit test: the real NetBox runs the
push tests): list requests spread over the workers, answers in the rows' order, one connection per
thread, a refusal raised after the requests in flight finish."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from generators.handover.http import Timeouts
from generators.handover.netbox_sync import BATCH, Client, NetBoxError, _send


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Condition()
        self.in_flight = 0
        self.most = 0
        # a request waits (at most 30 s) until another is in flight beside it: concurrency shown by the
        # server, not left to how the threads happen to be scheduled on a busy machine
        self.wait_for_two = False
        self.bodies: list[list[dict[str, Any]]] = []
        self.clients: set[int] = set()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as NetBox behind gunicorn

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        srv: _Server = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.lock:
            srv.in_flight += 1
            srv.most = max(srv.most, srv.in_flight)
            srv.bodies.append(body)
            srv.clients.add(self.client_address[1])
            srv.lock.notify_all()
            if srv.wait_for_two:
                srv.lock.wait_for(lambda: srv.most >= 2, timeout=30)
        time.sleep(0.6 if any(o.get("slow") for o in body) else 0.05)
        with srv.lock:
            srv.in_flight -= 1
        if any(o.get("bad") for o in body):
            status, out = 400, {"name": ["refused"]}
        else:
            status, out = 201, [{"id": o["n"] + 1000, **o} for o in body]
        raw = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_rows_go_as_list_requests_over_every_worker_and_come_back_in_order(server: _Server) -> None:
    server.wait_for_two = True
    c = Client(f"http://127.0.0.1:{server.server_port}", "nbt_x.y", workers=4)
    rows = [{"n": i} for i in range(2 * BATCH + 7)]
    made = _send(c, "POST", "dcim/cables", rows)
    c.close()
    assert [m["id"] for m in made] == [i + 1000 for i in range(len(rows))]
    assert all(len(b) <= BATCH for b in server.bodies)
    assert sorted(o["n"] for b in server.bodies for o in b) == list(range(len(rows)))
    assert server.most > 1 and len(server.clients) <= 4  # concurrent, one kept-alive connection per worker
    assert c.requests == len(server.bodies) and c.calls["POST dcim/cables"] == len(server.bodies)


def test_a_small_set_is_still_shared_by_the_workers(server: _Server) -> None:
    c = Client(f"http://127.0.0.1:{server.server_port}", "nbt_x.y", workers=4)
    _send(c, "POST", "dcim/devices", [{"n": i} for i in range(8)])
    c.close()
    assert sorted(len(b) for b in server.bodies) == [2, 2, 2, 2]


def test_one_worker_sends_one_request_at_a_time(server: _Server) -> None:
    c = Client(f"http://127.0.0.1:{server.server_port}", "nbt_x.y", workers=1)
    _send(c, "POST", "dcim/cables", [{"n": i} for i in range(3 * BATCH)])
    c.close()
    assert server.most == 1 and len(server.bodies) == 3


def test_a_refusal_is_raised_with_what_netbox_said(server: _Server) -> None:
    c = Client(f"http://127.0.0.1:{server.server_port}", "nbt_x.y", workers=4)
    rows = [{"n": i, "bad": i == 5} for i in range(40)]
    with pytest.raises(NetBoxError, match=r"HTTP 400 .*refused"):
        _send(c, "POST", "dcim/cables", rows)
    c.close()
    assert len(server.bodies) == 4  # the other requests were not abandoned half-sent


def test_workers_below_one_are_refused() -> None:
    with pytest.raises(NetBoxError, match="at least 1"):
        Client("http://127.0.0.1:1", "nbt_x.y", workers=0)


def test_a_request_netbox_is_slow_to_answer_is_not_sent_twice(server: _Server) -> None:
    # a POST NetBox is still applying must not be re-sent: it would create every object twice
    # (a write has the whole --timeout: the read timeout is for requests that can be asked again)
    c = Client(f"http://127.0.0.1:{server.server_port}", "nbt_x.y", Timeouts(read=0.1, total=0.2), workers=1)
    with pytest.raises(NetBoxError, match=r"POST .* was not over within 0.2 s .*not sent again"):
        _send(c, "POST", "dcim/cables", [{"n": 1, "slow": True}])
    c.close()
    time.sleep(0.6)
    assert len(server.bodies) == 1


def test_a_failure_drops_the_requests_not_yet_started(server: _Server) -> None:
    # 8 requests over 2 workers: the first is refused once the second is in flight beside it (the server
    # waits for that, so a busy machine's thread scheduling cannot leave the second unstarted), and only
    # that one still runs
    server.wait_for_two = True
    c = Client(f"http://127.0.0.1:{server.server_port}", "nbt_x.y", workers=2)
    items = [[{"n": i, "bad": i == 0, "slow": i > 0}] for i in range(8)]
    with pytest.raises(NetBoxError, match=r"HTTP 400"):
        c.parallel(lambda rows: c.request("POST", "dcim/cables/", rows), items)
    c.close()
    assert len(server.bodies) == 2


def test_retry_after_is_read_as_seconds_or_a_date_and_backoff_is_bounded() -> None:
    from email.utils import formatdate

    import httpx

    from generators.handover.http import BACKOFF_CAP, _backoff, _retry_after

    assert _retry_after(httpx.Headers({"Retry-After": "7"})) == 7.0
    assert 8 < (_retry_after(httpx.Headers({"Retry-After": formatdate(time.time() + 10, usegmt=True)})) or 0) <= 10
    assert _retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert _retry_after(httpx.Headers({})) is None
    assert all(0.25 <= _backoff(1) <= 0.5 for _ in range(50))
    assert all(BACKOFF_CAP / 2 <= _backoff(12) <= BACKOFF_CAP for _ in range(50))


class _ClosingHandler(BaseHTTPRequestHandler):
    """gunicorn's worst case, every time: a request arriving on a connection that has sat idle past the
    server's keep-alive (here 1.5 s) is dropped unread with a reset, as gunicorn's worker does when
    its keep-alive timer fires just as the request comes in."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def handle_one_request(self) -> None:
        idle_since = getattr(self, "answered_at", None)
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline:
            self.close_connection = True
            return
        if idle_since is not None and time.monotonic() - idle_since >= 1.5:
            # SO_LINGER 0: close() sends a reset, not a FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if not self.parse_request():
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.clients.add(self.client_address[1])  # type: ignore[attr-defined]
        raw = json.dumps([{"id": o["n"] + 1000, **o} for o in body]).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()
        self.answered_at = time.monotonic()


def test_a_connection_idle_past_a_short_server_keep_alive_is_not_reused() -> None:
    """A push pauses between endpoints; a POST sent after such a pause on the old connection would meet
    gunicorn (2 s keep-alive) closing it, and railyard could not tell whether NetBox applied it. The
    client opens a new connection after 1 s idle (KEEPALIVE_EXPIRY), so the POST goes through."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _ClosingHandler)
    srv.daemon_threads = True
    srv.clients = set()  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        c = Client(f"http://127.0.0.1:{srv.server_port}", "nbt_x.y", workers=1)
        assert _send(c, "POST", "dcim/cables", [{"n": 1}])[0]["id"] == 1001
        time.sleep(1.6)  # idle past the server's keep-alive: the state under test, not a wait
        assert _send(c, "POST", "dcim/cables", [{"n": 2}])[0]["id"] == 1002
        c.close()
        assert len(srv.clients) == 2  # type: ignore[attr-defined]
    finally:
        srv.shutdown()
        srv.server_close()
