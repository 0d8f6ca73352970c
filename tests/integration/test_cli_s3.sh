#!/usr/bin/env bash
# The s3land command on an S3 store: Ceph's RADOS Gateway started on 127.0.0.1 by
# tests/stores/start-rgw.sh. flights-200k.json is written to s3://BUCKET/cli-test in epochs of
# 70,000 rows with 2 lanes; the objects are then fetched with curl (its own SigV4 signer, not
# ours) and read by DuckDB, which must find exactly the input (EXCEPT ALL both ways). A rerun adds
# nothing (the bucket listing, also by curl, is unchanged); schema, check, recover and gc work
# against the store, and `ls` reports the objects curl lists, with 200,000 rows from their footers.
# Every s3land call runs under `timeout`, so a hang fails the test, not CI.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-cli-s3-XXXXXX)
rgw=/tmp/s3land-rgw-cli.$$
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() {
    [ -d "$rgw" ] && "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

RGW_DIR=$rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 || {
    cat "$work/rgw.log"
    echo "not ok - the RADOS Gateway did not start"
    exit 1
}
set -a
# shellcheck disable=SC1091
. "$rgw/env"
set +a
unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
url="s3://$RGW_BUCKET/cli-test"
s3=(--url "$url" --endpoint "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
S="timeout 120 $S3LAND"
# curl with its own SigV4 signer: GET an object, or list keys and sizes under a prefix.
s3curl() {
    curl -sf --aws-sigv4 "aws:amz:$AWS_DEFAULT_REGION:s3" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
        --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$@"
}
s3keys() {
    s3curl "$RGW_ENDPOINT/$RGW_BUCKET?list-type=2&max-keys=1000&prefix=${1//\//%2F}" >"$work/list.xml"
    paste -d' ' <(grep -o '<Key>[^<]*</Key>' "$work/list.xml" | sed 's/<[^>]*>//g') \
        <(grep -o '<Size>[0-9]*</Size>' "$work/list.xml" | sed 's/<[^>]*>//g') | sort
}
data="$SRC/node_modules/vega-datasets/data/flights-200k.json"
cat >"$work/schema.json" <<'EOF'
[{"name": "delay", "type": "int64"}, {"name": "distance", "type": "int64"},
 {"name": "time", "type": "double"}]
EOF

$S check "${s3[@]}" >"$work/out" 2>&1 && ok "check passes on the S3 store" \
    || { bad "check: $(cat "$work/out")"; }
write=(write "${s3[@]}" --table flights --schema "$work/schema.json" --input-format json
       --epoch-rows 70000 --lanes 2)
$S "${write[@]}" --quiet "$data" 2>"$work/err" && ok "write to s3://" \
    || bad "write to s3://: $(cat "$work/err")"

# Fetch every data object of the table with curl's own SigV4 and read them with DuckDB.
s3keys "cli-test/flights/" >"$work/keys"
n=0
while read -r key _; do
    n=$((n + 1))
    s3curl -o "$work/f$n.parquet" "$RGW_ENDPOINT/$RGW_BUCKET/$key" || bad "curl $key"
done <"$work/keys"
[ $n -ge 3 ] && ok "$n data objects (3 epochs, 2 lanes)" || bad "only $n data objects"
node --input-type=module -e "
import { exceptAll, done, lit } from '$SRC/tests/conformance/harness.mjs';
await exceptAll(\"SELECT * FROM read_json(\" + lit('$data') + \", format='array', columns={'delay': 'BIGINT', 'distance': 'BIGINT', 'time': 'DOUBLE'})\",
    \"SELECT * FROM read_parquet(\" + lit('$work/f*.parquet') + \")\", 'objects fetched from S3 hold the input exactly');
done();
" || fails=$((fails + 1))

s3keys "cli-test/" >"$work/before"
$S "${write[@]}" "$data" 2>"$work/err"
grep -q "nothing new" "$work/err" && ok "a rerun on S3 says nothing is new" || bad "rerun: $(cat "$work/err")"
s3keys "cli-test/" >"$work/after"
[ -s "$work/before" ] && cmp -s "$work/before" "$work/after" && ok "and the bucket listing is unchanged" \
    || bad "listing changed"
$S schema "${s3[@]}" --table flights --json | grep -q '"name":"time","type":"double"' \
    && ok "schema from S3" || bad "schema from S3"
$S ls "${s3[@]}" --table flights --json >"$work/ls.json" 2>&1 || bad "ls: $(cat "$work/ls.json")"
nls=$(grep -c '"file":' "$work/ls.json")
[ "$nls" -eq "$n" ] && ok "ls lists the $n data objects" || bad "ls lists $nls files, curl $n"
grep -q '"table":"flights","files":[0-9]*,"rows":200000' "$work/ls.json" \
    && ok "ls: 200000 rows from the footers" || bad "ls rows: $(tail -1 "$work/ls.json")"
$S recover "${s3[@]}" --quiet && ok "recover on S3" || bad "recover on S3"
$S gc "${s3[@]}" --quiet && ok "gc on S3" || bad "gc on S3"

[ $fails -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
