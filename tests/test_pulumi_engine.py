"""The real Pulumi engine on a local file backend, with default checkpointing (the state written after
every step, as users run it; only the setup `up` by a frozen one-resource-per-file program of an
earlier railyard writes it once, at the end): up, idempotence, drift, a design change that touches
exactly the files it changes, destroy, 2,000+ files with secrets, files moving between groups, and
stacks made by earlier railyards (content in the state; one resource per file) moving to today's
FileGroups without a file rewritten or removed.

These fail (never skip) when the engine is missing: scripts/install-pulumi.sh finds or builds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path

import pytest

from components.artifact import BLOBS, OWNERS, entry_text, parse_entry, summary
from components.moves import PLACEMENT_T
from components.site import SECRET_SUFFIX, group_name, place, rack_index
from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.model.secrets import config_key, fill_files, referenced
from generators.renderers import render_all
from generators.reports.diff import moves_between, placement, placement_entries
from tests.pulumi_engine import (
    ARTIFACT_T,
    GROUP_T,
    ROOT,
    SECRET_KEY,
    SITE_SECRETS,
    EngineMissing,
    Secret,
    Stack,
    changed_paths,
    engine_bin,
    snapshot,
    step_ops,
)
from tests.test_pulumi_moves import MOVER

pytestmark = pytest.mark.engine
SITE_T, NETWORK_T, FOLDER_T, RACK_T = (f"railyard:site:{t}" for t in ("Site", "Network", "Folder", "Rack"))


@pytest.fixture(scope="module", autouse=True)
def engine():
    try:
        return engine_bin()
    except EngineMissing as exc:
        pytest.fail(f"the Pulumi engine is required: {exc}")


def rendered(design: str, *overrides: str) -> dict[str, str]:
    """What a stack deploys: the rendered files with the stack's secrets (SITE_SECRETS) filled in."""
    return fill_files(render_all(compile_file(ROOT / "designs" / f"{design}.yaml", list(overrides))[0]), SITE_SECRETS)[
        0
    ]


def grouping(design: str, *overrides: str, secret: bool = False) -> dict[str, str]:
    """path -> the FileGroup the program puts it in, from the compiled plan (as components/site.py does),
    for the files of public groups (a `#secret` group's map is encrypted: Stack.held cannot see it), and
    with secret=True also those holding a secret placeholder, in their `<group>#secret`."""
    plan = compile_file(ROOT / "designs" / f"{design}.yaml", list(overrides))[0]
    racks, device_rack = rack_index(plan)
    return {
        p: group_name(place(p, set(plan.networks), racks, device_rack)) + (SECRET_SUFFIX if referenced(text) else "")
        for p, text in render_all(plan).items()
        if secret or not referenced(text)
    }


def unchanged(before: dict, after: dict) -> list[str]:
    """Paths of `before` missing from `after` or rewritten there (content, inode or mtime differ)."""
    return sorted(p for p in before if after.get(p) != before[p])


def test_up_is_idempotent_detects_drift_and_destroys(tmp_path):
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    expected = rendered("h100-256")

    # up creates every file, byte for byte, each in the group of its component
    st.up()
    files = snapshot(out)
    assert {p: c for p, (c, _, _) in files.items()} == expected
    assert st.held() == grouping("h100-256")
    assert len(st.resources()) < len(expected) / 4, "one resource per folder component, not per file"
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
    edited = entry_text(summary(expected[victim] + "# edited by hand\n"))
    assert f"~ {victim}" in refresh.stdout and f'=> "{edited}"' in refresh.stdout, "drift shows under the path"
    assert step_ops(st.preview("--refresh")) == {grouping("h100-256")[victim]: "update"}
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
    preview = st.preview()
    planned = step_ops(preview)
    was = grouping("h100-1024-reference", secret=True)
    now = grouping("h100-1024-reference", "backend.oversubscription=2:1", secret=True)
    # the map diffs name exactly the changed files of public groups (a secret group's are encrypted)
    shown = {p for p in affected if not (was.get(p) or now.get(p) or "").endswith(SECRET_SUFFIX)}
    assert changed_paths(preview) == shown
    assert set(planned) == {was.get(p) for p in affected} - {None} | {now.get(p) for p in affected} - {None}
    for name, op in planned.items():
        want = "create" if name not in was.values() else "delete" if name not in now.values() else "update"
        assert op == want, (name, op)

    assert st.up_ops() == planned
    after = snapshot(out)
    assert {p: c for p, (c, _, _) in after.items()} == head
    changed_on_disk = {
        p for p in set(before) | set(after) if p not in before or p not in after or before[p][0] != after[p][0]
    }
    assert changed_on_disk == affected
    rewritten = {p for p in set(before) & set(after) if before[p][1:] != after[p][1:]}
    assert rewritten <= affected, f"unchanged files were rewritten: {sorted(rewritten - affected)}"
    st.run("preview", "--expect-no-changes")
    outputs = st.outputs()
    plan = compile_file(ROOT / "designs/h100-1024-reference.yaml", ["backend.oversubscription=2:1"])[0]
    assert outputs["switchesByNetwork"]["backend"] == sum(
        d.kind == "switch" and d.network == "backend" for d in plan.devices
    )
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out) == {}


def test_two_thousand_files_secrets_and_regrouping(tmp_path):
    out = tmp_path / "site"
    password = "Bmc-pa55word-7f3a9c"
    count = 2000
    st = Stack(
        tmp_path,
        {
            "railyard:design": "designs/h100-256.yaml",
            "railyard:outDir": str(out),
            "railyard:count": count,
            "railyard:racked": "true",
            "railyard:bmcPassword": Secret(password),
        },
        main=ROOT / "tests" / "engine_program",
    )
    st.up()
    files = snapshot(out)
    synthetic = [p for p in files if p.startswith("synthetic/")]
    assert len(synthetic) == count
    groups = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}
    held = st.held()
    public = set(grouping("h100-256")) | {p for p in files if p.startswith("synthetic/")}
    assert set(held) == public and "oob/bmc-credentials.env" not in held
    assert len(groups) < len(files) / 20, "synthetic files are per server: one group per row holds them"

    # the secret: in the file (owner-only) but nowhere in the state or the stack config
    creds = out / "oob/bmc-credentials.env"
    assert f"BMC_PASSWORD={password}\n" in creds.read_text()
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600
    for p in (st.state, st.dir):
        for f in p.rglob("*"):
            if f.is_file():
                assert password.encode() not in f.read_bytes(), f"secret in plain text in {f}"
    secret = groups["oob#secret"]  # its own group: the map (path, hash, size, lines) is encrypted, in and out
    assert secret["inputs"]["files"].get(SECRET_KEY) and secret["outputs"]["files"].get(SECRET_KEY)
    assert secret["inputs"]["mode"] == "0600" and secret["parent"] == groups["oob"]["parent"]
    assert parse_entry(groups["."]["inputs"]["files"]["plan.json"])  # the other groups stay readable
    # the filled-in secret reaches the provider through the owner-only blob store, and only there
    store = out / ".railyard" / "blobs"
    assert store.stat().st_mode & 0o777 == 0o700
    assert {f.read_text() for f in store.iterdir()} == {c for c, _, _ in files.values()}

    # moving every synthetic and switch file out of its row group into its folder's group: the row
    # groups go, the folder groups take the files; not one file rewritten or lost, whichever step of
    # the parallel update runs first
    assert {g for p, g in held.items() if p.startswith("synthetic/")} == {
        f"synthetic/{row}" for row in rack_index(compile_file(ROOT / "designs/h100-256.yaml")[0])[0].values()
    } & set(groups)
    st.configure({"railyard:racked": "false"})
    ops = st.up_ops()
    assert ops["synthetic"] == "create" and {op for g, op in ops.items() if "/" in g} == {"delete"}
    assert {g for p, g in st.held().items() if p.startswith("synthetic/")} == {"synthetic"}
    after = snapshot(out)
    assert set(after) == set(files), "regrouping must not lose (or add) a file"
    assert unchanged(files, after) == [], "nor rewrite one"
    st.run("preview", "--expect-no-changes")

    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out) == {}
    assert not any(out.iterdir()) if out.exists() else True


def test_missing_secret_fails_before_writing(tmp_path):
    out = tmp_path / "site"
    st = Stack(
        tmp_path,
        {
            "railyard:design": "designs/h100-256.yaml",
            "railyard:outDir": str(out),
            "railyard:count": 1,
            "railyard:racked": "false",
        },
        main=ROOT / "tests" / "engine_program",
    )
    proc = st.run("up", "--yes", "--skip-preview", check=False)
    assert proc.returncode != 0
    assert "railyard:bmcPassword: secret is not set" in proc.stdout + proc.stderr
    assert not out.exists() or not any(out.rglob("*"))


def test_real_project_file_runs_with_the_venv(tmp_path):
    """The repository's own Pulumi.yaml (virtualenv .venv from scripts/setup.sh), unmodified."""
    venv = ROOT / ".venv" / "bin" / "python"
    assert venv.exists(), "run scripts/setup.sh first: Pulumi.yaml runs the program in .venv"
    env = {
        **os.environ,
        "PATH": f"{engine_bin()}{os.pathsep}{os.environ['PATH']}",
        "PULUMI_HOME": str(tmp_path / "home"),
        "PULUMI_BACKEND_URL": (tmp_path / "state").as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": "x",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }
    (tmp_path / "state").mkdir()
    import subprocess

    def pulumi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pulumi", *args, "--non-interactive", "--cwd", str(ROOT)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    # stack config goes to stacks/Pulumi.<stack>.yaml in the repository: use a throwaway name, clean up
    name = f"pytest-{os.getpid()}"
    cfg = ROOT / "stacks" / f"Pulumi.{name}.yaml"
    try:
        assert pulumi("stack", "init", name).returncode == 0
        for k, v in (("railyard:design", "designs/h100-256.yaml"), ("railyard:outDir", str(tmp_path / "out"))):
            assert pulumi("config", "set", "--stack", name, k, v).returncode == 0
        # the switch configs' credentials, as docs/howto/day0.md has a site set them
        for n, v in SITE_SECRETS.items():
            assert pulumi("config", "set", "--stack", name, "--secret", config_key(n), v).returncode == 0
        proc = pulumi("preview", "--stack", name, "--json")
        assert proc.returncode == 0, proc.stderr
        steps = json.loads(proc.stdout)["steps"]
        planned = {
            p
            for s in steps
            if GROUP_T in s["urn"] and isinstance(s["newState"]["inputs"]["files"], dict)
            for p in s["newState"]["inputs"]["files"]
        }
        assert planned == set(grouping("h100-256")), "every public file, in its group's map"
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


def assert_racked(tree: dict[str, dict[str, dict]], plan, out: Path) -> None:
    """Every switch's config files are in the FileGroup `<network>/<row>` of the row of the rack placement
    put the switch in (those holding a secret in `<network>/<row>#secret` beside it, whose map is
    encrypted: the owners record the program writes names their group), a child of its network's
    component, and its ZTP files in `ztp/<row>`; every rack's printed sheets in `cabling/<row>`."""
    (site,) = tree[SITE_T].values()
    nets, folders, groups = tree[NETWORK_T], tree[FOLDER_T], tree[GROUP_T]
    assert RACK_T not in tree, "a rack is its FileGroup, not a component holding one"
    held = {
        p: name for name, g in groups.items() if SECRET_KEY not in g["outputs"]["files"] for p in g["outputs"]["files"]
    }
    owner = json.loads((out / OWNERS).read_text())["paths"]
    assert {p: g for p, g in owner.items() if not g.endswith(SECRET_SUFFIX)} == held
    switch_files = [p for p in owner if p.split("/")[0] in ("frontend", "oob", "ztp") and p.count("/") == 2]
    switches = {d.name: d for d in plan.devices if d.kind == "switch" and d.network in ("frontend", "oob")}
    configured = {p.split("/")[1] for p in switch_files if not p.startswith("ztp/")}
    assert configured == set(switches), "every frontend/oob switch renders files"
    ztp = {p.split("/")[1] for p in switch_files if p.startswith("ztp/")}
    assert ztp and ztp <= set(switches), "ZTP files are for frontend/oob switches"
    row = {r.name: r.row for r in plan.racks}
    ib = {d.name: d for d in plan.devices if d.kind == "switch" and d.network == "backend"}
    want = {f"cabling/{r.row}" for r in plan.racks} | {
        f"{p.split('/')[0]}/{row[switches[p.split('/')[1]].rack]}" for p in switch_files
    }
    want |= {f"infiniband/{row[d.rack]}" for d in ib.values()}  # each InfiniBand switch's mgmt.cfg
    assert {g.removesuffix(SECRET_SUFFIX) for g in groups if "/" in g} == want
    for name, g in groups.items():  # each group is the child of its section's component
        section = name.split("/")[0].removesuffix(SECRET_SUFFIX)
        assert g["parent"] == (site if name == "." else {**nets, **folders}[section])["urn"], name
    for path in switch_files:
        section, device = path.split("/")[:2]
        assert owner[path].removesuffix(SECRET_SUFFIX) == f"{section}/{row[switches[device].rack]}", path
        assert {**nets, **folders}[section]["parent"] == site["urn"]
    for r in plan.racks:
        for sheet in (f"cabling/racks/{r.name}.html", f"cabling/racks/{r.name}.csv"):
            assert held[sheet] == f"cabling/{r.row}", sheet
    assert held["plan.json"] == "."
    assert held["ztp/switches.json"] == "ztp"


def test_up_groups_switch_files_by_row(tmp_path):
    """h100-256 through the real program: one FileGroup per row and network holds its switches' files,
    under the network's component, racks and rows taken from the compiled plan."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    st.up()
    plan = compile_file(ROOT / "designs/h100-256.yaml")[0]
    tree = by_type(st)
    assert_racked(tree, plan, out)
    # a leaf's configs hold secret placeholders (BGP password, SNMPv3, users): the row's `#secret` group
    row = f"frontend/{next(r.row for r in plan.racks if r.name == plan.device('fe-leaf01').rack)}{SECRET_SUFFIX}"
    assert tree[GROUP_T][row]["urn"].split("::")[2] == f"{SITE_T}${NETWORK_T}${GROUP_T}"
    assert SECRET_KEY in tree[GROUP_T][row]["outputs"]["files"], "its map (paths, hashes) is encrypted"
    assert json.loads((out / OWNERS).read_text())["paths"]["frontend/fe-leaf01/frr.conf"] == row
    # one frame of stack trace per resource the program registers (lean_stack_traces), not the whole
    # stack (the Stack resource itself is registered before the program runs)
    mine = [r for t in (SITE_T, NETWORK_T, FOLDER_T, GROUP_T) for r in tree[t].values()]
    assert {len(r["stackTrace"]) for r in mine} == {1}


# switch configs that hold no secret but users.sh (no SNMPv3 user, BGP sessions without a password),
# so the stacks of earlier railyards keep switch files in public groups to move (their maps readable)
PUBLIC_SWITCHES = ["management.snmp_users=[]", "management.bgp_auth=none"]


def deployed_by(tmp_path: Path, program: str) -> tuple[Stack, Path, Plan]:
    """h100-256 deployed by an earlier program (tests/<program>): the stack, its output folder, the plan."""
    out = tmp_path / "site"
    design = ROOT / "designs/h100-256.yaml"
    st = Stack(
        tmp_path,
        {"railyard:design": str(design), "railyard:outDir": str(out), "railyard:overrides": PUBLIC_SWITCHES},
        main=ROOT / "tests" / program,
    )
    st.up()
    return st, out, compile_file(design, PUBLIC_SWITCHES)[0]


def assert_moved_untouched(st: Stack, out: Path, files: dict, plan: Plan) -> None:
    """After the `up` that moved a stack to today's groups: every file as it was (content, inode, mtime),
    none added, grouped as today's program groups them, and nothing left to change."""
    assert unchanged(files, snapshot(out)) == [], "a file was rewritten or removed"
    assert set(snapshot(out)) == set(files)
    assert_racked(by_type(st), plan, out)
    st.run("preview", "--expect-no-changes")


def test_files_moving_into_row_groups_stay_on_disk(tmp_path):
    """A stack made when switch files were not racked and the rack sheets were grouped per rack (today's
    program with the grouping it had before the Site read `Device.rack`) moves them into row groups on
    the next `up`: each network group drops the switch paths, each rack group goes, each row group
    adopts their files; no file is rewritten or lost."""
    st, out, plan = deployed_by(tmp_path, "engine_program_before_racks")
    old = by_type(st)
    rack_groups = {f"cabling/{r.name}" for r in plan.racks}
    assert {g for g in old[GROUP_T] if "/" in g} == rack_groups
    assert "frontend/fe-leaf01/frr.conf" in old[GROUP_T]["frontend"]["outputs"]["files"]
    files = snapshot(out)

    st.use_program(ROOT)  # the same stack, state, project name and config: the real program
    planned = step_ops(st.preview())
    # every frontend file is a switch's: the frontend group goes, its files all claimed by row groups;
    # oob keeps its files of no rack (kea, the management network's own) and lets the switch files go;
    # ztp keeps its index of no rack and lets each switch's files go to its row; the groups of the
    # switches' users.sh and InfiniBand mgmt.cfg (secret) go to their rows' too; the rack groups of the
    # cabling sheets go, their files claimed by row groups
    assert (planned.pop("frontend"), planned.pop("oob"), planned.pop("ztp")) == ("delete", "update", "update")
    secret = {"frontend#secret", "oob#secret", "infiniband#secret"}
    assert {planned.pop(g) for g in secret} == {"delete"}
    assert {n for n, op in planned.items() if op == "delete"} == rack_groups
    created = {n for n, op in planned.items() if op == "create"}
    assert created | rack_groups == set(planned)
    assert {n.split("/")[0] for n in created} == {"cabling", "frontend", "oob", "infiniband", "ztp"}
    assert {n.split("/")[1].removesuffix(SECRET_SUFFIX) for n in created} == {r.row for r in plan.racks}
    changed = {"frontend": "delete", "oob": "update", "ztp": "update", **dict.fromkeys(secret, "delete")}
    assert st.up_ops() == {**planned, **changed}
    assert_moved_untouched(st, out, files, plan)


def test_stack_of_rack_groups_moves_to_row_groups_untouched(tmp_path):
    """A stack deployed when groups were per rack (`<top folder>/<rack>`) moves to row groups on its next
    `up`: one create per row group, one delete per rack group, the groups of no rack untouched, and on
    disk not one file rewritten (inode, mtime), removed or added. Then the stack holds no change."""
    st, out, plan = deployed_by(tmp_path, "engine_program_per_rack")
    old = {g for g in by_type(st)[GROUP_T] if "/" in g}
    assert {g.split("/")[1].split("#")[0] for g in old} == {r.name for r in plan.racks}
    files = snapshot(out)

    st.use_program(ROOT)
    planned = step_ops(st.preview())
    assert {n for n, op in planned.items() if op == "delete"} == old
    created = {n for n, op in planned.items() if op == "create"}
    assert {n.split("/")[1].split("#")[0] for n in created} == {r.row for r in plan.racks}
    assert set(planned) == old | created, "a group of no rack changed"
    assert st.up_ops() == planned
    assert_moved_untouched(st, out, files, plan)


BEFORE_HASH = ROOT / "tests" / "engine_program_before_hash"
BEFORE_GROUPS = ROOT / "tests" / "engine_program_before_groups"
# h100-256 cut to one scalable unit of 4 servers, for the stacks of the one-resource-per-file programs:
# still two rows (a compute rack, the network row), every network's switches, both tenants and secret
# files, but ~150 files of ~1.6 MB (not 180 of 3 MB), each a resource whose every step writes the state
SMALL = (
    "compute.count=4",
    "backend.su_size=4",
    "tenants=[{name: acme, servers: [gpu001, gpu002]}, {name: globex, servers: [gpu003]}]",
)
# a change after the move: h100-256 is 2:1 already
CHANGE = "backend.oversubscription=1:1"


def frozen_stack(tmp_path: Path, config: dict, program: Path, main: Path | None = None) -> Stack:
    """A stack `up`ped by a frozen program of an earlier railyard, with the state written once at the end
    (PULUMI_SKIP_CHECKPOINTS: the same state, without rewriting it after each of its one-per-file
    steps), then set back to the default checkpointing for the `up`s under test."""
    st = Stack(tmp_path, config, main=main or program, pythonpath=program, skip_checkpoints=True)
    st.up()
    del st.env["PULUMI_SKIP_CHECKPOINTS"]
    return st


def test_stack_of_one_resource_per_file_moves_to_groups_untouched(tmp_path):
    """A stack of h100-256 cut to 4 servers (SMALL) deployed by railyard before FileGroup (one
    FileArtifact per file; the frozen components/ of that commit, loaded by the program and the
    provider process under their real module names) moves to today's program on its next `up`: one
    group created per component, every FileArtifact deleted from the state, and on disk not one file
    rewritten (inode, mtime), removed or added. The deletes
    run today's FileArtifactProvider, which leaves alone each path the owners record gives a group.
    Then a no-change `up` and `preview --expect-no-changes` pass, and a change (1:1) still deploys."""
    out = tmp_path / "site"
    config = {"railyard:design": str(ROOT / "designs/h100-256.yaml"), "railyard:outDir": str(out)}
    st = frozen_stack(tmp_path, config | {"railyard:overrides": [*SMALL]}, BEFORE_GROUPS)
    old = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources(ARTIFACT_T)}
    assert set(old) == set(rendered("h100-256", *SMALL)), "the frozen program is the per-file one"
    assert not st.resources()
    files = snapshot(out, store=True)
    state_before = len(st.run("stack", "export").stdout)

    st.use_program(ROOT)  # the same stack, state, project name and config: today's program and providers
    preview = st.preview()
    assert set(step_ops(preview, ARTIFACT_T).values()) == {"delete"} and len(step_ops(preview, ARTIFACT_T)) == len(old)
    assert set(step_ops(preview).values()) == {"create"}
    ops = st.up_ops()
    assert set(ops.values()) == {"create"} and set(ops) == set(grouping("h100-256", *SMALL, secret=True).values())
    after = snapshot(out, store=True)
    assert unchanged({p: v for p, v in files.items() if not p.startswith(".railyard/")}, after) == [], (
        "a deployed file was rewritten or removed"
    )
    assert {p for p in after if not p.startswith(".railyard/")} == {p for p in files if not p.startswith(".railyard/")}
    assert st.resources(ARTIFACT_T) == [] and st.held() == grouping("h100-256", *SMALL)
    assert len(st.run("stack", "export").stdout) < state_before / 2
    assert st.up_ops() == {}
    assert unchanged(after, snapshot(out, store=True)) == []
    st.run("preview", "--expect-no-changes")

    # a change after the move deploys, writing only the changed files
    st.configure({"railyard:overrides": [*SMALL, CHANGE]})
    head = rendered("h100-256", *SMALL, CHANGE)
    assert head != rendered("h100-256", *SMALL)
    st.up()
    assert {p: c for p, (c, _, _) in snapshot(out).items()} == head
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out, store=True) == {}


def test_stack_created_with_content_in_the_state_moves_to_groups_untouched(tmp_path):
    """A stack of h100-256 cut to 4 servers (SMALL) made by railyard when each file's content was an
    input (two programs back) moves to today's groups the same way: FileArtifacts deleted from the
    state, groups created, no file rewritten, and afterwards no content in the state. Then a real change
    (1:1) still deploys and the blob store is pruned to the head's contents."""
    out = tmp_path / "site"
    config = {"railyard:design": str(ROOT / "designs/h100-256.yaml"), "railyard:outDir": str(out)}
    st = frozen_stack(tmp_path, config | {"railyard:overrides": [*SMALL]}, BEFORE_HASH)
    old = st.resources(ARTIFACT_T)
    assert old and all("content" in r["inputs"] for r in old), "the frozen program must be the content-input one"
    files = snapshot(out, store=True)
    assert not (out / ".railyard").exists()

    st.use_program(ROOT)
    assert set(step_ops(st.preview(), ARTIFACT_T).values()) == {"delete"}
    assert set(st.up_ops().values()) == {"create"}
    assert unchanged(files, snapshot(out)) == [], "a deployed file was rewritten or removed"
    assert st.resources(ARTIFACT_T) == []
    exported = st.run("stack", "export").stdout
    assert '"content"' not in exported, "content left in the state"
    st.run("preview", "--expect-no-changes")

    st.configure({"railyard:overrides": [*SMALL, CHANGE]})
    head = rendered("h100-256", *SMALL, CHANGE)
    st.up()
    assert {p: c for p, (c, _, _) in snapshot(out).items()} == head
    # once every group is deployed the store is pruned to the head's contents
    assert {f.name for f in (out / BLOBS).iterdir()} == {hashlib.sha256(c.encode()).hexdigest() for c in head.values()}
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out, store=True) == {}


def test_a_secret_file_made_with_content_in_the_state_moves_to_its_secret_group(tmp_path):
    """The same move for a file that embeds a credential (tests/engine_program on h100-256 cut to 4
    servers (SMALL), whose Site then is the frozen one): it lands in the `oob#secret` group, whose map
    is encrypted; the secret is nowhere in the state; the file is not rewritten; a hand edit is still
    drift that the next `up` restores."""
    out = tmp_path / "site"
    password = "Bmc-pa55word-91c2e4"
    program = ROOT / "tests" / "engine_program"
    config = {
        "railyard:design": "designs/h100-256.yaml",
        "railyard:outDir": str(out),
        "railyard:overrides": [*SMALL],
        "railyard:count": 3,
        "railyard:racked": "true",
        "railyard:bmcPassword": Secret(password),
    }
    st = frozen_stack(tmp_path, config, BEFORE_HASH, main=program)
    creds = "oob/bmc-credentials.env"
    old = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources(ARTIFACT_T)}
    assert old[creds]["inputs"]["content"].get(SECRET_KEY), "the frozen program must be the content-input one"
    files = snapshot(out, store=True)

    st.use_program(program)
    assert st.up_ops()["oob#secret"] == "create"
    assert unchanged(files, snapshot(out)) == []
    secret = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}["oob#secret"]
    assert secret["inputs"]["files"].get(SECRET_KEY) and secret["outputs"]["files"].get(SECRET_KEY)
    for f in st.state.rglob("*"):
        if f.is_file():
            assert password.encode() not in f.read_bytes(), f"secret in plain text in {f}"
    st.run("preview", "--expect-no-changes")
    # a hand edit of the secret file is still drift, and the next up restores it from the store
    (out / creds).write_text("BMC_USER=admin\nBMC_PASSWORD=guess\n")
    assert step_ops(st.preview("--refresh")) == {"oob#secret": "update"}
    st.run("up", "--yes", "--skip-preview", "--refresh")
    assert (out / creds).read_text() == files[creds][0]
    assert stat.S_IMODE((out / creds).stat().st_mode) == 0o600
    secret = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}["oob#secret"]
    assert secret["outputs"]["files"].get(SECRET_KEY), "the refreshed map is still encrypted"
    for f in st.state.rglob("*"):
        if f.is_file():
            assert password.encode() not in f.read_bytes(), f"secret in plain text in {f}"


def test_state_holds_no_content_and_refresh_finds_a_hand_edit(tmp_path):
    """After `up` the state has each file's path, size and hash (no content: not even one line of
    plan.json); a hand edit is drift that `pulumi refresh` reports, under the file's path, with the new
    hash, and the next `up` writes that one file back from the blob store."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    st.up()
    expected = rendered("h100-256")
    exported = st.run("stack", "export").stdout
    for path in ("plan.json", "slurm/topology.conf", "frontend/fe-leaf01/frr.conf"):
        line = max(expected[path].splitlines(), key=len)
        assert json.dumps(line)[1:-1] not in exported, f"a line of {path} is in the state"
    slurm = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}["slurm"]
    text = expected["slurm/topology.conf"]
    topo_in, topo_out = (slurm[k]["files"]["slurm/topology.conf"] for k in ("inputs", "outputs"))
    assert (
        topo_in
        == topo_out
        == entry_text(summary(text))
        == (f"{hashlib.sha256(text.encode()).hexdigest()} {len(text.encode())} bytes {text.count(chr(10))} lines")
    )

    victim = out / "slurm/topology.conf"
    others = snapshot(out)
    victim.write_text(text + "SwitchName=by-hand Nodes=gpu001\n")
    refresh = st.run("refresh", "--yes", "--skip-preview", "--diff")
    edited = entry_text(summary(text + "SwitchName=by-hand Nodes=gpu001\n"))
    assert "~ slurm/topology.conf" in refresh.stdout and f'=> "{edited}"' in refresh.stdout
    slurm = {r["urn"].rsplit("::", 1)[1]: r for r in st.resources()}["slurm"]
    assert parse_entry(slurm["outputs"]["files"]["slurm/topology.conf"])["lines"] == text.count("\n") + 1  # seen
    preview = st.preview()
    assert step_ops(preview) == {"slurm": "update"} and changed_paths(preview) == {"slurm/topology.conf"}
    assert st.up_ops() == {"slurm": "update"}
    assert victim.read_text() == text
    assert unchanged({p: v for p, v in others.items() if p != "slurm/topology.conf"}, snapshot(out)) == []
    st.run("preview", "--refresh", "--expect-no-changes")


def test_preview_diff_of_a_design_change_is_bounded(tmp_path):
    """Issue 12: `pulumi preview --diff` for h100-1024-vms 1:1 -> 2:1 printed ~137,000 lines when the
    content was an input; by hash it shows, per changed group, the paths that change (under 3,000 lines)."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-1024-vms.yaml", "railyard:outDir": str(out)})
    st.up()
    base = rendered("h100-1024-vms")
    head = rendered("h100-1024-vms", "backend.oversubscription=2:1")
    changed = sorted(p for p in set(base) | set(head) if base.get(p) != head.get(p))
    was = grouping("h100-1024-vms", secret=True)
    now = grouping("h100-1024-vms", "backend.oversubscription=2:1", secret=True)
    groups = {was[p] for p in changed if p in was} | {now[p] for p in changed if p in now}
    st.configure({"railyard:overrides": ["backend.oversubscription=2:1"]})
    diff = st.run("preview", "--diff").stdout
    lines = diff.splitlines()
    assert len(lines) < 3000, f"{len(lines)} lines"
    # the groups of changed files and the Placement record (components/moves.py): 2:1 has fewer switches
    vms = ROOT / "designs/h100-1024-vms.yaml"
    placed = [placement_entries(placement(compile_file(vms, o)[0])) for o in ([], ["backend.oversubscription=2:1"])]
    assert placed[0] != placed[1]
    assert f"~ {len(groups & set(was.values()) & set(now.values())) + 1} to update" in diff
    # each changed file is named with its new hash (a secret group's are not: its map is encrypted), an
    # unchanged one is not named, and no file's text is there
    for path in changed:
        if (was.get(path) or now.get(path) or "").endswith(SECRET_SUFFIX):
            assert path not in diff, path
            continue
        assert path in diff
        if path in head:
            assert hashlib.sha256(head[path].encode()).hexdigest() in diff, path
    assert max(map(len, lines)) < 400, "a line of file content reached the diff"
    assert max(head["plan.json"].splitlines(), key=len) not in diff


def test_an_unchanged_design_deploys_from_the_site_cache(tmp_path):
    """On the real engine: the second `up` of a design registers the recorded site (it says so) and
    changes nothing; a design change compiles and updates what changed; going back compiles once more
    (the change's `up` pruned the first site's stored copies), then runs from the record again; with
    RAILYARD_SITE_CACHE=off the same stack compiles and still changes nothing."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    assert "site cache" not in st.run("up", "--yes", "--skip-preview").stdout
    files = snapshot(out)
    again = st.run("up", "--yes", "--skip-preview")
    assert "site cache" in again.stdout and "unchanged" in again.stdout and "updated" not in again.stdout
    # the line docs/reference/pulumi.md quotes (Compiled-site cache)
    assert re.search(
        r"railyard: h100-256\.yaml with this catalog and railyard is in the site cache "
        r"\([0-9a-f]{12}\): nothing compiled \(RAILYARD_SITE_CACHE=off compiles\)",
        again.stdout,
    )
    assert snapshot(out) == files
    st.run("preview", "--expect-no-changes")

    st.configure({"railyard:overrides": ["description=a what-if copy"]})
    changed = st.up_ops()
    assert changed == {".": "update"}, "only plan.json (the top group) holds the description"
    assert json.loads((out / "plan.json").read_text())["design"]["description"] == "a what-if copy"
    st.run("config", "rm", "railyard:overrides")
    back = st.run("up", "--yes", "--skip-preview")
    assert "site cache" not in back.stdout, "the first site's stored copies were pruned: it compiles"
    now = snapshot(out)
    assert {p: c for p, (c, _, _) in now.items()} == {p: c for p, (c, _, _) in files.items()}
    assert {"plan.json"} <= set(unchanged(files, now)) <= {p for p in files if "/" not in p}, "the top group's only"
    assert "site cache" in st.run("up", "--yes", "--skip-preview").stdout
    st.env["RAILYARD_SITE_CACHE"] = "off"
    off = st.run("up", "--yes", "--skip-preview")
    assert "site cache" not in off.stdout and "updated" not in off.stdout


def test_no_secret_value_in_any_stream_of_a_deploy(tmp_path):
    """Issue 38: h100-256 deployed by the real program with the stack's switch secrets. The deploy folder's
    switch configs hold the values (mode 0600; users.sh the SHA-512 crypt hash, never the password); no
    value is in what `up --diff`, `preview --diff`, `stack output`, `stack export` print, in the state,
    the stack's config (encrypted), the engine's home (logs), the compiled-site cache, nor in what a
    failing `up` (a secret unset) prints."""
    from passlib.hash import sha512_crypt

    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    streams = {}
    for args in (("up", "--yes", "--skip-preview", "--diff"), ("preview", "--diff"), ("stack", "output", "--json")):
        p = st.run(*args)
        streams[" ".join(args)] = p.stdout + p.stderr
    p = st.run("stack", "export")
    streams["stack export"] = p.stdout + p.stderr
    frr = out / "frontend/fe-leaf01/frr.conf"
    assert f"neighbor FABRIC password {SITE_SECRETS['bgp_password']}\n" in frr.read_text()
    assert stat.S_IMODE(frr.stat().st_mode) == 0o600
    users = (out / "oob/oob-r01-01/users.sh").read_text()
    crypt = re.search(r"^user admin \S+ '(\$6\$[^']+)'$", users, re.M)
    assert crypt and sha512_crypt.verify(SITE_SECRETS["switch_password"], crypt.group(1))
    st.run("config", "rm", "railyard:bgpPassword")
    failed = st.run("up", "--yes", "--skip-preview", check=False)
    assert failed.returncode != 0 and "railyard:bgpPassword: secret is not set" in failed.stdout + failed.stderr
    streams["a failing up"] = failed.stdout + failed.stderr
    for what, text in streams.items():
        for name, value in SITE_SECRETS.items():
            assert value not in text, f"{name} in the output of {what}"
    for root in (st.state, st.dir, tmp_path / "home", tmp_path / "cache"):
        for f in root.rglob("*"):
            if f.is_file():
                data = f.read_bytes()
                for name, value in SITE_SECRETS.items():
                    assert value.encode() not in data, f"{name} in {f}"
    st.run("destroy", "--yes", "--skip-preview", check=False)


def test_a_change_that_moves_deployed_devices_fails_until_allowed(tmp_path):
    """Issue 43 on the Pulumi path: the stack records where each device stands (components/moves.py).
    A stack made before that record existed gains it without a group touched; a design change that moves
    deployed devices (h100-256 with its network row first) fails `preview` and `up` naming the first
    moves and their count, writing nothing, until `railyard:allowMoves` is set; the state records the
    new placement, and removing the flag again changes nothing."""
    out = tmp_path / "site"
    st = Stack(tmp_path, {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(out)})
    st.up()
    base, head = (compile_file(ROOT / "designs/h100-256.yaml", o)[0] for o in ([], [*MOVER]))
    (record,) = st.resources(PLACEMENT_T)
    assert record["inputs"]["devices"] == placement_entries(placement(base))
    assert set(record["outputs"]) == {"design", "count", "digest", "__provider"}, "the map is kept once"

    # a stack of an earlier railyard: no Placement, no group depending on it; the next run creates it alone
    state = st.export()
    res = state["deployment"]["resources"]
    state["deployment"]["resources"] = [r for r in res if r["type"] != PLACEMENT_T]
    for r in state["deployment"]["resources"]:
        r["dependencies"] = [d for d in r.get("dependencies", []) if d != record["urn"]]
        for prop, deps in r.get("propertyDependencies", {}).items():
            r["propertyDependencies"][prop] = [d for d in deps if d != record["urn"]]
    (tmp_path / "before.json").write_text(json.dumps(state))
    st.run("stack", "import", "--file", str(tmp_path / "before.json"))
    assert st.resources(PLACEMENT_T) == []
    preview = st.preview()
    assert step_ops(preview) == {} and step_ops(preview, PLACEMENT_T) == {"placement": "create"}
    files = snapshot(out, store=True)
    st.up()
    assert unchanged(files, snapshot(out, store=True)) == []

    # the network row first moves the compute racks: refused by preview and up, nothing written
    moves = moves_between(placement(base), placement(head))
    first = moves[0]
    named = f"{first.device} {first.base_rack} U{first.base_unit} -> {first.head_rack} U{first.head_unit}"
    st.configure({"railyard:overrides": [*MOVER]})
    for args in (("preview",), ("up", "--yes", "--skip-preview")):
        failed = st.run(*args, check=False)
        said = " ".join((failed.stdout + failed.stderr).split())
        assert failed.returncode != 0, args
        assert f"{len(moves)} devices of h100-256 that the stack's last deployment placed would move: {named}" in said
        assert f"and {len(moves) - 10} more" in said and "pulumi config set railyard:allowMoves true" in said
        assert "Traceback" not in said
    # nor the owners record a later destroy would read (the blob store may have gained copies: pruned later)
    assert unchanged(files, snapshot(out, store=True)) == [], "a refused up deploys nothing"
    assert set(snapshot(out)) == {p for p in files if not p.startswith(".railyard/")}
    assert st.resources(PLACEMENT_T)[0]["inputs"]["devices"] == placement_entries(placement(base))

    # allowed: it deploys, the state records the new placement, and the flag's removal is no change
    st.configure({"railyard:allowMoves": "true"})
    st.up()
    assert {p: c for p, (c, _, _) in snapshot(out).items()} == rendered("h100-256", *MOVER)
    assert st.resources(PLACEMENT_T)[0]["inputs"]["devices"] == placement_entries(placement(head))
    st.run("config", "rm", "railyard:allowMoves")
    st.run("preview", "--expect-no-changes")
