"""A hostile stand-in for NetBox on loopback: a real HTTP server (in a thread of the test process) that
misbehaves in one way, named by `case`, the way a proxy, a wrong URL or an overloaded NetBox does.

Outside its misbehaviour it is a permissive fake NetBox, enough for `railyard netbox push` to run to the
end and for `pull` to find the site: a GET lists nothing (the site `dc1` for dcim/sites), a POST answers
its objects with new ids, a PATCH echoes, a DELETE answers 204.

Each case is a function of (handler, method, n, body) -> bool, n counting that method's requests from 1;
True when it answered (or chose not to). It serves only 127.0.0.1, writes at most what its case says
(400 MB for the longest) and stops with the `with` block.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

EMPTY = {"count": 0, "next": None, "previous": None, "results": []}
SITE = {"count": 1, "next": None, "previous": None, "results": [{"id": 1, "slug": "dc1", "name": "dc1"}]}
SECRET_BODY = b"[/x] [bold red]markup[/] \x1b[2J\x1b]0;pwned\x07 \x9b31m \r\nforged: line"
DEADLOCK = {
    "error": "deadlock detected\nDETAIL:  Process 4242 waits for ShareLock on transaction 977; blocked by process 43.",
    "exception": "OperationalError",
    "netbox_version": "4.7.3",
    "python_version": "3.12.3",
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Hostile

    def log_message(self, *args: Any) -> None:
        pass

    # ------------------------------------------------------------------ plumbing

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        n = self.server.note(method, self.path, dict(self.headers), raw)
        try:
            if not self.server.case(self, method, n, body):
                self.fake(method, body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
            self.close_connection = True

    do_GET = lambda self: self._serve("GET")  # noqa: E731
    do_POST = lambda self: self._serve("POST")  # noqa: E731
    do_PATCH = lambda self: self._serve("PATCH")  # noqa: E731
    do_DELETE = lambda self: self._serve("DELETE")  # noqa: E731

    def send(self, status: int, body: bytes | Any = b"", ctype: str = "application/json", **headers: str) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(raw)))
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        self.wfile.write(raw)

    def fake(self, method: str, body: Any) -> None:
        """The permissive NetBox."""
        if method == "GET":
            self.send(200, SITE if "/api/dcim/sites/" in self.path else EMPTY)
        elif method == "POST":
            ids = self.server.ids
            made = [{**o, "id": next(ids)} for o in body] if isinstance(body, list) else {**body, "id": next(ids)}
            self.send(201, made)
        elif method == "PATCH":
            self.send(200, body)
        else:
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def hang(self) -> bool:
        """Accept, read the request, never answer (until the server stops)."""
        self.server.stopping.wait(120)
        self.close_connection = True
        return True


Case = Callable[[Handler, str, int, Any], bool]


class Hostile(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, case: str | Case) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.case: Case = CASES[case] if isinstance(case, str) else case
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []  # method, path, headers, body
        self.ids = itertools.count(1000)
        self.stopping = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"

    def note(self, method: str, path: str, headers: dict[str, str], body: bytes) -> int:
        with self.lock:
            self.counts[method] += 1
            self.seen.append((method, path, headers, body))
            return self.counts[method]

    def __enter__(self) -> Hostile:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


def closed_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------ the cases


def _first_get(answer: Callable[[Handler], None]) -> Case:
    def case(h: Handler, method: str, n: int, body: Any) -> bool:
        if method == "GET" and n == 1:
            answer(h)
            return True
        return False

    return case


def _every_get(answer: Callable[[Handler], None]) -> Case:
    def case(h: Handler, method: str, n: int, body: Any) -> bool:
        if method == "GET":
            answer(h)
            return True
        return False

    return case


def _nth_post(nth: int, answer: Callable[[Handler], None]) -> Case:
    def case(h: Handler, method: str, n: int, body: Any) -> bool:
        if method == "POST" and n == nth:
            answer(h)
            return True
        return False

    return case


def _first_post(answer: Callable[[Handler], None]) -> Case:
    return _nth_post(1, answer)


def _page(h: Handler, results: Any, nxt: str | None, count: Any = 1) -> None:
    h.send(200, {"count": count, "next": nxt, "previous": None, "results": results})


def _loop(h: Handler) -> None:  # `next` is the page itself
    _page(h, [{"id": 1}], f"http://127.0.0.1:{h.server.server_port}{h.path}", count=3000)


def _endless(h: Handler) -> None:  # a new `next` every time, past what `count` says
    n = h.server.counts["GET"]
    base = h.path.split("?")[0]
    _page(h, [{"id": n}], f"http://127.0.0.1:{h.server.server_port}{base}?limit=1&offset={n}", count=2)


def _elsewhere(h: Handler) -> None:  # `next` on another host: the token must not follow it
    _page(h, [{"id": 1}], "http://netbox.invalid/api/dcim/sites/?offset=1", count=2)


def _trickle(h: Handler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.wfile.flush()
    for _ in range(120):
        if h.server.stopping.wait(1.0):
            break
        h.wfile.write(b" ")
        h.wfile.flush()
    h.close_connection = True


def _trickle_headers(h: Handler) -> None:
    for ch in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 200:
        if h.server.stopping.wait(0.5):
            break
        h.wfile.write(bytes([ch]))
        h.wfile.flush()
    h.close_connection = True


def _deep(h: Handler) -> None:
    h.send(200, b"[" * 100_000 + b"]" * 100_000)


def _deep_field(h: Handler) -> None:  # below orjson's own limit, above railyard's
    h.send(200, b'{"count":1,"next":null,"results":[{"id":1,"slug":"dc1","x":' + b"[" * 500 + b"]" * 500 + b"}]}")


def _huge_declared(h: Handler) -> None:
    """A valid page of 100 MB, Content-Length given: refused on its header."""
    item = b'{"id":1,"name":"' + b"x" * 1000 + b'"},'
    n = 100 * 2**20 // len(item)
    head, tail = b'{"count":1,"next":null,"results":[', b'{"id":2}]}'
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(head) + n * len(item) + len(tail)))
    h.end_headers()
    h.wfile.write(head)
    for _ in range(n // 64):
        h.wfile.write(item * 64)
    h.close_connection = True


def _endless_body(h: Handler) -> None:
    """400 MB of a JSON page, chunked (no length to refuse it by): the client must stop reading."""
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    chunk = b'{"id":1,"name":"' + b"y" * 4000 + b'"},'
    block = chunk * 16  # ~64 KB
    frame = f"{len(block):x}\r\n".encode() + block + b"\r\n"
    head = b'{"count":1,"next":null,"results":['
    h.wfile.write(f"{len(head):x}\r\n".encode() + head + b"\r\n")
    for _ in range(400 * 2**20 // len(block)):
        h.wfile.write(frame)
    h.wfile.write(b"0\r\n\r\n")
    h.close_connection = True


def _retry_then_ok(status: int, **headers: str) -> Case:
    def case(h: Handler, method: str, n: int, body: Any) -> bool:
        if sum(h.server.counts.values()) == 1:
            h.send(status, {"detail": "slow down"}, **headers)
            return True
        return False

    return case


def _deadlock_post(h: Handler, method: str, n: int, body: Any) -> bool:
    if method == "POST" and n == 5:  # after the tag and the 3 custom fields: the first list of objects
        h.send(500, DEADLOCK)
        return True
    return False


def _silent_post(h: Handler, method: str, n: int, body: Any) -> bool:
    return method == "POST" and n == 1 and h.hang()


def _echo_auth(h: Handler) -> None:  # a server that quotes the request back, token included
    h.send(403, {"detail": "Invalid token", "you sent": h.headers.get("Authorization", "")})


CASES: dict[str, Case] = {
    "fine": lambda h, method, n, body: False,
    "loop": _every_get(_loop),
    "endless": _every_get(_endless),
    "elsewhere": _first_get(_elsewhere),
    "silent": lambda h, method, n, body: h.hang(),
    "silent_post": _silent_post,
    "trickle": _first_get(_trickle),
    "trickle_headers": _first_get(_trickle_headers),
    "html": _first_get(lambda h: h.send(200, b"<html><body>Please log in</body></html>", "text/html")),
    "json_list": _first_get(lambda h: h.send(200, [1, 2, 3])),
    "no_results": _first_get(lambda h: h.send(200, {"count": 1, "next": None})),
    "wrong_id": _first_get(lambda h: _page(h, [{"id": "one", "slug": "dc1"}], None)),
    "wrong_tags": _first_get(lambda h: _page(h, [{"id": 1, "tags": "railyard"}], None)),
    "wrong_custom_fields": _first_get(lambda h: _page(h, [{"id": 1, "custom_fields": ["railyard_id"]}], None)),
    "post_answers_object": _nth_post(5, lambda h: h.send(201, {"id": 5, "note": "one object for a list"})),
    "post_answers_fewer": _nth_post(5, lambda h: h.send(201, [])),
    "refused_later": _nth_post(14, lambda h: h.send(400, {"dcim.cable": ["duplicate"]})),
    "post_answers_no_id": _first_post(lambda h: h.send(201, {"name": "railyard"})),
    "redirect": _first_get(lambda h: h.send(302, b"", "text/html", Location="https://127.0.0.1:1/login/?next=/api/")),
    "deep": _first_get(_deep),
    "deep_field": _first_get(_deep_field),
    "huge": _first_get(_huge_declared),
    "endless_body": _first_get(_endless_body),
    "markup_text": _first_get(lambda h: h.send(400, SECRET_BODY, "text/plain")),
    "markup_json": _first_get(lambda h: h.send(400, {"detail": SECRET_BODY.decode("latin-1")})),
    "429_then_ok": _retry_then_ok(429, Retry_After="1"),
    "503_then_ok": _retry_then_ok(503, Retry_After="1"),
    "deadlock_then_ok": _deadlock_post,
    "500": _first_get(lambda h: h.send(500, {"error": "division by zero", "exception": "ZeroDivisionError"})),
    "502_post": _first_post(lambda h: h.send(502, b"<html>Bad Gateway</html>", "text/html")),
    "502_get_then_ok": _retry_then_ok(502),
    "echo_auth": _every_get(_echo_auth),
}


def wait_until(cond: Callable[[], bool], seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()
