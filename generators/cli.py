"""`railyard` command line. Bad input prints what is wrong, where and how to fix it, and exits 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from generators.compiler import compile_file
from generators.design import Design
from generators.errors import DesignError
from generators.output import write_file, write_tree
from generators.render import render_all
from generators.summary import summary_table

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Compile a GPU cluster design into cable plans, configs, topology and a BoM.")
out_console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

DesignArg = Annotated[Path, typer.Argument(help="design YAML file", show_default=False)]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="what-if override path=value, repeatable")]


def _fail(exc: DesignError) -> None:
    err_console.print(f"[bold red]error[/]: the design is not valid ({len(exc.problems)} problem"
                      f"{'s' if len(exc.problems) != 1 else ''})", markup=True)
    for p in exc.problems:
        err_console.print(p.render(), markup=False)
    raise typer.Exit(2)


@app.command()
def validate(design: DesignArg, set_: SetOpt = None) -> None:
    """Check a design (shape, catalog, and every fabric invariant) without writing anything."""
    try:
        plan, _, _ = compile_file(design, set_)
    except DesignError as exc:
        _fail(exc)
        return
    out_console.print(f"ok: {plan.design['name']} is valid")


@app.command("compile")
def compile_(design: DesignArg,
             out: Annotated[Path, typer.Option("--out", "-o", help="output directory")] = Path("out"),
             set_: SetOpt = None,
             quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no summary table")] = False) -> None:
    """Compile a design and write DIR/plan.json and every generated artifact."""
    try:
        plan, _, _ = compile_file(design, set_)
        files = render_all(plan)
        write_tree(files, out)
    except DesignError as exc:
        _fail(exc)
        return
    if not quiet:
        out_console.print(summary_table(plan))
    out_console.print(f"wrote {len(files)} files to {out}/")


@app.command("diff")
def diff_(base: Annotated[Path, typer.Argument(help="base design YAML (the target branch's)", show_default=False)],
          head: Annotated[Path, typer.Argument(help="head design YAML (the proposed change)", show_default=False)],
          out: Annotated[Path | None, typer.Option("--out", "-o", help="write the markdown here")] = None,
          base_set: Annotated[list[str] | None, typer.Option("--base-set", help="override on the base")] = None,
          head_set: Annotated[list[str] | None, typer.Option("--head-set", help="override on the head")] = None,
          ) -> None:
    """Markdown review of a design change: counts, cost, cables and artifacts that change."""
    from generators.review import review_markdown

    try:
        bplan, _, _ = compile_file(base, base_set)
        hplan, _, _ = compile_file(head, head_set)
    except DesignError as exc:
        _fail(exc)
        return
    text = review_markdown(bplan, render_all(bplan), hplan, render_all(hplan),
                           " ".join([str(base), *(f"--set {s}" for s in base_set or [])]),
                           " ".join([str(head), *(f"--set {s}" for s in head_set or [])]))
    if out is None:
        sys.stdout.write(text)
    else:
        write_file(out, text)
        out_console.print(f"wrote {out}")


@app.command()
def schema() -> None:
    """Print the JSON Schema of a design (for editor completion in YAML)."""
    sys.stdout.write(json.dumps(Design.model_json_schema(), indent=2) + "\n")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
