#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what the tests need, then runs pytest.
# Real-tool tests (daemons, engine, browser) run too; RAILYARD_REQUIRE_TOOLS=1 makes a missing
# tool fail the run instead of skipping the test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export RAILYARD_REQUIRE_TOOLS=1
set +e
.venv/bin/python -m pytest -q "$@"
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here, not a pass
exit $rc
