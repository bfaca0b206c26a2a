"""Loading a design: read the YAML (with `extends:` and `--set`), validate its shape, merge its catalog
overlay, resolve a rack system and check it against the catalog. Every failure is one DesignError
naming the fields and their lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from generators.model.catalog import DEFAULT_CATALOG, Catalog, load_catalog
from generators.model.design.resolved import backend_speed, resolve_system, with_management_on_fabric
from generators.model.design.schema import Design
from generators.model.design.validation import check_against_catalog, check_inside_planes, check_plane_split
from generators.model.errors import DesignError, Problem, did_you_mean
from generators.model.yamlload import SourceMap, apply_overrides, load_with_extends, where


def load_design(
    path: Path, overrides: list[str] | None = None, catalog_path: Path | None = None
) -> tuple[Design, Catalog, SourceMap]:
    """Load, merge `extends:`, apply `--set`, validate shape and catalog rules. Raises DesignError."""
    data, src = load_with_extends(Path(path))
    data = apply_overrides(data, src, overrides or [])
    return validate_design(data, src, catalog_path)


def validate_design(
    data: dict[str, Any], src: SourceMap, catalog_path: Path | None = None
) -> tuple[Design, Catalog, SourceMap]:
    """The second half of load_design, for a design already read and merged (`railyard explore` builds each
    variant's data in memory): validate shape and catalog rules, each problem at its line in `src`."""
    try:
        design = Design.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = err["loc"]
            msg = err["msg"].removeprefix("Value error, ")
            field = ".".join(str(p) for p in loc) or "(design)"
            # model-level rules name their field at the start of the message
            if not loc and (m := re.match(r"([a-z_.]+): (.*)", msg)):
                field, msg = m.group(1), m.group(2)
                loc = tuple(field.split("."))
            if err["type"] == "extra_forbidden":
                msg, fix = "unknown field", did_you_mean(Design, loc) + "`railyard schema` lists every field"
            elif err["type"] == "missing":
                fix = "add this field"
            else:
                fix = fix_for(err)
            at = where(src, loc)
            if err["type"] == "extra_forbidden" and len(loc) == 1 and (line := _extended_by(src, at)):
                # a top-level key of an extended file that is not a design: say where it came in
                msg = f"unknown field, from {at.rsplit(':', 1)[0]}, which `extends:` at {line} brings in"
                fix = f"extend a railyard design at {line} (is {at.rsplit(':', 1)[0]} one?)"
            problems.append(Problem(field, msg, fix, at))
        raise DesignError(problems) from None
    catalog = load_catalog(catalog_path or DEFAULT_CATALOG, design.catalog.tables(), src)
    design = resolve_system(design, catalog, src)
    issues = check_inside_planes(design, catalog) or check_plane_split(design, catalog)
    if not issues and design.backend.plane_split == "nic_port" and design.backend.planes is not None:
        # the server as its NIC ports run broken out into the planes: every stage reads the split ports
        catalog = catalog.with_nic_planes(design.compute.server, design.backend.planes)
    issues = issues or check_against_catalog(design, catalog)
    if issues:
        raise DesignError([Problem(".".join(p), m, fx, where(src, p)) for p, m, fx in issues])
    catalog = with_management_on_fabric(design, catalog)
    return design, catalog.with_switch_at(design.backend.switch, backend_speed(design, catalog)), src


def _extended_by(src: SourceMap, at: str) -> str | None:
    """The `extends:` line that brought in the file of location `at` (None: the design file itself)."""
    return src.get(("extends", at.rsplit(":", 1)[0]))


def fix_for(err: ErrorDetails) -> str:
    ctx = err.get("ctx") or {}
    if "fix" in ctx:  # a validator's own fix (PydanticCustomError with ctx["fix"])
        return str(ctx["fix"])
    if "expected" in ctx:
        return f"use one of {ctx['expected']}"
    if err["type"].startswith(("greater", "less")):
        return "use a value in range"
    return "see `railyard schema` for the allowed values"
