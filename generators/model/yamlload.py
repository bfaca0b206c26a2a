"""YAML loading that remembers where every value came from, resolves `extends:` and applies `--set`.

Why not plain yaml.safe_load: error messages must name the YAML line of the offending field, and a
design that extends another must report the line in whichever file set the value. PyYAML also reads
`2:1` as the base-60 integer 121 (YAML 1.1); ratios are common in designs, so that rule is dropped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from generators.model.errors import DesignError

SourceMap = dict[tuple[str, ...], str]  # path of keys -> "file:line"


class _Loader(yaml.SafeLoader):
    pass


# Re-register the int/float resolvers without the sexagesimal (base-60) forms.
_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
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


def _to_python(node: yaml.Node, loader: _Loader, path: tuple[str, ...], src: SourceMap, label: str) -> Any:
    src[path] = f"{label}:{node.start_mark.line + 1}"
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            key = str(key)
            if key in out:
                raise DesignError.one(
                    ".".join((*path, key)),
                    "key appears twice in the same mapping",
                    "remove one of the two",
                    f"{label}:{key_node.start_mark.line + 1}",
                )
            src[(*path, key)] = f"{label}:{key_node.start_mark.line + 1}"
            out[key] = _to_python(value_node, loader, (*path, key), src, label)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(n, loader, (*path, str(i)), src, label) for i, n in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def parse_yaml_text(text: str, label: str) -> tuple[Any, SourceMap]:
    src: SourceMap = {}
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{label}:{mark.line + 1}" if mark else label
        raise DesignError.one("(yaml)", f"not valid YAML: {getattr(exc, 'problem', exc)}",
                              "check indentation and quoting near that line", where) from None
    finally:
        loader.dispose()
    if node is None:
        return {}, src
    return _to_python(node, loader, (), src, label), src


def load_yaml_file(path: Path) -> tuple[Any, SourceMap]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DesignError.one("(file)", f"cannot read {path}: {exc.strerror}", "check the path", str(path)) from None
    return parse_yaml_text(text, _display(path))


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
    path = path.resolve()
    if path in _seen:
        chain = " -> ".join(p.name for p in (*_seen, path))
        raise DesignError.one("extends", f"circular extends: {chain}", "remove one of the extends lines")
    data, src = load_yaml_file(path)
    if not isinstance(data, dict):
        raise DesignError.one("(design)", "a design must be a YAML mapping", "start the file with `name: ...`",
                              _display(path))
    parent = data.pop("extends", None)
    if parent is None:
        return data, src
    if not isinstance(parent, str):
        raise DesignError.one("extends", "must be a file name", "e.g. extends: h100-1024-reference.yaml",
                              src.get(("extends",), ""))
    parent_path = path.parent / parent
    if not parent_path.exists():
        raise DesignError.one("extends", f"{parent} does not exist next to {path.name}",
                              "name a design file in the same folder", src.get(("extends",), ""))
    base, base_src = load_with_extends(parent_path, (*_seen, path))
    merged_src = dict(base_src)
    merged_src.update({k: v for k, v in src.items() if k != ("extends",)})
    return deep_merge(base, data), merged_src


def apply_overrides(data: dict[str, Any], src: SourceMap, overrides: list[str]) -> dict[str, Any]:
    """Apply `--set a.b.c=value` what-if overrides; the value is parsed as YAML (so 2:1 stays a string)."""
    for item in overrides:
        if "=" not in item:
            raise DesignError.one("--set", f"{item!r} is not path=value", "e.g. --set backend.oversubscription=2:1")
        key, raw = item.split("=", 1)
        parts = tuple(p for p in key.strip().split(".") if p)
        if not parts:
            raise DesignError.one("--set", f"{item!r} has an empty path", "e.g. --set compute.count=256")
        value, _ = parse_yaml_text(raw, "--set") if raw.strip() else ("", {})
        node: Any = data
        for i, part in enumerate(parts[:-1]):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
                continue
            if not isinstance(node, dict):
                raise DesignError.one(".".join(parts[: i + 1]), "cannot set a key inside a non-mapping value",
                                      "check the path", "--set")
            node = node.setdefault(part, {})
        last = parts[-1]
        if isinstance(node, list) and last.isdigit() and int(last) < len(node):
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise DesignError.one(".".join(parts), "cannot set a key inside a non-mapping value", "check the path",
                                  "--set")
        src[parts] = f"--set {item}"
    return data


def where(src: SourceMap, loc: tuple[Any, ...]) -> str:
    """Best location for a field path: the deepest prefix that has a recorded line."""
    parts = tuple(str(p) for p in loc)
    while parts:
        if parts in src:
            return src[parts]
        parts = parts[:-1]
    return src.get((), "")
