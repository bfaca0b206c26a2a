# Frozen copy (commit 9c25dee) for the migration engine test; do not edit.
"""The site as a Pulumi component tree: Site -> Network / Folder -> Rack -> one FileArtifact per file.

Grouping is generic so artifacts added by any renderer appear without code here: a file goes under
its top folder (a Network component when the folder is one of the plan's networks, else a Folder),
then under a Rack when its path names a rack (`cabling/racks/r01-03.html`) or a device placed in one
(`frontend/fe-leaf01/frr.conf`); files at the top of the output (plan.json, bom.json) hang off the
Site itself.

Pulumi URNs carry the chain of parent *types* (not names). Every artifact therefore gets aliases
for the other chains it could have had, so a file that moves between groups (a switch re-racked,
racks appearing once a floor plan exists) stays the same resource instead of being created under
its new URN and then deleted, file and all, under its old one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pulumi

from components.artifact import FileArtifact
from generators.model import secrets
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.reports.facts import site_facts

SITE_T = "railyard:site:Site"
NETWORK_T = "railyard:site:Network"
FOLDER_T = "railyard:site:Folder"
RACK_T = "railyard:site:Rack"
ARTIFACT_T = "pulumi-python:dynamic/railyard:FileArtifact"


@dataclass(frozen=True, slots=True)
class Placement:
    section: str | None  # top folder of the path; None for files at the top of the output
    network: bool  # the section is one of the plan's networks
    rack: str | None


def rack_index(plan: Plan) -> tuple[set[str], dict[str, str]]:
    """Rack names (placement's racks) and device -> rack (`Device.rack`, set by placement)."""
    racks = {r.name for r in plan.racks}
    return racks, {d.name: d.rack for d in plan.devices if d.rack is not None}


def place(path: str, networks: set[str], racks: set[str], device_rack: Mapping[str, str]) -> Placement:
    parts = PurePosixPath(path).parts
    section = parts[0] if len(parts) > 1 else None
    rack = None
    for part in parts[1:] if section else ():
        stem = part.split(".", 1)[0]
        if part in racks or stem in racks:
            rack = part if part in racks else stem
            break
        if part in device_rack or stem in device_rack:
            rack = device_rack.get(part) or device_rack[stem]
            break
    return Placement(section, section in networks if section else False, rack)


def artifact_aliases(path: str, here: Placement) -> list[str]:
    """URNs this artifact would have had under the other groupings of its top folder."""
    stack, project = pulumi.get_stack(), pulumi.get_project()
    chains = (
        {(SITE_T,)}
        if here.section is None
        else {(SITE_T, sec, *rk) for sec in (NETWORK_T, FOLDER_T) for rk in ((), (RACK_T,))}
    )
    mine = (
        (SITE_T,)
        if here.section is None
        else (SITE_T, NETWORK_T if here.network else FOLDER_T, *((RACK_T,) if here.rack else ()))
    )
    return [f"urn:pulumi:{stack}::{project}::{'$'.join((*c, ARTIFACT_T))}::{path}" for c in sorted(chains - {mine})]


class Group(pulumi.ComponentResource):
    def __init__(self, t: str, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(t, name, None, opts)
        self.register_outputs(props)


class Site(pulumi.ComponentResource):
    """Every rendered file of one compiled design, written under out_dir, grouped as the site is."""

    artifacts: dict[str, FileArtifact]
    facts: dict[str, Any]

    def __init__(
        self,
        name: str,
        plan: Plan,
        files: Mapping[str, str],
        out_dir: str,
        secret_values: Mapping[str, pulumi.Output[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(SITE_T, name, None, opts)
        self.facts = site_facts(plan, files)
        racks, device_rack = rack_index(plan)
        networks = set(plan.networks)
        groups: dict[tuple[str, str | None], pulumi.Resource] = {}

        def parent_of(pl: Placement) -> pulumi.Resource:
            if pl.section is None:
                return self
            key = (pl.section, None)
            if key not in groups:
                t = NETWORK_T if pl.network else FOLDER_T
                groups[key] = Group(
                    t, pl.section, {"kind": "network" if pl.network else "folder"}, pulumi.ResourceOptions(parent=self)
                )
            if pl.rack is None:
                return groups[key]
            rkey = (pl.section, pl.rack)
            if rkey not in groups:
                # rack components are named per section: the same rack appears under several
                groups[rkey] = Group(
                    RACK_T, f"{pl.section}/{pl.rack}", {"rack": pl.rack}, pulumi.ResourceOptions(parent=groups[key])
                )
            return groups[rkey]

        needs = {path: secrets.referenced(text) for path, text in files.items()}
        problems = []
        for path, needed in needs.items():  # every missing secret, before any resource is registered
            try:
                secrets.require(needed, secret_values or {}, path)
            except DesignError as exc:
                problems += exc.problems
        if problems:
            raise DesignError(problems)
        self.artifacts = {}
        for path, text in files.items():
            pl = place(path, networks, racks, device_rack)
            needed = needs[path]
            content: pulumi.Input[str] = text
            if needed:
                content = _filled(path, text, needed, secret_values or {})
            self.artifacts[path] = FileArtifact(
                path,
                out_dir,
                path,
                content,
                secret=bool(needed),
                opts=pulumi.ResourceOptions(parent=parent_of(pl), aliases=artifact_aliases(path, pl)),
            )
        self.register_outputs({"artifacts": len(self.artifacts)})


def _filled(path: str, text: str, needed: set[str], values: Mapping[str, pulumi.Output[str]]) -> pulumi.Output[str]:
    names = sorted(needed)
    return pulumi.Output.all(*(values[n] for n in names)).apply(
        lambda vs: secrets.fill(text, dict(zip(names, vs, strict=True)), path)
    )
