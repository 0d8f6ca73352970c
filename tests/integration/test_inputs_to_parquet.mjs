// Readers + inference + converter + the Parquet writer, end to end on real datasets, with exact
// equality: for each dataset we infer a schema (first 1,000 records), convert every record into
// a Parquet file through the writer's row sink, then DuckDB reads the input itself under the same
// schema (read_json / read_csv with declared columns) and reads our file (read_parquet), and
// both `A EXCEPT ALL B` and `B EXCEPT ALL A` must be empty, with equal counts.
// Datasets: movies.json (nulls, ints and floats, numeric titles into a string column),
// earthquakes.json (one nested GeoJSON object: lists of structs of structs), birdstrikes.csv
// (dates, empty fields), and 100,000 flights as NDJSON written by DuckDB (ISO timestamps).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';

const src = process.env.S3L_SOURCE_DIR;
const tool = join(process.env.S3L_TOOLS_DIR, 's3l_read');
const data = join(src, 'node_modules/vega-datasets/data');
const tmp = mkdtempSync(join(tmpdir(), 's3l-inputs-pq-'));
const run = (args) => execFileSync(tool, args, { encoding: 'utf8', maxBuffer: 1 << 28 });

const db = await (await DuckDBInstance.create(':memory:')).connect();
const one = async (sql) => Object.values((await db.runAndReadAll(sql)).getRowObjectsJS()[0])[0];

// An Arrow type name as we print it, as a DuckDB type (only what inference produces).
function duckType(t) {
  let i = 0;
  const ws = () => { while (t[i] === ' ') i++; };
  const ident = () => { ws(); const m = /^[A-Za-z0-9_$ ]*?(?=[:<>,\]]|$)/.exec(t.slice(i)); i += m[0].length; return m[0].trim(); };
  function type() {
    ws();
    const simple = { int64: 'BIGINT', double: 'DOUBLE', string: 'VARCHAR', bool: 'BOOLEAN', 'date32[day]': 'DATE',
      'timestamp[us]': 'TIMESTAMP', 'timestamp[us, tz=UTC]': 'TIMESTAMPTZ', json: 'JSON' };
    for (const [k, v] of Object.entries(simple)) if (t.startsWith(k, i) && !/[a-z]/.test(t[i + k.length] ?? '')) { i += k.length; return v; }
    if (t.startsWith('list<', i)) { i += 5; ident(); i++; const it = type(); ws(); i++; return `${it}[]`; }
    if (t.startsWith('struct<', i)) {
      i += 7; const f = [];
      for (;;) { const n = ident(); i++; f.push(`"${n}" ${type()}`); ws(); if (t[i++] === '>') break; }
      return `STRUCT(${f.join(', ')})`;
    }
    throw new Error(`type ${t} at ${i}`);
  }
  const r = type();
  assert.equal(i, t.length, `parsed all of ${t}`);
  return r;
}

const sqlStr = (s) => `'${s.replaceAll("'", "''")}'`;
const columns = (schema) => `{${schema.map((c) => `${sqlStr(c.name)}: ${sqlStr(duckType(c.type))}`).join(', ')}}`;

async function check(name, format, file, duckRead) {
  const schema = JSON.parse(run(['--format', format, 'infer', '1000', file]));
  const out = join(tmp, `${name}.parquet`);
  const res = run(['--format', format, 'parquet', '1000', out, file]);
  const rows = Number(/^rows (\d+) errors 0$/m.exec(res)[1]);
  const a = duckRead(columns(schema));
  const b = `read_parquet(${sqlStr(out)})`;
  assert.equal(await one(`SELECT count(*) FROM ${a}`), BigInt(rows), `${name}: rows`);
  assert.equal(await one(`SELECT count(*) FROM ${b}`), BigInt(rows), `${name}: rows in our file`);
  assert.equal(await one(`SELECT count(*) FROM (FROM ${a} EXCEPT ALL FROM ${b})`), 0n, `${name}: A EXCEPT ALL B`);
  assert.equal(await one(`SELECT count(*) FROM (FROM ${b} EXCEPT ALL FROM ${a})`), 0n, `${name}: B EXCEPT ALL A`);
  console.log(`${name}: ${rows} rows equal (${schema.length} columns)`);
  return schema;
}

try {
  const movies = join(data, 'movies.json');
  await check('movies', 'json', movies, (cols) => `read_json(${sqlStr(movies)}, format = 'array', columns = ${cols})`);

  const quakes = join(data, 'earthquakes.json');
  const qs = await check('earthquakes', 'json', quakes,
    (cols) => `read_json(${sqlStr(quakes)}, format = 'unstructured', columns = ${cols})`);
  assert.match(qs.find((c) => c.name === 'features').type, /^list<item: struct<type: string, properties: struct</);
  assert.equal(await one(`SELECT len(features) FROM read_parquet(${sqlStr(join(tmp, 'earthquakes.parquet'))})`), 1707n);

  const birds = join(data, 'birdstrikes.csv');
  await check('birdstrikes', 'csv', birds, (cols) => `read_csv(${sqlStr(birds)}, header = true, columns = ${cols})`);

  const nd = join(tmp, 'flights.ndjson');
  await db.run(`COPY (FROM ${sqlStr(join(data, 'flights-3m.parquet'))} LIMIT 100000) TO ${sqlStr(nd)} (FORMAT json)`);
  const fs = await check('flights', 'ndjson', nd,
    (cols) => `read_json(${sqlStr(nd)}, format = 'newline_delimited', columns = ${cols})`);
  assert.deepStrictEqual(fs.map((c) => c.type), ['timestamp[us]', 'int64', 'int64', 'string', 'string']);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
