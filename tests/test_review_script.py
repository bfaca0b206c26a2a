"""scripts/review.sh on the real engine: a git repository with one design change between two commits
gets one PR comment holding `railyard diff`'s review and the bounded `pulumi preview --diff`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pulumi_engine import ROOT, EngineMissing, engine_bin

pytestmark = pytest.mark.engine
SCRIPT = ROOT / "scripts" / "review.sh"


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    try:
        bin_dir = engine_bin()
    except EngineMissing as exc:
        pytest.fail(f"the Pulumi engine is required: {exc}")
    e = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_") and k != "PYTHONPATH"}
    return {
        **e,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "RAILYARD_PYTHON": sys.executable,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }


@pytest.fixture(scope="module")
def repo(tmp_path_factory, env) -> Path:
    """A clone of this repository's committed code plus one commit that changes h100-256 only."""
    repo = tmp_path_factory.mktemp("review") / "repo"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True, env=env)
    design = repo / "designs/h100-256.yaml"
    design.write_text(design.read_text().replace("compute:\n  count: 32\n", "compute:\n  count: 64\n"))
    subprocess.run(["git", "commit", "--quiet", "-am", "h100-256: two scalable units"], cwd=repo, check=True, env=env)
    # and a branch whose h100-256 does not compile (24 servers: not whole scalable units)
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "checkout", "--quiet", "-b", "broken"], check=True, env=env)
    design.write_text(design.read_text().replace("compute:\n  count: 64\n", "compute:\n  count: 24\n"))
    subprocess.run([*git, "commit", "--quiet", "-am", "h100-256: 24 servers"], check=True, env=env)
    subprocess.run([*git, "checkout", "--quiet", "-"], check=True, env=env)
    return repo


def review(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=900, check=False
    )


def worktrees(repo: Path) -> list[str]:
    return subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.splitlines()


def test_the_comment_has_the_design_diff_and_the_bounded_preview(repo, env, tmp_path):
    out, full = tmp_path / "review.md", tmp_path / "full"
    proc = review(repo, env, "--out", str(out), "--full-dir", str(full), "HEAD~1", "HEAD")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    # a second SU adds hundreds of cables: the comment lists 15 and points at the whole review
    whole = (full / "h100-256.review.md").read_text()
    assert "more added cables: the full list is in `h100-256.review.md`" in text
    assert whole.startswith("# railyard design review:") and "more added cables" not in whole
    # only the changed design (nothing extends h100-256, the catalog did not change)
    assert text.count("\n## `designs/") == 1 and "## `designs/h100-256.yaml`" in text
    assert "railyard design review" in text.split("## `designs/h100-256.yaml`", 1)[1].split("<details>")[0]
    preview = text.split("<summary>pulumi preview --diff: h100-256", 1)[1]
    assert "```diff\nPreviewing update (review-h100-256):" in preview
    # a changed file is one `~ path: "<old sha256> ... lines" => "<new> ..."` line of its group's map, a new
    # one (the second SU's racks' sheets, in the groups of the rows they join) a `+ path: "<sha256> ..."`
    assert "to update" in preview
    assert re.search(r'\+ cabling/racks/r\S+\.html *: "[0-9a-f]{64} \d+ bytes \d+ lines"', preview)
    assert re.search(r'~ plan\.json *: "[0-9a-f]{64} \d+ bytes \d+ lines" => "[0-9a-f]{64} \d+ bytes', preview)
    assert "designs/h100-256.yaml" not in preview.split("</details>")[0], "no design error in the preview"
    assert "truncated" not in preview and "/tmp" not in text, "temp paths are shown relative"
    assert len(text.splitlines()) < 3000
    # the first table names the changed design, with its changed field; the comment fits GitHub's limit
    table = text.split("\n| design | changed fields | devices moved |", 1)[1].split("\n\n", 1)[0]
    assert "| `designs/h100-256.yaml` | `compute.count`" in table
    assert text.index("| design | changed fields") < text.index("## `designs/h100-256.yaml`")
    assert len(text) <= 65_000
    assert (full / "review.md").read_text().startswith("# railyard review:")
    assert worktrees(repo) == worktrees(repo)[:1], "the temp worktrees are removed"


def test_a_comment_over_the_limit_is_cut_to_it_and_says_where_the_rest_is(repo, env):
    proc = review(repo, env, "--max-chars", "6000", "--max-lines", "40", "HEAD~1", "HEAD", "designs/h100-256.yaml")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert len(text) <= 6000
    assert "| `designs/h100-256.yaml` |" in text  # the table survives the cut
    assert "**cut to fit a pull-request comment**" in text
    assert text.count("```") % 2 == 0 and text.count("<details>") == text.count("</details>")


def test_a_long_preview_is_cut_with_a_note(repo, env):
    proc = review(repo, env, "--max-lines", "25", "HEAD~1", "HEAD", "designs/h100-256.yaml")
    assert proc.returncode == 0, proc.stderr
    preview = proc.stdout.split("<summary>pulumi preview --diff: h100-256, ", 1)[1]
    total = int(preview.split(" lines", 1)[0])
    block = preview.split("```diff\n", 1)[1].split("```", 1)[0]
    assert len(block.splitlines()) == 25
    assert f"**truncated, {total - 25} more lines** (of {total};" in preview


def test_a_design_that_does_not_compile_is_reported_in_the_comment(repo, env):
    proc = review(repo, env, "HEAD", "broken")
    assert proc.returncode == 0, proc.stderr
    assert "**`railyard diff` failed:**" in proc.stdout and "compute.count" in proc.stdout
    assert "pulumi preview --diff: h100-256" in proc.stdout and "**failed (exit " in proc.stdout
    assert worktrees(repo) == worktrees(repo)[:1]


def test_no_design_change_says_so(repo, env):
    proc = review(repo, env, "HEAD", "HEAD")
    assert proc.returncode == 0, proc.stderr
    assert "No design differs between the refs" in proc.stdout and "<details>" not in proc.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("no-such-ref", "HEAD"), "'no-such-ref' is not a commit"),
        (("HEAD",), "need BASE_REF and HEAD_REF"),
        (("--max-lines", "0", "HEAD", "HEAD"), "--max-lines must be a positive whole number"),
        (("--max-chars", "10", "HEAD", "HEAD"), "--max-chars must be a whole number of at least 1000"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(repo, env, args, message):
    proc = review(repo, env, *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert worktrees(repo) == worktrees(repo)[:1]
