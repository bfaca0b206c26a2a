"""`railyard` command line. Bad input prints what is wrong, where and how to fix it, and exits 2."""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import math
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, cast

import typer

from generators.handover import CONNECT_TIMEOUT, READ_TIMEOUT, TOTAL_TIMEOUT, WORKERS
from generators.model.errors import DesignError
from generators.output import Written, check_out_dir, check_out_file, os_problem, write_file, write_tree

# railyard's models use no pydantic plugin, and looking for one scans the entry points of every package
# installed beside railyard when the first model class is built (~40 ms of each command). A user who
# runs one sets PYDANTIC_DISABLE_PLUGINS to anything else, e.g. an empty value.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


# rich_markup_mode=None: click's plain help and usage errors; typer's rich formatting imported rich's
# markdown, syntax and traceback modules (~50 ms, a quarter of `railyard --help`) to draw boxes
def _argument_type(self: Any, ctx: Any) -> str | None:
    """Typer 0.29 prints an argument's Python type after its name in help ("DESIGN <list[Path]>") even
    when the argument has a metavar, which options do not; with a metavar, the metavar says it all."""
    return None if self.metavar is not None else _TYPER_ARGUMENT_TYPE(self, ctx)


_TYPER_ARGUMENT_TYPE = typer.core.TyperArgument.display_type_rich
typer.core.TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign]

# -h as well as --help, on every command and group
HELP = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    add_completion=False,  # `railyard completion SHELL` instead: typer's options import shellingham at start-up
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=HELP,
    help="Compile a GPU cluster design into cable plans, configs, topology and a BoM.\n\n"
    "Exit codes: 0 done, 1 faults found (verify, netbox pull; netbox push: NetBox edits it would revert) or "
    "NetBox refused, 2 bad input (the message "
    "names the field and a fix), 70 a railyard bug.",
)


def _version(value: bool) -> None:
    if value:
        from generators import __version__

        print(f"railyard {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", is_eager=True, callback=_version, help="print railyard's version and exit"),
    ] = False,
) -> None:
    """The root of every command (its options: --version)."""


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


@app.command()
def completion(shell: Annotated[Shell, typer.Argument(help="the shell to complete in", metavar="SHELL")]) -> None:
    """Print the shell completion script, e.g. `eval "$(railyard completion bash)"` in ~/.bashrc, or
    `railyard completion fish > ~/.config/fish/completions/railyard.fish`: commands, options and
    design files complete on TAB.

    Example: railyard completion bash > /etc/bash_completion.d/railyard"""
    # typer's own scripts: they call `railyard` back with _RAILYARD_COMPLETE set, which typer answers
    from typer._completion_shared import get_completion_script

    sys.stdout.write(get_completion_script(prog_name="railyard", complete_var="_RAILYARD_COMPLETE", shell=shell) + "\n")


class _LazyConsole:
    """A rich Console made on first use: importing rich.console took ~20 ms of every command, `--help`
    and a mistyped option included, which print through click instead."""

    def __init__(self, **options: Any) -> None:  # Console's keyword arguments
        self._options = options
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return getattr(self._console, name)


# a Console to its callers: __getattr__ hands every attribute over to the real one
out_console = cast("Console", _LazyConsole(highlight=False))
err_console = cast("Console", _LazyConsole(stderr=True, highlight=False, soft_wrap=True))

DesignArg = Annotated[Path, typer.Argument(help="design YAML file", show_default=False, metavar="DESIGN")]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", help="what-if override path=value, repeatable", metavar="PATH=VALUE")
]
CatalogOpt = Annotated[
    Path | None,
    typer.Option(
        "--catalog", help="parts catalog YAML instead of designs/catalog.yaml", show_default=False, metavar="FILE"
    ),
]
ForceOpt = Annotated[
    Path | None,
    typer.Option(
        "--force",
        help="write into this existing folder (or file) although railyard did not write it; must name the output",
        show_default=False,
        metavar="PATH",
    ),
]
if TYPE_CHECKING:
    from rich.console import Console

    from generators.handover.netbox_sync import Client
    from generators.model.catalog import Catalog
    from generators.model.design import Design
    from generators.model.plan import Plan

INTERNAL = 70  # EX_SOFTWARE: a railyard bug, not the user's input

# secrets this run knows (NETBOX_TOKEN, the password of a --url), taken out of whatever it prints when
# it fails, a traceback included; with anything that looks like URL credentials (scheme://user:pass@)
_SECRETS: set[str] = set()
_URL_CREDENTIALS = r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s@]*@"


def _redact(text: str) -> str:
    import re

    token = os.environ.get("NETBOX_TOKEN", "")
    # shorter ones would blank out common words (and are no secret worth the name)
    for s in sorted((x for x in {*_SECRETS, token, token.strip()} if len(x) >= 4), key=len, reverse=True):
        text = text.replace(s, "***")
    return re.sub(_URL_CREDENTIALS, r"\1***@", text)


# Each command imports what it uses when it runs: `railyard --help` and a mistyped option answer
# without loading pydantic, the compiler and the renderers (0.74 s for --help when all were imported).
def compile_file(
    path: Path,
    overrides: list[str] | None = None,
    catalog_path: Path | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> tuple[Plan, Design, Catalog]:
    from generators.compiler import compile_file as compile_

    return compile_(path, overrides, catalog_path, on_stage)


@contextlib.contextmanager
def _progress(shown: bool, what: str) -> Iterator[Callable[[str], None]]:
    """A status line on stderr while a long step runs ("compiling h100-16k: cabling"), on a terminal
    only (a pipe or CI log gets nothing); the callback names the current step."""
    if not shown or not err_console.is_terminal:
        yield lambda step: None
        return
    with err_console.status(what, spinner="dots") as status:
        yield lambda step: status.update(f"{what}: {step}")


def render_all(plan: Plan) -> dict[str, str]:
    from generators.renderers import render_all as render

    return render(plan)


def render_into(plan: Plan, folder: Path) -> dict[str, str]:
    from generators.renderers import render_into as render

    return render(plan, folder)


def _guarded(fn: Callable[..., None]) -> Callable[..., None]:
    """No traceback reaches a user: bad input and OS errors exit 2 with what to do; anything else is a
    railyard bug, printed with its traceback, labelled as such, exit 70."""

    @functools.wraps(fn)
    def run(*args: object, **kwargs: object) -> None:
        try:
            fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except DesignError as exc:
            _fail(exc)
        except OSError as exc:
            _fail(os_problem("(file)", exc.filename or "", exc, "cannot use"))
        except KeyboardInterrupt:
            err_console.print("interrupted", markup=False)
            raise typer.Exit(130) from None
        except Exception:
            err_console.print(
                "[bold red]internal error[/]: this is a railyard bug, not a problem with your input; "
                "please report it with the traceback below",
                markup=True,
            )
            err_console.print(_redact(traceback.format_exc()), markup=False)
            raise typer.Exit(INTERNAL) from None

    return run


JsonOpt = Annotated[bool, typer.Option("--json", help="print the result as JSON on stdout (problems too, exit 2)")]


def _problems_json(exc: DesignError) -> dict[str, Any]:
    return {
        "ok": False,
        "problems": [{"field": p.field, "message": p.message, "fix": p.hint, "where": p.where} for p in exc.problems],
    }


def _warnings_json(plan: Plan) -> list[dict[str, str]]:
    from generators.stages.bom import plan_bom

    return [{"field": w.field, "message": w.message} for w in [*plan.warnings, *plan_bom(plan).warnings]]


def _print_json(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def _fail(exc: DesignError, as_json: bool = False) -> None:
    if as_json:
        _print_json(_problems_json(exc))
        raise typer.Exit(2)
    n = f"{len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''}"
    # an option, an argument (CABLE_ID) or a path, not the design
    if all(p.field.startswith(("-", "(file)")) or p.field.isupper() for p in exc.problems):
        err_console.print(f"[bold red]error[/]: refused ({n})", markup=True)
    else:
        err_console.print(f"[bold red]error[/]: the design is not valid ({n})", markup=True)
    for p in exc.problems:
        err_console.print(_redact(p.render()), markup=False)
    raise typer.Exit(2)


def _waiting(what: str) -> None:
    """Another railyard holds the output folder: say so, then wait for it (write_tree's on_wait)."""
    err_console.print(f"{what}: this one writes once it is done", markup=False)


# More stale files than this in one folder are said in one line: a 16k-GPU site that changes variant
# removes thousands of label files, and a line each buries the warnings that follow.
_STALE_LINES_PER_FOLDER = 5


def _refuse_moves(plan: Plan, out: Path) -> None:
    """What is built is never moved silently: when `out` holds railyard's output of the same site (its
    plan.json, design name equal), a device of both that would stand in another rack or unit stops the
    compile before anything is written, naming the moves."""
    from generators.output import read_manifest
    from generators.reports.diff import moves_between, moves_listed, placement, placement_of_plan_json

    files = read_manifest(out, "--out")
    if not files or "plan.json" not in files:
        return
    try:
        doc = json.loads((out / "plan.json").read_bytes())
    except (OSError, ValueError) as exc:
        err_console.print(
            f"[bold yellow]warning[/]: cannot read {out / 'plan.json'} ({exc.__class__.__name__}), so moves of "
            "devices placed by the previous compile are not checked",
            markup=True,
        )
        return
    before = placement_of_plan_json(doc)
    name = doc.get("design", {}).get("name") if isinstance(doc, dict) and isinstance(doc.get("design"), dict) else None
    if before is None or name != plan.design.name:
        return  # another site's (or an unreadable) output: nothing of this site stands there yet
    moves = moves_between(before, placement(plan))
    if not moves:
        return
    raise DesignError.one(
        "--out",
        f"{len(moves):,} device{'s' if len(moves) != 1 else ''} of {plan.design.name} that {out}/plan.json "
        f"places would move: {moves_listed(moves)}",
        "if the site is not built yet or the moves are intended, run again with --allow-moves; "
        "`railyard diff` lists each move as a work order; else change the design so they stay",
    )


def _wrote(done: Written, out: Path) -> None:
    by_folder: dict[str, list[str]] = {}
    for rel in done.removed:
        by_folder.setdefault(str(Path(rel).parent), []).append(rel)
    for folder, rels in by_folder.items():
        if len(rels) > _STALE_LINES_PER_FOLDER:
            err_console.print(
                f"removed {len(rels)} stale files in {out / folder}/ (railyard wrote them before, not now)",
                markup=False,
            )
            continue
        for rel in rels:
            err_console.print(f"removed stale {out / rel} (railyard wrote it before, not now)", markup=False)
    for rel in done.kept:
        err_console.print(
            f"[bold yellow]warning[/]: kept {out / rel}: railyard wrote it before, not now, but it was "
            "edited since; delete it if it is not needed",
            markup=True,
        )


def _warn(plan: Plan) -> None:
    """Advice that does not stop a compile (e.g. fewer storage servers than vendors support for HA)."""
    from generators.stages.bom import plan_bom

    for w in [*plan.warnings, *plan_bom(plan).warnings]:
        err_console.print(f"[bold yellow]warning[/]: {w.field}: {w.message}", markup=True)


@app.command()
@_guarded
def validate(design: DesignArg, set_: SetOpt = None, catalog: CatalogOpt = None, as_json: JsonOpt = False) -> None:
    """Check a design (shape, catalog, and every fabric invariant) without writing anything.

    Example: railyard validate designs/h100-256.yaml --set backend.oversubscription=2:1"""
    try:
        plan, _, _ = compile_file(design, set_, catalog)
    except DesignError as exc:
        _fail(exc, as_json)
        return
    from generators.reports.mgmtplane import management_json, management_lines

    if as_json:
        _print_json(
            {
                "ok": True,
                "design": plan.design.name,
                "warnings": _warnings_json(plan),
                "management": management_json(plan),
            }
        )
        return
    _warn(plan)
    out_console.print(f"ok: {plan.design.name} is valid")
    lines = management_lines(plan)
    if lines:
        out_console.print("switch management plane (management.*, as every switch config carries it):", markup=False)
        for line in lines:
            out_console.print(f"  {line}", markup=False, soft_wrap=True)


class Technology(StrEnum):
    infiniband = "infiniband"
    roce = "roce"


@app.command()
@_guarded
def init(
    design: Annotated[Path, typer.Argument(help="the design file to write", show_default=False, metavar="FILE")],
    system: Annotated[
        str, typer.Option("--system", help="GPU server model or rack system (catalog key)", metavar="KEY")
    ] = "hgx-h100",
    gpus: Annotated[
        int, typer.Option("--gpus", help="GPUs at least: rounded up to whole scalable units", metavar="N")
    ] = 1024,
    backend: Annotated[
        Technology, typer.Option("--backend", help="backend fabric technology", metavar="infiniband|roce")
    ] = Technology.infiniband,
    name: Annotated[str, typer.Option("--name", help="design name (default: <system>-<gpus>)", metavar="NAME")] = "",
    force: ForceOpt = None,
) -> None:
    """Write a starting design for a GPU system and size, every field commented, that validates and
    compiles as written; then change it and `railyard validate` it.

    Example: railyard init site.yaml --system hgx-b200 --gpus 2048"""
    from generators.model.catalog import DEFAULT_CATALOG, load_catalog
    from generators.model.design.starter import start

    try:
        forced = force is not None and Path(force).resolve() == design.resolve()
        if (design.exists() or design.is_symlink()) and not forced:
            raise DesignError.one(
                "FILE",
                f"{design} exists: railyard init never overwrites a file",
                f"name a new file, or pass --force {design} to replace it",
            )
        if design.is_dir():
            raise DesignError.one("FILE", f"{design} is a folder", f"name a file, e.g. {design / 'site.yaml'}")
        got = start(load_catalog(DEFAULT_CATALOG), system, gpus, backend.value, name)
        write_file(design, got.text, "FILE", replace_any=True)
        plan, _, _ = compile_file(design)  # what it wrote must compile: say so now, not at the user's first try
    except DesignError as exc:
        _fail(exc)
        return
    _warn(plan)
    out_console.print(
        f"wrote {design}: {got.gpus:,} GPUs in {got.servers:,} servers ({got.units} scalable units), "
        f"from {got.based_on}\nnext: railyard validate {design}; railyard compile {design} --out out/{got.name}",
        markup=False,
        soft_wrap=True,
    )


def _deploy_values(
    secrets_file: Path | None, deploy: Path | None, out: Path, force: Path | None, design: Path
) -> dict[str, str] | None:
    """The secrets of --secrets FILE, checked with --deploy DIR before anything is compiled."""
    if (secrets_file is None) != (deploy is None):
        given, other = ("--secrets", "--deploy") if deploy is None else ("--deploy", "--secrets")
        raise DesignError.one(
            given,
            f"{given} needs {other}: the secrets file fills the deploy folder",
            "pass both: --secrets FILE --deploy DIR",
        )
    if secrets_file is None or deploy is None:
        return None
    if Path(deploy).resolve() == Path(out).resolve():
        raise DesignError.one(
            "--deploy", "is the --out folder", "give the deploy folder its own path: --out keeps the placeholders"
        )
    from generators.model.secrets import load_file

    check_out_dir(deploy, "--deploy", force, design)
    return load_file(secrets_file)


def _deploy_stager(filled: dict[str, str], secret: set[str]) -> Callable[[Path], dict[str, str]]:
    """Stage the deploy folder's files: those holding a secret owner-only (the staging folder is 0700)."""
    from generators.output import PRIVATE_FILE_MODE, stage_files

    def stage(tmp: Path) -> dict[str, str]:
        digests = stage_files(filled, tmp)
        for rel in secret:
            os.chmod(tmp / rel, PRIVATE_FILE_MODE)
        return digests

    return stage


@app.command("compile")
@_guarded
def compile_(
    design: DesignArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="output directory", metavar="DIR")] = Path("out"),
    set_: SetOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no summary table")] = False,
    catalog: CatalogOpt = None,
    force: ForceOpt = None,
    as_json: JsonOpt = False,
    secrets_file: Annotated[
        Path | None,
        typer.Option(
            "--secrets",
            help="secrets file (YAML `name: value` lines, mode 0600) filling the --deploy folder",
            metavar="FILE",
        ),
    ] = None,
    deploy: Annotated[
        Path | None,
        typer.Option(
            "--deploy", help="also write the files with their secrets filled in here (those 0600)", metavar="DIR"
        ),
    ] = None,
    allow_moves: Annotated[
        bool,
        typer.Option(
            "--allow-moves",
            help="write although devices of the site already in DIR would stand in another rack or unit",
        ),
    ] = False,
) -> None:
    """Compile a design and write DIR/plan.json and every generated artifact, with DIR/index.html saying
    what each is. Only files railyard wrote (listed in DIR/.railyard-manifest.json) are ever replaced or
    removed. Credentials are placeholders there; --secrets FILE --deploy DIR2 writes the same files with
    them filled in (docs: Day 0). A recompile of the same site that would move a device DIR's plan.json
    has placed is refused unless --allow-moves (`railyard diff` lists the moves as work orders).

    Example: railyard compile designs/h100-256.yaml --out out/h100-256"""
    try:
        check_out_dir(out, "--out", force, design)  # before minutes of compiling
        values = _deploy_values(secrets_file, deploy, out, force, design)
        with _progress(not (quiet or as_json), f"compiling {design.stem}") as step:
            plan, _, _ = compile_file(design, set_, catalog, step)
            if not allow_moves:
                _refuse_moves(plan, out)
            step(f"rendering and writing {out}/")
            if deploy is None or values is None:
                # the renderers write straight into write_tree's staging folder (two processes on a large plan)
                done = write_tree(functools.partial(render_into, plan), out, "--out", force, design, _waiting)
            else:
                from generators.model.secrets import fill_files

                files = render_all(plan)
                filled, secret = fill_files(files, values)  # every missing secret named before a file is written
                done = write_tree(files, out, "--out", force, design, _waiting)
                step(f"writing {deploy}/")
                deployed = write_tree(_deploy_stager(filled, secret), deploy, "--deploy", force, design, _waiting, True)
    except DesignError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        from generators.reports.facts import site_facts

        _print_json(
            {
                "ok": True,
                "design": plan.design.name,
                "out": str(out),
                "files": done.files,
                **(
                    {"deploy": {"dir": str(deploy), "files": deployed.files, "with_secrets": len(secret)}}
                    if deploy
                    else {}
                ),
                "removed": done.removed,
                "kept": done.kept,
                "warnings": _warnings_json(plan),
                "facts": site_facts(plan, {}),
            }
        )
        return
    if not quiet:
        from generators.reports.summary import summary_table

        out_console.print(summary_table(plan))
    _warn(plan)
    _wrote(done, out)
    out_console.print(f"wrote {done.files} files to {out}/")
    if deploy is not None:
        _wrote(deployed, deploy)
        out_console.print(
            f"wrote {deployed.files} files to {deploy}/ ({len(secret)} with secrets filled in, mode 0600)",
            markup=False,
            soft_wrap=True,
        )
    from generators.renderers.index import open_next

    manifest = json.loads((out / ".railyard-manifest.json").read_text())["files"]
    out_console.print(
        "open next: " + ", ".join(str(out / p) for p in open_next(manifest)), markup=False, soft_wrap=True
    )


class DiffFormat(StrEnum):
    markdown = "markdown"
    json = "json"


@app.command("diff")
@_guarded
def diff_(
    base: Annotated[
        Path, typer.Argument(help="base design YAML (the target branch's)", show_default=False, metavar="BASE")
    ],
    head: Annotated[
        Path, typer.Argument(help="head design YAML (the proposed change)", show_default=False, metavar="HEAD")
    ],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="write the review here", metavar="FILE")] = None,
    full: Annotated[
        Path | None,
        typer.Option(
            "--full", help="also write the whole review here (every cable and file); --out links it", metavar="FILE"
        ),
    ] = None,
    fmt: Annotated[
        DiffFormat,
        typer.Option(
            "--format",
            help="markdown (a pull-request comment within a size budget) or json (every item)",
            metavar="markdown|json",
        ),
    ] = DiffFormat.markdown,
    base_set: Annotated[
        list[str] | None,
        typer.Option("--base-set", help="what-if override path=value on the base, repeatable", metavar="PATH=VALUE"),
    ] = None,
    head_set: Annotated[
        list[str] | None,
        typer.Option("--head-set", help="what-if override path=value on the head, repeatable", metavar="PATH=VALUE"),
    ] = None,
    force: ForceOpt = None,
) -> None:
    """Review of a design change: the design fields that differ, then switches, cost, cables and files.

    Example: railyard diff base.yaml designs/h100-1024-reference.yaml --out review.md"""
    from generators.reports.diff import review, review_json, review_markdown

    try:
        if out is not None:
            check_out_file(out, "--out", force)  # before compiling two designs
        if full is not None:
            check_out_file(full, "--full", force)
            if out is not None and Path(out).resolve() == Path(full).resolve():
                raise DesignError.one("--full", f"{full} is also --out", "give the full review its own file name")
        bplan, _, _ = compile_file(base, base_set)
        hplan, _, _ = compile_file(head, head_set)
    except DesignError as exc:
        _fail(exc)
        return
    r = review(
        bplan,
        render_all(bplan),
        hplan,
        render_all(hplan),
        " ".join([str(base), *(f"--set {s}" for s in base_set or [])]),
        " ".join([str(head), *(f"--set {s}" for s in head_set or [])]),
    )
    if full is not None:
        write_file(full, review_json(r) if fmt is DiffFormat.json else review_markdown(r, limit=None), "--full", force)
        out_console.print(f"wrote {full}")
        r.full_report = full.name if out is not None and full.parent.resolve() == out.parent.resolve() else str(full)
    text = review_json(r) if fmt is DiffFormat.json else review_markdown(r)
    if out is None:
        sys.stdout.write(text)
    else:
        write_file(out, text, "--out", force)
        out_console.print(f"wrote {out}")


@app.command()
@_guarded
def verify(
    design: DesignArg,
    ibnetdiscover: Annotated[
        Path | None,
        typer.Option("--ibnetdiscover", help="output of `ibnetdiscover` on site", show_default=False, metavar="FILE"),
    ] = None,
    lldp: Annotated[
        list[Path] | None,
        typer.Option(
            "--lldp",
            help="LLDP neighbour tables of the Ethernet "
            "networks, one JSON file per device named after it "
            "(lldpctl -f json0/json, NVUE, EOS): --lldp a.json b.json ... or --lldp a.json --lldp b.json",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    more_tables: Annotated[
        list[Path] | None,
        typer.Argument(help="more LLDP tables, after --lldp FILE", show_default=False, metavar="FILE"),
    ] = None,
    set_: SetOpt = None,
    speed: Annotated[
        str | None,
        typer.Option(
            "--speed", help="expected link speed instead of the plan's, e.g. 4xHDR on a simulator", metavar="SPEED"
        ),
    ] = None,
    node_name_map: Annotated[
        Path | None,
        typer.Option(
            "--node-name-map", help="GUID -> name map for devices whose node description is not set", metavar="FILE"
        ),
    ] = None,
    plane: Annotated[
        str | None,
        typer.Option(
            "--plane",
            help="a multi-plane InfiniBand backend: the plane (its own subnet) the discovery is of, e.g. plane2",
            show_default=False,
            metavar="PLANE",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON on stdout")] = False,
    write_config: Annotated[
        Path | None,
        typer.Option(
            "--write-config",
            help="also write plan.json and infiniband/ with the discovered GUIDs to this directory",
            metavar="DIR",
        ),
    ] = None,
    force: ForceOpt = None,
    progress: Annotated[
        Path | None,
        typer.Option(
            "--progress",
            help="also record the result in this "
            "cabling progress file (see `cabling mark`): cables "
            "found as planned become tested, those at fault faulty "
            "with the finding",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Compare a discovered InfiniBand fabric (--ibnetdiscover) or the Ethernet networks' LLDP tables
    (--lldp) with the plan: missing, extra, swapped and slow links. Exits 1 when the fabric differs from
    the plan, 2 on bad input.

    Example: railyard verify site.yaml --ibnetdiscover ibnetdiscover.txt --progress site.progress.csv"""
    from generators.asbuilt.progress import check_path, record, verify_marks
    from generators.asbuilt.verify import run_verify, run_verify_lldp, write_as_built

    try:
        if more_tables and not lldp:
            raise DesignError.one(
                "--lldp",
                f"{len(more_tables)} file(s) after the design ({more_tables[0]}), but no --lldp",
                "write --lldp before the LLDP tables: --lldp a.json b.json",
            )
        lldp = [*(lldp or []), *(more_tables or [])]
        if progress is not None:
            check_path(progress, "--progress")
        if (ibnetdiscover is None) == (not lldp):
            raise DesignError.one(
                "--ibnetdiscover",
                "give either --ibnetdiscover FILE (InfiniBand) or --lldp FILE... (Ethernet)",
                "run verify once per kind of network",
            )
        if lldp and (speed or node_name_map or write_config):
            raise DesignError.one(
                "--lldp",
                "--speed, --node-name-map and --write-config belong to --ibnetdiscover",
                "leave them out with --lldp",
            )
        if plane is not None and (lldp or write_config is not None):
            raise DesignError.one(
                "--plane",
                "--plane reads one plane's ibnetdiscover; --write-config needs every plane's GUIDs",
                "leave --plane out with --lldp or --write-config",
            )
        if write_config is not None:
            check_out_dir(write_config, "--write-config", force, design)
        plan, _, _ = compile_file(design, set_)
        if lldp:
            report = run_verify_lldp(plan, lldp)
        else:
            assert ibnetdiscover is not None
            report = run_verify(plan, ibnetdiscover, speed, node_name_map, plane or "")
        if write_config is not None and ibnetdiscover is not None:
            done = write_as_built(plan, ibnetdiscover, write_config, node_name_map, force, design, _waiting)
        if progress is not None:
            marks = verify_marks(plan, report)
            rec = record(progress, marks, "railyard verify")
    except DesignError as exc:
        _fail(exc)
        return
    if progress is not None:
        states = {m.cable_id: m.state for m in marks}
        changed = [states[ev.cable_id] for ev in rec.added]
        err_console.print(
            f"progress: {changed.count('tested')} cables marked tested, {changed.count('faulty')} "
            f"faulty in {progress} ({len(rec.unchanged)} unchanged, "
            f"{len(plan.cables or []) - len(marks)} not judged by this run)",
            markup=False,
            soft_wrap=True,
        )
    out_console.print(
        json.dumps(report.to_dict(), indent=1) if as_json else report.text().rstrip(), markup=False, soft_wrap=True
    )
    if write_config is not None:
        _wrote(done, write_config)
        err_console.print(f"wrote the subnet-manager files with the discovered GUIDs to {write_config}/")
    if not report.ok:
        raise typer.Exit(1)


@app.command()
@_guarded
def compare(
    designs: Annotated[
        list[Path],
        typer.Argument(help="design YAML files; the first is the base", show_default=False, metavar="DESIGN"),
    ],
    set_: SetOpt = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="print a Markdown table")] = False,
    sites: Annotated[
        bool,
        typer.Option(
            "--sites",
            help="one row per design instead: servers, GPUs, "
            "backend switches and links per tier, transceivers, racks, "
            "compute rack power, cost per GPU",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Compare designs' costs by category side by side, with deltas against the first design; designs of
    different sizes are also compared per GPU. Every --set applies to every design (e.g. price them all
    with a cluster-manager subscription).

    Example: railyard compare designs/h100-1024-reference.yaml designs/h100-1024-optimized.yaml"""
    from generators.reports.compare import compare_markdown, compare_table, site_row, sites_markdown, sites_table
    from generators.stages.bom import plan_bom

    plans = []
    try:
        for path in designs:
            plan, _, _ = compile_file(path, set_)
            plans.append(plan)
    except DesignError as exc:
        _fail(exc, as_json)
        return
    boms = [plan_bom(p) for p in plans]
    rows = [site_row(p) for p in plans] if sites else []
    if as_json:
        from dataclasses import asdict

        from generators.reports.compare import compare_rows

        doc: dict[str, Any] = {"ok": True, "designs": [b.design for b in boms]}
        if sites:
            doc["sites"] = [asdict(r) for r in rows]
        else:
            doc["rows"] = [
                {
                    "label": r.label,
                    "group": r.group,
                    "unit": r.unit,
                    "values": [None if math.isnan(v) else v for v in r.values],
                    "deltas": [None if math.isnan(d) else d for d in r.deltas()] if r.comparable else None,
                }
                for r in compare_rows(boms)
            ]
        _print_json(doc)
        return
    if markdown:
        sys.stdout.write(sites_markdown(rows) if sites else compare_markdown(boms))
        return
    table = sites_table(rows) if sites else compare_table(boms)
    # as wide as the table needs (never wrapped mid-figure), whatever the terminal says
    from rich.console import Console
    from rich.measure import Measurement

    wide = Console(highlight=False, width=1000)
    need = Measurement.get(wide, wide.options, table).maximum
    Console(highlight=False, width=max(need, out_console.width if sys.stdout.isatty() else 0)).print(table)


@app.command()
@_guarded
def explore(
    design: Annotated[Path, typer.Argument(help="the base design YAML", show_default=False, metavar="BASE")],
    space: Annotated[
        Path,
        typer.Option(
            "--space",
            help="the space file: choices (bundles), fields (candidate values), constraints, objectives",
            show_default=False,
            metavar="FILE",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="output directory", metavar="DIR")] = Path("explore"),
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="processes evaluating variants (default: this machine's cores)", metavar="N"
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="evaluate on this Dask distributed scheduler instead, e.g. tcp://10.0.0.5:8786",
            show_default=False,
            metavar="ADDRESS",
        ),
    ] = None,
    force: ForceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the variants of a design that a space file describes: compile each (without writing its
    files), keep those that meet the constraints, and write every point, the Pareto front, a design file per
    point (`extends:` BASE) that `railyard compile` reproduces, and DIR/index.html with the front plotted.
    Small spaces are searched exhaustively, large ones by Optuna's seeded multi-objective sampler.

    Example: railyard explore designs/h100-1024-reference.yaml --space designs/spaces/h100-1024-playbook.yaml
    --out out/explore"""
    from generators.explore.outputs import render_explore
    from generators.explore.parallel import runner
    from generators.explore.search import Base, nothing_feasible, search
    from generators.explore.space import load_space
    from generators.model.yamlload import load_with_extends

    try:
        check_out_dir(out, "--out", force, design)  # before minutes of searching
        data, src = load_with_extends(design)
        sp = load_space(space, data, src)
        run = runner(jobs, cluster)  # its worker processes start before the progress line's thread
        try:
            with _progress(not as_json, f"exploring {design.stem}") as step:

                def told(evaluated: int, feasible: int, front: int, planned: int) -> None:
                    step(f"{evaluated}/{planned} evaluated, {feasible} feasible, {front} on the front")

                result = search(sp, Base(data, src, str(data.get("name", design.stem))), run, told)
        finally:
            run.close()
        problem = nothing_feasible(sp, result)
        if problem is not None:
            raise problem
        done = write_tree(render_explore(sp, result, design, out), out, "--out", force, design, _waiting)
    except DesignError as exc:
        _fail(exc, as_json)
        return
    cpu = sum(p.cpu_s for p in result.points)
    if as_json:
        _print_json(
            {
                "ok": True,
                "out": str(out),
                "method": result.method,
                "variants": sp.size,
                "searched": len(result.points),
                "feasible": sum(p.feasible for p in result.points),
                "front": [p.id for p in result.front],
                "files": done.files,
            }
        )
        return
    sys.stdout.write((out / "front.md").read_text())
    _wrote(done, out)
    out_console.print(
        f"searched {len(result.points)} of {sp.size:,} variants ({result.method}, {cpu:.1f} CPU s evaluating); "
        f"wrote {done.files} files to {out}/\nopen next: {out / 'index.html'}",
        markup=False,
        soft_wrap=True,
    )


@app.command()
@_guarded
def schema(catalog: CatalogOpt = None) -> None:
    """Print the JSON Schema of a design file on stdout (for editor completion and CI); catalog keys are enums of
    the catalog's entries. designs/design.schema.json is this for designs/catalog.yaml.

    Example: railyard schema > design.schema.json"""
    from generators.model.catalog import DEFAULT_CATALOG, load_catalog
    from generators.model.design.json_schema import design_schema

    sys.stdout.write(schema_text(design_schema(load_catalog(catalog or DEFAULT_CATALOG))))


def schema_text(doc: dict[str, object]) -> str:
    """The schema as `railyard schema` prints it (and designs/design.schema.json holds it)."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@app.command("serve-ztp")
@_guarded
def serve_ztp(
    out_dir: Annotated[
        Path,
        typer.Argument(help="a folder `railyard compile` (or deploy) wrote", show_default=False, metavar="OUT_DIR"),
    ],
    bind: Annotated[
        str | None,
        typer.Option(
            "--bind",
            help="address to listen on; default: the host of the design's ztp.url (in OUT_DIR/ztp/switches.json)",
            show_default=False,
            metavar="ADDR",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=1,
            max=65535,
            help="TCP port; default: the port of ztp.url (8080)",
            show_default=False,
            metavar="N",
        ),
    ] = None,
) -> None:
    """Serve the files the switches' zero-touch provisioning fetches (their ZTP files and configs, as
    OUT_DIR/ztp/switches.json lists them; nothing else of the folder) over HTTP, read-only, logging each
    fetch with the switch's name, until Ctrl-C. For a lab or a first rack: any static HTTP server at
    ztp.url does the same.

    Example: railyard serve-ztp out/h100-256 --bind 10.64.0.17 --port 8080"""
    import errno
    from urllib.parse import urlsplit

    from generators.handover.ztp_server import load, make_server

    served = load(out_dir)
    url = urlsplit(served.url)
    host = bind if bind is not None else (url.hostname or "")
    tcp = port if port is not None else (url.port or (443 if url.scheme == "https" else 80))

    def log(line: str) -> None:
        out_console.print(line, markup=False, soft_wrap=True)

    try:
        server = make_server(served, host, tcp, log)
    except OSError as exc:
        raise DesignError.one(
            "--port" if exc.errno == errno.EADDRINUSE else "--bind",
            f"cannot listen on {host}:{tcp}: {exc.strerror or exc}",
            "bind an address of this machine (--bind) and a free port (--port)",
        ) from None
    sw = len({name for name, _ in served.paths.values()})
    log(f"serving {len(served.paths)} files of {sw} switches from {served.root} on http://{host}:{tcp}/")
    if served.private:
        log(f"{len(served.private)} of them hold secrets: each goes to its switch's planned address only")
    if url.hostname != host or (url.port or 80) != tcp:
        log(f"note: the switches were told {served.url} (ztp.url); they fetch from there, not from here")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log("stopped")
    finally:
        server.server_close()


cabling_app = typer.Typer(
    no_args_is_help=True,
    context_settings=HELP,
    help="The technician's pack: printable rack and row sheets, and cabling progress.",
)
app.add_typer(cabling_app, name="cabling")


@cabling_app.command("pack")
@_guarded
def cabling_pack(
    design: DesignArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="output directory", metavar="DIR")] = Path("pack"),
    set_: SetOpt = None,
    catalog: CatalogOpt = None,
    force: ForceOpt = None,
    html_only: Annotated[
        bool, typer.Option("--html-only", help="write the HTML sheets without printing PDFs (no Chromium needed)")
    ] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Chromiums printing at once", metavar="N")] = 2,
    progress: Annotated[
        Path | None,
        typer.Option(
            "--progress",
            help="tick the cables this cabling "
            "progress file has as pulled or tested, and flag "
            "the faulty ones, on the rack sheets",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Write the technician's pack: per rack the sheet with a QR code per cable, tick boxes and PDU outlets
    (cabling/racks/<rack>.html and .pdf), per row the racks and the bill of cables to stage
    (cabling/rows/<row>.html, .pdf and .csv), and the label-printer files (cabling/labels/<rack>.csv for
    Brady/DYMO/Brother label software, .zpl for Zebra printers).
    PDFs are printed by headless Chromium (about 1.5 s a sheet), which is why `compile` does not.

    Example: railyard cabling pack site.yaml --out pack --html-only"""
    from generators.asbuilt.progress import read_current
    from generators.printing import PrintError, find_chromium, print_all
    from generators.renderers.pack import render_pack

    try:
        check_out_dir(out, "--out", force, design)
        done_cables = None
        if progress is not None:
            if not progress.exists():
                raise DesignError.one(
                    "--progress",
                    f"no progress file {progress}",
                    "mark cables first (`railyard cabling mark`), or leave --progress out",
                )
            done_cables = {k: (v.state, v.note) for k, v in read_current(progress).items()}
        chromium = None
        if not html_only:
            try:
                chromium = find_chromium()
            except PrintError as exc:
                raise DesignError.one(
                    "--html-only", str(exc), "install it, or pass --html-only to write the HTML sheets alone"
                ) from None
        plan, _, _ = compile_file(design, set_, catalog)
        files: dict[str, str | bytes] = dict(render_pack(plan, done_cables))
        if chromium is not None:
            sheets = sorted(r for r in files if r.endswith(".html"))
            try:
                files.update(print_all({k: v for k, v in files.items() if isinstance(v, str)}, sheets, jobs, chromium))
            except PrintError as exc:
                raise DesignError.one(
                    "--html-only",
                    str(exc),
                    "pass --html-only to write the HTML sheets alone, and report the chromium output",
                ) from None
        done = write_tree(dict(sorted(files.items())), out, "--out", force, design, _waiting)
    except DesignError as exc:
        _fail(exc)
        return
    _warn(plan)
    stray = sorted(set(done_cables or {}) - {c.id for c in plan.cables or []})
    if stray:
        err_console.print(
            f"[bold yellow]warning[/]: {len(stray)} cable ids in {progress} are not in the plan (the "
            f"design changed since they were marked), e.g. {stray[0]}: not on any sheet",
            markup=True,
        )
    _wrote(done, out)
    pdfs = sum(r.endswith(".pdf") for r in files)
    out_console.print(f"wrote {len(files)} files ({pdfs} PDFs) to {out}/")


ProgressOpt = Annotated[
    Path | None,
    typer.Option(
        "--progress",
        help="the cabling progress file (default: <design>.progress.csv beside the design)",
        show_default=False,
        metavar="FILE",
    ),
]


@cabling_app.command("mark")
@_guarded
def cabling_mark(
    design: DesignArg,
    args: Annotated[
        list[str] | None,
        typer.Argument(
            help="cable ids, then the state: pulled, tested, faulty or cleared",
            metavar="CABLE_ID... STATE",
            show_default=False,
        ),
    ] = None,
    rack: Annotated[
        list[str] | None,
        typer.Option(
            "--rack",
            help="every cable on this rack's sheet (an end in the rack); repeat it",
            show_default=False,
            metavar="RACK",
        ),
    ] = None,
    note: Annotated[str, typer.Option("--note", help="why, e.g. what is faulty", metavar="TEXT")] = "",
    by: Annotated[
        str | None,
        typer.Option("--by", help="who marks (default: your login name)", show_default=False, metavar="NAME"),
    ] = None,
    progress: ProgressOpt = None,
    set_: SetOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """Record cables as pulled, tested or faulty (a fixed faulty cable is marked pulled again, then tested;
    cleared undoes a mark made by mistake), e.g. `railyard cabling mark site.yaml C-0A1B2-3C4D5 pulled`.
    Each mark is a line appended to the progress file (when, cable id, state, who, note); marking a cable
    with the state and note it has records nothing. A cable named by id takes the mark (tested before
    pulled, or pulled after tested, with a warning); --rack only moves cables forward (it never takes a
    tested cable back to pulled, nor clears a fault). Two technicians may mark at once: the file is locked
    while it changes.

    Example: railyard cabling mark site.yaml C-0A1B2-3C4D5 faulty --note 'dirty MPO at the leaf end'"""
    import getpass

    from generators.asbuilt.progress import (
        STATES,
        Mark,
        check_ids,
        check_path,
        check_rack,
        default_path,
        read_current,
        record,
        sheet_cables,
        transition_warnings,
    )

    try:
        words = list(args or [])
        if not words or words[-1] not in STATES:
            raise DesignError.one(
                "STATE",
                f"the last argument must be the state, one of {', '.join(STATES)}"
                f"{f', not {words[-1]!r}' if words else ''}",
                "e.g. railyard cabling mark DESIGN C-0A1B2-3C4D5 pulled",
            )
        state, ids = words[-1], words[:-1]
        if not ids and not rack:
            raise DesignError.one("CABLE_ID", "no cable to mark", "name cable ids before the state, or --rack RACK")
        path = progress or default_path(design)
        check_path(path, "--progress")
        if by is None:
            try:
                by = getpass.getuser()
            except (KeyError, OSError):
                raise DesignError.one("--by", "cannot tell who you are (no login name)", "pass --by NAME") from None
        plan, _, _ = compile_file(design, set_, catalog)
        check_ids(plan, ids)
        for r in rack or []:
            check_rack(plan, r)
        named = set(ids)
        bulk = [c for r in rack or [] for c in sheet_cables(plan, r) if c not in named]
        marks = [Mark(c, state, note) for c in dict.fromkeys(ids)]
        marks += [Mark(c, state, note, forward_only=True) for c in dict.fromkeys(bulk)]
        old = read_current(path, "--progress")
        rec = record(path, marks, by)
    except DesignError as exc:
        _fail(exc)
        return
    for w in transition_warnings(old, [m for m in marks if m.cable_id not in set(rec.unchanged)]):
        err_console.print(f"[bold yellow]warning[/]: {w}", markup=True)
    already = f" ({len(rec.unchanged)} left as they were: already {state}, or further on)" if rec.unchanged else ""
    out_console.print(f"marked {len(rec.added)} cables {state} in {path}{already}", markup=False, soft_wrap=True)


class StatusBy(StrEnum):
    row = "row"
    rack = "rack"


@cabling_app.command("status")
@_guarded
def cabling_status(
    design: DesignArg,
    by: Annotated[
        StatusBy, typer.Option("--by", help="one line per row, or per row and rack", metavar="row|rack")
    ] = StatusBy.row,
    row: Annotated[str | None, typer.Option("--row", help="only this row", show_default=False, metavar="ROW")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
    progress: ProgressOpt = None,
    set_: SetOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """What is left to cable, per row in floor order (and per rack with --by rack) and for the site: cables,
    pulled (not yet tested), tested, faulty, left, with a progress bar. A cable counts in its A end's rack,
    where it is labelled and staged.

    Example: railyard cabling status site.yaml --by rack --row r02"""
    from generators.asbuilt.progress import check_path, check_row, default_path, read_current, status

    try:
        path = progress or default_path(design)
        check_path(path, "--progress")
        plan, _, _ = compile_file(design, set_, catalog)
        if row is not None:
            check_row(plan, row)
        st = status(plan, read_current(path, "--progress"), row)
    except DesignError as exc:
        _fail(exc)
        return
    if not path.exists():
        err_console.print(f"no progress file {path} yet: nothing is marked", markup=False)
    by_rack = by is StatusBy.rack
    if as_json:
        sys.stdout.write(json.dumps({**st.to_dict(by_rack), "progress": str(path)}, indent=1) + "\n")
    else:
        sys.stdout.write(st.text(by_rack))


netbox_app = typer.Typer(
    no_args_is_help=True, context_settings=HELP, help="Hand the site over to NetBox, and read its as-built back."
)
app.add_typer(netbox_app, name="netbox")
UrlOpt = Annotated[
    str,
    typer.Option(
        "--url",
        help="NetBox base URL, e.g. https://netbox.example.com (token from NETBOX_TOKEN)",
        show_default=False,
        metavar="URL",
    ),
]


WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers",
        min=1,
        max=32,
        help="NetBox requests in flight at once (lower it for a busy production NetBox)",
        metavar="N",
    ),
]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0.1,
        help="seconds one NetBox request may take, its retries and their waits included",
        metavar="SECONDS",
    ),
]
ReadTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--read-timeout",
        min=0.1,
        help="seconds NetBox may stay silent on a read before it is asked again (a write, never sent twice, "
        "has until --timeout)",
        metavar="SECONDS",
    ),
]
ConnectTimeoutOpt = Annotated[
    float,
    typer.Option("--connect-timeout", min=0.1, help="seconds to make a connection to NetBox", metavar="SECONDS"),
]


def _netbox_token() -> str:
    """NETBOX_TOKEN, whitespace around it trimmed (and said); refused, never printed, when it is empty or
    holds whitespace or control characters inside."""
    raw = os.environ.get("NETBOX_TOKEN", "")
    token = raw.strip()
    if not token:
        raise DesignError.one(
            "NETBOX_TOKEN",
            "no NetBox API token",
            "export NETBOX_TOKEN=<a token with write access> (v2 tokens look like nbt_<key>.<secret>)",
        )
    if not all("!" <= ch <= "~" for ch in token):
        raise DesignError.one(
            "NETBOX_TOKEN",
            f"the token ({len(token)} characters, not shown) holds whitespace, control or non-ASCII characters",
            "export the token alone: NETBOX_TOKEN=nbt_<key>.<secret>",
        )
    if token != raw:
        err_console.print("NETBOX_TOKEN: trimmed the whitespace around the token", markup=False)
    return token


def _need_netbox_extra() -> None:
    """push and pull speak HTTP through httpx, the `netbox` extra: without it, say what to install (compile's
    NetBox import files need nothing extra)."""
    import importlib.util

    if importlib.util.find_spec("httpx") is None or importlib.util.find_spec("httpcore") is None:
        _fail(
            DesignError.one(
                "--url",
                "talking to NetBox needs the Python package httpx, which is not installed",
                "pip install 'railyard[netbox]' (or use the import files `railyard compile` writes under netbox/)",
            )
        )


def _with_netbox(
    design: Path,
    url: str,
    set_: list[str] | None,
    catalog: Path | None,
    workers: int,
    timeouts: tuple[float, float, float],
    job: Callable[[Plan, Client], None],
) -> None:
    """Check the token and URL, compile the design, connect, and run job(plan, client), all without a
    traceback: a bad design, token or URL, or nothing answering at the URL exits 2; a NetBox that refuses
    a request, answers what railyard cannot read or not in time exits 1, with the request and its answer."""
    from generators.handover.http import HttpError, Timeouts, url_password
    from generators.handover.netbox_sync import Client

    _SECRETS.update(url_password(url))
    connect, read, total = timeouts
    try:
        token = _netbox_token()
        _SECRETS.add(token)
        try:
            client = Client(url, token, Timeouts(connect, read, total), workers=workers, on_retry=_retrying)
        except HttpError as exc:
            raise DesignError.one(
                "--url", str(exc), "give the NetBox base URL, e.g. https://netbox.example.com"
            ) from None
        try:
            plan, _, _ = compile_file(design, set_, catalog)
        except BaseException:
            client.close()
            raise
    except DesignError as exc:
        _fail(exc)
        return
    try:
        job(plan, client)
    except HttpError as exc:
        from rich.text import Text

        from generators.text.escape import printable

        # the HTTP layer escaped NetBox's text already; rich reads none of it as markup
        err_console.print(Text.assemble(("error", "bold red"), ": ", printable(_redact(str(exc)))))
        raise typer.Exit(exc.exit_code) from None
    finally:
        client.close()


def _retrying(message: str) -> None:
    err_console.print(_redact(message), markup=False, emoji=False)


@netbox_app.command("push")
@_guarded
def netbox_push(
    design: DesignArg,
    url: UrlOpt,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print what would change; write nothing")] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="put the design's values back over fields changed in NetBox since the last push "
            "(without it such a push names them and writes nothing)",
        ),
    ] = False,
    edits: Annotated[
        Path | None,
        typer.Option(
            "--edits",
            help="write the fields changed in NetBox since the last push (NetBox's and the design's value) "
            "to this JSON file, to take them into the design",
            dir_okay=False,
        ),
    ] = None,
    set_: SetOpt = None,
    catalog: CatalogOpt = None,
    workers: WorkersOpt = WORKERS,
    timeout: TimeoutOpt = TOTAL_TIMEOUT,
    read_timeout: ReadTimeoutOpt = READ_TIMEOUT,
    connect_timeout: ConnectTimeoutOpt = CONNECT_TIMEOUT,
) -> None:
    """Create or update the design's site in NetBox (racks, device types, devices, interfaces, cables,
    addresses); delete only what railyard pushed before for this site and the design no longer has.
    Many railyard sites share one NetBox: each push changes only its own site's objects. A field the
    site team changed in NetBox since the last push is named (NetBox -> design) and the push writes
    nothing, exit 1, unless --overwrite.

    Example: railyard netbox push site.yaml --url https://netbox.example.com --dry-run --edits edits.json"""
    _need_netbox_extra()
    from generators.handover.netbox_sync import push
    from generators.views.netbox_inventory import inventory

    if edits is not None:
        try:
            check_out_file(edits, "--edits")  # before compiling and asking NetBox
        except DesignError as exc:
            _fail(exc)
            return

    def job(plan: Plan, client: Client) -> None:
        report = push(inventory(plan), client, dry_run=dry_run, overwrite=overwrite)
        out_console.print(report.text(), end="", markup=False)
        if edits is not None:
            write_file(edits, json.dumps(report.to_dict(), indent=2) + "\n", "--edits")
        if report.edits and not overwrite:
            raise typer.Exit(1)

    _with_netbox(design, url, set_, catalog, workers, (connect_timeout, read_timeout, timeout), job)


@netbox_app.command("pull")
@_guarded
def netbox_pull(
    design: DesignArg,
    url: UrlOpt,
    as_json: Annotated[bool, typer.Option("--json", help="the report as JSON")] = False,
    set_: SetOpt = None,
    catalog: CatalogOpt = None,
    workers: WorkersOpt = WORKERS,
    timeout: TimeoutOpt = TOTAL_TIMEOUT,
    read_timeout: ReadTimeoutOpt = READ_TIMEOUT,
    connect_timeout: ConnectTimeoutOpt = CONNECT_TIMEOUT,
) -> None:
    """Read the site's cables back from NetBox and report what differs from the plan (missing, moved,
    extra, wrong type or length) with both ends' rack and unit; exit 1 when anything differs.

    Example: railyard netbox pull site.yaml --url https://netbox.example.com --json"""
    _need_netbox_extra()
    from generators.asbuilt.netbox_pull import pull
    from generators.views.netbox_inventory import inventory

    def job(plan: Plan, client: Client) -> None:
        report = pull(plan, inventory(plan), client)
        if as_json:
            sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
        else:
            out_console.print(report.text(), end="", markup=False)
        if not report.ok:
            raise typer.Exit(1)

    _with_netbox(design, url, set_, catalog, workers, (connect_timeout, read_timeout, timeout), job)


def main() -> None:
    if "_RAILYARD_COMPLETE" in os.environ:  # a shell asks for completions (`railyard completion SHELL`)
        from typer._completion_classes import completion_init

        completion_init()
    try:
        app()
    except SystemExit as exc:  # every command ends here, typer's app() exits
        _end(exc.code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:  # outside any command (start-up): still labelled, still exit 70
        sys.stderr.write(
            "internal error: this is a railyard bug, not a problem with your input; please report "
            "it with the traceback below\n" + _redact(traceback.format_exc())
        )
        sys.exit(INTERNAL)


def _end(code: object) -> NoReturn:
    """Exit without tearing the interpreter down. Its finalization frees every object one by one, a
    compiled plan's millions included, for memory the OS takes back anyway: 0.07-0.1 s of a 1,024-GPU
    compile, 0.4 s at 16,384 GPUs. What it does that matters still happens: the atexit handlers run
    (weakref finalizers, e.g. a TemporaryDirectory's, among them) and the standard streams are flushed.
    While another thread runs (no command leaves one), it exits the ordinary way, which waits for it."""
    if threading.active_count() > 1:
        raise SystemExit(code)
    if code is None or isinstance(code, int):
        status = code or 0
    else:  # as SystemExit("text") does: the text on stderr, status 1
        sys.stderr.write(f"{code}\n")
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # e.g. stdout piped into `head`: what Python's own exit reports as 120
            status = status or 120
    os._exit(status)


if __name__ == "__main__":
    main()
