"""The hostile cases of issue #36 that railyard got wrong, one test each: domain rules a design could break
unseen, errors blamed on a field the user did not write, and input readers that were not bounded or
passed user text on raw. Each failed before its fix (exit 70, the wrong field, a pass, or raw output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.asbuilt import progress
from tests.conftest import DESIGNS, ROOT

REF = DESIGNS / "h100-1024-reference.yaml"
NVL = DESIGNS / "gb200-nvl72-1152.yaml"
SMALL = DESIGNS / "h100-256.yaml"
Cli = Callable[..., Any]


def refused(r: Any, field: str, *texts: str, at: str | None = None) -> str:
    """Exit 2, no traceback, the message names `field` (at `at`) and says each of `texts`."""
    err = r.stderr
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output + err
    assert f"{at + ': ' if at else ''}{field}:" in err, err
    for t in texts:
        assert t in err, err
    return str(err)


# ---------------------------------------------------------------------------------------- domain


def test_a_tenant_vlan_that_is_the_bmc_vlan_is_refused_by_field(cli: Cli, tmp_path: Path) -> None:
    # before: exit 70 from the NetBox renderer ("VLAN 10 is not unique in site")
    r = cli("compile", REF, "--set", "tenants.0.vlan=10", "--out", tmp_path / "o", "-q")
    refused(r, "tenants.0.vlan", "is also the out-of-band VLAN oob.network.bmc_vlan", "give acme another VLAN")
    assert not (tmp_path / "o").exists()


def test_an_oob_vlan_moved_onto_a_tenant_vlan_blames_the_oob_field(cli: Cli) -> None:
    r = cli("validate", REF, "--set", "oob.network.mgmt_vlan=1000")
    refused(r, "oob.network.mgmt_vlan", "VLAN 1000 of infra")


@pytest.mark.parametrize("mac", ["01:00:5e:00:00:01", "ff:ff:ff:ff:ff:ff", "33:33:00:00:00:01", "00:00:00:00:00:00"])
def test_a_group_or_null_mac_is_no_anycast_gateway(cli: Cli, mac: str) -> None:
    r = cli("validate", SMALL, "--set", f"frontend.evpn.anycast_gateway_mac={mac}")
    refused(r, "frontend.evpn.anycast_gateway_mac", mac, "use a locally administered unicast MAC")


def test_an_nvl72_of_16_trays_is_not_an_nvl72(cli: Cli, tmp_path: Path) -> None:
    """A rack system's GPUs must meet its NVLink switch ports one to one (72 x 18 = 9 x 144)."""
    design = tmp_path / "nvl.yaml"
    design.write_text(f"extends: {NVL}\ncatalog:\n  rack_systems:\n    gb200-nvl72:\n      trays: 16\n")
    r = cli("validate", design)
    refused(
        r,
        "catalog.rack_systems.gb200-nvl72.trays",
        "16 trays x 4 GPUs (gb200-compute-tray) x 18 NVLink ports is 1152 GPU links",
        "18 trays fill them",
        at=f"{design}:5",
    )


def test_a_set_that_breaks_a_catalog_rule_is_blamed_on_the_set_not_the_catalog(cli: Cli) -> None:
    # before: "catalog.yaml:1199: rack_systems.gb200-nvl72.nvlink_links ... fix: fix the catalog entry"
    r = cli("validate", NVL, "--set", "catalog.rack_systems.gb200-nvl72.nvlink_switches=8")
    err = refused(
        r,
        "catalog.rack_systems.gb200-nvl72.nvlink_switches",
        "makes rack_systems.gb200-nvl72.trays wrong",
        "change it back",
        at="--set catalog.rack_systems.gb200-nvl72.nvlink_switches=8",
    )
    assert "catalog.yaml:" not in err and "fix the catalog entry" not in err


def test_racks_that_split_a_scalable_unit_are_blamed_on_compute_racks(cli: Cli) -> None:
    # before: "compute.count: 270 servers is not a whole number of 144-server scalable units"
    r = cli("validate", NVL, "--set", "compute.racks=15")
    refused(r, "compute.racks", "15 gb200-nvl72 racks is not a whole number of 8-rack scalable units", "(8, 16)")


# ------------------------------------------------------------------------------------- the files


def test_a_design_that_is_a_list_names_its_line(cli: Cli, tmp_path: Path) -> None:
    design = tmp_path / "list.yaml"
    design.write_text("# a list, not a design\n- a\n- b\n")
    refused(cli("validate", design), "(design)", "a design must be a YAML mapping, not a list", at=f"{design}:2")


def test_an_empty_design_file_says_so(cli: Cli, tmp_path: Path) -> None:
    design = tmp_path / "empty.yaml"
    design.write_text("# nothing yet\n")
    refused(cli("validate", design), "(design)", "holds no design (the file is empty)")


def test_extends_of_a_file_that_is_not_a_design_names_the_extends_line(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "catalog.yaml").write_text((DESIGNS / "catalog.yaml").read_text())
    design = tmp_path / "d.yaml"
    design.write_text("name: x\ncompute: {count: 64}\nextends: catalog.yaml\n")
    err = refused(cli("validate", design), "switches", "unknown field, from")
    assert f"which `extends:` at {design}:3 brings in" in err


def test_html_in_a_design_is_shown_not_rendered_in_the_review(cli: Cli, tmp_path: Path) -> None:
    """A pull-request comment renders HTML and Markdown: design text goes in code spans."""
    head = tmp_path / "head.yaml"
    head.write_text(f'extends: {SMALL}\ndescription: "<img src=x onerror=alert(1)> `code` [a](http://x) # h"\n')
    r = cli("diff", SMALL, head)
    assert r.exit_code == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("- `description`"))
    # the head's text in a code span whose fence (two backticks) is longer than the text's own backtick run
    assert line.endswith(' → ``"<img src=x onerror=alert(1)> `code` [a](http://x) # h"``'), line


# ------------------------------------------------------------------------------------ LLDP tables


def _lldp(tmp_path: Path, device: str, text: str) -> Path:
    path = tmp_path / f"{device}.json"
    path.write_text(text)
    return path


def test_a_table_that_hears_nothing_is_a_fault_not_covered(cli: Cli, tmp_path: Path) -> None:
    empty = _lldp(tmp_path, "fe-leaf01", json.dumps({"lldp": [{"interface": []}]}))
    r = cli("verify", SMALL, "--lldp", empty)
    assert r.exit_code == 1, r.output
    assert "SILENT   fe-leaf01: its table hears nothing on any port" in r.stdout
    assert "OK:" not in r.stdout


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("[" * 100_000 + "]" * 100_000, "nested deeper than any LLDP table", id="deep"),
        pytest.param('{"lldp": [' + "9" * 50_000 + "]}", "a JSON value no LLDP table holds", id="long-number"),
    ],
)
def test_lldp_json_a_table_never_holds_is_refused(cli: Cli, tmp_path: Path, text: str, says: str) -> None:
    r = cli("verify", SMALL, "--lldp", _lldp(tmp_path, "fe-leaf01", text))
    refused(r, "--lldp", says)


def test_an_lldp_table_past_its_limit_is_refused_unread(cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "fe-leaf01.json"
    with open(big, "wb") as fh:
        fh.truncate(9 << 20)  # sparse: 9 MiB of size, nothing to read
    refused(cli("verify", SMALL, "--lldp", big), "--lldp", "more than the 8,388,608 allowed")


def test_lldp_files_as_the_readme_writes_them(cli: Cli, tmp_path: Path) -> None:
    """`--lldp a.json b.json` (one flag, several files) as well as a flag per file."""
    tables = [_lldp(tmp_path, d, json.dumps({"lldp": [{"interface": []}]})) for d in ("fe-leaf01", "fe-leaf02")]
    r = cli("verify", SMALL, "--lldp", *tables)
    assert r.exit_code == 1 and "SILENT   fe-leaf02" in r.stdout, r.output
    r = cli("verify", SMALL, tables[0])
    refused(r, "--lldp", "but no --lldp")


# ------------------------------------------------------------------------------------ progress file


def test_a_note_is_kept_as_text_never_as_a_formula_or_an_escape(cli: Cli, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    cable = json.loads((Path(__file__).parent / "golden" / "h100-256" / "plan.json").read_text())["cables"][0]["id"]
    note = '=HYPERLINK("http://evil","fix") \x1b[2J'
    r = cli("cabling", "mark", SMALL, cable, "faulty", "--note", note, "--by", "@admin", "--progress", prog)
    assert r.exit_code == 0, r.output
    last = prog.read_text().splitlines()[-1]
    assert '\'=HYPERLINK(""http://evil"",""fix"") \\x1b[2J' in last and ",'@admin," in last, last
    # the same note again is the same mark: nothing recorded
    r = cli("cabling", "mark", SMALL, cable, "faulty", "--note", note, "--by", "@admin", "--progress", prog)
    assert r.exit_code == 0 and len(prog.read_text().splitlines()) == 2, r.output


def test_a_progress_file_past_its_limit_is_refused_unread(cli: Cli, tmp_path: Path) -> None:
    prog = tmp_path / "p.csv"
    with open(prog, "wb") as fh:
        fh.write(b"when,cable_id,state,by,note\n")
        fh.truncate(progress.PROGRESS_LIMIT + 1)
    refused(cli("cabling", "status", SMALL, "--progress", prog), "--progress", "more than the")


PEAK = """
import atexit, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("PEAK_KB " + line.split()[1] + "\\n")
atexit.register(peak)
from generators.cli import main
sys.argv = ["railyard", *sys.argv[1:]]
main()
"""


def test_a_long_progress_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """~60 MB of marks on a few cables (a long-lived site's log): read a line at a time, the state kept by
    cable, so the run's memory stays near a compile's, far from the file's size in Python objects."""
    prog = tmp_path / "p.csv"
    cable = json.loads((Path(__file__).parent / "golden" / "h100-256" / "plan.json").read_text())["cables"][0]["id"]
    row = f"2026-12-04T00:00:00Z,{cable},pulled,tech,{'x' * 60}\n".encode()
    with open(prog, "wb") as fh:
        fh.write(b"when,cable_id,state,by,note\n")
        fh.write(row * (60_000_000 // len(row)))
    r = subprocess.run(
        [sys.executable, "-c", PEAK, "cabling", "status", str(SMALL), "--progress", str(prog)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr
    peak_mb = int(r.stderr.split("PEAK_KB ")[1].split()[0]) / 1024
    assert peak_mb < 250, f"{peak_mb:.0f} MB peak reading a 60 MB progress file"
