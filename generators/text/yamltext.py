"""Block-style YAML of plain documents, byte for byte as PyYAML's dumper writes them
(`default_flow_style=False`, indent 2, keys in the document's order or sorted), without PyYAML's
representer and node graph.

PyYAML's representer runs in Python even with libyaml's emitter: ~0.5 ms for a server's netplan file,
~10 s of the 24,576 host files of a 98,304-GPU RoCE site, and most of a Cumulus NVUE startup.yaml's
time. The documents railyard writes this way are mappings and lists of booleans, integers, short names
and addresses, which PyYAML writes plain (single-quoted when a name would read back as another type:
NVUE's `'on'`), and empty mappings and lists, which it writes `{}` and `[]` (NVUE's `server: {a: {}}`);
for those this writes the same text. Anything else (a float, None, a non-empty list in a list, a
mapping or list met twice, which PyYAML writes as an anchor and an alias, a string PyYAML would
double-quote or fold) raises Unsupported, and the caller dumps that document with PyYAML: a faster
path, never a different file. tests/test_yaml_text.py checks both against PyYAML.
"""

from __future__ import annotations

import contextlib
import enum
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import yaml

_STR = "tag:yaml.org,2002:str"
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?\Z")  # never an int, float or date
# no space, quote, comment, flow or indicator character, and not starting with one; a colon only inside
# (before a space or the end it is a mapping indicator): PyYAML's emitter writes such a scalar plain when
# it resolves to a string
_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_./:-]*[A-Za-z0-9_./-])?\Z")
# a secret's placeholder (generators/secrets: `%%RAILYARD_SECRET.name%%`): PyYAML single-quotes a scalar
# that starts with the `%` directive indicator and holds nothing it would escape
_PLACEHOLDER = re.compile(r"%%[A-Za-z0-9_./-]+%%\Z")
_RESOLVER = yaml.resolver.Resolver()


if TYPE_CHECKING:  # libyaml's CSafeDumper has SafeDumper's interface (its emitter in C)
    _Dumper = yaml.SafeDumper
else:
    _Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class SafeDumper(_Dumper):
    """PyYAML's safe dumper on libyaml's emitter when PyYAML was built with it (the same text, ~10x faster
    than the pure-Python emitter), which also writes railyard's vocabulary (StrEnum members such as
    Role.SPINE) as the plain strings they are: PyYAML picks a representer by exact type."""


def _plain(dumper: yaml.representer.SafeRepresenter, v: enum.StrEnum) -> yaml.Node:
    return dumper.represent_str(v.value)  # libyaml's emitter takes only an exact str


SafeDumper.add_multi_representer(enum.StrEnum, _plain)
SAFE_DUMPER = SafeDumper  # the one way railyard's renderers get a YAML dumper


class Unsupported(ValueError):
    """The document holds something this writer does not write as PyYAML does."""


@lru_cache(maxsize=4096)
def _name(s: str) -> str | None:
    """A short name as PyYAML writes it: plain, or single-quoted when the plain text would read back as
    something else (`on`, `true`, `1_000`, `2024-01-01`, as the resolver answers); None if neither."""
    if len(s) >= 80 or not _NAME.match(s):
        return None
    # types-PyYAML leaves Resolver.resolve unannotated; it answers the tag the text reads back as
    tag = _RESOLVER.resolve(yaml.ScalarNode, s, (True, False))  # type: ignore[no-untyped-call]
    return s if tag == _STR else f"'{s}'"


def _scalar(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if type(v) is int:
        return str(v)
    if isinstance(v, enum.StrEnum):  # railyard's vocabulary: the plain string it is
        v = v.value
    if type(v) is str:
        if _IPV4.match(v):
            return v
        if (text := _name(v)) is not None:
            return text
        if len(v) < 80 and _PLACEHOLDER.match(v):
            return f"'{v}'"
    raise Unsupported(repr(v))


def _empty(v: Any) -> str | None:
    """An empty mapping or list as PyYAML writes it in flow style (its emitter does for every empty one)."""
    if type(v) is dict and not v:
        return "{}"
    if type(v) is list and not v:
        return "[]"
    return None


def _once(v: dict[Any, Any] | list[Any], seen: set[int]) -> None:
    """PyYAML writes a mapping or list met twice in a document as an anchor and an alias."""
    if id(v) in seen:
        raise Unsupported("a mapping or list that appears twice")
    seen.add(id(v))


def _mapping(
    d: dict[Any, Any], indent: int, out: list[str], sort: bool, seen: set[int], lead: str | None = None
) -> None:
    """`lead` starts the first key's line when the mapping is a sequence item (`- ` at indent - 2)."""
    _once(d, seen)
    pad = " " * indent
    items: Iterable[tuple[Any, Any]] = d.items()
    if sort:
        # PyYAML's order: sorted(mapping.items()), left as it is when the keys do not compare
        with contextlib.suppress(TypeError):
            items = sorted(items, key=lambda kv: kv[0])
    for k, v in items:
        start = lead if lead is not None else pad
        lead = None
        key = _scalar(k)
        if (flow := _empty(v)) is not None:
            _once(v, seen)
            out.append(f"{start}{key}: {flow}\n")
        elif isinstance(v, dict):
            out.append(f"{start}{key}:\n")
            _mapping(v, indent + 2, out, sort, seen)
        elif isinstance(v, list):
            out.append(f"{start}{key}:\n")
            _sequence(v, indent, out, sort, seen)  # PyYAML indents no sequence that is a mapping's value
        else:
            out.append(f"{start}{key}: {_scalar(v)}\n")


def _sequence(items: list[Any], indent: int, out: list[str], sort: bool, seen: set[int]) -> None:
    _once(items, seen)
    pad = " " * indent
    for it in items:
        if (flow := _empty(it)) is not None:
            _once(it, seen)
            out.append(f"{pad}- {flow}\n")
        elif isinstance(it, dict):
            _mapping(it, indent + 2, out, sort, seen, lead=f"{pad}- ")
        elif isinstance(it, list):
            raise Unsupported("a list in a list")
        else:
            out.append(f"{pad}- {_scalar(it)}\n")


def block_yaml(doc: dict[str, Any] | list[Any], sort_keys: bool = False) -> str:
    """The document as `yaml.dump(doc, default_flow_style=False, sort_keys=sort_keys)` writes it; raises
    Unsupported for a document outside what this writes (see the module docstring)."""
    if (flow := _empty(doc)) is not None:
        return flow + "\n"
    out: list[str] = []
    if isinstance(doc, dict):
        _mapping(doc, 0, out, sort_keys, set())
    elif isinstance(doc, list):
        _sequence(doc, 0, out, sort_keys, set())
    else:
        raise Unsupported(repr(doc))
    return "".join(out)


def dump_block(doc: dict[str, Any] | list[Any], sort_keys: bool = False) -> str:
    """block_yaml's text, or PyYAML's (libyaml's emitter when present) for a document it does not write."""
    try:
        return block_yaml(doc, sort_keys)
    except Unsupported:
        return yaml.dump(doc, Dumper=SAFE_DUMPER, sort_keys=sort_keys, default_flow_style=False)
