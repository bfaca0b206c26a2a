"""The cable sheets' CSV helper writes csv.writer's exact bytes, on its plain-join path and otherwise."""

from __future__ import annotations

import csv
import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generators.text.csvtext import csv_text

_CELL = st.one_of(st.text(alphabet='a ,"\r\n\t;', max_size=4), st.integers(), st.none(), st.floats(allow_nan=False))


def _writer(header: list[str], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


@settings(max_examples=400, deadline=None)
@given(
    header=st.lists(st.text(alphabet="ab_", max_size=3), max_size=3),
    rows=st.lists(st.lists(_CELL, max_size=4), max_size=5),
)
def test_same_bytes_as_csv_writer(header: list[str], rows: list[list[Any]]) -> None:
    assert csv_text(header, [tuple(r) for r in rows]) == _writer(header, rows)
    assert csv_text(header, iter(rows)) == _writer(header, rows)


def test_a_single_empty_cell_row_and_a_quoted_cell() -> None:
    assert csv_text(["a"], [[""], ["x,y"], ['say "hi"']]) == 'a\n""\n"x,y"\n"say ""hi"""\n'
