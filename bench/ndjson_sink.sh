#!/usr/bin/env bash
# bench/ndjson_sink.sh (run by hand, not in CI; issue 13, Done when): the same NDJSON bytes
# (vega-datasets' flights-200k as lines, 10 times: 2,000,000 lines, ~98 MB) sent to the test
# store (Ceph RGW on 127.0.0.1, tests/stores/start-rgw.sh) three ways, in one run, interleaved
# (2pc, text, aws, 2pc, text, aws, ...), REPEAT times each:
#   2pc   the two-phase sink (exactly once) through bench/ndjson_sink.c: one checkpoint per
#         64 MiB, part_size 5 MiB (the default), each prepared and committed;
#   text  the rolling text sink (at most once): part objects of rollover_bytes (16 MiB default);
#   aws   `aws s3 cp FILE s3://...` of the input file (Debian's awscli, its default settings).
# Each side is timed as a process (/usr/bin/time: wall time and peak RSS); the medians give lines/s
# and MB/s (10^6 bytes), and the ratio of each sink's throughput to the AWS CLI's (goal: >= 1,
# at least as fast). Each sink's peak RSS is checked against P x (parts in flight + 2) + 16 MiB,
# P the bytes a part holds (part_size; rollover_bytes for the text sink), in flight the S3
# client's default 4. Every object is read back (`aws s3 cp`) once and compared with the input.
# Usage: bench/ndjson_sink.sh [BUILD_DIR]
#   env: S3L_RGW_ENV (a running store's env file; else one is started here and stopped at the
#        end), REPEAT (default 5), COPIES (default 10: copies of flights-200k in the input)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
REPEAT=${REPEAT:-5}
COPIES=${COPIES:-10}
[ -f "$build/libs3land.a" ] || scripts/build.sh "$build"
command -v aws >/dev/null || { echo "bench: needs the AWS CLI (apt-get install awscli)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d /tmp/s3land-bench-sink.XXXXXX)
cleanup() {
    [ -n "${rgw_dir:-}" ] && tests/stores/stop-rgw.sh "$rgw_dir" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# shellcheck disable=SC2046
cc -O2 -std=c11 -I include bench/ndjson_sink.c "$build/libs3land.a" \
    $(pkg-config --libs libcurl expat libcrypto libzstd snappy zlib uuid jansson) -lpthread -lm \
    -o "$work/ndjson_sink"

input=$work/flights.ndjson
node -e '
const d = require(process.argv[1]);
const s = d.map((r) => JSON.stringify(r)).join("\n") + "\n";
const fs = require("fs"), fd = fs.openSync(process.argv[2], "w");
for (let i = 0; i < Number(process.argv[3]); i++) fs.writeSync(fd, s);
fs.closeSync(fd);' "$PWD/node_modules/vega-datasets/data/flights-200k.json" "$input" "$COPIES"
lines=$(wc -l <"$input")
bytes=$(wc -c <"$input")

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
base=bench-sink-$$
PART=$((5 << 20))
ROLL=$((16 << 20))
IN_FLIGHT=4

run() { # run SIDE I: one timed run; appends "SIDE seconds maxrss_kib" to $work/times
    local side=$1 i=$2 dst="s3://$RGW_BUCKET/$base/$1-$2"
    local cmd
    case $side in
    2pc | text)
        cmd=("$work/ndjson_sink" --sink "$side" --url "$dst" --endpoint "$RGW_ENDPOINT"
             --region "$AWS_DEFAULT_REGION" --prefix e) ;;
    aws) cmd=(aws --endpoint-url "$RGW_ENDPOINT" s3 cp --quiet "$input" "$dst/e/all.ndjson") ;;
    esac
    /usr/bin/time -f "%e %M" -o "$work/time.out" "${cmd[@]}" <"$input" >"$work/run.out"
    echo "$side $(cat "$work/time.out")" >>"$work/times"
    if [ "$i" = 1 ]; then # read back once: the objects, in key order, are the input
        rm -rf "$work/back" && mkdir "$work/back"
        aws --endpoint-url "$RGW_ENDPOINT" s3 cp --quiet --recursive "$dst/" "$work/back/"
        (cd "$work/back/e" && find . -type f | sed 's|^\./||' |
            awk '{ n = $0; sub(/^part-/, "", n); print n "\t" $0 }' | sort -n | cut -f2 |
            xargs cat) | cmp -s - "$input" ||
            { echo "bench: $side: what was read back differs from the input" >&2; exit 1; }
    fi
    aws --endpoint-url "$RGW_ENDPOINT" s3 rm --quiet --recursive "$dst/"
}

echo "input: $lines lines, $bytes bytes; $REPEAT runs of each side, interleaved"
for i in $(seq "$REPEAT"); do
    for side in 2pc text aws; do run "$side" "$i"; done
done

awk -v lines="$lines" -v bytes="$bytes" -v part="$PART" -v roll="$ROLL" -v fl="$IN_FLIGHT" '
function median(side,   n, i, j, t, v) {
    n = 0
    for (i = 1; i <= N; i++) if (S[i] == side) v[++n] = T[i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{ N++; S[N] = $1; T[N] = $2; if ($3 > R[$1]) R[$1] = $3 }
END {
    a = median("aws")
    printf "%-5s %9s %12s %8s %14s %12s %13s\n", "side", "median s", "lines/s", "MB/s", "vs aws s3 cp", "peak RSS MiB", "bound MiB"
    split("2pc text aws", sides, " ")
    bad = 0
    for (k = 1; k <= 3; k++) {
        s = sides[k]; m = median(s)
        p = s == "2pc" ? part : roll
        bound = s == "aws" ? 0 : (p * (fl + 2) + 16 * 1048576) / 1048576
        rss = R[s] / 1024
        printf "%-5s %9.2f %12.0f %8.2f %13.2fx %12.1f %13s\n", s, m, lines / m, bytes / m / 1e6, a / m, rss, s == "aws" ? "-" : sprintf("%.0f", bound)
        if (s != "aws" && rss > bound) { print "bench: " s ": peak RSS " rss " MiB above its bound " bound " MiB"; bad = 1 }
    }
    print "(vs aws s3 cp: the sink'"'"'s throughput over the AWS CLI'"'"'s, from the medians; >= 1 is at least as fast)"
    exit bad
}' "$work/times"
