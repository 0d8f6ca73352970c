// Helper of bench/ndjson_to_parquet.sh (run by hand, not in CI), using DuckDB from npm with
// extension autoload/autoinstall off:
//   make OUT.ndjson                  flights-3m.parquet -> NDJSON (3,000,000 rows, ~277 MB)
//   copy IN.ndjson OUT.parquet N L R DuckDB's COPY (FROM read_json(IN)) TO OUT (zstd level L,
//                                    ROW_GROUP_SIZE R rows) with N threads; prints its own time
//   rows FILE_OR_GLOB                row count and file bytes of Parquet output, as JSON
//   baseline                         only starts DuckDB (to subtract node's own RSS)
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');
const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;
const [cmd, ...args] = process.argv.slice(2);
const threads = cmd === 'copy' ? args[2] : '2';
const inst = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', threads,
});
const con = await inst.connect();
const COLS = `{'date': 'TIMESTAMP', 'delay': 'BIGINT', 'distance': 'BIGINT', 'origin': 'VARCHAR', 'destination': 'VARCHAR'}`;
if (cmd === 'make') {
    const src = path.join(root, 'node_modules/vega-datasets/data/flights-3m.parquet');
    await con.run(`COPY (FROM read_parquet(${lit(src)})) TO ${lit(args[0])} (FORMAT json)`);
} else if (cmd === 'copy') {
    const [input, output, , level, rg] = args;
    const t0 = performance.now();
    await con.run(`COPY (FROM read_json(${lit(input)}, format='newline_delimited', columns=${COLS}))
                   TO ${lit(output)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${level},
                   ROW_GROUP_SIZE ${rg})`);
    console.log(JSON.stringify({ copy_seconds: (performance.now() - t0) / 1000 }));
} else if (cmd === 'rows') {
    const r = await con.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM read_parquet(${lit(args[0])})`);
    const m = await con.runAndReadAll(`SELECT count(*)::BIGINT AS rg FROM (SELECT DISTINCT file_name, row_group_id FROM parquet_metadata(${lit(args[0])}))`);
    console.log(JSON.stringify({ rows: Number(r.getRowObjectsJson()[0].n), row_groups: Number(m.getRowObjectsJson()[0].rg) }));
} else if (cmd !== 'baseline') {
    console.error('usage: ndjson_to_parquet.mjs make|copy|rows|baseline ...');
    process.exit(1);
}
