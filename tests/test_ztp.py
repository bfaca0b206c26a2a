"""Zero-touch provisioning on compiled output: the Kea reservation of every switch carries its OS's ZTP
option, the URL in it names a file of ztp/, and that file fetches the switch's own compiled configs;
the switches left out say why. The formats are each OS's documented ones:

- SONiC ZTP design, "3.4 DHCP Options" (option 67: the ZTP JSON's URL) and "configdb-json":
  https://github.com/sonic-net/SONiC/blob/master/doc/ztp/ztp.md
- Cumulus Linux 5.12, "Zero Touch Provisioning - ZTP" (option 239, the CUMULUS-AUTOPROVISIONING flag):
  https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/Installation-Management/Zero-Touch-Provisioning-ZTP/
- Arista EOS User Manual, "Zero Touch Provisioning" (option 67 names a startup-config or a boot script):
  https://www.arista.com/en/um-eos/eos-initial-switch-access
- ONIE, "Image Discovery and Execution" (option 114, default-url):
  https://opencomputeproject.github.io/onie/design-spec/discovery.html

Kea itself reads the configs in tests/test_ztp_netns.py (a DHCP exchange) and below (kea-dhcp4 -t).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generators.compiler import compile_file
from generators.handover.ztp_server import load, make_server
from generators.model.plan import Plan
from generators.renderers import render_all
from tests.conftest import DESIGNS
from tests.golden import DESIGNS as GOLDEN
from tests.realtools import kea_check

_CACHE: dict[tuple[str, tuple[str, ...]], tuple[Plan, dict[str, str]]] = {}


def compiled(name: str, *overrides: str) -> tuple[Plan, dict[str, str]]:
    """A golden design (or a shipped one), compiled and rendered, cached per session."""
    key = (name, overrides)
    if key not in _CACHE:
        path = GOLDEN.get(name, DESIGNS / f"{name}.yaml")
        plan = compile_file(path, list(overrides))[0]
        _CACHE[key] = (plan, render_all(plan))
    return _CACHE[key]


def kea(files: dict[str, str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(files["oob/kea-dhcp4.conf"])["Dhcp4"]
    return doc


def reservations(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Management-port reservations by hostname (BMCs are <server>-bmc)."""
    subnets = [s for s in kea(files)["subnet4"] if s["user-context"]["kind"] == "mgmt"]
    return {r["hostname"]: r for s in subnets for r in s["reservations"]}


def index(files: dict[str, str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(files["ztp/switches.json"])
    return doc


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_every_switch_is_answered_or_said_why_not(name: str) -> None:
    plan, files = compiled(name)
    idx = index(files)
    switches = {d.name for d in plan.devices if d.kind == "switch"}
    assert set(idx["switches"]) | set(idx["skipped"]) == switches
    assert not set(idx["switches"]) & set(idx["skipped"])
    res = reservations(files)
    for sw in switches:
        has_options = "option-data" in res.get(sw, {})
        assert has_options == (sw in idx["switches"]), sw
    os_of = {d.name: plan.catalog.switches[d.model].os for d in plan.devices if d.kind == "switch"}
    for sw, why in idx["skipped"].items():
        if os_of[sw] in ("mlnx-os", "nvos"):
            assert why == f"railyard writes no per-switch config for {os_of[sw]} switches"
        else:  # the OOB access switches, which carry the OOB network
            assert sw.startswith("oob") and "OOB access switch" in why, (sw, why)
    # every Ethernet switch railyard configures boots from ZTP in these designs
    assert {sw for sw in switches if os_of[sw] in ("sonic", "eos", "cumulus")} - set(idx["skipped"]) == set(
        idx["switches"]
    )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_option_names_a_file_that_fetches_the_switch_own_configs(name: str) -> None:
    plan, files = compiled(name)
    idx = index(files)
    base = idx["url"]
    res = reservations(files)
    oses = set()
    for sw, entry in idx["switches"].items():
        oses.add(entry["os"])
        options = {o["code"]: o["data"] for o in res[sw]["option-data"]}
        # the reservation is this switch's: its planned address, and the option its OS reads
        assert res[sw]["ip-address"] == entry["address"]
        assert res[sw]["circuit-id"] == f"'{entry['circuit_id']}'"
        code = {"sonic": 67, "eos": 67, "cumulus": 239}[entry["os"]]
        assert options == {code: base + entry["fetches"][0]}
        assert {str(k): v for k, v in options.items()} == entry["dhcp_options"]
        for path in entry["fetches"]:
            assert path in files, (sw, path)  # every file it fetches is in the compiled folder
        first = files[entry["fetches"][0]]
        configs = [p for p in entry["fetches"] if not p.startswith("ztp/")]
        assert configs and all(f"/{sw}/" in p for p in configs)
        if entry["os"] == "sonic":
            assert entry["fetches"][0] == f"ztp/{sw}/ztp.json"
            doc = json.loads(first)["ztp"]
            assert list(doc) == ["01-frr-conf", "02-configdb-json"]  # lexical order is run order
            config_db = next(p for p in configs if p.endswith("/config_db.json"))
            assert doc["02-configdb-json"]["url"] == {
                "source": base + config_db,
                "destination": "/etc/sonic/config_db.json",
            }
            script = files[f"ztp/{sw}/frr-conf.sh"]
            assert doc["01-frr-conf"]["plugin"]["url"] == base + f"ztp/{sw}/frr-conf.sh"
            frr = next(p for p in configs if p.endswith("/frr.conf"))
            assert f'"{base + frr}"' in script and "/etc/sonic/frr/frr.conf" in script
            # split-unified is what makes bgp read that file rather than templates from config_db
            assert json.loads(files[config_db])["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == (
                "split-unified"
            )
        elif entry["os"] == "eos":
            assert first.startswith("#!/usr/bin/Cli -p2\n")
            assert f"\ncopy {base}{configs[0]} flash:startup-config\n" in first
            assert configs == [f"{plan.index()[sw].network}/{sw}/eos.cfg"]
        else:
            assert first.startswith("#!/bin/bash\n") and "\n# CUMULUS-AUTOPROVISIONING\n" in first
            assert configs == [f"{plan.index()[sw].network}/{sw}/startup.yaml"]
            assert f'"{base}{configs[0]}"' in first and "nv config replace" in first and first.endswith("exit 0\n")
    defs = kea(files).get("option-def", [])
    assert (defs == [{"name": "cumulus-provision-url", "code": 239, "type": "string", "space": "dhcp4"}]) == (
        "cumulus" in oses
    )
    assert defs or "cumulus" not in oses


def test_the_default_url_is_the_first_dhcp_server_and_the_summary_says_so() -> None:
    from generators.views.ztp import summary_row

    plan, files = compiled("h100-256")
    assert plan.netplan is not None
    assert index(files)["url"] == f"http://{plan.netplan.dhcp_servers[0]}:8080/"
    row = summary_row(plan)
    assert row is not None and row[2] == (
        f"8 switches from http://{plan.netplan.dhcp_servers[0]}:8080/ (default: first OOB DHCP server; ztp.url)"
    )


def test_ztp_url_and_onie_installers_reach_kea_which_accepts_them(tmp_path: Path) -> None:
    image = "http://192.0.2.9/images/sonic-mellanox.bin"
    _, files = compiled("golden-cumulus", "ztp.url=https://ztp.example.net/site1", f"ztp.onie_installers.sonic={image}")
    idx = index(files)
    assert idx["url"] == "https://ztp.example.net/site1/"
    res = reservations(files)
    for sw, entry in idx["switches"].items():
        options = {o["code"]: (o["name"], o["data"]) for o in res[sw]["option-data"]}
        assert all(d.startswith("https://ztp.example.net/site1/") for c, (_, d) in options.items() if c != 114)
        # only the OS named gets ONIE's option 114 (Kea's name for the code: v4-captive-portal)
        assert (options.get(114) == ("v4-captive-portal", image)) == (entry["os"] == "sonic"), sw
    assert {e["os"] for e in idx["switches"].values()} == {"sonic", "cumulus"}
    conf = tmp_path / "kea-dhcp4.conf"
    conf.write_text(files["oob/kea-dhcp4.conf"])
    ok, out = kea_check(conf)
    assert ok, out


def test_ztp_off_leaves_addresses_only() -> None:
    from generators.views.ztp import summary_row

    plan, files = compiled("golden-cumulus", "ztp.enabled=false")
    assert not [p for p in files if p.startswith("ztp/")]
    doc = kea(files)
    assert "option-def" not in doc
    assert not [r for s in doc["subnet4"] for r in s["reservations"] if "option-data" in r]
    assert summary_row(plan) == ("zero-touch provisioning", "oob", "off (ztp.enabled: false): addresses only")
    # the reservations themselves are the same as with ZTP on
    on = kea(compiled("golden-cumulus")[1])
    plain = ("option-data", "user-context")
    strip = [{k: v for k, v in r.items() if k not in plain} for s in on["subnet4"] for r in s["reservations"]]
    assert strip == [r for s in doc["subnet4"] for r in s["reservations"]]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ftp://10.0.0.5/", "must be an http:// or https:// URL with a host"),
        ("http://10.0.0.5:80a/", "is no URL"),
        ("http://10.0.0.5/?switch=1", "no ?query"),
    ],
)
def test_a_bad_ztp_url_is_refused_by_field(cli: Callable[..., Any], value: str, message: str) -> None:
    r = cli("validate", str(DESIGNS / "h100-256.yaml"), "--set", f"ztp.url={value}")
    assert r.exit_code == 2
    assert "ztp.url" in r.output and message in r.output and "Traceback" not in r.output


# ------------------------------------------------------------------------------------------ serve-ztp


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.golden import compile_into

    out = tmp_path_factory.mktemp("ztp") / "golden-cumulus"
    compile_into(GOLDEN["golden-cumulus"], out)
    return out


@pytest.fixture
def served(out_dir: Path) -> Iterator[tuple[str, list[str]]]:
    lines: list[str] = []
    server = make_server(load(out_dir), "127.0.0.1", 0, lines.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", lines
    finally:
        server.shutdown()
        server.server_close()


def fetch(url: str, method: str = "GET") -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_serve_ztp_serves_every_fetched_file_as_compiled(out_dir: Path, served: tuple[str, list[str]]) -> None:
    base, lines = served
    idx = json.loads((out_dir / "ztp/switches.json").read_text())
    for sw, entry in idx["switches"].items():
        for path in entry["fetches"]:
            assert fetch(base + path) == (200, (out_dir / path).read_bytes()), path
            assert lines[-1] == (
                f"127.0.0.1 GET /{path}: {sw}, {(out_dir / path).stat().st_size} bytes "
                f"(its planned address is {entry['address']})"
            )
    assert fetch(base + entry["fetches"][0], "HEAD") == (200, b"")


def test_serve_ztp_serves_nothing_else(out_dir: Path, served: tuple[str, list[str]]) -> None:
    base, lines = served
    (out_dir / "ztp" / "leak").symlink_to(out_dir / "plan.json")
    (out_dir / "oob" / "kea-link").symlink_to("/etc/hostname")
    try:
        private = ("plan.json", "ztp/../plan.json", "%2e%2e/%2e%2e/etc/passwd", "ztp/", "", "ztp/leak", "oob/kea-link")
        for path in (*private, "netbox/README.md"):
            assert fetch(base + path)[0] == 404, path
        assert lines[-1].endswith(": 404, not a file any switch fetches")
        # a listed file that a link has made point out of the folder is refused too
        entry = next(iter(json.loads((out_dir / "ztp/switches.json").read_text())["switches"].values()))
        target = out_dir / entry["fetches"][-1]
        saved = target.read_bytes()
        target.unlink()
        target.symlink_to("/etc/hostname")
        try:
            assert fetch(base + entry["fetches"][-1])[0] == 404
        finally:
            target.unlink()
            target.write_bytes(saved)
        status, _ = fetch(base + "ztp/switches.json", "POST")
        assert status == 501  # read-only: http.server answers methods it has no handler for so
    finally:
        (out_dir / "ztp" / "leak").unlink()
        (out_dir / "oob" / "kea-link").unlink()


def test_serve_ztp_refuses_a_folder_without_ztp(cli: Callable[..., Any], tmp_path: Path) -> None:
    r = cli("serve-ztp", str(tmp_path))
    assert r.exit_code == 2
    assert f"OUT_DIR: {tmp_path} has no ztp/switches.json" in r.output and "Traceback" not in r.output
    r = cli("serve-ztp", str(tmp_path / "none"))
    assert r.exit_code == 2 and "is no folder" in r.output
