"""CPU seconds of `railyard explore`'s evaluation of a variant against a full compile of the same variant,
and a 16,384-GPU search of 200 variants.

1. Per variant, 1,024 GPUs: each of the 12 variants of designs/spaces/h100-1024-playbook.yaml over
   designs/h100-1024-reference.yaml is evaluated as the search does (generators.explore.evaluate: the
   compiler's stages, no renderer), then compiled in full as `railyard compile` does (the same stages,
   every renderer, and the files written to a temp folder through the output folder's transaction). CPU
   seconds of this process and of any renderer child it forks, medians over the variants that compile;
   the ratio is of the same run.
2. The 16k search: designs/spaces/h100-16k.yaml over designs/h100-16k.yaml (Optuna, 200 variants) on
   --jobs worker processes: wall seconds, the CPU seconds the workers spent evaluating (each task's own
   process_time, summed) and per variant.
Run: python bench/explore.py [--jobs 2] [--skip-16k]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from host import describe

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generators.compiler import compile_loaded  # noqa: E402
from generators.explore.evaluate import evaluate  # noqa: E402
from generators.explore.parallel import runner  # noqa: E402
from generators.explore.search import Base, search, variant_task  # noqa: E402
from generators.explore.space import load_space  # noqa: E402
from generators.model.design.loader import validate_design  # noqa: E402
from generators.model.yamlload import deep_merge, load_with_extends  # noqa: E402
from generators.output import write_tree  # noqa: E402
from generators.renderers import render_into  # noqa: E402


def _children() -> float:
    """CPU seconds of this process's finished children: a large plan's renderers share the work with a
    forked child (generators.renderers.render_into), whose time process_time does not count."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def per_variant() -> None:
    base_path = ROOT / "designs" / "h100-1024-reference.yaml"
    data, src = load_with_extends(base_path)
    space = load_space(ROOT / "designs" / "spaces" / "h100-1024-playbook.yaml", data, src)
    base = Base(data, src, data["name"])
    import itertools

    fast, full = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, choice in enumerate(itertools.product(*(range(len(a.candidates)) for a in space.axes))):
            task, _ = variant_task(space, base, choice, f"p{i + 1:04d}")
            out = evaluate(task)
            if out.metrics is None:
                continue  # refused: a full compile stops at the same stage
            fast.append(out.cpu_s)
            t0, k0 = time.process_time(), _children()
            design, catalog, s = validate_design(deep_merge(data, task.doc), dict(src))
            plan = compile_loaded(design, catalog, s)
            write_tree(lambda folder, plan=plan: render_into(plan, folder), Path(tmp) / f"v{i}", "--out")
            full.append(time.process_time() - t0 + _children() - k0)
    f, c = statistics.median(fast), statistics.median(full)
    print(
        f"1,024 GPUs, {len(fast)} variants: evaluation {f:.3f} CPU s, full compile {c:.3f} CPU s (median); "
        f"ratio {f / c:.3f} (1/{c / f:.1f})"
    )


def search_16k(jobs: int) -> None:
    base_path = ROOT / "designs" / "h100-16k.yaml"
    data, src = load_with_extends(base_path)
    space = load_space(ROOT / "designs" / "spaces" / "h100-16k.yaml", data, src)
    run = runner(jobs, None)
    t0 = time.perf_counter()
    c0 = time.process_time()
    try:
        result = search(space, Base(data, src, data["name"]), run)
    finally:
        run.close()
    wall = time.perf_counter() - t0
    here = time.process_time() - c0
    cpu = sum(p.cpu_s for p in result.points)
    n = len(result.points)
    feasible = sum(p.feasible for p in result.points)
    print(
        f"16,384 GPUs, {space.size} variants, {result.method}: {n} evaluated ({feasible} feasible, "
        f"{len(result.front)} on the front) in {wall:.0f} s wall on {jobs} processes; "
        f"{cpu:.0f} CPU s evaluating, {cpu / n:.2f} CPU s per variant; {here:.1f} CPU s in the searching process"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-16k", action="store_true")
    args = ap.parse_args()
    print(describe())
    per_variant()
    if not args.skip_16k:
        search_16k(args.jobs)
    print(describe("after"))


if __name__ == "__main__":
    main()
