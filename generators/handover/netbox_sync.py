"""Push railyard's NetBox inventory into a real NetBox over its REST API, idempotently.

What railyard writes carries the tag `railyard`, its stable key in the custom field `railyard_id`,
the site it belongs to in `railyard_site` (the objects of a site; tenants, manufacturers, roles,
device types, RIRs, ASNs and VRFs are shared by the sites) and a digest per owned field of what it
wrote in `railyard_pushed`; that is the whole bookkeeping, kept in NetBox itself:
- a push reads and changes only its own site's objects, so many railyard sites share one NetBox; the
  shared ones it creates, and changes or deletes only while no other railyard site is there (an ASN
  names every site that uses it); the objects of railyard's single-site layout (no `railyard_site`)
  are this site's when their site is, and are patched into its scope, never deleted and re-made;
- a field whose NetBox value is no longer what railyard recorded was changed in NetBox since (the
  site team's edit): a push that would put it back names it and writes nothing, unless `overwrite`;
- an object railyard wants and NetBox lacks is created; one whose owned fields differ is patched
  (fields railyard does not name, and `status` after creation, stay as the site team set them); one
  that matches is left alone;
- an object tagged `railyard` whose key the design no longer has is deleted, and nothing else ever
  is: objects the site team made (untagged) are never touched, only referred to when they carry the
  same natural key (a manufacturer or role of the same slug);
- interfaces NetBox made itself from railyard's device types are adopted (tagged and keyed) when
  railyard sets something on them (a cabled port's speed and peer); the others stay as NetBox made
  them, untagged, and are found through their device.

Deletes run first, in reverse dependency order (a port freed by a removed cable can take the new
one); creates and updates then run endpoint by endpoint in dependency order, in list requests of up
to `BATCH` objects, `WORKERS` at a time, so the 1,024-GPU site is a few hundred requests, not tens
of thousands, and NetBox's workers share them.
`dry_run` computes the same plan and writes nothing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from generators.handover import WORKERS
from generators.handover.http import (
    BadAnswer,
    BadUrl,
    HttpError,
    JsonClient,
    Opt,
    Req,
    Timeouts,
    check,
    escape,
)
from generators.views.netbox_model import (
    ENDPOINTS,
    KEY_FIELD,
    PLANE_FIELD,
    PUSHED_FIELD,
    SITE_FIELD,
    SITE_SCOPED,
    TAG,
    NbObject,
    Ref,
    Termination,
)

_HEX6 = re.compile(r"[0-9a-fA-F]{6}")
BATCH = 100  # objects per list request: NetBox validates each in one transaction
PAGE = 1000  # objects per GET page (NetBox's default MAX_PAGE_SIZE)

# which NetBox object type (for the custom field) each endpoint holds
OBJECT_TYPES = {
    "tenancy/tenants": "tenancy.tenant",
    "dcim/sites": "dcim.site",
    "dcim/locations": "dcim.location",
    "dcim/racks": "dcim.rack",
    "dcim/power-panels": "dcim.powerpanel",
    "dcim/power-feeds": "dcim.powerfeed",
    "dcim/manufacturers": "dcim.manufacturer",
    "dcim/device-roles": "dcim.devicerole",
    "dcim/device-types": "dcim.devicetype",
    "dcim/interface-templates": "dcim.interfacetemplate",
    "dcim/devices": "dcim.device",
    "dcim/interfaces": "dcim.interface",
    "dcim/cables": "dcim.cable",
    "ipam/rirs": "ipam.rir",
    "ipam/asns": "ipam.asn",
    "ipam/vrfs": "ipam.vrf",
    "ipam/vlans": "ipam.vlan",
    "ipam/prefixes": "ipam.prefix",
    "ipam/ip-addresses": "ipam.ipaddress",
}
# endpoints whose objects carry no tags or custom fields: found through their railyard parent
UNTAGGED = frozenset({"dcim/interface-templates"})
# set when railyard creates an object, then the site team's: a cable or device marked connected or
# active in NetBox stays so through later pushes (and `netbox pull` reads it back as progress)
CREATE_ONLY = frozenset({"status"})
# endpoints whose objects a site may already hold under the same slug: referred to, never changed
# many-to-many fields NetBox answers in an order of its own: compared as sets of ids
UNORDERED = frozenset({"tagged_vlans", "sites"})
# endpoints whose NetBox-made objects (interfaces instantiated from railyard's device types) railyard
# tags only when it has to change them: an unconnected port stays as NetBox made it, which saves
# a PATCH per port (~70 ms of NetBox's time each) and is found again through its device
ADOPT_AS_IS = frozenset({"dcim/interfaces"})
SHARED_BY_SLUG = ("dcim/manufacturers", "dcim/device-roles", "ipam/rirs", "tenancy/tenants", "dcim/sites")


# every failure of a NetBox request: http.py's errors (their exit_code says 1 or 2), and the push's own
NetBoxError = HttpError

# what railyard reads of the objects NetBox lists (a field, when there, must be of its shape), and of
# the lists themselves
_REF = {"id": Req(int)}
_OBJECT = {
    "id": Req(int),
    "custom_fields": Opt({KEY_FIELD: Opt(str), SITE_FIELD: Opt(str), PUSHED_FIELD: Opt(str)}),
    "tags": [{"id": Req(int), "slug": Opt(str)}],
    "slug": Opt(str),
    "name": Opt(str),
    "device": Opt(_REF),
    "device_type": Opt(_REF),
    "tagged_vlans": Opt([_REF]),
    "sites": Opt([_REF]),
    "object_types": Opt([str]),
}
_PAGE = {"count": Opt(int), "next": Opt(str), "results": Req([_OBJECT])}
HARD_PAGES = 10_000  # pages one listing may take, whatever its count says (10 million objects at PAGE)


# ------------------------------------------------------------------------------------ HTTP client


class _Dropped(Exception):
    """An item `parallel` did not start, because one before it failed."""


class Client(JsonClient):
    """NetBox's REST API over generators/handover/http.py (time, size and retry bounds; errors that
    name the request and NetBox's answer). `parallel` runs up to `workers` requests at once, each on a
    kept-alive connection of its own; `requests`, `seconds` and `calls` count them for the report, and
    `written` the objects NetBox took (created, updated, deleted) for a push that stops half-way."""

    def __init__(
        self,
        url: str,
        token: str,
        timeouts: Timeouts | None = None,
        verify_tls: bool = True,
        workers: int = WORKERS,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        if workers < 1:
            raise BadUrl(f"workers must be at least 1, not {workers}")
        if not token or not all("!" <= ch <= "~" for ch in token):
            raise BadUrl("the API token is empty or holds whitespace, control or non-ASCII characters (not shown)")
        # v2 tokens (NetBox >= 4.5, `nbt_<key>.<secret>`) go as Bearer, legacy v1 tokens as Token
        scheme = "Bearer" if token.startswith("nbt_") else "Token"
        super().__init__(
            url,
            service="NetBox",
            headers={"Authorization": f"{scheme} {token}", "Accept": "application/json"},
            timeouts=timeouts,
            connections=workers,
            verify_tls=verify_tls,
            secrets=(token,),
            on_retry=on_retry,
        )
        self.workers = workers
        self.requests = 0
        self.seconds: defaultdict[str, float] = defaultdict(float)  # "<METHOD> <endpoint>" -> time spent, reported
        self.calls: Counter[str] = Counter()
        self.written: Counter[str] = Counter()  # "POST"/"PATCH"/"DELETE" -> objects NetBox took

    def request(self, method: str, path: str, body: Any = None) -> Any:
        full = path if path.startswith(self.base + "/api/") else f"{self.base}/api/{path}"
        parts = full.removeprefix(self.base + "/api/").split("?")[0].strip("/").split("/")
        what = f"{method} {'/'.join(parts[:-1] if parts[-1].isdigit() else parts)}"
        t0 = time.monotonic()
        try:
            answer = super().request(method, full, body)
        finally:
            with self._lock:
                self.requests += 1
                self.seconds[what] += time.monotonic() - t0
                self.calls[what] += 1
        if method in ("POST", "PATCH", "DELETE"):
            with self._lock:
                self.written[method] += len(body) if isinstance(body, list) else 1
        return answer

    def parallel(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        """fn(item) for every item, up to `workers` at once; results in the items' order. On a failure
        the items not yet started are dropped, and the first failure is raised once the requests
        already in flight have finished."""
        if self.workers == 1 or len(items) < 2:
            return [fn(x) for x in items]
        failed = threading.Event()

        def run(x: Any) -> Any:
            if failed.is_set():
                raise _Dropped
            try:
                return fn(x)
            except BaseException:
                failed.set()
                raise

        with ThreadPoolExecutor(max_workers=min(self.workers, len(items)), thread_name_prefix="netbox") as ex:
            futures = [ex.submit(run, x) for x in items]
        # items start in their order, so every dropped one comes after the failure that dropped it
        return [f.result() for f in futures]

    def all(self, endpoint: str, **params: Any) -> list[dict[str, Any]]:
        """Every object of a listing, page by page. A page must be an object with a `results` list of
        objects with an integer `id`; `next` is followed only to the same host and endpoint, never to a
        page already read, and for no more pages than the first page's `count` takes (HARD_PAGES at most)."""
        first = f"{self.base}/api/{endpoint.strip('/')}/"
        path = f"{first}?{urlencode({'limit': PAGE, **params}, doseq=True)}"
        seen = {path}
        out: list[dict[str, Any]] = []
        bound = HARD_PAGES
        for n in itertools.count(1):
            page = self.request("GET", path)
            what = f"NetBox's answer to GET {self.shown(path)}"
            check(page, _PAGE, what, "is --url NetBox's address, not a proxy's?")
            results, nxt = page["results"], page.get("next")
            out += results
            if not nxt:
                return out
            if n == 1 and isinstance(count := page.get("count"), int):
                bound = min(HARD_PAGES, math.ceil(count / max(len(results), 1)) + 2)  # +2: objects added meanwhile
            if not results:
                raise BadAnswer(f"{what} is an empty page that links to another: stopped there")
            if n >= bound:
                raise BadAnswer(
                    f"{what} links to page {n + 1}, past the {bound:,} pages the first page's count takes: "
                    "stopped there"
                )
            path = self._next(nxt, first, what)
            if path in seen:
                raise BadAnswer(f"{what} links back to a page it sent before (a loop): stopped there")
            seen.add(path)
        raise AssertionError("unreachable")  # pragma: no cover

    def _next(self, link: str, first: str, what: str) -> str:
        """The path and query of a `next` link, which must name this host and this endpoint (its scheme
        and port may differ: NetBox behind a TLS proxy often writes http://); always asked of --url."""
        try:
            u = urlsplit(link)
            ok = (not u.netloc or (u.hostname or "").lower() == self.host) and u.path == first
        except ValueError:
            ok = False
        if not ok or any(ch <= " " or ch == "\x7f" for ch in link):
            raise BadAnswer(
                f"{what} links its next page to {escape(link, self.secrets, limit=300)}, not to {first} on "
                f"{self.host}: not followed"
            )
        return f"{u.path}?{u.query}" if u.query else u.path


# ------------------------------------------------------------------------------------ the plan


@dataclass(frozen=True, slots=True)
class Edit:
    """A field of a railyard object the site team changed in NetBox since railyard's last push, which
    this push would put back: NetBox's value and the design's, as text."""

    endpoint: str
    key: str
    field: str
    netbox: str
    design: str

    def to_dict(self) -> dict[str, str]:
        return {
            "endpoint": self.endpoint,
            "key": self.key,
            "field": self.field,
            "netbox": self.netbox,
            "design": self.design,
        }


@dataclass(slots=True)
class EndpointPlan:
    create: list[NbObject] = field(default_factory=list)
    update: list[tuple[int, NbObject, list[str]]] = field(default_factory=list)  # (id, object, changed fields)
    adopt: list[tuple[int, NbObject]] = field(default_factory=list)  # NetBox-made, railyard's from now on
    delete: list[tuple[int, str]] = field(default_factory=list)  # (id, railyard key)
    unchanged: int = 0
    shared: int = 0  # the site's own objects railyard refers to
    moves: list[tuple[str, str, str]] = field(default_factory=list)  # devices: (key, from, to) rack and unit
    migrated: int = 0  # objects of the single-site layout (no site scope yet) this push claims for its site
    # shared objects (device types, roles, ...) that differ from this design but stay as NetBox holds
    # them, because other railyard sites use them: (key, fields)
    kept: list[tuple[str, list[str]]] = field(default_factory=list)


@dataclass(slots=True)
class PushReport:
    endpoints: dict[str, EndpointPlan]
    dry_run: bool
    requests: int = 0
    seconds: float = 0.0
    site: str = ""
    others: list[str] = field(default_factory=list)  # the other railyard sites this NetBox holds
    edits: list[Edit] = field(default_factory=list)  # NetBox's changes since the last push this one reverts
    overwrite: bool = False
    refused: bool = False  # edits found and no --overwrite: nothing written

    def to_dict(self) -> dict[str, Any]:
        """The edits as a document the site team's values can be taken from (`--edits FILE`)."""
        return {
            "schema": "railyard.netbox-edits/1",
            "site": self.site,
            "applied": bool(self.edits) and self.overwrite and not self.dry_run,
            "edits": [e.to_dict() for e in self.edits],
        }

    def totals(self) -> Counter[str]:
        c: Counter[str] = Counter()
        for p in self.endpoints.values():
            c.update(
                create=len(p.create), update=len(p.update) + len(p.adopt), delete=len(p.delete), unchanged=p.unchanged
            )
        return c

    def changes(self) -> int:
        t = self.totals()
        return t["create"] + t["update"] + t["delete"]

    def text(self) -> str:
        if self.refused:
            return self._edits_text("refused") + (
                f"railyard wrote nothing: NetBox holds {len(self.edits):,} edit(s) made since railyard's last push "
                "of this site; run again with --overwrite to put the design's values back, or take NetBox's "
                "values into the design (--edits FILE lists them as JSON)\n"
            )
        verb = "would" if self.dry_run else "did"
        rows = [
            f"railyard site {self.site}" + (f" (NetBox also holds {', '.join(self.others)})" if self.others else "")
        ]
        rows.append(f"{'endpoint':28} {'create':>7} {'update':>7} {'delete':>7} {'same':>7}")
        for ep, p in self.endpoints.items():
            if p.create or p.update or p.adopt or p.delete or p.unchanged:
                rows.append(
                    f"{ep:28} {len(p.create):7,} {len(p.update) + len(p.adopt):7,} {len(p.delete):7,} {p.unchanged:7,}"
                )
        t = self.totals()
        rows.append(
            f"railyard {verb} create {t['create']:,}, update {t['update']:,} and delete {t['delete']:,} "
            f"NetBox objects ({t['unchanged']:,} unchanged)"
        )
        moves = [m for p in self.endpoints.values() for m in p.moves]
        if moves:
            # a move is a work order for the site team, not one more "update": name each
            rows.append(f"{len(moves):,} devices {verb} move (from -> to):")
            rows += [f"  {key}: {a} -> {b}" for key, a, b in moves]
        migrated = sum(p.migrated for p in self.endpoints.values())
        if migrated:
            rows.append(f"{migrated:,} objects of the single-site layout {verb} move into site {self.site}'s scope")
        kept = [(e, key, f) for e, p in self.endpoints.items() for key, f in p.kept]
        if kept:
            rows.append(
                f"{len(kept):,} shared objects differ from this design and stay as NetBox holds them "
                "(other railyard sites use them):"
            )
            rows += [f"  {e} {key}: {', '.join(f)}" for e, key, f in kept]
        if self.edits:
            rows.append(self._edits_text("would revert" if self.dry_run else "reverted").rstrip("\n"))
        if not self.dry_run:
            objs = t["create"] + t["update"] + t["delete"] + t["unchanged"]
            rate = objs / self.seconds if self.seconds else math.inf
            rows.append(f"{self.requests:,} requests in {self.seconds:.1f} s ({rate:,.0f} objects/s)")
        return "\n".join(rows) + "\n"

    def _edits_text(self, how: str) -> str:
        head = {
            "refused": "NetBox edits this push would revert (NetBox -> design):",
            "would revert": "NetBox edits a push would revert; without --overwrite it refuses (NetBox -> design):"
            if not self.overwrite
            else "NetBox edits this push would revert (--overwrite; NetBox -> design):",
            "reverted": "NetBox edits this push reverted (--overwrite; NetBox -> design):",
        }[how]
        n = len(self.edits)
        rows = [f"{n:,} {head.replace('edits', 'edit') if n == 1 else head}"]
        rows += [f"  {e.endpoint} {e.key}: {e.field} {e.netbox} -> {e.design}" for e in self.edits]
        return "\n".join(rows) + "\n"


# ------------------------------------------------------------------------------------ comparing


def _norm(v: Any) -> Any:
    """A NetBox response value in the shape railyard writes it: nested objects by id, choices by value."""
    if isinstance(v, dict):
        if "object_type" in v and "object_id" in v:
            return {"object_type": v["object_type"], "object_id": v["object_id"]}
        if "id" in v:
            return v["id"]
        if "value" in v and "label" in v:
            return v["value"]
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _same(want: Any, have: Any) -> bool:
    """Whether NetBox's (normalised) value is what railyard writes."""
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have
    if isinstance(want, int | float) and isinstance(have, int | float):
        return math.isclose(float(want), float(have), abs_tol=1e-9)  # positions and lengths come back as floats
    if isinstance(want, list) and isinstance(have, list):
        if want and all(isinstance(t, dict) and "object_id" in t for t in want):  # cable ends: a set
            return sorted(map(_termination, want)) == sorted(map(_termination, have))
        return len(want) == len(have) and all(_same(a, b) for a, b in zip(want, have, strict=True))
    if isinstance(want, str) and isinstance(have, str) and _HEX6.fullmatch(want):
        return want.lower() == have.lower()  # colours are stored lower-case
    return bool(want == have)


def _termination(t: Any) -> tuple[str, str]:
    # as text: NetBox's answer may hold anything there, and the ends are sorted
    return (str(t.get("object_type")), str(t.get("object_id"))) if isinstance(t, dict) else ("", "")


class _Ids:
    """(endpoint, key) -> NetBox id; a dry run hands out negative placeholders for objects to create."""

    def __init__(self, lenient: bool = False) -> None:
        self.ids: dict[tuple[str, str], int] = {}
        self._next = -1
        self.lenient = lenient  # an object NetBox lacks gets a placeholder (the edits' look-ahead)

    def placeholder(self, endpoint: str, key: str) -> int:
        self.ids[(endpoint, key)] = self._next
        self._next -= 1
        return self.ids[(endpoint, key)]

    def resolve(self, v: Any, where: str) -> Any:
        if isinstance(v, Ref):
            try:
                return self.ids[(v.endpoint, v.key)]
            except KeyError:
                if self.lenient:
                    return self.placeholder(v.endpoint, v.key)
                raise NetBoxError(
                    f"{where}: refers to {v.endpoint} {v.key!r}, which railyard did not push "
                    "(a railyard bug: please report it)"
                ) from None
        if isinstance(v, Termination):
            return {"object_type": "dcim.interface", "object_id": self.resolve(v.interface, where)}
        if isinstance(v, list):
            return [self.resolve(x, where) for x in v]
        if isinstance(v, dict):
            return {k: self.resolve(x, where) for k, x in v.items()}
        return v


def _body(obj: NbObject, ids: _Ids, tag_id: int, site: str) -> dict[str, Any]:
    body = {k: ids.resolve(v, f"{obj.endpoint} {obj.key}") for k, v in obj.fields.items()}
    if obj.endpoint in UNTAGGED:
        return body
    body["tags"] = [tag_id]
    # railyard's key (and site), what this push writes, and the inventory's own custom fields (a
    # multi-plane backend's plane)
    book = {KEY_FIELD: obj.key, PUSHED_FIELD: _record(body)}
    if obj.endpoint in SITE_SCOPED:
        book[SITE_FIELD] = site
    body["custom_fields"] = {**book, **body.get("custom_fields", {})}
    return body


# fields no record tracks: railyard's bookkeeping, and an ASN's sites (every railyard site using it)
_UNTRACKED = frozenset({"tags", "custom_fields", "sites"}) | CREATE_ONLY


def _record(body: dict[str, Any]) -> str:
    """What railyard writes to an object's owned fields, as a digest per field (PUSHED_FIELD)."""
    return json.dumps(
        {k: _digest(_ordered(k, v)) for k, v in sorted(body.items()) if k not in _UNTRACKED}, separators=(",", ":")
    )


def _digest(v: Any) -> str:
    """A short digest of a value in the normal form _same compares by (NetBox's answer normalised by
    _norm, or the body railyard sends): equal values, equal digests."""
    return hashlib.sha256(json.dumps(_canon(v), sort_keys=True).encode()).hexdigest()[:10]


def _canon(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int | float):
        return int(v) if float(v).is_integer() else round(float(v), 6)
    if isinstance(v, str):
        return v.lower() if _HEX6.fullmatch(v) else v
    if isinstance(v, list):
        if v and all(isinstance(t, dict) and "object_id" in t for t in v):  # cable ends: a set
            return sorted(map(_termination, v))
        return [_canon(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _canon(x) for k, x in v.items()}
    return str(v)


def _ordered(name: str, v: Any) -> Any:
    """A many-to-many field's ids in one order (NetBox answers them in an order of its own)."""
    return sorted(v, key=str) if name in UNORDERED and isinstance(v, list) else v


def _pushed(have: dict[str, Any]) -> dict[str, str]:
    """The record of railyard's last push on a NetBox object ({} when it has none, or not one railyard
    could have written)."""
    text = (have.get("custom_fields") or {}).get(PUSHED_FIELD)
    try:
        rec = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return {k: v for k, v in rec.items() if isinstance(v, str)} if isinstance(rec, dict) else {}


def _shown(v: Any) -> str:
    """A value as the site team reads it: a NetBox object by name (an interface as `device:port`),
    a railyard reference by key."""
    if isinstance(v, Ref):
        return v.key
    if isinstance(v, Termination):
        return v.interface.key
    if isinstance(v, dict):
        if isinstance(v.get("object"), dict):  # a cable end
            return _shown(v["object"])
        dev = v.get("device")
        if isinstance(dev, dict) and v.get("name"):
            return f"{dev.get('name')}:{v['name']}"
        for k in ("value", "name", "display", "address", "prefix", "id"):
            if k in v:
                return _shown(v[k])
        return escape(json.dumps(v, sort_keys=True), (), limit=200)
    if isinstance(v, list):
        return "[" + ", ".join(sorted(_shown(x) for x in v)) + "]"
    if v is None or v == "":
        return "(empty)" if v == "" else "(none)"
    if isinstance(v, float):
        return f"{v:g}"
    return escape(str(v), (), limit=200)


def _edits(endpoint: str, key: str, obj: NbObject, body: dict[str, Any], have: dict[str, Any]) -> list[Edit]:
    """The fields of `have` NetBox changed since railyard's last push (their digest is no longer the
    one railyard recorded) that this push would change: a change of the design alone is no edit."""
    pushed = _pushed(have)
    out = []
    for k in _diff(body, have):
        if k in _UNTRACKED or k not in pushed or _digest(_ordered(k, _norm(have.get(k)))) == pushed[k]:
            continue
        out.append(Edit(endpoint, key, k, _shown(have.get(k)), _shown(obj.fields.get(k))))
    return out


def _owned(body: dict[str, Any]) -> dict[str, Any]:
    """What a push may change on an existing object: not the fields the site team moves on."""
    return {k: v for k, v in body.items() if k not in CREATE_ONLY}


def _diff(body: dict[str, Any], have: dict[str, Any]) -> list[str]:
    changed = []
    for k, want in _owned(body).items():
        if k == "custom_fields":
            have_cf = have.get("custom_fields") or {}
            if any(have_cf.get(f) != v for f, v in want.items()):
                changed.append(k)
        elif k == "tags":
            if not set(want) <= {t["id"] for t in have.get("tags", [])}:
                changed.append(k)
        elif k in UNORDERED:
            if sorted(want) != sorted(_norm(have.get(k)) or []):
                changed.append(k)
        elif not _same(want, _norm(have.get(k))):  # absent in NetBox's answer: None, so it differs
            changed.append(k)
    return changed


# ------------------------------------------------------------------------------------ pushing


def _chunks(items: list[Any], n: int = BATCH) -> Iterator[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _send(c: Client, method: str, endpoint: str, rows: list[Any]) -> list[Any]:
    """rows as list requests of at most BATCH, spread over the client's workers (each request is
    one transaction in NetBox, so a refusal leaves the other requests' objects in place, and the
    next push picks up from there); NetBox's answers in the rows' order."""
    if not rows:
        return []
    size = max(1, min(BATCH, math.ceil(len(rows) / c.workers)))
    chunks = list(_chunks(rows, size))
    answers = c.parallel(lambda chunk: c.request(method, f"{endpoint}/", chunk), chunks)
    if method == "POST":  # railyard reads the new objects' ids, in the order it sent them
        for chunk, a in zip(chunks, answers, strict=True):
            what = f"NetBox's answer to POST {endpoint}/"
            check(a, [_REF], what)
            if len(a) != len(chunk):
                raise BadAnswer(f"{what} lists {len(a)} objects for the {len(chunk)} railyard sent")
    return [o for a in answers for o in (a or [])]


def _ensure_bookkeeping(c: Client, dry_run: bool) -> tuple[int, bool]:
    """The `railyard` tag, the `railyard_id` and `railyard_pushed` custom fields on every object type
    railyard writes and `railyard_site` on those of a site; NetBox's id of the tag, and whether
    `railyard_site` was there before (without it, NetBox holds no site-scoped railyard object)."""
    tags = c.all("extras/tags", slug=TAG)
    tag_id: int  # NetBox's id of the tag (-1 in a dry run without one)
    if tags:
        tag_id = tags[0]["id"]
    elif dry_run:
        tag_id = -1
    else:
        made = c.request(
            "POST",
            "extras/tags/",
            {"name": TAG, "slug": TAG, "color": "2196f3", "description": "written by railyard: do not edit by hand"},
        )
        check(made, _REF, "NetBox's answer to POST extras/tags/")
        tag_id = made["id"]
    types = sorted(t for e, t in OBJECT_TYPES.items() if e not in UNTAGGED)
    _ensure_field(
        c, KEY_FIELD, "railyard id", "railyard's stable key of this object (its design compiles to it)", types, dry_run
    )
    scoped = _ensure_field(
        c,
        SITE_FIELD,
        "railyard site",
        "the railyard site this object belongs to (a push changes only its own site's objects)",
        sorted(OBJECT_TYPES[e] for e in SITE_SCOPED),
        dry_run,
    )
    _ensure_field(
        c,
        PUSHED_FIELD,
        "railyard pushed",
        "what railyard last wrote here (a digest per field): a push names the fields changed in NetBox since",
        types,
        dry_run,
        filter_logic="disabled",
    )
    return tag_id, scoped


def _ensure_field(
    c: Client,
    name: str,
    label: str,
    description: str,
    types: list[str],
    dry_run: bool,
    filter_logic: str = "exact",
) -> bool:
    """A text custom field railyard writes, on at least `types` (made, or its object types widened);
    whether it was there before."""
    fields_ = c.all("extras/custom-fields", name=name)
    if not fields_:
        if not dry_run:
            c.request(
                "POST",
                "extras/custom-fields/",
                {
                    "name": name,
                    "label": label,
                    "type": "text",
                    "object_types": types,
                    "description": description,
                    "ui_editable": "no",
                    "filter_logic": filter_logic,
                },
            )
        return False
    if set(types) - set(fields_[0].get("object_types", [])) and not dry_run:
        c.request(
            "PATCH",
            f"extras/custom-fields/{fields_[0]['id']}/",
            {"object_types": sorted(set(types) | set(fields_[0].get("object_types", [])))},
        )
    return True


# what finds an object again (interface templates have no tags or custom fields, sites no device:
# NetBox ignores a requested field its serializer lacks)
_FIELDS_ANYWHERE = ("id", "tags", "custom_fields", "name", "slug", "device", "device_type")


def _fields(want: dict[str, NbObject]) -> str:
    """What a GET needs of an endpoint's objects: the fields railyard owns there and what finds them.
    NetBox (>= 4.0) then serializes only those, which halves a re-push of a big site: a full
    interface or cable drags its device, connected endpoints, paths and counters along."""
    names = set(_FIELDS_ANYWHERE)
    for o in want.values():
        names.update(o.fields)
        names.update(o.late)
    return ",".join(sorted(names))


@dataclass(slots=True)
class _Scope:
    """Which railyard objects this push may change: its own site's, and the single-site layout's when
    that was this site; the other railyard sites NetBox holds keep theirs and share the shared ones."""

    site: str
    field: bool  # SITE_FIELD exists: site-scoped objects are asked for by it
    legacy: bool  # NetBox holds this site's objects of the single-site layout (no SITE_FIELD): claimed
    others: list[str]


def _scope(c: Client, site: str, slug: str, field_: bool) -> _Scope:
    def first(**params: str) -> tuple[int, dict[str, Any] | None]:
        path = f"dcim/devices/?{urlencode({'limit': 1, 'tag': TAG, **params})}"
        page = c.request("GET", path)
        check(page, _PAGE, f"NetBox's answer to GET {path}")
        return int(page.get("count") or 0), (page["results"][0] if page["results"] else None)

    def site_of(device: dict[str, Any] | None) -> dict[str, Any]:
        s = device.get("site") if isinstance(device, dict) else None
        return s if isinstance(s, dict) else {}

    if field_:
        n_legacy, one = first(**{f"cf_{SITE_FIELD}__empty": "true"})
        n_other, other = first(**{f"cf_{SITE_FIELD}__n": site, f"cf_{SITE_FIELD}__empty": "false"})
    else:  # no railyard object has a site yet: every one is of the single-site layout
        (n_legacy, one), (n_other, other) = first(), (0, None)
    legacy = bool(n_legacy) and site_of(one).get("slug") == slug
    others = {
        str(k)
        for o in c.all("dcim/sites", tag=TAG)
        if (k := (o.get("custom_fields") or {}).get(KEY_FIELD)) and k != site
    }
    if n_other:  # a railyard site in a site NetBox had before (untagged)
        others.add(str(site_of(other).get("name") or "a site NetBox had before"))
    if n_legacy and not legacy:
        others.add(str(site_of(one).get("name") or "a site of railyard's single-site layout"))
    return _Scope(site, field_, legacy, sorted(others))


def _existing(c: Client, endpoint: str, fields: str, scope: _Scope) -> dict[str, dict[str, Any]]:
    """railyard's objects at this endpoint that this push may change, by key: every one of a shared
    endpoint, this site's of a site-scoped one (a tagged object without a key is not railyard's doing,
    e.g. a copy a user tagged: it is left alone)."""
    if endpoint not in SITE_SCOPED:
        found = c.all(endpoint, tag=TAG, fields=fields)
    else:
        found = c.all(endpoint, tag=TAG, fields=fields, **{f"cf_{SITE_FIELD}": scope.site}) if scope.field else []
        if scope.legacy:
            empty = {f"cf_{SITE_FIELD}__empty": "true"} if scope.field else {}
            found += c.all(endpoint, tag=TAG, fields=fields, **empty)
    mine = {scope.site, ""} if scope.legacy else {scope.site}
    keyed: dict[str, dict[str, Any]] = {}
    for o in found:
        cf = o.get("custom_fields") or {}
        key = cf.get(KEY_FIELD)
        if not key:
            continue
        if endpoint in SITE_SCOPED and (cf.get(SITE_FIELD) or "") not in mine:
            continue  # another site's, whatever the listing's filter did: never this push's to change
        if key in keyed and not cf.get(SITE_FIELD):
            continue  # the site's own copy wins over one of the single-site layout
        keyed[key] = o
    return keyed


def _templates(c: Client, device_types: dict[str, dict[str, Any]], fields: str) -> dict[str, dict[str, Any]]:
    """Interface templates take neither tags nor custom fields in NetBox: railyard's are those of its
    device types, keyed `<device type key>:<name>` as the inventory keys them."""
    key_of = {o["id"]: k for k, o in device_types.items()}
    out: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(sorted(key_of), 50):
        found = c.all("dcim/interface-templates", device_type_id=chunk, fields=fields)
        check(found, [{"device_type": Req(_REF), "name": Req(str)}], "NetBox's dcim/interface-templates")
        for t in found:
            if t["device_type"]["id"] not in key_of:
                raise BadAnswer(
                    f"NetBox listed interface template {t['id']} of device type {t['device_type']['id']}, "
                    f"which railyard did not ask for (asked for {chunk})"
                )
            out[f"{key_of[t['device_type']['id']]}:{t['name']}"] = t
    return out


def push(objects: Iterable[NbObject], c: Client, dry_run: bool = False, overwrite: bool = False) -> PushReport:
    """Make NetBox hold `objects` (see the module's docstring). A push that fails part-way says, in the
    error's notes, what it had written: each list request is one transaction in NetBox, so what is
    written is whole objects, and the same push run again compares and completes it. A push that would
    revert fields the site team changed in NetBox since the last push writes nothing (its report is
    `refused` and names them) unless `overwrite`."""
    before = c.written.copy()
    try:
        return _push(objects, c, dry_run, overwrite)
    except HttpError as exc:
        done = c.written - before
        again = "once NetBox is idle (the request it left unanswered may still be applied)" if exc.unsure else ""
        if dry_run:
            exc.notes.append("nothing was written (a dry run)")
        elif not done:
            exc.notes.append(
                f"no other request of this push wrote to NetBox; run it again {again or 'once that is fixed'}"
            )
        else:
            exc.notes.append(
                f"before this, the push had written {done['POST']:,} new, {done['PATCH']:,} changed and "
                f"{done['DELETE']:,} deleted NetBox objects (each request is one transaction: none is half "
                f"written); run the same push again {again + ' ' if again else ''}to complete it: it does only "
                "what is left"
            )
        raise


def _push(objects: Iterable[NbObject], c: Client, dry_run: bool, overwrite: bool) -> PushReport:
    start, requests = time.monotonic(), c.requests
    want: dict[str, dict[str, NbObject]] = defaultdict(dict)
    for o in objects:
        if o.endpoint == "extras/tags" and o.key == TAG:
            continue  # railyard's own tag: made (or found) by _ensure_bookkeeping before anything else
        if o.endpoint not in OBJECT_TYPES:
            raise NetBoxError(f"{o.endpoint}: not an endpoint railyard writes (a railyard bug: please report it)")
        if o.key in want[o.endpoint]:
            raise NetBoxError(f"{o.endpoint}: two objects with key {o.key!r} (a railyard bug: please report it)")
        want[o.endpoint][o.key] = o
    if len(want["dcim/sites"]) != 1:
        raise NetBoxError(
            f"dcim/sites: railyard pushes one site at a time, not {len(want['dcim/sites'])} (a railyard bug: "
            "please report it)"
        )
    ((site, site_obj),) = want["dcim/sites"].items()
    tag_id, field_ = _ensure_bookkeeping(c, dry_run)
    planed = sorted(
        OBJECT_TYPES[e]
        for e, objs in want.items()
        if any(PLANE_FIELD in o.fields.get("custom_fields", ()) for o in objs.values())
    )
    if planed:  # a multi-plane backend: its switches and cables carry their plane
        _ensure_field(c, PLANE_FIELD, "plane", "the network plane of a multi-plane backend (railyard)", planed, dry_run)
    # a dry run into a NetBox without railyard's tag: no railyard object of any site is there
    scope = (
        _Scope(site, False, False, [])
        if tag_id < 0
        else _scope(c, site, str(site_obj.fields.get("slug") or ""), field_)
    )
    order = [e for e in ENDPOINTS if e in OBJECT_TYPES]
    tagged = [e for e in order if e not in UNTAGGED]
    fields = {e: _fields(want[e]) for e in order}
    have = dict(zip(tagged, c.parallel(lambda e: _existing(c, e, fields[e], scope), tagged), strict=True))
    have["dcim/interface-templates"] = _templates(c, have["dcim/device-types"], fields["dcim/interface-templates"])
    # a shared object (a device type, a role, ...) another railyard site uses is never changed or deleted
    # by this one: its sites would each put their own version back, push after push
    frozen = {e for e in order if scope.others and e not in SITE_SCOPED}
    edits = _look_ahead(want, have, frozen, tag_id, site)
    report = PushReport({e: EndpointPlan() for e in order}, dry_run, site=site, others=scope.others, edits=edits)
    report.overwrite = overwrite
    if edits and not overwrite and not dry_run:
        report.refused = True
        report.requests, report.seconds = c.requests - requests, time.monotonic() - start
        return report
    plans = report.endpoints
    # deletes first, children before parents: a freed port can take its new cable
    for e in reversed(order):
        gone = sorted((o["id"], k) for k, o in have[e].items() if k not in want[e])
        if e in frozen:
            # still used by another railyard site: an ASN only stops naming this site
            for i, k in gone:
                sites = [x for x in _norm(have[e][k].get("sites")) or [] if x != _site_id(have, site)]
                if e == "ipam/asns" and sites != (_norm(have[e][k].get("sites")) or []):
                    plans[e].update.append((i, NbObject(e, k, {}), ["sites"]))
                    if not dry_run:
                        _send(c, "PATCH", e, [{"id": i, "sites": sites}])
            continue
        plans[e].delete = gone
        if not dry_run:
            _send(c, "DELETE", e, [{"id": i} for i, _ in gone])
    ids = _Ids()
    late: list[tuple[str, int, NbObject]] = []
    for e in order:
        p = plans[e]
        by_natural = _natural_index(c, e, want[e], have[e], ids)
        bodies: dict[int, dict[str, Any]] = {}
        for key, obj in want[e].items():
            body = _body(obj, ids, tag_id, site)
            cur = have[e].get(key)
            if cur is None and (nat := by_natural.get(key)) is not None:
                if e in SHARED_BY_SLUG and TAG not in {t["slug"] for t in nat.get("tags", [])}:
                    ids.ids[(e, key)] = nat["id"]  # the site's own: use it, never change it
                    p.shared += 1
                    continue
                ids.ids[(e, key)] = nat["id"]
                if obj.late:
                    late.append((e, nat["id"], obj))
                if e in ADOPT_AS_IS and not set(_diff(body, nat)) - {"tags", "custom_fields"}:
                    # a port NetBox made from railyard's template, just as railyard wants it: left
                    # as NetBox made it (untagged, so never deleted), found again through its device
                    p.unchanged += 1
                else:
                    p.adopt.append((nat["id"], obj))
                    bodies[nat["id"]] = body
                continue
            if cur is None:
                p.create.append(obj)
                continue
            ids.ids[(e, key)] = cur["id"]
            if e == "ipam/asns":  # every railyard site using the ASN stays named on it
                body["sites"] = sorted({*(_norm(cur.get("sites")) or []), *body["sites"]})
            changed = _diff(body, cur)
            if e in frozen:
                if set(changed) - {"sites", "custom_fields", "tags"}:
                    p.kept.append((key, sorted(set(changed) - {"custom_fields", "tags"})))
                changed = [k for k in changed if k == "sites"]  # only the ASN's sites: this site joins
                body = {k: body[k] for k in changed}
            if changed:
                p.update.append((cur["id"], obj, changed))
                bodies[cur["id"]] = body
                if not (cur.get("custom_fields") or {}).get(SITE_FIELD) and e in SITE_SCOPED:
                    p.migrated += 1
                if e == "dcim/devices" and {"rack", "position"} & set(changed):
                    p.moves.append((key, _where(cur.get("rack"), cur.get("position")), _where_obj(obj)))
            else:
                p.unchanged += 1
            if obj.late:
                late.append((e, cur["id"], obj))
        if dry_run:
            for obj in p.create:
                ids.placeholder(e, obj.key)
            continue
        made = _send(c, "POST", e, [_body(o, ids, tag_id, site) for o in p.create])
        for o, m in zip(p.create, made, strict=True):
            ids.ids[(e, o.key)] = m["id"]
            if o.late:
                late.append((e, m["id"], o))
        # devices that move within or between racks first leave their units: NetBox checks each
        # new position against the rack as it is, so two switches trading units would collide
        _send(
            c,
            "PATCH",
            e,
            [
                {"id": i, "position": None, "face": ""}
                for i, _, changed in p.update
                if e == "dcim/devices" and {"position", "rack", "face"} & set(changed)
            ],
        )
        patches = [{"id": i, **_owned(bodies[i])} for i, _, _ in p.update if i in bodies]
        patches += [{"id": i, **_owned(bodies[i])} for i, _ in p.adopt]
        _send(c, "PATCH", e, patches)
    _apply_late(c, late, have, ids, plans, dry_run)
    report.requests, report.seconds = c.requests - requests, time.monotonic() - start
    return report


def _site_id(have: dict[str, dict[str, dict[str, Any]]], site: str) -> int | None:
    cur = have["dcim/sites"].get(site)
    return int(cur["id"]) if cur is not None else None


def _look_ahead(
    want: dict[str, dict[str, NbObject]],
    have: dict[str, dict[str, dict[str, Any]]],
    frozen: set[str],
    tag_id: int,
    site: str,
) -> list[Edit]:
    """The site team's edits a push would revert, found before it writes anything: each object NetBox
    holds, against the design with NetBox's ids (an object still to be made by a placeholder, which
    differs from whatever NetBox holds)."""
    ids = _Ids(lenient=True)
    for e, found in have.items():
        for key, o in found.items():
            ids.ids[(e, key)] = o["id"]
    out: list[Edit] = []
    for e, objs in want.items():
        if e in frozen or e in UNTAGGED:
            continue
        for key, obj in objs.items():
            cur = have.get(e, {}).get(key)
            if cur is not None:
                out += _edits(e, key, obj, _body(obj, ids, tag_id, site), cur)
    return sorted(out, key=lambda x: (ENDPOINTS.index(x.endpoint), x.key, x.field))


def _where(rack: Any, position: Any) -> str:
    """A device's place as NetBox holds it: rack name and unit."""
    name = rack.get("name") or rack.get("display") or f"rack #{rack.get('id')}" if isinstance(rack, dict) else "no rack"
    return f"{name} U{float(position):g}" if isinstance(position, (int, float)) else str(name)


def _where_obj(obj: NbObject) -> str:
    """A device's place as railyard wants it."""
    rack = obj.fields.get("rack")
    name = rack.key if isinstance(rack, Ref) else "no rack"
    pos = obj.fields.get("position")
    return f"{name} U{pos:g}" if isinstance(pos, (int, float)) else name


def _natural_index(
    c: Client, endpoint: str, want: dict[str, NbObject], have: dict[str, dict[str, Any]], ids: _Ids
) -> dict[str, dict[str, Any]]:
    """Objects NetBox holds without railyard's key that are the ones railyard wants: the site's own
    manufacturers/roles/RIRs/tenants/sites of the same slug, and the interfaces NetBox made from
    railyard's device types when it created railyard's devices."""
    missing = {k: o for k, o in want.items() if k not in have}
    if not missing:
        return {}
    out: dict[str, dict[str, Any]] = {}
    if endpoint in SHARED_BY_SLUG:
        slugs = {o.fields.get("slug"): k for k, o in missing.items() if o.fields.get("slug")}
        for found in c.all(endpoint):
            if found.get("slug") in slugs:
                out[slugs[found["slug"]]] = found
    elif endpoint == "dcim/interfaces":
        devices: dict[int, dict[str, str]] = defaultdict(dict)
        for k, o in missing.items():
            dev = ids.ids.get((o.fields["device"].endpoint, o.fields["device"].key))
            if dev is not None and dev > 0:
                devices[dev][o.fields["name"]] = k
        pages = c.parallel(lambda chunk: c.all(endpoint, device_id=chunk), list(_chunks(sorted(devices), 50)))
        for page in pages:
            check(page, [{"device": Req(_REF), "name": Req(str)}], f"NetBox's {endpoint}")
        for found in (f for page in pages for f in page):
            key = devices[found["device"]["id"]].get(found["name"])
            if key is not None:
                out[key] = found
    return out


def _apply_late(
    c: Client,
    late: list[tuple[str, int, NbObject]],
    have: dict[str, dict[str, dict[str, Any]]],
    ids: _Ids,
    plans: dict[str, EndpointPlan],
    dry_run: bool,
) -> None:
    """Fields that point at objects made after this one (a device's primary and OOB address)."""
    by_ep: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e, oid, obj in late:
        body = {k: ids.resolve(r, f"{e} {obj.key}") for k, r in obj.late.items()}
        cur = have[e].get(obj.key)
        if cur is not None and not _diff(body, cur):
            continue
        by_ep[e].append({"id": oid, **body})
        if cur is not None and all(u[0] != oid for u in plans[e].update):
            plans[e].update.append((oid, obj, sorted(body)))
            plans[e].unchanged -= 1
    if dry_run:
        return
    for e, rows in by_ep.items():
        _send(c, "PATCH", e, rows)
