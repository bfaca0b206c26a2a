"""`railyard init`: a starting design for a GPU system and a size, written out in full with a comment
on every field from the schema's own descriptions (the schema documents each field once).

A start is one of the shipped designs that is built of that system (its fabric, frontend, storage, site
choices are known to compile), resized to the GPUs asked for in whole scalable units, with the shipped
design's tenants left out (a site names its own) and its chassis options left to the catalog's defaults.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import BaseModel

from generators.model.catalog import SHIPPED, Catalog
from generators.model.design.schema import Design
from generators.model.errors import DesignError
from generators.model.yamlload import load_with_extends

DESIGNS = SHIPPED  # the shipped designs (package data)

# (backend technology, GPU system) -> the shipped design a start copies; a system not named here takes
# the start of its GPU model and backend NIC speed (STARTS_BY_GPU)
STARTS: dict[tuple[str, str], str] = {
    ("infiniband", "hgx-h100"): "h100-1024-reference",
    ("infiniband", "hgx-b200"): "b200-1024",
    ("infiniband", "dgx-b300"): "b300-xdr",
    ("infiniband", "gb200-nvl72"): "gb200-nvl72-1152",
    ("infiniband", "gb300-nvl72"): "gb300-nvl72-4608",
    ("roce", "hgx-h100"): "h100-512-roce",
    ("roce", "hgx-b300-2x400gbe"): "b300-spectrumx",
    ("roce", "gb300-nvl72-spectrumx"): "gb300-nvl72-spectrumx-576",
    ("roce", "vr-nvl72"): "vr-nvl72-576",
    ("roce", "mi355x-8gpu-lc"): "mi355x-1024-roce",
    ("roce", "helios"): "helios-576",
    ("roce", "vru-kyber-nvl144"): "vru-kyber-800vdc-1152",
    # MRC's planes of 100G ports; the start keeps the shipped design's plane split at a size that compiles
    ("roce", "hgx-b200-800gbe"): "spectrumx-8plane-131k",
}
# fields a start leaves out: a site's own tenants; chassis options the catalog's defaults give
DROP = (("tenants",), ("compute", "config"), ("description",))


@dataclass(frozen=True, slots=True)
class Start:
    text: str  # the design file
    name: str
    servers: int
    gpus: int
    units: int  # scalable units
    based_on: str  # the shipped design it copies


def systems(catalog: Catalog) -> list[str]:
    """What a start can be built of: GPU server models (not a rack system's trays) and rack systems."""
    trays = {rs.tray for rs in catalog.rack_systems.values()}
    servers = [k for k, s in catalog.servers.items() if s.gpus and s.backend is not None and k not in trays]
    return sorted(servers) + sorted(catalog.rack_systems)


def _start_of(catalog: Catalog, technology: str, system: str) -> str:
    if (technology, system) in STARTS:
        return STARTS[(technology, system)]
    srv = catalog.servers.get(system)
    if srv is not None and srv.backend is not None:
        speed = catalog.nics[srv.backend.nic].speed_gbps
        for (tech, key), start in STARTS.items():
            other = catalog.servers.get(key)
            if (
                tech == technology
                and other is not None
                and other.backend is not None
                and other.gpu_model == srv.gpu_model
                and catalog.nics[other.backend.nic].speed_gbps == speed
            ):
                return start
    have = sorted({s for t, s in STARTS if t == technology})
    raise DesignError.one(
        "--system",
        f"no shipped {technology} design is built of {system} to start from",
        f"start from one of {', '.join(have)}, or write the design from `railyard schema`",
    )


def start(catalog: Catalog, system: str, gpus: int, technology: str = "infiniband", name: str = "") -> Start:
    """A starting design of at least `gpus` GPUs of `system`, in whole scalable units."""
    if system not in systems(catalog):
        raise DesignError.one(
            "--system", f"unknown GPU system {system!r}", f"use one of: {', '.join(systems(catalog))}"
        )
    if gpus < 1:
        raise DesignError.one("--gpus", f"{gpus} GPUs", "ask for at least one GPU")
    based_on = _start_of(catalog, technology, system)
    data, _ = load_with_extends(DESIGNS / f"{based_on}.yaml")
    for path in DROP:
        node = data
        for part in path[:-1]:
            node = node.get(part, {})
        node.pop(path[-1], None)
    compute = data["compute"]
    if system in catalog.rack_systems:
        rs = catalog.rack_systems[system]
        per_rack = rs.trays * catalog.servers[rs.tray].gpus
        su_racks = data.get("backend", {}).get("su_size", rs.su_racks * rs.trays) // rs.trays
        racks = math.ceil(math.ceil(gpus / per_rack) / su_racks) * su_racks
        compute.update({"system": system, "racks": racks})
        servers, units = racks * rs.trays, racks // su_racks
    else:
        per_server = catalog.servers[system].gpus
        su = data.get("backend", {}).get("su_size", 32)
        units = math.ceil(math.ceil(gpus / per_server) / su)
        servers = units * su
        compute.update({"server": system, "count": servers})
    tray = catalog.rack_systems[system].tray if system in catalog.rack_systems else system
    got = servers * catalog.servers[tray].gpus
    name = name or f"{system}-{got}"
    text = _write(
        {"name": name, **{k: v for k, v in data.items() if k != "name"}},
        [
            f"A starting design: {got:,} GPUs of {system} in {units} scalable unit{'s' if units != 1 else ''} on "
            f"{'an InfiniBand' if technology == 'infiniband' else 'a RoCE'} backend,",
            f"from the shipped design {based_on} (railyard init). Every field is commented with what it",
            "does; `railyard schema` lists every field there is (`railyard schema > design.schema.json`",
            "beside this file gives an editor completion), `railyard validate` checks a change.",
        ],
    )
    return Start(text, name, servers, got, units, based_on)


def _field(model: type[BaseModel] | None, key: str) -> tuple[str, type[BaseModel] | None]:
    """(description, the model of its value when it is one) of a field of `model`."""
    if model is None or key not in model.model_fields:
        return "", None
    info = model.model_fields[key]
    inner: Any = info.annotation
    for _ in range(4):  # Optional / Annotated / list of a model
        args = [a for a in typing.get_args(inner) if isinstance(a, type) and issubclass(a, BaseModel)]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            break
        inner = args[0] if args else None
    sub = inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None
    return info.description or "", sub


def _write(data: dict[str, Any], head: list[str]) -> str:
    lines = ["# yaml-language-server: $schema=design.schema.json", *(f"# {h}" for h in head), ""]
    _mapping(data, Design, 0, lines)
    return "\n".join(lines) + "\n"


def _mapping(d: dict[str, Any], model: type[BaseModel] | None, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for key, value in d.items():
        desc, sub = _field(model, key)
        if desc:
            lines.append(f"{pad}# {desc}")
        if isinstance(value, dict) and value and sub is not None:
            lines.append(f"{pad}{key}:")
            _mapping(value, sub, indent + 2, lines)
        else:
            flow = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip()
            flow = flow.removesuffix("\n...").removesuffix("...").strip()
            lines.append(f"{pad}{key}: {flow}")
