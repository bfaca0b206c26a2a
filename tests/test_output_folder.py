"""The output folder contract: railyard replaces only what its manifest lists, refuses folders it did
not write (and a few it must never touch), turns every OS error into exit 2 with the path, and writes
0644 files and 0755 folders whatever the umask."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DESIGNS, ROOT

SMALL = DESIGNS / "h100-256.yaml"
OTHER = DESIGNS / "h100-1024-tor.yaml"
MANIFEST = ".railyard-manifest.json"


def tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def refused(r, *texts: str) -> None:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output + r.stderr
    for t in texts:
        assert t in r.stderr, r.stderr


def test_stray_plan_json_in_a_clone_deletes_nothing(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    clone.mkdir()
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    (clone / "plan.json").write_text("{}\n")
    (clone / "src.py").write_text("print('mine')\n")
    before = tree(clone)
    monkeypatch.chdir(clone)
    # the real console script, as a user runs it: exit 2, every file (.git included) still there
    r = subprocess.run(
        [sys.executable, "-m", "generators.cli", "compile", str(SMALL), "--out", str(clone)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 2, r.stderr
    assert "it holds .git (a git work tree)" in r.stderr and "Traceback" not in r.stderr
    assert tree(clone) == before


def test_old_output_without_manifest_is_refused_and_force_keeps_user_files(cli, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.json").write_text("{}\n")  # looks like railyard's, but nothing says so
    (out / "notes.md").write_text("mine\n")
    refused(cli("compile", SMALL, "--out", out), "it is not empty and railyard did not write it", f"--force {out}")
    assert tree(out) == {"plan.json": b"{}\n", "notes.md": b"mine\n"}
    # --force must name the folder itself
    refused(cli("compile", SMALL, "--out", out, "--force", tmp_path), "did not write it")
    r = cli("compile", SMALL, "--out", out, "--force", out, "-q")
    assert r.exit_code == 0, r.stderr
    assert (out / "notes.md").read_text() == "mine\n"
    assert json.loads((out / "plan.json").read_text())["schema"] == "railyard.plan/1"
    assert "notes.md" not in json.loads((out / MANIFEST).read_text())["files"]


def test_recompile_keeps_user_files_and_removes_only_stale_railyard_files(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("compile", OTHER, "--out", out, "-q").exit_code == 0
    first = set(json.loads((out / MANIFEST).read_text())["files"])
    (out / "mine.txt").write_text("keep me\n")
    (out / "slurm" / "my-extra.conf").write_text("keep me too\n")
    r = cli("compile", SMALL, "--out", out, "-q")
    assert r.exit_code == 0, r.stderr
    second = set(json.loads((out / MANIFEST).read_text())["files"])
    stale = sorted(first - second)
    assert stale, "the two designs should differ in their file sets"
    assert (out / "mine.txt").read_text() == "keep me\n"
    assert (out / "slurm" / "my-extra.conf").read_text() == "keep me too\n"
    on_disk = set(tree(out)) - {MANIFEST, "mine.txt", "slurm/my-extra.conf"}
    assert on_disk == second
    said = r.stderr.replace("\n", "")
    for rel in stale:
        assert not (out / rel).exists()
        folder = (out / rel).parent
        in_folder = sum(1 for s in stale if (out / s).parent == folder)
        if in_folder > 5:  # many in one folder: one line with the count
            assert f"removed {in_folder} stale files in {folder}/" in said
        else:
            assert f"removed stale {out / rel}" in said


def test_edited_stale_file_is_kept_and_said(cli, tmp_path):
    assert cli("compile", SMALL, "--out", tmp_path / "probe", "-q").exit_code == 0
    out = tmp_path / "out"
    assert cli("compile", OTHER, "--out", out, "-q").exit_code == 0
    stale = sorted(set(json.loads((out / MANIFEST).read_text())["files"]) - set(tree(tmp_path / "probe")))
    (out / stale[0]).write_text("edited by hand\n")
    r = cli("compile", SMALL, "--out", out, "-q")
    assert r.exit_code == 0, r.stderr
    assert (out / stale[0]).read_text() == "edited by hand\n"
    assert "was edited since" in r.stderr.replace("\n", " ")
    assert not (out / stale[1]).exists()


def test_a_user_file_where_railyard_writes_is_refused(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("compile", SMALL, "--out", out, "-q").exit_code == 0
    manifest = json.loads((out / MANIFEST).read_text())
    del manifest["files"]["bom.csv"]  # as if the user had written bom.csv themselves
    (out / MANIFEST).write_text(json.dumps(manifest))
    (out / "bom.csv").write_text("my own bom\n")
    refused(cli("compile", SMALL, "--out", out), "are not railyard's, e.g. bom.csv")
    assert (out / "bom.csv").read_text() == "my own bom\n"


def test_hostile_manifest_cannot_delete_outside(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("compile", SMALL, "--out", out, "-q").exit_code == 0
    precious = tmp_path / "precious.txt"
    precious.write_text("x")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["../precious.txt"] = "0" * 64
    (out / MANIFEST).write_text(json.dumps(manifest))
    refused(cli("compile", SMALL, "--out", out), "is not a railyard manifest")
    assert precious.read_text() == "x"


@pytest.mark.parametrize("where", ["designs", "root", "ancestor", "design-folder", "symlink", "file", "in-git"])
def test_folders_never_written(cli, tmp_path, monkeypatch, where):
    design = SMALL
    if where == "designs":
        monkeypatch.chdir(ROOT)
        out, text = Path("designs"), "the project's designs folder"
    elif where == "root":
        out, text = Path("/"), "the filesystem root"
    elif where in ("ancestor", "design-folder"):
        (tmp_path / "site" / "designs").mkdir(parents=True)
        design = tmp_path / "site" / "designs" / "d.yaml"
        design.write_text(SMALL.read_text())
        (design.parent / "h100-1024-optimized.yaml").write_text((DESIGNS / "h100-1024-optimized.yaml").read_text())
        out = tmp_path / "site" if where == "ancestor" else design.parent
        text = "it holds the design file"
    elif where == "symlink":
        (tmp_path / "real").mkdir()
        out = tmp_path / "link"
        out.symlink_to(tmp_path / "real")
        text = "it is a symlink"
    elif where == "file":
        out = tmp_path / "f"
        out.write_text("x")
        text = "it is a file, not a folder"
    else:
        subprocess.run(["git", "init", "-q", str(tmp_path / "g")], check=True)
        out, text = tmp_path / "g" / ".git" / "out", "inside a .git folder"
    before = tree(design.parent)
    refused(cli("compile", design, "--out", out, "--force", out), text)
    assert tree(design.parent) == before


def test_demo_layout_out_subfolder_of_a_work_tree_is_allowed(cli, tmp_path):
    # scripts/demo.sh compiles into out/<design> inside the checkout: new folder, then railyard's own
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for _ in range(2):
        r = cli("compile", SMALL, "--out", tmp_path / "out" / "h100-256", "-q")
        assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize(
    ("make", "text"),
    [
        pytest.param(lambda t: t / "afile" / "out", "Not a directory", id="parent-is-a-file"),
        pytest.param(lambda t: t / ("n" * 300), "File name too long", id="name-too-long"),
        pytest.param(lambda t: Path("/sys/railyard-out"), "/sys/railyard-out", id="unwritable-location"),
    ],
)
def test_os_errors_exit_2_with_the_path(cli, tmp_path, make, text):
    (tmp_path / "afile").write_text("x")
    r = cli("compile", SMALL, "--out", make(tmp_path), "-q")
    refused(r, "--out: ", text, "fix: ")


def test_diff_out_rules(cli, tmp_path):
    refused(cli("diff", SMALL, SMALL, "--out", tmp_path), "it is a folder")
    mine = tmp_path / "notes.md"
    mine.write_text("my notes\n")
    refused(cli("diff", SMALL, SMALL, "--out", mine), "not a railyard review")
    assert mine.read_text() == "my notes\n"
    review = tmp_path / "review.md"
    for _ in range(2):  # a second run replaces its own review
        r = cli("diff", SMALL, SMALL, "--out", review)
        assert r.exit_code == 0, r.stderr
    assert stat.S_IMODE(review.stat().st_mode) == 0o644
    assert cli("diff", SMALL, SMALL, "--out", mine, "--force", mine).exit_code == 0


def test_write_config_names_its_option(cli, tmp_path):
    out = tmp_path / "asbuilt"
    out.mkdir()
    (out / "x").write_text("mine")
    r = cli("compile", SMALL, "--out", tmp_path / "c", "-q")
    assert r.exit_code == 0
    r = cli("verify", SMALL, "--ibnetdiscover", tmp_path / "c" / "infiniband" / "topology.net", "--write-config", out)
    refused(r, "--write-config: refusing to write into")
    assert "--out" not in r.stderr


def test_modes_whatever_the_umask(cli, tmp_path):
    old = os.umask(0)
    try:
        assert cli("compile", SMALL, "--out", tmp_path / "a" / "b", "-q").exit_code == 0
        assert cli("compile", SMALL, "--out", tmp_path / "a" / "b", "-q").exit_code == 0  # the in-place path
    finally:
        os.umask(old)
    old = os.umask(0o077)
    try:
        assert cli("compile", SMALL, "--out", tmp_path / "c", "-q").exit_code == 0
    finally:
        os.umask(old)
    for root in (tmp_path / "a", tmp_path / "c"):
        for p in [root, *root.rglob("*")]:
            want = 0o755 if p.is_dir() else 0o644
            assert stat.S_IMODE(p.stat().st_mode) == want, p


def test_internal_bug_is_labelled_exit_70(cli, monkeypatch, tmp_path):
    import generators.cli

    def broken(plan, folder):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(generators.cli, "render_into", broken)
    r = cli("compile", SMALL, "--out", tmp_path / "o")
    assert r.exit_code == 70
    assert "internal error: this is a railyard bug" in r.stderr and "ZeroDivisionError" in r.stderr
    assert not (tmp_path / "o").exists()


FSIZE = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
from generators.cli import main
sys.argv = ["railyard", *sys.argv[1:]]
main()
"""


def test_a_write_that_fails_midway_leaves_the_folder_as_it_was(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("compile", SMALL, "--out", out, "-q").exit_code == 0
    before = tree(out)
    # plan.json of the second design is larger than the file size limit: the OS refuses mid-write
    r = subprocess.run(
        [sys.executable, "-c", FSIZE, "compile", str(OTHER), "--out", str(out), "-q"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 2, r.stderr
    assert f"--out: cannot write {out}" in r.stderr and "File too large" in r.stderr and "ulimit" in r.stderr
    assert "Traceback" not in r.stderr
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"], "a temp folder was left behind"


def test_a_symlinked_folder_inside_the_output_is_never_followed(cli, tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    assert cli("compile", OTHER, "--out", out, "-q").exit_code == 0
    # stale removal must not reach through a symlink: frontend/ of OTHER is railyard's, now a link
    shutil.copytree(out / "frontend", elsewhere)
    shutil.rmtree(out / "frontend")
    (out / "frontend").symlink_to(elsewhere)
    before, mine = tree(elsewhere), tree(out)
    r = cli("compile", SMALL, "--out", out, "-q")
    refused(r, "is a symlink inside the output folder")
    assert tree(elsewhere) == before
    assert tree(out) == mine, "a refused write changed files before it stopped"
    (out / "frontend").unlink()
    (out / "slurm").rename(tmp_path / "slurm")
    (out / "slurm").symlink_to(tmp_path / "slurm")
    before = tree(tmp_path / "slurm")
    refused(cli("compile", SMALL, "--out", out, "-q"), "is a symlink inside the output folder")
    assert tree(tmp_path / "slurm") == before


def test_diff_out_os_errors(cli, tmp_path):
    (tmp_path / "afile").write_text("x")
    refused(cli("diff", SMALL, SMALL, "--out", tmp_path / "afile" / "review.md"), "--out: ", "Not a directory")
    refused(cli("diff", SMALL, SMALL, "--out", tmp_path / ("n" * 300)), "--out: ", "File name too long")
