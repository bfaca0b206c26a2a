#!/usr/bin/env bash
# Python environment for railyard: a project-local virtualenv with the pinned stack. Idempotent: a
# second run checks a stamp and says so. One line per step on stderr, with how long it takes.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[setup] %s\n' "$*" >&2; }
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "making the virtualenv .venv with $("$PY" --version 2>&1) (a few seconds)"
  "$PY" -m venv .venv
fi
stamp=.venv/.railyard-requirements
want=$(sha256sum requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing the pinned packages of requirements.txt (1-3 min the first time; pip's output in .venv/pip.log)"
  start=$SECONDS
  if ! { .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -r requirements.txt; } \
    >.venv/pip.log 2>&1; then
    tail -n 30 .venv/pip.log >&2
    say "ERROR: pip failed (the whole log: .venv/pip.log)"
    exit 1
  fi
  echo "$want" > "$stamp"
  say "packages installed in $((SECONDS - start)) s"
else
  say ".venv is up to date with requirements.txt"
fi
# railyard itself runs from this checkout: a .pth entry puts it on the venv's path and one small
# script is the `railyard` command. (An editable pip install does the same, but every setuptools
# editable mode prints a multi-line BuildBackendWarning on each fresh setup.)
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$PWD" > "$site/railyard.pth"
if [ ! -x .venv/bin/railyard ] || ! grep -q "generators.cli" .venv/bin/railyard; then
  printf '#!%s\nimport sys\nfrom generators.cli import main\nsys.exit(main())\n' "$PWD/.venv/bin/python" > .venv/bin/railyard
  chmod 755 .venv/bin/railyard
  say "the railyard command: .venv/bin/railyard"
fi
