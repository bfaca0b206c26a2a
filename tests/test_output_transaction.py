"""The output folder as a transaction (generators.output): whatever kills a compile (kill -9 at any step,
including while files move in), the folder is exactly the old output or the new one, with a manifest that
matches every file; two compiles into one folder take turns; what killed runs left is removed by the next.

Kills land at the commit's named steps (RAILYARD_KILL_AT, the process kills itself with SIGKILL there) and
at moments spread over a large compile (h100-16k, a real kill -9 from outside)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generators import output
from tests.conftest import DESIGNS, ROOT

SMALL = DESIGNS / "h100-256.yaml"
LARGE = DESIGNS / "h100-16k.yaml"
# the same design with a change that rewrites most files (every cable's length, every rack position)
# a variant that moves 1,685 devices (2:1 halves the spines): these tests are about the folder, so the
# compiles say the moves are meant (tests/test_growth.py tests the refusal)
VARIANT = ("--set", "site.floor.aisle_mm=1500", "--set", "backend.oversubscription=2:1", "--allow-moves")
RAILYARD = [sys.executable, "-m", "generators.cli"]
# forces the commit in place (a folder whose parent railyard may not write: tests run as root, for whom
# every folder is writable), then runs the CLI
IN_PLACE = """
import sys
from generators import output
output._beside = lambda out: False
from generators.cli import main
sys.argv = ["railyard", *sys.argv[1:]]
sys.exit(main())
"""


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def compile_(
    design: Path, out: Path, *args: str, in_place: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", IN_PLACE] if in_place else RAILYARD
    return subprocess.run(
        [*cmd, "compile", str(design), "--out", str(out), "-q", *args], capture_output=True, text=True, env=_env(**env)
    )


def state(out: Path) -> dict[str, str]:
    """{path: sha256} of every file in the folder, checked against its manifest: the manifest lists exactly
    the railyard files there and each one's hash (the user's files listed apart, by hash too)."""
    files = {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in out.rglob("*") if p.is_file()
    }
    manifest = json.loads((out / output.MANIFEST).read_text())["files"]
    mine = {k: v for k, v in files.items() if k != output.MANIFEST}
    assert {k: mine[k] for k in manifest if k in mine} == manifest, "a file differs from the manifest"
    return mine


def _leftovers(out: Path) -> list[str]:
    beside = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.railyard-stage-")]
    inside = [p.name for p in out.iterdir() if p.name.startswith(output.STAGING) or p.name == output.JOURNAL]
    return beside + inside


@pytest.fixture(scope="module")
def small_outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, str]]:
    """The old and the new output of the small design, with a user's file in the folder."""
    base = tmp_path_factory.mktemp("ref")
    assert compile_(SMALL, base / "old").returncode == 0
    assert compile_(SMALL, base / "new", *VARIANT).returncode == 0
    return state(base / "old"), state(base / "new")


def _old_folder(tmp_path: Path) -> Path:
    out = tmp_path / "site" / "out"
    assert compile_(SMALL, out).returncode == 0
    (out / "notes").mkdir()
    (out / "notes" / "mine.txt").write_text("the site team's notes\n")
    os.chmod(out / "notes", 0o700)
    return out


USER = {"notes/mine.txt": hashlib.sha256(b"the site team's notes\n").hexdigest()}


@pytest.mark.parametrize(
    ("phase", "after"),
    [("staged", "old"), ("carried", "old"), ("flushed", "old"), ("exchanged", "new")],
)
def test_a_kill_at_each_step_of_the_swap_leaves_old_or_new(
    tmp_path: Path, small_outputs: tuple[dict[str, str], dict[str, str]], phase: str, after: str
) -> None:
    old, new = small_outputs
    out = _old_folder(tmp_path)
    r = compile_(SMALL, out, *VARIANT, RAILYARD_KILL_AT=phase)
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert state(out) == {**(old if after == "old" else new), **USER}
    assert (out / "notes").stat().st_mode & 0o777 == 0o700  # the user's folder kept its mode
    # the next compile removes what the killed one left (its staging, or the old tree it swapped out)
    assert compile_(SMALL, out, *VARIANT).returncode == 0
    assert state(out) == {**new, **USER}
    assert _leftovers(out) == [] and sorted(p.name for p in out.parent.iterdir()) == ["out"]


@pytest.mark.parametrize(
    ("phase", "after"),
    [("staged", "old"), ("journal", "new"), ("moving", "new"), ("moved", "new")],
)
def test_a_kill_while_committing_in_place_is_finished_by_the_next_writer(
    tmp_path: Path,
    small_outputs: tuple[dict[str, str], dict[str, str]],
    phase: str,
    after: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A folder whose parent railyard cannot write is committed in place from a journal: a kill before
    the journal is on disk leaves the old output; after it, the next writer completes the new one before
    anything else (here: recovery alone, under the folder's lock)."""
    old, new = small_outputs
    out = _old_folder(tmp_path)
    r = compile_(SMALL, out, *VARIANT, in_place=True, RAILYARD_KILL_AT=phase)
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert (out / output.LOCK).exists()  # the killed writer's lock file, inside the folder
    monkeypatch.setattr(output, "_beside", lambda out: False)
    with output._locked(out, None):  # taken though the killed writer left it
        output._recover(out)
    assert not (out / output.LOCK).exists()
    assert state(out) == {**(old if after == "old" else new), **USER}
    assert _leftovers(out) == []


def test_a_hostile_journal_deletes_nothing(tmp_path: Path) -> None:
    out = _old_folder(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("x")
    journal = {"staging": str(victim), "write": [], "old": {}, "manifest": {}}
    (out / output.JOURNAL).write_text(json.dumps(journal))
    r = compile_(SMALL, out)
    assert r.returncode == 2, r.stderr
    assert f"{output.JOURNAL} is not a railyard journal" in r.stderr and "Traceback" not in r.stderr
    assert (victim / "keep.txt").read_text() == "x"


def test_a_stale_lock_and_leftovers_of_killed_runs_are_taken_and_removed(tmp_path: Path) -> None:
    out = _old_folder(tmp_path)
    (out.parent / f".{out.name}.railyard-lock").write_text("999999\n")  # a killed writer's, not held
    (out.parent / f".{out.name}.railyard-stage-abc").mkdir()
    (out / f"{output.STAGING}def").mkdir()
    (out.parent / ".someone-elses").mkdir()
    assert compile_(SMALL, out).returncode == 0
    assert sorted(p.name for p in out.parent.iterdir()) == [".someone-elses", "out"]
    assert _leftovers(out) == []


@pytest.fixture(scope="module")
def large_outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, float]:
    """h100-16k's output and its variant's (compiled once for this module), and how long a compile took."""
    base = tmp_path_factory.mktemp("large")
    assert compile_(LARGE, base / "old").returncode == 0
    start = time.monotonic()
    assert compile_(LARGE, base / "new", *VARIANT).returncode == 0
    return base / "old", base / "new", time.monotonic() - start


def _finished(p: subprocess.Popen[str], timeout: float, out: Path, err: Path) -> tuple[int, str]:
    """A compile's exit status and stderr (written to the file `err`, never a pipe: a compile that
    reports thousands of stale files would block on a full pipe nobody reads); one still running after
    `timeout` seconds (a compile takes ~10 s) fails the test with every stack of it and its render child
    (faulthandler, on SIGABRT) and who holds the folder's lock, for the cause to be found from one failure."""
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == p.pid:
                    children.append(int(stat.parent.name))
            except (OSError, IndexError, ValueError):
                continue
        for pid in (*children, p.pid):
            os.kill(pid, signal.SIGABRT)
        p.wait()
        lock = out.parent / f".{out.name}{output.LOCK}"
        holder = lock.read_text() if lock.exists() else "no lock file"
        pytest.fail(
            f"compile pid {p.pid} (children {children}) still ran after {timeout} s; lock: {holder}\n"
            f"{err.read_text(errors='replace')}"
        )
    return p.returncode, err.read_text()


def _said(p: subprocess.Popen[str], err: Path, what: str, timeout: float) -> str:
    """The first line of `err` once the process has written it (the state it reports, polled), or a
    failure naming what it printed instead."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = err.read_text(errors="replace")
        if "\n" in text or p.poll() is not None:
            return text.split("\n", 1)[0]
        time.sleep(0.05)
    pytest.fail(f"compile pid {p.pid} said nothing in {timeout} s, expected {what!r}")


def _copy(src: Path, dst: Path) -> None:
    """A copy of an output folder by hard links (railyard replaces files, never writes into one)."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, copy_function=os.link)


@pytest.mark.large
def test_a_large_compile_killed_at_moments_throughout_is_old_or_new(
    tmp_path: Path, large_outputs: tuple[Path, Path, float]
) -> None:
    """kill -9 from outside at moments spread over a whole h100-16k recompile (rendering in two processes,
    staging, the swap, removing the old tree): every time the folder is the old output or the new one,
    and nothing writes into it once the compile is dead (its render child dies with it)."""
    ref_old, ref_new, took = large_outputs
    old, new = state(ref_old), state(ref_new)
    out = tmp_path / "out"
    _copy(ref_old, out)
    seen = set()
    for fraction in (0.3, 0.6, 0.85, 0.95):
        proc = subprocess.Popen(
            [*RAILYARD, "compile", str(LARGE), "--out", str(out), "-q", *VARIANT],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(took * fraction)
        proc.send_signal(signal.SIGKILL)  # the compile's own process only, as a crash would
        proc.wait()
        time.sleep(0.5)  # a surviving render child would still be writing now
        stray = subprocess.run(["pgrep", "-f", f"--out {out} "], capture_output=True, text=True).stdout.split()
        assert not stray, f"processes of the killed compile still run: {stray}"
        got = state(out)
        assert got in (old, new), f"killed at {fraction:.0%} of the compile: a mix of old and new"
        seen.add("new" if got == new else "old")
        if got == new:  # start again from the old output
            _copy(ref_old, out)
    assert "old" in seen, "no kill landed before the swap"
    assert compile_(LARGE, out, *VARIANT).returncode == 0
    assert state(out) == new and _leftovers(out) == []


@pytest.mark.large
def test_two_compiles_into_one_folder_take_turns(tmp_path: Path, large_outputs: tuple[Path, Path, float]) -> None:
    """Two compiles into one folder while a third writer holds it: each says whom it waits for, both
    succeed once it lets go, one after the other, and the folder is exactly the output of one of them."""
    ref_old, ref_new, _ = large_outputs
    out = tmp_path / "out"
    errs = [tmp_path / f"compile-{i}.err" for i in range(2)]
    with output._locked(out, None):
        procs = []
        for args, err in zip((("--allow-moves",), VARIANT), errs, strict=True):
            with err.open("w") as sink:
                procs.append(
                    subprocess.Popen(
                        [*RAILYARD, "compile", str(LARGE), "--out", str(out), "-q", *args],
                        env=_env(PYTHONFAULTHANDLER="1"),  # a hung one dumps its stacks on SIGABRT
                        stdout=subprocess.DEVNULL,
                        stderr=sink,
                        text=True,
                    )
                )
        waiting = f"waiting for another railyard (pid {os.getpid()}) writing {out}"
        for p, err in zip(procs, errs, strict=True):  # each reports that it waits: its state, not a guess
            line = _said(p, err, waiting, 120)
            assert waiting in line, line
    for p, err in zip(procs, errs, strict=True):
        code, text = _finished(p, 300, out, err)
        assert code == 0, text
    assert state(out) in (state(ref_old), state(ref_new)) and _leftovers(out) == []
