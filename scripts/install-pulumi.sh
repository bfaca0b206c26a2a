#!/usr/bin/env bash
# Make the real Pulumi engine (CLI + Python language host + dynamic-provider runner) available on a
# machine that reaches only package registries.
#
# Why: no prebuilt Pulumi CLI can be downloaded there, but the Go module proxy serves the engine's
# source (github.com/pulumi/pulumi/pkg/v3 and sdk/v3), so we compile it from a tiny wrapper module
# (scripts/pulumi-engine) whose go.mod/go.sum pin one version, which keeps builds reproducible.
#
# Usage:  PATH="$(scripts/install-pulumi.sh | tail -1):$PATH"
#   stdout: the bin dir, alone on the last line; progress goes to stderr.
#   RAILYARD_CACHE           cache root (default ~/.cache/railyard); binaries land in
#                            $RAILYARD_CACHE/pulumi-<version>/bin
#   RAILYARD_PULUMI_BUILD=1  ignore any pulumi already on PATH and use/build the cached one
#   RAILYARD_BUILD_JOBS      go build -p (default: number of cores, at most 4)
set -euo pipefail

# The one pin. scripts/pulumi-engine/go.mod must require pkg/v3 and sdk/v3 at exactly this version.
PULUMI_VERSION="v3.274.1"
MIN_PATH_VERSION="3.200.0"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODULE_DIR="$SCRIPT_DIR/pulumi-engine"
CACHE_ROOT="${RAILYARD_CACHE:-$HOME/.cache/railyard}"
PREFIX="$CACHE_ROOT/pulumi-$PULUMI_VERSION"
BIN_DIR="$PREFIX/bin"
STAMP="$PREFIX/.railyard-stamp"
BINARIES=(pulumi pulumi-language-python pulumi-language-python-exec pulumi-resource-pulumi-python)

log() { printf '[install-pulumi] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- 1. A usable pulumi already on PATH? -------------------------------------------------------
path_pulumi_dir() {
  local exe dir real ver
  exe="$(command -v pulumi 2>/dev/null)" || return 1
  ver="$(PULUMI_SKIP_UPDATE_CHECK=true timeout 60 "$exe" version 2>/dev/null | tail -1)" || return 1
  ver="${ver#v}"
  ver="${ver%%[-+]*}"
  [[ "$ver" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || return 1
  if [[ "$(printf '%s\n%s\n' "$MIN_PATH_VERSION" "$ver" | sort -V | head -1)" != "$MIN_PATH_VERSION" ]]; then
    log "pulumi $ver on PATH ($exe) is older than $MIN_PATH_VERSION; not using it"
    return 1
  fi
  # The engine looks for language hosts on PATH and beside its own (symlink-resolved) binary.
  dir="$(dirname "$exe")"
  real="$(dirname "$(readlink -f "$exe")")"
  local host=""
  for d in "$dir" "$real"; do
    if [[ -x "$d/pulumi-language-python" ]]; then host="$d/pulumi-language-python"; break; fi
  done
  [[ -n "$host" ]] || host="$(command -v pulumi-language-python 2>/dev/null)" || {
    log "pulumi $ver on PATH ($exe) has no pulumi-language-python; not using it"
    return 1
  }
  [[ -e "$(dirname "$(readlink -f "$host")")/pulumi-language-python-exec" ]] || {
    log "$host has no pulumi-language-python-exec beside it; not using it"
    return 1
  }
  log "using pulumi $ver already on PATH: $exe (language host $host)"
  printf '%s\n' "$dir"
}

if [[ "${RAILYARD_PULUMI_BUILD:-0}" != "1" ]] && dir="$(path_pulumi_dir)"; then
  printf '%s\n' "$dir"
  exit 0
fi

# --- 2. Cached build of the pinned version? ------------------------------------------------------
[[ -f "$MODULE_DIR/go.mod" && -f "$MODULE_DIR/go.sum" ]] || die "missing $MODULE_DIR/go.mod or go.sum"
for mod in pkg sdk; do
  grep -qE "^[[:space:]]*github\.com/pulumi/pulumi/$mod/v3 $PULUMI_VERSION( |$)" "$MODULE_DIR/go.mod" \
    || die "$MODULE_DIR/go.mod does not require github.com/pulumi/pulumi/$mod/v3 $PULUMI_VERSION (PULUMI_VERSION in $0)"
done

# The build recipe. CGO off: static binaries, no C compiler needed.
BUILD_TAGS="osusergo,grpcnotrace"
CLI_LDFLAGS="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION"
HOST_LDFLAGS="-s -w -X main.version=$PULUMI_VERSION"
RECIPE="cgo=0 trimpath tags=$BUILD_TAGS cli=[$CLI_LDFLAGS] host=[$HOST_LDFLAGS]"

# The stamp names the version and hashes everything that shapes the binaries, so editing the
# wrapper module (go.mod, go.sum, the language host's source) or the recipe triggers a rebuild.
source_hash() {
  (
    cd "$MODULE_DIR"
    find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 | LC_ALL=C sort -z \
      | xargs -0 sha256sum
    printf '%s\n' "$RECIPE"
  ) | sha256sum | cut -d' ' -f1
}
WANT_STAMP="version=$PULUMI_VERSION source=$(source_hash)"

cache_ok() {
  [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT_STAMP" ]] || return 1
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
}

if cache_ok; then
  log "cached Pulumi $PULUMI_VERSION is up to date in $BIN_DIR"
  printf '%s\n' "$BIN_DIR"
  exit 0
fi

# --- 3. Build -----------------------------------------------------------------------------------
command -v go >/dev/null || die "go is not installed; the engine's go.mod needs Go >= 1.26.6"
go_have="$(go env GOVERSION)"
go_have="${go_have#go}"
if [[ "$(printf '%s\n%s\n' 1.26.6 "$go_have" | sort -V | head -1)" != "1.26.6" ]]; then
  log "WARNING: Go $go_have is older than the 1.26.6 the engine needs; the go command will try to" \
    "fetch that toolchain (GOTOOLCHAIN=$(go env GOTOOLCHAIN))"
fi
mkdir -p "$CACHE_ROOT"
# Serialize concurrent installs (e.g. parallel test workers) of the same version.
exec 9>"$CACHE_ROOT/.pulumi-$PULUMI_VERSION.lock"
if command -v flock >/dev/null; then
  log "waiting for the build lock" && flock 9
  if cache_ok; then
    log "another process built Pulumi $PULUMI_VERSION meanwhile"
    printf '%s\n' "$BIN_DIR"
    exit 0
  fi
fi

cores="$(nproc 2>/dev/null || echo 2)"
jobs="${RAILYARD_BUILD_JOBS:-$((cores < 4 ? cores : 4))}"
staging="$(mktemp -d "$CACHE_ROOT/.pulumi-$PULUMI_VERSION.build.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
chmod 0755 "$staging"
mkdir -p "$staging/bin"

export GOWORK=off CGO_ENABLED=0
build_flags=(-p "$jobs" -trimpath -buildvcs=false -tags "$BUILD_TAGS")

log "building Pulumi $PULUMI_VERSION with $(go version | cut -d' ' -f3) (-p $jobs); a cold build takes" \
  "about 15 minutes on 2 cores and adds ~1.4 GB to $(go env GOMODCACHE) and ~1.7 GB to $(go env GOCACHE)"
start=$SECONDS
# go's own output (a "go: downloading" line per module on a cold cache, hundreds) goes to a log: the
# terminal gets a line per step, a minute's heartbeat, and the log's tail if it fails
build_log="$CACHE_ROOT/pulumi-$PULUMI_VERSION.build.log"
: >"$build_log"
step() {  # step "what" cmd...: run cmd with its output in the log, saying every minute that it runs
  local what=$1
  shift
  log "$what"
  "$@" >>"$build_log" 2>&1 &
  local pid=$! t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if (((SECONDS - t0) % 60 < 5 && SECONDS - t0 >= 60)); then
      log "  still building ($(((SECONDS - start) / 60)) min so far, $(grep -c '^go: downloading' "$build_log") modules downloaded)"
    fi
  done
  if ! wait "$pid"; then
    tail -n 40 "$build_log" >&2
    die "$what failed (the whole log: $build_log)"
  fi
}
cd "$MODULE_DIR"
step "compiling the CLI (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)" \
  go build "${build_flags[@]}" -ldflags "$CLI_LDFLAGS" -o "$staging/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
step "compiling the Python language host (./cmd/pulumi-language-python)" \
  go build "${build_flags[@]}" -ldflags "$HOST_LDFLAGS" -o "$staging/bin/pulumi-language-python" ./cmd/pulumi-language-python
# The SDK module ships the program runner and the dynamic-provider runner; module cache files
# are read-only, so copy them with fresh modes.
sdk_dir="$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
install -m 0755 "$sdk_dir/python/cmd/pulumi-language-python-exec" "$staging/bin/"
install -m 0755 "$sdk_dir/python/dist/pulumi-resource-pulumi-python" "$staging/bin/"
cd - >/dev/null
log "go downloaded $(grep -c '^go: downloading' "$build_log") modules (the log: $build_log)"
elapsed=$((SECONDS - start))

got="$("$staging/bin/pulumi" version 2>/dev/null | tail -1)"
[[ "$got" == "$PULUMI_VERSION" ]] || die "built pulumi reports version '$got', expected $PULUMI_VERSION"

printf '%s\n' "$WANT_STAMP" >"$staging/.railyard-stamp"
rm -rf "$PREFIX"
mv "$staging" "$PREFIX"
trap - EXIT
log "built Pulumi $PULUMI_VERSION in ${elapsed}s into $BIN_DIR"
printf '%s\n' "$BIN_DIR"
