#!/usr/bin/env bash
# A Destination's spec.config.sse, sseKmsKeyId and storageClass (issue 12, routed as write's --sse,
# --sse-kms-key-id and --storage-class, src/cli/sse.c) on Ceph RGW with its testing KMS backend
# (tests/stores/start-rgw.sh: keys testkey-1, testkey-2); the s3 label's gateway (S3L_RGW_ENV) or
# one started here. `run` of a Pipeline with two sources lands both tables, and HeadObject (the
# AWS CLI, not s3land) shows every object under the prefix -- committed data files, markers, the
# checkpoint, the schema records -- as aws:kms with testkey-1; the rows read back through RGW's
# decryption (ls --committed, the files' footers) are the rows given. `recover --config` takes
# the same settings. Bad values are refused before anything moves: an unknown storage class
# (exit 1, the valid ones named), a KMS key without sse aws:kms (exit 1), and spec.config.checksum
# (exit 6, with the reason: not supported).
# shellcheck source=tests/integration/lib.sh
. "${S3L_SOURCE_DIR:?}/tests/integration/lib.sh" run-sse
s3l_rgw runsse
unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN AWS_PROFILE
aws() { command aws --endpoint-url "$RGW_ENDPOINT" "$@"; }
cd "$work"
prefix="run-sse-$$-$(date +%s)"
python3 -c 'import json
for i in range(3000): print(json.dumps({"id": i, "name": "n%d" % i}))' >a.ndjson
python3 -c 'import json
for i in range(700): print(json.dumps({"k": "k%d" % i, "v": i * 0.5}))' >b.ndjson

dest() { # URL [extra config lines]
    { printf 'apiVersion: openetl.io/v1alpha1\nkind: Destination\nmetadata:\n  name: rgw\nspec:\n  connector: s3\n  config:\n    url: %s\n    endpoint: %s\n    region: %s\n    accessKeyId: { secret: RGW_KEY }\n    secretAccessKey: { secret: RGW_SECRET }\n' \
        "$1" "$RGW_ENDPOINT" "$AWS_REGION"
      shift
      for l in "$@"; do printf '    %s\n' "$l"; done
      printf -- '---\napiVersion: openetl.io/v1alpha1\nkind: Pipeline\nmetadata:\n  name: enc\nspec:\n  destination:\n    name: rgw\n  delivery:\n    commit:\n      interval: 1h\n  sources:\n    - name: a\n      files: [a.ndjson]\n    - name: b\n      files: [b.ndjson]\n'
    } >"$work/p.yaml"
}
export S3LAND_SECRET_RGW_KEY=$AWS_ACCESS_KEY_ID S3LAND_SECRET_RGW_SECRET=$AWS_SECRET_ACCESS_KEY

url="s3://$RGW_BUCKET/$prefix"
dest "$url" "sse: aws:kms" "sseKmsKeyId: testkey-1" "storageClass: STANDARD"
S3LAND_TRACE=$work/trace "$S3LAND" run --config p.yaml >run.out 2>run.err
st=$?
[ "$st" = 0 ] && ok "run with sse: aws:kms, sseKmsKeyId: testkey-1, storageClass: STANDARD" \
    || bad "run with SSE-KMS: exit $st: $(cat run.err)"
# The headers went out: every PutObject and CreateMultipartUpload of the run carried them (the
# trace names the operations; HeadObject below is the store's own word on each object).
n_put=$(grep -c '"op":"\(PutObject\|CreateMultipartUpload\)"' trace)
[ "$n_put" -ge 4 ] && ok "$n_put PutObject / CreateMultipartUpload requests traced" \
    || bad "only $n_put PutObject / CreateMultipartUpload requests in the trace"
aws s3api list-objects-v2 --bucket "$RGW_BUCKET" --prefix "$prefix/" \
    --query 'Contents[].Key' --output text | tr '\t' '\n' | grep -v '^None$' >keys
n_data=$(grep -c '\.parquet$' keys)
n_markers=$(grep -c '_openetl/markers/' keys)
n_ckpt=$(grep -c '_openetl/checkpoints/' keys)
[ "$n_data" -ge 2 ] && [ "$n_markers" -ge 2 ] && [ "$n_ckpt" -ge 1 ] \
    && ok "$n_data data files, $n_markers markers and $n_ckpt checkpoint(s) landed" \
    || bad "expected >= 2 data files and markers and a checkpoint: $(cat keys)"
wrong=0
while read -r key; do
    h=$(aws s3api head-object --bucket "$RGW_BUCKET" --key "$key" \
        --query '[ServerSideEncryption, SSEKMSKeyId]' --output text)
    [ "$h" = "aws:kms	testkey-1" ] || { wrong=$((wrong + 1)); echo "# $key: $h"; }
done <keys
[ "$wrong" -eq 0 ] && [ -s keys ] \
    && ok "HeadObject: every one of $(wc -l <keys) objects is aws:kms with testkey-1" \
    || bad "$wrong objects without aws:kms / testkey-1"
for t in a:3000 b:700; do
    "$S3LAND" ls --url "$url" --endpoint "$RGW_ENDPOINT" --table "${t%%:*}" --committed --json \
        >ls.json 2>ls.err
    rows=$(python3 -c 'import json,sys
print(sum(e.get("rows", 0) for e in map(json.loads, open(sys.argv[1])) if "file" in e))' ls.json)
    [ "$rows" = "${t#*:}" ] && ok "table ${t%%:*}: the committed files' footers hold $rows rows" \
        || bad "table ${t%%:*}: rows read back $rows, expected ${t#*:} ($(cat ls.err))"
done
"$S3LAND" --quiet recover --config p.yaml >rec.out 2>&1 \
    && ok "recover --config takes the Destination's encryption" || bad "recover --config: $(cat rec.out)"

# refused before anything moves
check_refused() { # want-exit pattern description config-lines...
    local want=$1 pat=$2 what=$3
    shift 3
    dest "$url-bad" "$@"
    "$S3LAND" run --config p.yaml >b.out 2>b.err
    local rc=$?
    [ "$rc" = "$want" ] && grep -q "$pat" b.err && ok "$what: exit $rc ($(head -1 b.err))" \
        || bad "$what: exit $rc, $(cat b.err)"
}
check_refused 1 "GLACIER_IR" "storageClass: GLACIER_XX" "storageClass: GLACIER_XX"
check_refused 1 "without server-side encryption aws:kms" "sseKmsKeyId without sse" \
    "sseKmsKeyId: testkey-1"
check_refused 1 "without server-side encryption aws:kms" "sseKmsKeyId with sse: AES256" \
    "sse: AES256" "sseKmsKeyId: testkey-1"
check_refused 6 "spec.config.checksum CRC32C is not supported" "checksum: CRC32C" \
    "checksum: CRC32C"
left=$(aws s3api list-objects-v2 --bucket "$RGW_BUCKET" --prefix "$prefix-bad/" \
    --query 'length(Contents || `[]`)' --output text)
[ "$left" = 0 ] && ok "nothing written by the refused runs" || bad "refused runs wrote $left"
if grep -rqF -e "$AWS_SECRET_ACCESS_KEY" ./*.out ./*.err trace; then
    bad "the secret key appears in an output"
else
    ok "no secret in any output or the trace"
fi
[ "$fails" -eq 0 ] && echo "all ok"
exit $((fails > 0))
