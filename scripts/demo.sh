#!/usr/bin/env bash
# Set up and run the main job on an example design: compile it into out/<design>/, then deploy it as
# a Pulumi stack (demo-<design>, local file backend in .pulumi/) whose artifacts land in deploy/<design>/.
# Idempotent: a re-run recompiles and `pulumi up` finds nothing to change.
# Usage: scripts/demo.sh [designs/<design>.yaml]
set -euo pipefail
cd "$(dirname "$0")/.."
design=${1:-designs/h100-1024-reference.yaml}
bash scripts/setup.sh
name=$(basename "$design" .yaml)
.venv/bin/railyard compile "$design" --out "out/$name"

# The engine: a pulumi already on PATH, else a cached (or first-time, ~20 min) offline build.
bin=$(bash scripts/install-pulumi.sh | tail -1)
export PATH="$bin:$PATH"
export PULUMI_BACKEND_URL=${PULUMI_BACKEND_URL:-file://$PWD/.pulumi}
# A demo passphrase unless you set one; real sites keep theirs in a secret store.
export PULUMI_CONFIG_PASSPHRASE=${PULUMI_CONFIG_PASSPHRASE-railyard-demo}
export PULUMI_SKIP_UPDATE_CHECK=true
mkdir -p .pulumi
stack="demo-$name"
pulumi stack select --create "$stack" --non-interactive >/dev/null
pulumi config set --stack "$stack" railyard:design "$design"
pulumi config set --stack "$stack" railyard:outDir "deploy/$name"
# Demo credentials for artifacts that embed them, generated once (kept encrypted in the stack config).
for key in switchPassword snmpAuthPassword snmpPrivPassword bgpPassword bmcPassword snmpCommunity; do
  if ! pulumi config get --stack "$stack" "railyard:$key" >/dev/null 2>&1; then
    pulumi config set --stack "$stack" --secret "railyard:$key" "demo-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
  fi
done
pulumi up --stack "$stack" --yes --non-interactive
