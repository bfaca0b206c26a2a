#!/usr/bin/env bash
# Set up and run the main job on an example design: compile it into out/<design>/.
# Usage: scripts/demo.sh [designs/<design>.yaml]
set -euo pipefail
cd "$(dirname "$0")/.."
design=${1:-designs/h100-1024-reference.yaml}
bash scripts/setup.sh
name=$(basename "$design" .yaml)
.venv/bin/railyard compile "$design" --out "out/$name"
