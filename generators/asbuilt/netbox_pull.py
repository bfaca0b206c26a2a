"""As-built from NetBox: the cables a site team recorded there, against the cables the plan wants.

`railyard netbox push` writes every planned cable with railyard's key (`railyard_id`); technicians
then mark cables connected, delete ones that are not there, re-terminate ones plugged elsewhere, or
add cables railyard never planned. `pull` reads every cable of the site back and reports, like
`verify`, each difference with both ends as device, port, rack and unit, and the cable's id and label:

* missing: a planned cable NetBox no longer has (and no cable joins its ports);
* moved: a railyard cable whose ends are not the planned ones;
* extra: a cable between ports that no planned cable joins;
* wrong: a cable on the planned ports whose type or length is not the planned one.

Cables are matched by railyard's key first, then by the ports they join, so a cable the site team
deleted and drew again by hand is not reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from generators.asbuilt.verify import End, PlanLocator
from generators.handover.http import Opt, Req, check
from generators.handover.netbox_sync import Client, NetBoxError
from generators.model.plan import Plan
from generators.text.escape import printable
from generators.views.netbox_model import KEY_FIELD, NbObject, Termination

# what pull reads of a NetBox cable (a field, when there, must be of its shape)
_VALUE = (str, {"value": Opt(str)})  # a choice: its value, or {"value": ..., "label": ...}
_ENDS = Opt([{"object_type": Opt(str), "object": Opt({"name": Opt(str), "device": Opt({"name": Opt(str)})})}])
_CABLE = {
    "id": Req(int),
    "custom_fields": Opt({KEY_FIELD: Opt(str)}),
    "label": Opt(str),
    "length": Opt(float),
    "type": Opt(_VALUE),
    "status": Opt(_VALUE),
    "a_terminations": _ENDS,
    "b_terminations": _ENDS,
}


@dataclass(frozen=True, slots=True)
class CableEnd:
    device: str
    port: str
    rack: str | None
    unit: int | str | None

    def text(self) -> str:
        where = f" [rack {self.rack} U{self.unit}]" if self.rack is not None else ""
        return f"{self.device} {self.port}{where}"


@dataclass(frozen=True, slots=True)
class CableFinding:
    kind: str  # missing, moved, extra, wrong
    cable_id: str | None  # railyard's key, when the cable has one
    label: str | None
    ends: list[CableEnd]  # planned ends (missing, moved, wrong) or found ends (extra)
    found: list[CableEnd] = field(default_factory=list)  # moved: where NetBox has it now
    detail: str = ""

    def text(self) -> str:
        ends = " <-> ".join(e.text() for e in self.ends)
        ref = f"cable {self.cable_id}" + (f" label '{self.label}'" if self.label else "") if self.cable_id else ""
        extra = f" (NetBox: {' <-> '.join(e.text() for e in self.found)})" if self.found else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.kind.upper():8} {ends}{extra}{detail}" + (f"\n         {ref}" if ref else "")


@dataclass(slots=True)
class PullReport:
    site: str
    planned: int
    found: int
    connected: int  # NetBox cables marked connected (as-built progress)
    findings: list[CableFinding]

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "planned": self.planned,
            "found": self.found,
            "connected": self.connected,
            "ok": self.ok,
            "findings": [asdict(f) for f in self.findings],
        }

    def text(self) -> str:
        lines = [
            f"NetBox site {self.site}: {self.found:,} cables found, {self.planned:,} planned, "
            f"{self.connected:,} marked connected"
        ]
        lines += [f.text() for f in self.findings]
        lines.append(
            "as-built matches the plan"
            if self.ok
            else f"{len(self.findings)} difference{'s' if len(self.findings) != 1 else ''} from the plan"
        )
        # names and labels of cables railyard did not plan are NetBox's text: escaped, never obeyed
        return printable("\n".join(lines) + "\n")


@dataclass(frozen=True, slots=True)
class _Want:
    key: str
    ends: frozenset[End]
    label: str | None
    type: str | None
    length: float | None


def _port(key: str) -> End:
    device, _, port = key.partition(":")
    return device, port


def _wanted(objects: Iterable[NbObject]) -> tuple[list[_Want], str]:
    cables, site = [], ""
    for o in objects:
        if o.endpoint == "dcim/sites":
            site = str(o.fields.get("slug") or "")
        if o.endpoint != "dcim/cables":
            continue
        terms = [t for side in ("a_terminations", "b_terminations") for t in o.fields.get(side, [])]
        ends = frozenset(_port(t.interface.key) for t in terms if isinstance(t, Termination))
        length = o.fields.get("length")
        cables.append(
            _Want(
                o.key, ends, o.fields.get("label"), o.fields.get("type"), float(length) if length is not None else None
            )
        )
    return cables, site


def _found_ends(cable: dict[str, Any]) -> frozenset[End]:
    out = set()
    for side in ("a_terminations", "b_terminations"):
        for t in cable.get(side) or []:
            obj = t.get("object") or {}
            dev = (obj.get("device") or {}).get("name")
            if t.get("object_type") == "dcim.interface" and dev and obj.get("name"):
                out.add((dev, obj["name"]))
    return frozenset(out)


def _value(v: Any) -> Any:
    return v.get("value") if isinstance(v, dict) else v


def pull(plan: Plan, objects: list[NbObject], client: Client) -> PullReport:
    wanted, slug = _wanted(objects)
    sites = client.all("dcim/sites", slug=slug)
    if not sites:
        raise NetBoxError(f"NetBox has no site {slug!r}: run `railyard netbox push` first")
    found = client.all("dcim/cables", site_id=sites[0]["id"])
    check(found, [_CABLE], "NetBox's dcim/cables")
    where = PlanLocator(plan)

    def ends(e: Iterable[End]) -> list[CableEnd]:
        return [CableEnd(d, p, where.location((d, p)).rack, where.location((d, p)).unit) for d, p in sorted(e)]

    by_key = {str(c["custom_fields"][KEY_FIELD]): c for c in found if (c.get("custom_fields") or {}).get(KEY_FIELD)}
    by_ends: dict[frozenset[End], dict[str, Any]] = {_found_ends(c): c for c in found}
    planned_ends = {w.ends for w in wanted}
    findings: list[CableFinding] = []
    for w in sorted(wanted, key=lambda w: w.key):
        c = by_ends.get(w.ends)
        if c is None and w.key in by_key:
            now = _found_ends(by_key[w.key])
            findings.append(
                CableFinding("moved", w.key, w.label, ends(w.ends), ends(now), "re-terminate it on the planned ports")
            )
            continue
        if c is None:
            findings.append(
                CableFinding(
                    "missing", w.key, w.label, ends(w.ends), detail="not in NetBox: pull it, or restore the record"
                )
            )
            continue
        wrong = []
        if w.type and _value(c.get("type")) and _value(c.get("type")) != w.type:
            wrong.append(f"type {_value(c.get('type'))}, planned {w.type}")
        have_len = c.get("length")
        if w.length is not None and have_len is not None and not math.isclose(float(have_len), w.length):
            wrong.append(f"length {float(have_len):g} m, planned {w.length:g} m")
        if wrong:
            findings.append(CableFinding("wrong", w.key, w.label, ends(w.ends), detail="; ".join(wrong)))
    known = set(by_key) & {w.key for w in wanted}
    for c in sorted(found, key=lambda c: c["id"]):
        e = _found_ends(c)
        key = (c.get("custom_fields") or {}).get(KEY_FIELD)
        if e in planned_ends or (key in known):
            continue
        findings.append(
            CableFinding(
                "extra",
                key,
                c.get("label") or None,
                ends(e),
                detail=f"NetBox cable #{c['id']} joins ports no planned cable joins",
            )
        )
    connected = sum(_value(c.get("status")) == "connected" for c in found)
    return PullReport(slug, len(wanted), len(found), connected, findings)
