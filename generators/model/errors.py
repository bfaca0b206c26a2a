"""Errors a user can act on: each names the design field, the YAML line, what is wrong and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass, field


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
        return text


@dataclass(slots=True)
class DesignError(Exception):
    """Raised for bad input; the CLI prints it and exits 2 without writing anything."""

    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.render() for p in self.problems)

    @classmethod
    def one(cls, field_: str, message: str, hint: str = "", where: str = "") -> DesignError:
        return cls([Problem(field_, message, hint, where)])
