"""Every cable legal at any slack (issue #39): each shipped design, under each placement strategy it can be
built with and a service-loop slack (site.slack.tray_m and direct_m) from 0 to 3 m, compiles to a cable
plan in which no cable breaks a media rule, no stocked length exceeds its part's reach or is not a length
the part is sold in, and no run is longer than its cable. The check here is recomputed from the compiled
plan and the catalog's rules, apart from the cabling stage's own checks.

`python -m tests.test_media_sweep` prints the sweep's counts."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from generators.compiler import compile_file
from generators.model.catalog import Catalog
from generators.model.design import load_design
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.model.ports import lane_rate, network_protocol, port_ends
from tests.conftest import COMPILED_EXAMPLES, DESIGNS

PLACEMENTS = ("dedicated_racks", "virtual_modular_switch", "top_of_rack")
SLACKS_M = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
# a refusal that says no legal part serves a run: what this sweep must never see
MEDIA_WORDS = ("no catalog part", "no optic in the catalog", "media rule", "no catalog cable")


def violations(plan: Plan) -> list[str]:
    """Every cable of the plan that breaks its media rule or its part's stocked lengths and reach."""
    cat: Catalog = plan.catalog
    maps = port_ends(plan, cat, plan.design)
    kind_model = {d.name: f"{d.kind}:{d.model}" for d in plan.devices}
    out = []
    for c in plan.cables or []:
        lk = plan.links[c.links[0]]
        ea, eb = maps[kind_model[lk.a_device]][lk.a_port], maps[kind_model[lk.b_device]][lk.b_port]
        part = cat.cables[c.catalog]
        stocked = {s.m for s in part.lengths}
        longest = max(c.length_m)
        what = f"{c.id} {lk.a_device} {lk.a_port} -> {lk.b_device} {lk.b_port} ({c.catalog} {longest} m)"
        found = cat.media_rule(lk.speed_gbps, lane_rate(ea, eb), network_protocol(plan.design, lk.network))
        flat_both = cat.flat_top(ea.connector) and cat.flat_top(eb.connector)
        if found is not None and not found[1].allows(c.media, longest, flat_both):
            out.append(f"{what}: breaks media rule {found[0]}")
        if not set(c.length_m) <= stocked:
            out.append(f"{what}: a length {c.catalog} is not sold in")
        if longest > min(part.reach_m, c.reach_m) + 1e-9:
            out.append(f"{what}: longer than its reach")
        if any(r > m + 1e-9 for r, m in zip(c.routed_m, c.length_m, strict=True)):
            out.append(f"{what}: a run longer than its cable")
    return out


@dataclass
class Sweep:
    compiled: int = 0
    cables: int = 0
    not_a_design: list[str] = field(default_factory=list)  # combinations refused for reasons not of media
    problems: list[str] = field(default_factory=list)  # media violations and media refusals


def overrides(placement: str, slack: float) -> list[str]:
    topology = ["backend.topology=top_of_rack"] if placement == "top_of_rack" else []
    return [f"backend.placement={placement}", *topology, f"site.slack.tray_m={slack}", f"site.slack.direct_m={slack}"]


def sweep(designs: list[str], placements: tuple[str, ...] = PLACEMENTS, slacks: tuple[float, ...] = SLACKS_M) -> Sweep:
    out = Sweep()
    for name in designs:
        for placement in placements:
            for slack in slacks:
                at = f"{name} {placement} slack {slack} m"
                try:
                    plan = compile_file(DESIGNS / f"{name}.yaml", overrides(placement, slack))[0]
                except DesignError as exc:
                    text = " ".join(f"{p.field} {p.message}" for p in exc.problems)
                    if any(p.field.startswith("media_rules.") for p in exc.problems) or any(
                        w in text for w in MEDIA_WORDS
                    ):
                        out.problems.append(f"{at}: refused: {text}")
                    else:
                        out.not_a_design.append(f"{at}: {exc.problems[0].field}")
                    continue
                out.compiled += 1
                out.cables += len(plan.cables or [])
                out.problems += [f"{at}: {v}" for v in violations(plan)]
    return out


def own_placement(name: str) -> str:
    """The design's placement as shipped: its loaded (frozen) design, the one a compile's plan carries,
    without compiling it again."""
    return str(load_design(DESIGNS / f"{name}.yaml")[0].backend.placement)


@pytest.mark.parametrize("name", COMPILED_EXAMPLES)
def test_every_cable_legal_at_any_slack_and_placement(name: str) -> None:
    result = sweep([name])
    assert not result.problems, "\n".join(result.problems[:10])
    # the design as shipped builds at every slack: the sweep did not pass by refusing everything
    own = own_placement(name)
    refused_own = [r for r in result.not_a_design if r.startswith(f"{name} {own} ")]
    assert not refused_own, refused_own
    assert result.compiled >= len(SLACKS_M) and result.cables > 0


def test_the_check_finds_a_cable_past_what_linkx_sells(compiled) -> None:
    """The sweep's check is not vacuous: a 2.5 m XDR splitter (what railyard stocked before issue #39) put
    into a compiled plan in place of a node-leaf cable is reported."""
    plan = compiled("b300-xdr")
    assert not violations(plan)
    c = next(c for c in plan.cables or [] if c.network == "backend" and c.shape.startswith("split"))
    bad = dataclasses.replace(c, catalog="xdr-lacc-splitter", media="acc", length_m=[2.5] * len(c.length_m))
    found = violations(dataclasses.replace(plan, cables=[bad]))
    assert any("not sold in" in v for v in found) and any("longer than its reach" in v for v in found), found


if __name__ == "__main__":
    r = sweep(COMPILED_EXAMPLES)
    print(
        f"{len(COMPILED_EXAMPLES)} designs x {len(PLACEMENTS)} placements x {len(SLACKS_M)} slacks: "
        f"{r.compiled} compiled "
        f"({r.cables} cables), {len(r.not_a_design)} combinations not buildable for other reasons, "
        f"{len(r.problems)} media-rule violations"
    )
    for p in r.problems[:20]:
        print(" ", p)
