"""Hostile and broken inputs: every one is refused with exit 2 and a message naming the field or file
(and YAML line), or works; none ends in a traceback, data loss or a runaway process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import COMPILED_EXAMPLES, DESIGNS, ROOT


# every shipped design but h100-16k (12 s; the same frontend code path as the others)
@pytest.mark.parametrize("name", [n for n in COMPILED_EXAMPLES if n != "h100-16k"])
def test_single_homed_servers_compile(cli, tmp_path, name):
    # dual-homed storage under single-homed servers once put two links on one leaf port
    r = cli("compile", DESIGNS / f"{name}.yaml", "--set", "frontend.ports_per_server=1", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.stderr
    plan = json.loads((tmp_path / "o" / "plan.json").read_text())
    used = [(lk[e]["device"], lk[e]["port"]) for lk in plan["links"] for e in ("a", "b")]
    assert len(used) == len(set(used))
    servers = {d["name"] for d in plan["devices"] if d["kind"] == "server"}
    fe = [lk for lk in plan["links"] if lk["network"] == "frontend" and lk["a"]["device"] in servers]
    assert len(fe) == len(servers)


# ------------------------------------------------------------------ YAML and file reading, by class

SMALL = DESIGNS / "h100-256.yaml"
BASE = "name: x\ncompute:\n  count: 64\n"
BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    + "name: *i\n"
)


def refused(r, *texts: str) -> str:
    err = r.stderr
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output + err
    for t in texts:
        assert t in err, err
    return err


# (file text or bytes, what the message must say); the design file is d.yaml
CORPUS = [
    pytest.param(BOMB, ["d.yaml:", "values after expanding aliases (an alias bomb?)"], id="alias-bomb"),
    pytest.param("a: &a [*a]\nname: x\n", ["d.yaml:1", "recursive alias"], id="recursive-alias"),
    pytest.param(
        "name: " + "[" * 5000 + "]" * 5000 + "\n", ["d.yaml:1", "nested more than 48 levels deep"], id="deep-nesting"
    ),
    pytest.param("name: !!python/object/apply:os.system [echo hi]\n", ["d.yaml:1: name:", "tag "], id="python-tag"),
    pytest.param("name: !secret x\n", ["d.yaml:1: name:", "tag !secret"], id="unknown-tag"),
    pytest.param(
        BASE + "x: &b {a: 1}\nbackend:\n  <<: [1]\n", ["d.yaml:6: backend.<<:", "merge key"], id="merge-of-a-scalar"
    ),
    pytest.param(
        BASE + "backend:\n  oversubscription: fast\n  <<: {}\n",
        ["d.yaml:5: backend.oversubscription"],
        id="merge-keeps-lines",
    ),
    pytest.param(
        "name: x\ncompute:\n  count: 64\n  config: {nvme_tb: .inf}\n",
        ["d.yaml:4: compute.config.nvme_tb: .inf is not a finite number"],
        id="inf",
    ),
    pytest.param(
        "name: x\ncompute:\n  count: 64\nstorage: {capacity_pb: .nan}\n",
        ["d.yaml:4: storage.capacity_pb: .nan is not a finite number"],
        id="nan",
    ),
    pytest.param("name: x\n\ncompute: \xff\n".encode("latin-1"), ["d.yaml:3", "byte 0xff is not UTF-8"], id="not-utf8"),
    pytest.param(BASE.encode("utf-16"), ["d.yaml:1", "UTF-16"], id="utf-16"),
    pytest.param(b"name: x\ncompute:\n  count: 6\x004\n", ["d.yaml:3", "NUL byte"], id="nul-byte"),
    pytest.param("- 1\n" * 300_000, ["bytes, more than the 1,048,576 allowed"], id="huge-list"),
    pytest.param("name: x\nname: y\n", ["d.yaml:2: name: key appears twice"], id="duplicate-key"),
    pytest.param("name: x\n  bad: indent\n", ["d.yaml:2", "not valid YAML"], id="bad-yaml"),
    pytest.param("[1, 2]\n", ["a design must be a YAML mapping"], id="not-a-mapping"),
    pytest.param("{[1]: x}\n", ["d.yaml:1", "a key must be a plain name"], id="list-key"),
]


@pytest.mark.parametrize(("content", "texts"), CORPUS)
def test_hostile_yaml_is_refused_by_line(cli, tmp_path, content, texts):
    p = tmp_path / "d.yaml"
    (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
    refused(cli("validate", p), *texts)


def test_merge_keys_are_supported(cli, tmp_path):
    p = tmp_path / "d.yaml"
    p.write_text(f"extends: {SMALL}\n_defaults: &fe {{ports_per_server: 1}}\nfrontend:\n  <<: *fe\n")
    refused(cli("validate", p), "d.yaml:2: _defaults: unknown field")  # the anchor's holder is still a field
    p.write_text(
        f"extends: {SMALL}\nfrontend: &fe\n  ports_per_server: 1\nstorage:\n  <<: *fe\n  ports_per_server: 2\n"
    )
    r = cli("validate", p)
    assert r.exit_code == 0, r.stderr  # merged key overridden by the explicit one, both accepted


def test_misspelt_key_gets_a_suggestion(cli):
    err = refused(cli("validate", SMALL, "--set", "backend.oversubscripton=2:1"))
    assert "backend.oversubscripton: unknown field" in err and "did you mean 'oversubscription'?" in err


def test_non_finite_set_names_the_field(cli):
    refused(
        cli("validate", SMALL, "--set", "storage.capacity_pb=.inf"),
        "--set storage.capacity_pb=.inf: storage.capacity_pb: .inf is not a finite number",
    )


@pytest.mark.parametrize(
    ("sets", "text"),
    [
        ("storage.count=100000000", "storage.count: Input should be less than or equal to 2048"),
        ("management.count=100000000", "management.count: Input should be less than or equal to 256"),
        (
            "site.rows=[" + ",".join(f"{{name: r{i}, positions: 200}}" for i in range(1001)) + "]",
            "site.rows: List should have at most 1000 items",
        ),
    ],
)
def test_sizes_that_would_run_away_are_refused(cli, sets, text):
    # these once ran past 4 GiB and 30 s; a long --set is shortened where it is echoed
    err = refused(cli("validate", SMALL, "--set", sets), text)
    assert len(max(err.splitlines(), key=len)) < 300


def test_extends_chain_is_limited_and_named(cli, tmp_path):
    (tmp_path / "f0.yaml").write_text(BASE)
    for i in range(1, 21):
        (tmp_path / f"f{i}.yaml").write_text(f"extends: f{i - 1}.yaml\n")
    refused(cli("validate", tmp_path / "f20.yaml"), "extends: the extends chain is longer than 16 files")


def test_circular_extends_names_the_files(cli, tmp_path):
    (tmp_path / "a.yaml").write_text("extends: b.yaml\nname: a\n")
    (tmp_path / "b.yaml").write_text("extends: c.yaml\nname: b\n")
    (tmp_path / "c.yaml").write_text("extends: a.yaml\nname: c\n")
    err = refused(cli("validate", tmp_path / "a.yaml"), "c.yaml:1: extends: circular extends:")
    assert "a.yaml -> " in err and "b.yaml -> " in err and err.count("a.yaml") >= 2


def test_error_in_an_extended_file_names_extends(cli, tmp_path):
    (tmp_path / "base.yaml").write_text("name: base\ncompute: [\n")
    (tmp_path / "d.yaml").write_text("extends: base.yaml\nname: d\n")
    refused(cli("validate", tmp_path / "d.yaml"), "base.yaml:", "(in base.yaml, which", "d.yaml extends)")


def test_symlink_loops(cli, tmp_path):
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    refused(cli("validate", loop), "loop.yaml", "symlink loop")
    (tmp_path / "d.yaml").write_text("extends: loop.yaml\nname: d\n")
    refused(cli("validate", tmp_path / "d.yaml"), "extends", "symlink loop")


def test_special_files_are_refused_without_reading(cli, tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # opening it for reading would block forever
    refused(cli("validate", fifo), "is not a regular file")
    refused(cli("validate", tmp_path), "is a folder")
    refused(cli("validate", tmp_path / "missing.yaml"), "cannot read", "No such file")


# ------------------------------------------------------------------------ memory and time, measured

MEASURE = """
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic() - t, r.returncode)
sys.stderr.write(r.stderr)
"""


def measured(*args: object) -> tuple[int, float, int, str]:
    """(peak RSS in KiB, seconds, exit code, stderr) of `railyard ARGS` run in a fresh child."""
    cmd = [sys.executable, "-c", MEASURE, sys.executable, "-m", "generators.cli", *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    rss, secs, rc = r.stdout.split()
    return int(rss), float(secs), int(rc), r.stderr


@pytest.fixture(scope="module")
def topology(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("c") / "out"
    subprocess.run(
        [sys.executable, "-m", "generators.cli", "compile", str(SMALL), "--out", str(out), "-q"],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return out / "infiniband" / "topology.net"


@pytest.mark.parametrize("case", ["alias-bomb", "design", "extends", "ibnetdiscover"])
def test_bombs_are_refused_in_bounded_memory(tmp_path, topology, case):
    if case == "alias-bomb":
        (tmp_path / "d.yaml").write_text(BOMB)
        args, text = ["validate", tmp_path / "d.yaml"], "alias bomb"
    elif case == "design":
        args, text = ["validate", "/dev/zero"], "/dev/zero is not a regular file"
    elif case == "extends":
        (tmp_path / "d.yaml").write_text("extends: /dev/zero\nname: x\n")
        args, text = ["validate", tmp_path / "d.yaml"], "/dev/zero is not a regular file"
    else:
        args, text = ["verify", SMALL, "--ibnetdiscover", "/dev/zero"], "--ibnetdiscover: /dev/zero is not a regular"
    rss_kib, secs, rc, err = measured(*args)
    assert rc == 2, err
    assert text in err and "Traceback" not in err
    assert rss_kib < 200 * 1024, f"{rss_kib / 1024:.0f} MiB"
    print(f"{case}: {rss_kib / 1024:.0f} MiB peak, {secs:.2f} s")


# ---------------------------------------------------------------------------------- verify's input


def test_verify_escapes_control_characters(cli, topology, tmp_path):
    from generators.asbuilt.ibnetdiscover import parse_net
    from generators.views.ibnetdiscover import format_net

    nodes = parse_net(topology.read_text())
    ca = next(n for n in nodes.values() if n.desc == "gpu001 mlx5_0")
    ca.desc = "\x1b]0;pwned\x07\x1b[2J\x1b[H gpu001"
    bad = tmp_path / "bad.net"
    bad.write_text(format_net(nodes.values()))
    for extra in ([], ["--json"]):
        r = cli("verify", SMALL, "--ibnetdiscover", bad, *extra)
        assert r.exit_code == 1, r.output
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout
        assert "pwned" in r.stdout and ("\\x1b" in r.stdout or "\\u001b" in r.stdout)


def test_verify_reports_a_one_sided_link(cli, topology, tmp_path):
    from generators.asbuilt.ibnetdiscover import parse_net
    from generators.views.ibnetdiscover import format_net

    nodes = parse_net(topology.read_text())
    ca = next(n for n in nodes.values() if n.desc == "gpu001 mlx5_0")
    lk = ca.links[1]
    del nodes[lk.peer].links[lk.peer_port]  # the leaf no longer reports the link; the HCA still does
    bad = tmp_path / "bad.net"
    bad.write_text(format_net(nodes.values()))
    r = cli("verify", SMALL, "--ibnetdiscover", bad)
    assert r.exit_code == 1, r.output
    assert "ONE-SIDED gpu001 mlx5_0" in r.stdout and "reports no link on that port" in r.stdout
    assert "MISSING  gpu001 mlx5_0" in r.stdout


def test_verify_malformed_guid(cli, topology, tmp_path):
    text = topology.read_text()
    i = text.index("\n[1](") + 5
    bad = tmp_path / "bad.net"
    bad.write_text(text[:i] + "1x2" + text[text.index(")", i) :])
    refused(cli("verify", SMALL, "--ibnetdiscover", bad), "--ibnetdiscover:", "is not hexadecimal", "line ")
