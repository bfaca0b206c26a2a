"""The site as a Pulumi resource tree: Site -> Network / Folder components -> one FileGroup per row.

Grouping is generic so artifacts added by any renderer appear without code here: a file goes under
its top folder (a Network component when the folder is one of the plan's networks, else a Folder),
then into its row's group when its path names a rack (`cabling/racks/r01-03.html`) or a device
placed in one (`frontend/fe-leaf01/frr.conf`); files at the top of the output (plan.json, bom.json)
belong to the Site itself. Each group of files is one FileGroup resource, the map path -> hash that
`pulumi preview --diff` shows key by key, named `.` (the Site's own files), after its top folder (that
section's files of no rack) or `<top folder>/<row>`.

Why a row and not a rack: every resource costs the engine a check, a diff and a state checkpoint on
each `up`, and at h100-16k the per-rack groups were 823 resources (620 of them a rack's 4 cabling
sheets) for a no-change `up` of ~10 s; per row they are 122. The preview stays as readable: it marks
the changed paths (which name the rack) inside the row's group. (Before that, a Rack component per
rack and section had doubled the resources again.) Files that embed a secret go to a second group,
`<name>#secret`, whose map is encrypted.

Pulumi URNs carry the chain of parent *types* (not names). A group's name fixes which section and
row it is for, so a group is always the same resource under either section type: its alias names
the URN it has under the other (a top folder that becomes one of the plan's networks). A file that
moves between groups (a switch moved to another row, or a stack made when groups were per rack) is
taken by the one and let go by the other; `.railyard/owners.json`, written before any resource is
registered, tells the one letting go not to remove it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pulumi

from components.artifact import FileGroup, prune_blobs, stores_blobs, write_owners
from components.moves import Placement as PlacementRecord
from generators.model import secrets
from generators.model.errors import DesignError
from generators.model.plan import Plan
from generators.reports.diff import placement, placement_entries
from generators.reports.facts import site_facts

SITE_T = "railyard:site:Site"
NETWORK_T = "railyard:site:Network"
FOLDER_T = "railyard:site:Folder"
RACK_T = "railyard:site:Rack"  # components of the programs before FileGroup; racks are groups now
GROUP_T = "pulumi-python:dynamic/railyard:FileGroup"
SECRET_SUFFIX = "#secret"  # the group of a component's files that embed a secret


@dataclass(frozen=True, slots=True)
class Placement:
    section: str | None  # top folder of the path; None for files at the top of the output
    network: bool  # the section is one of the plan's networks
    row: str | None  # the row of the rack the path names, or of the rack its device is placed in


def rack_index(plan: Plan) -> tuple[dict[str, str], dict[str, str]]:
    """rack -> its row (placement's racks) and device -> rack (`Device.rack`, set by placement)."""
    rack_row = {r.name: r.row for r in plan.racks}
    return rack_row, {d.name: d.rack for d in plan.devices if d.rack is not None}


def place(path: str, networks: set[str], rack_row: Mapping[str, str], device_rack: Mapping[str, str]) -> Placement:
    parts = PurePosixPath(path).parts
    section = parts[0] if len(parts) > 1 else None
    rack = None
    for part in parts[1:] if section else ():
        stem = part.split(".", 1)[0]
        if part in rack_row or stem in rack_row:
            rack = part if part in rack_row else stem
            break
        if part in device_rack or stem in device_rack:
            rack = device_rack.get(part) or device_rack[stem]
            break
    return Placement(section, section in networks if section else False, None if rack is None else rack_row[rack])


def group_name(here: Placement) -> str:
    """The FileGroup a file belongs to is named after its component: `.` (the Site), the top folder, or
    `<top folder>/<row>`. A path fixes its group name, whatever the section's type."""
    if here.section is None:
        return "."
    return here.section if here.row is None else f"{here.section}/{here.row}"


def group_aliases(name: str, here: Placement) -> list[str]:
    """The URN the group of this name has under the other section type (Network <-> Folder)."""
    if here.section is None:
        return []
    stack, project = pulumi.get_stack(), pulumi.get_project()
    other = FOLDER_T if here.network else NETWORK_T
    chain = (SITE_T, other, GROUP_T)
    return [f"urn:pulumi:{stack}::{project}::{'$'.join(chain)}::{name}"]


class Group(pulumi.ComponentResource):
    def __init__(self, t: str, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(t, name, None, opts)
        self.register_outputs(props)


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """One FileGroup to register. A group made from a fresh compile holds its files' texts (a secret
    group's with their placeholders, filled at registration); a group of a public section read back from
    the compiled-site cache (components.sitecache) holds only their entries, so a design that did not
    change registers without being compiled, rendered or hashed again."""

    where: Placement
    texts: Mapping[str, str]  # path -> text
    needs: Mapping[str, frozenset[str]]  # path -> the secrets its text refers to (a secret group's files)
    entries: Mapping[str, str] | None = None  # path -> entry_text, instead of texts (from the cache)

    @property
    def paths(self) -> list[str]:
        return list(self.entries if self.entries is not None else self.texts)


@dataclass(frozen=True, slots=True)
class SiteLayout:
    """What the Site registers: the stack's facts, its FileGroups by name (sorted), and where each
    device stands (generators.reports.diff.placement_entries), which components.moves records."""

    facts: dict[str, Any]
    groups: dict[str, GroupSpec]
    placement: dict[str, str]

    @property
    def name(self) -> str:
        return str(self.facts["design"])

    def owner(self) -> dict[str, str]:
        """path -> the name of the group holding it."""
        return {path: name for name, g in self.groups.items() for path in g.paths}


def site_layout(plan: Plan, files: Mapping[str, str]) -> SiteLayout:
    """The groups of a compiled plan's rendered files (see the module docstring)."""
    rack_row, device_rack = rack_index(plan)
    networks = set(plan.networks)
    groups: dict[str, tuple[Placement, dict[str, str], dict[str, frozenset[str]]]] = {}
    for path, text in files.items():
        needed = frozenset(secrets.referenced(text))
        here = place(path, networks, rack_row, device_rack)
        _, texts, needs = groups.setdefault(group_name(here) + (SECRET_SUFFIX if needed else ""), (here, {}, {}))
        texts[path] = text
        if needed:
            needs[path] = needed
    return SiteLayout(
        site_facts(plan, files),
        {name: GroupSpec(here, texts, needs) for name, (here, texts, needs) in sorted(groups.items())},
        placement_entries(placement(plan)),
    )


class Site(pulumi.ComponentResource):
    """Every rendered file of one compiled design, written under out_dir, grouped as the site is."""

    groups: dict[str, FileGroup]  # group name -> its resource
    owner: dict[str, str]  # path -> the name of the group holding it
    facts: dict[str, Any]
    placement: PlacementRecord  # where each device stands, as deployed (components.moves)

    def __init__(
        self,
        name: str,
        layout: SiteLayout,
        out_dir: str,
        secret_values: Mapping[str, pulumi.Output[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        allow_moves: bool = False,
    ) -> None:
        super().__init__(SITE_T, name, None, opts)
        self.facts = layout.facts
        values = secret_values if secret_values is not None else {}
        # every missing secret (once, naming a file that needs it), before any resource is registered
        needs = {path: needed for g in layout.groups.values() for path, needed in g.needs.items()}
        if problems := secrets.missing(needs, values):
            raise DesignError(problems)
        self.owner = layout.owner()
        # where each device stands; its check refuses moves of what the last `up` placed (components.moves),
        # and every group waits for it, so a refused run deploys no file
        self.placement = PlacementRecord(
            "placement", layout.name, layout.placement, allow_moves, pulumi.ResourceOptions(parent=self)
        )
        owners_written: pulumi.Output[Any] | None = None
        if stores_blobs(out_dir):
            # once the Placement check passed (a refused run leaves the last deployment's record) and
            # before any group is registered, so before any provider step of this run can read it
            owners_written = self.placement.id.apply(lambda _: write_owners(Path(out_dir), self.owner))
        sections: dict[str, pulumi.Resource] = {}

        def parent_of(pl: Placement) -> pulumi.Resource:
            if pl.section is None:
                return self
            if pl.section not in sections:
                t = NETWORK_T if pl.network else FOLDER_T
                sections[pl.section] = Group(
                    t, pl.section, {"kind": "network" if pl.network else "folder"}, pulumi.ResourceOptions(parent=self)
                )
            return sections[pl.section]

        self.groups = {}
        for gname, g in layout.groups.items():
            opts_ = pulumi.ResourceOptions(
                parent=parent_of(g.where), aliases=group_aliases(gname, g.where), depends_on=[self.placement]
            )
            if g.needs:
                contents: Mapping[str, pulumi.Input[str]] = {
                    p: _filled(p, t, set(g.needs[p]), values) if p in g.needs else t for p, t in g.texts.items()
                }
                self.groups[gname] = FileGroup(gname, out_dir, contents, secret=True, opts=opts_, after=owners_written)
            else:
                self.groups[gname] = FileGroup(
                    gname, out_dir, g.texts, entries=g.entries, opts=opts_, after=owners_written
                )
        _prune_when_deployed(out_dir, list(self.groups.values()))
        self.register_outputs({"artifacts": len(self.owner), "groups": len(self.groups)})


def _prune_when_deployed(out_dir: str, groups: list[FileGroup]) -> None:
    """Drop the stored copies of contents no file has any more, so the blob store holds one copy of the
    current site, not every version ever deployed. It waits for every group's `files` output, which
    resolves only when its create/update (or `same`) step is done: no provider can still be copying
    from a blob by then. A failed step never resolves, so a failed `up` prunes nothing."""
    if not stores_blobs(out_dir):
        return
    pulumi.Output.all(*(g.files for g in groups)).apply(
        # an entry starts with its file's hash (entry_text)
        lambda maps: prune_blobs(Path(out_dir), {e.split(" ", 1)[0] for m in maps for e in m.values()})
    )


def _filled(path: str, text: str, needed: set[str], values: Mapping[str, pulumi.Output[str]]) -> pulumi.Output[str]:
    names = sorted(needed)
    return pulumi.Output.all(*(values[n] for n in names)).apply(
        lambda vs: secrets.fill(text, dict(zip(names, vs, strict=True)), path)
    )
