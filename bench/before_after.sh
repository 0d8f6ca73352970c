#!/usr/bin/env bash
# Benchmark (run by hand, not in CI; issue 9's "no slowdown"): two builds of s3land on the same
# work, paired run by run in the same call, medians of REPEAT pairs and the ratio AFTER/BEFORE
# (above 1 means AFTER is slower).
#   1. bench/ndjson_to_parquet.sh's job: the flights NDJSON (3,000,000 rows, ~277 MB) to a Parquet
#      table on file://, zstd level 3, row groups of 122,880 rows, 1 lane, then 2 lanes
#      (farm-bench --vs: whole processes, A B A B ...).
#   2. bench/parquet_encode.sh's job: bench/parquet_encode.c of each tree, linked with that tree's
#      libs3land.a, writing the 3M-row flights table from memory with zstd (the row and the batch
#      API); each run prints its own encode seconds and CPU seconds, runs alternate A B A B ...
# Usage: bench/before_after.sh BEFORE_TREE AFTER_TREE
#   A tree is a source tree (e.g. `git archive REV | tar -x -C DIR`) with a Release build, in
#   TREE/build unless BEFORE_BUILD / AFTER_BUILD name another (`scripts/build.sh DIR
#   -DCMAKE_BUILD_TYPE=Release` run in the tree, or at least its targets s3land-cli and s3land).
#   env: REPEAT (default 5), BENCH_DIR (default /tmp/s3l-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: bench/before_after.sh BEFORE_TREE AFTER_TREE" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
REPEAT=${REPEAT:-5}
out=${BENCH_DIR:-/tmp/s3l-bench}
command -v farm-bench >/dev/null || { echo "bench: needs farm-bench" >&2; exit 1; }
before_build=$(realpath "${BEFORE_BUILD:-$before/build}")
after_build=$(realpath "${AFTER_BUILD:-$after/build}")
for b in "$before_build" "$after_build"; do
    [ -x "$b/s3land" ] && [ -f "$b/libs3land.a" ] ||
        { echo "bench: $b has no s3land and libs3land.a (build it Release first)" >&2; exit 1; }
done
mkdir -p "$out"
nd="$out/flights-3m.ndjson"
[ -s "$nd" ] || node bench/ndjson_to_parquet.mjs make "$nd"
cat > "$out/schema.json" <<'JSON'
[{"name": "date", "type": "timestamp[us]"}, {"name": "delay", "type": "int64"},
 {"name": "distance", "type": "int64"}, {"name": "origin", "type": "string"},
 {"name": "destination", "type": "string"}]
JSON
work=$(mktemp -d /tmp/s3l-before-after.XXXXXX)
trap 'rm -rf "$work"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "before: $before ($before_build)"
echo "after:  $after ($after_build)"
echo "== NDJSON -> Parquet (file://), $REPEAT pairs, farm-bench medians; ratio = after / before"
for lanes in 1 2; do
    cmd() { # cmd BUILD NAME: the write of bench/ndjson_to_parquet.sh, into a fresh lake
        echo "sh -c 'rm -rf $work/$2 && exec $1/s3land write --url $work/$2 --table flights \
--schema $out/schema.json --lanes $lanes --compression zstd --compression-level 3 \
--row-group-rows 122880 --quiet $nd'"
    }
    echo "-- lanes $lanes"
    eval farm-bench -n "$REPEAT" --warmup 1 --timeout 3000 --vs "\"$(cmd "$before_build" lake-b)\"" \
        -- "$(cmd "$after_build" lake-a)" | tee "$work/write-$lanes.txt"
    rows_b=$(node bench/ndjson_to_parquet.mjs rows "$work/lake-b/flights/*.parquet")
    rows_a=$(node bench/ndjson_to_parquet.mjs rows "$work/lake-a/flights/*.parquet")
    echo "   rows read back by DuckDB: before $rows_b, after $rows_a"
    # the row counts must agree (row groups may not with 2 lanes: which lane takes a batch varies)
    [ "$(sed 's/.*"rows":\([0-9]*\).*/\1/' <<<"$rows_a")" = "$(sed 's/.*"rows":\([0-9]*\).*/\1/' <<<"$rows_b")" ] ||
        { echo "bench: the two builds landed different row counts" >&2; exit 1; }
done

echo "== Parquet encode (bench/parquet_encode.c), $REPEAT alternating runs each, medians"
node --input-type=module -e "
import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false' });
const c = await db.connect();
await c.run(\"COPY (SELECT epoch_us(date), delay, distance, origin, destination FROM \" +
  \"'node_modules/vega-datasets/data/flights-3m.parquet') TO '$work/flights.csv' (HEADER false)\");
"
for side in before after; do
    t=${!side}
    b=${side}_build
    cc -O2 -g -std=c11 -I"$t/include" -I"$t/src/lib" "$t/bench/parquet_encode.c" \
        "${!b}/libs3land.a" $(pkg-config --libs libzstd snappy zlib jansson libcrypto) -lpthread -lm \
        -o "$work/pe-$side"
    mkdir -p "$work/pe-out-$side"
done
declare -A sec cpu
for _ in $(seq "$REPEAT"); do
    for side in before after; do
        "$work/pe-$side" "$work/flights.csv" "$work/pe-out-$side" 122880 3 1 > "$work/pe.txt"
        for api in rows batch; do
            l=$(grep "api=$api codec=zstd" "$work/pe.txt" || true)
            [ -n "$l" ] || continue
            sec[$side-$api]+="$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$l") "
            cpu[$side-$api]+="$(sed -n 's/.*cpu_seconds=\([0-9.]*\).*/\1/p' <<<"$l") "
        done
    done
done
printf '%-6s %10s %10s %8s %10s %10s %8s\n' api before_s after_s ratio before_cpu after_cpu ratio
for api in rows batch; do
    [ -n "${sec[before-$api]:-}" ] && [ -n "${sec[after-$api]:-}" ] || continue
    # shellcheck disable=SC2086
    bs=$(median ${sec[before-$api]}) as=$(median ${sec[after-$api]})
    # shellcheck disable=SC2086
    bc_=$(median ${cpu[before-$api]}) ac=$(median ${cpu[after-$api]})
    printf '%-6s %10.3f %10.3f %8.3f %10.3f %10.3f %8.3f\n' "$api" "$bs" "$as" \
        "$(echo "$as / $bs" | bc -l)" "$bc_" "$ac" "$(echo "$ac / $bc_" | bc -l)"
    echo "   runs: before ${sec[before-$api]}s, after ${sec[after-$api]}s"
done
echo "(ratio = after / before: 1.05 or below is issue 9's 'no slowdown'. The machine is shared:"
echo " quote the medians, look at the CPU columns, rerun when the spread is wide.)"
