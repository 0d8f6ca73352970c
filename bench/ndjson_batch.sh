#!/usr/bin/env bash
# Benchmark (run by hand, not in CI): NDJSON -> one Parquet file through the library alone
# (bench/ndjson_batch.c: s3l__reader_next_lines + s3l__convert_fast_lines into the Parquet writer),
# with column batches and row by row, REPEAT times each, alternating; prints the CPU time
# (task-clock, ms) of each run, min and median per mode, and checks that both files are
# byte-identical. Input: the flights NDJSON of bench/ndjson_to_parquet.sh (BENCH_DIR).
# Usage: bench/ndjson_batch.sh [BUILD_DIR]   (a RelWithDebInfo or Release build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${BENCH_DIR:-/tmp/s3l-bench}
REPEAT=${REPEAT:-5}
[ -s "$out/flights-3m.ndjson" ] && [ -s "$out/schema.json" ] ||
    { echo "run bench/ndjson_to_parquet.sh first (it makes the input)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -g -std=c11 -Iinclude -Isrc/lib bench/ndjson_batch.c "$build/libs3land.a" \
    $(pkg-config --libs libzstd snappy zlib jansson) -lpthread -lm -o "$work/ndjson_batch"
for _ in $(seq "$REPEAT"); do
    for m in batch rows; do
        perf stat -x, -e task-clock "$work/ndjson_batch" "$out/schema.json" \
            "$out/flights-3m.ndjson" "$work/$m.parquet" "$m" 2>&1 |
            awk -F, -v m=$m '/task-clock/ {print m, $1}'
    done
done | sort -k1,1 -k2n | awk '{c[$1]++; v[$1, c[$1]] = $2; a[$1] = a[$1] " " int($2)}
    END {for (k in c) printf "%-6s min %d ms, median %d ms:%s\n", k, v[k, 1], v[k, int((c[k] + 1) / 2)], a[k]}'
cmp "$work/batch.parquet" "$work/rows.parquet" && echo "batch and rows files are byte-identical"
