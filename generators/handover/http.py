"""One HTTP layer for railyard's network clients (NetBox push and pull, and what comes after), on httpx:
bounded in time, size and attempts, and every failure an HttpError that names the request and what
came back, escaped and with the secrets it knows taken out.

- Time (`Timeouts`): a connection within `connect` s, and one request over within `total` s, its
  retries and their waits included; a read (an idempotent request) silent for `read` s is tried again,
  while a write, which cannot be (NetBox may still be applying it: a bulk POST of cables on a busy
  NetBox took over 120 s), has the whole `total`. The total is enforced on every socket read and write
  (a server that trickles a byte a second, headers included, is cut there).
- Size: a body past `max_body` bytes is refused as it streams in, never read whole; JSON nested
  deeper than MAX_DEPTH is refused (so nothing after it recurses past Python's limit).
- Retries, at most `attempts` in all, with exponential backoff and jitter, or the server's
  Retry-After when it gives one (a wait past the total ends the request instead):
  429 and 503 on every method (the server did not take the request); a 500 whose answer is a
  PostgreSQL deadlock or serialization failure on every method (the transaction was rolled back);
  a connection that could not be made on every method (nothing was sent); 502, 504, a dropped
  connection and a read timeout only on idempotent methods: a POST whose fate is unknown is never
  sent twice.
- Errors: `BadUrl` and `Unreachable` exit 2 (the user's --url, or nothing answers there); `Refused`
  (HTTP >= 300, redirects included: they are not followed), `BadAnswer` (not JSON, too big or too
  deep, not the shape railyard reads) and `TimedOut` exit 1.
"""

from __future__ import annotations

import email.utils
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import httpcore
import httpx
import orjson

from generators.handover import CONNECT_TIMEOUT, KEEPALIVE_EXPIRY, READ_TIMEOUT, TOTAL_TIMEOUT
from generators.text.escape import printable

MAX_BODY = 64 * 2**20  # bytes of one answer: a NetBox page of 1,000 full cables is ~5 MB
MAX_ERROR_BODY = 64 * 2**10  # bytes of an error answer kept to show (the rest is not read)
MAX_DEPTH = 64  # JSON nesting: NetBox's answers go ~8 deep
ATTEMPTS = 5
BACKOFF = 0.5  # s before the second attempt, doubling each time, each wait drawn from its upper half
BACKOFF_CAP = 30.0
ANSWER_CHARS = 1500  # of an answer shown in a message
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
# what PostgreSQL says when it rolled a transaction back for a conflict (NetBox answers it as HTTP 500,
# e.g. {"error": "deadlock detected\nDETAIL: ...", "exception": "OperationalError"})
_ROLLED_BACK = re.compile(rb"deadlock detected|could not serialize access|DeadlockDetected|SerializationFailure")
_URL_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s@]*@")


# ------------------------------------------------------------------------------------ errors


class HttpError(Exception):
    """A request that did not give what railyard reads; `str()` is the message for the user, with
    `notes` (what to do, what was done before) on lines of their own. `unsure`: a write that may
    still be applied (it went unanswered)."""

    exit_code = 1

    def __init__(self, message: str, unsure: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.notes: list[str] = []
        self.unsure = unsure

    def __str__(self) -> str:
        return "\n".join([self.message, *self.notes])


class BadUrl(HttpError):
    """The URL (or token) given cannot be used: the user's input."""

    exit_code = 2


class Unreachable(HttpError):
    """No connection could be made: a wrong --url, or nothing listening there."""

    exit_code = 2


class Refused(HttpError):
    """The server answered HTTP >= 300."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class BadAnswer(HttpError):
    """The server answered 2xx with what railyard cannot read."""


class TimedOut(HttpError):
    """No answer within the read or total bound."""


def redact_url(text: str) -> str:
    """`scheme://user:password@host` as `scheme://***@host`, wherever it stands in the text."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)


def escape(text: str | bytes, secrets: Iterable[str] = (), limit: int = ANSWER_CHARS) -> str:
    """Text from a server (or a URL with its query) fit to print: the secrets and URL credentials
    taken out, cut at `limit` characters, and control characters and terminal escapes shown as \\xNN
    (newlines too: a server's text cannot start a line of railyard's)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    text = redact_url(text)
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text):,} characters)"
    return printable(text, keep="")


# ------------------------------------------------------------------------------------ shapes


@dataclass(frozen=True, slots=True)
class Opt:
    """In a shape: the value may be null."""

    spec: Any


@dataclass(frozen=True, slots=True)
class Req:
    """In an object's shape: the key must be there (other keys may be missing)."""

    spec: Any


_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", dict: "an object"}


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true or false"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    name = {int: "an integer", float: "a number", str: "a string"}.get(type(v), type(v).__name__)
    return f"{name} ({escape(repr(v), limit=40)})"


def _want(spec: Any) -> str:
    if isinstance(spec, Opt | Req):
        return _want(spec.spec)
    if isinstance(spec, tuple):
        return " or ".join(_want(s) for s in spec)
    if isinstance(spec, list):
        return "a list"
    if isinstance(spec, dict):
        return "an object"
    return _NAMES.get(spec, "anything")


def mismatch(value: Any, spec: Any, at: str = "") -> str | None:
    """Where and how `value` is not of `spec`, or None. A spec is a type (int excludes true/false,
    float takes integers), `object` (anything), a one-item list (a list of that), a dict (an object
    whose keys, when there, are of their specs; `Req` keys must be there), a tuple (any of them) or
    `Opt` (that, or null)."""
    where = at or "the answer"
    if isinstance(spec, Opt):
        return None if value is None else mismatch(value, spec.spec, at)
    if isinstance(spec, Req):
        spec = spec.spec
    if isinstance(spec, tuple):
        if any(mismatch(value, s, at) is None for s in spec):
            return None
        return f"{where} is {_kind(value)}, where railyard reads {_want(spec)}"
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return f"{where} is {_kind(value)}, where railyard reads an object"
        for k, sub in spec.items():
            if k not in value:
                if isinstance(sub, Req):
                    return f"{at + '.' if at else ''}{k} is missing"
                continue
            problem = mismatch(value[k], sub, f"{at}.{k}" if at else k)
            if problem:
                return problem
        return None
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"{where} is {_kind(value)}, where railyard reads a list"
        for i, x in enumerate(value):
            problem = mismatch(x, spec[0], f"{at}[{i}]")
            if problem:
                return problem
        return None
    if spec is object:
        return None
    if isinstance(value, bool) and spec is not bool:
        ok = False
    elif spec is float:
        ok = isinstance(value, int | float)
    else:
        ok = isinstance(value, spec)
    return None if ok else f"{where} is {_kind(value)}, where railyard reads {_want(spec)}"


def check(value: Any, spec: Any, what: str, hint: str = "") -> None:
    """Raise BadAnswer naming `what` (whose answer) when `value` is not of `spec`."""
    problem = mismatch(value, spec)
    if problem:
        raise BadAnswer(f"{what} is not what railyard reads: {problem}{f' ({hint})' if hint else ''}")


def _too_deep(doc: Any, limit: int = MAX_DEPTH) -> bool:
    stack = [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            return True
        children = v.values() if isinstance(v, dict) else v
        stack.extend((x, depth + 1) for x in children if isinstance(x, dict | list))
    return False


# ------------------------------------------------------------------------------------ time bounds


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect: float = CONNECT_TIMEOUT
    read: float = READ_TIMEOUT  # the longest silence on an idempotent request, which is then tried again
    total: float = TOTAL_TIMEOUT  # one request, retries and waits included; a write's only time bound


_deadline = threading.local()  # .at: time.monotonic() by which this thread's request must be over


def _bounded(timeout: float | None) -> float:
    at = getattr(_deadline, "at", None)
    if at is None:
        return timeout if timeout is not None else TOTAL_TIMEOUT
    left: float = max(at - time.monotonic(), 0.001)
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A socket whose every read and write ends by the request's total deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _bounded(timeout), local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Transport(httpx.HTTPTransport):
    """httpx's transport over a pool whose sockets keep the total deadline (httpx has no total bound of
    its own, and its read timeout restarts with every byte). It replaces the transport's `_pool`, an
    httpx internal: requirements.txt pins httpx, and the trickle tests (tests/test_netbox_hostile.py)
    fail if a new httpx stops using it."""

    def __init__(self, ssl_context: ssl.SSLContext, connections: int) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=connections,
            max_keepalive_connections=connections,
            keepalive_expiry=KEEPALIVE_EXPIRY,
            network_backend=_Backend(),
        )


def _ssl_context(verify: bool) -> ssl.SSLContext:
    # the system's CA store, as before httpx (whose default is certifi's bundle): a site's own CA
    # installed on the machine keeps working
    ctx = ssl.create_default_context()
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


# ------------------------------------------------------------------------------------ the client


class _Attempt(Exception):
    """One attempt failed in a way a retry may cure: `error` is raised if none is left."""

    def __init__(self, error: HttpError, retry: bool, wait: float | None = None, why: str = "") -> None:
        self.error, self.retry, self.wait, self.why = error, retry, wait, why or error.message


@dataclass(slots=True)
class _Answer:
    status: int
    headers: httpx.Headers
    body: bytes
    truncated: bool = False


class JsonClient:
    """JSON over HTTP(S) to one origin, up to `connections` requests at once from as many threads,
    over kept-alive connections. `request` returns the parsed answer (None for an empty one) or
    raises an HttpError. `service` names the server in messages; `secrets` are never printed (an
    answer that echoes one shows *** instead); `on_retry(message)` hears of each retry."""

    def __init__(
        self,
        url: str,
        *,
        service: str,
        headers: Mapping[str, str],
        timeouts: Timeouts | None = None,
        connections: int = 4,
        verify_tls: bool = True,
        max_body: int = MAX_BODY,
        attempts: int = ATTEMPTS,
        secrets: Iterable[str] = (),
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        self.service = service
        self.secrets = tuple(s for s in secrets if s)
        shown = escape(url, self.secrets, limit=200)
        url = url.strip()
        if any(ch <= " " or ch == "\x7f" for ch in url):
            raise BadUrl(f"{shown}: a URL holds no spaces or control characters")
        try:
            u = urlsplit(url)
            _ = u.port  # raises on a port that is not a number in range
            httpx.URL(url)
        except (ValueError, httpx.InvalidURL) as exc:
            raise BadUrl(f"{shown}: not a URL ({escape(str(exc), limit=200)})") from None
        if u.scheme not in ("http", "https") or not u.hostname:
            raise BadUrl(f"not an http(s) URL: {shown}")
        if u.username is not None or u.password is not None:
            raise BadUrl(
                f"{shown} carries a user name and password: {service} takes an API token, not these "
                "(and railyard would print them in every message): leave them out"
            )
        if u.query or u.fragment:
            raise BadUrl(f"{shown}: give the base URL alone, without ?query or #fragment")
        self.timeouts = timeouts or Timeouts()
        t = self.timeouts
        if min(t.connect, t.read, t.total) <= 0:
            raise BadUrl(f"time bounds must be positive, not {t}")
        self.origin = f"{u.scheme}://{u.netloc}"
        self.host = (u.hostname or "").lower()
        self.base = u.path.rstrip("/")
        self.max_body = max_body
        self.attempts = max(1, attempts)
        self.on_retry = on_retry
        self._lock = threading.Lock()
        self._http = httpx.Client(
            base_url=self.origin,
            headers={"Accept-Encoding": "gzip", **headers},
            timeout=httpx.Timeout(connect=t.connect, read=t.total, write=t.total, pool=t.total),
            transport=_Transport(_ssl_context(verify_tls), connections + 1),
            follow_redirects=False,
            trust_env=False,
        )

    def close(self) -> None:
        self._http.close()

    def shown(self, path: str) -> str:
        """The request's URL as messages show it."""
        return escape(self.origin + path, self.secrets, limit=300)

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """`method` `path` (absolute, with its query) with `body` as JSON; the parsed answer."""
        content = None if body is None else orjson.dumps(body)
        start = time.monotonic()
        deadline = start + self.timeouts.total
        for attempt in range(1, self.attempts + 1):
            try:
                return self._attempt(method, path, content, deadline)
            except _Attempt as a:
                left = deadline - time.monotonic()
                if not a.retry or attempt == self.attempts:
                    if a.retry:
                        a.error.notes.append(f"(gave up after {attempt} attempts in {time.monotonic() - start:.1f} s)")
                    raise a.error from None
                wait = a.wait if a.wait is not None else _backoff(attempt)
                if wait >= left:
                    a.error.notes.append(
                        f"(no time left for attempt {attempt + 1} within the {self.timeouts.total:g} s bound"
                        f"{f': asked to wait {wait:.0f} s' if a.wait is not None else ''}; raise it with --timeout)"
                    )
                    raise a.error from None
                if self.on_retry is not None:
                    self.on_retry(
                        f"{self.service}: {method} {self.shown(path.split('?')[0])}: {a.why}; retrying in "
                        f"{wait:.1f} s (attempt {attempt + 1} of {self.attempts})"
                    )
                time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    # one exchange: the answer parsed, or _Attempt saying whether another may be made
    def _attempt(self, method: str, path: str, content: bytes | None, deadline: float) -> Any:
        idempotent = method in IDEMPOTENT
        what = f"{method} {self.shown(path)}"
        t = self.timeouts
        up = f"(check --url and that {self.service} is up)"
        _deadline.at = deadline
        try:
            answer = self._exchange(method, path, content, deadline)
        except httpx.ConnectTimeout:
            why = f"no connection within {min(t.connect, t.total):g} s"
            error: HttpError = Unreachable(f"cannot reach {self.service} at {self.shown(path)}: {why} {up}")
            raise _Attempt(error, retry=True, why=why) from None
        except httpx.ConnectError as exc:
            why = self._reason(exc)
            error = Unreachable(f"cannot reach {self.service} at {self.shown(path)}: {why} {up}")
            raise _Attempt(error, retry=not _hopeless(exc), why=why) from None
        except httpx.PoolTimeout:  # never sent
            raise _Attempt(TimedOut(f"{what}: no free connection in time"), retry=True) from None
        except (httpx.TimeoutException, _PastDeadline):
            if time.monotonic() >= deadline - 0.01:
                error = TimedOut(f"{what} was not over within {t.total:g} s (--timeout){_fate(method)}", not idempotent)
                raise _Attempt(error, retry=False) from None
            why = f"no answer within {min(t.read, t.total):g} s"
            error = TimedOut(
                f"{self.service} did not answer {method} within {min(t.read, t.total):g} s (--read-timeout): "
                f"{self.shown(path)}{_fate(method)}",
                not idempotent,
            )
            raise _Attempt(error, retry=idempotent, why=why) from None
        except httpx.TransportError as exc:  # dropped connection, broken HTTP: the request may have gone through
            why = f"the connection failed: {self._reason(exc)}"
            error = HttpError(f"{what}: {why}{_fate(method)}", not idempotent)
            raise _Attempt(error, retry=idempotent, why=why) from None
        finally:
            _deadline.at = None
        return self._judge(method, path, answer, idempotent)

    def _exchange(self, method: str, path: str, content: bytes | None, deadline: float) -> _Answer:
        headers = {"Content-Type": "application/json"} if content is not None else None
        # a read that goes silent is asked again; a write cannot be, so it has until the total bound
        silence = min(self.timeouts.read, self.timeouts.total) if method in IDEMPOTENT else self.timeouts.total
        timeout = httpx.Timeout(connect=self.timeouts.connect, read=silence, write=silence, pool=self.timeouts.total)
        with self._http.stream(method, path, content=content, headers=headers, timeout=timeout) as resp:
            ok = 200 <= resp.status_code < 300
            limit = self.max_body if ok else MAX_ERROR_BODY
            declared = resp.headers.get("content-length", "")
            if ok and declared.isdigit() and int(declared) > limit:
                raise _Attempt(
                    BadAnswer(
                        f"{self.service}'s answer to {method} {self.shown(path)} is {int(declared):,} bytes, past "
                        f"railyard's bound of {limit:,}: not read"
                    ),
                    retry=False,
                )
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > limit:
                    if not ok:  # an error page: its start is enough to show
                        return _Answer(resp.status_code, resp.headers, bytes(body[:limit]), truncated=True)
                    raise _Attempt(
                        BadAnswer(
                            f"{self.service}'s answer to {method} {self.shown(path)} went past railyard's bound of "
                            f"{limit:,} bytes: stopped reading it there"
                        ),
                        retry=False,
                    )
                if time.monotonic() > deadline:
                    raise _PastDeadline
            return _Answer(resp.status_code, resp.headers, bytes(body))

    def _judge(self, method: str, path: str, a: _Answer, idempotent: bool) -> Any:
        what = f"{method} {self.shown(path)}"
        if a.status >= 300:
            said = escape(a.body, self.secrets) + (" ..." if a.truncated else "")
            msg = f"{self.service} refused {what}: HTTP {a.status}"
            if 300 <= a.status < 400:
                where = escape(a.headers.get("location", "(nowhere)"), self.secrets, limit=300)
                msg += (
                    f", a redirect to {where} (not followed: the token would go along): give --url as the "
                    f"address {self.service} answers at"
                )
            elif a.status in (401, 403):
                msg += f" (check the API token and its permissions): {said}"
            elif a.status == 404 and not a.body.lstrip().startswith(b"{"):  # not NetBox's own JSON 404
                msg += f" (is --url {self.service}'s base URL?): {said}"
            else:
                msg += f" {said}" if said else " with an empty answer"
            error = Refused(msg, a.status)
            # a gateway that gave up on a write does not know whether the server behind it applied it
            error.unsure = a.status in (502, 504) and not idempotent
            why = f"HTTP {a.status}"
            if a.status in (429, 503):
                raise _Attempt(error, retry=True, wait=_retry_after(a.headers), why=why)
            if a.status in (502, 504):
                raise _Attempt(error, retry=idempotent, wait=_retry_after(a.headers), why=why)
            if a.status == 500 and _ROLLED_BACK.search(a.body):  # PostgreSQL rolled the transaction back
                raise _Attempt(error, retry=True, why=f"{why}, a database deadlock (rolled back)")
            raise _Attempt(error, retry=False)
        if not a.body.strip():
            return None
        deep = BadAnswer(f"{self.service}'s answer to {what} is nested deeper than {MAX_DEPTH} levels")
        try:
            doc = orjson.loads(a.body)
        except orjson.JSONDecodeError as exc:
            if re.search("depth|recursion", str(exc), re.I):  # orjson's own bound (1,024)
                raise _Attempt(deep, retry=False) from None
            kind = escape(a.headers.get("content-type", "no Content-Type"), limit=80)
            raise _Attempt(
                BadAnswer(
                    f"{self.service}'s answer to {what} is not JSON ({kind}): {escape(a.body, self.secrets, limit=300)}"
                    f" (is --url {self.service}'s address, not a proxy's or a login page?)"
                ),
                retry=False,
            ) from None
        if isinstance(doc, dict | list) and _too_deep(doc):
            raise _Attempt(deep, retry=False)
        return doc

    def _reason(self, exc: Exception) -> str:
        return escape(str(exc) or type(exc).__name__, self.secrets, limit=300)


class _PastDeadline(Exception):
    pass


def _fate(method: str) -> str:
    if method in IDEMPOTENT:
        return ""
    return f" ({method} not sent again: the server may still apply it)"


def _hopeless(exc: BaseException) -> bool:
    """A failed connection another attempt will not make: a name that does not resolve, a TLS error."""
    import socket

    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, socket.gaierror | ssl.SSLError):
            return True
        e = e.__cause__ or e.__context__
    return "CERTIFICATE_VERIFY_FAILED" in str(exc) or "Name or service not known" in str(exc)


def _backoff(attempt: int) -> float:
    """The wait after attempt `attempt` (1, 2, ...): exponential, capped, jittered in its upper half."""
    cap: float = min(BACKOFF_CAP, BACKOFF * 2.0 ** (attempt - 1))
    return cap * random.uniform(0.5, 1.0)


def _retry_after(headers: httpx.Headers) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), or None when absent or unreadable."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def url_password(url: str) -> list[str]:
    """The password in a URL, as typed and decoded (for a redactor: never printed)."""
    try:
        password = urlsplit(url.strip()).password
    except ValueError:
        return []
    return [password, unquote(password)] if password else []
