"""Indented JSON text, byte for byte what `json.dumps(doc, indent=N, sort_keys=..., ensure_ascii=...)`
writes, but fast.

With `indent`, CPython's json (3.11) falls back to its pure-Python encoder: at 98,304 GPUs the SONiC
config_db.json files and plan.json's indented sections are ~1 GB of JSON and took over 100 s. orjson
writes the same document ~50x faster, but only with a 2-space indent, and its numbers, escapes and
NaN differ from json.dumps in places (1e16 vs 1e+16, raw DEL and UTF-8 vs \\u escapes, null for NaN).
So the fast path proves its tokens equal json.dumps's before using them:
- an ASCII text without DEL, floats or nulls (ints, bools and strings only, as in every config_db.json)
  has json.dumps's tokens: the same key order (ASCII), integers, and escapes of control characters,
  quotes and backslashes;
- anything else must equal json's C encoder's compact text of the same document (same key order,
  escapes and numbers; the C encoder is fast, it only lacks indentation, and costs about twice what
  orjson does, which is why the check above comes first);
- indented output is then the same tokens in the same layout (one item a line, `{}`/`[]` when empty,
  ": " after a key);
- orjson's indent is 2: a 2-space step becomes N spaces by replacing every run of two spaces, exact
  when no string (key or value) holds two spaces in a row (checked on the compact text, where every
  "  " is inside a string);
- anything orjson refuses (a non-string key, an int beyond 64 bits, and with the passthrough options a
  dataclass or datetime) raises: json.dumps then writes or refuses it as before.
Otherwise json.dumps writes it. tests/test_jsontext.py checks both paths against json.dumps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.encoder import JSONEncoder
from typing import Any

import orjson

_PASS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
# a float (or NaN, which orjson writes as null) or a null as a value: after a colon, a comma or a bracket;
# a string that merely looks like one only costs the check below
_FLOAT_OR_NULL = re.compile(rb"[:,\[](?:-?[0-9]+[.eE]|null)")


def dumps_indented(
    doc: Any, indent: int, sort_keys: bool = False, ensure_ascii: bool = True, allow_nan: bool = True
) -> str:
    """json.dumps(doc, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=allow_nan),
    same bytes (and the same ValueError for a non-finite float when allow_nan is False)."""
    fast = _fast(doc, indent, sort_keys, ensure_ascii, allow_nan)
    if fast is not None:
        return fast
    return json.dumps(doc, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=allow_nan)


def _fast(doc: Any, indent: int, sort_keys: bool, ensure_ascii: bool, allow_nan: bool = True) -> str | None:
    if indent < 1 or not isinstance(doc, (dict, list)):
        return None
    opt = _PASS | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        compact = orjson.dumps(doc, option=opt)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    if b"  " in compact:
        return None
    if not compact.isascii() or b"\x7f" in compact or _FLOAT_OR_NULL.search(compact):
        try:
            same = json.dumps(
                doc, separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=allow_nan
            )
        except (TypeError, ValueError):
            return None
        if compact != same.encode("utf-8", "surrogatepass"):
            return None
    text = orjson.dumps(doc, option=opt | orjson.OPT_INDENT_2)
    if indent != 2:
        text = text.replace(b"  ", b" " * indent)
    return text.decode("utf-8")


def record_encoder(ensure_ascii: bool, separators: tuple[str, str], allow_nan: bool) -> Callable[[Any], str]:
    """A function writing what json.dumps(doc, ensure_ascii=..., separators=..., allow_nan=...) writes, with
    one encoder for every call: json.dumps builds a JSONEncoder and a C encoder per call, which was
    most of the time of plan.json's 700k one-line records at 98,304 GPUs."""
    enc = JSONEncoder(ensure_ascii=ensure_ascii, separators=separators, allow_nan=allow_nan)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: json's own path
        return enc.encode
    c = make(
        {},
        enc.default,
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring,
        None,
        separators[1],
        separators[0],
        False,
        False,
        allow_nan,
    )

    def encode(doc: Any) -> str:
        if isinstance(doc, str):
            return enc.encode(doc)
        return "".join(c(doc, 0))

    return encode
