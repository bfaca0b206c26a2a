"""Every warning the shipped designs print with their defaults, listed: each is one a user can act on (it
names the design field to change and what to set), none is about a default the user never chose."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from generators.model.design import Design
from generators.model.errors import fields_at
from generators.model.plan import Plan
from generators.stages.bom import plan_bom
from tests.conftest import COMPILED_EXAMPLES

# design -> the fields its warnings name, and why each is there by default
EXPECTED: dict[str, set[str]] = {
    # NVIDIA's 127-node SuperPOD: the 128th slot's leaf ports that the two UFM nodes do not take stay free
    "dgx-h100-superpod-4su": {"compute.reserved_slots"},
    "h100-1016-superpod": {"compute.reserved_slots"},
    # 4,708 InfiniBand nodes on a switch-embedded subnet manager: the warning says what attaching
    # management nodes takes (an XDR management server, free leaf ports)
    "gb300-nvl72-4608": {"management.backend_attached"},
    # DeepSeek's 8 planes are 8 subnets of 2,048 HCAs and 96 switches each, still past ~2,000 nodes per
    # switch-embedded subnet manager: the warning says to attach management nodes (a UFM per plane)
    "deepseek-8plane-16k": {"management.backend_attached"},
}
# h100-16k takes 12 s to compile and follows h100-1024-reference's code paths
SHIPPED = [n for n in COMPILED_EXAMPLES if n != "h100-16k"]
ACTIONS = re.compile(r"\b(set|attach|add|give|use|raise|lower|remove|fill)\b")
FIELD = re.compile(r"\b[a-z_]+(?:\.[a-z_]+)+\b")


def _is_field(path: str) -> bool:
    parts = path.split(".")
    return parts[-1] in fields_at(Design, tuple(parts[:-1]))


@pytest.mark.parametrize("name", SHIPPED)
def test_the_warnings_of_each_shipped_design_are_listed_and_actionable(
    compiled: Callable[..., Plan], name: str
) -> None:
    plan = compiled(name)
    warnings = [*plan.warnings, *plan_bom(plan).warnings]
    assert {w.field for w in warnings} == EXPECTED.get(name, set()), [f"{w.field}: {w.message}" for w in warnings]
    for w in warnings:
        assert _is_field(w.field), w.field
        named = [f for f in FIELD.findall(w.message) if _is_field(f)]
        assert named and ACTIONS.search(w.message), f"not actionable: {w.field}: {w.message}"
