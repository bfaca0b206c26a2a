"""The real Pulumi engine on a local file backend: up, idempotence, drift, a design change that touches
exactly the artifacts it changes, destroy, and 2,000+ artifact resources with secrets.

These fail (never skip) when the engine is missing: scripts/install-pulumi.sh finds or builds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from components.artifact import BLOBS
from generators.compiler import compile_file
from generators.renderers import render_all
from tests.pulumi_engine import ARTIFACT_T, ROOT, EngineMissing, Secret, Stack, artifact_ops, engine_bin, snapshot

pytestmark = pytest.mark.engine
SITE_T, NETWORK_T, FOLDER_T, RACK_T = (f"railyard:site:{t}" for t in ("Site", "Network", "Folder", "Rack"))


@pytest.fixture(scope="module", autouse=True)
def engine():
    try:
        return engine_bin()
    except EngineMissing as exc:
        pytest.fail(f"the Pulumi engine is required: {exc}")


def rendered(design: str, *overrides: str) -> dict[str, str]:
    return render_all(compile_file(ROOT / "designs" / f"{design}.yaml", list(overrides))[0])


def test_up_is_idempotent_detects_drift_and_destroys(tmp_path):
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    expected = rendered("h100-256")

    # up creates every artifact, byte for byte, one resource each
    st.up()
    files = snapshot(out)
    assert {p: c for p, (c, _, _) in files.items()} == expected
    assert sorted(r["urn"].rsplit("::", 1)[1] for r in st.resources()) == sorted(expected)
    outputs = st.outputs()
    plan = compile_file(ROOT / "designs/h100-256.yaml")[0]
    assert outputs["gpus"] == 256
    assert outputs["switches"] == sum(d.kind == "switch" for d in plan.devices)
    assert outputs["artifacts"] == len(expected)
    assert outputs["outDir"] == str(out)

    # a second up changes nothing: no step, no file rewritten
    assert st.up_ops() == {}
    assert snapshot(out) == files
    st.run("preview", "--expect-no-changes")

    # a hand edit is drift: refresh sees it, the next up puts the design's content back
    victim = sorted(expected)[0]
    (out / victim).write_text(expected[victim] + "# edited by hand\n")
    assert st.run("preview", "--refresh", "--expect-no-changes", check=False).returncode != 0
    refresh = st.run("refresh", "--preview-only", "--diff")
    assert "sha256" in refresh.stdout and victim in refresh.stdout
    assert artifact_ops(st.preview("--refresh")) == {victim: "update"}
    st.run("up", "--yes", "--skip-preview", "--refresh")
    assert (out / victim).read_text() == expected[victim]
    st.run("preview", "--refresh", "--expect-no-changes")

    # a deleted file is recreated
    (out / victim).unlink()
    st.run("up", "--yes", "--skip-preview", "--refresh")
    assert (out / victim).read_text() == expected[victim]

    # destroy removes every artifact and leaves no resource behind
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out) == {}
    assert st.resources() == []


def test_design_change_touches_exactly_the_affected_artifacts(tmp_path):
    """1:1 -> 2:1 on the reference design: the artifacts updated (or created/deleted) are exactly
    the rendered files whose content differs, and no other file is rewritten."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-1024-reference.yaml", "railyard:outDir": str(out)})
    st.up()
    before = snapshot(out)
    base = rendered("h100-1024-reference")
    head = rendered("h100-1024-reference", "backend.oversubscription=2:1")
    affected = {p for p in set(base) | set(head) if base.get(p) != head.get(p)}
    assert "plan.json" in affected

    st.configure({"railyard:overrides": ["backend.oversubscription=2:1"]})
    planned = artifact_ops(st.preview())
    assert set(planned) == affected
    for path, op in planned.items():
        want = "create" if path not in base else "delete" if path not in head else "update"
        assert op == want, (path, op)

    assert st.up_ops() == planned
    after = snapshot(out)
    assert {p: c for p, (c, _, _) in after.items()} == head
    changed_on_disk = {p for p in set(before) | set(after)
                       if p not in before or p not in after or before[p][0] != after[p][0]}
    assert changed_on_disk == affected
    rewritten = {p for p in set(before) & set(after) if before[p][1:] != after[p][1:]}
    assert rewritten <= affected, f"unchanged artifacts were rewritten: {sorted(rewritten - affected)}"
    st.run("preview", "--expect-no-changes")
    outputs = st.outputs()
    plan = compile_file(ROOT / "designs/h100-1024-reference.yaml", ["backend.oversubscription=2:1"])[0]
    assert outputs["switchesByNetwork"]["backend"] == sum(
        d.kind == "switch" and d.network == "backend" for d in plan.devices)
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out) == {}


def test_two_thousand_artifacts_secrets_and_regrouping(tmp_path):
    out = tmp_path / "site"
    password = "Bmc-pa55word-7f3a9c"
    count = 2000
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out),
                          "railyard:count": count, "railyard:racked": "true", "railyard:bmcPassword": Secret(password)},
               main=ROOT / "tests" / "engine_program")
    st.up()
    files = snapshot(out)
    synthetic = [p for p in files if p.startswith("synthetic/")]
    assert len(synthetic) == count
    resources = st.resources()
    assert len(resources) == len(files) >= count + 2

    # the secret: in the file (owner-only) but nowhere in the state or the stack config
    creds = out / "oob/bmc-credentials.env"
    assert f"BMC_PASSWORD={password}\n" in creds.read_text()
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600
    for p in (st.state, st.dir):
        for f in p.rglob("*"):
            if f.is_file():
                assert password.encode() not in f.read_bytes(), f"secret in plain text in {f}"
    state = {r["urn"].rsplit("::", 1)[1]: r for r in resources}
    for k in ("sha256", "size", "lines"):  # a secret file's hash and counts are encrypted, in and out
        assert state["oob/bmc-credentials.env"]["inputs"][k].get("4dabf18193072939515e22adb298388d"), k
        assert state["oob/bmc-credentials.env"]["outputs"][k].get("4dabf18193072939515e22adb298388d"), k
    assert isinstance(state["plan.json"]["inputs"]["sha256"], str)  # only artifacts with secrets are secret
    assert not [p for p, r in state.items() if "content" in r["inputs"]], "the state holds hashes, not content"
    # the filled-in secret reaches the provider through the owner-only blob store, and only there
    store = out / ".railyard" / "blobs"
    assert store.stat().st_mode & 0o777 == 0o700
    assert {f.read_text() for f in store.iterdir()} == {c for c, _, _ in files.values()}

    # moving every synthetic file out of its rack group is a re-parenting, not delete + create
    def chains() -> set[str]:
        return {r["urn"].split("::")[2] for r in st.resources() if "::synthetic/" in r["urn"]}
    assert chains() == {f"{SITE_T}${FOLDER_T}${RACK_T}${ARTIFACT_T}"}
    st.configure({"railyard:racked": "false"})
    assert st.up_ops() == {}
    assert chains() == {f"{SITE_T}${FOLDER_T}${ARTIFACT_T}"}
    after = snapshot(out)
    assert set(after) == set(files), "regrouping must not lose (or add) a file"
    assert [p for p in files if after[p] != files[p]] == [], "nor rewrite one"
    st.run("preview", "--expect-no-changes")

    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out) == {}
    assert not any(out.iterdir()) if out.exists() else True


def test_missing_secret_fails_before_writing(tmp_path):
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out),
                          "railyard:count": 1, "railyard:racked": "false"},
               main=ROOT / "tests" / "engine_program")
    proc = st.run("up", "--yes", "--skip-preview", check=False)
    assert proc.returncode != 0
    assert "railyard:bmcPassword: secret is not set" in proc.stdout + proc.stderr
    assert not out.exists() or not any(out.rglob("*"))


def test_real_project_file_runs_with_the_venv(tmp_path):
    """The repository's own Pulumi.yaml (virtualenv .venv from scripts/setup.sh), unmodified."""
    venv = ROOT / ".venv" / "bin" / "python"
    assert venv.exists(), "run scripts/setup.sh first: Pulumi.yaml runs the program in .venv"
    env = {**os.environ, "PATH": f"{engine_bin()}{os.pathsep}{os.environ['PATH']}",
           "PULUMI_HOME": str(tmp_path / "home"), "PULUMI_BACKEND_URL": (tmp_path / "state").as_uri(),
           "PULUMI_CONFIG_PASSPHRASE": "x", "PULUMI_SKIP_UPDATE_CHECK": "true"}
    (tmp_path / "state").mkdir()
    import subprocess

    def pulumi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["pulumi", *args, "--non-interactive", "--cwd", str(ROOT)], env=env, capture_output=True,
                              text=True, timeout=600, check=False)

    # stack config goes to stacks/Pulumi.<stack>.yaml in the repository: use a throwaway name, clean up
    name = f"pytest-{os.getpid()}"
    cfg = ROOT / "stacks" / f"Pulumi.{name}.yaml"
    try:
        assert pulumi("stack", "init", name).returncode == 0
        for k, v in (("railyard:design", "designs/h100-256.yaml"), ("railyard:outDir", str(tmp_path / "out"))):
            assert pulumi("config", "set", "--stack", name, k, v).returncode == 0
        proc = pulumi("preview", "--stack", name, "--json")
        assert proc.returncode == 0, proc.stderr
        steps = json.loads(proc.stdout)["steps"]
        assert {s["urn"].rsplit("::", 1)[1] for s in steps if "FileArtifact" in s["urn"]} == set(rendered("h100-256"))
    finally:
        cfg.unlink(missing_ok=True)
        if cfg.parent.exists() and not any(cfg.parent.iterdir()):
            cfg.parent.rmdir()
    assert not Path(tmp_path / "out").exists(), "a preview writes nothing"


def by_type(st: Stack) -> dict[str, dict[str, dict]]:
    """type -> resource name -> resource, from `pulumi stack export`."""
    out: dict[str, dict[str, dict]] = {}
    for r in st.export()["deployment"]["resources"]:
        out.setdefault(r["type"], {})[r["urn"].rsplit("::", 1)[1]] = r
    return out


def assert_racked(tree: dict[str, dict[str, dict]], plan) -> None:
    """Every switch's config files hang under the Rack component placement put the switch in, inside
    its network's component; every rack's printed sheets under that rack in the cabling folder."""
    site, = tree[SITE_T].values()
    nets, folders, racks, arts = tree[NETWORK_T], tree[FOLDER_T], tree.get(RACK_T, {}), tree[ARTIFACT_T]
    switch_files = [p for p in arts if p.split("/")[0] in ("frontend", "oob") and p.count("/") == 2]
    switches = {d.name: d for d in plan.devices if d.kind == "switch" and d.network in ("frontend", "oob")}
    assert {p.split("/")[1] for p in switch_files} == set(switches), "every frontend/oob switch renders files"
    want = {f"cabling/{r.name}" for r in plan.racks} | {f"{d.network}/{d.rack}" for d in switches.values()}
    assert set(racks) == want
    for path in switch_files:
        section, device = path.split("/")[:2]
        rack = racks[f"{section}/{switches[device].rack}"]
        assert arts[path]["parent"] == rack["urn"], f"{path} is not under Rack {section}/{switches[device].rack}"
        assert rack["parent"] == nets[section]["urn"]
        assert nets[section]["parent"] == site["urn"]
    for r in plan.racks:
        for sheet in (f"cabling/racks/{r.name}.html", f"cabling/racks/{r.name}.csv"):
            assert arts[sheet]["parent"] == racks[f"cabling/{r.name}"]["urn"], sheet
        assert racks[f"cabling/{r.name}"]["parent"] == folders["cabling"]["urn"]
    assert arts["plan.json"]["parent"] == site["urn"]


def test_up_groups_switch_files_under_rack_components(tmp_path):
    """h100-256 through the real program: the stack's resources show railyard:site:Rack components
    with each switch's files as children, racks taken from the compiled plan."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    st.up()
    plan = compile_file(ROOT / "designs/h100-256.yaml")[0]
    tree = by_type(st)
    assert_racked(tree, plan)
    leaf = tree[ARTIFACT_T]["frontend/fe-leaf01/frr.conf"]["urn"]
    assert leaf.split("::")[2] == f"{SITE_T}${NETWORK_T}${RACK_T}${ARTIFACT_T}"


def test_stack_created_before_racks_keeps_every_resource(tmp_path):
    """A stack made by the program as it was before switch files were racked (the real program with
    the old grouping: no device in a rack) moves into the Rack components on the next `up` as the same
    resources: no replace, no delete + create, no file rewritten."""
    out = tmp_path / "site"
    design = ROOT / "designs/h100-256.yaml"
    st = Stack(tmp_path, {"railyard:design": str(design), "railyard:outDir": str(out)},
               main=ROOT / "tests" / "engine_program_before_racks")
    st.up()
    old = by_type(st)
    assert set(old[RACK_T]) == {f"cabling/{r.name}" for r in compile_file(design)[0].racks}, "only cabling racks"
    assert old[ARTIFACT_T]["frontend/fe-leaf01/frr.conf"]["parent"] == old[NETWORK_T]["frontend"]["urn"]
    files = snapshot(out)

    st.use_program(ROOT)  # the same stack, state, project name and config: the real program
    steps = st.preview()["steps"]
    assert artifact_ops({"steps": steps}) == {}, "an artifact would be replaced, deleted or created"
    assert {(s["op"], s["urn"].split("::")[2].rsplit("$", 1)[-1]) for s in steps if s["op"] != "same"} == {
        ("create", RACK_T)}
    assert st.up_ops() == {}
    assert snapshot(out) == files, "a file was rewritten"
    new = by_type(st)
    assert set(new[ARTIFACT_T]) == set(old[ARTIFACT_T])
    assert_racked(new, compile_file(design)[0])
    assert {p: r["id"] for p, r in new[ARTIFACT_T].items()} == {p: r["id"] for p, r in old[ARTIFACT_T].items()}
    st.run("preview", "--expect-no-changes")


BEFORE_HASH = ROOT / "tests" / "engine_program_before_hash"


def test_stack_created_with_content_in_the_state_moves_to_hashes_in_place(tmp_path):
    """A stack made by railyard when each file's content was an input (the frozen components/ of that
    commit, loaded by the program and the provider process under their real module names) moves to
    today's code with `same` steps only: no replace, no delete + create, no update, no file
    rewritten, and afterwards no content in the state. Then a real change still deploys."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": str(ROOT / "designs/h100-256.yaml"), "railyard:outDir": str(out)},
               main=BEFORE_HASH, pythonpath=BEFORE_HASH)
    st.up()
    old = {r["urn"]: r for r in st.resources()}
    assert all("content" in r["inputs"] for r in old.values()), "the frozen program must be the content-input one"
    files = snapshot(out, store=True)
    assert not (out / ".railyard").exists()

    st.use_program(ROOT)  # the same stack, state, project name and config: today's program and provider
    steps = st.preview()["steps"]
    assert {s["op"] for s in steps} == {"same"}, sorted({(s["op"], s["urn"]) for s in steps if s["op"] != "same"})
    assert st.up_ops() == {}
    assert snapshot(out) == files, "a deployed file was rewritten"
    new = {r["urn"]: r for r in st.resources()}
    assert set(new) == set(old)
    assert {u: r["id"] for u, r in new.items()} == {u: r["id"] for u, r in old.items()}
    assert not [u for u, r in new.items() if "content" in r["inputs"]], "content left in the state's inputs"
    assert {u: r["outputs"]["sha256"] for u, r in new.items()} == {u: r["outputs"]["sha256"] for u, r in old.items()}
    st.run("preview", "--expect-no-changes")

    # a change after the move deploys from the blob store
    st.configure({"railyard:overrides": ["backend.oversubscription=2:1"]})
    head = rendered("h100-256", "backend.oversubscription=2:1")
    st.up()
    assert {p: c for p, (c, _, _) in snapshot(out).items()} == head
    # once every artifact is deployed the store is pruned to the head's contents
    assert {f.name for f in (out / BLOBS).iterdir()} == {hashlib.sha256(c.encode()).hexdigest() for c in head.values()}
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out, store=True) == {}


def test_a_secret_artifact_made_with_content_in_the_state_moves_in_place(tmp_path):
    """The same move for a file that embeds a credential (tests/engine_program, whose Site then is the
    frozen one): its hash stays encrypted, the secret is nowhere in the state, the file is not rewritten."""
    out = tmp_path / "site"
    password = "Bmc-pa55word-91c2e4"
    program = ROOT / "tests" / "engine_program"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out),
                          "railyard:count": 3, "railyard:racked": "true", "railyard:bmcPassword": Secret(password)},
               main=program, pythonpath=BEFORE_HASH)
    st.up()
    creds = "oob/bmc-credentials.env"
    old = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}
    assert old[creds]["inputs"]["content"].get(SECRET_KEY), "the frozen program must be the content-input one"
    files = snapshot(out, store=True)

    st.use_program(program)
    assert artifact_ops(st.preview()) == {}
    assert st.up_ops() == {}
    assert snapshot(out) == files
    new = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}
    assert "content" not in new[creds]["inputs"] and new[creds]["inputs"]["sha256"].get(SECRET_KEY)
    assert new[creds]["outputs"]["sha256"].get(SECRET_KEY)
    for f in st.state.rglob("*"):
        if f.is_file():
            assert password.encode() not in f.read_bytes(), f"secret in plain text in {f}"
    st.run("preview", "--expect-no-changes")
    # a hand edit of the secret file is still drift, and the next up restores it from the store
    (out / creds).write_text("BMC_USER=admin\nBMC_PASSWORD=guess\n")
    assert artifact_ops(st.preview("--refresh")) == {creds: "update"}
    st.run("up", "--yes", "--skip-preview", "--refresh")
    assert (out / creds).read_text() == files[creds][0]
    assert stat.S_IMODE((out / creds).stat().st_mode) == 0o600


SECRET_KEY = "4dabf18193072939515e22adb298388d"  # pulumi's marker of an encrypted value in the state


def test_state_holds_no_content_and_refresh_finds_a_hand_edit(tmp_path):
    """After `up` the state has each file's path, size and hash (no content: not even one line of
    plan.json); a hand edit is drift that `pulumi refresh` reports with the new hash and size, and the
    next `up` puts the design's file back from the blob store."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    st.up()
    expected = rendered("h100-256")
    exported = st.run("stack", "export").stdout
    for path in ("plan.json", "slurm/topology.conf", "frontend/fe-leaf01/frr.conf"):
        line = max(expected[path].splitlines(), key=len)
        assert json.dumps(line)[1:-1] not in exported, f"a line of {path} is in the state"
    arts = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}
    topo = arts["slurm/topology.conf"]
    text = expected["slurm/topology.conf"]
    assert topo["inputs"]["sha256"] == topo["outputs"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert topo["outputs"]["size"] == len(text.encode()) and topo["outputs"]["lines"] == text.count("\n")

    victim = out / "slurm/topology.conf"
    victim.write_text(text + "SwitchName=by-hand Nodes=gpu001\n")
    refresh = st.run("refresh", "--yes", "--skip-preview", "--diff")
    assert "slurm/topology.conf" in refresh.stdout and "sha256" in refresh.stdout
    arts = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}
    assert arts["slurm/topology.conf"]["outputs"]["lines"] == text.count("\n") + 1  # the state saw the edit
    assert artifact_ops(st.preview()) == {"slurm/topology.conf": "update"}
    assert st.up_ops() == {"slurm/topology.conf": "update"}
    assert victim.read_text() == text
    st.run("preview", "--refresh", "--expect-no-changes")


def test_preview_diff_of_a_design_change_is_bounded(tmp_path):
    """Issue 12: `pulumi preview --diff` for h100-1024-vms 1:1 -> 2:1 printed ~137,000 lines when the
    content was an input; by hash it shows a short block per changed file (under 3,000 lines)."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-1024-vms.yaml", "railyard:outDir": str(out)})
    st.up()
    base = rendered("h100-1024-vms")
    head = rendered("h100-1024-vms", "backend.oversubscription=2:1")
    changed = sorted(p for p in set(base) | set(head) if base.get(p) != head.get(p))
    st.configure({"railyard:overrides": ["backend.oversubscription=2:1"]})
    diff = st.run("preview", "--diff").stdout
    lines = diff.splitlines()
    assert len(lines) < 3000, f"{len(lines)} lines"
    assert f"~ {len(changed)} to update" in diff
    # each changed file is named with its old and new hash, and no file's text is in the diff
    for path in changed:
        assert path in diff
        assert hashlib.sha256(head[path].encode()).hexdigest() in diff, path
    assert max(map(len, lines)) < 400, "a line of file content reached the diff"
    assert max(head["plan.json"].splitlines(), key=len) not in diff
