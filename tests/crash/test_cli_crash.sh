#!/usr/bin/env bash
# Crash tests of `s3land write` (issue 3, "Crash tests"): $S3LAND_CRASH is the CLI linked with
# tests/support/crash_store.c, which SIGKILLs the process at the k-th store operation
# (S3L_CRASH_AT=k) or at a named protocol point (S3L_CRASH_POINT=name). For a small run every k
# is enumerated, and each named point is hit; every time the process must have died by SIGKILL,
# the in-between state must be the expected one (e.g. one final file and no marker between two
# copies), and a rerun with the plain CLI must leave every input row in the table exactly once
# (DuckDB: input EXCEPT ALL table, and table EXCEPT ALL input, both empty). The pipelined
# commit's interleavings are killed with epoch 1's finish held at each of its points until epoch
# 2 staged a file. Then 50 runs of
# 20,000 rows (small file size, 2 lanes) are killed with kill -9 at random moments (each prints
# its seed), and a rerun of a finished command must change nothing at all.
set -euo pipefail
: "${S3LAND:?}" "${S3LAND_CRASH:?}" "${S3L_SOURCE_DIR:?}"
[ -x "$S3LAND_CRASH" ] || { echo "no crash-test build of the CLI at $S3LAND_CRASH" >&2; exit 1; }
base=/tmp
[ -w /dev/shm ] && base=/dev/shm   # the protocol is under test, not the disk: spare the fsyncs
work=$(mktemp -d "$base/s3l-cli-crash.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

schema=$work/schema.json
echo '[{"name": "id", "type": "int64", "nullable": false}, {"name": "s", "type": "string"}]' >"$schema"
make_input() { # rows -> file
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\": %d, \"s\": \"row %d\"}\n", i, i }' >"$2"
}
make_input 1200 small.ndjson
make_input 20000 big.ndjson
# Uncompressed, so that an epoch of 400 rows fills several 4 KiB files (a file closes at its size
# on storage; compressed, these rows fit one).
small=(--table t --namespace ns --schema "$schema" --epoch-rows 400 --file-size 4KiB --compression none --lanes 2
       --row-group-rows 200 --quiet)
checks=()   # lake:input pairs for the final exactness check

run_crash() { # lake, env assignment, args... -> exit status of the crashing CLI
    local lake=$1 envv=$2; shift 2
    set +e
    env "$envv" "$S3LAND_CRASH" write --url "file://$lake" "$@" 2>"$lake.err"
    local st=$?
    set -e
    echo "$st"
}

# find | wc -l, where a missing directory counts 0 (find fails, and pipefail is on).
nfiles() { { find "$@" 2>/dev/null || true; } | wc -l; }

# 1. Every store operation k of a small run.
k=0
while :; do
    k=$((k + 1))
    lake=$work/k$k
    mkdir -p "$lake"
    st=$(run_crash "$lake" "S3L_CRASH_AT=$k" "${small[@]}" small.ndjson)
    if [ "$st" = 0 ]; then
        rm -rf "$lake"
        break
    fi
    if [ "$st" != 137 ]; then
        echo "k=$k: expected death by SIGKILL (137), got $st:" >&2
        cat "$lake.err" >&2
        exit 1
    fi
    "$S3LAND" ls --url "file://$lake" --quiet >/dev/null 2>&1 || true
    "$S3LAND" write --url "file://$lake" "${small[@]}" small.ndjson || { echo "k=$k: rerun failed" >&2; exit 1; }
    checks+=("$lake:small.ndjson")
done
echo "every operation: $((k - 1)) kill points enumerated"
[ "$k" -gt 40 ] || { echo "too few store operations ($k): is the crash store linked?" >&2; exit 1; }

# 2. Named points, with the state expected in between (epoch 1 stages several files).
point_case() { # name, check command
    local name=$1
    local lake=$work/p-${name//[:]/_}
    mkdir -p "$lake"
    local st
    st=$(run_crash "$lake" "S3L_CRASH_POINT=$name" "${small[@]}" small.ndjson)
    [ "$st" = 137 ] || { echo "$name: expected SIGKILL, got $st" >&2; cat "$lake.err" >&2; exit 1; }
    local tdir=$lake/ns/t markers=$lake/_openetl/markers/ns/t staging=$lake/_openetl/staging
    local files nmark nstaged pending=0
    files=$(nfiles "$tdir" -maxdepth 1 -name '*.parquet')
    nmark=$(nfiles "$markers" -name '*.json')
    nstaged=$(nfiles "$staging" -type f ! -name '.s3l-*')
    grep -q '"pending":{' "$lake"/_openetl/checkpoints/*.json 2>/dev/null && pending=1
    if ! eval "$2"; then
        echo "$name: unexpected state: files=$files markers=$nmark staged=$nstaged pending=$pending (want $2)" >&2
        exit 1
    fi
    "$S3LAND" write --url "file://$lake" "${small[@]}" small.ndjson
    checks+=("$lake:small.ndjson")
    echo "point $name: files=$files markers=$nmark staged=$nstaged pending=$pending: ok"
}
point_case after-stage      '[ $files = 0 ] && [ $nmark = 0 ] && [ $nstaged -ge 1 ] && [ $pending = 0 ]'
point_case after-prepare    '[ $files = 0 ] && [ $nmark = 0 ] && [ $nstaged -ge 2 ] && [ $pending = 0 ]'
point_case after-checkpoint '[ $files = 0 ] && [ $nmark = 0 ] && [ $pending = 1 ]'
point_case between-copies   '[ $files = 1 ] && [ $nmark = 0 ] && [ $pending = 1 ]'
# From here epoch 2 may be staging meanwhile (the pipelined commit): more staged than copied.
point_case before-marker    '[ $nstaged -ge $files ] && [ $files -ge 2 ] && [ $nmark = 0 ] && [ $pending = 1 ]'
point_case after-marker     '[ $nstaged -ge $files ] && [ $files -ge 2 ] && [ $nmark = 1 ] && [ $pending = 1 ]'

# 2b. The pipelined commit's interleavings (issue 14 item 1): epoch 1 finishes on the committer's
# thread while epoch 2 stages; the committer is held at each point of epoch 1's finish until the
# stager has staged a file of epoch 2 (S3L_CRASH_HOLD=point:1:after-stage:m, m the first
# after-stage of epoch 2), then killed. Epoch 1's file count: the files its commit point records
# (each after-stage is one staged file; the staged files at its after-prepare would count epoch
# 2's too, since the runner's committer publishes epoch 1's last file and writes its commit point
# while epoch 2 stages).
lake=$work/count-e1
mkdir -p "$lake"
st=$(run_crash "$lake" S3L_CRASH_POINT=after-checkpoint "${small[@]}" small.ndjson)
[ "$st" = 137 ] || { echo "epoch 1's files: got $st" >&2; exit 1; }
e1=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["pending"]["files"]))' \
    "$lake"/_openetl/checkpoints/*.json)
rm -rf "$lake"
[ "$e1" -ge 2 ] || { echo "epoch 1 stages $e1 files: too few for the interleavings" >&2; exit 1; }
held_case() { # point, check command[, fewest staged files (default: more than epoch 1's)]
    local name=$1 min_staged=${3:-$((e1 + 1))}
    local lake=$work/h-$name
    mkdir -p "$lake"
    local st
    st=$(run_crash "$lake" "S3L_CRASH_HOLD=$name:1:after-stage:$((e1 + 1))" "${small[@]}" small.ndjson)
    [ "$st" = 137 ] || { echo "held $name: expected SIGKILL, got $st" >&2; cat "$lake.err" >&2; exit 1; }
    local tdir=$lake/ns/t markers=$lake/_openetl/markers/ns/t staging=$lake/_openetl/staging
    local files nmark nstaged pending=0
    files=$(nfiles "$tdir" -maxdepth 1 -name '*.parquet')
    nmark=$(nfiles "$markers" -name '*.json')
    nstaged=$(nfiles "$staging" -type f ! -name '.s3l-*')
    grep -q '"pending":{' "$lake"/_openetl/checkpoints/*.json 2>/dev/null && pending=1
    # Epoch 1's staged files are still there (deleted with its committed checkpoint write, so
    # gone at after-commit), and epoch 2's.
    if ! eval "[ \$nstaged -ge $min_staged ] && $2"; then
        echo "held $name: unexpected state: files=$files markers=$nmark staged=$nstaged pending=$pending (want at least $min_staged staged and $2)" >&2
        exit 1
    fi
    "$S3LAND" write --url "file://$lake" "${small[@]}" small.ndjson
    # Epoch 2's files of generation 1 were never recorded: garbage that gc removes (a generation
    # below the checkpoint's, not pending), while the pipeline is live.
    "$S3LAND" gc --url "file://$lake" --quiet
    left=$(nfiles "$staging" -type f ! -name '.s3l-*')
    [ "$left" = 0 ] || { echo "held $name: gc left $left staged files" >&2; exit 1; }
    checks+=("$lake:small.ndjson")
    echo "held $name until epoch 2 staged: files=$files markers=$nmark staged=$nstaged pending=$pending: ok"
}
held_case after-prepare    '[ $files = 0 ] && [ $nmark = 0 ] && [ $pending = 0 ]'
held_case after-checkpoint '[ $files = 0 ] && [ $nmark = 0 ] && [ $pending = 1 ]'
held_case between-copies   '[ $files = 1 ] && [ $nmark = 0 ] && [ $pending = 1 ]'
held_case before-marker    '[ $files = '"$e1"' ] && [ $nmark = 0 ] && [ $pending = 1 ]'
held_case after-marker     '[ $files = '"$e1"' ] && [ $nmark = 1 ] && [ $pending = 1 ]'
held_case after-commit     '[ $files = '"$e1"' ] && [ $nmark = 1 ] && [ $pending = 0 ]' 1

# During gc: garbage from a writer killed after prepare, then a gc killed at its 2nd removal.
lake=$work/gc
mkdir -p "$lake"
st=$(run_crash "$lake" S3L_CRASH_POINT=after-prepare "${small[@]}" small.ndjson)
[ "$st" = 137 ] || { echo "gc setup: got $st" >&2; exit 1; }
before=$(nfiles "$lake/_openetl/staging" -type f ! -name '.s3l-*')
# The killed writer looks dead to gc once its checkpoint is older than twice its interval.
touch -d '10 minutes ago' "$lake"/_openetl/checkpoints/*.json
set +e
S3L_CRASH_POINT=in-gc:2 "$S3LAND_CRASH" gc --url "file://$lake" 2>"$lake.err"
st=$?
set -e
[ "$st" = 137 ] || { echo "in-gc: expected SIGKILL, got $st" >&2; cat "$lake.err" >&2; exit 1; }
after=$(nfiles "$lake/_openetl/staging" -type f ! -name '.s3l-*')
[ "$after" = $((before - 1)) ] || { echo "in-gc: staged $before -> $after, expected one removed" >&2; exit 1; }
"$S3LAND" gc --url "file://$lake" --quiet
left=$(nfiles "$lake/_openetl/staging" -type f ! -name '.s3l-*')
[ "$left" = 0 ] || { echo "gc left $left staged files" >&2; exit 1; }
"$S3LAND" write --url "file://$lake" "${small[@]}" small.ndjson
checks+=("$lake:small.ndjson")
echo "point in-gc: $before staged, killed after one removal, gc finished: ok"

# 3. 50 runs killed with kill -9 at random moments.
big=(--table big --schema "$schema" --epoch-rows 3000 --file-size 64KiB --lanes 2
     --row-group-rows 1000 --quiet)
t0=$(date +%s%N)
"$S3LAND" write --url "file://$work/timing" "${big[@]}" big.ndjson
t1=$(date +%s%N)
span=$(( (t1 - t0) / 1000 + 1 ))   # microseconds of a whole run
for i in $(seq 1 50); do
    seed=$(( $(date +%s%N) % 1000000 + i ))
    RANDOM=$seed
    delay=$(( (RANDOM * 32768 + RANDOM) % span ))
    lake=$work/r$i
    mkdir -p "$lake"
    "$S3LAND" write --url "file://$lake" "${big[@]}" big.ndjson 2>/dev/null &
    pid=$!
    sleep "$(awk -v u="$delay" 'BEGIN { printf "%.6f", u / 1e6 }')"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "random run $i: seed $seed, kill -9 after ${delay}us of ${span}us"
    "$S3LAND" write --url "file://$lake" "${big[@]}" big.ndjson || { echo "run $i (seed $seed): rerun failed" >&2; exit 1; }
    checks+=("$lake:big.ndjson")
done

# 4. A rerun of a finished command changes nothing at all (names, sizes, bytes, mtimes).
lake=$work/r50
snap() { (cd "$lake" && find . -type f -printf '%p %s %T@\n' | sort && find . -type f -exec sha256sum {} + | sort); }
a=$(snap)
"$S3LAND" write --url "file://$lake" "${big[@]}" big.ndjson
b=$(snap)
[ "$a" = "$b" ] || { echo "a finished rerun changed the destination" >&2; diff <(echo "$a") <(echo "$b") >&2; exit 1; }
echo "finished rerun: destination unchanged"

# Exactness, all lakes in one DuckDB session.
node "$S3L_SOURCE_DIR/tests/crash/exact.mjs" "$schema" "${checks[@]}"
