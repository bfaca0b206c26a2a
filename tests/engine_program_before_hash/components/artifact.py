# Frozen copy (commit 9c25dee) for the migration engine test; do not edit.
"""One generated file as a Pulumi resource, through a Python dynamic provider.

The provider writes the file atomically (temp file in the same directory, fsync, rename) and keeps
the content's SHA-256 in the state: an update happens only when the content (or mode) changes, a
delete removes the file (and the directories it leaves empty), and a refresh re-hashes the file on
disk, so a hand edit shows up as drift (`pulumi refresh --diff`, then `pulumi up` restores it) and a
deleted file is dropped from the state and recreated by the next `up`.

Pitfall this module exists for (Pulumi SDK 3.272): the provider object is pickled with dill into
every resource. A provider class defined in `__main__`, or one holding instance attributes, makes
each serialization drag pickle internals along and fails with RecursionError after a few hundred to
~1,500 resources. So the class lives here, holds no state, and everything it calls is module-level.
"""

from __future__ import annotations

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
_OUT_KEYS = ("dir", "path", "mode", "sha256", "size")
_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # pulumi.runtime.rpc.UNKNOWN: a value known only at apply


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def _disk(path: Path) -> tuple[str, int, str] | None:
    """(sha256, size, mode) of the file as it is on disk, or None when it is missing (a symlink in its
    place counts as missing: it is never followed)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        data = path.read_bytes()
        mode = f"{path.stat().st_mode & 0o777:04o}"
    except FileNotFoundError:
        return None
    return hashlib.sha256(data).hexdigest(), len(data), mode


def write_atomic(path: Path, text: str, mode: str, root: Path | None = None) -> None:
    """Readers see the old file or the new one, never a partial write; a crash leaves no temp file
    behind the rename. Skips the write when the file already holds exactly this (idempotent). Under
    `root` (the deploy folder) no symlink is followed."""
    data = text.encode("utf-8")
    if root is not None:
        _no_symlinks(root, path)
    current = _disk(path)
    if current is not None and current[0] == hashlib.sha256(data).hexdigest():
        if current[2] != mode:
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


def _outs(props: dict[str, Any]) -> dict[str, Any]:
    return {
        "dir": props["dir"],
        "path": props["path"],
        "mode": props["mode"],
        "sha256": sha256_text(props["content"]),
        "size": len(props["content"].encode("utf-8")),
    }


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
        if news.get("mode") not in (PUBLIC_MODE, SECRET_MODE, _UNKNOWN):
            failures.append(CheckFailure("mode", f"must be {PUBLIC_MODE} or {SECRET_MODE}"))
        if news.get("content") != _UNKNOWN and not isinstance(news.get("content"), str):
            failures.append(CheckFailure("content", "must be text"))
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # olds are the last known outputs (after a refresh: what is on disk); news are the inputs.
        replaces = [k for k in ("dir", "path") if olds.get(k) != news.get(k)]
        content = news.get("content")
        changed = (
            content == _UNKNOWN or olds.get("sha256") != sha256_text(content) or olds.get("mode") != news.get("mode")
        )
        return DiffResult(changes=bool(replaces) or changed, replaces=replaces, stables=[], delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        target = _target(props)
        write_atomic(target, props["content"], props["mode"], Path(props["dir"]))
        return CreateResult(str(target), _outs(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        write_atomic(_target(news), news["content"], news["mode"], Path(news["dir"]))
        return UpdateResult(_outs(news))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        remove(Path(props["dir"]), _target(props))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        on_disk = _disk(_target(props))
        if on_disk is None:
            return ReadResult("", {})  # gone: refresh drops it, the next `up` recreates it
        sha, size, mode = on_disk
        outs = {k: props.get(k) for k in _OUT_KEYS}
        outs.update(sha256=sha, size=size, mode=mode)
        return ReadResult(id_, outs)


class FileArtifact(pulumi.dynamic.Resource, module="railyard", name="FileArtifact"):
    """A file `path` under `dir` holding `content`. Pass secret=True when the content embeds a
    credential: the content input and the hash output are then encrypted in the state and the file
    is written 0600."""

    dir: pulumi.Output[str]
    path: pulumi.Output[str]
    mode: pulumi.Output[str]
    sha256: pulumi.Output[str]
    size: pulumi.Output[int]

    def __init__(
        self,
        name: str,
        dir: str,
        path: str,
        content: pulumi.Input[str],
        secret: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if secret:
            content = pulumi.Output.secret(content)
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=["sha256", "size"])
            )
        props = {
            "dir": dir,
            "path": path,
            "content": content,
            "mode": SECRET_MODE if secret else PUBLIC_MODE,
            "sha256": None,
            "size": None,
        }
        super().__init__(FileArtifactProvider(), name, props, opts)
