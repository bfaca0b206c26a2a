"""What is built is never moved silently by `pulumi up` (issue 43): the stack records where each device
of the site stands, and a run whose design would move one fails before any file is written.

`railyard compile` compares with the output folder's plan.json; for a stack the truth is its own state,
what the last `up` deployed. So the Site registers one `Placement` resource whose input `devices` maps
each device to `rack U<unit>` (generators.reports.diff.placement_entries: ~25 bytes a device, ~160 kB
at h100-16k, kept once, as inputs; its outputs hold only a count and a digest). The engine hands the
provider's check() the inputs the state holds (what was last deployed) beside the new ones, so the
check compares the two with the compiler's own helpers (moves_between) and, on moves, fails the
preview or `up` naming the first ones, their count and the fix (`railyard:allowMoves`). Every
FileGroup depends on this resource, so no file is deployed before the check passed, nor the deploy
folder's owners record rewritten (components/site.py writes it once this resource is done).

A first deployment (no inputs in the state), a stack made before this resource existed (it is created,
nothing compared), and a stack pointed at another design (a different site, as compile treats
another design's folder) are never refused. A change of `allowMoves` alone is no update.

Stateless and module-level, as components/artifact.py explains (the provider is pickled into every
resource).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, ResourceProvider, UpdateResult

from generators.reports.diff import moves_between, moves_listed, placement_of_entries

CONFIG_KEY = "railyard:allowMoves"
PLACEMENT_T = "pulumi-python:dynamic/railyard:Placement"  # the resource's type, as the state names it


def digest(devices: Mapping[str, str]) -> str:
    """The SHA-256 of a placement's entries, what the outputs keep of them."""
    return hashlib.sha256(json.dumps(dict(devices), sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def refusal(olds: Mapping[str, Any], news: Mapping[str, Any]) -> str | None:
    """Why the new inputs may not deploy over the old ones (the state's), or None: the devices of the
    same design that would stand in another rack or unit, unless allowMoves."""
    if news.get("allowMoves") is True or not olds or olds.get("design") != news.get("design"):
        return None
    before, after = placement_of_entries(olds.get("devices")), placement_of_entries(news.get("devices"))
    if before is None or after is None:
        return None
    moves = moves_between(before, after)
    if not moves:
        return None
    n = len(moves)
    return (
        f"{n:,} device{'s' if n != 1 else ''} of {news['design']} that the stack's last deployment placed "
        f"would move: {moves_listed(moves)}. Nothing was deployed. If the site is not built yet or the moves "
        f"are intended: `pulumi config set {CONFIG_KEY} true`, run again, then `pulumi config rm {CONFIG_KEY}`; "
        "`railyard diff` lists each move as a work order; else change the design so they stay"
    )


def _outs(props: Mapping[str, Any]) -> dict[str, Any]:
    return {"design": props["design"], "count": len(props["devices"]), "digest": digest(props["devices"])}


class PlacementProvider(ResourceProvider):
    """Inputs `design` (the design's name), `devices` (device -> `rack U<unit>`) and `allowMoves`;
    outputs `design`, `count` and `digest`. Writes nothing anywhere: the state is the record."""

    serialize_as_secret_always = False  # nothing secret in the pickled provider

    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = []
        if not isinstance(news.get("design"), str) or not news["design"]:
            failures.append(CheckFailure("design", "must be the design's name"))
        if placement_of_entries(news.get("devices")) is None:
            failures.append(CheckFailure("devices", "must be a map of device -> 'rack U<unit>'"))
        if not isinstance(news.get("allowMoves"), bool):
            failures.append(CheckFailure("allowMoves", "must be true or false"))
        if not failures and (why := refusal(olds, news)):
            # no property named: the engine would print the whole map beside the reason
            failures.append(CheckFailure("", why))
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # olds are the outputs: allowMoves is not among them, so setting or removing it is no change
        changed = olds.get("design") != news.get("design") or olds.get("digest") != digest(news["devices"])
        return DiffResult(changes=changed, replaces=[], stables=[], delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"placement#{props['design']}", _outs(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(_outs(news))


class Placement(pulumi.dynamic.Resource, module="railyard", name="Placement"):
    """Where each device of the site stands, as last deployed; see the module docstring."""

    def __init__(
        self,
        name: str,
        design: str,
        devices: Mapping[str, str],
        allow_moves: bool,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(
            PlacementProvider(),
            name,
            {"design": design, "devices": dict(devices), "allowMoves": allow_moves},
            opts,
        )
