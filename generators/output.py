"""Writing an output directory all at once: render into a sibling temp dir, then swap it in, so an
error never leaves a half-written tree and a rerun never leaves stale files behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from generators.model.errors import DesignError

MARKER = "plan.json"  # a directory holding this was written by railyard and may be replaced


def write_tree(files: dict[str, str], out: Path) -> None:
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise DesignError.one("--out", f"{out} exists and was not written by railyard",
                              "choose an empty or new directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for rel, text in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        os.chmod(tmp, 0o755)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
        tmp.rename(out)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_file(path: Path, text: str) -> None:
    """One file, atomically: a reader sees the old or the new content, never a partial one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
