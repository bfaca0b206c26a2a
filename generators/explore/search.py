"""The search: every variant of a small space, or Optuna's NSGA-II multi-objective sampler (seeded) over a
large one; then the constraints and the Pareto front.

Reproducible by construction: exhaustive points are numbered in the space's order; Optuna proposes
`search.batch` variants at a time and is told their results in the order it proposed them, whichever
worker finished first, so the same space and seed give the same points on one core, a pool or a cluster.
A variant Optuna proposes again is not evaluated again (its first result is told once more).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from generators.explore.evaluate import Outcome, Task, evaluate
from generators.explore.metrics import Better, Metric
from generators.explore.parallel import Runner
from generators.explore.space import Constraint, Space
from generators.explore.variant import point_document, point_name
from generators.model.errors import DesignError, Problem
from generators.model.sections import Bom
from generators.model.yamlload import SourceMap


@dataclass(frozen=True, slots=True)
class Point:
    id: str  # "p0007"
    choice: tuple[int, ...]  # the candidate of each axis
    labels: dict[str, str]  # axis -> candidate label
    overrides: tuple[tuple[str, Any], ...]
    doc: dict[str, Any]  # what its design file holds below `extends:`
    metrics: dict[str, float] | None  # None: refused by the compiler
    refusal: list[Problem]  # the compiler's problems, or the constraints it misses
    bom: Bom | None
    cpu_s: float

    @property
    def feasible(self) -> bool:
        return self.metrics is not None and not self.refusal


@dataclass(frozen=True, slots=True)
class Result:
    method: str  # exhaustive, optuna
    points: list[Point]  # in id order
    front: list[Point]  # the Pareto front of the feasible points, by the first objective
    base_bom: Bom
    base_metrics: dict[str, float]


# told after each evaluation: (evaluated, feasible, front size, planned)
OnProgress = Callable[[int, int, int, int], None]


@dataclass(frozen=True, slots=True)
class Base:
    data: dict[str, Any]  # `extends:` merged
    src: SourceMap
    name: str


def search(space: Space, base: Base, run: Runner, on_progress: OnProgress | None = None) -> Result:
    base_out = evaluate(Task("base", base.data, base.src, {}, ()))
    if base_out.metrics is None or base_out.bom is None:
        raise DesignError(base_out.refusal)  # the base itself does not compile: say why, as compile would
    exhaustive = space.search.method == "exhaustive" or (
        space.search.method == "auto" and space.size <= space.search.exhaustive_up_to
    )
    search_fn = _exhaustive if exhaustive else _optuna
    points = search_fn(space, base, run, _Progress(space, on_progress))
    points.sort(key=lambda p: p.id)
    return Result(
        "exhaustive" if exhaustive else "optuna",
        points,
        front(points, space.objectives),
        base_out.bom,
        base_out.metrics,
    )


class _Progress:
    def __init__(self, space: Space, tell: OnProgress | None) -> None:
        self.space, self.tell, self.points = space, tell, list[Point]()

    def add(self, p: Point, planned: int) -> None:
        self.points.append(p)
        if self.tell is not None:
            feasible = sum(q.feasible for q in self.points)
            self.tell(len(self.points), feasible, len(front(self.points, self.space.objectives)), planned)


def _width(n: int) -> int:
    return max(4, len(str(n)))


def variant_task(space: Space, base: Base, choice: tuple[int, ...], pid: str) -> tuple[Task, dict[str, Any]]:
    overrides = space.overrides(choice)
    labels = space.labels(choice)
    desc = f"railyard explore of {base.name}: " + ", ".join(f"{k}={v}" for k, v in labels.items())
    first_at = space.axes[0].candidates[choice[0]].where if space.axes else ""
    doc = point_document(base.data, overrides, point_name(base.name, pid), desc, first_at)
    wrote = tuple(
        (path, axis.candidates[i].where)
        for axis, i in zip(space.axes, choice, strict=True)
        for path, _ in axis.candidates[i].overrides
    )
    return Task(pid, base.data, base.src, doc, wrote), doc


def _point(space: Space, choice: tuple[int, ...], doc: dict[str, Any], out: Outcome) -> Point:
    refusal = list(out.refusal)
    if out.metrics is not None:
        for c in space.constraints:
            value = out.metrics[c.metric.key]
            if c.miss(value) > 0:
                over = c.max is not None and value > c.max
                bound = f"the max {c.max:,g}" if over else f"the min {c.min:,g}"
                refusal.append(
                    Problem(
                        f"constraints.{c.metric.key}",
                        f"{c.metric.key} is {value:,.6g}, {'over' if over else 'under'} {bound}",
                        "relax the constraint, or look at the front for the variants that meet it",
                        c.where,
                    )
                )
    return Point(
        out.point,
        choice,
        space.labels(choice),
        space.overrides(choice),
        doc,
        out.metrics,
        refusal,
        out.bom,
        out.cpu_s,
    )


def _evaluate(
    space: Space,
    base: Base,
    run: Runner,
    choices: Sequence[tuple[int, ...]],
    ids: Sequence[str],
    progress: _Progress,
    planned: int,
) -> list[Point]:
    tasks, docs = [], {}
    for choice, pid in zip(choices, ids, strict=True):
        task, doc = variant_task(space, base, choice, pid)
        tasks.append(task)
        docs[pid] = (choice, doc)
    done = []
    for out in run.run(tasks):
        choice, doc = docs[out.point]
        p = _point(space, choice, doc, out)
        progress.add(p, planned)
        done.append(p)
    return done


def _exhaustive(space: Space, base: Base, run: Runner, progress: _Progress) -> list[Point]:
    choices = list(itertools.product(*(range(len(a.candidates)) for a in space.axes)))
    w = _width(len(choices))
    ids = [f"p{i + 1:0{w}d}" for i in range(len(choices))]
    return _evaluate(space, base, run, choices, ids, progress, len(choices))


def _optuna(space: Space, base: Base, run: Runner, progress: _Progress) -> list[Point]:
    try:
        import optuna
    except ImportError:
        raise DesignError.one(
            "search.method",
            f"{space.size:,} variants need Optuna's sampler, and the Python package optuna is not installed",
            "pip install 'railyard[search]', or narrow the space to search it exhaustively",
        ) from None
    from optuna.distributions import BaseDistribution, CategoricalDistribution
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    s = space.search
    labels = {a.name: [c.label for c in a.candidates] for a in space.axes}
    dists: dict[str, BaseDistribution] = {name: CategoricalDistribution(ls) for name, ls in labels.items()}
    # each trial carries its constraints (Trial.set_constraint: > 0 misses), which NSGA-II ranks by
    sampler = optuna.samplers.NSGAIISampler(seed=s.seed)
    directions: list[Literal["minimize", "maximize"]] = [
        "maximize" if m.better is Better.HIGHER else "minimize" for m in space.objectives
    ]
    study = optuna.create_study(directions=directions, sampler=sampler)
    wanted = min(s.trials, space.size)
    w = _width(wanted)
    seen: dict[tuple[int, ...], Point] = {}
    asked = 0
    while len(seen) < wanted and asked < 50 * wanted:
        batch = [study.ask(dists) for _ in range(s.batch)]
        asked += len(batch)
        choices = [tuple(labels[a.name].index(t.params[a.name]) for a in space.axes) for t in batch]
        new = list(dict.fromkeys(c for c in choices if c not in seen))[: wanted - len(seen)]
        ids = [f"p{len(seen) + i + 1:0{w}d}" for i in range(len(new))]
        for p in _evaluate(space, base, run, new, ids, progress, wanted):
            seen[p.choice] = p
        for t, c in zip(batch, choices, strict=True):  # in the order Optuna proposed them
            got = seen.get(c)
            if got is None or got.metrics is None:
                study.tell(t, state=TrialState.FAIL)  # refused, or past the budget
                continue
            for cons in space.constraints:
                t.set_constraint(cons.metric.key, cons.miss(got.metrics[cons.metric.key]))
            study.tell(t, [got.metrics[m.key] for m in space.objectives])
    return list(seen.values())


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(x < y for x, y in zip(a, b, strict=True))


def front(points: Sequence[Point], objectives: Sequence[Metric]) -> list[Point]:
    """The feasible points no other feasible point dominates (every objective as good, one better), by the
    first objective then id. Equal points are all on it."""

    def key(p: Point) -> list[float]:
        assert p.metrics is not None
        return [p.metrics[m.key] * (-1 if m.better is Better.HIGHER else 1) for m in objectives]

    ok = [(p, key(p)) for p in points if p.feasible]
    out = [p for p, k in ok if not any(dominates(k2, k) for _, k2 in ok)]
    return sorted(out, key=lambda p: (key(p), p.id))


def nothing_feasible(space: Space, result: Result) -> DesignError | None:
    """The error for a search that found no feasible point (None when it found one): the tightest
    constraint (met by the fewest variants) and the variants closest to meeting them all; or, when no
    variant compiles, the compiler's refusals."""
    if any(p.feasible for p in result.points):
        return None
    label = str(space.path)
    compiled = [p for p in result.points if p.metrics is not None]
    if not compiled:
        first = [p for p in result.points if p.refusal][:3]
        head = Problem(
            "(space)",
            f"the compiler refuses all {len(result.points)} variants searched; the first ones' reasons follow",
            "change the base design or the space so that some variant compiles",
            f"{label}:1",
        )
        return DesignError(
            [head, *(replace(p.refusal[0], message=f"{p.refusal[0].message} ({_named(p)})") for p in first)]
        )

    def met(c: Constraint) -> int:
        return sum(c.miss(_value(p, c)) == 0 for p in compiled)

    tight = min(space.constraints, key=lambda c: (met(c), -min(c.miss(_value(p, c)) for p in compiled)))
    closest = sorted(compiled, key=lambda p: (sum(c.miss(_value(p, c)) for c in space.constraints), p.id))[:3]
    near = "; ".join(f"{_named(p)}: {tight.metric.key} {_value(p, tight):,.6g}" for p in closest)
    best = min((_value(p, tight) for p in compiled), key=lambda v: tight.miss(v))
    return DesignError.one(
        f"constraints.{tight.metric.key}",
        f"no variant meets {tight.text()} (met by {met(tight)} of the {len(compiled)} variants that compile, "
        f"{len(result.points)} searched); the closest: {near}",
        f"relax it (the best variant reaches {best:,.6g}) or widen the space",
        tight.where,
    )


def _value(p: Point, c: Constraint) -> float:
    assert p.metrics is not None
    return p.metrics[c.metric.key]


def _named(p: Point) -> str:
    return f"{p.id} (" + ", ".join(f"{k}={v}" for k, v in p.labels.items()) + ")"
