#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then runs pytest.
# Real-tool tests (daemons, engine, browser) run too, and fail (never skip) when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the static checks first (seconds; mypy reads its settings from pyproject.toml and keeps a cache in
# .mypy_cache): all three run, and any failing one stops the run before the installs and pytest
failed=()
.venv/bin/mypy || failed+=("mypy")
.venv/bin/ruff check . || failed+=("ruff check")
.venv/bin/ruff format --check . || failed+=("ruff format --check")
if [ ${#failed[@]} -gt 0 ]; then
  names=$(printf ', %s' "${failed[@]}")
  echo "static checks failed: ${names:2}" >&2
  exit 1
fi
bash scripts/install-system-deps.sh
# the real Pulumi engine: an existing one, the cached build, or a ~15 min offline build from Go modules
PATH="$(bash scripts/install-pulumi.sh | tail -1):$PATH"
export PATH PULUMI_PYTHON_CMD="$PWD/.venv/bin/python"
# a real NetBox (PyPI, in a Python 3.12 venv) and a migrated template database, cached under
# ~/.cache/railyard/netbox-<version>; the first run takes ~10 min, later ones under a second
bash scripts/install-netbox.sh >/dev/null
# pytest in RAILYARD_TEST_WORKERS processes (pytest-xdist; default 2, this machine's cores; 0 runs the
# tests in this one process). --dist loadfile keeps a module's tests on one worker; tests/conftest.py
# keeps the modules sharing the NetBox session fixture on one too, and puts the longest modules first, so
# the two workers end together
workers=${RAILYARD_TEST_WORKERS:-2}
case "$workers" in ''|*[!0-9]*) echo "RAILYARD_TEST_WORKERS must be a whole number, not '$workers'" >&2; exit 2 ;; esac
set +e
.venv/bin/python -m pytest -q -n "$workers" --dist loadfile "$@"
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here, not a pass
exit $rc
