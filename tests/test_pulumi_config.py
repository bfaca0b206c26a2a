"""The stack config Pulumi.yaml declares, on the real engine: a stack that sets only `railyard:design`
runs, and its artifacts land in deploy/<stack> as docs/howto/pulumi-deploy.md and components/program.py promise.

Fails (never skips) when the engine is missing: scripts/install-pulumi.sh finds or builds it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generators.compiler import compile_file
from generators.model.secrets import config_key, fill_files
from generators.renderers import render_all
from tests.pulumi_engine import ROOT, SITE_SECRETS, EngineMissing, Stack, engine_bin, snapshot

pytestmark = pytest.mark.engine
DESIGN = ROOT / "designs" / "h100-256.yaml"


@pytest.fixture(scope="module", autouse=True)
def engine() -> Path:
    try:
        return engine_bin()
    except EngineMissing as exc:
        pytest.fail(f"the Pulumi engine is required: {exc}")


def test_every_declared_key_but_design_is_optional() -> None:
    # the engine demands a declared key that has no default before the program runs, so only
    # railyard:design may lack one (the program requires it itself, with its own message)
    config = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["config"]
    assert [k for k, v in config.items() if "default" not in v] == ["railyard:design"]


def test_stack_with_only_the_design_deploys_into_deploy_stack(tmp_path: Path) -> None:
    # the real program, run from a folder of the test's own: the language host runs it there, so the
    # default deploy/<stack> lands in tmp_path and never in the repository
    program = tmp_path / "program"
    program.mkdir()
    (program / "__main__.py").write_text("from components.program import main\n\nmain()\n")
    st = Stack(tmp_path, {"railyard:design": str(DESIGN)}, main=program, name="site-a")
    # the design and the switch configs' credentials (secrets, which only a secret-holding file needs)
    secrets = {config_key(n) for n in SITE_SECRETS}
    assert set(yaml.safe_load((st.dir / "Pulumi.site-a.yaml").read_text())["config"]) == {"railyard:design", *secrets}

    preview = st.run("preview", check=False)
    assert preview.returncode == 0, preview.stdout[-3000:] + preview.stderr[-3000:]
    assert "missing configuration value" not in preview.stdout + preview.stderr
    st.up()
    out = program / "deploy" / "site-a"
    expected = fill_files(render_all(compile_file(DESIGN)[0]), SITE_SECRETS)[0]
    assert {p: c for p, (c, _, _) in snapshot(out).items()} == expected
    assert st.outputs()["outDir"] == str(out.resolve())
    st.run("destroy", "--yes", "--skip-preview")
    assert snapshot(out) == {}
