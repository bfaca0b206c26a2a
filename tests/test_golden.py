"""The committed golden output (tests/golden/) must match what `railyard compile` writes today, byte for
byte; scripts/regen-golden.sh regenerates it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generators import renderers
from tests.golden import DESIGNS, GOLDEN, REGEN, compile_into, differences, regenerate


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_compiled_output_matches_the_golden_files(name: str, tmp_path: Path) -> None:
    assert (GOLDEN / name / "plan.json").is_file(), f"no golden files for {name}: run {REGEN}"
    compile_into(DESIGNS[name], tmp_path / name)
    diffs = differences(GOLDEN / name, tmp_path / name)
    assert not diffs, (
        f"output of {name} drifted from tests/golden/{name} (run {REGEN} and review the diff):\n"
        + "\n".join(diffs[:40])
    )


def test_one_changed_byte_in_one_renderer_fails_until_regenerated(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The check is not vacuous: alter one byte of one renderer's output and the comparison names that
    file alone; regenerating (the same function the script runs) makes it pass again."""
    golden = tmp_path / "golden"
    shutil.copytree(GOLDEN / "h100-256", golden / "h100-256")
    i = renderers.RENDERERS.index(renderers.render_slurm)

    def one_byte_off(plan):  # type: ignore[no-untyped-def]
        files = renderers.render_slurm(plan)
        files["slurm/topology.conf"] = files["slurm/topology.conf"].replace("#", "%", 1)
        return files

    patched = list(renderers.RENDERERS)
    patched[i] = one_byte_off
    monkeypatch.setattr(renderers, "RENDERERS", patched)
    out = tmp_path / "out" / "h100-256"
    compile_into(DESIGNS["h100-256"], out)
    diffs = differences(golden / "h100-256", out)
    # the file itself, and the manifest that records its hash
    assert [d.split(" (")[0] for d in diffs] == ["differs: .railyard-manifest.json", "differs: slurm/topology.conf"]
    assert diffs[1].endswith("(first difference at byte 0)")
    regenerate(golden, ["h100-256"])  # one design: each golden design is compiled by the test above
    assert differences(golden / "h100-256", out) == []
