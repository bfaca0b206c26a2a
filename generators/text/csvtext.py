"""The one way railyard's renderers write CSV: csv.writer's exact bytes (excel dialect, "\n" line ends),
faster for the plain rows that make up nearly every sheet (cable and rack sheets, labels, row bills,
the NetBox import files, the bill of materials). Every text cell is neutralised first (`cell`): the
sheets carry text users wrote (catalog descriptions, technicians' notes), and a spreadsheet must show it
as text, never run it as a formula."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

from generators.text.escape import printable

_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet takes as the start of a formula (OWASP)


def cell(text: str) -> str:
    """A text cell a spreadsheet shows as written: a leading =, +, -, @, tab or CR gets a ' before it (a
    spreadsheet then takes the rest as text; OWASP's CSV injection advice), and control characters (an
    escape sequence, a bell) become \\xNN. Numbers stay numbers: only text cells come here."""
    if text.startswith(_FORMULA) and not _NUMBER.fullmatch(text):
        text = "'" + text
    return printable(text, keep="\n")


_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")


def csv_text(header: Sequence[str], rows: Iterable[list[Any]] | Iterable[tuple[Any, ...]]) -> str:
    """csv.writer's text (excel dialect, "\n" line ends) of the header and rows, same bytes. railyard's
    sheets rarely hold a cell csv would quote (a comma, quote or line break), so the rows are first joined
    plainly and kept when no cell needed quoting: csv.writer took 3.6 s of a 98,304-GPU compile's rack
    sheets, the joins about a third of that."""
    table: list[Sequence[Any]] = [header, *([cell(c) if isinstance(c, str) else c for c in r] for r in rows)]
    try:
        lines = [",".join(r) for r in table]
    except TypeError:  # a cell that is not a string: csv.writer formats it
        return _writer(table)
    text = "\n".join(lines) + "\n"
    # no cell holds a quote, a carriage return or (comparing counts with the joins') a comma or newline,
    # and no row is one empty cell (csv writes it as "")
    if (
        '"' in text
        or "\r" in text
        or text.count("\n") != len(table)
        or text.count(",") != sum(len(r) - 1 for r in table if r)
        or any(len(r) == 1 and r[0] == "" for r in table)
    ):
        # a few cells need quoting (e.g. a twin cable's "port,port"): csv.writer writes those rows alone
        return "".join(line + "\n" if _plain(line, r) else _writer([r]) for line, r in zip(lines, table, strict=True))
    return text


def _plain(line: str, row: Sequence[Any]) -> bool:
    """Whether csv.writer writes this row as its plain join."""
    return (
        '"' not in line
        and "\r" not in line
        and "\n" not in line
        and line.count(",") == max(len(row) - 1, 0)
        and not (len(row) == 1 and row[0] == "")
    )


def _writer(rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()
