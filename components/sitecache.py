"""The compiled-site cache of the Pulumi program: a design that did not change deploys without being
compiled, rendered and hashed again.

Every `pulumi up` and `preview` runs the program, and the program compiled and rendered the whole design
each time: at h100-16k that was most of a no-change `up` (issue 18). What the program registers of a
compiled design is a SiteLayout, in which a public group needs only its files' entries (path -> sha256,
size, lines): their contents are in the deploy folder's blob store since the run that staged them. So
after a run the program records the layout (public groups as entries, secret groups as their texts with
placeholders, which are filled from the stack's secrets on every run; where each device stands, which
components.moves checks) under a key, and the next run
with the same key registers the record instead of compiling.

The key is the SHA-256 of everything the compiled site is a function of: the validated design (after
`extends:` and the stack's overrides) and catalog, as the plan serializes them; the source of railyard's
compiler and components (every file under generators/ and components/, templates included); the
Python version; and the installed versions of the pinned packages (requirements.txt), since pyavd and
Jinja2 render some of the files. A record is used only when it parses as this format, its key matches,
and, during an `up`, every blob its entries name is in the deploy folder's store with its size (else
the provider of a changed or refreshed group would have nothing to copy): anything else is a miss, and
a miss compiles as before. The records live in `$RAILYARD_CACHE/sites` (default
~/.cache/railyard/sites), owner-only, at most KEEP of them; `RAILYARD_SITE_CACHE=off` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from components.artifact import BLOBS, SECRET_MODE, is_sha256, parse_entry, stored_blob, write_atomic
from components.site import SECRET_SUFFIX, GroupSpec, Placement, SiteLayout
from generators.cachedir import cache_folder
from generators.reports.diff import placement_of_entries

FORMAT = "railyard.site-cache/3"  # 3: with the placement components.moves records
KEEP = 16  # records kept (the newest by use): a few stacks and design variants
ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("generators", "components")


def enabled() -> bool:
    return os.environ.get("RAILYARD_SITE_CACHE", "on") != "off"


def _source_files() -> Iterator[Path]:
    for top in SOURCES:
        for folder, dirs, names in os.walk(ROOT / top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for n in sorted(names):
                if not n.endswith((".pyc", ".pyo")):
                    yield Path(folder) / n


def _package_versions() -> list[str]:
    from importlib import metadata

    out = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        name = line.split("#", 1)[0].strip().split("==", 1)[0].strip()
        if name:
            try:
                out.append(f"{name}=={metadata.version(name)}")
            except metadata.PackageNotFoundError:
                out.append(f"{name} missing")
    return out


def site_key(design: Mapping[str, Any], catalog: Mapping[str, Any]) -> str | None:
    """The key of the site compiled from this design and catalog (their `model_dump(mode="json")`) by
    this railyard on this interpreter and packages; None when the cache is off or railyard's own
    files cannot be read (then every run compiles)."""
    if not enabled():
        return None
    h = hashlib.sha256()
    try:
        for part in (FORMAT, sys.version, *_package_versions()):
            h.update(part.encode() + b"\0")
        for f in _source_files():
            h.update(str(f.relative_to(ROOT)).encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest())
    except OSError:
        return None
    h.update(orjson.dumps({"design": design, "catalog": catalog}, option=orjson.OPT_SORT_KEYS))
    return h.hexdigest()


def _record_path(key: str) -> Path | None:
    folder = cache_folder("sites")
    return folder / f"{key}.json" if folder is not None else None


def save(key: str, layout: SiteLayout, entries: Mapping[str, Mapping[str, str]]) -> None:
    """Record `layout` under `key`; `entries` are the public groups' staged entries (FileGroup.entries).
    A cache that cannot be written is skipped: the next run compiles."""
    path = _record_path(key)
    if path is None:
        return
    groups: dict[str, Any] = {}
    for name, g in layout.groups.items():
        rec: dict[str, Any] = {"section": g.where.section, "network": g.where.network, "row": g.where.row}
        if g.needs:
            rec |= {"texts": dict(g.texts), "needs": {p: sorted(n) for p, n in g.needs.items()}}
        else:
            rec["entries"] = dict(entries[name])
        groups[name] = rec
    data = orjson.dumps(
        {"format": FORMAT, "key": key, "facts": layout.facts, "groups": groups, "placement": layout.placement}
    )
    with contextlib.suppress(OSError):
        write_atomic(path, data, SECRET_MODE, durable=False)
        _prune(path.parent)


def _prune(folder: Path) -> None:
    """Keep the KEEP most recently used records; only files named as records are touched."""
    records = []
    for f in folder.iterdir():
        stem, _, ext = f.name.partition(".")
        if ext == "json" and is_sha256(stem) and f.is_file() and not f.is_symlink():
            records.append((f.stat().st_mtime_ns, f.name, f))
    for *_, f in sorted(records, reverse=True)[KEEP:]:
        f.unlink(missing_ok=True)


def load(key: str, out_dir: str | None) -> SiteLayout | None:
    """The recorded layout for `key`, or None (a miss). With `out_dir` (an `up`, which may copy any
    group's files), every public entry's blob must be in that deploy folder's store."""
    path = _record_path(key)
    if path is None:
        return None
    try:
        doc = orjson.loads(path.read_bytes())
        if doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        groups = {}
        for name, rec in doc["groups"].items():
            where = Placement(rec["section"], bool(rec["network"]), rec["row"])
            if "entries" in rec:
                if name.endswith(SECRET_SUFFIX) or not all(parse_entry(e) for e in rec["entries"].values()):
                    return None
                groups[name] = GroupSpec(where, {}, {}, dict(rec["entries"]))
            else:
                needs = {p: frozenset(n) for p, n in rec["needs"].items()}
                if not name.endswith(SECRET_SUFFIX) or set(needs) != set(rec["texts"]):
                    return None
                groups[name] = GroupSpec(where, dict(rec["texts"]), needs)
        if placement_of_entries(doc["placement"]) is None:
            return None
        layout = SiteLayout(doc["facts"], groups, dict(doc["placement"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if out_dir is not None and not _blobs_present(Path(out_dir), layout):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # used: kept by _prune
    return layout


def _blobs_present(root: Path, layout: SiteLayout) -> bool:
    blobs = root / BLOBS
    for g in layout.groups.values():
        for entry in (g.entries or {}).values():
            facts = parse_entry(entry)
            if facts is None or stored_blob(blobs / facts["sha256"], facts["size"]) is None:
                return False
    return True
