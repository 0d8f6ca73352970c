#!/usr/bin/env bash
# bench/parquet_encode_wide.sh: peak RSS of `s3land write` for wide, incompressible rows, at 1x
# and 4x the input (run by hand, not in CI). Memory must follow --memory (default 48 MiB) plus a
# small multiple of the largest record, not the input size or --file-size: the 4x figures must
# equal the 1x ones. Cases: 128 KiB base64 strings (500 / 2000 rows) and 15 MiB strings
# (6 / 24 rows), each with a declared schema (the writer alone) and 1 and 4 lanes.
# Needs /usr/bin/time (Debian package time). Usage: bench/parquet_encode_wide.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
S3LAND=${S3LAND:-$build/s3land}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo '[{"name": "a", "type": "utf8", "nullable": true}]' > "$work/schema.json"

# make FILE ROWS RAW_BYTES: ROWS lines {"a": base64(random RAW_BYTES)}
make() {
    python3 -c "
import os, base64, sys
with open(sys.argv[1], 'w') as f:
    for _ in range(int(sys.argv[2])):
        f.write('{\"a\":\"' + base64.b64encode(os.urandom(int(sys.argv[3]))).decode() + '\"}\n')
" "$1" "$2" "$3"
}

# rss NAME INPUT ARGS...: one run, prints the peak RSS in MiB.
rss() {
    local name=$1 input=$2
    shift 2
    rm -rf "$work/lake"
    /usr/bin/time -v "$S3LAND" write -q --url "$work/lake" --table t \
        --schema "$work/schema.json" "$@" "$input" 2> "$work/time.log" >/dev/null
    local kb
    kb=$(awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$work/time.log")
    printf '%-34s input=%5d MiB  peak_rss=%5d MiB\n' "$name" \
        $(( $(stat -c %s "$input") >> 20 )) $(( kb >> 10 ))
}

make "$work/w1.ndjson" 500 98304
make "$work/w4.ndjson" 2000 98304
rss "128KiB rows 1x" "$work/w1.ndjson"
rss "128KiB rows 4x" "$work/w4.ndjson"
rss "128KiB rows 4x --lanes 4" "$work/w4.ndjson" --lanes 4
rm -f "$work/w1.ndjson" "$work/w4.ndjson"
make "$work/h1.ndjson" 6 $((15 * 1024 * 1024 * 3 / 4 - 30))
make "$work/h4.ndjson" 24 $((15 * 1024 * 1024 * 3 / 4 - 30))
rss "15MiB rows 1x" "$work/h1.ndjson"
rss "15MiB rows 4x" "$work/h4.ndjson"
rss "15MiB rows 4x --file-size 16MiB" "$work/h4.ndjson" --file-size 16MiB
rss "15MiB rows 4x --memory 16MiB" "$work/h4.ndjson" --memory 16MiB --row-group-size 8MiB
rss "15MiB rows 4x --lanes 4" "$work/h4.ndjson" --lanes 4
