"""generators.text.jsontext writes json.dumps's exact bytes, on its orjson path and on its fallback."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.text import jsontext

# keys and strings with the characters that matter: spaces (the indent rewrite), quotes, backslashes,
# control characters, DEL and non-ASCII (escapes), digits and colons (the number scan)
_TEXT = st.one_of(st.text(alphabet=' a"\\/:,[0.e-\n\t\b\f\r\x01\x1f\x7f\u00e9\u2028', max_size=8), st.just(":null"))
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
)
_DOC = st.recursive(
    _SCALAR, lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(_TEXT, kids, max_size=4)), max_leaves=20
)


@settings(max_examples=400, deadline=None)
@given(
    doc=st.one_of(st.dictionaries(_TEXT, _DOC, max_size=5), st.lists(_DOC, max_size=5)),
    indent=st.sampled_from([1, 2, 4]),
    sort_keys=st.booleans(),
    ensure_ascii=st.booleans(),
)
def test_same_bytes_as_json_dumps(doc: Any, indent: int, sort_keys: bool, ensure_ascii: bool) -> None:
    assert jsontext.dumps_indented(doc, indent, sort_keys, ensure_ascii) == json.dumps(
        doc, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii
    )


@pytest.mark.parametrize(
    "doc",
    [
        {"PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000"}, "Ethernet8": {}}, "LIST": ["a", [], {}]},
        [{"b": 1, "a": [True, False, -3, None, 2.5, 0.1]}, "x"],
    ],
)
def test_plain_documents_take_the_orjson_path(doc: Any) -> None:
    """The documents railyard writes (string, number, bool and null leaves) must not silently fall back: the
    fast path is what makes a 98,304-GPU compile fit its time budget."""
    for indent in (1, 2, 4):
        fast = jsontext._fast(doc, indent, True, True)
        assert fast is not None and fast == json.dumps(doc, indent=indent, sort_keys=True)


@pytest.mark.parametrize(
    "doc",
    [
        {"a": float("nan")},
        {"a b  c": "x"},
        {"a": "caf\u00e9"},
        {"a": "\x7f"},
        {1: "x"},
        {"a": 2**65},
        [float("inf")],
    ],
)
def test_documents_orjson_would_write_differently_fall_back(doc: Any) -> None:
    assert jsontext._fast(doc, 4, True, True) is None
    assert jsontext.dumps_indented(doc, 4, True) == json.dumps(doc, indent=4, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(docs=st.lists(_DOC, max_size=4), ensure_ascii=st.booleans(), allow_nan=st.booleans())
def test_record_encoder_same_bytes_as_json_dumps(docs: list[Any], ensure_ascii: bool, allow_nan: bool) -> None:
    """One encoder reused across records (plan.json's lines) writes or refuses each as json.dumps does."""
    enc = jsontext.record_encoder(ensure_ascii=ensure_ascii, separators=(", ", ": "), allow_nan=allow_nan)
    for doc in docs:
        try:
            want = json.dumps(doc, ensure_ascii=ensure_ascii, separators=(", ", ": "), allow_nan=allow_nan)
        except ValueError:
            with pytest.raises(ValueError):
                enc(doc)
            continue
        assert enc(doc) == want
