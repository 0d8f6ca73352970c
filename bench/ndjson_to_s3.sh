#!/usr/bin/env bash
# Benchmark (run by hand, not in CI; issue 14): the flights NDJSON (3,000,000 rows, ~277 MB, made
# from vega-datasets' flights-3m.parquet by bench/ndjson_to_parquet.mjs) written by s3land to S3
# (Ceph RGW on 127.0.0.1, tests/stores/start-rgw.sh) and to file:// on the same input, the same
# schema and settings (zstd, 1 lane, three epochs of 1,000,000 rows), paired run by run in the
# same call (farm-bench: A B A B ..., medians of REPEAT pairs, the ratio pair by pair). Then the
# same with DELAY_MS (default 30) added to every answer by tests/support/fault-proxy.mjs, which
# shows whether the store's latency is hidden or paid once per request. Then what a user would
# do instead (issue 14's second goal, s3land at most 0.25x its time): DuckDB's COPY of the same
# NDJSON, with the same columns, to a local zstd Parquet file (level 3, as s3land's default;
# DuckDB's own thread count), then `aws s3 cp` of that file to the same RGW, paired with s3land's
# s3:// run in the same call. Last, the requests per epoch from `--json` (by S3 operation), for
# this build and, with BEFORE=path/to/s3land, for another one (e.g. main's) on the same input.
# Usage: bench/ndjson_to_s3.sh [BUILD_DIR]
#   env: S3L_RGW_ENV (a running store's env file; else one is started here and stopped at the
#        end), BEFORE (a second s3land binary for the requests table), REPEAT (default 5),
#        DELAY_MS (default 30; 0 skips the delayed pairs), BENCH_DIR (default /tmp/s3l-bench),
#        USER_PAIRS (default 1; 0 skips the DuckDB + aws s3 cp pairs)
#   needs: farm-bench, node with @duckdb/node-api (node_modules), the AWS CLI (aws: .ci/run's
#        deps install it), curl
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
S3LAND=$(realpath "${S3LAND:-$build/s3land}")
out=${BENCH_DIR:-/tmp/s3l-bench}
REPEAT=${REPEAT:-5}
DELAY_MS=${DELAY_MS:-30}
command -v farm-bench >/dev/null || { echo "bench: needs farm-bench" >&2; exit 1; }
USER_PAIRS=${USER_PAIRS:-1}
[ -z "${BEFORE:-}" ] || [ -x "$BEFORE" ] || { echo "bench: BEFORE=$BEFORE is not an executable" >&2; exit 1; }
[ "$USER_PAIRS" = 0 ] || command -v aws >/dev/null ||
    { echo "bench: needs the AWS CLI (aws) for the DuckDB + aws s3 cp pairs (USER_PAIRS=0 skips them)" >&2; exit 1; }
mkdir -p "$out"
nd="$out/flights-3m.ndjson"
[ -s "$nd" ] || node bench/ndjson_to_parquet.mjs make "$nd"
cat > "$out/schema.json" <<'JSON'
[{"name": "date", "type": "timestamp[us]"}, {"name": "delay", "type": "int64"},
 {"name": "distance", "type": "int64"}, {"name": "origin", "type": "string"},
 {"name": "destination", "type": "string"}]
JSON

work=$(mktemp -d /tmp/s3l-bench-s3.XXXXXX)
proxy_pid=
cleanup() {
    [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null || true
    [ -n "${rgw_dir:-}" ] && tests/stores/stop-rgw.sh "$rgw_dir" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
if [ -n "${S3L_RGW_ENV:-}" ]; then
    env_file=$S3L_RGW_ENV
else
    rgw_dir=$work/rgw
    RGW_DIR=$rgw_dir tests/stores/start-rgw.sh >/dev/null
    env_file=$rgw_dir/env
fi
# shellcheck disable=SC1090
. "$env_file"
unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN S3LAND_TRACE
direct=$AWS_ENDPOINT_URL_S3

# One write; the lake is new for each run ($$ of the shell that runs it), so every run lands
# three epochs from scratch on both sides.
args="--table flights --schema $out/schema.json --compression zstd --epoch-rows 1000000 --quiet $nd"

pair() { # pair TITLE ENDPOINT BINARY
    local s3_cmd="exec $3 write --url s3://$RGW_BUCKET/bench-\$\$ $args"
    local file_cmd="exec $3 write --url $work/lake-\$\$ $args"
    echo "== $1: s3:// (A) against file:// (B), $REPEAT pairs, $3"
    AWS_ENDPOINT_URL_S3=$2 farm-bench -n "$REPEAT" --timeout 1200 --vs "sh -c '$file_cmd'" \
        -- sh -c "$s3_cmd"
    rm -rf "$work"/lake-*
}
pair "RGW on 127.0.0.1" "$direct" "$S3LAND"

# s3land to s3:// (A) against what a user would do instead (B): DuckDB's COPY to a local Parquet
# file, then the AWS CLI's upload of it (multipart, its default 8 MiB parts, 10 at once), both to
# the same RGW; the local file is removed after each run (its rm is in B's time: microseconds).
# Twice: s3land with 1 lane (the settings above), then with as many lanes as DuckDB has threads.
if [ "$USER_PAIRS" != 0 ]; then
    s3_cmd="exec $S3LAND write --url s3://$RGW_BUCKET/bench-\$\$ $args"
    duck="$work/duck-\$\$.parquet"
    user_cmd="node bench/ndjson_to_parquet.mjs copy $nd $duck $(nproc) 3 122880 >/dev/null &&"
    user_cmd+=" aws --endpoint-url $direct s3 cp --quiet $duck s3://$RGW_BUCKET/bench-duck-\$\$/flights.parquet;"
    user_cmd+=" st=\$?; rm -f $duck; exit \$st"
    echo "== RGW on 127.0.0.1: s3land s3:// (A) against DuckDB COPY to a local file + aws s3 cp (B), $REPEAT pairs"
    farm-bench -n "$REPEAT" --timeout 2400 --vs "sh -c '$user_cmd'" -- sh -c "$s3_cmd"
    # DuckDB uses every core ($(nproc) threads): the same with s3land given as many lanes.
    lanes=$(nproc)
    s3_cmd="exec $S3LAND write --lanes $lanes --url s3://$RGW_BUCKET/bench-\$\$ $args"
    echo "== the same, s3land with --lanes $lanes (DuckDB's threads), $REPEAT pairs"
    farm-bench -n "$REPEAT" --timeout 2400 --vs "sh -c '$user_cmd'" -- sh -c "$s3_cmd"
fi
[ -n "${BEFORE:-}" ] && pair "RGW on 127.0.0.1, the BEFORE build" "$direct" "$(realpath "$BEFORE")"

if [ "$DELAY_MS" != 0 ]; then
    node tests/support/fault-proxy.mjs --target "$direct" > "$work/proxy.out" &
    proxy_pid=$!
    for _ in $(seq 50); do grep -q LISTENING "$work/proxy.out" && break; sleep 0.1; done
    port=$(sed -n 's/^LISTENING //p' "$work/proxy.out")
    rules=$(node -e 'const ops = ["PutObject", "GetObject", "HeadObject", "HeadBucket",
        "ListObjectsV2", "DeleteObject", "DeleteObjects", "CopyObject", "CreateMultipartUpload",
        "UploadPart", "UploadPartCopy", "CompleteMultipartUpload", "AbortMultipartUpload"];
        console.log(JSON.stringify(ops.map((op) => ({ op, times: -1, action: "slow",
        delayMs: Number(process.argv[1]) }))))' "$DELAY_MS")
    curl -s -X POST --data "$rules" "http://127.0.0.1:$port/__proxy/rules" >/dev/null
    pair "RGW behind the fault proxy, ${DELAY_MS} ms added to every answer" "http://127.0.0.1:$port" \
        "$S3LAND"
    [ -n "${BEFORE:-}" ] && pair "the same, the BEFORE build" "http://127.0.0.1:$port" \
        "$(realpath "$BEFORE")"
fi

# Requests per epoch, by S3 operation, from the --json events (one run each).
requests() { # requests LABEL BINARY
    "$2" write --url "s3://$RGW_BUCKET/bench-req-$1-$$" ${args/--quiet/--json} 2>/dev/null |
        node -e 'let s = ""; process.stdin.on("data", (d) => s += d).on("end", () => {
            for (const l of s.split("\n").filter(Boolean)) {
                const e = JSON.parse(l);
                if (e.event === "commit" && e.requests)
                    console.log(`${process.argv[1]} epoch ${e.epoch}: ${e.requests.total} ` +
                        JSON.stringify(e.requests.ops));
                if (e.event === "summary")
                    console.log(`${process.argv[1]} run: ` + (e.requests ? `${e.requests.total} ` +
                        JSON.stringify(e.requests.ops) : "(no requests reported by this build)"));
            } })' "$1"
}
echo "== requests (S3), three epochs of 1,000,000 rows"
requests this "$S3LAND"
[ -n "${BEFORE:-}" ] && requests before "$(realpath "$BEFORE")"
echo "(farm-bench's ratio is A/B: s3:// time over file:// time; the goal of issue 14 is <= 1.2 on"
echo " loopback and <= 1.5 with the delay; against DuckDB + aws s3 cp, A/B <= 0.25. The before-build counts its requests the same way"
echo " when it reports them; main before issue 14 item 4 does not: count its trace instead.)"
