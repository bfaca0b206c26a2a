#!/usr/bin/env bash
# The design review a pull request gets as a comment: for every design that differs between two git
# refs, `railyard diff` (counts, cost, cables, artifacts) and the bounded `pulumi preview --diff` of
# deploying the head over the base, in one markdown file.
#
# Usage: scripts/review.sh [--out FILE] [--full-dir DIR] [--max-lines N] [--max-chars N] BASE_REF HEAD_REF [DESIGN ...]
#   DESIGN       designs/<name>.yaml paths to review (default: every designs/*.yaml that differs
#                between the refs, itself or through a file it `extends:`, or all of them when
#                designs/catalog.yaml differs)
#   --out FILE   write the comment there (default: stdout); progress goes to stderr
#   --max-lines  keep this many lines of each preview (default 2500), then say how many were cut
#   --max-chars  the comment's size limit (default 65000: GitHub refuses a comment over 65,536)
#   --full-dir   also write each design's whole review (every cable and file) as DIR/<name>.review.md,
#                and the whole comment, uncut, as DIR/review.md; the comment's shortened lists point at
#                them (upload DIR as a build artifact)
#
# The comment fits a pull-request comment (at most 65,000 characters, GitHub's limit is 65,536): a
# first table names each changed design (changed fields, devices moved, cables, cost delta), designs
# the change leaves as they were are one line, and each design's section is cut to its share of the
# budget (pointing at the full review) when all of them would not fit.
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

usage() { sed -n '5,20p' "$0" | sed 's/^# \{0,1\}//' >&2; }
die() { printf 'review.sh: %s\n' "$*" >&2; exit 2; }
log() { printf '[review] %s\n' "$*" >&2; }
quiet() {  # run a setup step silently; on failure show its output and stop (exit 1: not the input's fault)
  local o
  o="$("$@" 2>&1)" || { printf 'review.sh: %s failed:\n%s\n' "$*" "$o" >&2; exit 1; }
}

OUT="" MAX_LINES=2500 MAX_CHARS=65000 FULL_DIR=""
ARGS=()
while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || die "--out needs a file"; OUT="$2"; shift 2 ;;
    --out=*) OUT="${1#--out=}"; shift ;;
    --full-dir) (($# >= 2)) || die "--full-dir needs a folder"; FULL_DIR="$2"; shift 2 ;;
    --full-dir=*) FULL_DIR="${1#--full-dir=}"; shift ;;
    --max-lines) (($# >= 2)) || die "--max-lines needs a number"; MAX_LINES="$2"; shift 2 ;;
    --max-lines=*) MAX_LINES="${1#--max-lines=}"; shift ;;
    --max-chars) (($# >= 2)) || die "--max-chars needs a number"; MAX_CHARS="$2"; shift 2 ;;
    --max-chars=*) MAX_CHARS="${1#--max-chars=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; ARGS+=("$@"); break ;;
    -*) usage; die "unknown option $1" ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
((${#ARGS[@]} >= 2)) || { usage; die "need BASE_REF and HEAD_REF"; }
[[ "$MAX_LINES" =~ ^[1-9][0-9]*$ ]] || die "--max-lines must be a positive whole number, got '$MAX_LINES'"
[[ "$MAX_CHARS" =~ ^[1-9][0-9]{3,}$ ]] || die "--max-chars must be a whole number of at least 1000, got '$MAX_CHARS'"
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

review_one() {  # $1: designs/<name>.yaml; $2: the JSON review it leaves for the summary (if any)
  local rel="$1" json="$2" name stack base_yaml head_yaml md="$TMP/diff.md" log_="$TMP/run.log" out="$TMP/preview.txt"
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
          --out "$md" "${full[@]}" && PYTHONPATH="$TMP/head" "$PY" -m generators.cli diff "$base_yaml" \
          "$head_yaml" --format json --out "$json") >"$log_" 2>&1; then
      if "$PY" - "$json" <<'PY'
import json
import sys

r = json.load(open(sys.argv[1]))
# nothing differs: no resolved design field, no rendered file (so nothing to deploy either)
sys.exit(0 if not r.get("design") and not r.get("files") else 1)
PY
      then
        printf 'No change: no design field differs after `extends:`, and every output is identical.\n'
        return
      fi
      sed -e "s#$TMP/base/##g" -e "s#$TMP/head/##g" ${FULL_DIR:+-e "s#$FULL_DIR/##g"} "$md"
    else
      rm -f "$json"
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

mkdir -p "$TMP/sections"
SECTIONS=()
i=0
for d in "${DESIGNS[@]}"; do
  i=$((i + 1))
  review_one "$d" "$TMP/sections/$i.json" >"$TMP/sections/$i.md"
  SECTIONS+=("$d" "$TMP/sections/$i.md" "$TMP/sections/$i.json")
done

# The comment: a first table of the designs that change, one line for those that do not, then each
# design's section, cut to its share of the budget when they would not all fit.
"$PY" - "$TMP/review.md" "$MAX_CHARS" "$BASE_REF" "$HEAD_REF" "${BASE:0:12}" "${HEAD:0:12}" "${FULL_DIR}" \
  "${SECTIONS[@]}" <<'PY'
import json
import sys
from pathlib import Path

out, budget, base_ref, head_ref, base, head, full_dir, *rest = sys.argv[1:]
BUDGET = int(budget)  # characters (default 65,000; GitHub refuses a comment over 65,536)
designs = [(rest[k], Path(rest[k + 1]).read_text(), Path(rest[k + 2])) for k in range(0, len(rest), 3)]


def money(v: float) -> str:
    return ("+" if v >= 0 else "-") + f"${abs(v):,.0f}"


head_lines = [f"# railyard review: `{base_ref}` → `{head_ref}`", "", f"base {base}, head {head}.", ""]
rows, same, other = [], [], []
for rel, md, js in designs:
    if md.lstrip().startswith(f"## `{rel}`") and "No change: no design field differs" in md:
        same.append(rel)
        continue
    if not js.is_file():
        other.append(rel)  # new, removed, or its diff failed: its section says which
        continue
    r = json.loads(js.read_text())
    fig = {f["name"]: f for f in r["figures"]}
    cost = fig.get("total cost", {})
    delta = (cost.get("head") or 0) - (cost.get("base") or 0)
    kinds = {k: sum(1 for c in r.get("cables") or [] if c["change"] == k) for k in ("added", "removed", "moved")}
    fields = ", ".join(f"`{c['path']}`" for c in r["design"][:3]) + (f" (+{len(r['design']) - 3})" if len(r["design"]) > 3 else "")
    rows.append(
        f"| `{rel}` | {fields or '—'} | {len(r.get('moves', [])):,} | "
        f"+{kinds['added']:,} / -{kinds['removed']:,} / {kinds['moved']:,} moved | {money(delta)} |"
    )
summary = []
if not designs:
    summary += ["No design differs between the refs (designs/*.yaml, the files they extend, designs/catalog.yaml).", ""]
if rows or other:
    summary += [
        "| design | changed fields | devices moved | cables added / removed / moved | cost delta |",
        "|---|---|---:|---:|---:|",
        *rows,
        *(f"| `{rel}` | see below | | | |" for rel in other),
        "",
    ]
if same:
    summary += [f"No change in {len(same)} design(s) (no design field differs after `extends:`, outputs identical): "
                + ", ".join(f"`{rel}`" for rel in same) + ".", ""]
sections = [md for rel, md, _ in designs if rel not in same]
whole = "\n".join(head_lines + summary) + "".join(sections)
if full_dir:
    Path(full_dir, "review.md").write_text(whole)
if len(whole) <= BUDGET or not sections:
    Path(out).write_text(whole)
    sys.exit(0)
# each design's section gets an equal share of what the head and summary leave, cut at a line
where = "`review.md` of the full-review folder" if full_dir else "`scripts/review.sh` run locally (or with --full-dir)"
note = f"\n\n**cut to fit a pull-request comment**: the whole section is in {where}.\n"
share = (BUDGET - len("\n".join(head_lines + summary)) - 200) // len(sections) - len(note)
if share < 200:  # not even a few lines a design: the table alone, and where the rest is
    text = "\n".join(head_lines + summary)
    text = text[: BUDGET - len(note)] + note
    Path(out).write_text(text)
    sys.exit(0)
cut = []
for md in sections:
    if len(md) <= share:
        cut.append(md)
        continue
    keep = md[: max(0, share)]
    keep = keep[: keep.rfind("\n") + 1] if "\n" in keep else keep
    # an open <details> or code fence would swallow what follows: close them
    if keep.count("```") % 2:
        keep += "```\n"
    if keep.count("<details>") > keep.count("</details>"):
        keep += "\n</details>\n"
    cut.append(keep + note)
text = "\n".join(head_lines + summary) + "".join(cut)
assert len(text) <= BUDGET, len(text)
Path(out).write_text(text)
PY

if [[ -n "$OUT" ]]; then
  cp "$TMP/review.md" "$OUT"
  log "wrote $OUT (${#DESIGNS[@]} design(s))"
else
  cat "$TMP/review.md"
fi
