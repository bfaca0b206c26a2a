"""Errors a user can act on: each names the design field, the YAML line, what is wrong and how to fix it."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field


def printable(text: str, keep: str = "\n") -> str:
    """Text safe to echo to a terminal: control and format characters (escape sequences, bidi
    overrides) are shown as \\xNN / \\uNNNN instead of being obeyed; `keep` lists the ones left as is."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in keep or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(ch)
        else:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Problem:
    field: str  # dotted path into the design, e.g. "backend.oversubscription"
    message: str  # what is wrong
    hint: str = ""  # how to fix it
    where: str = ""  # "file.yaml:12" when known

    def render(self) -> str:
        head = f"{self.where}: " if self.where else ""
        text = f"{head}{self.field}: {self.message}"
        if self.hint:
            text += f"\n    fix: {self.hint}"
        return printable(text)


@dataclass(slots=True)
class DesignError(Exception):
    """Raised for bad input; the CLI prints it and exits 2 without writing anything."""

    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.render() for p in self.problems)

    @classmethod
    def one(cls, field_: str, message: str, hint: str = "", where: str = "") -> DesignError:
        return cls([Problem(field_, message, hint, where)])
