"""Block-style YAML of plain documents, byte for byte as PyYAML's dumper writes them
(`default_flow_style=False, sort_keys=False`, indent 2), without PyYAML's representer and node graph.

PyYAML's representer runs in Python even with libyaml's emitter: ~0.5 ms for a server's netplan file,
~10 s of the 24,576 host files of a 98,304-GPU RoCE site. The documents railyard writes this way are
mappings and lists of booleans, integers and short names and addresses, which PyYAML writes plain; for
those this writes the same text. Anything else (a float, None, an empty collection, a list in a list,
a string PyYAML would quote or fold) raises Unsupported, and the caller dumps that document with
PyYAML: a faster path, never a different file. tests/test_yaml_text.py checks both against PyYAML.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import yaml

_STR = "tag:yaml.org,2002:str"
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?\Z")  # never an int, float or date
# no space, quote, comment, flow or indicator character, and not starting with one: PyYAML's emitter
# writes such a scalar plain when it resolves to a string
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*\Z")
_RESOLVER = yaml.resolver.Resolver()
# PyYAML's safe dumper on libyaml's emitter when PyYAML was built with it: the same text, ~10x faster
# than the pure-Python emitter (the one way railyard's renderers get a YAML dumper)
SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Unsupported(ValueError):
    """The document holds something this writer does not write as PyYAML does."""


@lru_cache(maxsize=4096)
def _plain_name(s: str) -> bool:
    # the resolver answers whether the plain text would read back as something else (true, 1e3, 2024-01-01)
    return len(s) < 80 and bool(_NAME.match(s)) and _RESOLVER.resolve(yaml.ScalarNode, s, (True, False)) == _STR


def _scalar(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if type(v) is int:
        return str(v)
    if type(v) is str and (_IPV4.match(v) or _plain_name(v)):
        return v
    raise Unsupported(repr(v))


def _mapping(d: dict[Any, Any], indent: int, out: list[str], lead: str | None = None) -> None:
    """`lead` starts the first key's line when the mapping is a sequence item (`- ` at indent - 2)."""
    if not d:
        raise Unsupported("{}")
    pad = " " * indent
    for k, v in d.items():
        start = lead if lead is not None else pad
        lead = None
        if type(k) is not str:
            raise Unsupported(repr(k))
        key = _scalar(k)
        if isinstance(v, dict):
            out.append(f"{start}{key}:\n")
            _mapping(v, indent + 2, out)
        elif isinstance(v, list):
            out.append(f"{start}{key}:\n")
            _sequence(v, indent, out)  # PyYAML indents no sequence that is a mapping's value
        else:
            out.append(f"{start}{key}: {_scalar(v)}\n")


def _sequence(items: list[Any], indent: int, out: list[str]) -> None:
    if not items:
        raise Unsupported("[]")
    pad = " " * indent
    for it in items:
        if isinstance(it, dict):
            _mapping(it, indent + 2, out, lead=f"{pad}- ")
        elif isinstance(it, list):
            raise Unsupported("a list in a list")
        else:
            out.append(f"{pad}- {_scalar(it)}\n")


def block_yaml(doc: dict[str, Any] | list[Any]) -> str:
    """The document as `yaml.dump(doc, default_flow_style=False, sort_keys=False)` writes it; raises
    Unsupported for a document outside what this writes (see the module docstring)."""
    out: list[str] = []
    if isinstance(doc, dict):
        _mapping(doc, 0, out)
    elif isinstance(doc, list):
        _sequence(doc, 0, out)
    else:
        raise Unsupported(repr(doc))
    return "".join(out)


def dump_block(doc: dict[str, Any] | list[Any]) -> str:
    """block_yaml's text, or PyYAML's (libyaml's emitter when present) for a document it does not write."""
    try:
        return block_yaml(doc)
    except Unsupported:
        return yaml.dump(doc, Dumper=SAFE_DUMPER, sort_keys=False, default_flow_style=False)
