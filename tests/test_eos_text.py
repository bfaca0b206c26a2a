"""railyard's EOS template (generators/vendors/eos_text.py, templates/eos.cfg.j2) against pyavd's own
eos_cli_config_gen templates: byte for byte on every EOS switch of the test designs, on copies of them
varied within the keys and values the template prints (lists reordered, optional keys dropped, every
allowed value of a flag or mode, names in other letter cases), and a structured config outside that
subset rendered by pyavd's templates, with the place it left the subset named."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from pyavd import validate_structured_config

from generators.vendors import eos_text
from generators.vendors.eos import eos_cli, pyavd_cli
from tests.test_eos import ROCE_EOS, THREE_TIER, design_files, eos_structured_configs


def _validated(design: Any) -> dict[str, dict[str, Any]]:
    plan, _ = design_files(design)
    out = {}
    for name, sc in eos_structured_configs(plan).items():
        r = validate_structured_config(sc)
        assert r.validated_data is not None, name
        out[name] = r.validated_data
    return out


@pytest.mark.parametrize("design", [ROCE_EOS, THREE_TIER], ids=lambda p: p.stem)
def test_every_eos_switch_is_in_the_subset_and_rendered_as_pyavd_renders_it(design: Any) -> None:
    """All of them: the RoCE design's frontend leaves and spines, backend leaves and spines and OOB
    aggregation; the 3-tier design's leaves, spines and cores of every pod. The eos.cfg the compile wrote
    for each is, below its one comment line, pyavd's templates' text of the switch's structured config."""
    _, files = design_files(design)
    validated = _validated(design)
    assert len(validated) >= 20
    assert sorted(f"{name}/eos.cfg" for name in validated) == sorted(p for p in files if p.endswith("/eos.cfg"))
    for name, sc in validated.items():
        assert eos_text.misfit(sc) is None, name
        reference = pyavd_cli(sc)
        assert eos_text.render(sc) == reference, name
        head, _, body = files[f"{name}/eos.cfg"].partition("\n")
        assert head.startswith("! ") and body == reference, name


def _vary(value: Any, shape: Any, rng: random.Random) -> Any:
    """A copy of `value` (of SHAPE `shape`) varied within the shape."""
    if isinstance(shape, dict):
        out = {}
        for k, v in value.items():
            optional = f"?{k}" in shape
            if optional and rng.random() < 0.2:
                continue
            out[k] = _vary(v, shape[f"?{k}" if optional else k], rng)
        return out
    if isinstance(shape, list):
        items = [_vary(v, shape[0], rng) for v in value]
        rng.shuffle(items)
        return items
    if isinstance(shape, frozenset):
        return rng.choice(sorted(shape, key=repr))
    if isinstance(value, str) and rng.random() < 0.15:
        return value.swapcase()  # natural sort ignores case in some sections and not in others
    if isinstance(value, int) and rng.random() < 0.1:
        return value * 10  # a number sorts as a number, 9 before 10
    return value


def test_varied_copies_render_as_pyavd_renders_them() -> None:
    """One switch of each kind from both designs, 12 varied copies each: the same text as pyavd's templates
    on every copy, so the sort orders, optional lines and value branches are pyavd's, not only the
    combinations the designs happen to produce."""
    rng = random.Random(18)
    picked: dict[str, dict[str, Any]] = {}
    for design in (ROCE_EOS, THREE_TIER):
        for name, sc in _validated(design).items():
            kind = (design.stem, name.split("/")[0], name.rstrip("0123456789").split("/")[1][:8])
            picked.setdefault(str(kind), sc)
    assert len(picked) >= 6
    copies = 0
    for kind, sc in picked.items():
        for _ in range(12):
            varied = _vary(copy.deepcopy(sc), eos_text.SHAPE, rng)
            assert eos_text.misfit(varied) is None, kind
            assert eos_text.render(varied) == pyavd_cli(varied), (kind, varied)
            copies += 1
    assert copies >= 72


def _leaf() -> dict[str, Any]:
    validated = _validated(ROCE_EOS)
    return copy.deepcopy(validated["frontend/fe-leaf01"])


@pytest.mark.parametrize(
    ("change", "where", "line"),
    [
        # a key railyard does not build: pyavd prints it
        (
            lambda sc: sc["ethernet_interfaces"][0].update(lldp={"transmit": False}),
            "ethernet_interfaces[0].lldp: a key this renderer does not print",
            "   no lldp transmit\n",
        ),
        # a value of a key the template knows, outside the values it prints
        (
            lambda sc: sc.update(spanning_tree={"mode": "mstp"}),
            "spanning_tree.mode: 'mstp' is not one of 'none'",
            "spanning-tree mode mstp\n",
        ),
        # a flag where a number belongs (True == 1 to Python, not to the template)
        (lambda sc: sc["vlans"][0].update(id=True), "vlans[0].id: bool, not int", None),
        (lambda sc: sc["router_bgp"].pop("as"), "router_bgp.as: missing", None),
    ],
)
def test_a_structured_config_outside_the_subset_goes_to_pyavds_templates(
    change: Any, where: str, line: str | None
) -> None:
    sc = _leaf()
    assert eos_text.fits(sc)
    change(sc)
    assert not eos_text.fits(sc)
    assert eos_text.misfit(sc) == where
    if line is not None:
        text = eos_cli(sc)
        assert text == pyavd_cli(sc) and line in text
