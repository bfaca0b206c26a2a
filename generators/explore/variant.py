"""A variant as a design document: the mapping a point's design file holds below `extends: BASE`.

Why a document and not `--set` on the base: the point file must compile to exactly the variant that was
evaluated, and a file that extends BASE is merged the way `extends:` merges (yamlload.deep_merge: mapping
by mapping, anything else replaced). So the evaluation merges this same document over the base; a
candidate value that is a mapping merges into the base's mapping as it would in the file. A path through
a list (`tenants.0.name`) cannot be written below `extends:` (a list is replaced whole), so the document
carries the whole list with that item changed, as `--set` would have changed it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from generators.model.yamlload import deep_merge, set_path, split_path

NAME_MAX = 32  # the design schema's limit on `name`


def document(base: dict[str, Any], overrides: Sequence[tuple[str, Any]], at: str) -> dict[str, Any]:
    """The overrides as a design document to merge over `base`. Raises DesignError (naming `at`) for a
    path through a value that is neither a mapping nor a list."""
    doc: dict[str, Any] = {}
    changed: dict[str, Any] | None = None  # the base with list-crossing overrides set, made when needed
    for path, value in overrides:
        parts = split_path(path)
        cut = _list_cut(base, parts)
        if cut is None:
            _nest(doc, parts, copy.deepcopy(value))
            continue
        if changed is None:
            changed = copy.deepcopy(base)
        set_path(changed, parts, copy.deepcopy(value), at)
        node: Any = changed
        for part in parts[:cut]:
            node = node[part]
        _nest(doc, parts[:cut], copy.deepcopy(node))
    return doc


def _list_cut(base: dict[str, Any], parts: tuple[str, ...]) -> int | None:
    """The length of the path's prefix that names a list it indexes into, if it does."""
    node: Any = base
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            return i
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return len(parts) - 1 if isinstance(node, list) else None


def _nest(doc: dict[str, Any], parts: tuple[str, ...], value: Any) -> None:
    node = doc
    for part in parts[:-1]:
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
        node = nxt
    last = parts[-1]
    old = node.get(last)
    node[last] = deep_merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value


def point_name(base_name: str, point_id: str) -> str:
    """The point's design name: the base's, cut to fit, and the point's id ("h100-1024-reference-p0007")."""
    suffix = f"-{point_id}"
    return base_name[: NAME_MAX - len(suffix)].rstrip("-") + suffix


def point_document(
    base: dict[str, Any], overrides: Sequence[tuple[str, Any]], name: str, description: str, at: str
) -> dict[str, Any]:
    """What a point's design file holds below `extends:`: its name, a line on what it is, the overrides."""
    return {"name": name, "description": description, **document(base, overrides, at)}
