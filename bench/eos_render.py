"""Per-switch EOS render time, both AVD paths in one process on tests/designs/h100-256-roce-eos.yaml
(EOS frontend and EOS RoCE backend): the frontend's structured config through `eos_designs`
(validate_inputs + get_avd_facts + get_device_structured_config) against the backend's built directly
(backend_structured_config + validate_structured_config), and each path's get_device_config (the
eos_cli_config_gen templates, the same code on both). Issue #18 item 3 asks for the direct path.
Run: python bench/eos_render.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from pyavd import (
    get_avd_facts,
    get_device_config,
    get_device_structured_config,
    validate_inputs,
    validate_structured_config,
)

from generators.compiler import compile_file
from generators.model.plan import Plan, required
from generators.vendors.eos import avd_inputs, backend_structured_config

DESIGN = Path(__file__).resolve().parent.parent / "tests/designs/h100-256-roce-eos.yaml"


def _render(scs: list[dict[str, Any]]) -> tuple[float, int]:
    t = time.perf_counter()
    lines = sum(len(get_device_config(sc).splitlines()) for sc in scs)
    return time.perf_counter() - t, lines


def frontend(plan: Plan) -> tuple[int, float, float, int]:
    """(switches, structured-config seconds, CLI seconds, CLI lines)."""
    t = time.perf_counter()
    fabric, hosts = avd_inputs(plan)
    validated = {h: validate_inputs({**fabric, "type": kind}).validated_data for h, kind in hosts.items()}
    facts = get_avd_facts(validated)
    scs = [get_device_structured_config(h, validated[h], facts) for h in hosts]
    built = time.perf_counter() - t
    return (len(scs), built, *_render(scs))


def backend(plan: Plan) -> tuple[int, float, float, int]:
    bn = required(plan.backend_net, "backend_net")
    ports: dict[str, list[Any]] = {s.name: [] for s in bn.switches}
    for p in bn.ports:
        ports[p.switch].append(p)
    t = time.perf_counter()
    scs = [validate_structured_config(backend_structured_config(plan, s, ports[s.name])).validated_data
           for s in bn.switches]
    built = time.perf_counter() - t
    return (len(scs), built, *_render(scs))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    rounds = ap.parse_args().rounds
    plan = compile_file(DESIGN, [])[0]
    frontend(plan), backend(plan)  # imports, schema and template loading
    for r in range(rounds):
        nf, fs, fr, fl = frontend(plan)
        nb, bs, br, bl = backend(plan)
        print(f"round {r}: structured config per switch: eos_designs {fs / nf * 1000:.0f} ms, direct "
              f"{bs / nb * 1000:.1f} ms ({fs / nf / (bs / nb):.0f}x); get_device_config per switch: frontend "
              f"{fr / nf * 1000:.0f} ms ({fl // nf} lines), backend {br / nb * 1000:.0f} ms ({bl // nb} lines)")


if __name__ == "__main__":
    main()
