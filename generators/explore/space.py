"""The space file: what `railyard explore` may change in the base design, what a variant must meet and
what it is ranked by.

    choices:                       # bundles of settings that go together, one bundle per variant
      layout:
        reference: {}
        vms: {backend.placement: virtual_modular_switch, site.spine_rack_position: middle}
    fields:                        # a design field (any path --set accepts) and its candidate values
      backend.oversubscription: ["1:1", "2:1"]
    constraints: {per_gpu_usd: {max: 40000}}
    objectives: [capex, power]     # each lower or higher is better, as the metric says
    search: {method: auto, trials: 200, seed: 0}

Read with pydantic at the boundary (unknown keys refused by line), then into typed axes: each choice group
and each field is an axis, a variant takes one candidate of every axis. Every path is checked against the
base design before anything is compiled: a path the design schema does not have, or a value its field
refuses (a catalog key that does not exist, a ratio that is no ratio), fails the whole run, naming the
space file's line. A value that only some combinations refuse is not an error of the space: those
variants are refused points, each with the design's own refusal.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from generators.explore.metrics import BY_NAME, NAMES, Metric
from generators.explore.variant import document
from generators.model.design import Design
from generators.model.design.loader import fix_for, validate_design
from generators.model.errors import DesignError, Problem, did_you_mean
from generators.model.yamlload import SourceMap, deep_merge, load_yaml_file, split_path, where

MAX_VARIANTS = 10**12  # a space larger than this is a typo (and Optuna samples it anyway)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Bound(_Model):
    """A constraint on one metric: at least `min`, at most `max` (one of them, or both)."""

    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _some(self) -> Bound:
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both, e.g. {max: 40000}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min:g} is above max {self.max:g}")
        return self


class Search(_Model):
    """How the space is searched: every variant when there are at most `exhaustive_up_to` of them (or
    `method: exhaustive`), else `trials` variants chosen by Optuna's NSGA-II sampler seeded with `seed`."""

    method: Literal["auto", "exhaustive", "optuna"] = "auto"
    exhaustive_up_to: int = Field(default=512, ge=1, le=1_000_000)
    trials: int = Field(default=200, ge=1, le=100_000)
    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    # variants Optuna proposes at a time, evaluated in parallel: fixed by the space, never by the number of
    # workers, so a run on 2 processes and one on a 40-worker cluster propose the same variants
    batch: int = Field(default=16, ge=1, le=4096)


class SpaceFile(_Model):
    choices: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    fields: dict[str, list[Any]] = Field(default_factory=dict)
    constraints: dict[str, Bound] = Field(default_factory=dict)
    objectives: list[str] = Field(default_factory=lambda: ["capex"], min_length=1, max_length=8)
    search: Search = Field(default_factory=Search)


@dataclass(frozen=True, slots=True)
class Candidate:
    label: str  # the bundle's name, or the field's value as written ("2:1")
    overrides: tuple[tuple[str, Any], ...]  # (field path, value)
    where: str  # "space.yaml:12"


@dataclass(frozen=True, slots=True)
class Axis:
    name: str  # the choice group ("layout") or the field path ("backend.oversubscription")
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True, slots=True)
class Constraint:
    metric: Metric
    min: float | None
    max: float | None
    where: str

    def miss(self, value: float) -> float:
        """How far `value` is outside the bound, relative to it (0: met)."""
        if self.max is not None and value > self.max:
            return (value - self.max) / max(abs(self.max), 1e-9)
        if self.min is not None and value < self.min:
            return (self.min - value) / max(abs(self.min), 1e-9)
        return 0.0

    def text(self) -> str:
        parts = [
            f"at least {self.min:,g}" if self.min is not None else "",
            f"at most {self.max:,g}" * (self.max is not None),
        ]
        return f"{self.metric.key} " + " and ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class Space:
    axes: tuple[Axis, ...]
    constraints: tuple[Constraint, ...]
    objectives: tuple[Metric, ...]
    search: Search
    path: Path

    @property
    def size(self) -> int:
        return math.prod(len(a.candidates) for a in self.axes)

    def overrides(self, choice: tuple[int, ...]) -> tuple[tuple[str, Any], ...]:
        """A variant's overrides, axis by axis in the space file's order."""
        return tuple(o for axis, i in zip(self.axes, choice, strict=True) for o in axis.candidates[i].overrides)

    def labels(self, choice: tuple[int, ...]) -> dict[str, str]:
        return {axis.name: axis.candidates[i].label for axis, i in zip(self.axes, choice, strict=True)}


def value_label(value: Any) -> str:
    """A candidate value as a person reads it: 2:1, QM9700, 44, true, [1, 2]."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def load_space(path: Path, base: dict[str, Any], base_src: SourceMap) -> Space:
    """Read, validate and check the space file against the base design (already read, `extends:` merged).
    Raises DesignError naming the space file's fields and lines."""
    data, src = load_yaml_file(path, "--space")
    label = src.get((), str(path)).rsplit(":", 1)[0]
    if data is None or data == {}:
        raise DesignError.one(
            "(space)",
            f"{label} holds no space (the file is empty)",
            "add choices: or fields: (see docs/howto/explore.md)",
            f"{label}:1",
        )
    if not isinstance(data, dict):
        raise DesignError.one(
            "(space)", "a space must be a YAML mapping", "start with `choices:` or `fields:`", f"{label}:1"
        )
    try:
        raw = SpaceFile.model_validate(data)
    except ValidationError as exc:
        bad = []
        for err in exc.errors():
            loc = tuple(str(p) for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg, fix = (
                    "unknown field",
                    did_you_mean(SpaceFile, err["loc"])
                    + "a space has choices, fields, constraints, objectives, search",
                )
            else:
                fix = fix_for(err)
            bad.append(Problem(".".join(loc) or "(space)", msg, fix, where(src, loc) or f"{label}:1"))
        raise DesignError(bad) from None
    problems: list[Problem] = []
    axes: list[Axis] = []
    for group, bundles in raw.choices.items():
        at = where(src, ("choices", group))
        if not bundles:
            problems.append(
                Problem(
                    f"choices.{group}",
                    "names no bundle",
                    "give at least one: `name: {path: value}` ({} keeps the base)",
                    at,
                )
            )
            continue
        cands = []
        for name, settings in bundles.items():
            cands.append(
                Candidate(
                    name,
                    tuple((".".join(split_path(p)), v) for p, v in settings.items()),
                    where(src, ("choices", group, name)),
                )
            )
        axes.append(Axis(group, tuple(cands)))
    for fpath, values in raw.fields.items():
        at = where(src, ("fields", fpath))
        if not values:
            problems.append(
                Problem(
                    f"fields.{fpath}", "lists no candidate value", f"list the values to try, e.g. {fpath}: [a, b]", at
                )
            )
            continue
        norm = ".".join(split_path(fpath))
        seen: set[str] = set()
        cands = []
        for i, v in enumerate(values):
            text = value_label(v)
            if text in seen:
                problems.append(
                    Problem(
                        f"fields.{fpath}",
                        f"lists {text} twice",
                        "list each value once",
                        where(src, ("fields", fpath, str(i))),
                    )
                )
            seen.add(text)
            cands.append(Candidate(text, ((norm, v),), where(src, ("fields", fpath, str(i)))))
        axes.append(Axis(norm, tuple(cands)))
    if not axes and not problems:
        problems.append(
            Problem(
                "(space)",
                "the space is empty: no choices and no fields",
                "add `fields: {backend.oversubscription: ['1:1', '2:1']}` or a `choices:` group",
                f"{label}:1",
            )
        )
    problems += _clashes(axes)
    problems += _check_paths(axes, base, base_src)
    objectives, constraints = _metrics(raw, src, label, problems)
    if problems:
        raise DesignError(problems)
    space = Space(tuple(axes), tuple(constraints), tuple(objectives), raw.search, Path(path))
    if space.size > MAX_VARIANTS:
        raise DesignError.one(
            "(space)", f"{space.size:,} variants", "split the search: fix some fields in the base design", f"{label}:1"
        )
    return space


def _metrics(
    raw: SpaceFile, src: SourceMap, label: str, problems: list[Problem]
) -> tuple[list[Metric], list[Constraint]]:
    known = ", ".join(NAMES)
    objectives: list[Metric] = []
    for i, name in enumerate(raw.objectives):
        at = where(src, ("objectives", str(i)))
        if name not in BY_NAME:
            problems.append(
                Problem(f"objectives.{i}", f"unknown metric {name!r}", _close(name) + f"use one of: {known}", at)
            )
        elif BY_NAME[name] in objectives:
            problems.append(Problem(f"objectives.{i}", f"{name} is already an objective", "list each metric once", at))
        else:
            objectives.append(BY_NAME[name])
    constraints: list[Constraint] = []
    for name, bound in raw.constraints.items():
        at = where(src, ("constraints", name))
        if name not in BY_NAME:
            problems.append(Problem(f"constraints.{name}", "unknown metric", _close(name) + f"use one of: {known}", at))
            continue
        constraints.append(Constraint(BY_NAME[name], bound.min, bound.max, at))
    return objectives, constraints


def _close(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, NAMES, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def _clashes(axes: list[Axis]) -> list[Problem]:
    """Two axes setting one field (or one inside the other) would make a variant's value depend on the
    order the axes are applied in: refuse it."""
    owner: dict[tuple[str, ...], tuple[str, str]] = {}
    out = []
    for axis in axes:
        mine: dict[tuple[str, ...], str] = {}
        for cand in axis.candidates:
            for p, _ in cand.overrides:
                mine.setdefault(split_path(p), cand.where)
        for parts, at in mine.items():
            for other, (name, _) in owner.items():
                if name != axis.name and (other[: len(parts)] == parts or parts[: len(other)] == other):
                    out.append(
                        Problem(
                            ".".join(parts),
                            f"set by both {name} and {axis.name}",
                            "set each field in one choice group or one field list",
                            at,
                        )
                    )
        for parts, at in mine.items():
            owner.setdefault(parts, (axis.name, at))
    return out


def _check_paths(axes: list[Axis], base: dict[str, Any], base_src: SourceMap) -> list[Problem]:
    """Each candidate on its own over the base design: a path the schema does not know, or a value its
    field refuses (shape, or a catalog key that is not there), is an error of the space, at its line."""
    out: list[Problem] = []
    for axis in axes:
        for cand in axis.candidates:
            out += _check_candidate(cand, base, base_src)
    return out


def _check_candidate(cand: Candidate, base: dict[str, Any], base_src: SourceMap) -> list[Problem]:
    try:
        data = deep_merge(base, document(base, cand.overrides, cand.where))
    except DesignError as exc:
        return [Problem(p.field, p.message, p.hint, cand.where) for p in exc.problems]
    paths = [split_path(p) for p, _ in cand.overrides]

    def mine(loc: tuple[str, ...]) -> bool:
        return any(loc[: len(p)] == p for p in paths)

    try:
        Design.model_validate(data)
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            loc = tuple(str(p) for p in err["loc"])
            if not loc or not mine(loc):
                continue  # a rule across fields: some combinations may meet it
            if err["type"] == "extra_forbidden":
                msg, fix = "unknown field", did_you_mean(Design, err["loc"]) + "`railyard schema` lists every field"
            else:
                msg, fix = err["msg"].removeprefix("Value error, "), fix_for(err)
            out.append(Problem(".".join(loc), msg, fix, cand.where))
        return out
    try:
        validate_design(data, dict(base_src))
    except DesignError as exc:
        return [
            Problem(p.field, p.message, p.hint, cand.where)
            for p in exc.problems
            if mine(tuple(p.field.split("."))) and re.match(r"unknown ", p.message)
        ]
    return []
