#!/usr/bin/env bash
# The docs run as written (issue 10, item 10): every ```sh block of README.md and docs/cli.md is
# run, in order, from the root of a scratch copy of the repository (build/ and node_modules/
# linked to the real ones), after the state README's first command leaves: scripts/demo-lake.sh,
# the part of scripts/demo.sh after its install and build (./lake holding the flights table).
# Each block runs in its own `bash -e -o pipefail`; a failing one fails the test, named by file,
# block number and line, with its output. A block whose first line is
#   # not run by tests/integration/test_docs.sh: REASON
# is not run (README's setup block: scripts/demo.sh installs and builds, scripts/test.sh runs
# every test); the marker is visible to readers, and at most 1 block may carry it. A block that
# starts a store (RGW_DIR, tests/stores/start-rgw.sh) has it stopped if the block fails.
# The docs also never print a count of 1 with a plural noun ("1 files"): the tool never does.
set -uo pipefail
SRC=${S3L_SOURCE_DIR:?}
BUILD=${S3L_BUILD_DIR:?}
MARK='# not run by tests/integration/test_docs.sh: '
MAX_SKIPPED=1
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
work=$(mktemp -d /tmp/s3l-docs-XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- the scratch copy: the source tree without build outputs, lakes or git; build and npm linked
repo=$work/repo
mkdir -p "$repo"
tar -C "$SRC" --exclude='./build*' --exclude=./node_modules --exclude=./lake --exclude=./.git \
    -cf - . | tar -C "$repo" -xf -
ln -s "$BUILD" "$repo/build"
ln -s "$SRC/node_modules" "$repo/node_modules"
[ -x "$repo/build/s3land" ] || { bad "no build/s3land in $BUILD"; exit 1; }

# ---- the state after README's first command
if (cd "$repo" && timeout 600 scripts/demo-lake.sh) >"$work/demo.log" 2>&1; then
    ok "scripts/demo-lake.sh (README's first command, after its install and build)"
else
    bad "scripts/demo-lake.sh failed:"
    sed 's/^/    /' "$work/demo.log" | tail -20
    exit 1
fi

# ---- the blocks, in order: README.md, then docs/cli.md
skipped=0
n_run=0
for doc in README.md docs/cli.md; do
    rm -f "$work"/block-*.sh
    # Splits DOC's ```sh blocks into block-N.sh, each with "LINE" (its first line) in block-N.line.
    awk -v dir="$work" '
        /^```sh[ \t]*$/ { n++; inblock = 1; f = dir "/block-" n ".sh"; print NR + 1 > (dir "/block-" n ".line"); printf "" > f; next }
        inblock && /^```[ \t]*$/ { inblock = 0; close(f); next }
        inblock { print > f }
    ' "$repo/$doc"
    n=$(ls "$work"/block-*.sh 2>/dev/null | wc -l)
    [ "$n" -gt 0 ] || bad "$doc has no sh block"
    for ((i = 1; i <= n; i++)); do
        block=$work/block-$i.sh
        line=$(cat "$work/block-$i.line")
        name="$doc block $i (line $line)"
        first=$(head -n 1 "$block")
        if [[ $first == "$MARK"* ]]; then
            skipped=$((skipped + 1))
            echo "# skipped: $name: ${first#"$MARK"}"
            continue
        fi
        n_run=$((n_run + 1))
        (cd "$repo" && timeout 600 bash -c '
            set -eo pipefail
            trap "[ -n \"\${RGW_DIR:-}\" ] && [ -e \"\$RGW_DIR/pids\" ] && tests/stores/stop-rgw.sh \"\$RGW_DIR\" >/dev/null 2>&1" EXIT
            . "$1"' _ "$block") >"$work/out" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            ok "$name runs"
        else
            bad "$name failed (exit $rc):"
            sed 's/^/    | /' "$block"
            sed 's/^/    > /' "$work/out" | tail -15
        fi
    done
done
[ "$skipped" -le "$MAX_SKIPPED" ] && ok "$skipped block(s) marked as not run (at most $MAX_SKIPPED)" \
    || bad "$skipped blocks are marked as not run; at most $MAX_SKIPPED may be"
[ "$n_run" -ge 5 ] && ok "$n_run blocks ran" || bad "only $n_run blocks ran"
head -n 3 "$repo/README.md" >/dev/null
grep -q "^${MARK}" "$repo/README.md" && grep -A2 "^${MARK}" "$repo/README.md" | grep -q "scripts/demo.sh" \
    && ok "README's setup block (scripts/demo.sh, scripts/test.sh) is the one marked" \
    || bad "README's setup block is not marked as not run"

# ---- what the docs say readers see: a file copied into T/ before its epoch's marker (a commit
# under way, or a crash in it) is in the glob, and not in the files the markers list, which the
# docs' DuckDB query reads (the same SQL as README and docs/cli.md show, run here on its own).
table_dir=$repo/lake/flights
committed=$(ls "$table_dir"/*.parquet | head -n 1)
cp "$committed" "$table_dir/00000000-0000-5000-8000-000000000000-00000000000000000001-g00000000000000000001-00000.parquet"
marker_sql="SET VARIABLE files = (SELECT list('lake/' || f.key) FROM (SELECT unnest(files) AS f FROM read_json('lake/_openetl/markers/flights/*.json')))"
grep -qF "$marker_sql" "$repo/README.md" && grep -qF "$marker_sql" "$repo/docs/cli.md" \
    && ok "README and docs/cli.md show the same marker query" || bad "the docs' marker query differs from the one tested here"
rows() { (cd "$repo" && scripts/duckdb.mjs "$@") | sed -n 3p | tr -d ' '; }
glob=$(rows "SELECT count(*) FROM read_parquet('lake/flights/*.parquet', union_by_name = true)")
marked=$(rows "$marker_sql" "SELECT count(*) FROM read_parquet(getvariable('files'), union_by_name = true)")
[ "$glob" = 400000 ] && [ "$marked" = 200000 ] \
    && ok "with a file of an uncommitted epoch in T/: the glob reads 400000 rows, the markers' files 200000" \
    || bad "glob $glob rows (wanted 400000), markers' files $marked (wanted 200000)"
(cd "$repo" && build/s3land ls --table flights --committed --json) >"$work/ls.json"
grep -q '"file":"flights/00000000-0000-5000' "$work/ls.json" && bad "ls --committed lists the uncommitted file" \
    || ok "ls --committed leaves the uncommitted file out"

# ---- counts of one are singular, as the tool prints them
if grep -nE '(^|[^0-9.,])1 (files|rows|epochs|records|values|sources)\b' "$SRC/README.md" "$SRC/docs/cli.md" >"$work/plural"; then
    bad "the docs print a plural after 1, which the tool never does:"
    sed 's/^/    /' "$work/plural"
else
    ok "no '1 files' in the docs"
fi

[ $fails -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
