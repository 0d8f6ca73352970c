// Exactness check for the crash harness: for each LAKE:INPUT pair, DuckDB reads the NDJSON input
// under the declared schema and every Parquet file of the lake's one table, and requires
// input EXCEPT ALL table and table EXCEPT ALL input to be empty (so every row exactly once).
// Usage: node exact.mjs SCHEMA.json LAKE:INPUT...
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const typeMap = { int64: 'BIGINT', string: 'VARCHAR', utf8: 'VARCHAR' };
const schema = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const cols = '{' + schema.map((c) => `'${c.name}': '${typeMap[c.type]}'`).join(', ') + '}';
const names = schema.map((c) => c.name).join(', ');
const db = await DuckDBInstance.create(':memory:', { autoload_known_extensions: 'false' });
const con = await db.connect();

function tableDir(lake) {
  // The one table: a directory holding .parquet files, outside _openetl.
  const stack = [lake];
  while (stack.length) {
    const d = stack.pop();
    for (const e of readdirSync(d)) {
      if (e === '_openetl') continue;
      const p = join(d, e);
      if (statSync(p).isDirectory()) stack.push(p);
      else if (e.endsWith('.parquet')) return d;
    }
  }
  return null;
}

let bad = 0;
for (const pair of process.argv.slice(3)) {
  const i = pair.lastIndexOf(':');
  const lake = pair.slice(0, i);
  const input = join(process.cwd(), pair.slice(i + 1));
  const dir = tableDir(lake);
  if (!dir) {
    console.error(`${lake}: no table files`);
    bad++;
    continue;
  }
  const inp = `(SELECT ${names} FROM read_json('${input}', format='newline_delimited', columns=${cols}))`;
  const tab = `(SELECT ${names} FROM read_parquet('${dir}/*.parquet'))`;
  const r = await con.runAndReadAll(
    `SELECT (SELECT count(*) FROM (${inp} EXCEPT ALL ${tab})),
            (SELECT count(*) FROM (${tab} EXCEPT ALL ${inp})),
            (SELECT count(*) FROM ${tab})`);
  const [missing, extra, rows] = r.getRows()[0].map(Number);
  if (missing || extra) {
    console.error(`${lake}: ${missing} input rows missing, ${extra} extra rows (table has ${rows})`);
    bad++;
  }
}
console.log(`exactness: ${process.argv.length - 3} lakes checked, ${bad} bad`);
process.exit(bad ? 1 : 0);
