"""Writing railyard's output: never lose a user's file, never leave a half-written tree.

The output folder contract (`compile --out`, `verify --write-config`):
- railyard writes `.railyard-manifest.json` (every file it wrote, with its SHA-256) into the folder;
- a folder is railyard's when it holds that manifest. A new or empty folder becomes railyard's; a
  non-empty folder without a manifest is refused unless `--force DIR` names it;
- never: the filesystem root, a folder holding `.git` (a git work tree's root) or inside `.git`, the
  project's `designs/`, the folder of the design file or any of its ancestors, a symlink;
- every file is first written into a temp folder (beside a new folder, which is then renamed in
  whole; inside an existing one, whose files are then replaced one atomic rename each), so an
  error while rendering or writing leaves the folder as it was; only files in the
  manifest are replaced; files a user added are kept; stale railyard files (in the old manifest, not
  written now) are removed and listed, unless edited since, then they are kept and listed too.
Files are written 0644 and folders 0755 whatever the umask.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from generators.model.errors import DesignError, Problem

MANIFEST = ".railyard-manifest.json"
SCHEMA = "railyard.manifest/1"
FILE_MODE = 0o644
DIR_MODE = 0o755
# how `railyard diff` output begins (markdown, json): an existing file may be replaced only if it is one
REVIEW_HEADS = ("# railyard design review:", '{\n  "schema": "railyard.review/')


@dataclass
class Written:
    files: int
    removed: list[str] = field(default_factory=list)  # stale railyard files removed
    kept: list[str] = field(default_factory=list)  # stale railyard files kept because they were edited


_HINTS = {
    errno.EACCES: "choose a folder you can write to, or fix its permissions",
    errno.EPERM: "choose a folder you can write to, or fix its permissions",
    errno.EROFS: "that filesystem is read-only: choose a folder on a writable one",
    errno.ENOSPC: "free some space on that filesystem or choose another one",
    errno.EDQUOT: "free some space (your quota is full) or choose another filesystem",
    errno.ENAMETOOLONG: "use a shorter name",
    errno.EFBIG: "a file is larger than this process may write (ulimit -f): raise the limit",
    errno.ENOTDIR: "a part of that path is a file, not a folder: choose another path",
    errno.EISDIR: "that path is a folder: name a file",
    errno.ENOENT: "check the path; its parent folder does not exist",
    errno.ELOOP: "that path runs through a symlink loop: use the real path",
    errno.EEXIST: "that path already exists: choose another",
}


def os_problem(option: str, path: Path | str, exc: OSError, doing: str = "cannot write") -> DesignError:
    """An OS error on a path the user gave, as an error naming the option, the path and what to do."""
    hint = _HINTS.get(exc.errno or 0, "check the path and its permissions")
    name = str(path or exc.filename or "")
    inner = str(exc.filename or "")
    if inner and inner != name and ".railyard-" not in inner and not Path(inner).name.startswith("."):
        name += f" ({inner})"
    return DesignError.one(option, f"{doing} {name}: {exc.strerror or exc}", hint)


def _refuse(option: str, out: Path, why: str, fix: str) -> DesignError:
    return DesignError([Problem(option, f"refusing to write into {out}: {why}", fix)])


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _safe_rel(rel: object) -> bool:
    if not isinstance(rel, str) or not rel or "\\" in rel or "\0" in rel:
        return False
    p = PurePosixPath(rel)
    return not p.is_absolute() and ".." not in p.parts and p.as_posix() == rel and rel != MANIFEST


def read_manifest(out: Path, option: str) -> dict[str, str] | None:
    """{relative path: sha256} of what railyard wrote into `out`, or None when it holds no manifest."""
    path = out / MANIFEST
    if not path.exists() and not path.is_symlink():
        return None
    fix = f"if railyard wrote {out}, delete {MANIFEST} and pass --force {out}; else choose another folder"
    if path.is_symlink() or not path.is_file():
        raise _refuse(option, out, f"{MANIFEST} is not a regular file", fix)
    try:
        data = json.loads(path.read_bytes()[: 64 << 20])
    except (ValueError, UnicodeDecodeError):
        raise _refuse(option, out, f"{MANIFEST} is not valid JSON", fix) from None
    files = data.get("files") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("schema") != SCHEMA
        or not isinstance(files, dict)
        or not all(_safe_rel(k) and isinstance(v, str) for k, v in files.items())
    ):
        raise _refuse(option, out, f"{MANIFEST} is not a railyard manifest", fix)
    return files


def _project_designs() -> set[Path]:
    from generators.model.catalog import DEFAULT_CATALOG

    return {(Path.cwd() / "designs").resolve(), Path(DEFAULT_CATALOG).resolve().parent}


def check_out_dir(
    out: Path, option: str = "--out", force: Path | None = None, design: Path | None = None
) -> dict[str, str] | None:
    """Raise DesignError unless railyard may write into `out`; returns its manifest (None: none yet)."""
    try:
        return _check_out_dir(Path(out), option, force, design)
    except OSError as exc:
        raise os_problem(option, out, exc, "cannot use") from None


def _check_out_dir(out: Path, option: str, force: Path | None, design: Path | None) -> dict[str, str] | None:
    if out.is_symlink():
        raise _refuse(option, out, "it is a symlink", "pass the real folder it points to, or a new folder")
    real = out.resolve()
    if real == Path(real.anchor):
        raise _refuse(option, out, "it is the filesystem root", "choose a new folder, e.g. --out out/NAME")
    if ".git" in real.parts:
        raise _refuse(option, out, "it is inside a .git folder", "choose a folder outside .git")
    if (real / ".git").exists():
        raise _refuse(
            option,
            out,
            "it holds .git (a git work tree)",
            "choose a new subfolder, e.g. --out out/NAME (the shipped .gitignore ignores /out/)",
        )
    if real in _project_designs():
        raise _refuse(option, out, "it is the project's designs folder", "choose a new folder, e.g. --out out/NAME")
    if design is not None and real in Path(design).resolve().parents:
        raise _refuse(
            option,
            out,
            f"it holds the design file {design}",
            "choose a new folder that is not the design's folder or one of its parents",
        )
    if out.exists() and not out.is_dir():
        raise _refuse(option, out, "it is a file, not a folder", "choose a new folder")
    if not out.exists():
        return None
    manifest = read_manifest(out, option)
    if manifest is not None:
        return manifest
    forced = force is not None and Path(force).resolve() == real
    try:
        empty = not any(out.iterdir())
    except OSError as exc:
        raise os_problem(option, out, exc, "cannot read") from None
    if not empty and not forced:
        raise _refuse(
            option,
            out,
            f"it is not empty and railyard did not write it (no {MANIFEST})",
            f"choose a new or empty folder, or pass --force {out} to add railyard's files to it "
            "(nothing in it is deleted)",
        )
    return None


def safe_folders(root: Path, rel_dir: PurePath, what: str = "output folder", create: bool = True) -> None:
    """Walk rel_dir under root, refusing a symlinked folder (railyard never reaches through one out of
    its folder); with create, make the missing folders 0755 whatever the umask. Shared with the Pulumi
    file provider, whose creates run in parallel: another writer may make a folder between the check
    and the mkdir."""
    d = root
    for part in rel_dir.parts:
        d = d / part
        if d.is_symlink():
            raise OSError(errno.ELOOP, f"is a symlink inside the {what}; railyard does not follow it", str(d))
        if create and not d.exists():
            try:
                d.mkdir()
                os.chmod(d, DIR_MODE)
            except FileExistsError:
                if d.is_symlink() or not d.is_dir():
                    raise OSError(errno.ENOTDIR, f"is not a folder inside the {what}", str(d)) from None


def _preflight(root: Path, rel: str) -> None:
    """Raise the OSError that writing root/rel would meet half way (a symlinked or file folder, a folder
    where the file goes), before anything is written."""
    d = root
    for part in PurePosixPath(rel).parent.parts:
        d = d / part
        if d.is_symlink():
            raise OSError(errno.ELOOP, "is a symlink inside the output folder; railyard does not follow it", str(d))
        if d.exists() and not d.is_dir():
            raise OSError(errno.ENOTDIR, "is a file where railyard writes a folder", str(d))
    target = root / rel
    if target.is_dir() and not target.is_symlink():
        raise OSError(errno.EISDIR, "is a folder where railyard writes a file", str(target))


def _via_symlink(root: Path, rel: str) -> bool:
    """Whether a folder between root and root/rel is a symlink (railyard never reaches through one)."""
    d = root
    for part in PurePosixPath(rel).parent.parts:
        d = d / part
        if d.is_symlink():
            return True
    return False


def stage_files(files: Mapping[str, str | bytes], tmp: Path) -> dict[str, str]:
    """Write files into the staging folder tmp (a renderer's output, as it is made); {path: sha256}."""
    digests = {}
    made: set[PurePosixPath] = set()  # folders checked (and made) by this call: a renderer's files share a few
    for rel, text in files.items():
        if not _safe_rel(rel):
            raise RuntimeError(f"a renderer wrote an unsafe path {rel!r}")
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        folder = PurePosixPath(rel).parent
        if folder not in made:
            safe_folders(tmp, folder)
            made.add(folder)
        with open(tmp / rel, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(data)
        digests[rel] = _sha(data)
    return digests


def _manifest_text(digests: dict[str, str]) -> str:
    return json.dumps({"schema": SCHEMA, "files": dict(sorted(digests.items()))}, indent=1) + "\n"


def _write_manifest(out: Path, digests: dict[str, str], option: str) -> None:
    write_file(out / MANIFEST, _manifest_text(digests), option, replace_any=True)


def make_parents(path: Path) -> None:
    """mkdir -p of path's parent, each folder created 0755 whatever the umask."""
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    for d in reversed(missing):
        d.mkdir(exist_ok=True)
        os.chmod(d, DIR_MODE)


# writes every file into the staging folder it is given (with stage_files) and returns {path: sha256}:
# a compile's renderers stream into it, so the whole output (2.4 GB at 98,304 GPUs) is never in memory
Stager = Callable[[Path], dict[str, str]]


def write_tree(
    files: Mapping[str, str | bytes] | Stager,
    out: Path,
    option: str = "--out",
    force: Path | None = None,
    design: Path | None = None,
) -> Written:
    """Write `files` ({relative path: text, or bytes such as a PDF}, or a Stager that writes them) into the
    folder `out` under the contract above."""
    out = Path(out)
    manifest = check_out_dir(out, option, force, design)
    try:
        return _write_tree(files, out, manifest, option, force)
    except OSError as exc:
        raise os_problem(option, out, exc) from None


def _write_tree(
    files: Mapping[str, str | bytes] | Stager,
    out: Path,
    manifest: dict[str, str] | None,
    option: str,
    force: Path | None,
) -> Written:
    old = manifest or {}
    if not out.exists():
        make_parents(out)
    # a new folder is staged beside it and renamed in whole; an existing one is staged inside itself
    # (same filesystem, and its parent need not be writable) and moved in file by file
    tmp = Path(
        tempfile.mkdtemp(
            prefix=f".{out.name}.railyard-" if not out.exists() else ".railyard-staging-",
            dir=out.parent if not out.exists() else out,
        )
    )
    try:
        digests = files(tmp) if callable(files) else stage_files(files, tmp)
        if out.exists():  # checked once every path is known (a Stager's only once it has run)
            clash = sorted(r for r in digests if r not in old and (out / r).exists())
            if clash and not (force is not None and Path(force).resolve() == out.resolve()):
                raise _refuse(
                    option,
                    out,
                    f"{len(clash)} file(s) railyard would write are not railyard's, e.g. {clash[0]}",
                    f"move them away, or pass --force {out} to overwrite them",
                )
        if not out.exists():
            (tmp / MANIFEST).write_text(_manifest_text(digests), encoding="utf-8")
            os.chmod(tmp / MANIFEST, FILE_MODE)
            os.chmod(tmp, DIR_MODE)
            tmp.rename(out)  # all at once
            return Written(len(digests))
        # an existing folder: check every path before touching anything, then list old and new files
        # in the manifest, so an interruption while moving leaves nothing unaccounted for
        for rel in digests:
            _preflight(out, rel)
        _write_manifest(out, {**old, **digests}, option)
        for rel in digests:
            safe_folders(out, PurePosixPath(rel).parent)
            os.replace(tmp / rel, out / rel)
        done = Written(len(digests))
        for rel in sorted(set(old) - set(digests)):
            path = out / rel
            if _via_symlink(out, rel) or path.is_symlink() or not path.is_file():
                continue
            if _sha(path.read_bytes()) != old[rel]:
                done.kept.append(rel)
                continue
            path.unlink()
            done.removed.append(rel)
            parent = path.parent
            while parent != out and out in parent.parents and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
        _write_manifest(out, digests, option)
        return done
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_out_file(path: Path, option: str = "--out", force: Path | None = None) -> None:
    """A single output file (`diff --out`): never a folder or a symlink; an existing file only when
    railyard wrote it (a design review) or `--force FILE` names it."""
    try:
        _check_out_file(Path(path), option, force)
    except OSError as exc:
        raise os_problem(option, path, exc, "cannot use") from None


def _check_out_file(path: Path, option: str, force: Path | None) -> None:
    if path.is_symlink():
        raise _refuse(option, path, "it is a symlink", "pass the real file or a new file name")
    if path.is_dir():
        raise _refuse(option, path, "it is a folder", f"name a file, e.g. {option} {path / 'review.md'}")
    if path.exists() and not (force is not None and Path(force).resolve() == path.resolve()):
        try:
            with open(path, "rb") as fh:
                head = fh.read(max(len(h.encode()) for h in REVIEW_HEADS))
        except OSError as exc:
            raise os_problem(option, path, exc, "cannot read") from None
        if not any(head.startswith(h.encode()) for h in REVIEW_HEADS):
            raise _refuse(
                option,
                path,
                "it exists and is not a railyard review",
                f"choose a new file name, or pass --force {path} to overwrite it",
            )


def write_file(
    path: Path, text: str, option: str = "--out", force: Path | None = None, replace_any: bool = False
) -> None:
    """One file, atomically (a reader sees the old or the new content, never a partial one), 0644."""
    path = Path(path)
    if not replace_any:
        check_out_file(path, option, force)
    try:
        make_parents(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", dir=path.parent)
    except OSError as exc:
        raise os_problem(option, path, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise os_problem(option, path, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
