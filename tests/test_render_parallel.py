"""render_into: the files render_all makes, written into a staging folder, in one process or two (parent
and forked child take renderers from one queue), with the same bytes and the same errors either way."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
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


def test_the_queue_takes_the_costliest_first_then_the_rest_in_order() -> None:
    names = [r.__name__ for r in renderers.RENDERERS]
    assert sorted(renderers.SHARE_ORDER) == sorted(names)  # every renderer has its place
    extra = _failing("render_extra", ValueError())
    order = renderers._queue([extra, *renderers.RENDERERS])
    assert [([extra, *renderers.RENDERERS])[i].__name__ for i in order] == [*renderers.SHARE_ORDER, "render_extra"]


@pytest.mark.parametrize("where", range(4))
def test_the_first_failing_renderer_wins_whichever_process_ran_it(
    plan, tmp_path: Path, monkeypatch, where: int
) -> None:
    """Two renderers fail; which process takes which is up to the queue and the scheduler, and the error
    raised is the one of the earlier in RENDERERS, as in one process. The later one is taken first (it
    is costlier), and a third renderer, last in RENDERERS, fails too."""
    first = renderers.RENDERERS.index(renderers.render_slurm)
    later = renderers.RENDERERS.index(renderers.render_cabling)
    last = len(renderers.RENDERERS) - 1
    assert first < later < last
    _replace(
        monkeypatch,
        **{
            f"i{first}": _failing("render_slurm", ZeroDivisionError("first")),
            f"i{later}": _failing("render_cabling", KeyError("later")),
            f"i{last}": _failing(renderers.RENDERERS[last].__name__, ValueError("last")),
        },
    )
    for parallel in (False, True):
        with pytest.raises(ZeroDivisionError, match="first"):
            renderers.render_into(plan, _dir(tmp_path / str(parallel)), parallel=parallel)


def test_a_design_error_is_the_same_from_either_process(plan, tmp_path: Path, monkeypatch) -> None:
    i = renderers.RENDERERS.index(renderers.render_floor)
    _replace(monkeypatch, **{f"i{i}": _failing("render_floor", DesignError.one("site.tray", "no room"))})
    with pytest.raises(DesignError) as seq:
        renderers.render_into(plan, _dir(tmp_path / "a"), parallel=False)
    with pytest.raises(DesignError) as par:
        renderers.render_into(plan, _dir(tmp_path / "b"), parallel=True)
    assert par.value.problems == seq.value.problems


def test_a_design_error_pickles_whole_where_dask_installed_tblib() -> None:
    """Importing dask.distributed (railyard explore does) installs tblib's pickling for every exception
    class, which rebuilt DesignError without its problems (a slot): the render child's design error then
    reached the parent empty. Run in its own interpreter, as the install is global and for good."""
    code = (
        "import pickle\n"
        "from generators.model.errors import DesignError\n"
        "import distributed.utils  # installs tblib.pickling_support\n"
        "import copyreg\n"
        "assert DesignError in copyreg.dispatch_table, 'tblib no longer installs itself: drop this test'\n"
        "e = DesignError.one('site.tray', 'no room', 'make it wider', 'design.yaml:3')\n"
        "try:\n"
        "    raise e\n"
        "except DesignError as raised:\n"
        "    back = pickle.loads(pickle.dumps(raised))\n"
        "assert type(back) is DesignError and back.problems == e.problems and str(back) == str(e), back\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_a_bug_in_the_child_says_where_it_happened(plan, tmp_path: Path, monkeypatch) -> None:
    """Every renderer fails, but only in the child: its error reaches the parent with the child's traceback."""
    parent = os.getpid()
    took = tmp_path / "the child took a renderer"

    def render_anything(plan):
        if os.getpid() != parent:
            took.touch()
            raise ZeroDivisionError("in the child")
        # the parent holds its first renderer until the child has taken one (a fork can take a while
        # on a busy machine: a fixed sleep let the parent empty the queue first)
        deadline = time.monotonic() + 60
        while not took.exists():
            assert time.monotonic() < deadline, "the forked child took no renderer within 60 s"
            time.sleep(0.01)
        return {}

    monkeypatch.setattr(renderers, "RENDERERS", [render_anything] * 8)
    with pytest.raises(ZeroDivisionError, match="in the child") as err:
        renderers.render_into(plan, _dir(tmp_path / "a"), parallel=True)
    assert "in the render worker process" in "".join(err.value.__notes__)


def test_two_renderers_writing_one_path_is_a_bug_in_either_process(plan, tmp_path: Path, monkeypatch) -> None:
    i = renderers.RENDERERS.index(renderers.render_cabling)

    def render_cabling(plan):
        return {"plan.json": "{}\n"}

    _replace(monkeypatch, **{f"i{i}": render_cabling})
    for parallel in (False, True):
        with pytest.raises(RuntimeError, match=r"two renderers write plan\.json"):
            renderers.render_into(plan, _dir(tmp_path / str(parallel)), parallel=parallel)
