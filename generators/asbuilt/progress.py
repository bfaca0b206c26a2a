"""Cabling progress of a site: what has been pulled, tested or found faulty, per cable id.

The state is a CSV railyard owns, an append-only log of events (`when,cable_id,state,by,note`, one row
per mark), because a site lead keeps it in git beside the design: every mark is one added line in a
diff, who marked what and when stays auditable, and a bad mark is undone by a later one, never by
editing history. The current state of a cable is its last event. It lives beside the design, never in
an output folder (`compile` and `cabling pack` rewrite those): by default `<design>.progress.csv` next
to `<design>.yaml`, one file per design file, since two designs of one site (a what-if) have other
cable ids.

States are exclusive: pulled (in place, not yet tested), tested, faulty (with the finding as note),
cleared (a mark made by mistake: the cable is back to not started). A faulty cable that was fixed is
marked pulled again, then tested (by hand or by `verify --progress`).

Every change is a read-modify-write under an exclusive lock (fcntl.flock on a lock file beside it,
`.<name>.lock`, left in place: removing a lock file races the next writer), and the file is replaced
atomically (temp + rename), so two technicians marking at once lose nothing and a reader never sees
half a file. Rows already in the file are kept byte for byte; new ones are appended.
"""

from __future__ import annotations

import csv
import difflib
import fcntl
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from generators.model.errors import DesignError
from generators.model.plan import Plan, required
from generators.output import MANIFEST, os_problem
from generators.text.csvtext import cell
from generators.text.escape import printable

if TYPE_CHECKING:
    from generators.asbuilt.verify import VerifyReport

COLUMNS = ["when", "cable_id", "state", "by", "note"]
STATES = ("pulled", "tested", "faulty", "cleared")
PROGRESS_LIMIT = 256 << 20  # a 259k-cable site (98,304 GPUs) marked four times over is ~100 MB


@dataclass(frozen=True, slots=True)
class Event:
    when: str  # ISO 8601 UTC, seconds
    cable_id: str
    state: str
    by: str
    note: str

    def row(self) -> list[str]:
        return [self.when, self.cable_id, self.state, self.by, self.note]


@dataclass(frozen=True, slots=True)
class Mark:
    """A requested change: the cable, its new state, and why (the verify finding, a technician's note)."""

    cable_id: str
    state: str
    note: str = ""
    # a bulk mark (`--rack`): never takes a cable back (tested to pulled) nor hides a fault; such cables
    # change only when named by id, or by verify
    forward_only: bool = False


_ORDER = {"pulled": 1, "tested": 2}


def _holds(was: Event | None, m: Mark) -> bool:
    """Whether the cable keeps its state rather than take the mark: it already has it (and the note), or a
    bulk mark would take it back."""
    if was is None:
        return m.state == "cleared"
    if (was.state, was.note) == (m.state, m.note):
        return True
    return (
        m.forward_only
        and m.state != "cleared"
        and (was.state == "faulty" or _ORDER.get(was.state, 0) >= _ORDER.get(m.state, 0))
    )


@dataclass(slots=True)
class Recorded:
    added: list[Event] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # cable ids left as they were (see _holds)


def default_path(design: Path) -> Path:
    return Path(design).with_name(f"{Path(design).stem}.progress.csv")


def _lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


def check_path(path: Path, option: str) -> None:
    """A progress file is a regular file (or none yet) outside every railyard output folder, whose files
    compile and pack replace."""
    path = Path(path)
    if path.is_symlink():
        raise DesignError.one(option, f"{path} is a symlink", "pass the real file it points to")
    if path.is_dir():
        raise DesignError.one(option, f"{path} is a folder", f"name a file, e.g. {option} {path / 'site.progress.csv'}")
    for d in Path(os.path.abspath(path)).parents:
        if (d / MANIFEST).exists():
            raise DesignError.one(
                option,
                f"{path} is inside {d}, an output folder railyard writes (it holds {MANIFEST})",
                "keep the progress file beside the design, e.g. the default <design>.progress.csv",
            )


def _open(path: Path, option: str) -> IO[str] | None:
    """The progress file for reading (None: no file yet): a regular file of at most PROGRESS_LIMIT bytes."""
    if not path.exists():
        return None
    try:
        fh = open(path, encoding="utf-8", errors="replace", newline="")  # noqa: SIM115 (returned to the caller)
    except OSError as exc:
        raise os_problem(option, path, exc, "cannot read") from None
    st = os.fstat(fh.fileno())
    if not stat.S_ISREG(st.st_mode) or st.st_size > PROGRESS_LIMIT:
        fh.close()
        what = (
            f"{st.st_size:,} bytes, more than the {PROGRESS_LIMIT:,} allowed"
            if stat.S_ISREG(st.st_mode)
            else ("not a regular file")
        )
        raise DesignError.one(option, f"{path} is {what}", "name the progress file `railyard cabling mark` writes")
    return fh


def events(path: Path, option: str = "--progress") -> Iterator[Event]:
    """Every event in the file, oldest first, read a line at a time (a 259k-cable site's file of a few
    marks per cable is ~100 MB); no file is no events. A bad line is a DesignError naming it."""
    path = Path(path)
    fh = _open(path, option)
    if fh is None:
        return
    with fh:
        rows = csv.reader(fh)
        header = next(rows, None)
        if header is None:
            return
        if header != COLUMNS:
            raise DesignError.one(
                option,
                f"{path} is not a railyard progress file: its first line is not {','.join(COLUMNS)!r}",
                "pass the file `railyard cabling mark` wrote, or a new one",
                where=f"{path}:1",
            )
        for row in rows:
            if not row:
                continue
            n = rows.line_num
            if len(row) != len(COLUMNS) or not row[1] or row[2] not in STATES:
                what = (
                    f"{len(row)} fields, not {len(COLUMNS)}"
                    if len(row) != len(COLUMNS)
                    else "no cable id"
                    if not row[1]
                    else f"state {printable(row[2])!r} is not one of {', '.join(STATES)}"
                )
                raise DesignError.one(
                    option,
                    f"{path} line {n}: {what}",
                    "fix or remove that line (git diff shows what changed)",
                    where=f"{path}:{n}",
                )
            yield Event(*row)


def read_events(path: Path, option: str = "--progress") -> list[Event]:
    """Every event in the file, oldest first (the whole history in memory: `read_current` for the state)."""
    check_path(Path(path), option)
    return list(events(path, option))


def read_current(path: Path, option: str = "--progress") -> dict[str, Event]:
    """cable id -> its last event, for cables whose last event is not `cleared`; memory by cables, not
    by events."""
    check_path(Path(path), option)
    return current(events(path, option))


def current(events: Iterable[Event]) -> dict[str, Event]:
    """cable id -> its last event, for cables whose last event is not `cleared`."""
    last: dict[str, Event] = {}
    for ev in events:
        last[ev.cable_id] = ev
    return {k: v for k, v in last.items() if v.state != "cleared"}


@contextmanager
def _locked(path: Path, option: str) -> Iterator[None]:
    lock = _lock_path(path)
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise os_problem(option, lock, exc, "cannot lock") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def record(path: Path, marks: Sequence[Mark], by: str, option: str = "--progress", when: str | None = None) -> Recorded:
    """Append the marks that change a cable's state or note, under the lock; the others are unchanged."""
    path = Path(path)
    check_path(path, option)
    done = Recorded()
    with _locked(path, option):
        state = current(events(path, option))
        stamp = when or now()
        for m in marks:
            # one line per event: a note's line breaks and runs of spaces become one space, and it is
            # kept as the log writes it (cell: never a formula or an escape), so a second mark compares
            m = replace(m, note=cell(" ".join(m.note.split())))
            was = state.get(m.cable_id)
            if _holds(was, m):
                done.unchanged.append(m.cable_id)
                continue
            ev = Event(stamp, m.cable_id, m.state, cell(by), m.note)
            done.added.append(ev)
            if m.state == "cleared":
                del state[m.cable_id]
            else:
                state[m.cable_id] = ev
        if not done.added:
            return done
        _append(path, done.added, option)
    return done


def _safe(row: list[str]) -> list[str]:
    """A row as the log keeps it: a note or name someone typed cannot become a spreadsheet formula or a
    terminal escape when the file is opened or printed (text.csvtext.cell)."""
    return [cell(c) for c in row]


def _append(path: Path, added: Sequence[Event], option: str) -> None:
    """The file with `added` appended, replaced atomically: a copy streamed into a temp file beside it
    (the rows already there byte for byte), the new rows, flushed, renamed over the file."""
    tmp = path.with_name(f".{path.name}.railyard-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as out:
            os.fchmod(out.fileno(), 0o644)
            last = ""
            if path.exists():
                with open(path, encoding="utf-8", errors="replace", newline="") as old:
                    while chunk := old.read(1 << 20):
                        out.write(chunk)
                        last = chunk[-1]
            w = csv.writer(out, lineterminator="\n")
            if last == "" and not (path.exists() and path.stat().st_size):
                w.writerow(COLUMNS)
            elif last != "\n":
                out.write("\n")
            w.writerows(_safe(ev.row()) for ev in added)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise os_problem(option, path, exc) from None


# ------------------------------------------------------------------------------------ the plan side


def home_racks(plan: Plan) -> dict[str, str]:
    """cable id -> the rack it is counted in: its A end's, where it is labelled and staged (renderers.pack)."""
    rack_of = {d.name: d.rack or "" for d in plan.devices}
    links = plan.links
    return {c.id: rack_of[links[c.links[0]].a_device] for c in plan.cables or []}


def sheet_cables(plan: Plan, rack: str) -> list[str]:
    """The cables on a rack's sheet (an end in the rack), in cable-id order."""
    rack_of = {d.name: d.rack for d in plan.devices}
    links = plan.links
    return [
        c.id
        for c in plan.cables or []
        if any(rack in (rack_of[links[k].a_device], rack_of[links[k].b_device]) for k in c.links)
    ]


def closest(name: str, known: Sequence[str], n: int = 3) -> list[str]:
    return difflib.get_close_matches(name, known, n=n, cutoff=0.5)


def check_ids(plan: Plan, ids: Sequence[str], option: str = "CABLE_ID") -> None:
    """Refuse cable ids the plan does not have, naming each and the closest known ids."""
    known = {c.id for c in plan.cables or []}
    bad = [i for i in ids if i not in known]
    if not bad:
        return
    pool = sorted(known)
    problems = []
    for i in bad:
        near = closest(i.upper(), pool)
        hint = f"did you mean {' or '.join(near)}?" if near else "cable ids are on the rack sheets and labels"
        problems.append(DesignError.one(option, f"no cable {i!r} in {plan.design.name}", hint).problems[0])
    raise DesignError(problems)


def transition_warnings(old: Mapping[str, Event], marks: Sequence[Mark]) -> list[str]:
    """Marks that are recorded but look out of order: tested before pulled, a tested cable pulled again."""
    out = []
    for m in marks:
        was = old.get(m.cable_id)
        if m.state == "tested" and was is None:
            out.append(f"{m.cable_id} was not marked pulled: recorded as tested (a cable that tests is pulled)")
        elif m.state == "pulled" and was is not None and was.state == "tested":
            out.append(f"{m.cable_id} was tested ({was.when}): marked pulled again, test it again")
    return out


# ------------------------------------------------------------------------------------------- status


@dataclass(slots=True)
class Counts:
    total: int = 0
    pulled: int = 0  # pulled, not yet tested
    tested: int = 0
    faulty: int = 0

    @property
    def left(self) -> int:
        return self.total - self.pulled - self.tested - self.faulty

    def add(self, state: str | None) -> None:
        self.total += 1
        if state in ("pulled", "tested", "faulty"):
            setattr(self, state, getattr(self, state) + 1)

    def to_dict(self) -> dict[str, int]:
        return {
            "total": self.total,
            "pulled": self.pulled,
            "tested": self.tested,
            "faulty": self.faulty,
            "left": self.left,
        }

    def bar(self, width: int = 30) -> str:
        """`[###==!....]`: tested #, pulled =, faulty !, left . (largest remainder, so it is always `width`
        wide; a state any cable is in gets at least one cell)."""
        if not self.total:
            return "[" + " " * width + "]"
        parts = [self.tested, self.pulled, self.faulty, self.left]
        exact = [p * width / self.total for p in parts]
        cells = [int(x) for x in exact]
        for i in sorted(range(4), key=lambda i: (-(exact[i] - cells[i]), i))[: width - sum(cells)]:
            cells[i] += 1
        # one faulty cable in a thousand still shows: a cell taken from the widest part
        for i in (2, 0, 1, 3):
            if parts[i] and not cells[i]:
                cells[max(range(4), key=lambda j: (cells[j], -j))] -= 1
                cells[i] = 1
        return "[" + "".join(ch * n for ch, n in zip("#=!.", cells, strict=True)) + "]"


@dataclass(slots=True)
class RowStatus:
    row: str
    counts: Counts
    racks: list[tuple[str, Counts]]


@dataclass(slots=True)
class Status:
    design: str
    rows: list[RowStatus]
    site: Counts
    not_in_plan: list[str]  # cable ids in the file the plan does not have (the design changed since)

    def to_dict(self, by_rack: bool) -> dict[str, object]:
        rows = []
        for r in self.rows:
            d: dict[str, object] = {"row": r.row, **r.counts.to_dict()}
            if by_rack:
                d["racks"] = [{"rack": k, **c.to_dict()} for k, c in r.racks]
            rows.append(d)
        return {
            "schema": "railyard.progress/1",
            "design": self.design,
            "rows": rows,
            "site": self.site.to_dict(),
            "not_in_plan": self.not_in_plan,
        }

    def text(self, by_rack: bool) -> str:
        head = f"{'':<12}{'cables':>8}{'pulled':>8}{'tested':>8}{'faulty':>8}{'left':>8}"
        lines = [
            f"cabling progress of {self.design} (states are exclusive: pulled = pulled, not yet tested; "
            "bar: # tested, = pulled, ! faulty, . left)",
            head,
        ]

        def line(name: str, c: Counts, indent: str = "") -> str:
            pct = f"{100 * c.tested // c.total if c.total else 100:>3}%"
            return (
                f"{indent + name:<12}{c.total:>8}{c.pulled:>8}{c.tested:>8}{c.faulty:>8}{c.left:>8}  "
                f"{c.bar()} {pct} tested"
            )

        for r in self.rows:
            lines.append(line(f"row {r.row}", r.counts))
            if by_rack:
                lines += [line(k, c, "  ") for k, c in r.racks]
        lines.append(line("site", self.site))
        if self.not_in_plan:
            lines.append(
                f"warning: {len(self.not_in_plan)} cable ids in the progress file are not in the plan (the "
                f"design changed since they were marked), e.g. {self.not_in_plan[0]}; they are not counted"
            )
        return "\n".join(lines) + "\n"


def status(plan: Plan, state: Mapping[str, Event], only_row: str | None = None) -> Status:
    """Per row in floor order, per rack by position: cables counted at their A end's rack."""
    floor = required(plan.floor, "floor")
    home = home_racks(plan)
    per_rack: dict[str, Counts] = {r.name: Counts() for r in plan.racks}
    for cid, rack in home.items():
        ev = state.get(cid)
        per_rack[rack].add(ev.state if ev else None)
    racks_of: dict[str, list[str]] = {}
    for r in sorted(plan.racks, key=lambda r: r.position):
        racks_of.setdefault(r.row, []).append(r.name)
    rows = []
    site = Counts()
    for row in floor.rows:
        if only_row is not None and row.name != only_row:
            continue
        total = Counts()
        for rack in racks_of.get(row.name, []):
            c = per_rack[rack]
            for f in ("total", "pulled", "tested", "faulty"):
                setattr(total, f, getattr(total, f) + getattr(c, f))
                setattr(site, f, getattr(site, f) + getattr(c, f))
        rows.append(RowStatus(row.name, total, [(k, per_rack[k]) for k in racks_of.get(row.name, [])]))
    return Status(plan.design.name, rows, site, sorted(set(state) - set(home)))


def check_row(plan: Plan, row: str, option: str = "--row") -> None:
    names = [r.name for r in required(plan.floor, "floor").rows]
    if row not in names:
        near = closest(row, names)
        raise DesignError.one(
            option,
            f"no row {row!r} in {plan.design.name}",
            f"did you mean {' or '.join(near)}?" if near else f"rows: {', '.join(names)}",
        )


def check_rack(plan: Plan, rack: str, option: str = "--rack") -> None:
    names = [r.name for r in plan.racks]
    if rack not in names:
        near = closest(rack, names)
        raise DesignError.one(
            option,
            f"no rack {rack!r} in {plan.design.name}",
            f"did you mean {' or '.join(near)}?" if near else "rack names are on the floor map",
        )


# ------------------------------------------------------------------------------------------- verify


def verify_marks(plan: Plan, report: VerifyReport) -> list[Mark]:
    """What a verify run says of each cable it could judge: faulty (with the finding) when one of its links
    is missing, swapped, slow or one-sided; tested when every link of it was found as planned. A cable
    with a link verify could not see (an LLDP table not given) is left as it is."""
    faults: dict[str, list[str]] = {}

    def fault(cid: str | None, note: str) -> None:
        if cid is not None and note not in faults.setdefault(cid, []):
            faults[cid].append(note)

    for s in report.swapped:
        for mine, other in ((s.planned[0], s.planned[1]), (s.planned[1], s.planned[0])):
            fault(
                mine.cable_id,
                f"verify: swapped with {other.cable_id or other.label or 'another cable'}: "
                f"exchange the cables at {s.at[0].text()} and {s.at[1].text()}",
            )
    for lk in report.missing:
        fault(lk.cable_id, "verify: missing: not cabled, or the link is down (check and clean both ends)")
    for lk in report.slow:
        fault(
            lk.cable_id,
            f"verify: slow: up at {lk.found_speed}, planned {lk.planned_speed} (clean or replace the optics/cable)",
        )
    for lk in report.one_sided:
        fault(lk.cable_id, f"verify: one-sided: {lk.note}")
    links = plan.links
    marks = []
    for c in plan.cables or []:
        if c.id in faults:
            marks.append(Mark(c.id, "faulty", "; ".join(faults[c.id])))
            continue
        keys = [
            frozenset(((links[k].a_device, links[k].a_port), (links[k].b_device, links[k].b_port))) for k in c.links
        ]
        if all(k in report.covered for k in keys):
            marks.append(Mark(c.id, "tested"))
    return marks
