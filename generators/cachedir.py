"""railyard's cache folder: `$RAILYARD_CACHE`, default ~/.cache/railyard. It holds what can be made
again from the inputs (Jinja2 bytecode, the Pulumi program's compiled-site records), so a folder that
cannot be made or written costs time, never a result."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("RAILYARD_CACHE") or Path.home() / ".cache" / "railyard")


def cache_folder(name: str) -> Path | None:
    """cache_root()/name, made if missing; None when it cannot be made or written."""
    folder = cache_root() / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            return None
    except OSError:
        return None
    return folder
