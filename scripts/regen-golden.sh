#!/usr/bin/env bash
# Regenerate the golden files (tests/golden/<design>/: the full `railyard compile` output of every
# design listed in tests/golden.py). Review the resulting git diff: it is every output change of your
# code change. Only files railyard wrote there are replaced or removed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m tests.golden "$@"
