#!/usr/bin/env bash
# Make a real NetBox available to the tests (tests/netbox_service.py): a pinned NetBox from PyPI in
# its own Python 3.12 venv, and a PostgreSQL data directory already migrated for it.
#
# Why a template: a fresh `migrate` of NetBox 4.7 takes ~6 minutes on 2 cores, far too long for
# every test session, so it runs once here and each session starts PostgreSQL on a copy of the
# stopped, migrated data directory (a second or two). The template also holds the test superuser,
# so a session only has to provision an API token.
#
# Usage:  prefix="$(scripts/install-netbox.sh | tail -1)"
#   stdout: the install dir, alone on the last line; progress goes to stderr.
#   RAILYARD_CACHE   cache root (default ~/.cache/railyard); everything lands in
#                    $RAILYARD_CACHE/netbox-<version>/{venv,pgdata,template.json}
# Idempotent: when the venv and the template are there it only checks them (well under a second).
set -euo pipefail

# The one pin: NetBox's own metadata pins every dependency exactly, so this fixes the whole venv.
NETBOX_VERSION="4.7.3"
# Bump when the way the template is built changes (users, roles, initdb options).
TEMPLATE_RECIPE="2"
SUPERUSER="railyard"
SUPERUSER_PASSWORD="railyard-test-password"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONFIG="$SCRIPT_DIR/netbox/configuration.py"
CACHE_ROOT="${RAILYARD_CACHE:-$HOME/.cache/railyard}"
PREFIX="$CACHE_ROOT/netbox-$NETBOX_VERSION"
VENV="$PREFIX/venv"
TEMPLATE="$PREFIX/pgdata"
META="$PREFIX/template.json"
PYTHON312="${RAILYARD_PYTHON312:-}"

log() { printf '[install-netbox] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- 1. Debian packages: PostgreSQL, Redis, libpq headers and gcc for psycopg[c] -------------------
need_system=0
pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
[[ -n "$(pg_bindir)" && -x "$(pg_bindir)/initdb" ]] || need_system=1
command -v redis-server >/dev/null || need_system=1
command -v pg_config >/dev/null || need_system=1
command -v gcc >/dev/null || need_system=1
if ((need_system)); then
  [[ $(id -u) -eq 0 ]] || die "PostgreSQL, Redis, libpq-dev or gcc is missing; run scripts/install-system-deps.sh as root"
  # The one place that installs Debian packages and keeps their services stopped.
  bash "$SCRIPT_DIR/install-system-deps.sh"
fi
PG_BIN="$(pg_bindir)"
PG_MAJOR="$(basename "$(dirname "$PG_BIN")")"
((PG_MAJOR >= 14)) || die "NetBox 4.7 needs PostgreSQL 14 or newer; found $PG_MAJOR in $PG_BIN"

# PostgreSQL refuses to run as root, so under root (CI) the server runs as the packaged `postgres`
# user; otherwise as whoever runs the tests.
# The server itself is started with `exec` so that $! is the postmaster, which then gets our
# signals (a backgrounded function would leave a bash in between that holds SIGINT back).
if [[ $(id -u) -eq 0 ]]; then
  id postgres >/dev/null 2>&1 || die "no postgres user; reinstall the postgresql package"
  pg_user=(setpriv --reuid=postgres --regid=postgres --init-groups --)
else
  pg_user=()
fi
as_pg() { (cd / && exec "${pg_user[@]}" "$@"); }

WANT_META="{\"netbox_version\": \"$NETBOX_VERSION\", \"postgresql_major\": $PG_MAJOR, \"recipe\": \"$TEMPLATE_RECIPE\", \"pg_bin\": \"$PG_BIN\", \"username\": \"$SUPERUSER\", \"password\": \"$SUPERUSER_PASSWORD\"}"

venv_ok() { [[ -x "$VENV/bin/netbox" && "$("$VENV/bin/netbox" version 2>/dev/null)" == "$NETBOX_VERSION" ]]; }
template_ok() { [[ -f "$META" && "$(cat "$META")" == "$WANT_META" && -f "$TEMPLATE/PG_VERSION" ]]; }

if venv_ok && template_ok; then
  log "NetBox $NETBOX_VERSION and its migrated template are up to date in $PREFIX"
  printf '%s\n' "$PREFIX"
  exit 0
fi

mkdir -p "$PREFIX"
# Serialize concurrent installs of the same version (parallel CI jobs sharing a cache).
exec 9>"$CACHE_ROOT/.netbox-$NETBOX_VERSION.lock"
flock 9

# --- 2. The venv ------------------------------------------------------------------------------------
if ! venv_ok; then
  if [[ -z "$PYTHON312" ]]; then
    # pyenv's python3.12 shim is broken on these machines ("command not found"); the interpreter
    # itself is fine, so go to it directly.
    if command -v pyenv >/dev/null; then
      PYTHON312="$(ls -d "$(pyenv root)"/versions/3.12.* 2>/dev/null | sort -V | tail -1)/bin/python"
    fi
    [[ -x "$PYTHON312" ]] || PYTHON312="$(command -v python3.12 || true)"
  fi
  [[ -x "$PYTHON312" ]] || die "NetBox $NETBOX_VERSION needs Python 3.12; set RAILYARD_PYTHON312 to one"
  log "installing netbox==$NETBOX_VERSION with $("$PYTHON312" --version) into $VENV (~2 min; psycopg[c] compiles)"
  start=$SECONDS
  rm -rf "$VENV"
  "$PYTHON312" -m venv "$VENV"
  pip_log="$(mktemp)"
  if ! "$VENV/bin/pip" install -q --disable-pip-version-check "netbox==$NETBOX_VERSION" >"$pip_log" 2>&1; then
    cat "$pip_log" >&2
    rm -rf "$VENV" "$pip_log"
    die "pip install netbox==$NETBOX_VERSION failed (log above)"
  fi
  rm -f "$pip_log"
  venv_ok || die "$VENV/bin/netbox does not report version $NETBOX_VERSION"
  log "venv ready in $((SECONDS - start))s"
fi

# --- 3. The migrated template ----------------------------------------------------------------------
if template_ok; then
  log "NetBox $NETBOX_VERSION and its migrated template are up to date in $PREFIX"
  printf '%s\n' "$PREFIX"
  exit 0
fi

free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Built under /tmp, not in the cache: under root the cache is in /root, which `postgres` cannot enter.
staging="$(mktemp -d /tmp/railyard-netbox-build.XXXXXX)"
chmod 0755 "$staging"
pg_pid="" redis_pid=""
cleanup() {
  [[ -n "$pg_pid" ]] && kill -INT "$pg_pid" 2>/dev/null && wait "$pg_pid" 2>/dev/null
  [[ -n "$redis_pid" ]] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$staging"
}
trap cleanup EXIT

log "building the migrated template (PostgreSQL $PG_MAJOR; NetBox's migrate takes ~6 min on 2 cores)"
start=$SECONDS
pg_port="$(free_port)"
redis_port="$(free_port)"
mkdir "$staging/pgdata" "$staging/run"
chmod 0700 "$staging/pgdata"
[[ $(id -u) -eq 0 ]] && chown postgres:postgres "$staging/pgdata" "$staging/run"
# trust on loopback: the server lives for one test session and listens on 127.0.0.1 only.
as_pg "$PG_BIN/initdb" -D "$staging/pgdata" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
  >"$staging/initdb.log" 2>&1 || { cat "$staging/initdb.log" >&2; die "initdb failed"; }
# Its socket goes in the staging dir: /run/postgresql may be missing or a packaged server's.
# fsync off: a crash mid-build just means building again.
(cd / && exec "${pg_user[@]}" "$PG_BIN/postgres" -D "$staging/pgdata" -p "$pg_port" \
  -c listen_addresses=127.0.0.1 -c unix_socket_directories="$staging/run" -c fsync=off) \
  >"$staging/postgres.log" 2>&1 &
pg_pid=$!
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$staging" \
  >"$staging/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do
  "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$pg_port" && break
  kill -0 "$pg_pid" 2>/dev/null || { cat "$staging/postgres.log" >&2; die "postgres exited"; }
  sleep 0.1
done
"$PG_BIN/psql" -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres \
  -c "CREATE ROLE netbox LOGIN" -c "CREATE DATABASE netbox OWNER netbox" >&2

mkdir -p "$staging/root/conf"
cp "$CONFIG" "$staging/root/conf/configuration.py"
: >"$staging/root/conf/__init__.py"
export NETBOX_ROOT="$staging/root" RAILYARD_NETBOX_PG_PORT="$pg_port" RAILYARD_NETBOX_REDIS_PORT="$redis_port"
migrate_start=$SECONDS
"$VENV/bin/netbox" migrate --no-input >"$staging/migrate.log" 2>&1 \
  || { tail -50 "$staging/migrate.log" >&2; die "netbox migrate failed"; }
log "migrate took $((SECONDS - migrate_start))s"
DJANGO_SUPERUSER_PASSWORD="$SUPERUSER_PASSWORD" "$VENV/bin/netbox" createsuperuser --no-input \
  --username "$SUPERUSER" --email "$SUPERUSER@example.invalid" >&2
# Planner statistics for the fresh tables, so the first queries of every session plan well.
"$PG_BIN/psql" -q -X -h 127.0.0.1 -p "$pg_port" -U postgres -d netbox -c "VACUUM ANALYZE" >&2

# A clean shutdown (SIGINT = fast) leaves a data directory that starts without crash recovery.
kill -INT "$pg_pid"
wait "$pg_pid" || true
pg_pid=""
grep -q "database system is shut down" "$staging/postgres.log" || { cat "$staging/postgres.log" >&2; die "postgres did not shut down cleanly"; }

rm -rf "$TEMPLATE.new" "$TEMPLATE"
cp -a "$staging/pgdata" "$TEMPLATE.new"
mv "$TEMPLATE.new" "$TEMPLATE"
printf '%s' "$WANT_META" >"$META"
log "template built in $((SECONDS - start))s: $TEMPLATE ($(du -sh "$TEMPLATE" | cut -f1))"
printf '%s\n' "$PREFIX"
