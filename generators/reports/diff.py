"""`railyard diff`: what a design change does to the site, for the pull request that makes it.

The review leads with intent and then shows consequences, in the order a reviewer asks:
1. the design fields that differ, resolved (after `extends:` and `--set`), old -> new;
   then the work orders: every device present in both whose rack or unit changes (from -> to) and the
   count of cables to re-pull, so a growth that moves installed equipment is never only a count;
2. the headline figures (GPUs, switches, links, cables, cost);
3. switch models and counts by network and role;
4. the bill-of-materials lines that changed (part, quantity, cost), which explain the cost delta;
5. cables added, removed, moved (an end now lands in another rack or unit) and changed (medium, part
   or length), matched by their stable id, counted by network and by rack, with the first few listed;
6. rendered files added, removed and changed, with line deltas.

One `Review` feeds both formats: JSON carries every item; markdown stays within a size budget that
keeps a pull-request comment readable at 64k GPUs (long lists give their count and their first
`limit` entries, and point at the full report when there is one). Deterministic, so the comment a CI
job posts only changes when the designs do.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from generators.model.plan import Plan
from generators.model.sections import BomLine, Cable
from generators.reports.facts import site_facts

LIMIT = 15  # entries of a long list the markdown comment shows; the rest is counted
TABLE_LIMIT = 25  # rows of a long table (racks, files) the markdown comment shows

# ------------------------------------------------------------------------------- the review model


@dataclass(frozen=True, slots=True)
class FieldChange:
    path: str  # e.g. backend.oversubscription, tenants[acme].vlan
    base: Any  # JSON value; None when the field is absent on that side
    head: Any


@dataclass(frozen=True, slots=True)
class Figure:
    name: str
    base: float | int | None
    head: float | int | None
    money: bool = False


@dataclass(frozen=True, slots=True)
class SwitchChange:
    group: str  # <network>/<role>
    base: dict[str, int]  # model -> count
    head: dict[str, int]


@dataclass(frozen=True, slots=True)
class BomChange:
    category: str
    kind: str
    part: str
    unit: str
    base_quantity: float
    head_quantity: float
    base_usd: float
    head_usd: float


@dataclass(frozen=True, slots=True)
class CableEnd:
    labels: list[str]  # per link: "<rack>.U<unit>.<port> -- <rack>.U<unit>.<port>"
    media: str
    parts: list[str]
    length_m: list[float]
    transceivers: list[str]


@dataclass(frozen=True, slots=True)
class CableChange:
    id: str
    change: str  # added, removed, moved, changed
    network: str
    racks: list[str]  # every rack an end is in, on either side
    base: CableEnd | None
    head: CableEnd | None
    what: list[str]  # for changed/moved: which properties differ


@dataclass(frozen=True, slots=True)
class DeviceMove:
    """A device in both plans that stands elsewhere in the head: a work order for the technicians."""

    device: str
    kind: str
    base_rack: str | None
    base_unit: int | None
    head_rack: str | None
    head_unit: int | None


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    change: str  # added, removed, changed
    plus: int
    minus: int


@dataclass(slots=True)
class Review:
    base_design: str
    head_design: str
    base_label: str
    head_label: str
    design: list[FieldChange]
    figures: list[Figure]
    switches: list[SwitchChange]
    cost_by_category: list[Figure] | None  # None: neither plan has a BoM
    bom: list[BomChange] | None
    cables_by_network_medium: list[Figure] | None  # None: neither plan has a cable plan
    cables: list[CableChange] | None
    files: list[FileChange]
    files_total: int
    unchanged_cables: int = 0
    full_report: str | None = field(default=None)
    moves: list[DeviceMove] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        # the schema first: `railyard diff --out` recognises its own earlier output by it
        return {"schema": "railyard.review/1", **asdict(self)}


# ------------------------------------------------------------------------------- building it


def _flatten(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of a design as (dotted path, JSON value). A list of named objects (tenants, rows) is keyed
    by name, so a reviewer reads `tenants[acme].vlan` and inserting a tenant does not shift the rest."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(v, f"{path}.{k}" if path else k)
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value)
        and len({v["name"] for v in value}) == len(value)
    ):
        for v in value:
            yield from _flatten({k: x for k, x in v.items() if k != "name"}, f"{path}[{v['name']}]")
    else:
        yield path, value


def design_changes(base: Plan, head: Plan) -> list[FieldChange]:
    """Every resolved design field that differs, in the design's own field order."""
    b = dict(_flatten(base.design.model_dump(mode="json")))
    h = dict(_flatten(head.design.model_dump(mode="json")))
    # a `catalog:` overlay field shows the part as each plan has it (the catalog's price -> the
    # overlay's), not null -> value; an overlay that repeats the catalog's value changes nothing
    bc = dict(_flatten(base.catalog.model_dump(mode="json")))
    hc = dict(_flatten(head.catalog.model_dump(mode="json")))
    for k in [k for k in {**b, **h} if k.startswith("catalog.")]:
        b[k], h[k] = bc.get(k.removeprefix("catalog."), b.get(k)), hc.get(k.removeprefix("catalog."), h.get(k))
    order = list(b) + [k for k in h if k not in b]
    return [FieldChange(k, b.get(k), h.get(k)) for k in order if b.get(k) != h.get(k)]


# where a device stands: (kind, rack, unit) by name
Placement = dict[str, tuple[str, str | None, int | None]]
# moves a refusal names (compile's, the Pulumi stack's); the rest are counted, `railyard diff` lists them all
MOVES_SHOWN = 10


def placement(plan: Plan) -> Placement:
    return {d.name: (str(d.kind), d.rack, d.unit) for d in plan.devices}


def placement_of_plan_json(doc: object) -> Placement | None:
    """The placement recorded in a plan.json (railyard.plan/1) already parsed, or None when it is not one:
    only the devices' names, kinds, racks and units are read, so a plan of an older railyard still
    answers where its devices stood."""
    if not isinstance(doc, dict) or doc.get("schema") != "railyard.plan/1" or not isinstance(doc.get("devices"), list):
        return None
    out: Placement = {}
    for d in doc["devices"]:
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            return None
        rack, unit = d.get("rack"), d.get("unit")
        out[d["name"]] = (
            str(d.get("kind", "")),
            rack if isinstance(rack, str) else None,
            unit if isinstance(unit, int) else None,
        )
    return out


def placement_entries(where: Placement) -> dict[str, str]:
    """A placement as the Pulumi stack records it (components/moves.py): device -> `rack U<unit>`
    (`rack` alone without a unit, `-` unplaced), sorted; the kind is left out, it never moves."""
    return {
        name: f"{rack or '-'}{f' U{unit}' if unit is not None else ''}"
        for name, (_, rack, unit) in sorted(where.items())
    }


def placement_of_entries(entries: object) -> Placement | None:
    """The placement placement_entries recorded (kinds empty), or None when `entries` is not one."""
    if not isinstance(entries, Mapping):
        return None
    out: Placement = {}
    for name, text in entries.items():
        m = re.fullmatch(r"(\S+)(?: U(\d+))?", text) if isinstance(name, str) and isinstance(text, str) else None
        if m is None:
            return None
        out[name] = ("", None if m[1] == "-" else m[1], None if m[2] is None else int(m[2]))
    return out


def moves_listed(moves: Sequence[DeviceMove], shown: int = MOVES_SHOWN) -> str:
    """The first `shown` moves, `device rack Uunit -> rack Uunit`, and how many more: what a refusal names."""

    def at(rack: str | None, unit: int | None) -> str:
        return f"{rack or '-'}{f' U{unit}' if unit is not None else ''}"

    listed = ", ".join(
        f"{m.device} {at(m.base_rack, m.base_unit)} -> {at(m.head_rack, m.head_unit)}" for m in moves[:shown]
    )
    return listed + (f" and {len(moves) - shown:,} more" if len(moves) > shown else "")


def moves_between(base: Placement, head: Placement) -> list[DeviceMove]:
    """Devices of both whose rack or unit differ, by rack then unit of where they stood."""
    out = [
        DeviceMove(n, base[n][0], base[n][1], base[n][2], head[n][1], head[n][2])
        for n in base.keys() & head.keys()
        if base[n][1:] != head[n][1:]
    ]
    return sorted(out, key=lambda m: (m.base_rack or "", m.base_unit or 0, m.device))


def device_moves(base: Plan, head: Plan) -> list[DeviceMove]:
    """Devices of both plans whose rack or unit differ, by rack then unit of where they stood."""
    return moves_between(placement(base), placement(head))


def _switch_models(plan: Plan) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for d in plan.devices:
        if d.kind == "switch":
            out[f"{d.network}/{d.role}"][d.model] += 1
    return out


def switch_changes(base: Plan, head: Plan) -> list[SwitchChange]:
    b, h = _switch_models(base), _switch_models(head)
    return [
        SwitchChange(g, dict(sorted(b.get(g, Counter()).items())), dict(sorted(h.get(g, Counter()).items())))
        for g in sorted(set(b) | set(h))
        if b.get(g) != h.get(g)
    ]


def bom_changes(base: Plan, head: Plan) -> list[BomChange] | None:
    if base.bom is None and head.bom is None:
        return None

    def lines(p: Plan) -> dict[tuple[str, str, str], BomLine]:
        return {(ln.category, ln.kind, ln.part): ln for ln in (p.bom.lines if p.bom is not None else [])}

    b, h = lines(base), lines(head)
    out = []
    for key in sorted(set(b) | set(h)):
        lb, lh = b.get(key), h.get(key)
        if lb is not None and lh is not None and (lb.quantity, lb.total_usd) == (lh.quantity, lh.total_usd):
            continue
        unit = (lh if lh is not None else b[key]).unit  # the key is head's or base's
        out.append(
            BomChange(
                *key,
                unit,
                lb.quantity if lb else 0,
                lh.quantity if lh else 0,
                lb.total_usd if lb else 0.0,
                lh.total_usd if lh else 0.0,
            )
        )
    # the lines that move the cost most come first
    out.sort(key=lambda c: (-abs(c.head_usd - c.base_usd), c.category, c.kind, c.part))
    return out


def _end(c: Cable) -> CableEnd:
    return CableEnd(
        labels=list(c.labels),
        media=c.media,
        parts=list(c.parts),
        length_m=list(c.length_m),
        transceivers=[x for x in (c.a_transceiver, c.b_transceiver) if x],
    )


def _racks(labels: list[str]) -> set[str]:
    return {end.strip().split(".", 1)[0] for label in labels for end in label.split(" -- ")}


def cable_changes(base: Plan, head: Plan) -> tuple[list[CableChange] | None, int]:
    """Cables matched by id (a hash of the ports they join, so it survives unrelated edits)."""
    if base.cables is None and head.cables is None:
        return None, 0
    b = {c.id: c for c in base.cables or []}
    h = {c.id: c for c in head.cables or []}
    out = []
    unchanged = 0
    for cid in sorted(set(b) | set(h)):
        cb, ch = b.get(cid), h.get(cid)
        eb, eh = (_end(cb) if cb else None), (_end(ch) if ch else None)
        racks = sorted(_racks((eb.labels if eb else []) + (eh.labels if eh else [])))
        net = (ch if ch is not None else b[cid]).network  # the id is head's or base's
        if eb is None or eh is None:
            out.append(CableChange(cid, "added" if eb is None else "removed", net, racks, eb, eh, []))
            continue
        what = [k for k in ("labels", "media", "parts", "length_m", "transceivers") if getattr(eb, k) != getattr(eh, k)]
        if not what:
            unchanged += 1
            continue
        out.append(CableChange(cid, "moved" if "labels" in what else "changed", net, racks, eb, eh, what))
    return out, unchanged


def _line_delta(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed, counted as a multiset difference: linear time even for a 15 MB
    plan.json, and equal to a diff's +/- counts except for lines that only moved."""
    a, b = Counter(old.splitlines()), Counter(new.splitlines())
    return sum((b - a).values()), sum((a - b).values())


def file_changes(base: Mapping[str, str], head: Mapping[str, str]) -> list[FileChange]:
    out = [FileChange(p, "added", len(head[p].splitlines()), 0) for p in set(head) - set(base)]
    out += [FileChange(p, "removed", 0, len(base[p].splitlines())) for p in set(base) - set(head)]
    for p in set(base) & set(head):
        if base[p] != head[p]:
            out.append(FileChange(p, "changed", *_line_delta(base[p], head[p])))
    return sorted(out, key=lambda f: f.path)


def _figures(
    pairs: Mapping[str, Any] | None, other: Mapping[str, Any] | None, money: bool = False, only_changes: bool = True
) -> list[Figure] | None:
    if pairs is None and other is None:
        return None
    b, h = pairs or {}, other or {}
    rows = []
    for k in sorted(set(b) | set(h)):
        bv = b.get(k, 0 if pairs is not None else None)
        hv = h.get(k, 0 if other is not None else None)
        if not only_changes or bv != hv:
            rows.append(Figure(k, bv, hv, money))
    return rows


def review(
    base: Plan,
    base_files: Mapping[str, str],
    head: Plan,
    head_files: Mapping[str, str],
    base_label: str = "base",
    head_label: str = "head",
) -> Review:
    fb, fh = site_facts(base, base_files), site_facts(head, head_files)
    figures = [
        Figure("GPUs", fb["gpus"], fh["gpus"]),
        Figure("servers", fb["servers"], fh["servers"]),
        Figure("switches", fb["switches"], fh["switches"]),
        Figure("links", fb["links"], fh["links"]),
        Figure("cables", fb["cables"], fh["cables"]),
        Figure("total cost", fb["cost_total_usd"], fh["cost_total_usd"], True),
        Figure("cost per GPU", fb["cost_per_gpu_usd"], fh["cost_per_gpu_usd"], True),
    ]
    cables, unchanged = cable_changes(base, head)
    moves = device_moves(base, head)
    figures.insert(0, Figure("devices moved (work orders)", 0, len(moves)))
    repull = [c for c in cables or [] if c.change == "moved"]
    figures.insert(1, Figure("cables to re-pull (an end moved)", 0, len(repull)))
    return Review(
        base_design=fb["design"],
        head_design=fh["design"],
        base_label=base_label,
        head_label=head_label,
        design=design_changes(base, head),
        figures=figures,
        switches=switch_changes(base, head),
        cost_by_category=_figures(fb["cost_by_category"], fh["cost_by_category"], money=True),
        bom=bom_changes(base, head),
        cables_by_network_medium=_figures(fb["cables_by_network_medium"], fh["cables_by_network_medium"]),
        cables=cables,
        unchanged_cables=unchanged,
        files=file_changes(base_files, head_files),
        files_total=len(head_files),
        moves=moves,
    )


# ------------------------------------------------------------------------------- rendering it


def review_json(r: Review) -> str:
    return json.dumps(r.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _num(v: float | int | None, money: bool = False) -> str:
    if v is None:
        return "n/a"
    if money:
        return f"${v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}".rstrip("0").rstrip(".")


def _delta(a: float | int | None, b: float | int | None, money: bool = False) -> str:
    if a is None or b is None:
        return "n/a"
    d = b - a
    if d == 0:
        return "0"
    sign = "+" if d > 0 else "-"
    text = f"{sign}{_num(abs(d), money)}"
    if a:
        text += f" ({d / a:+.1%})"
    return text


def _table(rows: Sequence[tuple[str, ...]], head: tuple[str, ...]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _code(text: str) -> str:
    """Text from a design or the command line as a Markdown code span: rendered as written, never as HTML,
    a link or a heading (a pull-request comment renders those). The fence is longer than any run of
    backticks inside; control characters (a newline would end the list item) become escapes."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _value(v: Any) -> str:
    return _code(json.dumps(v, ensure_ascii=False))


def _more(shown: int, total: int, what: str, full: str | None) -> list[str]:
    if total <= shown:
        return []
    where = f": the full list is in `{full}`" if full else ""
    return [f"- … and {total - shown:,} more {what}{where}"]


def _models(m: dict[str, int]) -> str:
    return ", ".join(f"{n} × {k}" for k, n in m.items()) or "—"


def _leg(e: CableEnd) -> str:
    parts = "/".join(sorted(set(e.parts)))
    length = "/".join(f"{x:g}" for x in sorted(set(e.length_m)))
    legs = f" (+{len(e.labels) - 1} leg{'s' if len(e.labels) > 2 else ''})" if len(e.labels) > 1 else ""
    return f"`{e.labels[0]}`{legs} {e.media} {parts} {length} m"


def _cable_line(c: CableChange) -> str:
    if c.change in ("added", "removed"):
        e = c.head if c.change == "added" else c.base
        assert e is not None
        return f"`{c.id}` {_leg(e)}"
    assert c.base is not None and c.head is not None
    bits = []
    if "labels" in c.what:
        moved = [(x, y) for x, y in zip(c.base.labels, c.head.labels, strict=False) if x != y]
        x, y = moved[0] if moved else (c.base.labels[0], c.head.labels[0])
        more = f" (and {len(moved) - 1} more leg{'s' if len(moved) > 2 else ''})" if len(moved) > 1 else ""
        bits.append(f"`{x}` → `{y}`{more}")
    for k, title in (("media", "medium"), ("parts", "part"), ("length_m", "length"), ("transceivers", "optics")):
        if k in c.what:
            old, new = getattr(c.base, k), getattr(c.head, k)
            bits.append(f"{title} {_cable_value(k, old)} → {_cable_value(k, new)}")
    return f"`{c.id}` " + ", ".join(bits)


def _cable_value(k: str, v: Any) -> str:
    """One end's medium, part, length or optics of a changed cable, as the review writes it."""
    if k == "length_m":
        return "/".join(f"{x:g} m" for x in sorted(set(v)))
    return v if isinstance(v, str) else "/".join(sorted(set(v))) or "—"


def _cables_md(r: Review, limit: int | None) -> list[str]:
    out = ["## Cables", ""]
    if r.cables is None:
        return [*out, "neither design has a cable plan yet", ""]
    kinds = ("added", "removed", "moved", "changed")
    by_kind = {k: [c for c in r.cables if c.change == k] for k in kinds}
    out += [
        ", ".join(f"{len(by_kind[k]):,} {k}" for k in kinds) + f", {r.unchanged_cables:,} unchanged "
        "cable records (matched by cable id; a twin or splitter cable, or a pair of optics and its fiber, "
        "is one record; moved: an end is in another rack or unit, so a label changed; changed: medium, "
        "part or length).",
        "",
    ]
    if r.cables_by_network_medium:
        out += ["### By network and medium", ""]
        rows = [(f"`{f.name}`", _num(f.base), _num(f.head), _delta(f.base, f.head)) for f in r.cables_by_network_medium]
        out += [*_table(rows, ("", "base", "head", "delta")), ""]
    if not r.cables:
        return out
    per_net: Counter[tuple[str, str]] = Counter((c.network, c.change) for c in r.cables)
    out += ["### By network", ""]
    nets = sorted({n for n, _ in per_net})
    out += [*_table([(f"`{n}`", *(f"{per_net[n, k]:,}" for k in kinds)) for n in nets], ("", *kinds)), ""]
    per_rack: dict[str, Counter[str]] = defaultdict(Counter)
    for c in r.cables:
        for rack in c.racks:
            per_rack[rack][c.change] += 1
    racks = sorted(per_rack, key=lambda x: (-sum(per_rack[x].values()), x))
    shown = racks if limit is None else racks[:TABLE_LIMIT]
    out += ["### By rack", "", "A cable counts in each rack it has an end in.", ""]
    out += _table([(f"`{x}`", *(f"{per_rack[x][k]:,}" for k in kinds)) for x in sorted(shown)], ("rack", *kinds))
    out += [*_more(len(shown), len(racks), "racks", r.full_report), ""]
    for k in kinds:
        items = by_kind[k]
        if not items:
            continue
        shown_items = items if limit is None else items[:limit]
        out += [f"<details><summary>{k.capitalize()} ({len(items):,})</summary>", ""]
        out += [f"- {_cable_line(c)}" for c in shown_items]
        out += _more(len(shown_items), len(items), f"{k} cables", r.full_report)
        out += ["", "</details>", ""]
    return out


def _place(rack: str | None, unit: int | None) -> str:
    return "—" if rack is None else f"`{rack}`" + (f" U{unit}" if unit is not None else "")


def _move_row(m: DeviceMove) -> tuple[str, str, str]:
    return (f"`{m.device}` ({m.kind})", _place(m.base_rack, m.base_unit), _place(m.head_rack, m.head_unit))


def _lines(f: FileChange) -> str:
    return {"added": f"+{f.plus:,}", "removed": f"-{f.minus:,}"}.get(f.change, f"+{f.plus:,} -{f.minus:,}")


def review_markdown(r: Review, limit: int | None = LIMIT) -> str:
    """The pull-request comment; `limit=None` gives the full report (every cable and file)."""
    lines = [
        f"# railyard design review: {_code(r.base_design)} → {_code(r.head_design)}",
        "",
        f"base: {_code(r.base_label)}, head: {_code(r.head_label)}",
        "",
        "## Design changes",
        "",
    ]
    if r.design:
        shown = r.design if limit is None else r.design[: limit * 4]
        lines += [f"- {_code(c.path)}: {_value(c.base)} → {_value(c.head)}" for c in shown]
        lines += _more(len(shown), len(r.design), "fields", r.full_report)
    else:
        lines.append("no design field differs (after `extends:` and `--set`)")
    lines += ["", "## Moves (work orders)", ""]
    if r.moves:
        repull = sum(1 for c in r.cables or [] if c.change == "moved")
        lines += [
            f"{len(r.moves):,} devices move, {repull:,} cables to re-pull (the cables' ends are listed under "
            "Cables, moved).",
            "",
        ]
        shown_moves = r.moves if limit is None else r.moves[: limit * 2]
        lines += _table([_move_row(m) for m in shown_moves], ("device", "from", "to"))
        lines += _more(len(shown_moves), len(r.moves), "moves", r.full_report)
    else:
        lines.append("no device present in both moves (rack and unit unchanged)")
    lines += ["", "## Summary", ""]
    lines += _table(
        [(f.name, _num(f.base, f.money), _num(f.head, f.money), _delta(f.base, f.head, f.money)) for f in r.figures],
        ("", "base", "head", "delta"),
    )
    lines += ["", "## Switches by network and role", ""]
    if r.switches:
        lines += _table(
            [
                (f"`{s.group}`", _models(s.base), _models(s.head), _delta(sum(s.base.values()), sum(s.head.values())))
                for s in r.switches
            ],
            ("", "base", "head", "delta"),
        )
    else:
        lines.append("no change in switch models or counts")
    lines += ["", "## Cost", ""]
    if r.cost_by_category is None:
        lines += ["neither design has a bill of materials yet"]
    elif not r.cost_by_category:
        lines += ["no change in cost"]
    else:
        lines += ["### By category", ""]
        lines += _table(
            [
                (f"`{f.name}`", _num(f.base, True), _num(f.head, True), _delta(f.base, f.head, True))
                for f in r.cost_by_category
            ],
            ("", "base", "head", "delta"),
        )
    if r.bom:
        shown_bom = r.bom if limit is None else r.bom[: limit * 2]
        lines += ["", "### Bill-of-materials lines that changed", ""]
        lines += _table(
            [
                (
                    f"`{b.part}` ({b.category} {b.kind})",
                    _num(b.base_quantity),
                    _num(b.head_quantity),
                    _delta(b.base_usd, b.head_usd, True),
                )
                for b in shown_bom
            ],
            ("part", "base qty", "head qty", "cost delta"),
        )
        lines += _more(len(shown_bom), len(r.bom), "lines", r.full_report)
    lines += [""]
    lines += _cables_md(r, limit)
    changed = Counter(f.change for f in r.files)
    lines += [
        "## Files",
        "",
        f"{changed['added']:,} added, {changed['removed']:,} removed, {changed['changed']:,} changed, "
        f"{r.files_total - changed['added'] - changed['changed']:,} unchanged (of {r.files_total:,} files).",
        "",
    ]
    if r.files:
        files = sorted(r.files, key=lambda f: (-(f.plus + f.minus), f.path))
        shown_files = files if limit is None else files[:TABLE_LIMIT]
        lines += _table(
            [(f"`{f.path}`", f.change, _lines(f)) for f in sorted(shown_files, key=lambda f: f.path)],
            ("file", "", "lines"),
        )
        lines += _more(len(shown_files), len(files), "files", r.full_report)
    return "\n".join(lines).rstrip("\n") + "\n"
