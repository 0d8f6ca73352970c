#!/usr/bin/env bash
# A failed write leaves the table's schema record as it was (issue 10 item 14): the record changes
# only with the epoch that first holds its new columns or types. The three sequences, each
# with `s3land schema` as the oracle: after the failed run the record is unchanged, and the later
# valid write succeeds.
set -uo pipefail
S3LAND=${S3LAND:?S3LAND must name the s3land binary}
work=$(mktemp -d /tmp/s3l-schema-failed-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

# run CODE DESCRIPTION -- ARGS...: runs s3land and checks its exit code.
run() {
    local code=$1 what=$2
    shift 3
    "$S3LAND" "$@" >"$work/out" 2>"$work/err"
    local got=$?
    if [ "$got" -eq "$code" ]; then ok "$what (exit $code)"; else
        bad "$what: wanted exit $code, got $got"
        sed 's/^/    /' "$work/err" | head -5
    fi
}
# same_record LAKE BEFORE DESCRIPTION: the record of t is byte for byte the one saved in BEFORE
# (a missing record and a missing BEFORE are the same).
same_record() {
    local rec="$1/_openetl/schemas/t.json"
    if { [ ! -e "$2" ] && [ ! -e "$rec" ]; } || cmp -s "$2" "$rec"; then ok "$3"; else
        bad "$3: the record changed"
        sed 's/^/    /' "$rec" 2>/dev/null | head -5
    fi
}
# schema_says LAKE PATTERN DESCRIPTION: `s3land schema` of t matches PATTERN (grep -E).
schema_says() {
    "$S3LAND" schema --url "$1" --table t >"$work/schema" 2>&1
    if grep -Eq -- "$2" "$work/schema"; then ok "$3"; else
        bad "$3: schema says"
        sed 's/^/    /' "$work/schema" | head -8
    fi
}

# 1. The type changes are allowed, but the run fails on a malformed line after the sample.
l1="$work/l1"
printf '{"seq":1,"v":1}\n' >"$work/a.ndjson"
printf '{"seq":2,"v":"x"}\n{"seq":3,\n' >"$work/b.ndjson"
printf '{"seq":4,"v":4}\n' >"$work/c.ndjson"
run 0 "1: the first write lands" -- write --url "$l1" --table t "$work/a.ndjson"
cp "$l1/_openetl/schemas/t.json" "$work/rec1"
run 2 "1: an allowed type change on malformed input fails" -- \
    write --url "$l1" --table t --type-changes allow "$work/b.ndjson"
same_record "$l1" "$work/rec1" "1: the failed run left the record as it was"
schema_says "$l1" 'v.*int64' "1: v is still int64, as in the only file"
run 0 "1: the later valid write lands" -- write --url "$l1" --table t "$work/c.ndjson"

# 2. A ragged CSV whose header adds a column fails: the column is not recorded.
l2="$work/l2"
printf 'id,v\n1,2\n' >"$work/a.csv"
printf 'id,v,w\n3,4,5\n6,7,8,9\n' >"$work/b.csv"
printf 'id,v\n10,11\n' >"$work/c.csv"
run 0 "2: the first CSV lands" -- write --url "$l2" --table t --input-format csv "$work/a.csv"
cp "$l2/_openetl/schemas/t.json" "$work/rec2"
run 2 "2: a ragged CSV with a new column fails" -- \
    write --url "$l2" --table t --input-format csv "$work/b.csv"
same_record "$l2" "$work/rec2" "2: the failed run added no column to the record"
if grep -q '"w"' "$l2/_openetl/schemas/t.json"; then bad "2: w is recorded"; else ok "2: w is not recorded"; fi
run 0 "2: the later valid write lands" -- write --url "$l2" --table t --input-format csv "$work/c.csv"

# 3. A failed --schema run with int8 does not pin the type for later inferred writes.
l3="$work/l3"
printf '[{"name":"v","type":"int8"}]\n' >"$work/s.json"
printf '{"v":1}\n{"v":"zz"}\n' >"$work/p.ndjson"
printf '{"v":100000}\n' >"$work/q.ndjson"
run 2 "3: a declared int8 run on bad input fails" -- \
    write --url "$l3" --table t --schema "$work/s.json" "$work/p.ndjson"
same_record "$l3" "$work/none" "3: the failed run wrote no record"
run 0 "3: the later inferred write lands" -- write --url "$l3" --table t "$work/q.ndjson"
schema_says "$l3" 'v.*int64' "3: v is recorded as inferred (int64)"

[ $fails -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
