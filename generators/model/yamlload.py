"""YAML loading that remembers where every value came from, resolves `extends:` and applies `--set`.

Why not plain yaml.safe_load: error messages must name the YAML line of the offending field, and a
design that extends another must report the line in whichever file set the value. PyYAML also reads
`2:1` as the base-60 integer 121 (YAML 1.1); ratios are common in designs, so that rule is dropped.

Hostile input is bounded: files are read through inputfile (regular files, size limit, UTF-8), the
nesting depth and the number of values after alias expansion are capped (an alias bomb is refused
in milliseconds), recursive aliases, unknown tags and non-finite numbers (.inf, .nan) are refused by
line, merge keys (`<<: *base`) are supported, and `extends:` chains are limited and cycle-checked.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from generators.model.errors import DesignError
from generators.model.inputfile import DESIGN_LIMIT, read_text

MAX_DEPTH = 48  # nesting of mappings and lists; real designs stay under 8
MAX_VALUES = 50_000  # values after alias expansion; the largest shipped design has a few hundred
MAX_EXTENDS = 16  # files in one extends: chain
_MERGE = "tag:yaml.org,2002:merge"

SourceMap = dict[tuple[str, ...], str]  # path of keys -> "file:line"


# libyaml's C parser makes the events (5-20x faster than PyYAML's pure-Python scanner: the parts
# catalog took 0.4 s to read, most of a small compile), while composing stays in Python so the depth
# guard below runs at every level. Marks, values and errors are the same (tests/test_hostile_inputs.py).
try:
    from yaml._yaml import CParser as _EventSource
except ImportError:  # a PyYAML built without libyaml: the same events, slower
    # (the fallback under the import's name: mypy sees two definitions of it)
    class _EventSource(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)


class _Loader(yaml.composer.Composer, _EventSource, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    label = ""

    def __init__(self, stream: str) -> None:
        _EventSource.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def compose_node(self, parent: Any, index: Any) -> Any:
        # PyYAML's composer recurses once per level: refuse deep nesting before Python's stack runs out
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                # the parser stands at this node's event, and libyaml and PyYAML mark every event
                event = self.peek_event()
                assert event is not None and event.start_mark is not None
                mark = event.start_mark
                raise DesignError.one(
                    "(yaml)",
                    f"nested more than {MAX_DEPTH} levels deep",
                    "flatten the structure; a design needs a few levels",
                    f"{self.label}:{mark.line + 1}",
                )
            return yaml.composer.Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1


# Re-register the int/float resolvers without the sexagesimal (base-60) forms.
_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
    for k, v in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


def _tag(node: yaml.Node) -> str:
    """A tag as written: !!python/object/apply:os.system, !secret."""
    return "!!" + node.tag.removeprefix("tag:yaml.org,2002:") if node.tag.startswith("tag:yaml.org,2002:") else node.tag


class _Walk:
    """Node graph -> Python values with a budget: aliases are expanded, so count every value."""

    def __init__(self, loader: _Loader, src: SourceMap, label: str) -> None:
        self.loader, self.src, self.label, self.left = loader, src, label, MAX_VALUES
        self.active: set[int] = set()

    def at(self, node: yaml.Node) -> str:
        return f"{self.label}:{node.start_mark.line + 1}"

    def value(self, node: yaml.Node, path: tuple[str, ...]) -> Any:
        self.left -= 1
        if self.left < 0:
            raise DesignError.one(
                ".".join(path) or "(yaml)",
                f"more than {MAX_VALUES:,} values after expanding aliases (an alias bomb?)",
                "write the values out; a design has a few hundred",
                self.at(node),
            )
        if id(node) in self.active:
            raise DesignError.one(
                ".".join(path) or "(yaml)",
                "an alias refers to a value that contains it (recursive alias)",
                "remove the alias or point it elsewhere",
                self.at(node),
            )
        self.src[path] = self.at(node)
        std: dict[type[yaml.Node], str] = {
            yaml.MappingNode: "tag:yaml.org,2002:map",
            yaml.SequenceNode: "tag:yaml.org,2002:seq",
        }
        if type(node) in std and node.tag != std[type(node)]:
            raise DesignError.one(
                ".".join(path) or "(yaml)",
                f"cannot read this value (tag {_tag(node)})",
                "write a plain value without a YAML tag",
                self.at(node),
            )
        if isinstance(node, yaml.MappingNode):
            self.active.add(id(node))
            try:
                return self.mapping(node, path)
            finally:
                self.active.discard(id(node))
        if isinstance(node, yaml.SequenceNode):
            self.active.add(id(node))
            try:
                return [self.value(n, (*path, str(i))) for i, n in enumerate(node.value)]
            finally:
                self.active.discard(id(node))
        value = self.scalar(node, path)
        if isinstance(value, float) and not math.isfinite(value):
            raise DesignError.one(
                ".".join(path) or "(yaml)",
                f"{node.value} is not a finite number",
                "write a number such as 1.5",
                self.at(node),
            )
        return value

    def scalar(self, node: yaml.Node, path: tuple[str, ...]) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise DesignError.one(
                ".".join(path) or "(yaml)",
                f"cannot read this value (tag {_tag(node)}): {getattr(exc, 'problem', None) or exc}",
                "write a plain value without a YAML tag",
                self.at(node),
            ) from None

    def mapping(self, node: yaml.MappingNode, path: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                # `<<: *base` or `<<: [*a, *b]`: keys of the named mappings, explicit keys win, earlier wins
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for sn in sources:
                    if not isinstance(sn, yaml.MappingNode):
                        raise DesignError.one(
                            ".".join((*path, "<<")),
                            "a merge key (<<) takes a mapping or a list of mappings",
                            "merge an anchored mapping: <<: *name",
                            self.at(sn),
                        )
                    for k, v in self.value(sn, path).items():
                        merged.setdefault(k, v)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise DesignError.one(
                    ".".join(path) or "(yaml)",
                    "a key must be a plain name, not a list or mapping",
                    "write the key as text",
                    self.at(key_node),
                )
            key = str(self.scalar(key_node, path))
            if key in out:
                raise DesignError.one(
                    ".".join((*path, key)),
                    "key appears twice in the same mapping",
                    "remove one of the two",
                    self.at(key_node),
                )
            self.src[(*path, key)] = self.at(key_node)
            out[key] = self.value(value_node, (*path, key))
        for k, v in merged.items():
            out.setdefault(k, v)
        return out


# The last parses, by (text, label, limits): every compile reads the parts catalog (designs/catalog.yaml),
# whose parse was ~0.08 s of a small compile's ~0.14 s. A parse is a function of these alone; lru_cache
# keeps no refusal (DesignError), and each caller gets a deep copy of its own, which it may change.
def parse_yaml_text(text: str, label: str) -> tuple[Any, SourceMap]:
    data, src = _kept_parse(text, label, MAX_DEPTH, MAX_VALUES)
    return copy.deepcopy(data), dict(src)


@functools.lru_cache(maxsize=32)
def _kept_parse(text: str, label: str, max_depth: int, max_values: int) -> tuple[Any, SourceMap]:
    # the limits are read by the parse itself; they are arguments so a parse made under other limits
    # is not answered from the cache
    return _parse_yaml_text(text, label)


def _parse_yaml_text(text: str, label: str) -> tuple[Any, SourceMap]:
    src: SourceMap = {}
    loader = _Loader(text)
    loader.label = label
    try:
        node = loader.get_single_node()
        if node is None:
            return {}, src
        return _Walk(loader, src, label).value(node, ()), src
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        raise DesignError.one(
            "(yaml)",
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            "check indentation and quoting near that line",
            where,
        ) from None
    finally:
        loader.dispose()


def load_yaml_file(path: Path, option: str = "(file)") -> tuple[Any, SourceMap]:
    label = _display(path)
    return parse_yaml_text(read_text(path, option, DESIGN_LIMIT, "a design YAML file", label), label)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def deep_merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key; anything else (lists included) is replaced by the override."""
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for k, v in over.items():
            merged[k] = deep_merge(base[k], v) if k in base else v
        return merged
    return over


def load_with_extends(path: Path, _seen: tuple[Path, ...] = ()) -> tuple[dict[str, Any], SourceMap]:
    """Load a design file, resolving `extends:` chains (relative to the extending file)."""
    try:
        path = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise DesignError.one(
            "extends" if _seen else "(file)",
            f"cannot resolve {path}: {exc}",
            "the path runs through a symlink loop: use the real file",
            str(path),
        ) from None
    data, src = load_yaml_file(path, "extends" if _seen else "(file)")
    if data is None or data == {}:
        raise DesignError.one(
            "(design)",
            f"{_display(path)} holds no design (the file is empty)",
            "start the file with `name: ...` (`railyard schema` lists every field)",
            f"{_display(path)}:1",
        )
    if not isinstance(data, dict):
        raise DesignError.one(
            "(design)",
            f"a design must be a YAML mapping, not a {type(data).__name__ if data is not None else 'empty document'}",
            "start the file with `name: ...`",
            src.get((), f"{_display(path)}:1"),
        )
    parent = data.pop("extends", None)
    if parent is None:
        return data, src
    at = src.get(("extends",), "")
    if not isinstance(parent, str) or not parent.strip():
        raise DesignError.one("extends", "must be a file name", "e.g. extends: h100-1024-reference.yaml", at)
    parent_path = path.parent / parent
    try:
        exists = parent_path.exists() or parent_path.is_symlink()  # a symlink loop fails when read, by name
    except (OSError, ValueError):
        exists = False
    try:
        parent_real = parent_path.resolve()
    except (OSError, RuntimeError):
        parent_real = parent_path
    if parent_real in (*_seen, path):
        chain = " -> ".join(_display(p) for p in (*_seen, path, parent_real))
        raise DesignError.one("extends", f"circular extends: {chain}", "remove one of the extends lines", at)
    if len(_seen) + 2 > MAX_EXTENDS:
        raise DesignError.one(
            "extends",
            f"the extends chain is longer than {MAX_EXTENDS} files (from {_display(_seen[0] if _seen else path)})",
            "extend a design that extends nothing, or merge some of the files",
            at,
        )
    if not exists:
        raise DesignError.one(
            "extends", f"{parent} does not exist next to {path.name}", "name a design file in the same folder", at
        )
    try:
        base, base_src = load_with_extends(parent_path, (*_seen, path))
    except DesignError as exc:
        note = f" (in {parent}, which {_display(path)} extends)"
        exc.problems = [
            replace(p, where=at) if not p.where else p if "extends" in p.field else replace(p, message=p.message + note)
            for p in exc.problems
        ]
        raise
    merged_src = dict(base_src)
    merged_src.update({k: v for k, v in src.items() if k != ("extends",)})
    # where each extended file comes in (no design field is named `extends`, so no lookup meets it)
    merged_src[("extends", _display(parent_real))] = at
    return deep_merge(base, data), merged_src


def apply_overrides(data: dict[str, Any], src: SourceMap, overrides: list[str]) -> dict[str, Any]:
    """Apply `--set a.b.c=value` what-if overrides; the value is parsed as YAML (so 2:1 stays a string)."""
    for item in overrides:
        if "=" not in item:
            raise DesignError.one("--set", f"{item!r} is not path=value", "e.g. --set backend.oversubscription=2:1")
        key, raw = item.split("=", 1)
        parts = split_path(key)
        if not parts:
            raise DesignError.one("--set", f"{item!r} has an empty path", "e.g. --set compute.count=256")
        try:
            value, _ = parse_yaml_text(raw, "--set") if raw.strip() else ("", {})
        except DesignError as exc:  # name the field being set, not "(yaml)"
            exc.problems = [
                replace(p, field=".".join(parts) + p.field.removeprefix("(yaml)").lstrip("."), where=f"--set {item}")
                for p in exc.problems
            ]
            raise
        set_path(data, parts, value, "--set")
        for k in [k for k in src if len(k) > len(parts) and k[: len(parts)] == parts]:
            del src[k]  # the file's lines inside a value --set replaced no longer say where anything is
        src[parts] = f"--set {item if len(item) <= 100 else item[:97] + '...'}"
    return data


def split_path(key: str) -> tuple[str, ...]:
    """A dotted field path as --set reads it: "backend.oversubscription", "tenants.0.name"."""
    return tuple(p for p in key.strip().split(".") if p)


def set_path(data: dict[str, Any], parts: tuple[str, ...], value: Any, at: str) -> None:
    """Set the value at a field path as --set does: a missing mapping is made, a digit indexes an existing
    list item; a path through any other value is refused (`at` says where the path was written)."""
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            continue
        if not isinstance(node, dict):
            raise DesignError.one(
                ".".join(parts[: i + 1]), "cannot set a key inside a non-mapping value", "check the path", at
            )
        node = node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise DesignError.one(".".join(parts), "cannot set a key inside a non-mapping value", "check the path", at)


def where(src: SourceMap, loc: tuple[Any, ...]) -> str:
    """Best location for a field path: the deepest prefix that has a recorded line."""
    parts = tuple(str(p) for p in loc)
    while parts:
        if parts in src:
            return src[parts]
        parts = parts[:-1]
    return src.get((), "")
