"""render_into: the files render_all makes, written into a staging folder, in one process or two (a forked
child takes CHILD_RENDERERS), with the same bytes and the same errors either way."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from generators import renderers
from generators.compiler import compile_file
from generators.model.errors import DesignError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def plan():
    return compile_file(ROOT / "designs" / "h100-512-roce.yaml")[0]


@pytest.mark.parametrize("parallel", [False, True])
def test_same_files_as_render_all(plan, tmp_path: Path, parallel: bool) -> None:
    want = renderers.render_all(plan)
    digests = renderers.render_into(plan, tmp_path, parallel=parallel)
    assert list(digests) == list(want)
    for path, text in want.items():
        data = (tmp_path / path).read_bytes()
        assert data == text.encode() and digests[path] == hashlib.sha256(data).hexdigest(), path
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == sorted(want)


def _dir(p: Path) -> Path:
    p.mkdir()
    return p


def _replace(monkeypatch, **by_index) -> None:
    new = list(renderers.RENDERERS)
    for i, r in by_index.items():
        new[int(i[1:])] = r
    monkeypatch.setattr(renderers, "RENDERERS", new)


def _failing(name: str, exc: Exception):
    def r(plan):
        raise exc
    r.__name__ = name
    return r


def test_a_child_renderer_error_surfaces_in_the_parent(plan, tmp_path: Path, monkeypatch) -> None:
    assert "render_floor" in renderers.CHILD_RENDERERS
    i = renderers.RENDERERS.index(renderers.render_floor)
    _replace(monkeypatch, **{f"i{i}": _failing("render_floor", DesignError.one("site.tray", "no room"))})
    with pytest.raises(DesignError) as seq:
        renderers.render_into(plan, _dir(tmp_path / "a"), parallel=False)
    with pytest.raises(DesignError) as par:
        renderers.render_into(plan, _dir(tmp_path / "b"), parallel=True)
    assert par.value.problems == seq.value.problems


def test_the_first_failing_renderer_wins_whichever_process_ran_it(plan, tmp_path: Path, monkeypatch) -> None:
    """The child's renderer comes first in RENDERERS here: its error is the one raised, as in one process."""
    child = renderers.RENDERERS.index(renderers.render_netbox_csv)
    later = max(i for i, r in enumerate(renderers.RENDERERS) if r.__name__ not in renderers.CHILD_RENDERERS)
    assert child < later
    _replace(monkeypatch, **{f"i{child}": _failing("render_netbox_csv", ZeroDivisionError("child")),
                             f"i{later}": _failing("render_bom", KeyError("parent"))})
    for parallel in (False, True):
        with pytest.raises(ZeroDivisionError, match="child") as err:
            renderers.render_into(plan, _dir(tmp_path / str(parallel)), parallel=parallel)
        if parallel:  # a bug in the child says where it happened
            assert "in the render worker process" in "".join(err.value.__notes__)


def test_two_renderers_writing_one_path_is_a_bug_in_either_process(plan, tmp_path: Path, monkeypatch) -> None:
    i = renderers.RENDERERS.index(renderers.render_cabling)

    def render_cabling(plan):
        return {"plan.json": "{}\n"}

    _replace(monkeypatch, **{f"i{i}": render_cabling})
    for parallel in (False, True):
        with pytest.raises(RuntimeError, match=r"two renderers write plan\.json"):
            renderers.render_into(plan, _dir(tmp_path / str(parallel)), parallel=parallel)
