#!/usr/bin/env bash
# Benchmark (run by hand, not in CI): NDJSON -> Parquet with zstd, s3land vs DuckDB, one after the
# other on the same input, the same thread count (1, then 2), the same zstd level and the same row
# group size in rows. Prints wall times and their ratio, each peak RSS (/usr/bin/time -v), output
# sizes, and s3land's peak RSS with default settings at 1x and 4x the input (it must not grow).
# Input: the flights NDJSON (3,000,000 rows, ~277 MB) made from vega-datasets' flights-3m.parquet.
# Usage: bench/ndjson_to_parquet.sh [BUILD_DIR]   (a RelWithDebInfo or Release build; BENCH_DIR
# holds the data, default /tmp/s3l-bench; REPEAT pairs of runs per thread count, default 3, of
# which the medians are shown; PAUSE seconds of rest before each run, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
S3LAND=${S3LAND:-$build/s3land}
out=${BENCH_DIR:-/tmp/s3l-bench}
LEVEL=${LEVEL:-3}
RG=${RG:-122880}
REPEAT=${REPEAT:-3}
mkdir -p "$out"
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }

nd="$out/flights-3m.ndjson"
[ -s "$nd" ] || node bench/ndjson_to_parquet.mjs make "$nd"
cat > "$out/schema.json" <<'JSON'
[{"name": "date", "type": "timestamp[us]"}, {"name": "delay", "type": "int64"},
 {"name": "distance", "type": "int64"}, {"name": "origin", "type": "string"},
 {"name": "destination", "type": "string"}]
JSON

# timed LOG CMD...: runs CMD under /usr/bin/time -v; sets $secs and $rss_mib.
timed() {
    local log=$1
    shift
    /usr/bin/time -v "$@" >"$log.out" 2>"$log"
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
    rss_mib=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$log")
    cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {printf "%.2f", s}' "$log")
}

timed "$out/baseline.log" node bench/ndjson_to_parquet.mjs baseline
node_rss=$rss_mib
printf 'input: %s (%s bytes); zstd level %s; row groups of %s rows; node+DuckDB idle RSS %s MiB\n' \
    "$nd" "$(stat -c %s "$nd")" "$LEVEL" "$RG" "$node_rss"
printf '%-8s %10s %10s %8s %12s %12s %12s %12s %10s %10s\n' threads s3land_s duckdb_s ratio \
    s3land_MiB duckdb_MiB s3land_bytes duckdb_bytes s3land_cpu duckdb_cpu
# median of the numbers given
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for t in 1 2; do
    # REPEAT pairs, s3land then DuckDB, one after the other; the medians are compared (a shared
    # machine's noise hits single runs, not the median of interleaved pairs).
    sw=() sc=() dw=() dc=()
    for _ in $(seq "$REPEAT"); do
        rm -rf "$out/lake-$t" "$out/duck-$t.parquet"
        sleep "${PAUSE:-1}" # the previous run's exit (node frees ~300 MB) must not overlap this one
        timed "$out/s3land-$t.log" "$S3LAND" write --url "$out/lake-$t" --table flights \
            --schema "$out/schema.json" --lanes "$t" --compression zstd \
            --compression-level "$LEVEL" --row-group-rows "$RG" --quiet "$nd"
        sw+=("$secs") sc+=("$cpu")
        s_rss=$rss_mib
        sleep "${PAUSE:-1}"
        timed "$out/duckdb-$t.log" node bench/ndjson_to_parquet.mjs copy "$nd" \
            "$out/duck-$t.parquet" "$t" "$LEVEL" "$RG"
        dw+=("$(sed -n 's/.*"copy_seconds":\([0-9.]*\).*/\1/p' "$out/duckdb-$t.log.out")")
        dc+=("$cpu")
        d_rss=$rss_mib
    done
    s_secs=$(median "${sw[@]}") s_cpu=$(median "${sc[@]}")
    d_secs=$(median "${dw[@]}") d_cpu=$(median "${dc[@]}")
    echo "  runs: s3land ${sw[*]} s (cpu ${sc[*]}); duckdb ${dw[*]} s (cpu ${dc[*]})"
    s_bytes=$(cat "$out/lake-$t"/flights/*.parquet | wc -c)
    d_bytes=$(stat -c %s "$out/duck-$t.parquet")
    printf '%-8s %10.2f %10.2f %8.2f %12s %12s %12s %12s %10s %10s\n' "$t" "$s_secs" "$d_secs" \
        "$(echo "$d_secs / $s_secs" | bc -l)" "$s_rss" "$d_rss" "$s_bytes" "$d_bytes" "$s_cpu" "$d_cpu"
    echo "  rows: s3land $(node bench/ndjson_to_parquet.mjs rows "$out/lake-$t/flights/*.parquet")," \
         "duckdb $(node bench/ndjson_to_parquet.mjs rows "$out/duck-$t.parquet")"
done
echo "(ratio = DuckDB time / s3land time: above 1 means s3land is faster; DuckDB's time is its COPY"
echo " alone, without node's start; its RSS and CPU seconds (user + sys) include node's; RSS of an"
echo " idle node + DuckDB: ${node_rss} MiB. On a busy machine compare the CPU columns too.)"

# Peak RSS with default settings at 1x and 4x the input.
nd4="$out/flights-12m.ndjson"
[ -s "$nd4" ] || { for _ in 1 2 3 4; do cat "$nd"; done >"$nd4"; }
for f in "$nd" "$nd4"; do
    rm -rf "$out/lake-rss"
    timed "$out/rss.log" "$S3LAND" write --url "$out/lake-rss" --table flights \
        --schema "$out/schema.json" --quiet "$f"
    printf 'default settings, %s (%s bytes): %.2f s, peak RSS %s MiB\n' "$(basename "$f")" \
        "$(stat -c %s "$f")" "$secs" "$rss_mib"
done
