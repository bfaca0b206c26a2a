# Frozen copy (commit 90105bc) for the migration engine test; do not edit.
"""The Pulumi program behind `__main__.py`: stack config -> compiled design -> Site -> stack outputs.

Stack config (namespace `railyard`):
  design     design YAML, relative to the project directory (required)
  outDir     where the artifacts are written (default deploy/<stack>)
  overrides  optional list of `path=value` what-if overrides, as `railyard compile --set`
  switchPassword, bmcPassword, snmpCommunity, bgpPassword
             secrets (`pulumi config set --secret ...`), needed only when an artifact refers to them
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi

from components.site import Site
from generators.compiler import compile_file
from generators.model import secrets
from generators.model.errors import DesignError
from generators.renderers import render_all

# stack output name -> site_facts key
OUTPUTS = {
    "design": "design",
    "gpus": "gpus",
    "servers": "servers",
    "switches": "switches",
    "switchesByNetwork": "switches_by_network",
    "links": "links",
    "cables": "cables",
    "cablesByNetworkMedium": "cables_by_network_medium",
    "costTotalUsd": "cost_total_usd",
    "costPerGpuUsd": "cost_per_gpu_usd",
    "costByCategory": "cost_by_category",
    "artifacts": "artifacts",
}


def resolve(path: str, base: Path) -> Path:
    p = Path(path).expanduser()
    return (p if p.is_absolute() else base / p).resolve()


def secret_config(cfg: pulumi.Config) -> dict[str, pulumi.Output[str]]:
    """The secrets that are set, as secret Outputs (never plain strings in the program)."""
    out = {}
    for name, key in secrets.SECRETS.items():
        value = cfg.get_secret(key)
        if value is not None:
            out[name] = value
    return out


def build(
    design: Path,
    out_dir: Path,
    overrides: list[str] | None = None,
    secret_values: dict[str, pulumi.Output[str]] | None = None,
    name: str | None = None,
) -> Site:
    try:
        plan, _, _ = compile_file(design, overrides)
        files = render_all(plan)
        site = Site(name or plan.design.name, plan, files, str(out_dir), secret_values)
    except DesignError as exc:
        # RunError: the CLI prints the message alone, without a Python traceback
        raise pulumi.RunError(f"the design is not valid:\n{exc}") from None
    return site


def main() -> None:
    cfg = pulumi.Config("railyard")
    base = Path.cwd()  # the language host runs the program in the project directory
    design = resolve(cfg.require("design"), base)
    # Pulumi.yaml declares outDir with default "" (a key without a default would be demanded by the
    # engine), so empty and unset both mean the default
    out_dir = resolve(cfg.get("outDir") or f"deploy/{pulumi.get_stack()}", base)
    if out_dir == design.parent or out_dir in design.parents or out_dir == (base / "designs").resolve():
        raise pulumi.RunError(
            f"railyard:outDir {out_dir} holds the design {design} (or is designs/): railyard "
            "deploys into a folder of its own, e.g. deploy/<stack>"
        )
    overrides: Any = cfg.get_object("overrides") or []
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        raise pulumi.RunError("railyard:overrides must be a list of path=value strings")
    site = build(design, out_dir, overrides, secret_config(cfg))
    for out, key in OUTPUTS.items():
        pulumi.export(out, site.facts[key])
    pulumi.export("outDir", str(out_dir))
