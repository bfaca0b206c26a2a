#!/usr/bin/env bash
# Python environment for railyard: a project-local virtualenv with the pinned stack. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.railyard-requirements
want=$(sha256sum requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q -r requirements.txt >&2
  echo "$want" > "$stamp"
fi
# railyard itself runs from this checkout: a .pth entry puts it on the venv's path and one small
# script is the `railyard` command. (An editable pip install does the same, but every setuptools
# editable mode prints a multi-line BuildBackendWarning on each fresh setup.)
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$PWD" > "$site/railyard.pth"
if [ ! -x .venv/bin/railyard ] || ! grep -q "generators.cli" .venv/bin/railyard; then
  printf '#!%s\nimport sys\nfrom generators.cli import main\nsys.exit(main())\n' "$PWD/.venv/bin/python" > .venv/bin/railyard
  chmod 755 .venv/bin/railyard
fi
