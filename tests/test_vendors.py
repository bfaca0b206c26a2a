"""Vendors as one unit each: the registry knows every catalog OS, an OS without a renderer is refused
by the CLI naming the catalog field, and every switch is rendered once, by the module of its own OS."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from generators.model.catalog import DEFAULT_CATALOG, load_catalog
from generators.model.design import Frontend
from generators.model.netos import NETWORK_OSES, network_os, serving
from generators.model.plan import Plan
from generators.model.vocabulary import Duty
from generators.vendors import renderer
from tests.conftest import DESIGNS, rendered_files

EOS = ("frontend.vendor=eos", "frontend.switch=DCS-7060DX5-64S")
# what each OS writes into oob/<switch>/ and frontend/<switch>/
SWITCH_FILES = {
    "sonic": {"config_db.json", "frr.conf", "users.sh"},
    "cumulus": {"startup.yaml"},
    "eos": {"eos.cfg"},
}


def test_every_network_os_row_has_a_renderer_for_what_it_serves() -> None:
    assert {s.os for s in load_catalog().switches.values()} <= set(NETWORK_OSES)
    assert all(name == row.name for name, row in NETWORK_OSES.items())
    # frontend.vendor's values are the OSes that serve the frontend, and only those
    assert Frontend.model_json_schema()["properties"]["vendor"]["enum"] == serving(Duty.FRONTEND)
    for name in serving(Duty.FRONTEND):
        row = network_os(name)
        assert row.mtu and row.summary
    for name, row in NETWORK_OSES.items():
        module = renderer(name)
        assert hasattr(module, "render_frontend") == (Duty.FRONTEND in row.serves), name
        assert hasattr(module, "render_oob") == bool(row.serves & {Duty.OOB_ACCESS, Duty.OOB_AGGREGATION}), name
        assert hasattr(module, "render_backend") == bool(row.serves & {Duty.INFINIBAND, Duty.ROCE}), name
        # an InfiniBand storage fabric is a subnet of its own, rendered by its switches' OS
        assert hasattr(module, "render_storage") == (Duty.INFINIBAND in row.serves), name


def _catalog_with(tmp_path: Path, model: str, os_: str) -> Path:
    """The shipped catalog with one switch model's `os` changed (the YAML text, so lines stay true)."""
    lines = DEFAULT_CATALOG.read_text().splitlines(keepends=True)
    start = lines.index(f"  {model}:\n")
    i = next(i for i in range(start, len(lines)) if lines[i].startswith("    os: "))
    lines[i] = f"    os: {os_}\n"
    path = tmp_path / "catalog.yaml"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("command", ["validate", "compile"])
def test_switch_os_without_renderer_is_refused_naming_the_field(cli, tmp_path: Path, command: str) -> None:
    cat = _catalog_with(tmp_path, "SN2201", "junos")
    out = tmp_path / "out"
    r = cli(
        command,
        DESIGNS / "h100-1024-reference.yaml",
        "--catalog",
        cat,
        *(["--out", out] if command == "compile" else []),
    )
    assert r.exit_code == 2, r.output
    assert "switches.SN2201.os: no renderer for switch OS 'junos'" in r.output
    assert "use one of the registered network OSes: " + ", ".join(NETWORK_OSES) in r.output
    assert f"{cat}:" in r.output  # the catalog line
    assert not out.exists()


def test_shipped_catalog_through_the_option_compiles_the_same(cli, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("compile", DESIGNS / "h100-256.yaml", "-q", "--out", a).exit_code == 0
    assert cli("compile", DESIGNS / "h100-256.yaml", "-q", "--out", b, "--catalog", DEFAULT_CATALOG).exit_code == 0
    assert (a / "plan.json").read_bytes() == (b / "plan.json").read_bytes()


def test_switch_in_a_role_its_os_cannot_serve_is_refused(cli, tmp_path: Path) -> None:
    r = cli("validate", DESIGNS / "h100-256.yaml", "--set", "oob.switch=DCS-7060DX5-64S")
    assert r.exit_code == 2, r.output
    assert (
        "oob.switch: DCS-7060DX5-64S runs eos, which railyard cannot configure as an out-of-band access switch"
    ) in r.output
    assert "pick a switch model running sonic or cumulus" in r.output
    r = cli("validate", DESIGNS / "h100-256.yaml", "--catalog", _catalog_with(tmp_path, "QM9700", "sonic"))
    assert r.exit_code == 2, r.output
    assert (
        "backend.switch: QM9700 runs sonic, which railyard cannot configure as an InfiniBand backend switch" in r.output
    )
    # a RoCE backend on a SONiC switch stays allowed (no vendor renders RoCE switch configs yet)
    assert (
        cli(
            "validate", DESIGNS / "h100-256.yaml", "--set", "backend.technology=roce", "--set", "backend.switch=SN5600"
        ).exit_code
        == 0
    )


@pytest.mark.parametrize(
    ("name", "overrides", "oses"),
    [
        ("h100-256", (), {"sonic"}),
        ("h100-1024-reference", (), {"sonic", "cumulus"}),  # SN2201 access, SN4600 aggregation
        ("h100-256", EOS, {"sonic", "eos"}),  # AS4630 access, EOS aggregation (the frontend spine model)
    ],
)
def test_each_switch_is_rendered_once_by_its_own_vendor(
    compiled: Callable[..., Plan], name: str, overrides: tuple[str, ...], oses: set[str]
) -> None:
    plan = compiled(name, *overrides)
    files = rendered_files(compiled, name, *overrides)
    catalog = load_catalog()
    os_of = {d.name: catalog.switches[d.model].os for d in plan.devices if d.kind == "switch"}
    oob = [d.name for d in plan.devices if d.kind == "switch" and d.network == "oob"]
    assert {os_of[s] for s in oob} == oses
    for s in oob:
        assert {p.split("/")[2] for p in files if p.startswith(f"oob/{s}/")} == SWITCH_FILES[os_of[s]], s
    fe = [d.name for d in plan.devices if d.kind == "switch" and d.network == "frontend"]
    frontend_os = {os_of[s] for s in fe}
    assert frontend_os == {plan.networks.frontend.vendor}
    for s in fe:
        assert {p.split("/")[2] for p in files if p.startswith(f"frontend/{s}/")} == SWITCH_FILES[os_of[s]], s
    # every per-switch directory belongs to a switch of that network
    assert {p.split("/")[1] for p in files if p.startswith("oob/") and p.count("/") == 2} == set(oob)
    assert {p.split("/")[1] for p in files if p.startswith("frontend/") and p.count("/") == 2} - {"avd"} == set(fe)
    # the Kea subnets expect the circuit-id format of the access switch's own OS
    for sn in json.loads(files["oob/kea-dhcp4.conf"])["Dhcp4"]["subnet4"]:
        ctx = sn["user-context"]
        assert ctx["circuit-id"] == network_os(os_of[ctx["switch"]]).circuit_id_format
        for r in sn["reservations"]:
            port = r["circuit-id"].strip("'").split(":")[-1]
            assert r["circuit-id"] == f"'{network_os(os_of[ctx['switch']]).circuit_id_of(ctx['switch'], port)}'"


def test_backend_files_come_from_the_backend_switch_os(compiled: Callable[..., Plan]) -> None:
    ib = rendered_files(compiled, "h100-256")
    assert load_catalog().switches[compiled("h100-256").networks.backend.switch].os == "mlnx-os"
    assert "infiniband/partitions.conf" in ib and "infiniband/opensm.conf" in ib
    roce = rendered_files(compiled, "h100-256", "backend.technology=roce", "backend.switch=SN5600")
    assert not [p for p in roce if p.startswith("infiniband/")]
    # a Quantum-X800 runs NVOS: the subnet manager still programs its fabric from the same files
    xdr = ("backend.switch=Q3400", "compute.server=hgx-b300", "management.backend_attached=0")
    assert load_catalog().switches[compiled("h100-256", *xdr).networks.backend.switch].os == "nvos"
    files = rendered_files(compiled, "h100-256", *xdr)
    assert "infiniband/partitions.conf" in files and "infiniband/opensm.conf" in files
