#!/usr/bin/env bash
# The two-phase sink alone (issue 13, Build item 3), driven by tests/tools/twopc_engine: on
# file:// (integration.twopc_sink) and, with S3L_TEST_STORE=s3, on the s3 label's Ceph RGW
# (s3.twopc_sink). What landed is read back independently: on file:// with find and cmp, on RGW
# with the AWS CLI (s3 cp, head-object, list-multipart-uploads). Expected bytes are made here by
# python3 from the record rule, not asked of the sink:
#  1. commit round trip: one checkpoint of 13,000 records of 1,000 bytes is one object, byte for
#     byte; on RGW a multipart object of 3 parts (ETag "-3": 5 MiB, 5 MiB, the rest) carrying
#     the upload token in x-amz-meta-s3land-upload and Content-Type application/x-ndjson;
#  2. crash recovery: a process killed at before_commit leaves its upload pending and nothing
#     visible; a second process completes the committable from the saved state;
#  3. idempotent commit: a process killed at mid_complete (completed, answer lost); the second
#     process completes again, settled as done, the object unchanged (same ETag and mtime);
#  4. abort: an abandoned checkpoint is dropped (no pending upload, no object) and the job goes
#     on: its records land once, in the next checkpoint;
#  5. an empty interval makes no object and leaves no upload.
set -uo pipefail
SRC=${S3L_SOURCE_DIR:?}
ENGINE=${S3L_TOOLS_DIR:?}/twopc_engine
work=$(mktemp -d /tmp/s3l-twopc-sink-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() {
    [ -n "${own_rgw:-}" ] && "$SRC/tests/stores/stop-rgw.sh" "$own_rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    env_file=${S3L_RGW_ENV:-}
    if [ -z "$env_file" ]; then
        own_rgw=/tmp/s3land-rgw-twopc.$$
        RGW_DIR=$own_rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 || {
            cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
        env_file=$own_rgw/env
    fi
    # shellcheck disable=SC1090
    . "$env_file"
    unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
    kb="twopc-$$-$(date +%s)"
    store=(--endpoint "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
    aws_=(aws --endpoint-url "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
    url() { echo "s3://$RGW_BUCKET/$kb/$1"; }
    get() { "${aws_[@]}" s3 cp --quiet "s3://$RGW_BUCKET/$kb/$1/$2" "$3" 2>/dev/null || rm -f "$3"; }
    keys() { "${aws_[@]}" s3api list-objects-v2 --bucket "$RGW_BUCKET" --prefix "$kb/$1/" \
        --query 'Contents[].Key' --output text | tr '\t' '\n' | grep -v '^None$' | grep . |
        sed "s|^$kb/$1/||"; }
    pending() { "${aws_[@]}" s3api list-multipart-uploads --bucket "$RGW_BUCKET" \
        --prefix "$kb/$1/" --query 'Uploads[].Key' --output text | tr '\t' '\n' |
        grep -v '^None$' | grep -c .; }
    version() { "${aws_[@]}" s3api head-object --bucket "$RGW_BUCKET" --key "$kb/$1/$2" \
        --query '[ETag,LastModified]' --output text; }
else
    lake=$work/lake
    store=()
    url() { echo "file://$lake/$1"; }
    get() { cp "$lake/$1/$2" "$3" 2>/dev/null || rm -f "$3"; }
    keys() { (cd "$lake/$1" 2>/dev/null && find . -type f ! -name '.s3l-*' | sed 's|^\./||' | sort); }
    pending() { (cd "$lake/$1" 2>/dev/null && find . -name '.s3l-*' | grep -c .); }
    version() { stat -c '%i %Y' "$lake/$1/$2"; }
fi

# The bytes of records a..b of B bytes each, as the engine makes them.
gen() { python3 -c "import sys
a, b, n = map(int, sys.argv[1:])
sys.stdout.buffer.write(b''.join(b'%012d ' % i + b'x' * (n - 14) + b'\n' for i in range(a, b + 1)))" "$@"; }
run() { # run NAME LOG [ENV...] -- engine options
    local name=$1 log=$2
    shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" "$ENGINE" --url "$(url "$name")" "${store[@]}" --state "$work/$name.state" \
        --prefix p "$@" >>"$work/$log" 2>>"$work/$name.err"
}
key_of() { awk -v c="$2" '$1 == "prepared" && $2 == c {print $3}' "$work/$1"; }

# 1. Round trip.
run rt rt.out -- --records 13000 --interval 13000 --record-bytes 1000 ||
    bad "round trip: engine failed: $(cat "$work/rt.err")"
k=$(key_of rt.out 1)
[ "$(keys rt)" = "$k" ] && ok "round trip: one object, $k" || bad "round trip: objects $(keys rt)"
get rt "$k" "$work/rt.got"
gen 1 13000 1000 >"$work/rt.want"
cmp -s "$work/rt.got" "$work/rt.want" && ok "round trip: 13,000,000 bytes read back byte for byte" ||
    bad "round trip: read back differs"
[ "$(pending rt)" = 0 ] && ok "round trip: no pending upload" || bad "round trip: uploads pending"
if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    h=$("${aws_[@]}" s3api head-object --bucket "$RGW_BUCKET" --key "$kb/rt/$k" \
        --query '[ETag,ContentType,ContentLength,Metadata."s3land-upload"]' --output text)
    echo "$h" | grep -qE '^"[0-9a-f]{32}-3"	application/x-ndjson	13000000	[0-9a-f]{32}$' &&
        ok "round trip: a 3-part multipart object with the upload token and the content type" ||
        bad "round trip: head-object says '$h'"
fi

# 2. Crash recovery by a second process.
run cr cr.out S3L_CRASH_POINT=before_commit -- --records 100 --interval 100 --record-bytes 100
grep -q 'SIGKILL at point before_commit' "$work/cr.err" || bad "recovery: not killed at before_commit"
k=$(key_of cr.out 1)
[ "$(pending cr)" = 1 ] && [ -z "$(keys cr)" ] &&
    ok "recovery: killed before commit: one pending upload, nothing visible" ||
    bad "recovery: pending $(pending cr), objects $(keys cr)"
run cr cr2.out -- --records 100 --interval 100 --record-bytes 100 || bad "recovery: second run failed"
grep -q '^recovered 1$' "$work/cr2.out" && ok "recovery: the second process completed the committable" ||
    bad "recovery: $(cat "$work/cr2.out" "$work/cr.err")"
get cr "$k" "$work/cr.got"
gen 1 100 100 >"$work/cr.want"
cmp -s "$work/cr.got" "$work/cr.want" && [ "$(pending cr)" = 0 ] && [ "$(keys cr)" = "$k" ] &&
    ok "recovery: $k holds records 1..100; no pending upload" || bad "recovery: read back differs"

# 3. Idempotent commit: completed, answer lost, completed again.
run ic ic.out S3L_CRASH_POINT=mid_complete -- --records 100 --interval 100 --record-bytes 100
grep -q 'SIGKILL at point mid_complete' "$work/ic.err" || bad "idempotent: not killed at mid_complete"
k=$(key_of ic.out 1)
v1=$(version ic "$k")
run ic ic2.out -- --records 100 --interval 100 --record-bytes 100 || bad "idempotent: second run failed"
v2=$(version ic "$k")
grep -q '^recovered 1$' "$work/ic2.out" && [ -n "$v1" ] && [ "$v1" = "$v2" ] &&
    ok "idempotent: the repeated commit settled as done, the object unchanged ($v1)" ||
    bad "idempotent: '$v1' then '$v2': $(cat "$work/ic.err")"
get ic "$k" "$work/ic.got"
cmp -s "$work/ic.got" "$work/cr.want" && [ "$(pending ic)" = 0 ] &&
    ok "idempotent: records 1..100 once; no pending upload" || bad "idempotent: read back differs"

# 4. Abort: checkpoint 1 abandoned; its records land in checkpoint 2.
run ab ab.out -- --records 200 --interval 100 --record-bytes 100 --abort-ckpt 1 ||
    bad "abort: engine failed: $(cat "$work/ab.err")"
grep -q '^aborted 1$' "$work/ab.out" && grep -q '^done$' "$work/ab.out" &&
    ok "abort: checkpoint 1 dropped, the job went on" || bad "abort: $(cat "$work/ab.out")"
k1=$(key_of ab.out 1) k2=$(key_of ab.out 2) k3=$(key_of ab.out 3)
[ "$(keys ab | tr '\n' ' ')" = "$k2 $k3 " ] && [ "$(pending ab)" = 0 ] &&
    ok "abort: no object and no pending upload for $k1" || bad "abort: objects $(keys ab), pending $(pending ab)"
get ab "$k2" "$work/ab2.got"
get ab "$k3" "$work/ab3.got"
cat "$work/ab2.got" "$work/ab3.got" | cmp -s - <(gen 1 200 100) &&
    ok "abort: records 1..200 once each, in checkpoints 2 and 3" || bad "abort: read back differs"

# 5. Empty interval.
run em em.out -- --records 200 --interval 100 --record-bytes 100 --empty-every 2 ||
    bad "empty: engine failed: $(cat "$work/em.err")"
grep -q '^prepared 2 empty$' "$work/em.out" && [ "$(keys em | wc -l)" = 2 ] &&
    ! keys em | grep -q -- '-00000000000000000002\.ndjson$' && [ "$(pending em)" = 0 ] &&
    ok "empty: checkpoint 2 made no object and left no upload" ||
    bad "empty: objects $(keys em), pending $(pending em)"

[ $fails -eq 0 ] && echo "# two-phase sink: all ok" || echo "# two-phase sink: $fails failed"
[ $fails -eq 0 ]
