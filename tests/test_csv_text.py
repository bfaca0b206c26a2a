"""The cable sheets' CSV helper writes csv.writer's exact bytes, on its plain-join path and otherwise."""

from __future__ import annotations

import csv
import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generators.text.csvtext import cell, csv_text

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
    """csv.writer's bytes of the rows with every text cell neutralised (`cell`)."""
    safe = [[cell(c) if isinstance(c, str) else c for c in r] for r in rows]
    assert csv_text(header, [tuple(r) for r in rows]) == _writer(header, safe)
    assert csv_text(header, iter(rows)) == _writer(header, safe)


def test_text_a_user_wrote_is_never_a_formula_or_an_escape() -> None:
    """OWASP's CSV injection: a cell starting =, +, -, @, tab or CR is prefixed with ' (a spreadsheet then
    shows it as text); control characters show as escapes; numbers and railyard's own text are as they were."""
    assert cell('=HYPERLINK("http://x","click")') == '\'=HYPERLINK("http://x","click")'
    assert [cell(t) for t in ("+1+1", "-cmd", "@SUM(A1)", "\tx")] == ["'+1+1", "'-cmd", "'@SUM(A1)", "'\\x09x"]
    assert cell("port \x1b[31mred\x07") == "port \\x1b[31mred\\x07"
    assert [cell(t) for t in ("-5", "+3.25", "1e-3", "su1-rail0-leaf", "0.5 m", "")] == [
        "-5",
        "+3.25",
        "1e-3",
        "su1-rail0-leaf",
        "0.5 m",
        "",
    ]
    assert cell(cell("=x")) == cell("=x")  # once is enough: a second pass changes nothing


def test_a_single_empty_cell_row_and_a_quoted_cell() -> None:
    assert csv_text(["a"], [[""], ["x,y"], ['say "hi"']]) == 'a\n""\n"x,y"\n"say ""hi"""\n'
