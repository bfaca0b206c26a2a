"""Renderers: plan -> files. Each renderer is a pure function returning {relative path: text};
`render_all` gathers them so the writer can commit everything at once or nothing.

The renderer modules are imported on first use, not with the package: `railyard validate` and the
compile stages import `generators.renderers.netview` (and so this package) but render nothing, and
the renderers bring jinja2, segno and the vendor modules (~0.3 s of a 1.3 s compile at 1,024 GPUs).
"""

from __future__ import annotations

import os
import pickle
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generators.gc_pause import paused_gc
from generators.model.errors import DesignError
from generators.output import stage_files

if TYPE_CHECKING:
    from generators.model.plan import Plan

Renderer = Callable[["Plan"], dict[str, str]]


def render_plan_json(plan: Plan) -> dict[str, str]:
    from generators.model.plan import dumps

    return {"plan.json": dumps(plan)}


def _load() -> list[Renderer]:
    from generators.renderers.bom import render_bom
    from generators.renderers.cabling import render_cabling
    from generators.renderers.floor import render_floor
    from generators.renderers.hosts import render_hosts
    from generators.renderers.netbox_csv import render_netbox_csv
    from generators.renderers.oob_dhcp import render_kea
    from generators.renderers.pack import render_labels, render_rows
    from generators.renderers.slurm import render_slurm
    from generators.renderers.storage_tenants import render_storage_tenants
    from generators.vendors import render_backend, render_frontend, render_oob

    # switch configs through the vendor registry: each switch by the module of its catalog `os`
    found: list[Renderer] = [render_plan_json, render_frontend, render_oob, render_kea, render_netbox_csv,
                             render_storage_tenants]
    found += [render_slurm, render_backend, render_hosts]
    found += [render_cabling, render_floor, render_labels, render_rows]
    found.append(render_bom)  # DIR/bom.csv, bom.json, bom.html
    globals().update({r.__name__: r for r in found})
    return found


def __getattr__(name: str) -> Any:
    # RENDERERS and each render_* function, as module attributes, once asked for (tests patch RENDERERS)
    if name == "RENDERERS" or name.startswith("render_"):
        if "RENDERERS" not in globals():
            globals()["RENDERERS"] = _load()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _renderers() -> list[Renderer]:
    """RENDERERS, as tests may have patched it."""
    return __getattr__("RENDERERS")


def render_all(plan: Plan) -> dict[str, str]:
    files: dict[str, str] = {}
    for r in _renderers():
        for path, text in r(plan).items():
            if path in files:
                raise RuntimeError(f"two renderers write {path}")
            files[path] = text
    return dict(sorted(files.items()))


# From this many links `render_into` renders on two cores: a forked child takes these renderers (the
# NetBox import files, the hosts' netplan files, floor, labels, row bills), the parent the rest
# (plan.json, switch configs, cable and rack sheets, BoM), about half the work each from 1,024 to 98,304
# GPUs. With the cable sheets in the child it held two thirds: render_into of h100-1024-reference
# 0.38-0.41 s (child 0.37-0.40 s, parent 0.18-0.23 s), then 0.26-0.30 s; h100-16k 6.7 s, then 5.2 s
# (idle 2 cores). With the hosts' files in the parent, the 98,304-GPU RoCE design's parent held ~45 s
# (render + write) against the child's ~17 s: its 24,576 host files in 12,288 folders cost 1.6 s to
# render and 9.6 s to write; in the child it is ~34 s against ~29 s (the IB designs render no host
# file). The fork pays early: render_into of h100-256 (725 links) took 0.17-0.19 s in one process and
# 0.12-0.14 s in two.
PARALLEL_LINKS = 500
CHILD_RENDERERS = ("render_netbox_csv", "render_hosts", "render_floor", "render_labels", "render_rows")


def render_into(plan: Plan, folder: Path, parallel: bool | None = None) -> dict[str, str]:
    """Every renderer's files written into `folder` (write_tree's staging folder) as each renderer
    finishes, so only one renderer's output is in memory at a time; returns {path: sha256}. The files
    are render_all's, byte for byte. `parallel` (default: by the plan's size) renders CHILD_RENDERERS
    in a forked child; an error in either process surfaces as the error of the first failing renderer
    in RENDERERS order, as when rendering in one process."""
    with paused_gc():  # about half the NetBox files' time at 98k GPUs: see generators.gc_pause
        return _render_into(plan, folder, parallel)


def _render_into(plan: Plan, folder: Path, parallel: bool | None) -> dict[str, str]:
    if parallel is None:
        parallel = len(plan.links) >= PARALLEL_LINKS and (os.cpu_count() or 1) > 1
    if not parallel or not hasattr(os, "fork"):
        digests, failed = _render_some(plan, folder, list(enumerate(_renderers())))
        if failed is not None:
            raise failed[1]
        return _merge(digests, {})
    mine = [(i, r) for i, r in enumerate(_renderers()) if r.__name__ not in CHILD_RENDERERS]
    theirs = [(i, r) for i, r in enumerate(_renderers()) if r.__name__ in CHILD_RENDERERS]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: render its share, report {path: sha256} or its failure, and exit at once
        try:
            os.close(read)
            payload = _child_result(plan, folder, theirs)
            with os.fdopen(write, "wb") as fh:
                fh.write(payload)
        finally:
            os._exit(0)  # never back into the caller's stack (its cleanup is the parent's)
    os.close(write)
    try:
        mine_digests, mine_failed = _render_some(plan, folder, mine)
    finally:
        with os.fdopen(read, "rb") as fh:
            data = fh.read()  # until the child exits: it writes into folder, which the caller may remove
        os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the render worker process died without a result")
    their_digests, their_failed = pickle.loads(data)
    failures = [f for f in (mine_failed, their_failed) if f is not None]
    if failures:
        raise min(failures, key=lambda f: f[0])[1]
    return _merge(mine_digests, their_digests)


def _child_result(plan: Plan, folder: Path, renderers: list[tuple[int, Renderer]]) -> bytes:
    """The child's pickled (digests, failure): a bug's error carries the child's traceback as a note (the
    parent re-raises it, so the CLI's internal-error report shows where it happened)."""
    try:
        digests, failed = _render_some(plan, folder, renderers)
    except BaseException as exc:  # e.g. KeyboardInterrupt: the parent still gets an answer
        digests, failed = {}, (-1, RuntimeError(f"render worker stopped: {exc!r}"))
    if failed is not None and not isinstance(failed[1], DesignError):
        failed[1].add_note("in the render worker process:\n" + "".join(traceback.format_exception(failed[1])))
    try:
        return pickle.dumps((digests, failed))
    except Exception as exc:  # an error that does not pickle: its text
        return pickle.dumps((digests, (failed[0] if failed else -1, RuntimeError(f"{failed[1]!r}: {exc}"))))


def _render_some(plan: Plan, folder: Path, renderers: list[tuple[int, Renderer]]
                 ) -> tuple[dict[str, str], tuple[int, BaseException] | None]:
    """Stage these renderers' files; stops at the first that raises and returns (its index, the error)."""
    digests: dict[str, str] = {}
    for i, r in renderers:
        try:
            files = r(plan)
            for path in files:
                if path in digests:
                    raise RuntimeError(f"two renderers write {path}")
            digests.update(stage_files(files, folder))
        except Exception as exc:  # re-raised by render_into, in RENDERERS order
            return digests, (i, exc)
        del files  # before the next renderer makes its own
    return digests, None


def _merge(a: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    both = sorted(set(a) & set(b))
    if both:
        raise RuntimeError(f"two renderers write {both[0]}")
    return dict(sorted({**a, **b}.items()))
