"""`railyard diff`: what a design change does to the site, as markdown for a pull request.

Compares two compiled plans and their rendered files: switch, link and cable counts by network
(cables also by medium), cost by category, cables added/removed/changed by label, and which
artifacts change. Deterministic, so the comment a CI job posts only changes when the designs do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from generators.model.plan import Plan
from generators.reports.facts import cable_label, cables, site_facts

LIST_LIMIT = 100  # longest list of cables or artifacts printed in full; the rest is counted


def _num(v: float | int | None, money: bool = False) -> str:
    if v is None:
        return "n/a"
    if money:
        return f"${v:,.0f}"
    return f"{v:,}"


def _delta(a: float | int | None, b: float | int | None, money: bool = False) -> str:
    if a is None or b is None:
        return "n/a"
    d = b - a
    if d == 0:
        return "0"
    sign = "+" if d > 0 else "-"
    text = f"{sign}${abs(d):,.0f}" if money else f"{sign}{abs(d):,}"
    if a:
        text += f" ({d / a:+.1%})"
    return text


def _table(rows: list[tuple[str, ...]], head: tuple[str, ...]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _keyed(title: str, base: Mapping[str, Any] | None, head: Mapping[str, Any] | None, money: bool = False,
           only_changes: bool = False) -> list[str]:
    if base is None and head is None:
        return []
    b, h = base or {}, head or {}
    rows = []
    for k in sorted(set(b) | set(h)):
        bv = b.get(k, 0 if base is not None else None)
        hv = h.get(k, 0 if head is not None else None)
        if only_changes and bv == hv:
            continue
        rows.append((f"`{k}`", _num(bv, money), _num(hv, money), _delta(bv, hv, money)))
    if not rows:
        return [f"### {title}", "", "no change", ""]
    return [f"### {title}", "", *_table(rows, ("", "base", "head", "delta")), ""]


def _cable_changes(base: list[dict[str, str]], head: list[dict[str, str]]) -> list[str]:
    b = {cable_label(r): r for r in base}
    h = {cable_label(r): r for r in head}
    added = sorted(set(h) - set(b))
    removed = sorted(set(b) - set(h))
    changed = []
    for label in sorted(set(b) & set(h)):
        diffs = [f"{k} {b[label].get(k, '') or '-'} → {h[label].get(k, '') or '-'}"
                 for k in sorted(set(b[label]) | set(h[label])) if b[label].get(k, "") != h[label].get(k, "")]
        if diffs:
            changed.append(f"`{label}`: " + ", ".join(diffs))
    out = ["## Cables by label", "",
           f"{len(added)} added, {len(removed)} removed, {len(changed)} changed, "
           f"{len(set(b) & set(h)) - len(changed)} unchanged.", ""]
    for title, items in (("Added", [f"`{x}`" for x in added]), ("Removed", [f"`{x}`" for x in removed]),
                         ("Changed", changed)):
        if items:
            out += [f"<details><summary>{title} ({len(items)})</summary>", ""]
            out += [f"- {x}" for x in items[:LIST_LIMIT]]
            if len(items) > LIST_LIMIT:
                out.append(f"- … and {len(items) - LIST_LIMIT} more")
            out += ["", "</details>", ""]
    return out


def _line_delta(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed, counted as a multiset difference: linear time even for a 15 MB
    plan.json, and equal to a diff's +/- counts except for lines that only moved."""
    a, b = Counter(old.splitlines()), Counter(new.splitlines())
    return sum((b - a).values()), sum((a - b).values())


def _artifact_changes(base: Mapping[str, str], head: Mapping[str, str]) -> list[str]:
    added = sorted(set(head) - set(base))
    removed = sorted(set(base) - set(head))
    changed = sorted(p for p in set(base) & set(head) if base[p] != head[p])
    unchanged = len(set(base) & set(head)) - len(changed)
    out = ["## Artifacts", "",
           f"{len(added)} added, {len(removed)} removed, {len(changed)} changed, {unchanged} unchanged "
           f"(of {len(head)} files).", ""]
    rows = [(f"`{p}`", "added", f"+{len(head[p].splitlines())}") for p in added]
    rows += [(f"`{p}`", "removed", f"-{len(base[p].splitlines())}") for p in removed]
    for p in changed:
        plus, minus = _line_delta(base[p], head[p])
        rows.append((f"`{p}`", "changed", f"+{plus} -{minus}"))
    rows.sort()
    if rows:
        shown = rows[:LIST_LIMIT]
        out += _table(shown, ("file", "", "lines"))
        if len(rows) > LIST_LIMIT:
            out.append(f"\n… and {len(rows) - LIST_LIMIT} more files")
        out.append("")
    return out


def review_markdown(base: Plan, base_files: Mapping[str, str], head: Plan, head_files: Mapping[str, str],
                    base_label: str = "base", head_label: str = "head") -> str:
    fb, fh = site_facts(base, base_files), site_facts(head, head_files)
    lines = [f"# railyard design review: `{fb['design']}` → `{fh['design']}`", "",
             f"base: `{base_label}`, head: `{head_label}`", ""]
    summary = [
        ("GPUs", fb["gpus"], fh["gpus"], False),
        ("switches", fb["switches"], fh["switches"], False),
        ("links", fb["links"], fh["links"], False),
        ("cables", fb["cables"], fh["cables"], False),
        ("total cost", fb["cost_total_usd"], fh["cost_total_usd"], True),
        ("cost per GPU", fb["cost_per_gpu_usd"], fh["cost_per_gpu_usd"], True),
    ]
    lines += _table([(k, _num(a, m), _num(b, m), _delta(a, b, m)) for k, a, b, m in summary],
                    ("", "base", "head", "delta"))
    lines += ["", "## Counts", ""]
    lines += _keyed("Switches by network", fb["switches_by_network"], fh["switches_by_network"])
    lines += _keyed("Switches by network and role", fb["switches_by_role"], fh["switches_by_role"], only_changes=True)
    lines += _keyed("Links by network", fb["links_by_network"], fh["links_by_network"])
    if fb["cables_by_network_medium"] is None and fh["cables_by_network_medium"] is None:
        lines += ["### Cables by network and medium", "", "neither design has a cable plan yet", ""]
    else:
        lines += _keyed("Cables by network and medium", fb["cables_by_network_medium"], fh["cables_by_network_medium"])
    lines += ["## Cost", ""]
    if fb["cost_by_category"] is None and fh["cost_by_category"] is None:
        lines += ["neither design has a bill of materials yet", ""]
    else:
        lines += _keyed("By category", fb["cost_by_category"], fh["cost_by_category"], money=True)
    cb, ch = cables(base), cables(head)
    if cb is not None or ch is not None:
        lines += _cable_changes(cb or [], ch or [])
    lines += _artifact_changes(base_files, head_files)
    return "\n".join(lines).rstrip("\n") + "\n"
