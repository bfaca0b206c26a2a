"""Renderers: plan -> files. Each renderer is a pure function returning {relative path: text};
`render_all` gathers them so the writer can commit everything at once or nothing.

The renderer modules are imported on first use, not with the package: the output folder's writer
comes through this package, and the renderers bring jinja2, segno and the vendor modules (~0.3 s of a
1.3 s compile at 1,024 GPUs), which `railyard validate` and a cached Pulumi run never use.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Iterator
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
    from generators.renderers.failures import render_failures
    from generators.renderers.floor import render_floor
    from generators.renderers.hosts import render_hosts
    from generators.renderers.netbox_csv import render_netbox_csv
    from generators.renderers.oob_dhcp import render_kea
    from generators.renderers.pack import render_labels, render_rows
    from generators.renderers.slurm import render_slurm
    from generators.renderers.storage_tenants import render_storage_tenants
    from generators.renderers.ztp import render_ztp
    from generators.vendors import render_backend, render_frontend, render_oob, render_storage

    # switch configs through the vendor registry: each switch by the module of its catalog `os`
    found: list[Renderer] = [
        render_plan_json,
        render_frontend,
        render_oob,
        render_kea,
        render_ztp,
        render_netbox_csv,
        render_storage_tenants,
    ]
    found += [render_slurm, render_backend, render_storage, render_hosts]
    found += [render_cabling, render_floor, render_labels, render_rows]
    found.append(render_bom)  # DIR/bom.csv, bom.json, bom.html
    found.append(render_failures)  # DIR/failure-domains.csv: a multi-plane backend's failure domains
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
    renderers: list[Renderer] = __getattr__("RENDERERS")  # _load()'s list, or a test's
    return renderers


def render_all(plan: Plan) -> dict[str, str]:
    from generators.renderers.index import render_index

    files: dict[str, str] = {}
    for r in _renderers():
        for path, text in r(plan).items():
            if path in files:
                raise RuntimeError(f"two renderers write {path}")
            files[path] = text
    files.update(render_index(plan, files))  # last: it lists every other file
    return dict(sorted(files.items()))


# From this many links `render_into` renders on two cores: the parent forks a child and both take
# renderers from one queue until it is empty, the costliest first (SHARE_ORDER), so the two finish close
# together whatever the design makes costly (hosts' netplan files on a RoCE site, cable sheets on an
# InfiniBand one). A fixed split held the balance only for some designs: with plan.json, switch configs,
# cable sheets and BoM in the parent and the NetBox files, hosts' files, floor, labels and row bills in
# the child, the two spent 0.31 and 0.38 s of CPU on h100-512-roce and 0.35 and 0.28 s on h100-1024-vms;
# from the queue 0.35/0.35 and 0.32/0.31 s. The fork pays early: render_into of h100-256 (725 links)
# took 0.17-0.19 s in one process and 0.12-0.14 s in two.
PARALLEL_LINKS = 500
# most expensive first, from render + write times at 1,024 and 98,304 GPUs (bench/compile.py's designs):
# at 1,024 the cable and rack sheets (~0.10 s of CPU) and the NetBox files (~0.13 s) are the two largest;
# at 98k the NetBox files ~13 s, backend switch configs ~12.5 s, hosts' files ~11 s (write-bound: 24,576
# files in 12,288 folders), cable and rack sheets ~10 s, plan.json ~7.5 s; the rest are under 3 s. A
# renderer not listed (a test's) goes after these, in RENDERERS order.
SHARE_ORDER = (
    "render_netbox_csv",
    "render_cabling",
    "render_backend",
    "render_hosts",
    "render_plan_json",
    "render_labels",
    "render_frontend",
    "render_oob",
    "render_floor",
    "render_rows",
    "render_kea",
    "render_ztp",
    "render_slurm",
    "render_bom",
    "render_storage_tenants",
    "render_failures",
    "render_storage",
)


def render_into(plan: Plan, folder: Path, parallel: bool | None = None) -> dict[str, str]:
    """Every renderer's files written into `folder` (write_tree's staging folder) as each renderer
    finishes, so only one renderer's output is in memory at a time; returns {path: sha256}. The files
    are render_all's, byte for byte. `parallel` (default: by the plan's size) shares the renderers with
    a forked child; an error in either process surfaces as the error of the first failing renderer in
    RENDERERS order, as when rendering in one process."""
    with paused_gc():  # about half the NetBox files' time at 98k GPUs: see generators.gc_pause
        return _render_into(plan, folder, parallel)


def _queue(renderers: list[Renderer]) -> list[int]:
    """Indices into `renderers` in the order the two processes take them."""
    rank = {name: n for n, name in enumerate(SHARE_ORDER)}
    return sorted(range(len(renderers)), key=lambda i: (rank.get(renderers[i].__name__, len(rank)), i))


def _render_into(plan: Plan, folder: Path, parallel: bool | None) -> dict[str, str]:
    if parallel is None:
        parallel = len(plan.links) >= PARALLEL_LINKS and (os.cpu_count() or 1) > 1
    every = _renderers()
    if not parallel or not hasattr(os, "fork"):
        digests, failed = _render_some(plan, folder, every, iter(range(len(every))))
        if failed is not None:
            raise failed[1]
        return _indexed(plan, folder, _merge(digests, {}))
    # the queue is a pipe of 2-byte indices, filled and closed for writing before the fork: each read of
    # 2 bytes takes one index for one process, and an empty queue reads as end of file in both
    q_read, q_write = os.pipe()
    with os.fdopen(q_write, "wb") as fh:
        fh.write(b"".join(i.to_bytes(2, "little") for i in _queue(every)))
    read, write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: render its share, report {path: sha256} or its failure, and exit at once
        try:
            _die_with(parent)
            os.close(read)
            payload = _child_result(plan, folder, every, _taken(q_read))
            with os.fdopen(write, "wb") as fh:
                fh.write(payload)
        finally:
            os._exit(0)  # never back into the caller's stack (its cleanup is the parent's)
    os.close(write)
    try:
        mine_digests, mine_failed = _render_some(plan, folder, every, _taken(q_read))
    finally:
        os.close(q_read)
        with os.fdopen(read, "rb") as fh:
            data = fh.read()  # until the child exits: it writes into folder, which the caller may remove
        os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the render worker process died without a result")
    their_digests, their_failed = pickle.loads(data)
    failures = [f for f in (mine_failed, their_failed) if f is not None]
    if failures:
        raise min(failures, key=lambda f: f[0])[1]
    return _indexed(plan, folder, _merge(mine_digests, their_digests))


def _indexed(plan: Plan, folder: Path, digests: dict[str, str]) -> dict[str, str]:
    """The digests with DIR/index.html staged too: it lists every other file, so it comes last."""
    from generators.renderers.index import render_index

    return dict(sorted({**digests, **stage_files(render_index(plan, digests), folder)}.items()))


def _die_with(parent: int) -> None:
    """The render child dies with its parent: a compile killed (kill -9 included) stops writing at once
    instead of rendering on into a staging folder nobody will commit (Linux's PR_SET_PDEATHSIG; the
    parent may already be gone by the time it is set)."""
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = getattr(libc, "prctl", None)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _taken(fd: int) -> Iterator[int]:
    """The renderer indices this process takes from the shared queue, one at a time."""
    while len(data := os.read(fd, 2)) == 2:
        yield int.from_bytes(data, "little")


def _child_result(plan: Plan, folder: Path, renderers: list[Renderer], queue: Iterator[int]) -> bytes:
    """The child's pickled (digests, failure): a bug's error carries the child's traceback as a note (the
    parent re-raises it, so the CLI's internal-error report shows where it happened)."""
    try:
        digests, failed = _render_some(plan, folder, renderers, queue)
    except BaseException as exc:  # e.g. KeyboardInterrupt: the parent still gets an answer
        digests, failed = {}, (-1, RuntimeError(f"render worker stopped: {exc!r}"))
    if failed is not None and not isinstance(failed[1], DesignError):
        failed[1].add_note("in the render worker process:\n" + "".join(traceback.format_exception(failed[1])))
    try:
        return pickle.dumps((digests, failed))
    except Exception as exc:  # an error that does not pickle: its text
        index, error = failed if failed is not None else (-1, None)
        return pickle.dumps((digests, (index, RuntimeError(f"{error!r}: {exc}"))))


def _render_some(
    plan: Plan, folder: Path, renderers: list[Renderer], queue: Iterator[int]
) -> tuple[dict[str, str], tuple[int, BaseException] | None]:
    """Stage the files of the renderers this process takes from `queue`. After a renderer raises, only
    those before it in RENDERERS order still run (one of them may fail first); returns the digests and
    (the index, the error) of the first that raised, in RENDERERS order."""
    digests: dict[str, str] = {}
    failed: tuple[int, BaseException] | None = None
    for i in queue:
        if failed is not None and i > failed[0]:
            continue  # not needed: an earlier renderer failed (the other process still runs earlier ones)
        try:
            files = renderers[i](plan)
            for path in files:
                if path in digests:
                    raise RuntimeError(f"two renderers write {path}")
            digests.update(stage_files(files, folder))
        except Exception as exc:  # re-raised by render_into, in RENDERERS order
            failed = (i, exc)
            continue
        del files  # before the next renderer makes its own
    return digests, failed


def _merge(a: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    both = sorted(set(a) & set(b))
    if both:
        raise RuntimeError(f"two renderers write {both[0]}")
    return dict(sorted({**a, **b}.items()))
