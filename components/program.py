"""The Pulumi program behind `__main__.py`: stack config -> compiled design -> Site -> stack outputs.

Stack config (namespace `railyard`):
  design     design YAML, relative to the project directory (required)
  outDir     where the artifacts are written (default deploy/<stack>)
  overrides  optional list of `path=value` what-if overrides, as `railyard compile --set`
  allowMoves true: deploy although devices the last `up` placed would stand in another rack or unit
             (default false: such a run fails naming the moves, components/moves.py)
  switchPassword, snmpAuthPassword, snmpPrivPassword, bgpPassword, tacacsKey, radiusKey, bmcPassword,
  snmpCommunity, and any <camelCase> secret a design names (management.users[].password_secret)
             secrets (`pulumi config set --secret ...`), needed only when an artifact refers to them
             (docs/howto/day0.md)
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import Any

import pulumi
import pulumi.runtime.resource
from pulumi.runtime.proto import source_pb2

from components import sitecache
from components.site import Site, site_layout
from generators.compiler import compile_loaded
from generators.model import secrets
from generators.model.design import load_design
from generators.model.errors import DesignError

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


class ConfigSecrets(Mapping[str, pulumi.Output[str]]):
    """The stack's secrets by name, as secret Outputs (never plain strings in the program), read from the
    config when a file asks for one: besides the well-known ones (secrets.SECRETS) a design may name its
    own (management.users[].password_secret -> railyard:<camelCase>)."""

    def __init__(self, cfg: pulumi.Config) -> None:
        self._cfg = cfg
        self._read: dict[str, pulumi.Output[str] | None] = {}

    def _get(self, name: str) -> pulumi.Output[str] | None:
        if name not in self._read:
            key = secrets.config_key(name).split(":", 1)[1] if secrets.known(name) else None
            self._read[name] = self._cfg.get_secret(key) if key else None
        return self._read[name]

    def __getitem__(self, name: str) -> pulumi.Output[str]:
        value = self._get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._get(name) is not None

    def __iter__(self) -> Iterator[str]:  # the well-known secrets that are set, and any read since
        return iter(sorted({n for n in (*secrets.SECRETS, *self._read) if n in self}))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def secret_config(cfg: pulumi.Config) -> ConfigSecrets:
    """The stack's secrets (see ConfigSecrets)."""
    return ConfigSecrets(cfg)


def build(
    design: Path,
    out_dir: Path,
    overrides: list[str] | None = None,
    secret_values: Mapping[str, pulumi.Output[str]] | None = None,
    name: str | None = None,
    allow_moves: bool = False,
) -> Site:
    """The Site of a design: from the compiled-site cache when this design, catalog and railyard were
    compiled before (components.sitecache), else compiled and rendered, then recorded for the next run."""
    try:
        loaded, catalog, src = load_design(design, overrides)
        key = sitecache.site_key(loaded.model_dump(mode="json"), catalog.model_dump(mode="json"))
        if key is not None:
            layout = sitecache.load(key, None if pulumi.runtime.is_dry_run() else str(out_dir))
            if layout is not None:
                pulumi.log.info(
                    f"railyard: {design.name} with this catalog and railyard is in the site cache "
                    f"({key[:12]}): nothing compiled (RAILYARD_SITE_CACHE=off compiles)"
                )
                return Site(name or layout.name, layout, str(out_dir), secret_values, allow_moves=allow_moves)
        from generators.renderers import render_all  # a cache hit renders nothing

        plan = compile_loaded(loaded, catalog, src)
        layout = site_layout(plan, render_all(plan))
        site = Site(name or layout.name, layout, str(out_dir), secret_values, allow_moves=allow_moves)
    except DesignError as exc:
        # RunError: the CLI prints the message alone, without a Python traceback
        raise pulumi.RunError(f"the design is not valid:\n{exc}") from None
    if key is not None:
        sitecache.save(key, layout, {n: g.entries for n, g in site.groups.items() if g.entries is not None})
    return site


def _registration_frame() -> source_pb2.StackTrace:
    """The frame that constructed the resource being registered, alone: what `sourcePosition` shows.

    The SDK (3.272) sends the whole Python stack with every registration (program, asyncio, the
    language host's frames) and the engine keeps it in the state: ~1.5 kB per resource, 31% of the
    state of h100-1024-reference, with no option or environment variable to turn it off. It also reads
    every frame's source line (`traceback.extract_stack`) per resource. This finds the same frame the
    SDK reports first (the caller of the third `__init__` up the stack: Resource, then Custom- or
    ComponentResource, then the concrete class) by walking frames, without reading any source."""
    frame: FrameType | None = sys._getframe(1)
    inits = 0
    while frame is not None:
        if frame.f_code.co_name == "__init__":
            inits += 1
            if inits == 3:
                break
        frame = frame.f_back
    caller = frame.f_back if frame is not None else None
    if caller is None:
        return source_pb2.StackTrace()
    try:
        uri = Path(caller.f_code.co_filename).as_uri()
    except ValueError:  # not an absolute file name (e.g. "<string>"): no position, as the SDK does
        return source_pb2.StackTrace()
    return source_pb2.StackTrace(
        frames=[source_pb2.StackFrame(pc=source_pb2.SourcePosition(uri=uri, line=caller.f_lineno))]
    )


def lean_stack_traces() -> None:
    """Register resources with one frame of stack trace instead of the whole stack (see
    _registration_frame). Stack traces are metadata the engine never diffs; only the state's size
    and the time to write it after every step change."""
    if not callable(getattr(pulumi.runtime.resource, "_get_stack_trace", None)):
        raise RuntimeError(
            "pulumi.runtime.resource._get_stack_trace is gone: the pinned SDK changed, "
            "check components/program.py's lean_stack_traces against it"
        )
    pulumi.runtime.resource._get_stack_trace = _registration_frame


def main() -> None:
    lean_stack_traces()
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
    site = build(design, out_dir, overrides, secret_config(cfg), allow_moves=cfg.get_bool("allowMoves") or False)
    for out, key in OUTPUTS.items():
        pulumi.export(out, site.facts[key])
    pulumi.export("outDir", str(out_dir))
