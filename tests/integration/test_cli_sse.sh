#!/usr/bin/env bash
# Encryption and storage class on Ceph RGW (issue 11, item 4), with RGW's testing KMS backend
# (tests/stores/start-rgw.sh: keys testkey-1, testkey-2): `write --sse aws:kms --sse-kms-key-id
# testkey-1` lands a table whose every object -- committed data files, markers, the checkpoint,
# the schema record -- HeadObject (the AWS CLI, not s3land) shows as aws:kms with testkey-1. The
# data files reach their final keys by a copy; RGW 16 answers CopyObject of an SSE-KMS object
# 501 NotImplemented, so they come through the multipart-copy fallback, and keep the encryption.
# The rows read back (s3land ls, from the files' Parquet footers, through RGW's decryption) are
# the rows written. Bad values are refused before anything moves (exit 1, the valid ones named).
# Region (item 5): through tests/support/fault-proxy.mjs answering the first ListObjectsV2 with a
# 301 PermanentRedirect to eu-west-1, `ls` succeeds and prints the note once; the proxy's log
# shows the retry signed for eu-west-1, and so every later request.
# Storage class: RGW 16's default placement has STANDARD only, so what is sent is checked at
# the fault proxy (fault.s3_faults); here --storage-class STANDARD is accepted and sent.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-sse-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
rgw=""
proxy_pid=""
cleanup() {
    [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
    [ -n "$rgw" ] && "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
env_file=${S3L_RGW_ENV:-}
if [ -z "$env_file" ]; then
    rgw=/tmp/s3land-rgw-sse.$$
    RGW_DIR=$rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 \
        || { cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
    env_file=$rgw/env
fi
# shellcheck disable=SC1090
. "$env_file"
export AWS_ENDPOINT_URL=$RGW_ENDPOINT
aws() { command aws --endpoint-url "$RGW_ENDPOINT" "$@"; }

prefix=sse-$$
url="s3://$RGW_BUCKET/$prefix"
python3 -c 'import json
for i in range(5000): print(json.dumps({"id": i, "name": "n%d" % i}))' >"$work/in.ndjson"

S3LAND_TRACE=$work/trace "$S3LAND" --quiet write --url "$url" --table t --sse aws:kms --sse-kms-key-id testkey-1 \
    --storage-class STANDARD --epoch-rows 2000 "$work/in.ndjson" >"$work/w.out" 2>&1 \
    && ok "write with --sse aws:kms --sse-kms-key-id testkey-1" \
    || bad "write with SSE-KMS: $(cat "$work/w.out")"

# the copies to the final keys: CopyObject refused 501 (UNSUPPORTED, not retried), then copied
# by UploadPartCopy into a multipart upload created with the SSE headers
n501=$(grep -c '"op":"CopyObject".*"status":501' "$work/trace")
nupc=$(grep -c '"op":"UploadPartCopy".*"status":200' "$work/trace")
[ "$n501" -ge 3 ] && [ "$nupc" -eq "$n501" ] \
    && ok "each of $n501 CopyObject answered 501 fell back to UploadPartCopy" \
    || bad "copy fallback: $n501 CopyObject 501, $nupc UploadPartCopy"
aws s3api list-objects-v2 --bucket "$RGW_BUCKET" --prefix "$prefix/" \
    --query 'Contents[].Key' --output text | tr '\t' '\n' | grep -v '^None$' >"$work/keys"
n_data=$(grep -c '\.parquet$' "$work/keys")
n_markers=$(grep -c '_openetl/markers/' "$work/keys")
[ "$n_data" -ge 3 ] && [ "$n_markers" -ge 3 ] \
    && ok "$n_data data files and $n_markers markers landed" \
    || bad "expected >= 3 data files and markers: $(cat "$work/keys")"
wrong=0
while read -r key; do
    h=$(aws s3api head-object --bucket "$RGW_BUCKET" --key "$key" \
        --query '[ServerSideEncryption, SSEKMSKeyId]' --output text)
    [ "$h" = "aws:kms	testkey-1" ] || { wrong=$((wrong + 1)); echo "# $key: $h"; }
done <"$work/keys"
[ "$wrong" -eq 0 ] && [ -s "$work/keys" ] \
    && ok "HeadObject: every one of $(wc -l <"$work/keys") objects is aws:kms with testkey-1" \
    || bad "$wrong objects without aws:kms / testkey-1"

"$S3LAND" ls --url "$url" --table t --committed --json >"$work/ls.json" 2>"$work/ls.err"
rows=$(python3 -c 'import json,sys
print(sum(e.get("rows", 0) for e in map(json.loads, open(sys.argv[1])) if "file" in e))' \
    "$work/ls.json")
[ "$rows" = 5000 ] && ok "the committed files' footers hold 5000 rows" \
    || bad "rows read back: $rows ($(cat "$work/ls.err"))"

# refused before anything moves, with the valid values named
for bad_args in "--sse aws:kmx" "--storage-class GLACIER_XX" "--sse-kms-key-id testkey-1"; do
    # shellcheck disable=SC2086
    "$S3LAND" write --url "$url-bad" --table t $bad_args "$work/in.ndjson" >"$work/b.out" 2>&1
    rc=$?
    [ "$rc" -eq 1 ] && grep -q "expected\|without server-side encryption" "$work/b.out" \
        && ok "write $bad_args: exit 1 ($(head -1 "$work/b.out"))" \
        || bad "write $bad_args: exit $rc, $(cat "$work/b.out")"
done
# recover, gc and check take the same flags (recover commits staged files: its copies and
# markers are encrypted as write's)
"$S3LAND" --quiet recover --url "$url" --sse aws:kms --sse-kms-key-id testkey-1 >"$work/r.out" 2>&1 \
    && ok "recover --sse aws:kms --sse-kms-key-id testkey-1" || bad "recover: $(cat "$work/r.out")"
"$S3LAND" gc --url "$url-bad" --storage-class GLACIER_XX >"$work/g.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "GLACIER_IR" "$work/g.out" && ok "gc --storage-class GLACIER_XX: exit 1" \
    || bad "gc --storage-class GLACIER_XX: exit $rc, $(cat "$work/g.out")"
left=$(aws s3api list-objects-v2 --bucket "$RGW_BUCKET" --prefix "$prefix-bad/" \
    --query 'length(Contents || `[]`)' --output text)
[ "$left" = 0 ] && ok "nothing written by the refused commands" || bad "refused wrote $left"

# the region note, through the fault proxy
node "$SRC/tests/support/fault-proxy.mjs" --target "$RGW_ENDPOINT" >"$work/proxy.out" 2>&1 &
proxy_pid=$!
for _ in $(seq 50); do grep -q LISTENING "$work/proxy.out" && break; sleep 0.1; done
pport=$(awk '/LISTENING/ {print $2}' "$work/proxy.out")
purl=http://127.0.0.1:$pport
curl -s -X POST "$purl/__proxy/rules" -d '[{"op":"ListObjectsV2","action":"redirect",
  "region":"eu-west-1"}]' >/dev/null
"$S3LAND" ls --url "$url" --endpoint "$purl" --region us-east-1 >"$work/ls.out" 2>"$work/ls.err"
rc=$?
notes=$(grep -c '^note: bucket .* is in region eu-west-1, not us-east-1' "$work/ls.err")
[ "$rc" -eq 0 ] && [ "$notes" -eq 1 ] && ok "ls follows a 301 to eu-west-1 and notes it once" \
    || bad "ls through a redirect: exit $rc, $notes notes: $(cat "$work/ls.err")"
curl -s "$purl/__proxy/counts" | python3 -c 'import json,sys
log = json.load(sys.stdin)["log"]
regions = [e["scope"].split("/")[1] for e in log]
assert regions[0] == "us-east-1" and len(regions) > 2, regions
assert all(r == "eu-west-1" for r in regions[1:]), regions
print(len(regions))' >"$work/scopes" 2>&1 \
    && ok "proxy: the first request signed for us-east-1, all $(cat "$work/scopes") after for eu-west-1" \
    || bad "proxy scopes: $(cat "$work/scopes")"

[ "$fails" -eq 0 ] || exit 1
