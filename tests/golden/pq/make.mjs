// Makes the golden Parquet files of tests/golden/pq: for each NAME.json, runs tests/tools/pq_write
// and checks the result with two independent readers before keeping it as NAME.parquet:
// DuckDB (each row as to_json must equal the hand-written "expect_duckdb") and parquet-wasm with
// apache-arrow (row count and column names). Usage: S3L_TOOLS_DIR=... node make.mjs [--check]
// With --check nothing is written: the freshly written bytes must equal NAME.parquet
// (tests/golden/test_pq_golden.sh runs this).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { readParquet } from 'parquet-wasm/node';
import { tableFromIPC } from 'apache-arrow';

const here = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes('--check');
const tools = process.env.S3L_TOOLS_DIR;
if (!tools) throw new Error('S3L_TOOLS_DIR is not set');
const tmp = mkdtempSync(join(tmpdir(), 'pq-golden-'));
const db = await DuckDBInstance.create(':memory:', {
  autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
const con = await db.connect();
await con.run("SET TimeZone = 'UTC'").catch(() => {});
let failures = 0;
for (const f of readdirSync(here).filter(n => n.endsWith('.json')).sort()) {
  const name = f.replace(/\.json$/, '');
  const doc = JSON.parse(readFileSync(join(here, f), 'utf8'));
  const out = join(tmp, name + '.parquet');
  execFileSync(join(tools, 'pq_write'), [join(here, f), out]);
  const bytes = readFileSync(out);
  const rows = (await con.runAndReadAll(`SELECT CAST(to_json(golden_row) AS VARCHAR) AS j FROM (
    SELECT * EXCLUDE (file_row_number) FROM read_parquet('${out}', file_row_number = true)
    ORDER BY file_row_number) golden_row`)).getRowObjectsJson().map(r => r.j);
  const want = doc.expect_duckdb;
  if (JSON.stringify(rows) !== JSON.stringify(want)) {
    failures++;
    console.error(`${name}: DuckDB read\n${rows.join('\n')}\nexpected\n${want.join('\n')}`);
  }
  const t = tableFromIPC(readParquet(new Uint8Array(bytes)).intoIPCStream());
  const cols = t.schema.fields.map(x => x.name).join(',');
  if (t.numRows !== want.length || cols !== doc.schema.map(c => c.name).join(',')) {
    failures++;
    console.error(`${name}: parquet-wasm read ${t.numRows} rows, columns ${cols}`);
  }
  const golden = join(here, name + '.parquet');
  if (check) {
    if (Buffer.compare(bytes, readFileSync(golden)) !== 0) {
      failures++;
      console.error(`${name}: bytes differ from ${golden}`);
    }
  } else if (!failures) {
    writeFileSync(golden, bytes);
    console.log(`${name}.parquet: ${bytes.length} bytes`);
  }
}
rmSync(tmp, { recursive: true, force: true });
if (failures) process.exit(1);
console.log(check ? 'golden files match' : 'golden files written');
