"""The documentation site builds with no warning, and its generated reference pages cover the code: every
design field of the schema, every command and option of the command line. The README stays a first
screen that points into the site. Nothing is skipped: without mkdocs the build fails, and so does this."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its future, not a build warning
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"mkdocs build --strict failed (pip install -r requirements.txt):\n{log[-5000:]}"
    assert "WARNING" not in log, log[-5000:]
    return out


def page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text()


def test_the_site_builds_strict_with_every_page(site: Path) -> None:
    for path in ("", "quickstart", "tutorial", "architecture", "reference/design-fields", "reference/outputs"):
        assert (site / path / "index.html").is_file(), path


def _schema_paths(schema: dict[str, Any]) -> list[str]:
    """Every field path, walked here on its own: through $ref, `X | null` and lists of mappings."""
    defs = schema["definitions"]

    def model(prop: dict[str, Any]) -> str | None:
        for p in (prop, *prop.get("anyOf", []), prop.get("items", {})):
            if "$ref" in p:
                return str(p["$ref"]).split("/")[-1]
        return None

    paths = ["extends"]

    def walk(name: str, prefix: str) -> None:
        for field, prop in defs[name]["properties"].items():
            paths.append(prefix + field)
            sub = model(prop)
            if sub:
                walk(sub, prefix + field + ("[]." if prop.get("type") == "array" else "."))

    walk("Design", "")
    return paths


def test_every_design_field_is_on_the_field_reference(site: Path) -> None:
    from generators.model.catalog import load_catalog
    from generators.model.design.json_schema import design_schema

    html = page(site, "reference/design-fields")
    paths = _schema_paths(design_schema(load_catalog(ROOT / "designs" / "catalog.yaml")))
    assert len(paths) > 100 and "backend.network.leaf_asn_base" in paths and "tenants[].pkey" in paths
    missing = [p for p in paths if f"<code>{p}</code>" not in html]
    assert not missing, missing
    # each plain field is a link target: reference/design-fields/#backend.speed
    assert 'id="backend.speed"' in html and 'id="tenants.pkey"' in html


def test_every_command_and_option_is_on_the_cli_reference(site: Path) -> None:
    import typer

    from generators.cli import app

    html = page(site, "reference/cli")
    seen = 0

    def walk(cmd: Any, path: str) -> None:
        nonlocal seen
        for name, sub in getattr(cmd, "commands", {}).items():
            full = f"{path} {name}"
            anchor = full.replace(" ", "-")
            assert f'id="{anchor}"' in html, full
            start = html.index(f'id="{anchor}"')
            nxt = re.search(r"<h[2-4] id=", html[start + 1 :])
            section = html[start : start + 1 + nxt.start()] if nxt else html[start:]
            for param in sub.params:
                for opt in param.opts:
                    if opt.startswith("-") and opt != "--help":
                        assert opt in section, (full, opt)
            seen += 1
            walk(sub, full)

    walk(typer.main.get_command(app), "railyard")
    assert seen >= 13  # 6 commands, 2 groups, 5 subcommands


def test_the_output_files_page_names_each_kind_of_file(site: Path) -> None:
    html = page(site, "reference/outputs")
    for pattern in ("plan.json", "frontend/&lt;switch&gt;/frr.conf", "cabling/racks/&lt;rack&gt;.html", "hosts/"):
        assert pattern in html, pattern


def _reference_module() -> Any:
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "gen" / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_undescribed_or_stale_output_pattern_fails_the_build() -> None:
    ref = _reference_module()
    made = set(ref.OUTPUTS) - set(ref.NOT_MADE_HERE)
    ref.check_outputs(made)  # as described: fine
    with pytest.raises(RuntimeError, match=r"no description: new/<switch>/thing\.conf"):
        ref.check_outputs(made | {"new/<switch>/thing.conf"})
    with pytest.raises(RuntimeError, match=r"no build-time compile makes: plan\.json"):
        ref.check_outputs(made - {"plan.json"})


def test_a_path_collapses_into_its_pattern() -> None:
    ref = _reference_module()
    devices = {"fe-leaf01": "switch", "gpu001": "server"}
    racks, rows, tenants = {"r01-01"}, {"r01"}, {"acme"}
    assert ref.pattern_of("frontend/fe-leaf01/frr.conf", devices, racks, rows, tenants) == "frontend/<switch>/frr.conf"
    assert ref.pattern_of("hosts/gpu001/nccl.env", devices, racks, rows, tenants) == "hosts/<server>/nccl.env"
    assert ref.pattern_of("cabling/labels/r01-01.zpl", devices, racks, rows, tenants) == "cabling/labels/<rack>.zpl"
    assert ref.pattern_of("cabling/rows/r01.csv", devices, racks, rows, tenants) == "cabling/rows/<row>.csv"
    assert ref.pattern_of("infiniband/ufm/acme-members.json", devices, racks, rows, tenants) == (
        "infiniband/ufm/<tenant>-members.json"
    )
    assert ref.pattern_of("frontend/avd/fabric.yml", devices, racks, rows, tenants) == "frontend/avd/fabric.yml"


def test_the_readme_is_a_first_screen_that_points_into_the_docs() -> None:
    text = (ROOT / "README.md").read_text()
    lines = text.splitlines()
    assert len(lines) < 200, len(lines)
    first_screen = "\n".join(lines[:25])
    assert "scripts/demo.sh designs/h100-1024-reference.yaml" in first_screen
    assert "scripts/test.sh" in first_screen
    links = re.findall(r"\]\(((?:docs/)[^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 5, links
    for link in links:
        assert (ROOT / link).is_file(), f"README links to {link}, which is not in the repository"
    assert "mkdocs serve" in text
