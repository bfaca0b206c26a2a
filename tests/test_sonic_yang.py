"""SONiC configs a released SONiC loads: the target release (frontend.sonic_release, oob.sonic_release)
decides which tables and fields config_db.json carries, port names follow each platform's lanes, and
every shipped design's config_db.json passes SONiC's own YANG models (../shared/sonic-yang/check.sh,
or $SONIC_YANG_DATA) for the default release and for master."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from generators.compiler import compile_file
from generators.model.catalog import DEFAULT_CATALOG, load_catalog
from generators.model.errors import DesignError
from generators.model.netdesign import DEFAULT_SONIC_RELEASE
from generators.model.netos import network_os
from generators.model.plan import Plan
from generators.model.ports import port_table
from generators.model.secrets import fill_files
from generators.renderers import render_plan_json
from generators.vendors import render_backend, render_frontend, render_oob
from tests.conftest import COMPILED_EXAMPLES, DESIGNS
from tests.pulumi_engine import SITE_SECRETS
from tests.realtools import sonic_yang_check, sonic_yang_dir

SHIPPED = COMPILED_EXAMPLES  # the 131,072-GPU designs are compiled whole only by bench/multiplane.py
MASTER = ("frontend.sonic_release=master", "oob.sonic_release=master")
ROCE_MASTER = ("backend.sonic_release=master",)  # only for designs with a SONiC RoCE backend

# SONiC catalog switches the shared platform data has no port_config.ini for; each must be in no shipped
# design (check.sh's MERGE_PORTS=auto would have no port list to merge), and leaves this list once the
# data holds its platform
# (SN5600-512x100G and TH6-64x1600G are only in the 131,072-GPU designs, which are bench-only; the UALink
# tray is a scale-up switch inside a Helios rack that railyard wires but writes no config for)
NO_PLATFORM = {"SN4600C", "SN5600-800G", "SN5600-512x100G", "TH6-64x1600G", "UALink-switch-tray"}
# A catalog switch run at a split speed (a plan model "KEY@NxSPEED") whose ports then carry the names
# and lanes of another model's platform: check.sh merges it over that one (the same chassis, O128 hwsku)
STAND_IN = {"SN5600-800G@2x400G": "SN5600"}
# shipped designs whose switches run another OS, checked on their SONiC chassis too: b300-spectrumx ships on
# Cumulus, and its SONiC form is the one design with a split-port (2 x 400G) SONiC backend
SONIC_VARIANTS = [("b300-spectrumx", "backend.switch=SN5600-800G")]


def _sonic_files(plan: Plan) -> dict[str, str]:
    # only what check.sh reads: the SONiC configs and plan.json (which maps hostnames to catalog models).
    # The backend's files come from the renderer of its switches' OS (generators.vendors.render_backend);
    # only SONiC's writes config_db.json, so an InfiniBand, Cumulus or EOS backend is not rendered (at
    # h100-16k's size its files cost more than the rest together, and check.sh would skip them)
    files = {**render_plan_json(plan), **render_frontend(plan), **render_oob(plan)}
    if network_os(plan.catalog.switches[plan.networks.backend.switch].os).renderer == "sonic":
        files.update(render_backend(plan))
    return files


def _db(plan: Plan, path: str) -> dict:
    return json.loads(_sonic_files(plan)[path])


# ------------------------------------------------------------------------------- release choices


def test_default_release_writes_no_sag_but_one_gateway_mac_and_says_so(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    assert plan.design.frontend.sonic_release == DEFAULT_SONIC_RELEASE == "202605"
    db = _db(plan, "frontend/fe-leaf01/config_db.json")
    assert "SAG" not in db
    mac = plan.design.frontend.evpn.anycast_gateway_mac
    svi = db["VLAN_INTERFACE"]
    addressed = {k.split("|")[0] for k in svi if "|" in k}
    gateways = {k: v for k, v in svi.items() if k in addressed}
    assert gateways, "the leaf has tenant gateway interfaces"
    assert all(v == {"vrf_name": v["vrf_name"], "mac_addr": mac} for v in gateways.values())
    # the same gateway address on every leaf that carries the VLAN
    other = _db(plan, "frontend/fe-leaf02/config_db.json")["VLAN_INTERFACE"]
    assert [k for k in svi if "|" in k] == [k for k in other if "|" in k]
    # the design chose nothing wrong: no warning, the summary says how the gateway is made
    assert not [w for w in plan.warnings if w.field == "frontend.sonic_release"]


def test_the_summary_names_the_releases(cli: Callable[..., object], tmp_path: Path) -> None:
    r = cli("compile", DESIGNS / "h100-256.yaml", "-o", tmp_path / "out", "--set", "oob.sonic_release=202511")
    text = " ".join(r.output.split())  # the table wraps long cells
    assert "release 202605" in text and "SONiC release │ oob │ 202511" in text
    assert "anycast gateway │ frontend │ 02:00:00:00:01:01:" in text and "VLAN_INTERFACE mac_addr" in text
    assert "warning" not in text


def test_master_renders_sag_and_no_warning(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *MASTER)
    db = _db(plan, "frontend/fe-leaf01/config_db.json")
    assert db["SAG"] == {"GLOBAL": {"gateway_mac": plan.design.frontend.evpn.anycast_gateway_mac}}
    svis = [v for k, v in db["VLAN_INTERFACE"].items() if "|" not in k and "static_anycast_gateway" in v]
    assert svis and not any("mac_addr" in v for v in db["VLAN_INTERFACE"].values())
    assert not [w for w in plan.warnings if w.field == "frontend.sonic_release"]
    assert _db(plan, "oob/oob-agg1/config_db.json")["DEVICE_METADATA"]["localhost"]["type"] == "MgmtLeafRouter"


def test_oob_on_202405_uses_a_device_type_it_knows(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", "oob.sonic_release=202405")
    types = {
        name: _db(plan, f"oob/{name}/config_db.json")["DEVICE_METADATA"]["localhost"]["type"]
        for name in ("oob-agg1", "oob-r01-01")
    }
    assert types == {"oob-agg1": "LeafRouter", "oob-r01-01": "MgmtToRRouter"}


def test_unquoted_release_reads_as_the_branch(tmp_path: Path) -> None:
    # YAML reads 202511 as a number; the user means the branch
    d = tmp_path / "d.yaml"
    d.write_text(
        f"extends: {DESIGNS / 'h100-256.yaml'}\nfrontend:\n  sonic_release: 202511\noob:\n  sonic_release: 202405\n"
    )
    design = compile_file(d, [])[0].design
    assert (design.frontend.sonic_release, design.oob.sonic_release) == ("202511", "202405")


@pytest.mark.parametrize(
    ("name", "overrides", "field", "words"),
    [
        (
            "h100-256",
            ["frontend.sonic_release=202405"],
            "frontend.sonic_release",
            "SONiC 202405 models neither a static anycast gateway",
        ),
        ("h100-256", ["frontend.sonic_release=202406"], "frontend.sonic_release", "202405"),
        # the reference's OOB access switches run Cumulus, and uplinked into the frontend it has no other
        (
            "h100-1024-reference",
            ["oob.uplink=frontend", "oob.sonic_release=202511"],
            "oob.sonic_release",
            "no out-of-band switch runs SONiC",
        ),
    ],
)
def test_a_release_railyard_cannot_serve_is_refused(name: str, overrides: list[str], field: str, words: str) -> None:
    with pytest.raises(DesignError) as exc:
        compile_file(DESIGNS / f"{name}.yaml", overrides)
    hits = [p for p in exc.value.problems if p.field == field]
    assert hits, [(p.field, p.message) for p in exc.value.problems]
    assert any(words in p.message for p in hits), [p.message for p in hits]
    assert all(p.where.startswith("--set") or p.where for p in hits)  # the --set or YAML line to look at


# ------------------------------------------------------------------------------- platform port names


def _platforms() -> dict[str, Path]:
    d = sonic_yang_dir()
    out: dict[str, Path] = {}
    for line in (d / "platforms.tsv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            switch, platform, hwsku = line.split("\t")
            out[switch] = d / "platforms" / platform / hwsku / "port_config.ini"
    return out


def _ini_ports(path: Path) -> list[tuple[str, int, int | None]]:
    """(name, lane count, speed in Gb/s or None) per port of a port_config.ini, in file order."""
    ports = []
    for line in path.read_text().splitlines():
        cols = line.split()
        if not cols or cols[0].startswith("#"):
            continue
        speed = int(cols[4]) // 1000 if len(cols) > 4 else None
        ports.append((cols[0], len(cols[1].split(",")), speed))
    return ports


def test_every_sonic_switch_names_its_ports_as_its_platform_does() -> None:
    catalog = load_catalog(DEFAULT_CATALOG)
    platforms = _platforms()
    sonic = {k for k, s in catalog.switches.items() if s.os == "sonic"}
    assert sonic - set(platforms) == NO_PLATFORM, "platforms.tsv gained or lost a SONiC switch: update NO_PLATFORM"
    for key in sorted(sonic & set(platforms)):
        sw = catalog.switches[key]
        speeds = {s for g in sw.port_groups for s in (g.speed_gbps, *g.speeds_gbps)}
        # the platform's ports at speeds the model is not sold for here (SN5600's 25G service port) stay out
        ini = [(n, lanes) for n, lanes, speed in _ini_ports(platforms[key]) if speed is None or speed in speeds]
        ours = [(p.name, sw.port_groups[p.group].lanes or 1) for p in port_table(sw)]  # no lanes: one, as naming counts
        assert ours == ini, f"{key}: railyard's (name, lanes) differ from {platforms[key]}"


@pytest.mark.large
def test_no_shipped_design_uses_a_switch_without_a_platform(compiled: Callable[..., Plan]) -> None:
    # (a rack system's scale-up trays, on its backplane, get no config from railyard)
    used = {d.model for name in SHIPPED for d in compiled(name).devices if d.kind == "switch" and d.network != "nvlink"}
    # a split model ("KEY@2x400G") is its catalog key's chassis: it needs a platform or a stand-in
    assert not {m for m in used if m.split("@")[0] in NO_PLATFORM} - set(STAND_IN)


def test_a_stand_in_platform_has_the_split_models_port_names() -> None:
    catalog = load_catalog(DEFAULT_CATALOG)
    platforms = _platforms()
    for model, stand_in in STAND_IN.items():
        key, split = model.split("@")
        speed = int(split.split("x")[1].rstrip("G"))
        split_model = catalog.switches[key].broken_out(speed)  # the entry the fabric wires (Catalog.switch_at)
        assert catalog.switch_at(key, speed) == model
        ours = [(p.name, split_model.port_groups[p.group].lanes) for p in port_table(split_model)]
        ini = [(n, lanes) for n, lanes, s in _ini_ports(platforms[stand_in]) if s == speed]
        assert ours == ini, f"{model}: its split ports differ from {stand_in}'s platform"


# ------------------------------------------------------------------------------- SONiC's YANG models


def _write(files: dict[str, str], root: Path) -> list[Path]:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return [root / sub for sub in ("frontend", "oob", "backend") if (root / sub).is_dir()]


@pytest.mark.large
@pytest.mark.daemons
@pytest.mark.large  # every shipped design includes h100-16k
@pytest.mark.parametrize(("release", "overrides"), [(DEFAULT_SONIC_RELEASE, ()), ("master", MASTER)])
def test_every_shipped_design_loads_in_sonic(
    compiled: Callable[..., Plan], tmp_path: Path, release: str, overrides: tuple[str, ...]
) -> None:
    """check.sh with MERGE_PORTS=auto (each file over its platform's port_config.ini, as `config load` onto a
    factory CONFIG_DB), one call for all designs: 0 errors. Fails, never skips, without the checker."""
    dirs: dict[str, list[Path]] = {"auto": []}  # MERGE_PORTS value -> folders
    backends = 0
    for name, *chassis in [(n,) for n in SHIPPED] + SONIC_VARIANTS:
        plan = compiled(name, *chassis)
        roce = plan.backend_net is not None and plan.catalog.switches[plan.design.backend.switch].os == "sonic"
        plan = compiled(name, *chassis, *overrides, *(ROCE_MASTER if roce and overrides else ()))
        for d in _write(_sonic_files(plan), tmp_path / "-".join([name, *chassis])):
            if not any(d.rglob("config_db.json")):  # a network whose switches run another OS
                continue
            model = next((x.model for x in plan.devices if x.name == next(d.iterdir()).name), "")
            dirs.setdefault(STAND_IN.get(model, "auto"), []).append(d)
            backends += d.name == "backend"
    assert backends >= 2, "the check covers the RoCE designs' backends"
    for merge, ds in dirs.items():
        n = sum(1 for d in ds for _ in d.rglob("config_db.json"))
        r = sonic_yang_check(release, ds, merge_ports=merge)
        assert r.files == n > 0
        assert r.errors == [], "\n".join(r.errors[:40])


@pytest.mark.daemons
def test_the_check_catches_what_a_release_lacks(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    """The same check is not one that cannot fail: master's SAG output is refused by the default release,
    and the old AS4630-54TE name of its second 100G uplink (Ethernet53) by any release."""
    plan = compiled("h100-256", *MASTER)
    files = {
        k: v
        for k, v in _sonic_files(plan).items()
        if k in ("plan.json", "frontend/fe-leaf01/config_db.json", "oob/oob-r01-01/config_db.json")
    }
    files["oob/oob-r01-01/config_db.json"] = files["oob/oob-r01-01/config_db.json"].replace("Ethernet56", "Ethernet53")
    r = sonic_yang_check(DEFAULT_SONIC_RELEASE, _write(files, tmp_path))
    assert r.files == 2
    tables = {(e.split("\t")[1], e.split("\t")[2]) for e in r.errors}
    assert ("SAG", "-") in tables
    assert ("PORT", "Ethernet53") in tables
    assert any("static_anycast_gateway" in e for e in r.errors)


# ------------------------------------------------------------------ management plane (issue 38)

MGMT_AAA = (
    'management.tacacs_servers=[{"address": "10.9.0.1"}, {"address": "10.9.0.2", "port": 4949, "timeout": 9}]',
    'management.radius_servers=[{"address": "10.9.0.3"}]',
    'management.snmp_users=[{"name": "monitor"}, {"name": "writer", "access": "rw"}]',
)


@pytest.mark.daemons
@pytest.mark.parametrize("release", ["202505", "202511", DEFAULT_SONIC_RELEASE, "master"])
def test_the_management_plane_loads_as_compiled_and_as_deployed(
    compiled: Callable[..., Plan], tmp_path: Path, release: str
) -> None:
    """h100-256 (frontend, OOB aggregation with a management port, OOB access switches without one) with
    TACACS+, RADIUS and two SNMPv3 users, on every release the frontend renders for: the compiled files
    (placeholders) and the deployed ones (values filled as a deployment fills them) both pass SONiC's
    YANG models, NTP/SYSLOG_SERVER/DNS_NAMESERVER/SNMP_USER/TACPLUS/RADIUS/AAA included."""
    sag = ("frontend.sonic_release=master",) if release == "master" else (f"frontend.sonic_release={release}",)
    oob = (f"oob.sonic_release={release}",)
    plan = compiled("h100-256", *MGMT_AAA, *sag, *oob)
    files = _sonic_files(plan)
    db = json.loads(files["frontend/fe-leaf01/config_db.json"])
    want = {"NTP", "NTP_SERVER", "SYSLOG_SERVER", "DNS_NAMESERVER", "SNMP_USER", "TACPLUS", "TACPLUS_SERVER"}
    assert want | {"RADIUS", "RADIUS_SERVER", "AAA", "MGMT_VRF_CONFIG"} <= set(db)
    secrets = {**SITE_SECRETS, "tacacs_key": "Tacacs-key-4a1f09", "radius_key": "Radius-key-88c2d3"}
    deployed = fill_files(files, secrets)[0]
    assert "Snmp-auth-test-5d1e" in deployed["frontend/fe-leaf01/config_db.json"]
    r = sonic_yang_check(release, [*_write(files, tmp_path / "compiled"), *_write(deployed, tmp_path / "deployed")])
    assert r.files == 2 * sum(p.endswith("config_db.json") for p in files) > 0
    assert r.errors == [], "\n".join(r.errors[:40])


@pytest.mark.daemons
def test_the_yang_check_refuses_a_management_table_gone_wrong(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    """Not a check that cannot fail: an SNMP password with `@` (SONiC's pattern refuses it), a TACACS+
    server in a VRF SONiC does not know, and AAA with tacacs+ but no TACPLUS passkey are each refused."""
    plan = compiled("h100-256", *MGMT_AAA)
    files = {k: v for k, v in _sonic_files(plan).items() if k in ("plan.json", "frontend/fe-leaf01/config_db.json")}
    db = json.loads(files["frontend/fe-leaf01/config_db.json"])
    db["SNMP_USER"]["monitor"]["SNMP_USER_AUTH_PASSWORD"] = "has@sign-12345"
    db["TACPLUS_SERVER"]["10.9.0.1"]["vrf"] = "Vrf_nope"
    del db["TACPLUS"]["global"]["passkey"]
    files["frontend/fe-leaf01/config_db.json"] = json.dumps(db)
    r = sonic_yang_check(DEFAULT_SONIC_RELEASE, _write(files, tmp_path))
    tables = {e.split("\t")[1] for e in r.errors}
    assert {"SNMP_USER", "TACPLUS_SERVER", "AAA"} <= tables, r.errors
