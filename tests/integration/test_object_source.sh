#!/usr/bin/env bash
# The object source through `s3land cat --url URL` (issue 13, Build items 4 and 7): on file://
# (integration.object_source) and, with S3L_TEST_STORE=s3, on the s3 label's Ceph RGW
# (s3.object_source). The objects are landed by the sinks as an engine would (the text sink by
# tests/tools/text_sink_feed, the two-phase sink by tests/tools/twopc_engine) and by hand (gzip
# and zstd objects made by the gzip and zstd commands); what cat prints is compared with the
# input lines, computed here (node from vega-datasets, python3 for the engine's records), and on
# RGW also with every object fetched by `aws s3 cp` and concatenated:
#  1. a real data set (vega-datasets cars.json as one JSON object per line) landed by the text
#     sink in more than 10 parts: cat gives the lines in the order written (part-10 after
#     part-2, not bytewise);
#  2. the same lines in parts of which some are gzip and zstd objects, plus a key under
#     _openetl/ that is never read;
#  3. the two-phase sink over two runs (a restart from the engine's state) and a checkpoint left
#     pending by a kill at before_commit: cat gives records 1..N in run then checkpoint order,
#     once each, and never the pending upload's records (it is not an object);
#  4. `connectors --json` lists the source's capability record.
# shellcheck source=tests/integration/lib.sh
. "${S3L_SOURCE_DIR:?}/tests/integration/lib.sh" object-source
FEED=${S3L_TOOLS_DIR:?}/text_sink_feed
ENGINE=${S3L_TOOLS_DIR:?}/twopc_engine

if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    s3l_rgw objsrc
    unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
    kb="objsrc-$$-$(date +%s)"
    store=(--endpoint "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
    aws_=(aws --endpoint-url "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
    url() { echo "s3://$RGW_BUCKET/$kb/$1"; }
    # The files of local directory $2 as the objects under $1/ (one aws s3 cp --recursive).
    putdir() { "${aws_[@]}" s3 cp --recursive --quiet "$2/" "s3://$RGW_BUCKET/$kb/$1/"; }
    # Every object under $1/ by `aws s3 cp`, in the order the names give, concatenated, blank
    # lines dropped, gzip/zstd decompressed by their commands. The order: $2 (a sort command;
    # default sort -V, numbers as numbers).
    fetch_all() {
        local order=${2:-sort -V}
        rm -rf "$work/snap"
        mkdir -p "$work/snap"
        "${aws_[@]}" s3 cp --recursive --quiet "s3://$RGW_BUCKET/$kb/$1/" "$work/snap/" ||
            bad "aws s3 cp --recursive $1 failed"
        (cd "$work/snap" && find . -type f ! -path './_openetl/*' | sed 's|^\./||' | $order |
            while read -r k; do
                case $k in
                *.gz) gzip -dc "$k" ;;
                *.zst) zstd -qdc "$k" ;;
                *) cat "$k" ;;
                esac
            done) | grep -v '^$'
    }
    pending() { "${aws_[@]}" s3api list-multipart-uploads --bucket "$RGW_BUCKET" \
        --prefix "$kb/$1/" --query 'Uploads[].Key' --output text | tr '\t' '\n' |
        grep -v '^None$' | grep -c .; }
else
    lake=$work/lake
    store=()
    url() { echo "file://$lake/$1"; }
    putdir() { mkdir -p "$lake/$1" && cp -r "$2/." "$lake/$1/"; }
    fetch_all() { :; }
    pending() { (cd "$lake/$1" 2>/dev/null && find . -name '.s3l-mpu-*' | grep -c .); }
fi

data=$SRC/node_modules/vega-datasets/data/cars.json
[ -s "$data" ] || { echo "not ok - $data missing"; exit 1; }
node -e 'for (const r of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")))
    console.log(JSON.stringify(r))' "$data" >"$work/cars.ndjson"
lines=$(wc -l <"$work/cars.ndjson")

# 1. Text sink parts, more than 10 of them.
timeout 300 "$FEED" --url "$(url ts)" "${store[@]}" --prefix events --rollover 4096 \
    <"$work/cars.ndjson" >"$work/feed.out" || bad "text sink feed failed"
parts=$(awk '$1 == "records" {p = $4} END {print p + 0}' "$work/feed.out")
[ "${parts:-0}" -gt 10 ] || bad "text sink: only ${parts:-0} parts (need more than 10 for part-10)"
timeout 300 "$S3LAND" cat --url "$(url ts)/events" "${store[@]}" >"$work/ts.cat" 2>"$work/ts.err" ||
    bad "cat of the text sink's parts failed: $(cat "$work/ts.err")"
cmp -s "$work/ts.cat" "$work/cars.ndjson" &&
    ok "text sink: cat gives the $lines lines of cars.json in order, across $parts parts" ||
    bad "text sink: cat differs from the input ($(wc -l <"$work/ts.cat") lines)"
if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    fetch_all ts/events >"$work/ts.aws"
    cmp -s "$work/ts.cat" "$work/ts.aws" &&
        ok "text sink: cat equals every object by aws s3 cp, concatenated" ||
        bad "text sink: cat differs from aws s3 cp's objects"
fi

# 2. Parts of 37 lines, every third gzip and every fifth zstd (by the commands), and metadata.
split -l 37 -d -a 3 "$work/cars.ndjson" "$work/chunk-"
mkdir -p "$work/mix/_openetl/checkpoints"
n=0
for f in "$work"/chunk-*; do
    if [ $((n % 3)) = 1 ]; then
        gzip -c "$f" >"$work/mix/part-$n.gz"
    elif [ $((n % 5)) = 2 ]; then
        zstd -q -c "$f" >"$work/mix/part-$n.zst"
    else
        cp "$f" "$work/mix/part-$n"
    fi
    n=$((n + 1))
done
echo '{"never":"shown"}' >"$work/mix/_openetl/checkpoints/p.json"
putdir mix "$work/mix"
timeout 300 "$S3LAND" --json cat --url "$(url mix)" "${store[@]}" >"$work/mix.cat" 2>"$work/mix.err" ||
    bad "cat of mixed parts failed: $(cat "$work/mix.err")"
cmp -s "$work/mix.cat" "$work/cars.ndjson" &&
    ok "mixed: cat decompresses the .gz and .zst parts, $n parts in number order, _openetl/ never read" ||
    bad "mixed: cat differs from the input ($(wc -l <"$work/mix.cat") lines)"
grep -q "\"objects\": *$n," "$work/mix.err" || bad "mixed: summary '$(cat "$work/mix.err")'"
if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    fetch_all mix >"$work/mix.aws"
    cmp -s "$work/mix.cat" "$work/mix.aws" &&
        ok "mixed: cat equals every object by aws s3 cp, decompressed, concatenated" ||
        bad "mixed: cat differs from aws s3 cp's objects"
fi

# 3. Two-phase sink: two runs, then a run killed at before_commit (its upload pending).
gen() { python3 -c "import sys
a, b, n = map(int, sys.argv[1:])
sys.stdout.buffer.write(b''.join(b'%012d ' % i + b'x' * (n - 14) + b'\n' for i in range(a, b + 1)))" "$@"; }
eng() { "$ENGINE" --url "$(url tp)" "${store[@]}" --state "$work/tp.state" --prefix p \
    --interval 300 --record-bytes 200 "$@"; }
eng --records 1500 >"$work/tp1.out" 2>"$work/tp1.err" || bad "2pc run 1 failed: $(cat "$work/tp1.err")"
sleep 0.01 # a later run's start time (its name's milliseconds)
eng --records 3000 >"$work/tp2.out" 2>"$work/tp2.err" || bad "2pc run 2 failed: $(cat "$work/tp2.err")"
S3L_CRASH_POINT=before_commit eng --records 3300 >"$work/tp3.out" 2>"$work/tp3.err"
grep -q 'SIGKILL at point before_commit' "$work/tp3.err" || bad "2pc run 3 was not killed at before_commit"
[ "$(pending tp)" = 1 ] || bad "2pc: $(pending tp) pending uploads, expected 1"
timeout 300 "$S3LAND" cat --url "$(url tp)" "${store[@]}" >"$work/tp.cat" 2>"$work/tp.err" ||
    bad "cat of the 2pc objects failed: $(cat "$work/tp.err")"
gen 1 3000 200 >"$work/tp.want"
cmp -s "$work/tp.cat" "$work/tp.want" &&
    ok "2pc: cat gives records 1..3000 once each in run and checkpoint order; the pending upload's 3001..3300 never shown" ||
    bad "2pc: cat differs ($(wc -l <"$work/tp.cat") lines, expected 3000)"
if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    # p/sub0-<13 digits ms><8 hex>-<20 digits>.ndjson: fixed widths, so by the run's
    # milliseconds (characters 1-13 of field 2), then the checkpoint (field 3), as text.
    fetch_all tp "sort -t- -k2.1,2.13 -k3,3" >"$work/tp.aws"
    cmp -s "$work/tp.cat" "$work/tp.aws" &&
        ok "2pc: cat equals every object by aws s3 cp, concatenated" ||
        bad "2pc: cat differs from aws s3 cp's objects"
fi

# 4. The capability record.
"$S3LAND" connectors --json | node -e '
const k = require("fs").readFileSync(0, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const s = k.find((o) => o.name === "s3_ndjson_source");
process.exit(s && s.delivery === "exactly_once" && /s3:ListBucket/.test(s.needs) &&
    /s3:GetObject/.test(s.needs) ? 0 : 1);' &&
    ok "connectors --json: s3_ndjson_source exactly_once, needs s3:ListBucket, s3:GetObject" ||
    bad "connectors --json lacks the source's record"

# 5. A bad URL and a missing --url are usage errors naming what is wrong.
"$S3LAND" cat >/dev/null 2>"$work/u.err"
[ $? = 1 ] && grep -q -- '--url' "$work/u.err" && ok "cat without --url: exit 1, naming --url" ||
    bad "cat without --url: $(cat "$work/u.err")"

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
