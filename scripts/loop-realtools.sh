#!/usr/bin/env bash
# Run real-tool test modules many times in a row and count the passes: a flaky test is a bug, and this
# is how one is found and a fix proven (issue 35: each real-tool test 20/20).
#
#   scripts/loop-realtools.sh                                  # every real-tool module, 20 runs each
#   scripts/loop-realtools.sh -n 5 tests/test_frontend_evpn.py # one module, 5 runs
#   scripts/loop-realtools.sh --load 2 tests/test_slurm_ib_daemons.py   # beside 2 busy loops
#   scripts/loop-realtools.sh --list                           # the modules it would run
#
# The real-tool modules are those with a test marked daemons, engine, netbox or browser, and only those
# tests of a module run (its fast tests are the fast tier's; -a runs the whole module). --load N runs N
# shell busy loops beside the tests (a machine busy with other work: that is when timing bugs show),
# stopped at the end by their process ids. Each run's output is kept under the log folder (default
# a new folder in /tmp; --logs DIR); the summary prints passed/runs per module, the failed runs' log
# files and the wall time per run. Exit 0 only when every run of every module passed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=20
load=0
logs=""
list=0
marks="daemons or engine or netbox or browser"
modules=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    --load) load=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --list) list=1; shift ;;
    -a) marks=""; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "loop-realtools.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) modules+=("$1"); shift ;;
  esac
done
case "$runs$load" in *[!0-9]*) echo "loop-realtools.sh: -n and --load take a whole number" >&2; exit 2 ;; esac
py=.venv/bin/python
[ -x "$py" ] || { echo "loop-realtools.sh: no .venv: run scripts/setup.sh first" >&2; exit 2; }
if [ ${#modules[@]} -eq 0 ]; then
  # the modules holding a real-tool test, as pytest's own markers select them
  mapfile -t modules < <("$py" -m pytest -q -p no:cacheprovider --collect-only -m "daemons or engine or netbox or browser" \
    | sed -n 's/^\(tests\/[^:]*\.py\)::.*/\1/p' | sort -u)
fi
if [ $list -eq 1 ]; then printf '%s\n' "${modules[@]}"; exit 0; fi
# the tools the real-tool tests need on PATH, as scripts/test.sh puts them (the installs are cached)
PATH="$(bash scripts/install-pulumi.sh | tail -1):$PATH"
export PATH PULUMI_PYTHON_CMD="$PWD/$py"
logs=${logs:-$(mktemp -d /tmp/railyard-loop.XXXXXX)}
mkdir -p "$logs"
busy=()
stop_busy() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_busy EXIT
for _ in $(seq 1 "$load"); do
  bash -c 'while :; do :; done' &
  busy+=("$!")
done
echo "looping ${#modules[@]} module(s) x $runs run(s), $load busy loop(s) beside them; logs in $logs" >&2
summary=()
all_ok=1
for m in "${modules[@]}"; do
  name=$(basename "$m" .py)
  passed=0
  failed_logs=()
  start=$SECONDS
  for i in $(seq 1 "$runs"); do
    log="$logs/$name.$i.log"
    t0=$SECONDS
    if "$py" -m pytest -q -p no:cacheprovider ${marks:+-m "$marks"} "$m" >"$log" 2>&1; then
      passed=$((passed + 1))
    else
      failed_logs+=("$log")
      all_ok=0
    fi
    printf '%s run %d/%d: %s in %d s (load %s)\n' "$name" "$i" "$runs" "$(tail -n 1 "$log")" $((SECONDS - t0)) \
      "$(cut -d' ' -f1 /proc/loadavg)" >&2
  done
  line="$name: $passed/$runs passed, $(((SECONDS - start) / runs)) s a run"
  [ ${#failed_logs[@]} -gt 0 ] && line+=" (failed: ${failed_logs[*]})"
  summary+=("$line")
done
printf '%s\n' "${summary[@]}" | tee "$logs/summary.txt"
[ $all_ok -eq 1 ]
