"""Writing railyard's output: never lose a user's file, never leave a half-written tree.

The output folder contract (`compile --out`, `verify --write-config`):
- railyard writes `.railyard-manifest.json` (every file it wrote, with its SHA-256) into the folder;
- a folder is railyard's when it holds that manifest. A new or empty folder becomes railyard's; a
  non-empty folder without a manifest is refused unless `--force DIR` names it;
- never: the filesystem root, a folder holding `.git` (a git work tree's root) or inside `.git`, the
  project's `designs/`, the folder of the design file or any of its ancestors, a symlink;
- only files in the manifest are replaced; files a user added are kept; stale railyard files (in the
  old manifest, not written now) are removed and listed, unless edited since, then they are kept and
  listed too. Files are written 0644 and folders 0755 whatever the umask.

The folder changes as one transaction: whatever kills the process (an error, kill -9, a power loss),
the folder is the old output or the new one, never a mix.
- One writer at a time: a lock file beside the folder (`.<name>.railyard-lock`, flock: released when
  its process dies, the file removed when the writer is done); a second writer waits, and says whom
  it waits for.
- The new tree is staged beside the folder (`.<name>.railyard-stage-*`) with the user's files hard
  linked into it, flushed to disk (syncfs), then swapped with the folder in one renameat2
  RENAME_EXCHANGE (a new folder: one rename) and the parent folder flushed; the old tree is removed.
- A folder whose parent railyard may not write (or a filesystem without RENAME_EXCHANGE) is staged
  inside itself and committed from a journal (`.railyard-journal.json`, written once the staged
  files are on disk): the files are moved in one by one, and a run killed half way is finished by
  the next one before it does anything else.
- Leftovers of killed runs (stage folders, a journal's staging) are recognised by their names and
  removed by the next writer, under the lock.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from generators.model.errors import DesignError, Problem

MANIFEST = ".railyard-manifest.json"
JOURNAL = ".railyard-journal.json"  # the in-place commit's plan, while it runs (see the module docstring)
STAGING = ".railyard-staging-"  # the in-place commit's staging folder, inside the output folder
LOCK = ".railyard-lock"  # the writers' lock, beside the folder (.<name>.railyard-lock) or inside it
SCHEMA = "railyard.manifest/1"
FILE_MODE = 0o644
DIR_MODE = 0o755
PRIVATE_FILE_MODE = 0o600  # a deploy folder's files holding secrets, and its manifest
PRIVATE_DIR_MODE = 0o700
# how `railyard diff` output (markdown, json) and `netbox push --edits` begin: an existing file may be
# replaced only if it is one
REVIEW_HEADS = (
    "# railyard design review:",
    '{\n  "schema": "railyard.review/',
    '{\n  "schema": "railyard.netbox-edits/',
)


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
    on_wait: Callable[[str], None] | None = None,
    private: bool = False,
) -> Written:
    """Write `files` ({relative path: text, or bytes such as a PDF}, or a Stager that writes them) into the
    folder `out` under the contract above. `on_wait` is told (once) when another writer holds the folder.
    `private` (a deploy folder holding secrets): the folder is 0700 and its manifest 0600 from the start
    (its hashes would let a short secret be guessed offline), the files keep the modes the Stager gave."""
    out = Path(out)
    check_out_dir(out, option, force, design)
    try:
        if not out.parent.exists():
            make_parents(out)
        with _locked(out, on_wait):
            _recover(out)
            # read again under the lock: another writer may have changed the folder since
            manifest = check_out_dir(out, option, force, design)
            done = _write_tree(files, out, manifest, option, force, private)
            if private:  # whichever way the tree was committed (new, exchanged, in place)
                os.chmod(out, PRIVATE_DIR_MODE)
                os.chmod(out / MANIFEST, PRIVATE_FILE_MODE)
            return done
    except OSError as exc:
        raise os_problem(option, out, exc) from None


@contextlib.contextmanager
def _locked(out: Path, on_wait: Callable[[str], None] | None) -> Iterator[None]:
    """Hold the folder's lock: a file beside the folder when its parent is writable (the folder itself is
    swapped), else inside it, there only while a writer holds it. flock dies with its holder, so a lock
    file a killed writer left is taken by the next one; a waiter that finds the file it locked removed
    (its holder finished) takes the lock again on the path's new file."""
    inside = out.is_dir() and not out.is_symlink() and not _beside(out)
    path = out / LOCK if inside else out.parent / f".{out.name}{LOCK}"
    told = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None and not told:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                on_wait(f"waiting for another railyard (pid {holder}) writing {out}")
                told = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        mine = os.fstat(fd)
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # before the unlock: a waiter then sees its file gone and takes the path's next
        os.close(fd)


def _phase(name: str) -> None:
    """A kill point for the tests (RAILYARD_KILL_AT=<name>): the process kills itself there with SIGKILL,
    so tests/test_output_transaction.py can show the folder is the old or the new output whichever step
    a kill meets."""
    if os.environ.get("RAILYARD_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _beside(out: Path) -> bool:
    """Whether the folder can be staged beside itself and swapped in whole (its parent is writable)."""
    return os.access(out.parent, os.W_OK | os.X_OK)


def _stage_prefix(out: Path) -> str:
    return f".{out.name}.railyard-stage-"


def _recover(out: Path) -> None:
    """Under the lock: finish an in-place commit a killed run left (its journal), then remove what killed
    runs staged and never committed, and the old trees they swapped out."""
    journal = out / JOURNAL
    if out.is_dir() and not out.is_symlink() and journal.is_file() and not journal.is_symlink():
        try:
            plan = json.loads(journal.read_bytes()[: 256 << 20])
        except (ValueError, UnicodeDecodeError):
            plan = None
        _replay(out, plan)
    leftovers: list[Path] = []
    if _beside(out):
        leftovers += [p for p in out.parent.iterdir() if p.name.startswith(_stage_prefix(out))]
    if out.is_dir() and not out.is_symlink():
        leftovers += [p for p in out.iterdir() if p.name.startswith(STAGING)]
    for p in leftovers:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)  # under the lock: no writer is using it


_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux renameat2 RENAME_EXCHANGE). False where the filesystem or the
    C library cannot (the in-place commit is used instead)."""
    renameat2 = getattr(_LIBC, "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _flush(folder: Path) -> None:
    """Everything written so far on `folder`'s filesystem, on disk (syncfs; sync where there is none)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        syncfs = getattr(_LIBC, "syncfs", None)
        if syncfs is None or syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_clash(out: Path, old: dict[str, str], digests: dict[str, str], option: str, force: Path | None) -> None:
    """Every path is known now (a Stager's only once it has run): a user's file where railyard writes one
    is refused unless --force names the folder."""
    clash = sorted(r for r in digests if r not in old and (out / r).exists())
    if clash and not (force is not None and Path(force).resolve() == out.resolve()):
        raise _refuse(
            option,
            out,
            f"{len(clash)} file(s) railyard would write are not railyard's, e.g. {clash[0]}",
            f"move them away, or pass --force {out} to overwrite them",
        )


def _write_tree(
    files: Mapping[str, str | bytes] | Stager,
    out: Path,
    manifest: dict[str, str] | None,
    option: str,
    force: Path | None,
    private: bool = False,
) -> Written:
    old = manifest or {}
    beside = not out.exists() or _beside(out)
    tmp = Path(tempfile.mkdtemp(prefix=_stage_prefix(out) if beside else STAGING, dir=out.parent if beside else out))
    try:
        digests = files(tmp) if callable(files) else stage_files(files, tmp)
        _phase("staged")
        if not out.exists():
            _finish_stage(tmp, digests, private)
            tmp.rename(out)  # all at once
            _fsync_dir(out.parent)
            return Written(len(digests))
        _check_clash(out, old, digests, option, force)
        for rel in digests:  # every path checked before anything of the folder is touched
            _preflight(out, rel)
        if beside:
            try:
                done = _carry_over(out, tmp, old, digests)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                done = None  # a file that cannot be hard linked (another filesystem, not ours): in place
            if done is not None:
                _phase("carried")
                _finish_stage(tmp, digests, private)
                os.chmod(tmp, PRIVATE_DIR_MODE if private else os.stat(out).st_mode & 0o7777)
                _phase("flushed")
                if _exchange(tmp, out):
                    _fsync_dir(out.parent)
                    _phase("exchanged")  # the old tree is still beside the folder, for the next run to remove
                    return done
        return _commit_in_place(out, tmp, old, digests)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _finish_stage(tmp: Path, digests: dict[str, str], private: bool = False) -> None:
    """The staged tree complete: its manifest written, its mode set, everything on disk."""
    (tmp / MANIFEST).write_text(_manifest_text(digests), encoding="utf-8")
    os.chmod(tmp / MANIFEST, PRIVATE_FILE_MODE if private else FILE_MODE)
    os.chmod(tmp, PRIVATE_DIR_MODE if private else DIR_MODE)
    _flush(tmp)


def _user_files(tmp: Path, digests: dict[str, str], kept: list[str]) -> list[str]:
    """The files of the staged tree that railyard did not write now (the user's, linked in)."""
    skip = {*digests, *kept, MANIFEST}
    return [
        rel
        for rel in (p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file() or p.is_symlink())
        if rel not in skip
    ]


def _carry_over(out: Path, tmp: Path, old: dict[str, str], digests: dict[str, str]) -> Written:
    """Into the staged tree, hard linked from the folder: every file railyard does not write now and may
    not remove, that is the user's files and the stale railyard files edited since; the stale ones not
    edited are left behind (removed with the old tree). Empty folders of the user's come along too."""
    done = Written(len(digests))
    for dirpath, dirnames, filenames in os.walk(out):
        here = Path(dirpath)
        rel_dir = here.relative_to(out)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if not d.startswith(STAGING)]
        for name in dirnames:
            if (here / name).is_symlink():  # a user's symlink to a folder: carried as the link it is
                filenames.append(name)
        for name in filenames:
            rel = (rel_dir / name).as_posix()
            if rel in digests or rel in (MANIFEST, JOURNAL, LOCK):
                continue
            src = here / name
            if rel in old:
                if _via_symlink(out, rel) or src.is_symlink() or not src.is_file():
                    continue
                if _sha(src.read_bytes()) == old[rel]:
                    done.removed.append(rel)
                    continue
                done.kept.append(rel)
            dst = tmp / rel
            safe_folders(tmp, PurePosixPath(rel).parent)
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            else:
                os.link(src, dst, follow_symlinks=False)
        if rel_dir != Path("."):
            if not filenames and not dirnames:
                safe_folders(tmp, PurePosixPath(rel_dir.as_posix()))
            if (tmp / rel_dir).is_dir():  # a folder keeps the mode it had (a user's 0700 stays 0700)
                os.chmod(tmp / rel_dir, os.stat(here).st_mode & 0o7777)
    done.removed.sort()
    done.kept.sort()
    return done


def _commit_in_place(out: Path, tmp: Path, old: dict[str, str], digests: dict[str, str]) -> Written:
    """Move the staged files into the folder, one rename each, from a journal that a killed run's successor
    replays (the folder is the new output once the journal is on disk)."""
    _flush(tmp)
    plan = {"staging": str(tmp.resolve()), "write": sorted(digests), "old": old, "manifest": digests}
    path = out / JOURNAL
    with open(path.with_suffix(".tmp"), "w", encoding="utf-8") as fh:
        json.dump(plan, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(path.with_suffix(".tmp"), path)
    _fsync_dir(out)
    _phase("journal")
    return _replay(out, plan)


def _journal(out: Path, plan: object) -> tuple[Path, list[str], dict[str, str], dict[str, str]]:
    """(staging folder, paths to move in, old manifest, new manifest) of a journal, checked."""
    fix = f"if no railyard is writing {out}, delete {out / JOURNAL} and run again (the folder then holds a mix)"
    if not isinstance(plan, dict):
        raise _refuse("--out", out, f"{JOURNAL} is not a railyard journal", fix)
    tmp = Path(str(plan.get("staging", "")))
    ours = (tmp.parent == out.resolve() and tmp.name.startswith(STAGING)) or (
        tmp.parent == out.resolve().parent and tmp.name.startswith(_stage_prefix(out))
    )
    write, old, digests = plan.get("write"), plan.get("old"), plan.get("manifest")
    if (
        not ours
        or not isinstance(write, list)
        or not all(_safe_rel(r) for r in write)
        or not all(
            isinstance(m, dict) and all(_safe_rel(k) and isinstance(v, str) for k, v in m.items())
            for m in (old, digests)
        )
    ):
        raise _refuse("--out", out, f"{JOURNAL} is not a railyard journal", fix)
    assert isinstance(old, dict) and isinstance(digests, dict)
    return tmp, write, old, digests


def _replay(out: Path, plan: object) -> Written:
    """Carry out a journal: the staged files that are still there go in, stale railyard files not edited
    since go, the new manifest is written, the journal goes. Every step can run twice. A journal that is
    not one railyard wrote (a staging folder that is not railyard's, an unsafe path) is refused."""
    tmp, write, old, digests = _journal(out, plan)
    for i, rel in enumerate(write):
        if i == len(write) // 2:
            _phase("moving")
        if (tmp / rel).is_file():
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
    _phase("moved")
    _write_manifest(out, digests, "--out")
    (out / JOURNAL).unlink(missing_ok=True)
    shutil.rmtree(tmp, ignore_errors=True)
    _fsync_dir(out)
    return done


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
