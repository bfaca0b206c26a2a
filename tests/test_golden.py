"""The committed golden output (tests/golden/) must match what `railyard compile` writes today, byte for
byte; scripts/regen-golden.sh regenerates it. The golden designs together must cover every switch OS,
backend technology and rack-scale system family (tests/golden.py lists them)."""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any, get_args

import pytest

from generators import renderers
from generators.model.design import Backend
from generators.model.netos import NETWORK_OSES
from tests.golden import DESIGNS, GOLDEN, REGEN, TEST_DESIGNS, compile_into, differences, regenerate


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


def _golden_plan(name: str) -> dict[str, Any]:
    path = GOLDEN / name / "plan.json"
    assert path.is_file(), f"no golden files for {name}: run {REGEN}"
    plan: dict[str, Any] = json.loads(path.read_text())
    return plan


def _configured_switches(name: str, plan: dict[str, Any]) -> dict[str, set[str]]:
    """{switch OS: the switches of golden `name` its files configure}: a switch with a folder of its own
    (<network>/<switch>/: its config files), or an InfiniBand switch in the expected fabric
    (infiniband/topology.net), which is what railyard renders for the subnet manager instead of
    per-switch files. An NVLink switch tray (wired by its rack) is in neither."""
    root = GOLDEN / name
    folders = {p.parent.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    topology = root / "infiniband" / "topology.net"
    in_fabric = (
        set(re.findall(r'^Switch\t\d+ "[^"]*"\s+# "([^"]+)"', topology.read_text(), re.MULTILINE))
        if topology.is_file()
        else set()
    )
    models = plan["catalog"]["switches"]
    out: dict[str, set[str]] = defaultdict(set)
    for d in plan["devices"]:
        if d["kind"] == "switch" and (f"{d['network']}/{d['name']}" in folders or d["name"] in in_fabric):
            out[models[d["model"]]["os"]].add(d["name"])
    return out


def test_every_switch_os_backend_technology_and_rack_system_has_a_golden_design() -> None:
    """A family that loses its golden design (dropped from tests/golden.py, or a design change that moves
    it to another OS) fails here, from the committed plans: every switch OS the catalog defines
    configures a switch in some golden tree, every backend technology is some golden design's backend,
    on every OS that serves it (generators.model.netos), and some golden design is built of a rack-scale
    system with its NVLink switch trays."""
    plans = {name: _golden_plan(name) for name in DESIGNS}
    oses: set[str] = set()
    backends: set[tuple[str, str]] = set()  # (switch OS, backend technology)
    for name, plan in plans.items():
        in_backend = {d["name"] for d in plan["devices"] if d.get("network") == "backend"}
        for os_, switches in _configured_switches(name, plan).items():
            oses.add(os_)
            if switches & in_backend:
                backends.add((os_, plan["networks"]["backend"]["technology"]))
    missing_os = sorted(set(NETWORK_OSES) - oses)
    assert not missing_os, (
        f"no golden design configures a switch on {', '.join(missing_os)} (configured: "
        f"{', '.join(sorted(oses))}): add a small design on it to DESIGNS in tests/golden.py and run {REGEN}"
    )

    technologies = get_args(Backend.model_fields["technology"].annotation)
    missing_tech = sorted(set(technologies) - {tech for _, tech in backends})
    assert not missing_tech, (
        f"no golden design has a {', '.join(missing_tech)} backend: add one to DESIGNS in tests/golden.py "
        f"and run {REGEN}"
    )
    # a backend technology is also the duty of its switches ("infiniband", "roce")
    served = {(os_, tech) for os_, row in NETWORK_OSES.items() for tech in technologies if tech in row.serves}
    missing_backends = sorted(served - backends)
    assert not missing_backends, (
        "no golden design has "
        + ", ".join(f"a {tech} backend on {os_}" for os_, tech in missing_backends)
        + f": add one to DESIGNS in tests/golden.py and run {REGEN}"
    )

    systems: dict[str, str] = {}
    for name, plan in plans.items():
        system = plan["design"]["compute"].get("system")
        if system is None:
            continue
        rack_system = plan["catalog"]["rack_systems"][system]
        trays = [d for d in plan["devices"] if d["kind"] == "switch" and d["model"] == rack_system["nvlink_switch"]]
        assert len(trays) == rack_system["nvlink_switches"] * plan["design"]["compute"]["racks"], name
        systems[name] = system
    known = sorted({s for plan in plans.values() for s in plan["catalog"]["rack_systems"]})
    assert systems, (
        f"no golden design is built of a rack-scale system (compute.system: {', '.join(known)}): add one "
        f"to DESIGNS in tests/golden.py and run {REGEN}"
    )


def test_every_golden_test_design_is_a_golden() -> None:
    """tests/designs/golden-*.yaml exist for tests/golden.py: one left out of DESIGNS is checked by nothing."""
    listed = {p.resolve() for p in DESIGNS.values()}
    unlisted = sorted(p.name for p in TEST_DESIGNS.glob("golden-*.yaml") if p.resolve() not in listed)
    assert not unlisted, f"{', '.join(unlisted)} not in DESIGNS of tests/golden.py"
