"""Errors a user can act on: each names the design field, the YAML line, what is wrong and how to fix it."""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generators.text.escape import printable

if TYPE_CHECKING:  # every command imports this module; pydantic loads with the design model, not here
    from pydantic import BaseModel


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

    def __reduce__(self) -> tuple[type[DesignError], tuple[list[Problem]]]:
        # Its own reduce, so the problems cross processes (the render child, explore's workers) whole:
        # tblib's exception pickling, which importing dask.distributed installs for every exception class,
        # rebuilds one whose __init__ is custom from __new__ and __dict__, and a slot is in neither.
        return type(self), (self.problems,)

    @classmethod
    def one(cls, field_: str, message: str, hint: str = "", where: str = "") -> DesignError:
        return cls([Problem(field_, message, hint, where)])


def fields_at(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the model at a validation location under `root` (for "did you mean")."""
    from pydantic import BaseModel

    tp: Any = root
    for part in (*loc, None):
        while True:  # unwrap Annotated, Optional/unions (the first model among them), lists and mappings
            origin = typing.get_origin(tp)
            if origin is typing.Annotated:
                tp = typing.get_args(tp)[0]
            elif origin in (typing.Union, types.UnionType):
                models = [a for a in typing.get_args(tp) if isinstance(a, type) and issubclass(a, BaseModel)]
                tp = models[0] if models else None
            elif origin in (list, tuple) and isinstance(part, int):
                tp, part = typing.get_args(tp)[0], "-"
            elif origin is dict and part is not None:  # a catalog table: the key is a part name
                tp, part = typing.get_args(tp)[1], "-"
            else:
                break
        if part is None or part == "-":
            if part is None:
                break
            continue
        if not (isinstance(tp, type) and issubclass(tp, BaseModel)) or str(part) not in tp.model_fields:
            return []
        tp = tp.model_fields[str(part)].annotation
    return list(tp.model_fields) if isinstance(tp, type) and issubclass(tp, BaseModel) else []


def did_you_mean(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """The start of a fix for an unknown field at `loc`: the closest known name, or a spelling hint."""
    close = difflib.get_close_matches(str(loc[-1]), fields_at(root, loc[:-1]), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else "check the spelling; "
