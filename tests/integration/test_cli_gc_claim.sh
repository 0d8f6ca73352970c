#!/usr/bin/env bash
# `s3land gc` after a kill -9 of a write (issue 10 item 12), on file:// and on the s3 label's
# RADOS Gateway (the fixture's env file S3L_RGW_ENV, or one started here):
# - a write killed mid-epoch ($S3LAND_CRASH at the second after-stage point: files staged, no
#   commit point) leaves staged files and a checkpoint that records its 2s commit interval; once
#   the checkpoint is older than twice that, gc claims the pipeline and removes them (listed
#   independently: find on file://, the AWS CLI on RGW); the rerun claims a newer generation and
#   lands every input row exactly once (DuckDB: count, distinct, min, max);
# - a live writer (stdin from a fifo, a 1h commit interval, files staged) is not claimed: gc says
#   why (pipeline, table, when its checkpoint was updated, what makes gc claim) and keeps its
#   staged files and checkpoint; gc --force claims it, and the writer's next commit fails fenced
#   (exit 5, "took over");
# - a live writer idle for longer than twice its interval (stdin quiet) rewrites its checkpoint
#   once per interval (a heartbeat), so gc does not claim it, and it goes on.
set -uo pipefail
S3LAND=${S3LAND:?}
S3LAND_CRASH=${S3LAND_CRASH:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-gc-claim-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
rgw=""
writer=""
cleanup() {
    [ -n "$writer" ] && kill "$writer" 2>/dev/null
    [ -n "$rgw" ] && "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "{\"id\": %d, \"s\": \"row %d\"}\n", i, i }' >in.ndjson
echo '[{"name": "id", "type": "int64", "nullable": false}, {"name": "s", "type": "string"}]' >schema.json
live_id=0e0e0e0e-1111-4222-8333-444455556666
args=(--table t --epoch-rows 2000 --file-size 4KiB --compression none --quiet)

# Store-specific helpers, set per store below: staged URL (the staged data files, one key a
# line), ckpt URL ID (the checkpoint's text), mirror URL DIR (the table's files into DIR).
staged_file() { find "${1#file://}/_openetl/staging" -type f ! -name '.s3l-*' 2>/dev/null; }
ckpt_file() { cat "${1#file://}/_openetl/checkpoints/$2.json" 2>/dev/null; }
mirror_file() { cp "${1#file://}"/t/*.parquet "$2"/ 2>/dev/null; }
s3_prefix() { local p=${1#s3://}; echo "${p#*/}"; }
staged_s3() {
    aws s3api list-objects-v2 --bucket "$RGW_BUCKET" --prefix "$(s3_prefix "$1")/_openetl/staging/" \
        --query 'Contents[].Key' --output text | tr '\t' '\n' | grep -v '^None$' | grep -v '/\.s3l-'
}
ckpt_s3() { aws s3 cp --quiet "$1/_openetl/checkpoints/$2.json" - 2>/dev/null; }
mirror_s3() { aws s3 cp --quiet --recursive "$1/t/" "$2"/ --exclude '*' --include '*.parquet'; }

count_rows() { # DIR -> "n distinct min max"
    (cd "$SRC" && node scripts/duckdb.mjs "SELECT count(*) AS n, count(DISTINCT id) AS d, min(id) AS lo,
        max(id) AS hi FROM read_parquet('$1/*.parquet')") | awk 'NR == 3 { print $1, $2, $3, $4 }'
}

case_dead() { # store URL: kill -9 mid-epoch, gc refuses at once, claims later, rerun exact
    local store=$1 url=$2
    local t0=$SECONDS
    env S3L_CRASH_POINT=after-stage:2 "$S3LAND_CRASH" write --url "$url" "${args[@]}" \
        --commit-interval 2s in.ndjson 2>"$work/crash.err"
    local st=$?
    [ "$st" = 137 ] && ok "$store: write killed at the second staged file ($((SECONDS - t0)) s)" \
        || bad "$store: expected SIGKILL (137), got $st: $(cat "$work/crash.err")"
    local n0
    n0=$("staged_$store" "$url" | wc -l)
    [ "$n0" -ge 1 ] && ok "$store: the killed write left $n0 staged files" \
        || bad "$store: expected staged files, found $n0"
    local id
    id=$("staged_$store" "$url" | head -1 | sed 's|.*_openetl/staging/||; s|/.*||')
    ckpt_"$store" "$url" "$id" | grep -Eq '"generation":1,.*"commit_interval_ms":2000,"writer":"[0-9a-f]{32}"}$' \
        && ok "$store: the checkpoint records the writer's commit interval and token" \
        || bad "$store: checkpoint: $(ckpt_"$store" "$url" "$id")"
    sleep 4.5
    "$S3LAND" gc --url "$url" >"$work/gc2.out" 2>&1
    st=$?
    if [ "$st" = 0 ] && grep -q "pipeline $id (table t): claimed generation 2, its checkpoint was last updated 20.*more than twice its commit interval 2s ago; removed $n0 staged file" "$work/gc2.out"; then
        ok "$store: gc claims the dead pipeline and removes its $n0 staged files"
    else
        bad "$store: gc later (exit $st): $(cat "$work/gc2.out")"
    fi
    [ "$("staged_$store" "$url" | wc -l)" = 0 ] && ok "$store: no staged file is left (listed independently)" \
        || bad "$store: staged files left: $("staged_$store" "$url")"
    "$S3LAND" write --url "$url" "${args[@]}" --commit-interval 1s in.ndjson 2>"$work/rerun.err" \
        && ok "$store: the rerun after gc works" || bad "$store: rerun: $(cat "$work/rerun.err")"
    ckpt_"$store" "$url" "$id" | grep -q '"generation":3,' \
        && ok "$store: the rerun claimed a newer generation (3)" \
        || bad "$store: checkpoint after the rerun: $(ckpt_"$store" "$url" "$id")"
    mkdir -p "$work/m-$store"
    "mirror_$store" "$url" "$work/m-$store"
    local got
    got=$(count_rows "$work/m-$store")
    [ "$got" = "3000 3000 0 2999" ] && ok "$store: every row exactly once (DuckDB: $got)" \
        || bad "$store: DuckDB count, distinct, min, max: '$got', expected '3000 3000 0 2999'"
}

case_live() { # store URL: a live writer is refused, then fenced by --force
    local store=$1 url=$2
    rm -f fifo && mkfifo fifo
    "$S3LAND" write --url "$url" --table t --schema schema.json --commit-interval 1h \
        --file-size 4KiB --compression none \
        --pipeline-id $live_id - <fifo >"$work/live.out" 2>"$work/live.err" &
    writer=$!
    exec 3>fifo
    head -n 300 in.ndjson >&3
    local i n0=0
    for i in $(seq 300); do
        n0=$("staged_$store" "$url" | wc -l)
        [ "$n0" -ge 1 ] && break
        sleep 0.1
    done
    [ "$n0" -ge 1 ] && ok "$store: the live writer staged $n0 files" \
        || bad "$store: the live writer staged nothing: $(cat "$work/live.err")"
    "$S3LAND" gc --url "$url" --pipeline-id $live_id >"$work/gc3.out" 2>&1
    local st=$?
    if [ "$st" = 0 ] && grep -q "pipeline $live_id (table t): not claimed: its checkpoint was updated 20.*less than twice its commit interval 1h ago, so its writer may be running; gc claims it once the checkpoint is 2h old, or now with --force" "$work/gc3.out"; then
        ok "$store: a live pipeline is not claimed, and gc says why"
    else
        bad "$store: gc of a live pipeline (exit $st): $(cat "$work/gc3.out")"
    fi
    [ "$("staged_$store" "$url" | wc -l)" -ge "$n0" ] && ok "$store: the live writer's staged files are kept" \
        || bad "$store: gc removed staged files of a live writer"
    ckpt_"$store" "$url" "$live_id" | grep -q '"generation":1,' \
        && ok "$store: the live writer's checkpoint is untouched" \
        || bad "$store: checkpoint: $(ckpt_"$store" "$url" "$live_id")"
    "$S3LAND" gc --url "$url" --pipeline-id $live_id --force >"$work/gc4.out" 2>&1
    st=$?
    [ "$st" = 0 ] && grep -q "pipeline $live_id (table t): claimed generation 2, with --force" "$work/gc4.out" \
        && ok "$store: gc --force claims the live pipeline" \
        || bad "$store: gc --force (exit $st): $(cat "$work/gc4.out")"
    sed -n 11,20p in.ndjson >&3
    exec 3>&-
    wait "$writer"
    st=$?
    writer=""
    [ "$st" = 5 ] && grep -q "generation 2 took over from this writer (generation 1)" "$work/live.err" \
        && ok "$store: the fenced writer's commit fails with exit 5 and says so" \
        || bad "$store: fenced writer (exit $st): $(cat "$work/live.err")"
}

case_idle() { # store URL: a live writer idle for longer than twice its interval is not dead
    local store=$1 url=$2 id=1d1e1d1e-1111-4222-8333-444455556666
    rm -f fifo && mkfifo fifo
    "$S3LAND" write --url "$url" --table t --schema schema.json --commit-interval 1s \
        --pipeline-id "$id" - <fifo >"$work/idle.out" 2>"$work/idle.err" &
    writer=$!
    exec 3>fifo
    head -n 10 in.ndjson >&3
    local i
    for i in $(seq 300); do
        ckpt_"$store" "$url" "$id" | grep -q '"committed_epoch":1,' && break
        sleep 0.1
    done
    sleep 3.5   # idle: no input, nothing to commit, longer than twice the interval
    "$S3LAND" gc --url "$url" --pipeline-id "$id" >"$work/gc5.out" 2>&1
    local st=$?
    [ "$st" = 0 ] && grep -q "pipeline $id (table t): not claimed: .*commit interval 1s ago" "$work/gc5.out" \
        && ok "$store: an idle writer keeps its checkpoint fresh (a heartbeat): gc does not claim it" \
        || bad "$store: gc of an idle writer (exit $st): $(cat "$work/gc5.out")"
    sed -n 11,20p in.ndjson >&3
    exec 3>&-
    wait "$writer"
    st=$?
    writer=""
    [ "$st" = 0 ] && ok "$store: the idle writer goes on and ends normally" \
        || bad "$store: idle writer (exit $st): $(cat "$work/idle.err")"
    ckpt_"$store" "$url" "$id" | grep -q '"generation":1,"committed_epoch":2,' \
        && ok "$store: it committed its second epoch under its own generation" \
        || bad "$store: checkpoint: $(ckpt_"$store" "$url" "$id")"
}

case_dead file "file://$work/lake"
case_live file "file://$work/lake-live"
case_idle file "file://$work/lake-idle"

env_file=${S3L_RGW_ENV:-}
if [ -z "$env_file" ]; then
    rgw=/tmp/s3land-rgw-gc.$$
    RGW_DIR=$rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 \
        || { cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
    env_file=$rgw/env
fi
# shellcheck disable=SC1090
. "$env_file"
run=gc-claim-$$-$RANDOM
case_dead s3 "s3://$RGW_BUCKET/$run/dead"
case_live s3 "s3://$RGW_BUCKET/$run/live"
case_idle s3 "s3://$RGW_BUCKET/$run/idle"

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
[ "$fails" = 0 ]
