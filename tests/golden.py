"""Golden files: the full compiled output of a few designs, committed under tests/golden/<name>/, as
Arista AVD commits its intended configs. A code change that changes any output byte shows up in the
pull request's diff of tests/golden/, and tests/test_golden.py fails until the files are regenerated:

    scripts/regen-golden.sh            # = python -m tests.golden

The output goes through `railyard compile`, the command users run, so the golden tree is exactly what
a user gets (manifest included).

One design per family, so that every switch OS, backend technology and system family has one (a test
in tests/test_golden.py checks that over the committed plans): h100-256 (SONiC frontend and OOB,
InfiniBand NDR on MLNX-OS) and the small designs tests/designs/golden-*.yaml, each a shipped design (or
for EOS the all-Arista test design) cut down to one small scalable unit, its tree ~1.4-1.9 MB."""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
TEST_DESIGNS = ROOT / "tests" / "designs"
# golden folder name (the design file's name) -> design file
DESIGNS = {
    "h100-256": ROOT / "designs" / "h100-256.yaml",
    "golden-eos": TEST_DESIGNS / "golden-eos.yaml",  # EOS RoCE backend, frontend and OOB aggregation
    "golden-sonic-roce": TEST_DESIGNS / "golden-sonic-roce.yaml",  # SONiC RoCE backend
    "golden-cumulus": TEST_DESIGNS / "golden-cumulus.yaml",  # Cumulus NVUE RoCE backend (Spectrum-X)
    "golden-xdr": TEST_DESIGNS / "golden-xdr.yaml",  # InfiniBand XDR on NVOS (Quantum-X800)
    "golden-nvl72": TEST_DESIGNS / "golden-nvl72.yaml",  # a GB200 NVL72 rack-scale system
}
REGEN = "scripts/regen-golden.sh"


def compile_into(design: Path, out: Path) -> None:
    """`railyard compile DESIGN --out OUT -q`, in this process (so a test can alter a renderer)."""
    from generators.cli import app

    r = CliRunner().invoke(app, ["compile", str(design), "--out", str(out), "-q"], catch_exceptions=False)
    if r.exit_code != 0:
        raise RuntimeError(f"railyard compile {design} failed ({r.exit_code}):\n{r.output}")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def differences(want: Path, got: Path) -> list[str]:
    """Every file that is missing, extra or differs (with the first differing byte), sorted."""
    a, b = tree(want), tree(got)
    out = [f"missing: {p}" for p in sorted(a.keys() - b.keys())]
    out += [f"extra: {p}" for p in sorted(b.keys() - a.keys())]
    for p in sorted(a.keys() & b.keys()):
        if a[p] != b[p]:
            at = next(
                (i for i, (x, y) in enumerate(zip(a[p], b[p], strict=False)) if x != y), min(len(a[p]), len(b[p]))
            )
            out.append(f"differs: {p} (first difference at byte {at})")
    return out


def regenerate(golden: Path = GOLDEN, names: list[str] | None = None) -> None:
    """Compile every golden design (or only `names`) into golden/<name>/."""
    for name in names if names is not None else list(DESIGNS):
        compile_into(DESIGNS[name], golden / name)


if __name__ == "__main__":
    regenerate(Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN)
    print(f"regenerated {', '.join(DESIGNS)} under {GOLDEN if len(sys.argv) < 2 else sys.argv[1]}")
