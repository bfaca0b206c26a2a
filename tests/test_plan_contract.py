"""plan.json as a contract: what `railyard compile` writes reads back into the same typed plan, and a
plan.json whose sections have another shape is refused at once, naming the section."""

from __future__ import annotations

import json

import pytest

from generators.model.plan import Plan, dumps
from generators.model.sections import PlanShapeError
from tests.conftest import DESIGNS


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> str:
    from typer.testing import CliRunner

    from generators.cli import app

    out = tmp_path_factory.mktemp("plan") / "out"
    r = CliRunner().invoke(app, ["compile", str(DESIGNS / "h100-256.yaml"), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    return (out / "plan.json").read_text()


def test_plan_json_reads_back_to_the_same_bytes(written: str) -> None:
    plan = Plan.from_dict(json.loads(written))
    assert plan.cables and plan.racks and plan.netplan and plan.bom and plan.floor and plan.trays
    assert dumps(plan) == written


@pytest.mark.parametrize(
    ("section", "edit", "message"),
    [
        ("cables", lambda d: d["cables"][3].update(colour="blue"), "cables[3]: unknown keys ['colour']"),
        ("racks", lambda d: d["racks"][0].pop("units_used"), "racks[0]: missing keys ['units_used']"),
        ("trays", lambda d: d["trays"]["segments"][0].pop("a_mm"), "trays.segments[0]: missing keys ['a_mm']"),
        ("bom", lambda d: d["bom"]["lines"][0].update(qty=1), "bom.lines[0]: unknown keys ['qty']"),
        ("floor", lambda d: d.update(floor=[]), "floor: expected an object, got list"),
        ("extra", lambda d: d.update(wiring={}), "unknown sections ['wiring']"),
    ],
)
def test_a_section_of_another_shape_is_refused_naming_it(written: str, section: str, edit, message: str) -> None:
    d = json.loads(written)
    edit(d)
    with pytest.raises(PlanShapeError) as exc:
        Plan.from_dict(d)
    assert message in str(exc.value)


def test_not_a_plan_is_refused() -> None:
    with pytest.raises(PlanShapeError, match=r"not a railyard\.plan/1 document"):
        Plan.from_dict({"schema": "railyard.plan/0"})
