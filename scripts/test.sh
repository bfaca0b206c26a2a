#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then runs pytest.
# Real-tool tests (daemons, engine, browser) run too, and fail (never skip) when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install-system-deps.sh
set +e
.venv/bin/python -m pytest -q "$@"
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here, not a pass
exit $rc
