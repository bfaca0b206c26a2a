"""`railyard serve-ztp`: a small read-only HTTP server over a compiled (or deployed) folder, for a lab or a
first rack, so the URLs in ``oob/kea-dhcp4.conf``'s ZTP options answer.

It serves exactly the files ``ztp/switches.json`` lists under ``fetches`` (each switch's ZTP file and the
configs it fetches) and nothing else: plan.json, the NetBox files and anything a user put in the folder
stay private, and no path can leave the folder (a listed file that is a link out of it is refused too).
Each fetch is logged with the switch it belongs to and the client's address, and a client that is not at
the switch's planned address is said so (a cabling swap shows up here first).

A production site may serve the folder with any static HTTP server at ``ztp.url``; this one needs nothing
beyond Python's own http.server.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from generators.model.errors import DesignError

INDEX = "ztp/switches.json"


@dataclass(frozen=True, slots=True)
class Served:
    """What the server hands out: folder-relative path -> (switch, its planned address)."""

    root: Path
    paths: dict[str, tuple[str, str]]
    url: str  # where the compile said the folder is served (ztp.url)


def load(folder: Path, arg: str = "OUT_DIR") -> Served:
    """The served files of `folder`, from its ztp/switches.json; DesignError naming `arg` if it has none."""
    if not folder.is_dir():
        raise DesignError.one(arg, f"{folder} is no folder", "give the folder `railyard compile --out` wrote")
    index = folder / INDEX
    try:
        doc: dict[str, Any] = json.loads(index.read_text())
        switches: dict[str, dict[str, Any]] = doc["switches"]
        url = str(doc["url"])
    except FileNotFoundError:
        raise DesignError.one(
            arg,
            f"{folder} has no {INDEX}: it is no compiled folder, or its design has ztp.enabled: false",
            "compile the design with ztp enabled (the default) into this folder",
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise DesignError.one(
            arg, f"{index} is not railyard's ZTP index ({exc})", "compile the design into this folder again"
        ) from None
    paths = {p: (name, str(sw["address"])) for name, sw in switches.items() for p in sw["fetches"]}
    return Served(folder.resolve(), paths, url)


def resolve(served: Served, request_path: str) -> tuple[Path, str, str] | None:
    """The file a request path names, with its switch and planned address; None when it is not served."""
    path = unquote(urlsplit(request_path).path).lstrip("/")
    hit = served.paths.get(path)
    if hit is None:
        return None
    file = (served.root / path).resolve()
    if not file.is_relative_to(served.root) or not file.is_file():
        return None
    return file, *hit


def make_server(served: Served, bind: str, port: int, log: Callable[[str], None]) -> ThreadingHTTPServer:
    """A server bound to (bind, port), not yet serving: call serve_forever (and shutdown from elsewhere)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "railyard-serve-ztp"

        def do_GET(self) -> None:
            self._answer(body=True)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def _answer(self, body: bool) -> None:
            client = self.client_address[0]
            hit = resolve(served, self.path)
            if hit is None:
                log(f"{client} {self.command} {self.path}: 404, not a file any switch fetches")
                self.send_error(HTTPStatus.NOT_FOUND, "not a file any switch fetches")
                return
            file, switch, planned = hit
            data = file.read_bytes()
            elsewhere = "" if client == planned else f" (its planned address is {planned})"
            log(f"{client} {self.command} {self.path}: {switch}, {len(data)} bytes{elsewhere}")
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", mimetypes.guess_type(file.name)[0] or "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if body:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # _answer logs each request once, with its switch

    server = ThreadingHTTPServer((bind, port), Handler)
    server.daemon_threads = True
    return server
