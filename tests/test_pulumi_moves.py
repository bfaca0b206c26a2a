"""The Pulumi stack's guard against moving what is built (issue 43, components/moves.py), its provider
called directly on the placements of compiled designs, as the Site registers them (site_layout): the
check the engine runs with the state's inputs (the last deployment) beside the new ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components.moves import CONFIG_KEY, PlacementProvider, digest
from components.site import site_layout
from generators.model.plan import Plan
from generators.reports.diff import moves_between, placement

P = PlacementProvider()
MOVER = ("site.compute_rows_before_network=0",)  # h100-256's network row first: its compute racks move


def inputs(plan: Plan, allow: bool = False) -> dict[str, Any]:
    """What the Site gives its Placement resource for a compiled plan."""
    layout = site_layout(plan, {})
    return {"design": layout.name, "devices": layout.placement, "allowMoves": allow}


def reasons(olds: dict[str, Any], news: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.property, f.reason) for f in P.check(olds, news).failures]


def test_a_change_that_moves_a_deployed_device_is_refused_naming_the_moves(compiled: Callable[..., Plan]) -> None:
    base, head = compiled("h100-256"), compiled("h100-256", *MOVER)
    moves = moves_between(placement(base), placement(head))
    assert len(moves) > 10
    (failure,) = reasons(inputs(base), inputs(head))
    prop, why = failure
    assert prop == "", "no property named: the engine would print the whole map with it"
    first = moves[0]
    assert why.startswith(f"{len(moves)} devices of h100-256 that the stack's last deployment placed would move: ")
    assert f"{first.device} {first.base_rack} U{first.base_unit} -> {first.head_rack} U{first.head_unit}" in why
    assert f"and {len(moves) - 10} more" in why and f"pulumi config set {CONFIG_KEY} true" in why
    # what the new inputs would deploy is exactly what the refusal lists as moving
    assert why.count(" -> ") == 10
    # allowMoves lets it through; and it is no change of its own (diff sees the outputs, not the flag)
    assert reasons(inputs(base), inputs(head, allow=True)) == []
    outs = P.create(inputs(base)).outs
    assert outs == {"design": "h100-256", "count": len(base.devices), "digest": digest(inputs(base)["devices"])}
    assert not P.diff("id", outs, inputs(base, allow=True)).changes
    assert P.diff("id", outs, inputs(head)).changes


def test_first_deploys_growth_and_another_design_are_not_refused(compiled: Callable[..., Plan]) -> None:
    base = compiled("h100-256")
    # a first deployment, or a stack made before the resource existed: no inputs in the state
    assert reasons({}, inputs(compiled("h100-256", *MOVER))) == []
    # a growth by a unit moves nothing that stands
    grown = compiled("h100-256", "compute.count=64")
    assert moves_between(placement(base), placement(grown)) == []
    assert len(grown.devices) > len(base.devices)
    assert reasons(inputs(base), inputs(grown)) == []
    # a stack pointed at another design: a different site, nothing of it stands yet
    other = compiled("h100-1024-reference")
    assert moves_between(placement(base), placement(other)), "devices of the same names stand elsewhere"
    assert reasons(inputs(base), inputs(other)) == []


def test_malformed_inputs_are_named() -> None:
    bad = {"design": "", "devices": {"gpu001": "r01-01 U"}, "allowMoves": "yes"}
    assert {p for p, _ in reasons({}, bad)} == {"design", "devices", "allowMoves"}
