"""A real NetBox for the tests: PostgreSQL, Redis and NetBox on loopback, for one pytest session.

``scripts/install-netbox.sh`` installs NetBox from PyPI into its own Python 3.12 venv and builds a
migrated PostgreSQL data directory once (a fresh ``migrate`` takes minutes), keyed by the NetBox
version under ``~/.cache/railyard/netbox-<version>/``. The session fixture :func:`netbox` copies that
template into a temp dir, starts PostgreSQL on it, a Redis with no persistence and NetBox under
gunicorn, each on a free port of 127.0.0.1, provisions a v2 API token for the template's superuser,
and stops all of it at the end of the session, whatever the tests did.

A missing piece (no install, no PostgreSQL, a server that does not come up) raises
:class:`NetBoxMissing` or :class:`~tests.realtools.ToolFailed`: the tests fail, never skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.realtools import ToolFailed, free_tcp_port

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "scripts" / "install-netbox.sh"
CONFIG = ROOT / "scripts" / "netbox" / "configuration.py"
HINT = "run `bash scripts/install-netbox.sh` (as root the first time: it installs PostgreSQL and Redis)"


class NetBoxMissing(RuntimeError):
    """NetBox, its template database or a server it needs is not installed."""


@dataclass(frozen=True)
class Install:
    prefix: Path
    venv: Path
    template: Path
    pg_bin: Path
    netbox_version: str
    username: str
    password: str


def installed() -> Install:
    """Ask scripts/install-netbox.sh for the install (quick when it is cached; builds it otherwise)."""
    if not INSTALL.exists():
        raise NetBoxMissing(f"{INSTALL.relative_to(ROOT)} is missing")
    proc = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=3600, check=False)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise NetBoxMissing(f"{INSTALL.name} exited {proc.returncode}; {HINT}:\n{proc.stderr[-3000:]}")
    prefix = Path(lines[-1])
    try:
        meta = json.loads((prefix / "template.json").read_text())
    except (OSError, ValueError) as e:
        raise NetBoxMissing(f"{prefix}/template.json is unreadable ({e}); {HINT}") from e
    inst = Install(
        prefix=prefix,
        venv=prefix / "venv",
        template=prefix / "pgdata",
        pg_bin=Path(meta["pg_bin"]),
        netbox_version=meta["netbox_version"],
        username=meta["username"],
        password=meta["password"],
    )
    for exe in (inst.venv / "bin" / "gunicorn", inst.pg_bin / "postgres", inst.pg_bin / "pg_isready"):
        if not os.access(exe, os.X_OK):
            raise NetBoxMissing(f"{exe} is missing; {HINT}")
    if shutil.which("redis-server") is None:
        raise NetBoxMissing(f"redis-server is not on PATH; {HINT}")
    if not (inst.template / "PG_VERSION").exists():
        raise NetBoxMissing(f"no migrated template in {inst.template}; {HINT}")
    return inst


class ApiError(RuntimeError):
    def __init__(self, method: str, url: str, status: int, body: str) -> None:
        super().__init__(f"{method} {url} -> {status}: {body[:2000]}")
        self.status = status
        self.body = body


@dataclass
class NetBox:
    """A running NetBox: ``url`` (no trailing slash) and ``token`` (for ``Authorization: Bearer``)."""

    url: str
    token: str
    version: str
    root: Path
    logs: dict[str, Path] = field(default_factory=dict)

    def request(self, method: str, path: str, body: Any = None, token: bool = True, timeout: float = 120) -> Any:
        """One REST call; ``path`` like ``/api/dcim/sites/``. Returns the decoded JSON (None for 204)
        and raises :class:`ApiError` with NetBox's own message on any other 4xx/5xx."""
        url = self.url + path
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raise ApiError(method, url, e.code, e.read().decode(errors="replace")) from None
        return json.loads(raw) if raw else None

    def log_tail(self, chars: int = 3000) -> str:
        return "\n".join(
            f"--- {name} ---\n{p.read_text(errors='replace')[-chars:]}" for name, p in self.logs.items() if p.exists()
        )


def _stop(proc: subprocess.Popen[bytes], sig: int, grace: float = 20.0) -> None:
    """Signal the server we started, wait, then SIGKILL its process group (start_new_session=True, so
    the group id is its pid) if it lingers: no server outlives the session, even after a failing test.

    Only the leader gets ``sig``: the postmaster and gunicorn's master stop their own children and
    reap them, which a signal to the whole group would race."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)
    # Whatever of the group outlived its leader.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _wait(what: str, ready: Any, procs: list[subprocess.Popen[bytes]], nb: NetBox, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        for p in procs:
            if p.poll() is not None:
                raise ToolFailed(f"{what}: {Path(str(p.args[0])).name} exited {p.returncode}", nb.log_tail())
        if time.monotonic() > deadline:
            raise ToolFailed(f"{what}: not ready within {timeout:.0f}s", nb.log_tail())
        time.sleep(0.2)


@contextlib.contextmanager
def running_netbox(inst: Install, workers: int = 2, threads: int = 4) -> Iterator[NetBox]:
    """Start PostgreSQL (on a copy of the template), Redis and NetBox; stop them all on exit."""
    session = Path(tempfile.mkdtemp(prefix="railyard-netbox-"))
    # PostgreSQL runs as `postgres` under root and must reach its data dir through this one.
    session.chmod(0o755)
    as_root = os.geteuid() == 0
    pg_user: dict[str, Any] = {"user": "postgres", "group": "postgres", "extra_groups": []} if as_root else {}
    procs: list[subprocess.Popen[bytes]] = []
    stop_how: dict[int, tuple[int, float]] = {}
    ports = {name: free_tcp_port() for name in ("pg", "redis", "http")}
    nb = NetBox(
        url=f"http://127.0.0.1:{ports['http']}",
        token="",
        version="",
        root=session / "root",
        logs={name: session / f"{name}.log" for name in ("postgres", "redis", "netbox")},
    )

    def start(argv: list[str], log: str, sig: int, grace: float = 20.0, **kw: Any) -> subprocess.Popen[bytes]:
        with open(nb.logs[log], "wb") as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **kw
            )
        procs.append(proc)
        stop_how[proc.pid] = (sig, grace)
        return proc

    try:
        pgdata = session / "pgdata"
        # cp -a keeps the template's owner (postgres) and modes, which PostgreSQL checks.
        subprocess.run(["cp", "-a", str(inst.template), str(pgdata)], check=True)
        sock = session / "run"
        sock.mkdir()
        if as_root:
            shutil.chown(sock, "postgres", "postgres")
        # SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for every client to leave.
        pg = start(
            [
                str(inst.pg_bin / "postgres"),
                "-D",
                str(pgdata),
                "-p",
                str(ports["pg"]),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={sock}",
                # a throwaway copy: durability buys nothing and costs time on every write
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
            ],
            "postgres",
            signal.SIGINT,
            cwd="/",
            **pg_user,
        )
        redis = start(
            [
                "redis-server",
                "--port",
                str(ports["redis"]),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(session),
            ],
            "redis",
            signal.SIGTERM,
        )

        (nb.root / "conf").mkdir(parents=True)
        shutil.copy(CONFIG, nb.root / "conf" / "configuration.py")
        (nb.root / "conf" / "__init__.py").write_text("")
        env = {
            **os.environ,
            "NETBOX_ROOT": str(nb.root),
            "RAILYARD_NETBOX_PG_PORT": str(ports["pg"]),
            "RAILYARD_NETBOX_REDIS_PORT": str(ports["redis"]),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.pop("PYTHONPATH", None)  # railyard's path must not shadow NetBox's own packages

        def pg_ready() -> bool:
            return (
                subprocess.run(
                    [str(inst.pg_bin / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(ports["pg"])], check=False
                ).returncode
                == 0
            )

        _wait("PostgreSQL", pg_ready, [pg, redis], nb, timeout=60)
        # A few workers with threads: gunicorn's one sync worker made NetBox's bulk work crawl.
        web = start(
            [
                str(inst.venv / "bin" / "gunicorn"),
                "--bind",
                f"127.0.0.1:{ports['http']}",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
                "--timeout",
                "600",
                # load Django once in the master and fork: half the start-up CPU of
                # every worker importing it on its own
                # its threaded workers took 5-7 s to obey a quick shutdown (SIGINT); nothing in
                # them needs a clean exit, so the master SIGKILLs (and reaps) them after 1 s
                "--graceful-timeout",
                "1",
                "--preload",
                "netbox.wsgi",
            ],
            "netbox",
            signal.SIGINT,
            cwd=str(nb.root),
            env=env,
        )

        def http_ready() -> bool:
            try:
                nb.request("GET", "/api/status/", token=False, timeout=5)
            except ApiError as e:
                return e.status in (401, 403)  # answering, just wants a token
            except OSError:
                return False
            return True

        _wait("NetBox", http_ready, [pg, redis, web], nb, timeout=180)
        created = nb.request(
            "POST",
            "/api/users/tokens/provision/",
            token=False,
            body={
                "username": inst.username,
                "password": inst.password,
                "version": 2,
                "description": "railyard test session",
            },
        )
        # A v2 token is sent as nbt_<key>.<secret>; NetBox stores only the key and an HMAC.
        nb.token = f"nbt_{created['key']}.{created['token']}"
        nb.version = inst.netbox_version
        yield nb
    finally:
        # NetBox first, so PostgreSQL's fast shutdown finds no client to cut off mid-request.
        for proc in reversed(procs):
            _stop(proc, *stop_how[proc.pid])
        shutil.rmtree(session, ignore_errors=True)


@pytest.fixture(scope="session")
def netbox() -> Iterator[NetBox]:
    """A running NetBox with a fresh database from the cached template, for the whole session."""
    with running_netbox(installed()) as nb:
        yield nb
