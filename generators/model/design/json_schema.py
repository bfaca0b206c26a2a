"""`railyard schema`: the JSON Schema of a design *file* as written, for editors and CI.

The pydantic model describes a design after `extends:` is merged; a file is not that. What this adds:

- `extends:` at the top level, and a file that has it is partial: every mapping merges key by key
  with its parent, so no field of a mapping is required. Lists replace the parent's list whole
  (yamlload.deep_merge), so list items (tenants, rows, keep-outs) stay complete in a partial file.
  A file without `extends:` must be a complete design (the `else` branch).
- Catalog keys (switch, server, NIC, CPU, license, rack, PDU models) are enums of the keys the loader
  would accept there, read from the catalog in use, so an editor completes them and flags a typo.
- Speeds, ratios and partition keys accept what their validators accept ("200G" or 200, "2:1" or 2,
  0x1001 or 4097): that part lives on the model's types (design.py), not here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from generators.model.catalog import Catalog
from generators.model.design.schema import Design

# draft-07, not pydantic's 2020-12: yaml-language-server (VS Code's YAML extension and others) implements
# draft-07 and warns on later dialects; nothing here needs more (if/else, enums, patterns, $ref)
DIALECT = "http://json-schema.org/draft-07/schema#"
MARK = "x-catalog"  # set by design.catalog_key on each field that names a catalog entry


def _licenses(unit: str) -> Callable[[Catalog], list[str]]:
    return lambda c: [k for k, v in c.licenses.items() if v.unit == unit]


# table name on the field -> the keys check_against_catalog accepts in such a field, whatever else the
# design says (a filter that depends on another field, e.g. the backend switch's technology, is left
# to `railyard validate`)
CATALOG_CHOICES: dict[str, Callable[[Catalog], list[str]]] = {
    "gpu_servers": lambda c: [
        k
        for k, v in c.servers.items()
        if v.gpus and v.backend is not None and k not in {rs.tray for rs in c.rack_systems.values()}
    ],
    "servers": lambda c: list(c.servers),
    "switches": lambda c: list(c.switches),
    "ethernet_switches": lambda c: [k for k, v in c.switches.items() if v.technology == "ethernet"],
    "cpus": lambda c: list(c.cpus),
    "nics": lambda c: list(c.nics),
    "storage_servers": lambda c: list(c.storage_servers),
    "licenses_tb": _licenses("tb"),
    "licenses_endpoint": _licenses("endpoint"),
    "licenses_gpu_year": _licenses("gpu_year"),
    "racks": lambda c: list(c.racks),
    "pdus": lambda c: list(c.pdus),
    "rack_systems": lambda c: list(c.rack_systems),
    "cdus": lambda c: list(c.cdus),
}


def design_schema(catalog: Catalog) -> dict[str, Any]:
    """JSON Schema (draft-07) of a design file for this catalog."""
    full = Design.model_json_schema(ref_template="#/definitions/{model}")
    defs: dict[str, Any] = full.pop("$defs")  # pydantic's key; the refs already say #/definitions/
    defs["Design"] = full
    for name, d in defs.items():
        for field, prop in d.get("properties", {}).items():
            if MARK in prop:
                _enum(prop, sorted(CATALOG_CHOICES[prop.pop(MARK)](catalog)), f"{name}.{field}")
    partial = _Partial(defs)
    root = partial.of(copy.deepcopy(full))
    root["properties"] = {
        "extends": {
            "type": "string",
            "minLength": 1,
            "description": "design file this one overrides, relative "
            "to this file's folder; with it, every field is optional and mappings merge key by key "
            "(lists are replaced whole)",
        },
        **root["properties"],
    }
    return {
        "$schema": DIALECT,
        "title": "railyard design",
        "description": full.get("description", ""),
        **{k: v for k, v in root.items() if k not in ("title", "description")},
        # a file that extends nothing is a whole design: everything the model requires, required
        "if": {"required": ["extends"]},
        "else": {"$ref": "#/definitions/Design"},
        "definitions": dict(sorted(defs.items())),
    }


def _enum(prop: dict[str, Any], keys: list[str], where: str) -> None:
    """Put the enum on the string branch of a `str` or `str | None` property. A catalog with no entry of
    a kind (racks and licenses are optional tables) gives an empty enum: no name is valid there, as
    `railyard validate` would say too, and null still is where the field allows it."""
    if prop.get("type") == "string":
        prop["enum"] = keys
        return
    for branch in prop.get("anyOf", []):
        if branch.get("type") == "string":
            branch["enum"] = keys
            return
    raise ValueError(f"{where}: a catalog key field must be a string")


class _Partial:
    """Copies of the model schemas with no required field, reached through mappings only."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def of(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.of(n) for n in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in ("required", "if", "then", "else"):  # a conditional says what is required
                continue
            if k == "$ref":
                out[k] = self.ref(v)
            elif k == "items":  # a list replaces its parent's whole: its items are complete
                out[k] = v
            elif k == "properties":
                out[k] = {name: self.of(p) for name, p in v.items()}
            elif k in ("anyOf", "oneOf", "allOf", "additionalProperties"):
                out[k] = self.of(v)
            else:
                out[k] = v
        return out

    def ref(self, ref: str) -> str:
        name = ref.removeprefix("#/definitions/")
        part = f"{name}Partial"
        if part not in self.defs:
            self.defs[part] = {}  # reserved first: a model reachable from itself would recurse forever
            self.defs[part] = self.of(self.defs[name])
        return f"#/definitions/{part}"
