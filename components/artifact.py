"""Generated files as Pulumi resources, through Python dynamic providers.

`FileGroup` is what the program registers: one resource per folder component (the site's top files,
a Network/Folder section's files of no rack, one row's files of a section) whose input `files` maps
each path to its sha256, size and line count (one string per path). One resource per file made h100-16k 3,635 provider
resources, and the engine's per-resource cost (check, diff, a state checkpoint per step), not the
files, set the time of an `up` (issue 18). `FileArtifactProvider` is the one-file-per-resource
provider of the stacks railyard made before; it stays because those stacks name it in their state:
their refresh, and the deletes of the `up` that moves them to groups, run it. Those deletes leave
alone every file a group now holds (see `owners`).

The state holds a file by hash, not content (issue 12: with the content as an input, the state of
h100-1024-vms held all 6.5 MB of its files, and `pulumi preview --diff` of 1:1 -> 2:1 printed
137,545 lines; bench/pulumi_diff.py measures both). The program stores the content under its hash in
the deploy folder's blob store (`<dir>/.railyard/blobs/<sha256>`, owner-only) during `pulumi up`, and
the provider copies it from there, after checking its hash, to the target atomically (temp file in
the same directory, fsync, rename). So `preview --diff` shows a few lines per changed file (the
changed keys of a group's map), only the files whose hash (or mode) changed are written, a file a
group drops is removed (and the directories it leaves empty; the last delete also the blob store),
and a refresh re-hashes the files on disk, so a hand edit shows up as drift (`pulumi refresh --diff`,
then `pulumi up` restores it) and a deleted file leaves the map and is written again by the next
`up`. A file already on disk with the right hash is never rewritten: that is how a stack of
per-file resources (or one made when the content itself was an input) moves to groups.

Pitfall this module exists for (Pulumi SDK 3.272): the provider object is pickled with dill into
every resource. A provider class defined in `__main__`, or one holding instance attributes, makes
each serialization drag pickle internals along and fails with RecursionError after a few hundred to
~1,500 resources. So the classes live here, hold no state, and everything they call is module-level
(the owners record's cache is a module global of the provider process, keyed by the file's identity).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pulumi
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    ResourceProvider,
    UpdateResult,
)

from generators.output import safe_folders

PUBLIC_MODE = "0644"
SECRET_MODE = "0600"  # files holding credentials: owner-only
STORE = ".railyard"  # railyard's own folder inside the deploy folder; no artifact may live under it
BLOBS = f"{STORE}/blobs"  # <sha256> -> the content the provider copies from (0600 files in a 0700 folder)
OWNERS = f"{STORE}/owners.json"  # path -> the FileGroup holding it in the site the last `pulumi up` deployed
_OUT_KEYS = ("dir", "path", "mode", "sha256", "size", "lines")
_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # pulumi.runtime.rpc.UNKNOWN: a value known only at apply
_HEX = frozenset("0123456789abcdef")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def line_count(data: bytes) -> int:
    """Lines as `wc -l` would count them, plus a last line without its newline."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def summary(text: str) -> dict[str, Any]:
    """What the state and `pulumi preview --diff` show of a file instead of its content."""
    return _facts(text.encode("utf-8"))


def _facts(data: bytes) -> dict[str, Any]:
    """sha256, size and line count of a file's bytes: summary(), the staged copies and the files on disk."""
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "lines": line_count(data)}


def is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _target(props: dict[str, Any]) -> Path:
    return Path(props["dir"], props["path"])


def stores_blobs(d: str) -> bool:
    """Whether this run writes into deploy folder `d` (the blob store, the owners record, pruning): an
    `up` into an absolute folder railyard may deploy into. A preview writes nothing, and a folder
    check() refuses gets nothing either."""
    return not pulumi.runtime.is_dry_run() and os.path.isabs(d) and deploy_dir_problem(d) is None


def _make_root(root: Path) -> None:
    """The deploy folder itself, 0755, when it is missing (exist_ok: a parallel step may have made it)."""
    if not root.exists():
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)


def deploy_dir_problem(d: str) -> str | None:
    """Why railyard must not deploy into folder `d` (the rules of `railyard compile --out`), or None."""
    real = Path(d).resolve()
    if real == Path(real.anchor):
        return f"{d} is the filesystem root"
    if ".git" in real.parts or (real / ".git").exists():
        return f"{d} is (inside) a git work tree's root or .git folder: deploy into a subfolder such as deploy/NAME"
    return None


def _no_symlinks(root: Path, path: Path, create: bool = False) -> None:
    """Refuse a symlink between the deploy folder and the file (the file itself may be one: it is
    replaced, never followed); create missing folders 0755 when asked."""
    safe_folders(root, path.relative_to(root).parent, "deploy folder", create)


def _disk(path: Path) -> dict[str, Any] | None:
    """sha256, size, lines and mode of the file as it is on disk, or None when it is missing (a symlink
    in its place counts as missing: it is never followed)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        data = path.read_bytes()
        mode = f"{path.stat().st_mode & 0o777:04o}"
    except FileNotFoundError:
        return None
    return {**_facts(data), "mode": mode}


def write_atomic(path: Path, data: str | bytes, mode: str, root: Path | None = None, durable: bool = True) -> None:
    """Readers see the old file or the new one, never a partial write; a crash leaves no temp file
    behind the rename. Skips the write when the file already holds exactly this (idempotent). Under
    `root` (the deploy folder) no symlink is followed. `durable=False` skips the fsync, for copies
    that are re-made on every run and checked by hash before use."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if root is not None:
        _no_symlinks(root, path)
    current = _disk(path)
    if current is not None and current["sha256"] == hashlib.sha256(data).hexdigest():
        if current["mode"] != mode:
            os.chmod(path, int(mode, 8))
        return
    if root is not None:
        _make_root(root)
        _no_symlinks(root, path, create=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, int(mode, 8))  # before the rename: a secret is never readable by others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove(root: Path, path: Path) -> None:
    """Remove the file and then each parent directory it leaves empty, up to (not including) root."""
    _no_symlinks(root, path)
    path.unlink(missing_ok=True)
    parent = path.parent
    while parent != root and root in parent.parents:
        try:
            parent.rmdir()
        except OSError:  # not empty (or already gone): stop climbing
            break
        parent = parent.parent


# --- the blob store: content by hash, so the state and the diff hold only the hash ------------------


def _blob_dir(root: Path, create: bool) -> Path:
    """root/.railyard/blobs, refusing a symlink on the way; made owner-only because the names are the
    hashes of every file, secret ones included, and the files are copies of them."""
    safe_folders(root, PurePosixPath(BLOBS), "deploy folder", create)
    d = root / BLOBS
    if create and d.stat().st_mode & 0o777 != 0o700:
        os.chmod(d, 0o700)
    return d


def store_blob(root: Path, text: str | bytes, sha: str | None = None) -> str:
    """Write `text` into the deploy folder's blob store under its SHA-256 (`sha` when the caller has it)
    and return the hash. The program does this during `pulumi up` for every file; the provider copies
    from it."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    sha = sha or hashlib.sha256(data).hexdigest()
    _make_root(root)
    _put_blob(root, _blob_dir(root, create=True), data, sha)
    return sha


def _put_blob(root: Path, blobs: Path, data: bytes, sha: str) -> None:
    """A blob already there with that name and size is left unread: re-reading and re-hashing the
    whole store on every `up` cost ~1 s per 100 MB (h100-16k renders 216 MB), and the provider checks
    the hash of every blob it copies anyway."""
    blob = blobs / sha
    st = stored_blob(blob, len(data))
    if st is None or st.st_mode & 0o777 != 0o600:
        write_atomic(blob, data, SECRET_MODE, root, durable=False)


def stored_blob(blob: Path, size: int) -> os.stat_result | None:
    """The stat of a stored copy that is a regular file of `size` bytes (its name is its hash), else None."""
    try:
        st = blob.lstat()
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) and st.st_size == size else None


def read_blob(root: Path, sha: str, what: str, secret: bool) -> bytes:
    """The stored content for hash `sha`, verified; a clear error (never a wrong file) otherwise. A
    secret file's hash is not printed: it would let a short secret be guessed offline."""
    blob = root / BLOBS / sha
    named = "its stored copy" if secret else f"its stored copy {blob}"
    _no_symlinks(root, blob)
    try:
        if blob.is_symlink():
            raise FileNotFoundError
        data = blob.read_bytes()
    except FileNotFoundError:
        raise OSError(
            errno.ENOENT,
            f"railyard cannot write {what}: {named} is missing from {root / BLOBS}. The "
            "program stores each file there during `pulumi up` (not during a preview); run `pulumi up` "
            "again, without --target",
        ) from None
    got = hashlib.sha256(data).hexdigest()
    if got != sha:
        detail = "" if secret else f" (sha256 {got}, expected {sha})"
        fix = f"the files in {root / BLOBS}" if secret else blob  # each `up` stores them again
        raise OSError(
            errno.EIO,
            f"railyard cannot write {what}: {named} holds other content{detail}, so it was "
            f"changed outside railyard. Delete {fix} and run `pulumi up` again",
        )
    return data


def prune_blobs(root: Path, keep: set[str]) -> list[str]:
    """Remove stored blobs whose hash no artifact has any more; return their names. Only files named
    as railyard names blobs (64 hex digits) in railyard's own folder: anything else there is kept."""
    d = root / BLOBS
    if not d.is_dir() or d.is_symlink():
        return []
    gone = []
    for f in d.iterdir():
        if is_sha256(f.name) and f.name not in keep and f.is_file() and not f.is_symlink():
            f.unlink(missing_ok=True)
            gone.append(f.name)
    return sorted(gone)


def _drop_store_if_alone(root: Path) -> None:
    """After the last files are deleted (`pulumi destroy`) the blob store and the owners record are all
    railyard left in the deploy folder: remove them too. Each delete checks after its own removal, so
    whichever delete finishes last sees the folder empty; a file of yours in the folder (or in
    .railyard) keeps the store."""
    try:
        if [p.name for p in root.iterdir()] != [STORE] or (root / STORE).is_symlink():
            return
    except FileNotFoundError:
        return
    prune_blobs(root, set())
    owners_file = root / OWNERS
    if owners_file.is_file() and not owners_file.is_symlink():
        owners_file.unlink(missing_ok=True)
    for d in (root / BLOBS, root / STORE):
        try:
            d.rmdir()
        except OSError:  # not empty (not railyard's files) or already gone
            return


# --- which group holds which path: so a file that moves between groups, or from a per-file resource of
# an earlier railyard to a group, is never removed by the resource that let go of it ----------------

_OWNERS_CACHE: dict[str, tuple[tuple[int, ...], dict[str, str]]] = {}
_OWNERS_LOCK = threading.Lock()


def write_owners(root: Path, paths: Mapping[str, str]) -> None:
    """Record, for the site this `pulumi up` deploys, which FileGroup holds each path. The program writes
    it before registering any resource, so every provider step of the run sees it. The engine runs a
    group that drops a path and the group that takes it in parallel, and deletes the resources the
    program no longer registers (an earlier railyard's one-per-file artifacts) after the rest: without
    this record either could remove a file the other has just written or adopted."""
    _make_root(root)
    safe_folders(root, PurePosixPath(STORE), "deploy folder", True)
    text = json.dumps({"format": "railyard.owners/1", "paths": dict(sorted(paths.items()))}, indent=0)
    write_atomic(root / OWNERS, text + "\n", SECRET_MODE, root)


def owners(root: Path) -> dict[str, str]:
    """path -> group name from the last `pulumi up`'s record ({} when there is none: a stack not yet
    deployed by grouping railyard, or a folder railyard cleaned up). Read once per change of the file:
    a provider process serves thousands of steps of one run. A record railyard cannot read is an error,
    never a guess: a guess could remove a file another group holds."""
    f = root / OWNERS
    try:
        st = f.lstat()
    except FileNotFoundError:
        return {}
    # the program writes the record once per `up` (atomically: a new inode each time) and a provider
    # process serves one run, so the file's identity is enough to know the cached copy is current
    key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    with _OWNERS_LOCK:
        cached = _OWNERS_CACHE.get(str(f))
        if cached is not None and cached[0] == key:
            return cached[1]
        _no_symlinks(root, f)
        try:
            if f.is_symlink():
                raise ValueError("it is a symlink")
            paths = json.loads(f.read_bytes())["paths"]
            if not isinstance(paths, dict) or not all(isinstance(v, str) for v in paths.values()):
                raise ValueError("its paths are not a map of path -> group")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OSError(
                errno.EIO,
                f"railyard cannot read {f} ({exc}), which says which resource holds "
                "each deployed file, so it removes nothing. Run `pulumi up` (it writes the "
                "file again) and then retry",
            ) from None
        _OWNERS_CACHE[str(f)] = (key, paths)
        return paths


def _release(root: Path, path: str, group: str) -> None:
    """A file group `group` held and no longer does: remove it, unless the site the last `pulumi up`
    deployed puts it in another group (it moved there; that group has written or adopted it)."""
    holder = owners(root).get(path)
    if holder is not None and holder != group:
        return
    remove(root, root / path)


def _deploy(props: dict[str, Any]) -> None:
    """Bring the target to the content of hash props["sha256"]: nothing is read or written when the
    file already holds it (only its mode is set), else the stored copy is written atomically."""
    root, target, mode = Path(props["dir"]), _target(props), props["mode"]
    _no_symlinks(root, target)
    current = _disk(target)
    if current is not None and current["sha256"] == props["sha256"]:
        if current["mode"] != mode:
            os.chmod(target, int(mode, 8))
        return
    data = read_blob(root, props["sha256"], str(target), secret=mode == SECRET_MODE)
    write_atomic(target, data, mode, root)


def _outs(props: dict[str, Any]) -> dict[str, Any]:
    return {k: props[k] for k in _OUT_KEYS}


def _count(value: object) -> bool:
    """A non-negative whole number (numbers cross the wire as floats)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 and float(value).is_integer()


def _dir_problem(d: object) -> str | None:
    if d == _UNKNOWN:
        return None
    if not isinstance(d, str) or not os.path.isabs(d):
        return f"must be an absolute directory, got {d!r}"
    why = deploy_dir_problem(d)
    return f"refusing to deploy into {why}" if why else None


def _path_problem(p: object) -> str | None:
    if p == _UNKNOWN:
        return None
    pp = PurePosixPath(p) if isinstance(p, str) else None
    if pp is None or not p or pp.is_absolute() or ".." in pp.parts or p != pp.as_posix():
        return f"must be a normalized relative path inside dir, got {p!r}"
    if pp.parts[0] == STORE:
        return f"{STORE}/ inside the deploy folder is railyard's own store"
    return None


def _mode_problem(mode: object) -> str | None:
    return None if mode in (PUBLIC_MODE, SECRET_MODE, _UNKNOWN) else f"must be {PUBLIC_MODE} or {SECRET_MODE}"


def _summary_problems(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, why) for each of sha256, size and lines that is not what summary() gives."""
    out = []
    if entry.get("sha256") != _UNKNOWN and not is_sha256(entry.get("sha256")):
        out.append(("sha256", "must be the content's SHA-256, 64 lowercase hex digits"))
    for k in ("size", "lines"):
        if entry.get(k) != _UNKNOWN and not _count(entry.get(k)):
            out.append((k, "must be a whole number >= 0"))
    return out


class FileArtifactProvider(ResourceProvider):
    """One file per resource (`pulumi-python:dynamic/railyard:FileArtifact`), as railyard deployed
    before FileGroup. No program registers it now; stacks made then name this class in their state
    (the provider is pickled by reference), so their refresh and the deletes of the `up` that moves
    them to groups run this code. Stateless on purpose (see the module docstring)."""

    # Nothing secret is captured in the pickled provider; a secret-always provider blob would be
    # encrypted into every one of thousands of resources for nothing.
    serialize_as_secret_always = False

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = [
            CheckFailure(k, why)
            for k, why in (
                ("dir", _dir_problem(news.get("dir"))),
                ("path", _path_problem(news.get("path"))),
                ("mode", _mode_problem(news.get("mode"))),
            )
            if why
        ]
        failures += [CheckFailure(k, why) for k, why in _summary_problems(news)]
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # olds are the last known outputs (after a refresh: what is on disk); news are the inputs.
        # The hash stands for the content, so a same hash and mode is no change whatever else differs:
        # a stack made when the content itself was an input moves to these inputs as `same` steps.
        replaces = [k for k in ("dir", "path") if olds.get(k) != news.get(k)]
        changed = any(news.get(k) == _UNKNOWN or olds.get(k) != news.get(k) for k in ("sha256", "mode"))
        return DiffResult(changes=bool(replaces) or changed, replaces=replaces, stables=[], delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        _deploy(props)
        return CreateResult(str(_target(props)), _outs(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        _deploy(news)
        return UpdateResult(_outs(news))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        # A stack made before files were grouped loses its per-file resources on the `up` that moves it
        # to groups: a path a group now holds stays on disk (the group adopted it, unwritten).
        root = Path(props["dir"])
        if props["path"] not in owners(root):
            remove(root, _target(props))
        _drop_store_if_alone(root)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        on_disk = _disk(_target(props))
        if on_disk is None:
            return ReadResult("", {})  # gone: refresh drops it, the next `up` recreates it
        outs = {k: props.get(k) for k in _OUT_KEYS}
        outs.update(on_disk)
        return ReadResult(id_, outs)


def _stage(d: str, texts: Mapping[str, str]) -> dict[str, str]:
    """path -> entry_text of each file; during `pulumi up` (stores_blobs) each content also goes into
    the blob store. Each text is encoded and hashed once (h100-16k: 3,635 files, 216 MB on every run)."""
    root = Path(d)
    blobs = None
    if stores_blobs(d):
        _make_root(root)
        blobs = _blob_dir(root, create=True)
    out = {}
    for path, text in sorted(texts.items()):
        data = text.encode("utf-8")
        facts = _facts(data)
        if blobs is not None:
            _put_blob(root, blobs, data, facts["sha256"])
        out[path] = entry_text(facts)
    return out


def entry_text(facts: Mapping[str, Any]) -> str:
    """A file's entry in a group's `files` map: `<sha256> <size> bytes <lines> lines` (and, when a
    refresh found it so, ` mode <mode>`). One string, not a map of sha256/size/lines: the engine's
    `preview --diff` prints every entry of a map that changed, the unchanged ones too, and a nested
    map cost 5 lines per unchanged file where this costs one."""
    text = f"{facts['sha256']} {facts['size']} bytes {facts['lines']} lines"
    return f"{text} mode {facts['mode']}" if "mode" in facts else text


def parse_entry(value: object) -> dict[str, Any] | None:
    """{sha256, size, lines[, mode]} from an entry_text() string; None for anything else."""
    parts = value.split(" ") if isinstance(value, str) else []
    if len(parts) not in (5, 7) or parts[2] != "bytes" or parts[4] != "lines" or not is_sha256(parts[0]):
        return None
    if not (parts[1].isdigit() and parts[3].isdigit()) or (len(parts) == 7 and parts[5] != "mode"):
        return None
    out: dict[str, Any] = {"sha256": parts[0], "size": int(parts[1]), "lines": int(parts[3])}
    if len(parts) == 7:
        out["mode"] = parts[6]
    return out


def _entries(files: object) -> dict[str, dict[str, Any] | None]:
    """path -> parsed entry (None where it is not one: unknown during a preview, or not railyard's)."""
    return {p: parse_entry(e) for p, e in files.items()} if isinstance(files, dict) else {}


def _group_deploy(root: Path, mode: str, path: str, entry: Mapping[str, Any] | None) -> None:
    if entry is None:  # check() refuses such inputs; never write a file from a guess
        raise ValueError(f"railyard cannot write {root / path}: its entry in the group is not a hash")
    _deploy({"dir": str(root), "path": path, "mode": mode, "sha256": entry["sha256"]})


def _group_outs(props: dict[str, Any]) -> dict[str, Any]:
    return {k: props[k] for k in ("dir", "group", "mode", "files")}


def _entry_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, old_mode: object, mode: str) -> bool:
    """A file needs writing when it is new to the group, its hash differs or is not known yet, or
    (after a refresh) its mode on disk differs. Size and line count are shown, not compared: the hash
    stands for the content."""
    return old is None or new is None or old["sha256"] != new["sha256"] or old.get("mode", old_mode) != mode


class FileGroupProvider(ResourceProvider):
    """The files of one folder component: inputs `dir`, `group` (the resource's name, which the owners
    record uses), `mode` (0644, or 0600 for a group of files holding secrets) and `files`, a map
    path -> `<sha256> <size> bytes <lines> lines` (entry_text). So `pulumi preview --diff` of a change
    marks the paths that change (`~`), one line each, and only those files are written. Stateless on
    purpose (see the module docstring)."""

    serialize_as_secret_always = False  # as FileArtifactProvider: nothing secret in the pickled provider

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = [
            CheckFailure(k, why)
            for k, why in (("dir", _dir_problem(news.get("dir"))), ("mode", _mode_problem(news.get("mode"))))
            if why
        ]
        if news.get("group") != _UNKNOWN and not (isinstance(news.get("group"), str) and news["group"]):
            failures.append(CheckFailure("group", "must be the group's name"))
        files = news.get("files")
        if files != _UNKNOWN:
            if not isinstance(files, dict):
                failures.append(CheckFailure("files", "must be a map of path -> '<sha256> <size> bytes <lines> lines'"))
                files = {}
            for path, entry in files.items():
                if why := _path_problem(path):
                    failures.append(CheckFailure("files", f"{path!r}: {why}"))
                elif entry != _UNKNOWN and ((parsed := parse_entry(entry)) is None or "mode" in parsed):
                    failures.append(
                        CheckFailure(
                            "files",
                            f"{path}: must be '<sha256> <size> bytes <lines> lines' "
                            f"(the content's SHA-256, 64 lowercase hex digits), got {entry!r}",
                        )
                    )
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # olds are the last known outputs (after a refresh: what is on disk); news are the inputs
        replaces = ["dir"] if olds.get("dir") != news.get("dir") else []
        new, old = news.get("files"), _entries(olds.get("files"))
        changed = (
            bool(replaces)
            or new == _UNKNOWN
            or not isinstance(new, dict)
            or new.keys() != old.keys()
            or any(news.get(k) == _UNKNOWN or olds.get(k) != news.get(k) for k in ("group", "mode"))
            or any(_entry_changed(old.get(p), e, olds.get("mode"), news["mode"]) for p, e in _entries(new).items())
        )
        return DiffResult(changes=changed, replaces=replaces, stables=[], delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        # a file already on disk with its hash (a stack moving from per-file resources) is adopted as is
        root = Path(props["dir"])
        for path, entry in _entries(props["files"]).items():
            _group_deploy(root, props["mode"], path, entry)
        return CreateResult(f"{root}#{props['group']}", _group_outs(props))

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        root, old = Path(news["dir"]), _entries(olds.get("files"))
        for path, entry in _entries(news["files"]).items():
            if _entry_changed(old.get(path), entry, olds.get("mode"), news["mode"]):
                _group_deploy(root, news["mode"], path, entry)
        for path in sorted(old.keys() - news["files"].keys()):
            _release(root, path, news["group"])
        return UpdateResult(_group_outs(news))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        root = Path(props["dir"])
        for path in _entries(props.get("files")):
            _release(root, path, props["group"])
        _drop_store_if_alone(root)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        """Re-hash every file: a hand edit shows as that path's new sha256 (and a mode changed by hand as
        its `mode`), a file deleted by hand leaves the map; the next `up` writes either back. The
        resource itself stays, even with every file gone."""
        root, mode = Path(props["dir"]), props.get("mode")
        files = {}
        for path in _entries(props.get("files")):
            on_disk = _disk(root / path)
            if on_disk is not None:
                facts = {k: on_disk[k] for k in ("sha256", "size", "lines")}
                if on_disk["mode"] != mode:
                    facts["mode"] = on_disk["mode"]
                files[path] = entry_text(facts)
        return ReadResult(id_, {"dir": props.get("dir"), "group": props.get("group"), "mode": mode, "files": files})


class FileGroup(pulumi.dynamic.Resource, module="railyard", name="FileGroup"):
    """Files `contents` (path -> text) written under `dir`, kept in the state by hash, size and line
    count: the program puts each text in the deploy folder's blob store (during `pulumi up`), the
    provider copies it from there. Pass secret=True when the texts embed a credential (they are then
    Outputs of secret config): `files` is then encrypted in the state, the files are written 0600, and
    the texts reach the provider only through the owner-only blob store."""

    dir: pulumi.Output[str]
    group: pulumi.Output[str]
    mode: pulumi.Output[str]
    files: pulumi.Output[dict[str, str]]

    def __init__(
        self,
        name: str,
        dir: str,
        contents: Mapping[str, pulumi.Input[str]],
        secret: bool = False,
        opts: pulumi.ResourceOptions | None = None,
        entries: Mapping[str, str] | None = None,
        after: pulumi.Output[Any] | None = None,
    ) -> None:
        """`entries` (path -> entry_text, a public group only) registers files already staged by an
        earlier run, whose contents are in the deploy folder's blob store: `contents` is then ignored.
        `after`: an Output the group is registered only once it resolved (its `dir` input waits for it)."""
        files: pulumi.Input[dict[str, Any]]
        self.entries: dict[str, str] | None = None  # a public group's entries, as registered
        if secret:
            if entries is not None:
                raise TypeError(f"FileGroup {name}: a secret group is filled on every run, never given entries")
            paths = sorted(contents)
            # annotated: mypy cannot solve U of Output.secret's Input[U] (U, Awaitable[U] or Output[U]) alone
            hidden: pulumi.Output[list[Any]] = pulumi.Output.secret(pulumi.Output.all(*(contents[p] for p in paths)))
            files = hidden.apply(lambda texts: _stage(dir, dict(zip(paths, texts, strict=True))))
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["files"]))
        elif entries is not None:
            files = self.entries = dict(sorted(entries.items()))
        else:
            texts = {p: t for p, t in contents.items() if isinstance(t, str)}
            if len(texts) != len(contents):
                raise TypeError(f"FileGroup {name}: only a secret group takes Outputs as contents")
            files = self.entries = _stage(dir, texts)
        where: pulumi.Input[str] = dir if after is None else after.apply(lambda _: dir)
        props = {"dir": where, "group": name, "mode": SECRET_MODE if secret else PUBLIC_MODE, "files": files}
        super().__init__(FileGroupProvider(), name, props, opts)
