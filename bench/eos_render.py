"""Per-switch EOS frontend render time, the same switches through both AVD paths in one process:

- eos_designs: what the compile ran before issue #18 item 3 and what an arista.avd user runs on the
  frontend/avd/fabric.yml + hosts.yml railyard writes: validate_inputs (here once per node type, which
  is cheaper than an inventory's once per host), get_avd_facts over the fabric, then per switch
  get_device_structured_config and pyavd's get_device_config.
- direct (the compile now): frontend_structured_config from the plan, validate_structured_config, and
  eos_cli (railyard's template of the keys it builds, generators/vendors/eos_text.py).
- for reference, pyavd's own eos_cli_config_gen templates (one reused environment, pyavd_cli) on the
  same validated structured configs: what the direct path's rendering cost before eos_text.

All three produce the same text (asserted on every switch each round). Default design:
tests/designs/h100-256-roce-eos.yaml (6 frontend switches).
Run: python bench/eos_render.py [--rounds 3] [--design designs/h100-16k.yaml --set frontend.vendor=eos
     --set frontend.switch=DCS-7060DX5-64S --rounds 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pyavd import (
    get_avd_facts,
    get_device_config,
    get_device_structured_config,
    validate_inputs,
    validate_structured_config,
)

from generators.compiler import compile_file
from generators.model.plan import Plan
from generators.vendors import eos_text
from generators.vendors.eos import avd_inputs, eos_cli, frontend_structured_config, pyavd_cli
from generators.views.switches import frontend_views

# CPU time of this process: the machine is shared, and wall time counts other processes' turns too
_clock = time.process_time
DESIGN = Path(__file__).resolve().parent.parent / "tests/designs/h100-256-roce-eos.yaml"


def eos_designs(plan: Plan) -> tuple[dict[str, str], dict[str, float]]:
    """({switch: EOS CLI}, seconds per stage) through eos_designs."""
    s: dict[str, float] = {}
    t = _clock()
    fabric, hosts = avd_inputs(plan)
    by_type = {k: validate_inputs({**fabric, "type": k}).validated_data for k in sorted(set(hosts.values()))}
    validated = {h: by_type[k] for h, k in hosts.items()}
    s["inputs + validate_inputs"] = _clock() - t
    t = _clock()
    facts = get_avd_facts(validated)
    s["get_avd_facts"] = _clock() - t
    t = _clock()
    scs = {h: get_device_structured_config(h, validated[h], facts) for h in hosts}
    s["get_device_structured_config"] = _clock() - t
    t = _clock()
    cli = {h: get_device_config(sc) for h, sc in scs.items()}
    s["get_device_config"] = _clock() - t
    return cli, s


def direct(plan: Plan) -> tuple[dict[str, str], dict[str, float], float]:
    """({switch: EOS CLI}, seconds per stage, seconds of pyavd's templates on the same structured configs)
    through railyard's own structured config."""
    s: dict[str, float] = {}
    t = _clock()
    views = frontend_views(plan)
    scs = {n: frontend_structured_config(plan, v, views) for n, v in views.items()}
    s["frontend_structured_config"] = _clock() - t
    t = _clock()
    validated = {n: validate_structured_config(sc).validated_data for n, sc in scs.items()}
    s["validate_structured_config"] = _clock() - t
    t = _clock()
    cli = {n: eos_cli(sc) for n, sc in validated.items()}
    s["eos_cli"] = _clock() - t
    t = _clock()
    assert {n: pyavd_cli(sc) for n, sc in validated.items()} == cli
    return cli, s, _clock() - t


def _ms(stages: dict[str, float], n: int) -> str:
    return ", ".join(f"{k} {v / n * 1000:.1f}" for k, v in stages.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--design", type=Path, default=DESIGN)
    ap.add_argument("--set", dest="sets", action="append", default=[])
    a = ap.parse_args()
    plan = compile_file(a.design, a.sets)[0]
    if plan.netplan is None or plan.netplan.vendor != "eos":
        raise SystemExit("the design's frontend is not EOS (add --set frontend.vendor=eos and an EOS switch)")
    # imports, AVD schemas and the template environment, outside the timings
    views = frontend_views(plan)
    first = validate_structured_config(frontend_structured_config(plan, *[*views.values()][:1], views)).validated_data
    eos_cli(first), pyavd_cli(first), get_device_config(first)
    fabric, hosts = avd_inputs(plan)
    validate_inputs({**fabric, "type": "spine"})
    print(f"{plan.design.name}: {len(views)} frontend switches ({', '.join(sorted(set(hosts.values())))})")
    outside = [
        n
        for n, v in views.items()
        if not eos_text.fits(validate_structured_config(frontend_structured_config(plan, v, views)).validated_data)
    ]
    # those take pyavd's templates in eos_cli: same text, a template run's time
    print(f"  outside eos_text's subset: {len(outside)} {sorted(outside)[:5]}")
    best_e: dict[str, float] = {}
    best_d: dict[str, float] = {}
    best_p = float("inf")
    n = len(views)
    for r in range(a.rounds):
        ref, es = eos_designs(plan)
        got, ds, ps = direct(plan)
        assert got == ref, [h for h in ref if got.get(h) != ref[h]]
        best_e = {k: min(v, best_e.get(k, v)) for k, v in es.items()}
        best_d = {k: min(v, best_d.get(k, v)) for k, v in ds.items()}
        best_p = min(best_p, ps)
        _report(f"round {r}", es, ds, ps, n)
    if a.rounds > 1:
        _report(f"best of {a.rounds} per stage", best_e, best_d, best_p, n)


def _report(what: str, es: dict[str, float], ds: dict[str, float], ps: float, n: int) -> None:
    e_sc = sum(v for k, v in es.items() if k != "get_device_config")
    d_sc = ds["frontend_structured_config"] + ds["validate_structured_config"]
    e_all, d_all = sum(es.values()), sum(ds.values())
    print(
        f"{what}: CPU ms per switch: eos_designs [{_ms(es, n)}] = {e_all / n * 1000:.1f}; "
        f"direct [{_ms(ds, n)}] = {d_all / n * 1000:.1f}"
    )
    print(
        f"  structured config: eos_designs {e_sc / n * 1000:.1f} ms, direct {d_sc / n * 1000:.2f} ms "
        f"({e_sc / d_sc:.0f}x); whole path with rendering: {e_all / n * 1000:.1f} ms vs "
        f"{d_all / n * 1000:.1f} ms ({e_all / d_all:.1f}x); same {n} eos.cfg texts"
    )
    print(
        f"  rendering: eos_cli {ds['eos_cli'] / n * 1000:.1f} ms, pyavd's templates on the same structured "
        f"configs {ps / n * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
