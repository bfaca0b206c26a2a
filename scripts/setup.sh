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
  .venv/bin/python -m pip install -q --no-deps -e . >&2
  echo "$want" > "$stamp"
fi
