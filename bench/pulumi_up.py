"""Wall time of `pulumi up` for a design on the real engine and a local file backend, then of a
no-change re-run (`up` again, and `preview --expect-no-changes`), the state's size and the cost per
resource, then `destroy`.

Run: python bench/pulumi_up.py [--design h100-1024-optimized] [--synthetic N] [--skip-checkpoints]
                               [--program before-groups | --migrate [before-groups | per-rack]]
                               [--no-site-cache] [--no-destroy]
                               [--json FILE]
  --synthetic N       add N files through the same component and provider (tests/engine_program)
  --skip-checkpoints  PULUMI_SKIP_CHECKPOINTS=true: the file backend writes the state at the end only
                      (default: after every step, as users run it), for comparison
  --program before-groups
                      deploy with railyard's program as it was before FileGroup, one FileArtifact
                      resource per file (tests/engine_program_before_groups), for the before figures
  --migrate [FROM]    deploy with an earlier program first (checkpoints skipped: it is only the
                      starting point), then time the `up` that moves the stack to today's program
                      (the "migrate" line) in the checkpoint mode asked for, and go on. FROM:
                      before-groups (default), the per-file program above; per-rack, today's program
                      with one group per rack, as groups were before they became per row
                      (tests/engine_program_per_rack)
  --no-site-cache     RAILYARD_SITE_CACHE=off: the program compiles and renders the design on every run,
                      as it did before its compiled-site cache (components.sitecache), for comparison
The engine comes from scripts/install-pulumi.sh (found or built); state lives in a temp dir, the
program's site cache in the stack's own folder (empty at the first `up`). The program's work on a miss
(compiling and rendering the design) is measured once in this process and printed beside the
engine's times; the no-change line says whether that run came from the site cache.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generators.compiler import compile_file  # noqa: E402
from generators.renderers import render_all  # noqa: E402
from tests.pulumi_engine import Secret, Stack, snapshot, type_of  # noqa: E402

PROGRAMS = {
    "now": (ROOT, None),
    "before-groups": (ROOT / "tests" / "engine_program_before_groups",) * 2,
    "per-rack": (ROOT / "tests" / "engine_program_per_rack", None),
}


CPU: dict[str, float] = {}  # step -> CPU seconds of pulumi and every process it ran (program, providers)


def timed(fn: Callable[[], object], step: str = "") -> float:
    """Wall seconds of fn; with a step name also its CPU seconds into CPU. On a shared 2-core machine
    the wall time moves with the neighbours' load, the CPU time much less: compare both."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if step:
        CPU[step] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)
    return wall


def state_file(st: Stack) -> Path:
    """The stack's checkpoint as the file backend keeps it (`<backend>/.pulumi/stacks/<project>/<stack>.json`,
    gzipped when PULUMI_SELF_MANAGED_STATE_GZIP is set)."""
    found = [
        p
        for p in (st.state / ".pulumi" / "stacks").rglob(f"{st.name}.json*")
        if p.name in (f"{st.name}.json", f"{st.name}.json.gz")
    ]
    if len(found) != 1:
        raise RuntimeError(f"expected one state file for stack {st.name}, found {found}")
    return found[0]


def measure(
    design: str,
    synthetic: int,
    skip_checkpoints: bool,
    program: str,
    destroy: bool,
    migrate: str | None = None,
    site_cache: bool = True,
) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    plan = compile_file(ROOT / "designs" / f"{design}.yaml")[0]
    render_all(plan)  # the work the program does before registering anything
    program_s, program_cpu = time.perf_counter() - t0, time.process_time() - c0
    with tempfile.TemporaryDirectory(prefix="railyard-bench-") as tmp:
        out = Path(tmp) / "site"
        # absolute: a program other than the repository's runs from its own folder
        config: dict[str, Any] = {
            "railyard:design": str(ROOT / "designs" / f"{design}.yaml"),
            "railyard:outDir": str(out),
        }
        main_dir, pythonpath = PROGRAMS[program]
        if synthetic:
            config.update(
                {
                    "railyard:count": synthetic,
                    "railyard:racked": "true",
                    "railyard:bmcPassword": Secret("bench-Secret-123"),
                }
            )
            main_dir = ROOT / "tests" / "engine_program"
        if migrate:
            main_dir, pythonpath = PROGRAMS[migrate]
        t0 = time.perf_counter()
        st = Stack(Path(tmp), config, main=main_dir, skip_checkpoints=skip_checkpoints, pythonpath=pythonpath)
        if not site_cache:
            st.env["RAILYARD_SITE_CACHE"] = "off"
        setup = time.perf_counter() - t0
        before = None
        if migrate:
            # the earlier stack is only the starting point: deploy it without per-step checkpoints (at
            # h100-16k the per-file one would take most of an hour), then time the move in the mode asked for
            st.env["PULUMI_SKIP_CHECKPOINTS"] = "true"
            before = timed(lambda: st.run("up", "--yes", "--skip-preview"))
            if not skip_checkpoints:
                del st.env["PULUMI_SKIP_CHECKPOINTS"]
            files = snapshot(out)
            st.use_program(*PROGRAMS["now"])
        first = timed(lambda: st.run("up", "--yes", "--skip-preview"), "up_create")
        if migrate:
            assert snapshot(out) == files, "the migration rewrote, removed or added files"
        files = snapshot(out)
        exported = st.run("stack", "export").stdout
        resources = json.loads(exported)["deployment"]["resources"]
        by_type = collections.Counter(type_of(r["urn"]) for r in resources)
        on_disk = state_file(st).stat().st_size
        runs: list[str] = []
        again = timed(lambda: runs.append(st.run("up", "--yes", "--skip-preview").stdout), "up_no_change")
        cache_hit = "site cache" in runs[0]
        assert snapshot(out) == files, "the no-change up rewrote files"
        preview = timed(lambda: st.run("preview", "--expect-no-changes"), "preview_no_change")
        gone = timed(lambda: st.run("destroy", "--yes", "--skip-preview")) if destroy else None
    return {
        "design": design,
        "synthetic": synthetic,
        "program": f"{migrate} -> now" if migrate else program,
        "migrate_from": migrate,
        "up_before_s": None if before is None else round(before, 1),
        "checkpoints": "end only (PULUMI_SKIP_CHECKPOINTS=true)" if skip_checkpoints else "every step (default)",
        "files": len(files),
        "resources": len(resources),
        "resources_by_type": dict(by_type.most_common()),
        "compile_render_s": round(program_s, 1),
        "compile_render_cpu_s": round(program_cpu, 1),
        "stack_init_s": round(setup, 1),
        "cpu_s": dict(CPU),
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "no_change_from_site_cache": cache_hit,
        "up_create_s": round(first, 1),
        "up_no_change_s": round(again, 1),
        "preview_no_change_s": round(preview, 1),
        "destroy_s": None if gone is None else round(gone, 1),
        "state_export_bytes": len(exported.encode()),
        "state_file_bytes": on_disk,
        "ms_per_resource_create": round(1000 * first / len(resources), 2),
        "ms_per_resource_no_change": round(1000 * again / len(resources), 2),
        "ms_per_resource_no_change_engine": round(1000 * max(again - program_s, 0) / len(resources), 2),
        "state_bytes_per_resource": len(exported.encode()) // len(resources),
    }


def report(r: dict[str, Any]) -> str:
    extra = f" + {r['synthetic']} synthetic files" if r["synthetic"] else ""
    n = r["resources"]
    kinds = ", ".join(f"{c} {t.rsplit(':', 1)[-1]}" for t, c in r["resources_by_type"].items())
    return "\n".join(
        [
            f"design {r['design']}{extra}, program {r['program']}, state checkpoint {r['checkpoints']}",
            f"  files {r['files']:,}   resources in state {n:,} ({kinds})",
            f"  compile + render (the program, on a cache miss) {r['compile_render_s']:5.1f} s   "
            f"CPU {r['compile_render_cpu_s']:.1f} s",
            f"  stack init + config                            {r['stack_init_s']:6.1f} s",
            *(
                [f"  {'pulumi up, ' + r['migrate_from'] + ' program (no checkpoints)':46}{r['up_before_s']:7.1f} s"]
                if r["up_before_s"] is not None
                else []
            ),
            f"  {'pulumi up (migrate)' if r['up_before_s'] is not None else 'pulumi up (create all)':46}"
            f"{r['up_create_s']:7.1f} s   CPU {r['cpu_s']['up_create']:.1f} s   "
            f"{r['ms_per_resource_create']:.1f} ms/resource",
            f"  pulumi up (no change)                          {r['up_no_change_s']:6.1f} s   "
            f"CPU {r['cpu_s']['up_no_change']:.1f} s   {r['ms_per_resource_no_change']:.1f} ms/resource "
            + (
                "(from the site cache: nothing compiled)"
                if r["no_change_from_site_cache"]
                else f"({r['ms_per_resource_no_change_engine']:.1f} without compile + render)"
            ),
            f"  preview --expect-no-changes                    {r['preview_no_change_s']:6.1f} s   "
            f"CPU {r['cpu_s']['preview_no_change']:.1f} s",
            *([f"  pulumi destroy                                 {r['destroy_s']:6.1f} s"] if r["destroy_s"] else []),
            f"  state: `pulumi stack export` {r['state_export_bytes']:,} bytes, file on disk "
            f"{r['state_file_bytes']:,} bytes ({r['state_bytes_per_resource']:,} bytes/resource)",
            f"  load average at the end {r['load_average']} (2 cores)",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--design", default="h100-1024-optimized")
    ap.add_argument("--synthetic", type=int, default=0)
    ap.add_argument("--skip-checkpoints", action="store_true")
    ap.add_argument("--program", choices=sorted(PROGRAMS), default="now")
    ap.add_argument("--migrate", nargs="?", const="before-groups", choices=["before-groups", "per-rack"])
    ap.add_argument("--no-site-cache", action="store_true")
    ap.add_argument("--no-destroy", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    a = ap.parse_args()
    r = measure(a.design, a.synthetic, a.skip_checkpoints, a.program, not a.no_destroy, a.migrate, not a.no_site_cache)
    print(report(r))
    if a.json:
        a.json.write_text(json.dumps(r, indent=1) + "\n")


if __name__ == "__main__":
    main()
