#!/usr/bin/env bash
# bench/parquet_encode.sh: our Parquet writer vs DuckDB's COPY TO parquet, same table, one run.
# Loads the 3M-row flights table (node_modules/vega-datasets/data/flights-3m.parquet) with DuckDB
# into a CSV the C bench reads into memory; times our writer per codec (best of 3); then times
# DuckDB writing the same table, already in memory, with one thread, zstd at the same level and
# the same row group size; prints the time ratios (wall clock, and CPU time, steadier on a
# shared machine) and both file sizes, and checks that DuckDB
# reads our zstd file back with the same row count and sums.
# Usage: bench/parquet_encode.sh [BUILD_DIR] (default build; built with scripts/build.sh first).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
level=${PQ_BENCH_LEVEL:-3}
rg=${PQ_BENCH_ROW_GROUP:-122880}
cc -O2 -g -std=c11 -Iinclude -Isrc/lib bench/parquet_encode.c "$build/libs3land.a" \
  $(pkg-config --libs libzstd snappy zlib jansson libcrypto) -lpthread -lm -o "$work/parquet_encode"
node --input-type=module -e "
import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false' });
const c = await db.connect();
await c.run(\"COPY (SELECT epoch_us(date), delay, distance, origin, destination FROM \" +
  \"'node_modules/vega-datasets/data/flights-3m.parquet') TO '$work/flights.csv' (HEADER false)\");
"
"$work/parquet_encode" "$work/flights.csv" "$work" "$rg" "$level" 3 | tee "$work/ours.txt"
node --input-type=module -e "
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, statSync } from 'node:fs';
const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false', threads: '1' });
const c = await db.connect();
await c.run(\"CREATE TABLE flights AS SELECT * FROM 'node_modules/vega-datasets/data/flights-3m.parquet'\");
let best = 1e30, bestCpu = 1e30;
for (let i = 0; i < 3; i++) {
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
  await c.run(\"COPY flights TO '$work/duck.parquet' (FORMAT parquet, COMPRESSION zstd, \" +
    \"COMPRESSION_LEVEL $level, ROW_GROUP_SIZE $rg)\");
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  const cu = process.cpuUsage(c0);
  bestCpu = Math.min(bestCpu, (cu.user + cu.system) / 1e6);
}
const duckBytes = statSync('$work/duck.parquet').size;
const lines = readFileSync('$work/ours.txt', 'utf8').split('\n');
for (const api of ['rows', 'batch']) {
  const ours = lines.find(l => l.includes('api=' + api + ' codec=zstd'));
  if (!ours) continue;
  const ourSec = Number(/ seconds=([0-9.]+)/.exec(ours)[1]);
  const ourCpu = Number(/cpu_seconds=([0-9.]+)/.exec(ours)[1]);
  const ourBytes = Number(/bytes=([0-9]+)/.exec(ours)[1]);
  console.log('ratio ours(' + api + ')/duckdb wall=' + (ourSec / best).toFixed(3) + ' cpu=' +
    (ourCpu / bestCpu).toFixed(3) + ' size=' + (ourBytes / duckBytes).toFixed(3));
}
console.log('duckdb threads=1 codec=zstd level=$level seconds=' + best.toFixed(3) +
  ' cpu_seconds=' + bestCpu.toFixed(3) + ' rows_per_s=' + (3e6 / bestCpu).toFixed(0) +
  ' bytes=' + duckBytes);
const q = async f => (await c.runAndReadAll(\"SELECT count(*) AS n, sum(delay) AS d, \" +
  \"sum(distance) AS s, count(DISTINCT origin) AS o, max(date) AS m FROM '\" + f + \"'\"))
  .getRowObjectsJson()[0];
const b = await q('$work/duck.parquet');
for (const api of ['rows', 'batch']) {
  const a = await q('$work/ours-' + api + '-zstd.parquet');
  console.log('readback ours(' + api + ')=' + JSON.stringify(a) + ' duckdb=' + JSON.stringify(b));
  if (JSON.stringify(a) !== JSON.stringify(b)) { console.error('MISMATCH'); process.exit(1); }
}
"
