"""Where variants are evaluated: in this process (one job), a local process pool (the default), or a Dask
distributed cluster (`--cluster tcp://host:8786`).

Why Dask distributed rather than Ray: railyard's tasks are plain Python functions over picklable data, which
is what `Client.submit` / `as_completed` take, with no actor model or object store to learn; distributed is
a pure-Python package of a few MB (Ray's wheels are hundreds of MB and run their own GCS and raylet
daemons); a cluster is `dask scheduler` on one machine and `dask worker tcp://host:8786` on the others,
or `distributed.LocalCluster` in a test. The results do not depend on the engine: each task is a pure
function of its data, results are put back in the points' order, and the search asks Optuna for the same
batches whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Protocol

from generators.explore.evaluate import Outcome, Task, evaluate
from generators.model.errors import DesignError


class Runner(Protocol):
    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        """Each task's outcome, in the order they finish."""
        ...

    def close(self) -> None: ...


class InProcess:
    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        for t in tasks:
            yield evaluate(t)

    def close(self) -> None:
        pass


class LocalPool:
    """A process pool of forked workers: they start with railyard already imported, and a spawned one would
    import the main script again (the `railyard` command), which runs the command. Forked from a process
    with a thread running is unsafe (a lock the thread held stays held in the child), so the workers start
    here, at once, and the caller makes its pool before it starts a progress line's thread."""

    def __init__(self, jobs: int) -> None:
        self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
        self.pool.submit(os.getpid).result()  # a fork pool starts every worker at the first task

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        futures = [self.pool.submit(evaluate, t) for t in tasks]
        for f in as_completed(futures):
            yield f.result()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


class DaskCluster:
    def __init__(self, address: str, timeout_s: float = 30.0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise DesignError.one(
                "--cluster",
                "a Dask cluster needs the Python package distributed, which is not installed",
                "pip install 'railyard[search]', or leave --cluster out to use this machine's cores",
            ) from None
        try:
            self.client = Client(address, timeout=timeout_s)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as exc:
            raise DesignError.one(
                "--cluster",
                f"no Dask scheduler answers at {address}: {exc}",
                "start one (`dask scheduler`, then `dask worker ADDRESS` on each machine) and give its address, "
                "e.g. tcp://10.0.0.5:8786",
            ) from None

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        from distributed import as_completed as dask_completed

        # pure=False: two tasks of equal data are still two evaluations (their points differ by id only
        # when the space repeats a variant, which it refuses; this keeps Dask from merging keys it hashed)
        futures = [self.client.submit(evaluate, t, pure=False) for t in tasks]
        for f in dask_completed(futures):  # type: ignore[no-untyped-call]
            out: Outcome = f.result()
            yield out

    def close(self) -> None:
        self.client.close()  # type: ignore[no-untyped-call]


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity, which a container or taskset narrows)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def runner(jobs: int | None, cluster: str | None) -> Runner:
    if cluster:
        return DaskCluster(cluster)
    n = jobs or default_jobs()
    return InProcess() if n == 1 else LocalPool(n)


OnOutcome = Callable[[Outcome], None]
