"""Day 0 (issue 38): every switch config railyard renders carries the switch's management plane, from
the design's `management:` section, with placeholders where a credential belongs: on every shipped
design's compiled configs (SONiC config_db.json + frr.conf + users.sh, EOS eos.cfg, Cumulus NVUE
startup.yaml, MLNX-OS mgmt.cfg, NVOS mgmt.nv), the placeholders fill and hash as documented, and
`railyard validate` prints every resolved value. The real tools' checks of the same files are in
test_sonic_yang.py (SONiC YANG), test_eos.py/test_eos_text.py (pyavd) and test_frontend_tools.py (FRR
authenticated sessions between namespaces)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generators.model.plan import Plan
from generators.model.secrets import SECRETS, fill, placeholder, referenced, salt
from generators.renderers import render_all
from generators.vendors import render_backend, render_frontend, render_oob, render_storage
from generators.views.switches import mgmt_addresses
from tests.conftest import COMPILED_EXAMPLES

PH = re.compile(r"%%RAILYARD_SECRET\.[a-z_]+(\.[a-z0-9-]+\.[A-Za-z0-9_-]+)?%%")
AAA = (
    'management.tacacs_servers=[{"address": "10.9.0.1"}, {"address": "10.9.0.2", "port": 4949}]',
    'management.radius_servers=[{"address": "10.9.0.3", "timeout": 9}]',
    'management.users=[{"name": "admin", "ssh_keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk ops@site"]},'
    ' {"name": "noc", "role": "operator", "password_secret": "noc_password"}]',
)


def _switch_files(plan: Plan) -> dict[str, str]:
    return {**render_frontend(plan), **render_oob(plan), **render_backend(plan), **render_storage(plan)}


def _by_switch(plan: Plan, files: dict[str, str]) -> dict[str, dict[str, str]]:
    switches = {d.name for d in plan.devices if d.kind == "switch"}
    out: dict[str, dict[str, str]] = {}
    for path, text in files.items():
        # <network>/<switch>/<file>, or a second subnet's infiniband/storage/<switch>/<file>
        parts = path.split("/")
        if len(parts) in (3, 4) and parts[-2] in switches:
            out.setdefault(parts[-2], {})[parts[-1]] = text
    return out


def _check_switch(plan: Plan, name: str, files: dict[str, str]) -> None:
    """The management plane of one switch, in its OS's files, as the plan resolved it."""
    mp = plan.netplan.management  # type: ignore[union-attr]
    os_ = plan.catalog.switches[next(d.model for d in plan.devices if d.name == name)].os
    every = "\n".join(files.values())
    # a switch with a planned management port uses it, in the management VRF; the others (OOB access
    # switches) reach the services in-band, in the default VRF
    port = name in mgmt_addresses(plan)
    for a in (*mp.ntp, *mp.syslog, *mp.dns):
        assert a in every, (name, a)
    assert "switch_password" in referenced(every), name
    assert {"snmp_auth_password", "snmp_priv_password"} <= referenced(every), name
    if os_ == "sonic":
        db = json.loads(files["config_db.json"])
        assert set(db["NTP_SERVER"]) == set(mp.ntp) and set(db["SYSLOG_SERVER"]) == set(mp.syslog), name
        assert set(db["DNS_NAMESERVER"]) == set(mp.dns), name
        assert db["NTP"]["global"]["vrf"] == ("mgmt" if port else "default"), name
        assert {u["SNMP_USER_TYPE"] for u in db["SNMP_USER"].values()} == {"Priv"} and "SNMP_COMMUNITY" not in db
        assert db.get("MGMT_VRF_CONFIG") == ({"vrf_global": {"mgmtVrfEnabled": "true"}} if port else None), name
        assert "neighbor FABRIC password %%RAILYARD_SECRET.bgp_password%%" in files["frr.conf"], name
        assert re.search(
            r"^user admin 'sudo,\S+' '%%RAILYARD_SECRET\.switch_password\.sha512-crypt\.\w{16}%%'$",
            files["users.sh"],
            re.M,
        ), name
    elif os_ == "eos":
        text = files["eos.cfg"]
        assert re.search(
            r"^username admin privilege 15 role network-admin secret sha512 %%RAILYARD_SECRET\.", text, re.M
        )
        assert "snmp-server user monitor RAILYARD-RO v3 auth sha %%RAILYARD_SECRET.snmp_auth_password%%" in text
        assert re.search(r"^   neighbor \S+ password 7 %%RAILYARD_SECRET\.bgp_password\.eos-bgp7\.", text, re.M), name
        assert "ntp server vrf MGMT" in text and "logging vrf MGMT host" in text and "management ssh" in text
    elif os_ == "cumulus":
        doc = yaml.safe_load(files["startup.yaml"])[0]["set"]
        assert doc["system"]["aaa"]["user"]["admin"]["role"] == "system-admin", name
        vrf = "mgmt" if port else "default"
        assert set(doc["service"]["ntp"][vrf]["server"]) == set(mp.ntp), name
        assert doc["interface"]["eth0"]["ip"]["vrf"] == "mgmt" if port else "eth0" not in doc["interface"], name
        neighbors = doc["vrf"]["default"]["router"]["bgp"]["neighbor"]
        assert neighbors and {n["password"] for n in neighbors.values()} == {placeholder("bgp_password")}, name
    elif os_ == "mlnx-os":
        assert "snmp-server user monitor v3 auth sha %%RAILYARD_SECRET.snmp_auth_password%%" in files["mgmt.cfg"]
        assert re.search(
            r"^username admin password 7 %%RAILYARD_SECRET\.switch_password\.sha512-crypt\.", files["mgmt.cfg"], re.M
        )
    else:
        assert os_ == "nvos", os_
        assert (
            "nv set system aaa user admin hashed-password '%%RAILYARD_SECRET.switch_password.sha512" in files["mgmt.nv"]
        )


@pytest.mark.parametrize("name", COMPILED_EXAMPLES)
def test_every_switch_of_every_shipped_design_carries_its_management_plane(
    compiled: Callable[..., Plan], name: str
) -> None:
    plan = compiled(name)
    by_switch = _by_switch(plan, _switch_files(plan))
    switches = [d.name for d in plan.devices if d.kind == "switch" and d.network != "nvlink"]
    assert sorted(by_switch) == sorted(switches), "every switch has its config"
    for sw, files in by_switch.items():
        _check_switch(plan, sw, files)


def test_aaa_users_and_keys_reach_every_os(compiled: Callable[..., Plan]) -> None:
    """TACACS+, RADIUS, a second user with its own secret and an SSH key: on SONiC, EOS, Cumulus, MLNX-OS
    (h100-256's InfiniBand) and NVOS (b300-xdr's)."""
    seen: set[str] = set()
    for design, extra in (
        ("h100-256", ()),
        ("b300-xdr", ()),
        ("h100-256", ("frontend.vendor=eos", "frontend.switch=DCS-7060DX5-64S")),
        ("b300-spectrumx", ()),
    ):
        plan = compiled(design, *AAA, *extra)
        files = _switch_files(plan)
        every = "\n".join(files.values())
        assert {"tacacs_key", "radius_key", "noc_password", "switch_password"} <= referenced(every), design
        for path, text in files.items():
            if path.endswith("config_db.json"):
                db = json.loads(text)
                assert (
                    list(db["TACPLUS_SERVER"]) == ["10.9.0.1", "10.9.0.2"]
                    and db["TACPLUS_SERVER"]["10.9.0.2"]["tcp_port"] == "4949"
                )
                assert db["AAA"]["authentication"] == {"login": "tacacs+,radius,local", "failthrough": "True"}
                assert db["RADIUS_SERVER"]["10.9.0.3"]["timeout"] == "9"
            if path.endswith("users.sh"):
                assert "'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk ops@site'" in text
                assert re.search(r"^user noc '' '%%RAILYARD_SECRET\.noc_password\.sha512-crypt", text, re.M)
            if path.endswith("eos.cfg"):
                assert "aaa authentication login default group RAILYARD-TACACS group RAILYARD-RADIUS local" in text
                assert "username noc privilege 1 role network-operator secret sha512" in text
                assert "username admin ssh-key ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk ops@site" in text
            seen.add(path.rsplit("/", 1)[1])
            if path.endswith("mgmt.cfg"):
                assert "tacacs-server host 10.9.0.2 auth-port 4949 timeout 5 key %%RAILYARD_SECRET.tacacs_key%%" in text
                assert "radius-server host 10.9.0.3 auth-port 1812 timeout 9 key %%RAILYARD_SECRET.radius_key%%" in text
                assert "\naaa authentication login default tacacs+ radius local\n" in text
                assert "\nusername noc capability monitor\n" in text
            if path.endswith("mgmt.nv"):
                assert (
                    "nv set system aaa tacacs server 10.9.0.1 port 49 timeout 5 priority 1 secret '%%RAILYARD_SECRET."
                    in text
                )
                assert (
                    "nv set system aaa radius server 10.9.0.3 port 1812 timeout 9 priority 1 secret '%%RAILYARD_SECRET."
                    in text
                )
                order = re.findall(r"^nv set system aaa authentication order (\d) (\w+)$", text, re.M)
                assert order == [("1", "tacacs"), ("2", "radius"), ("3", "local")]
                assert "nv set system aaa user admin ssh authorized-key key1 type ssh-ed25519" in text
            if path.endswith("startup.yaml") and "/swp" not in path:
                aaa = yaml.safe_load(text)[0]["set"]["system"]["aaa"]
                assert aaa["user"]["noc"]["role"] == "nvue-monitor"
                assert aaa["authentication-order"] == {
                    1: {"method": "tacacs"},
                    2: {"method": "radius"},
                    10: {"method": "local"},
                }
    assert {"config_db.json", "users.sh", "eos.cfg", "startup.yaml", "mgmt.cfg", "mgmt.nv"} <= seen


def test_bgp_auth_none_and_no_mgmt_vrf(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", "management.bgp_auth=none", "management.mgmt_vrf=false")
    files = _switch_files(plan)
    assert not any("password" in t for p, t in files.items() if p.endswith("frr.conf"))
    db = json.loads(files["frontend/fe-leaf01/config_db.json"])
    assert db["MGMT_VRF_CONFIG"] == {"vrf_global": {"mgmtVrfEnabled": "false"}}
    assert db["NTP"]["global"]["vrf"] == "default" and {s["vrf"] for s in db["SYSLOG_SERVER"].values()} == {"default"}


def test_plan_json_and_compiled_files_hold_placeholders_only(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *AAA)
    files = render_all(plan)
    assert not referenced(files["plan.json"]), "plan.json names secrets, never holds one"
    assert json.loads(files["plan.json"])["netplan"]["management"]["users"][1]["password_secret"] == "noc_password"
    held = {p for p, t in files.items() if referenced(t)}
    assert held and all(p.startswith(("frontend/", "oob/", "backend/", "infiniband/")) for p in held)


def test_placeholders_fill_hash_and_refuse() -> None:
    """Each form, with the libraries the deployment uses; errors name the secret, never the value."""
    s = salt("d", "sw1", "admin")
    assert re.fullmatch(r"[A-Za-z0-9]{16}", s) and s == salt("d", "sw1", "admin") != salt("d", "sw2", "admin")
    text = " ".join(
        [
            placeholder("switch_password", "sha512-crypt", s),
            placeholder("bgp_password"),
            placeholder("bgp_password", "eos-bgp7", "IPv4-UNDERLAY-PEERS"),
            placeholder("tacacs_key", "eos-type7", "0"),
        ]
    )
    values = {"switch_password": "Sw-pass-1234", "bgp_password": "Bgp-md5-5678", "tacacs_key": "Tac-key-9012"}
    hashed, plain, bgp7, type7 = fill(text, values).split(" ")
    # crypt(3)'s SHA-512 of the value with that salt: what chpasswd -e, NVUE and EOS take
    from passlib.hash import sha512_crypt
    from pyavd._utils.password_utils import bgp_decrypt, tacacs_decrypt

    assert hashed.startswith(f"$6${s}$") and sha512_crypt.verify("Sw-pass-1234", hashed)
    assert plain == "Bgp-md5-5678" and bgp_decrypt(bgp7, key="IPv4-UNDERLAY-PEERS") == "Bgp-md5-5678"
    assert tacacs_decrypt(type7) == "Tac-key-9012"
    assert fill(text, values) == fill(text, values), "the same value deploys the same bytes"
    for bad in ("short", "has space in it", "colon:in:it", "at@sign99", "hash#sign99", "comma,sign99"):
        with pytest.raises(Exception) as err:
            fill(text, {**values, "bgp_password": bad})
        assert bad not in str(err.value) and "railyard:bgpPassword" in str(err.value)
    assert set(SECRETS) >= {"switch_password", "snmp_auth_password", "snmp_priv_password", "bgp_password"}


def test_validate_prints_the_resolved_management_plane(cli: Callable[..., Any]) -> None:
    from tests.conftest import DESIGNS

    r = cli("validate", DESIGNS / "h100-256.yaml", "--set", AAA[0])
    text = r.output
    assert r.exit_code == 0 and "ok: h100-256 is valid" in text
    assert "NTP servers: 10.64.15.254, 10.64.15.253 (default: the OOB DHCP servers" in text
    assert "TACACS+: 10.9.0.1:49 (timeout 5 s), 10.9.0.2:4949 (timeout 5 s)" in text
    assert "RADIUS: none (local logins only)" in text and "SNMPv3 users: monitor (ro, authPriv SHA/AES-128)" in text
    assert "tacacs_key (railyard:tacacsKey)" in text and "BGP session authentication: TCP-MD5" in text
    r = cli("validate", DESIGNS / "h100-256.yaml", "--set", "management.ntp_servers=[10.0.0.1]", "--json")
    doc = json.loads(r.output)["management"]
    assert doc["ntp"] == ["10.0.0.1"] and doc["defaulted"] == ["syslog", "dns"]
    assert doc["secrets"]["switch_password"] == "railyard:switchPassword"


def test_users_sh_runs_under_sh_and_hands_chpasswd_the_hash(compiled: Callable[..., Plan], tmp_path: Path) -> None:
    """The deployed users.sh under the system's /bin/sh, with the commands it calls (useradd, usermod,
    chpasswd, ...) replaced by stubs that record their arguments and input (a unit test: the real ones
    would change this machine's users): it creates a missing user with the planned groups, hands
    `chpasswd --encrypted` the SHA-512 crypt hash of the password, never the password, and writes the
    SSH keys."""
    from passlib.hash import sha512_crypt

    plan = compiled("h100-256", AAA[2])
    users = render_all(plan)["frontend/fe-leaf01/users.sh"]
    text = fill(users, {"switch_password": "Sw-pass-1234", "noc_password": "Noc-pass-5678"})
    script = tmp_path / "users.sh"
    script.write_text(text)
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0
    bin_, home, log = tmp_path / "bin", tmp_path / "home", tmp_path / "log"
    bin_.mkdir()
    stubs = {
        "id": 'case "$1" in -u) exit 1;; -gn) echo "$2";; esac',  # no user exists yet
        "useradd": 'echo "useradd $*" >>"$LOG"; mkdir -p "$HOMES/$4"',
        "usermod": 'echo "usermod $*" >>"$LOG"',
        "chpasswd": 'echo "chpasswd $* <$(cat)" >>"$LOG"',
        "getent": 'echo "$2:x:1000:1000::$HOMES/$2:/bin/bash"',
        "install": 'for a; do d=$a; done; mkdir -p "$d"',  # install -d ... DIR: the last argument
        "chown": ":",
    }
    for name, body in stubs.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "LOG": str(log), "HOMES": str(home)}
    r = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    assert "useradd --create-home --shell /bin/bash admin" in calls
    assert "usermod --groups sudo,docker,redis,adm admin" in calls and "usermod --groups  noc" in calls
    hashes = dict(c.split(" <", 1)[1].split(":", 1) for c in calls if c.startswith("chpasswd --encrypted <"))
    assert sha512_crypt.verify("Sw-pass-1234", hashes["admin"]) and sha512_crypt.verify("Noc-pass-5678", hashes["noc"])
    assert "Sw-pass-1234" not in log.read_text()
    keys = (home / "admin" / ".ssh" / "authorized_keys").read_text()
    assert keys == "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGk ops@site\n"
    assert (home / "noc" / ".ssh" / "authorized_keys").read_text() == ""
