# Frozen copy (commit 90105bc) for the migration engine test; do not edit.
"""One generated file as a Pulumi resource, through a Python dynamic provider.

The state holds a file by hash, not content (issue 12: with the content as an input, the state of
h100-1024-vms held all 6.5 MB of its files, and `pulumi preview --diff` of 1:1 -> 2:1 printed
137,545 lines; bench/pulumi_diff.py measures both). The resource's inputs are dir, path,
mode, sha256, size and lines; the program stores the content under its hash in the deploy folder's
blob store (`<dir>/.railyard/blobs/<sha256>`, owner-only) during `pulumi up`, and the provider copies
it from there, after checking its hash, to the target atomically (temp file in the same directory,
fsync, rename). So `preview --diff` shows a few lines per changed file, an update happens only when
the hash (or mode) changes, a delete removes the file (and the directories it leaves empty; the last
one also the blob store), and a refresh re-hashes the file on disk, so a hand edit shows up as drift
(`pulumi refresh --diff`, then `pulumi up` restores it) and a deleted file is dropped from the state
and recreated by the next `up`. A stack made when the content was an input moves over as `same`
steps: the hash in its outputs is the one the new inputs carry.

Pitfall this module exists for (Pulumi SDK 3.272): the provider object is pickled with dill into
every resource. A provider class defined in `__main__`, or one holding instance attributes, makes
each serialization drag pickle internals along and fails with RecursionError after a few hundred to
~1,500 resources. So the class lives here, holds no state, and everything it calls is module-level.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
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
    data = text.encode("utf-8")
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "lines": line_count(data)}


def is_sha256(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _target(props: dict[str, Any]) -> Path:
    return Path(props["dir"]) / props["path"]


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
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "lines": line_count(data), "mode": mode}


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
        if not root.exists():
            root.mkdir(parents=True, exist_ok=True)  # exist_ok: a parallel create may have made it
            os.chmod(root, 0o755)
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


def store_blob(root: Path, text: str) -> str:
    """Write `text` into the deploy folder's blob store under its SHA-256 (the name is the content, so a
    blob already there is left alone) and return the hash. The program calls this during `pulumi up`
    for every artifact; the provider copies from it."""
    sha = sha256_text(text)
    if not root.exists():
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)
    write_atomic(_blob_dir(root, create=True) / sha, text, SECRET_MODE, root, durable=False)
    return sha


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
    """After the last artifact is deleted (`pulumi destroy`) the blob store is all railyard left in the
    deploy folder: remove it too. Each delete checks after its own removal, so whichever delete finishes
    last sees the folder empty; a file of yours in the folder (or in .railyard) keeps the store."""
    try:
        if [p.name for p in root.iterdir()] != [STORE] or (root / STORE).is_symlink():
            return
    except FileNotFoundError:
        return
    prune_blobs(root, set())
    for d in (root / BLOBS, root / STORE):
        try:
            d.rmdir()
        except OSError:  # not empty (not railyard's files) or already gone
            return


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


class FileArtifactProvider(ResourceProvider):
    """Stateless on purpose (see the module docstring): no __init__, no attributes."""

    # Nothing secret is captured in the pickled provider; a secret-always provider blob would be
    # encrypted into every one of thousands of resources for nothing.
    serialize_as_secret_always = False

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = []
        d, p = news.get("dir"), news.get("path")
        if d != _UNKNOWN and (not isinstance(d, str) or not os.path.isabs(d)):
            failures.append(CheckFailure("dir", f"must be an absolute directory, got {d!r}"))
        elif d != _UNKNOWN and (why := deploy_dir_problem(d)):
            failures.append(CheckFailure("dir", f"refusing to deploy into {why}"))
        if p != _UNKNOWN:
            pp = PurePosixPath(p) if isinstance(p, str) else None
            if pp is None or not p or pp.is_absolute() or ".." in pp.parts or p != pp.as_posix():
                failures.append(CheckFailure("path", f"must be a normalized relative path inside dir, got {p!r}"))
            elif pp.parts[0] == STORE:
                failures.append(CheckFailure("path", f"{STORE}/ inside the deploy folder is railyard's own store"))
        if news.get("mode") not in (PUBLIC_MODE, SECRET_MODE, _UNKNOWN):
            failures.append(CheckFailure("mode", f"must be {PUBLIC_MODE} or {SECRET_MODE}"))
        if news.get("sha256") != _UNKNOWN and not is_sha256(news.get("sha256")):
            failures.append(CheckFailure("sha256", "must be the content's SHA-256, 64 lowercase hex digits"))
        for k in ("size", "lines"):
            if news.get(k) != _UNKNOWN and not _count(news.get(k)):
                failures.append(CheckFailure(k, "must be a whole number >= 0"))
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
        root = Path(props["dir"])
        remove(root, _target(props))
        _drop_store_if_alone(root)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        on_disk = _disk(_target(props))
        if on_disk is None:
            return ReadResult("", {})  # gone: refresh drops it, the next `up` recreates it
        outs = {k: props.get(k) for k in _OUT_KEYS}
        outs.update(on_disk)
        return ReadResult(id_, outs)


class FileArtifact(pulumi.dynamic.Resource, module="railyard", name="FileArtifact"):
    """A file `path` under `dir` holding `content`. The content is never an input: the program puts it
    in the deploy folder's blob store (during `pulumi up`) and the resource's inputs are its hash, size
    and line count, so the state and `pulumi preview --diff` stay small. Pass secret=True when the
    content embeds a credential: the hash, size and line count are then encrypted in the state and
    the file is written 0600."""

    dir: pulumi.Output[str]
    path: pulumi.Output[str]
    mode: pulumi.Output[str]
    sha256: pulumi.Output[str]
    size: pulumi.Output[int]
    lines: pulumi.Output[int]

    def __init__(
        self,
        name: str,
        dir: str,
        path: str,
        content: pulumi.Input[str],
        secret: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        facts: dict[str, Any]
        if isinstance(content, str) and not secret:
            facts = _stage(dir, content)
        else:
            staged = (pulumi.Output.secret(content) if secret else pulumi.Output.from_input(content)).apply(
                lambda text: _stage(dir, text)
            )
            facts = {k: staged.apply(lambda f, k=k: f[k]) for k in ("sha256", "size", "lines")}
        if secret:
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["sha256", "size", "lines"])
            )
        props = {"dir": dir, "path": path, "mode": SECRET_MODE if secret else PUBLIC_MODE, **facts}
        super().__init__(FileArtifactProvider(), name, props, opts)


def _stage(d: str, text: str) -> dict[str, Any]:
    """The file's summary; during `pulumi up` also its content, into the blob store. A preview writes
    nothing, and a folder check() will refuse gets nothing either."""
    if not pulumi.runtime.is_dry_run() and os.path.isabs(d) and deploy_dir_problem(d) is None:
        store_blob(Path(d), text)
    return summary(text)
