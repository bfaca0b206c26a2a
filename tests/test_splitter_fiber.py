"""NDR200 on splitter fibers (issue #14): hosts that run 200G on an NDR leaf get a single-port optic in
200G mode, which NVIDIA runs on one leg of a 1:2 splitter fiber (MFP7E20 multimode, MFP7E40 single-mode)
from one connector of the leaf's twin-port transceiver. The design is h100-256 with a natively 200G
ConnectX-7 added in its `catalog:` (tests/designs/ndr200-splitter.yaml)."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.catalog import DEFAULT_CATALOG, load_catalog
from generators.model.errors import DesignError
from generators.model.ports import port_table
from tests.conftest import DESIGNS, rendered_files

SPLIT = "../tests/designs/ndr200-splitter"


def _rows(compiled, name: str, *over: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(rendered_files(compiled, name, *over)["cabling/cables.csv"])))


def _bom(compiled, name: str) -> dict[str, int]:
    rows = csv.DictReader(io.StringIO(rendered_files(compiled, name)["bom.csv"]))
    return {r["sku"]: int(r["quantity"]) for r in rows if r["category"] == "backend"}


def test_200g_hosts_on_an_ndr_leaf_take_splitter_fibers(compiled) -> None:
    plan = compiled(SPLIT)
    catalog = plan.catalog
    splitters = {s.sku for c in catalog.cables.values() if c.kind == "fiber" and c.legs == 2 for s in c.lengths}
    hosts = {d.name for d in plan.devices if d.kind in ("server", "management")}
    host_rows = [r for r in _rows(compiled, SPLIT) if r["network"] == "backend" and r["a_device"] in hosts]
    assert host_rows and {plan.links[0].speed_gbps} == {200}
    cage_of = {
        (d.name, p.name): p.cage
        for d in plan.devices
        if d.kind == "switch"
        for p in port_table(catalog.switches[d.model])
    }
    legs: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in host_rows:
        assert r["part"] in splitters, r
        single, twin = catalog.transceivers[r["a_transceiver"]], catalog.transceivers[r["b_transceiver"]]
        assert single.ports == 1 and 200 in single.split_speeds_gbps and twin.ports == 2
        legs[r["cable_id"]].append(r)
    for cable_id, rs in legs.items():  # one splitter: at most two hosts, one leaf cage
        assert len(rs) <= 2 and len({r["a_device"] for r in rs}) == len(rs), cable_id
        assert len({(r["b_device"], cage_of[(r["b_device"], r["b_port"])]) for r in rs}) == 1, cable_id
        assert len({r["part"] for r in rs}) == 1
    # the BoM: a splitter per used leaf cage, as many twin optics at the leaves, an optic per host port
    cages = {(r["b_device"], cage_of[(r["b_device"], r["b_port"])]) for r in host_rows}
    bom = _bom(compiled, SPLIT)
    assert sum(n for sku, n in bom.items() if sku in splitters) == len(legs) == len(cages)
    twin_sku, single_sku = host_rows[0]["b_transceiver"], host_rows[0]["a_transceiver"]
    leaf_spine_twins = sum(
        1
        for r in _rows(compiled, SPLIT)
        if r["network"] == "backend"
        and r["a_device"] not in hosts
        and twin_sku in (r["a_transceiver"], r["b_transceiver"])
    )
    assert leaf_spine_twins == 0, "leaf-spine links of this design are copper; the twin count would be mixed"
    assert bom[twin_sku] == len(cages)
    assert bom[single_sku] == len(host_rows)


def test_400g_hosts_keep_straight_fibers(compiled) -> None:
    """The same layout at 400G: a straight fiber per host, no splitter anywhere."""
    splitters = {s.sku for c in load_catalog().cables.values() if c.legs == 2 and c.kind == "fiber" for s in c.lengths}
    rows = [r for r in _rows(compiled, "h100-256") if r["network"] == "backend"]
    assert rows and not {r["part"] for r in rows} & splitters


def test_a_single_port_optic_at_200g_needs_a_splitter(tmp_path: Path) -> None:
    """Without splitter fibers in the catalog, no fiber joins the 200G hosts: the error names the link."""
    data = yaml.safe_load(DEFAULT_CATALOG.read_text(encoding="utf-8"))
    for key in [k for k, c in data["cables"].items() if c.get("kind") == "fiber" and c.get("legs") == 2]:
        del data["cables"][key]
    cat = tmp_path / "catalog.yaml"
    cat.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{SPLIT}.yaml", [], cat)
    p = exc.value.problems[0]
    assert "200G only on a splitter fiber leg" in p.message and "legs: 2" in p.hint
