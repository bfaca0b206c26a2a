#!/usr/bin/env bash
# The design review a pull request gets as a comment: for every design that differs between two git
# refs, `railyard diff` (counts, cost, cables, artifacts) and the bounded `pulumi preview --diff` of
# deploying the head over the base, in one markdown file.
#
# Usage: scripts/review.sh [--out FILE] [--full-dir DIR] [--max-lines N] BASE_REF HEAD_REF [DESIGN ...]
#   DESIGN       designs/<name>.yaml paths to review (default: every designs/*.yaml that differs
#                between the refs, itself or through a file it `extends:`, or all of them when
#                designs/catalog.yaml differs)
#   --out FILE   write the comment there (default: stdout); progress goes to stderr
#   --max-lines  keep this many lines of each preview (default 2500), then say how many were cut
#   --full-dir   also write each design's whole review (every cable and file) as DIR/<name>.review.md;
#                the comment's shortened lists point at it (upload DIR as a build artifact)
#
# Each ref is checked out into a temp git worktree (removed afterwards); its design compiles with
# its own code. The preview runs on a throwaway local Pulumi backend in the temp dir (throwaway
# passphrase and secret values): the base design is `pulumi up`'d into a temp deploy folder with the
# base's program, then `pulumi preview --diff` runs the head's program against that stack. Since the
# state keeps files by hash, the preview shows one short block per changed file.
#   RAILYARD_PYTHON  the Python with railyard's dependencies (default: .venv/bin/python of this repo)
#   pulumi           taken from PATH, else from scripts/install-pulumi.sh
# Exit: 0 written (even when a design fails to compile: the comment says so), 2 bad arguments or refs,
#       1 the tooling failed (git, pulumi setup), with its output.
set -euo pipefail

usage() { sed -n '5,13p' "$0" | sed 's/^# \{0,1\}//' >&2; }
die() { printf 'review.sh: %s\n' "$*" >&2; exit 2; }
log() { printf '[review] %s\n' "$*" >&2; }
quiet() {  # run a setup step silently; on failure show its output and stop (exit 1: not the input's fault)
  local o
  o="$("$@" 2>&1)" || { printf 'review.sh: %s failed:\n%s\n' "$*" "$o" >&2; exit 1; }
}

OUT="" MAX_LINES=2500 FULL_DIR=""
ARGS=()
while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || die "--out needs a file"; OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    --full-dir) (($# >= 2)) || die "--full-dir needs a folder"; FULL_DIR="$2"; shift 2 ;;
    --full-dir=*) FULL_DIR="${1#--full-dir=}"; shift ;;
    --max-lines) (($# >= 2)) || die "--max-lines needs a number"; MAX_LINES="$2"; shift 2 ;;
    --max-lines=*) MAX_LINES="${1#--max-lines=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; ARGS+=("$@"); break ;;
    -*) usage; die "unknown option $1" ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
((${#ARGS[@]} >= 2)) || { usage; die "need BASE_REF and HEAD_REF"; }
[[ "$MAX_LINES" =~ ^[1-9][0-9]*$ ]] || die "--max-lines must be a positive whole number, got '$MAX_LINES'"
BASE_REF="${ARGS[0]}" HEAD_REF="${ARGS[1]}"
if [[ -n "$FULL_DIR" ]]; then  # absolute: railyard diff runs inside the head's worktree
  mkdir -p -- "$FULL_DIR" 2>/dev/null && FULL_DIR="$(cd -- "$FULL_DIR" && pwd)" \
    || die "--full-dir: cannot create or enter folder '$FULL_DIR'"
fi
DESIGNS=("${ARGS[@]:2}")

REPO="$(git rev-parse --show-toplevel 2>/dev/null)" || die "run inside a git work tree"
cd "$REPO"
resolve() {
  git rev-parse --verify --quiet "$1^{commit}" \
    || die "'$1' is not a commit in $REPO (fetch it first, e.g. git fetch origin ${1#origin/})"
}
BASE="$(resolve "$BASE_REF")"
HEAD="$(resolve "$HEAD_REF")"
if [[ -n "$OUT" ]]; then
  [[ -d "$OUT" ]] && die "--out $OUT is a folder"
  [[ -d "$(dirname "$OUT")" ]] || die "--out $OUT: folder $(dirname "$OUT") does not exist"
fi
PY="${RAILYARD_PYTHON:-$REPO/.venv/bin/python}"
[[ -x "$PY" ]] || die "no Python at $PY: run scripts/setup.sh, or set RAILYARD_PYTHON"
if ! command -v pulumi >/dev/null 2>&1; then
  PATH="$(bash "$REPO/scripts/install-pulumi.sh" | tail -1):$PATH"
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/railyard-review.XXXXXX")"
cleanup() {
  local rc=$?
  for wt in "$TMP/base" "$TMP/head"; do
    [[ -d "$wt" ]] && git -C "$REPO" worktree remove --force "$wt" >/dev/null 2>&1
  done
  git -C "$REPO" worktree prune >/dev/null 2>&1 || true
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "checking out ${BASE_REF} (${BASE:0:12}) and ${HEAD_REF} (${HEAD:0:12})"
git worktree add --quiet --detach "$TMP/base" "$BASE"
git worktree add --quiet --detach "$TMP/head" "$HEAD"

# The designs to review: named ones, else those whose file, `extends:` chain or the catalog differ.
if ((${#DESIGNS[@]} == 0)); then
  git diff --name-only "$BASE" "$HEAD" -- designs/ >"$TMP/changed.txt"
  # (the program comes on stdin, so the changed files go in a file)
  mapfile -t DESIGNS < <("$PY" - "$TMP/changed.txt" "$TMP/base" "$TMP/head" <<'PY'
import os
import sys
from pathlib import Path

import yaml

changed = {line.strip() for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()}
trees = [Path(t) for t in sys.argv[2:]]


def chain(tree: Path, rel: str) -> set[str]:
    """rel and every file its extends: chain names, as paths relative to the tree."""
    seen: set[str] = set()
    while rel not in seen and len(seen) < 16:
        seen.add(rel)
        try:
            data = yaml.safe_load((tree / rel).read_text())
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            break
        ext = data.get("extends") if isinstance(data, dict) else None
        if not isinstance(ext, str):
            break
        rel = os.path.normpath(Path(rel).parent / ext)
    return seen


names = sorted({p.relative_to(t).as_posix() for t in trees for p in (t / "designs").glob("*.yaml")}
               - {"designs/catalog.yaml"})
for rel in names:
    if "designs/catalog.yaml" in changed or any(chain(t, rel) & changed for t in trees):
        print(rel)
PY
  )
fi

# One throwaway Pulumi backend for every design; the project points at one worktree at a time.
export PULUMI_HOME="$TMP/pulumi-home" PULUMI_BACKEND_URL="file://$TMP/state"
export PULUMI_CONFIG_PASSPHRASE="railyard-review-throwaway" PULUMI_SKIP_UPDATE_CHECK=true
# Checkpoints skipped: the state is thrown away (a crash loses nothing), and a base ref from before
# FileGroup deploys one resource per file, where a checkpoint per step costs minutes at 16k GPUs.
export PULUMI_SKIP_CHECKPOINTS=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true NO_COLOR=1
export PULUMI_PYTHON_CMD="$PY"
mkdir -p "$TMP/state" "$TMP/project" "$TMP/deploy"
quiet pulumi login --non-interactive "$PULUMI_BACKEND_URL"

use_program() {  # the project of worktree $1, run by $PY (the worktree has no .venv of its own)
  export PYTHONPATH="$1"
  "$PY" - "$1" "$TMP/project/Pulumi.yaml" <<'PY'
import sys
from pathlib import Path

import yaml

tree, dest = Path(sys.argv[1]), Path(sys.argv[2])
project = yaml.safe_load((tree / "Pulumi.yaml").read_text())
project["runtime"] = {"name": "python", "options": {"toolchain": "pip"}}
project.pop("stackConfigDir", None)
project["main"] = str(tree)
dest.write_text(yaml.safe_dump(project, sort_keys=False))
PY
}
pulumi_() { pulumi --cwd "$TMP/project" --non-interactive "$@"; }

# Designs that embed a credential need the secret set; these values exist only in the temp state.
mapfile -t SECRET_KEYS < <(PYTHONPATH="$TMP/head" "$PY" -c \
  'from generators.model.secrets import SECRETS; print(*SECRETS.values(), sep="\n")' 2>/dev/null || true)

fence() {  # a fenced block of file $2 ($1: the info string), at most MAX_LINES lines
  local total
  total=$(wc -l <"$2")
  printf '```%s\n' "$1"
  head -n "$MAX_LINES" "$2"
  printf '```\n'
  if ((total > MAX_LINES)); then
    printf '\n**truncated, %d more lines** (of %d; run `scripts/review.sh` locally for all of it)\n' \
      "$((total - MAX_LINES))" "$total"
  fi
}

review_one() {  # $1: designs/<name>.yaml
  local rel="$1" name stack base_yaml head_yaml md="$TMP/diff.md" log_="$TMP/run.log" out="$TMP/preview.txt"
  name="$(basename "$rel" .yaml)"
  stack="review-$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' '-')"
  base_yaml="$TMP/base/$rel" head_yaml="$TMP/head/$rel"
  printf '\n## `%s`\n\n' "$rel"
  if [[ ! -f "$head_yaml" ]]; then
    printf 'Removed in %s: nothing to deploy.\n' "$HEAD_REF"
    return
  fi
  if [[ -f "$base_yaml" ]]; then
    log "$rel: railyard diff"
    rm -f "$md"
    local full=()
    [[ -z "$FULL_DIR" ]] || full=(--full "$FULL_DIR/$name.review.md" --force "$FULL_DIR/$name.review.md")
    if (cd "$TMP/head" && PYTHONPATH="$TMP/head" "$PY" -m generators.cli diff "$base_yaml" "$head_yaml" \
          --out "$md" "${full[@]}") >"$log_" 2>&1; then
      sed -e "s#$TMP/base/##g" -e "s#$TMP/head/##g" ${FULL_DIR:+-e "s#$FULL_DIR/##g"} "$md"
    else
      printf '**`railyard diff` failed:**\n\n'
      fence text "$log_"
    fi
  else
    printf 'New in %s (no base to compare).\n' "$HEAD_REF"
  fi

  log "$rel: pulumi up (base) + preview --diff (head)"
  use_program "$TMP/head"
  quiet pulumi_ stack init "$stack"
  local key
  for key in "${SECRET_KEYS[@]}"; do
    [[ -z "$key" ]] || quiet pulumi_ config set --stack "$stack" --secret "railyard:$key" "review-$key"
  done
  quiet pulumi_ config set --stack "$stack" railyard:outDir "$TMP/deploy/$name"
  local ok=1
  if [[ -f "$base_yaml" ]]; then
    use_program "$TMP/base"
    quiet pulumi_ config set --stack "$stack" railyard:design "$base_yaml"
    if ! pulumi_ up --stack "$stack" --yes --skip-preview >"$log_" 2>&1; then
      ok=0
      printf '\n**`pulumi up` of the base failed**, so there is no preview:\n\n'
      sed -e "s#$TMP/##g" "$log_" | tail -n 60 >"$out"
      fence text "$out"
    fi
  fi
  if ((ok)); then
    use_program "$TMP/head"
    quiet pulumi_ config set --stack "$stack" railyard:design "$head_yaml"
    local rc=0
    pulumi_ preview --stack "$stack" --diff >"$log_" 2>&1 || rc=$?
    # the temp paths mean nothing in a comment: show them relative to the deploy folder / worktree
    sed -e "s#$TMP/deploy/$name#<outDir>#g" -e "s#$TMP/base/##g" -e "s#$TMP/head/##g" "$log_" >"$out"
    local lines
    lines=$(wc -l <"$out")
    printf '\n<details><summary>pulumi preview --diff: %s, %d lines%s</summary>\n\n' "$name" "$lines" \
      "$( ((rc == 0)) || printf ', **failed (exit %d)**' "$rc")"
    fence diff "$out"
    printf '\n</details>\n'
  fi
  pulumi_ stack rm --stack "$stack" --yes --force >/dev/null 2>&1 || true
}

{
  printf '# railyard review: `%s` → `%s`\n\n' "$BASE_REF" "$HEAD_REF"
  printf 'base %s, head %s.\n' "${BASE:0:12}" "${HEAD:0:12}"
  if ((${#DESIGNS[@]} == 0)); then
    printf '\nNo design differs between the refs (designs/*.yaml, the files they extend, designs/catalog.yaml).\n'
  fi
  for d in "${DESIGNS[@]}"; do
    review_one "$d"
  done
} >"$TMP/review.md"

if [[ -n "$OUT" ]]; then
  cp "$TMP/review.md" "$OUT"
  log "wrote $OUT (${#DESIGNS[@]} design(s))"
else
  cat "$TMP/review.md"
fi
