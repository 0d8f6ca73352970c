// The input readers on real datasets (vega-datasets), checked against independent readers:
//  - JSON: every record our reader yields equals, value for value, what Node's JSON.parse makes
//    of the whole file (movies.json: nulls, ints mixed with floats, numeric titles; earthquakes
//    .json: one nested GeoJSON object; flights-200k.json: an array of 200,000, read in 4 KiB
//    blocks); NDJSON written by DuckDB is covered by test_inputs_to_parquet.mjs;
//  - CSV: every row equals DuckDB's read_csv(all_varchar) row (github.csv, birdstrikes.csv);
//  - counts agree with DuckDB's read_json / read_csv; inferred column types agree with the types
//    DuckDB infers (mapped by hand: BIGINT = int64, DOUBLE = double, VARCHAR = string, DATE =
//    date32[day]), and converting every record under the inferred schema raises no error.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';

const src = process.env.S3L_SOURCE_DIR;
const tool = join(process.env.S3L_TOOLS_DIR, 's3l_read');
const data = join(src, 'node_modules/vega-datasets/data');
const tmp = mkdtempSync(join(tmpdir(), 's3l-inputs-'));

const run = (args) =>
  execFileSync(tool, args, { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const dump = (format, file, extra = []) =>
  run(['--format', format, '--block', '65536', ...extra, 'dump', file])
    .split('\n').filter((l) => l.length).map((l) => JSON.parse(l));

const db = await (await DuckDBInstance.create(':memory:')).connect();
const rows = async (sql) => (await db.runAndReadAll(sql)).getRowObjectsJS();
const one = async (sql) => Object.values((await rows(sql))[0])[0];

let checks = 0;
function sameRecords(ours, theirs, what) {
  assert.equal(ours.length, theirs.length, `${what}: record count`);
  for (let i = 0; i < ours.length; i++) assert.deepStrictEqual(ours[i], theirs[i], `${what}: record ${i + 1}`);
  checks += ours.length;
}

// Types we infer, as DuckDB names them.
const duck = { int64: 'BIGINT', double: 'DOUBLE', string: 'VARCHAR', 'date32[day]': 'DATE', bool: 'BOOLEAN' };
// differ: columns where we differ from DuckDB on purpose, with DuckDB's type.
async function sameTypes(format, file, duckSql, what, differ = {}) {
  const ours = JSON.parse(run(['--format', format, 'infer', '0', file]));
  const theirs = await rows(`DESCRIBE SELECT * FROM ${duckSql}`);
  assert.deepStrictEqual(ours.map((c) => [c.name, differ[c.name] ?? duck[c.type] ?? c.type]),
    theirs.map((c) => [c.column_name, c.column_type]), `${what}: inferred types`);
}

try {
  // movies.json: a JSON array with nulls, integers mixed with floats and a few numeric titles.
  const movies = join(data, 'movies.json');
  sameRecords(dump('json', movies), JSON.parse(readFileSync(movies, 'utf8')), 'movies.json');
  assert.equal(await one(`SELECT count(*) FROM read_json('${movies}')`), 3201n);
  assert.ok(dump('json', movies).some((m) => typeof m.Title === 'number'), 'movies has numeric titles');
  // Title mixes strings and numbers: DuckDB makes it JSON, issue 3 asks for a string column.
  await sameTypes('json', movies, `read_json('${movies}', sample_size = -1)`, 'movies.json',
    { Title: 'JSON' });
  assert.match(run(['--format', 'json', 'convert', '1000', movies]), /^rows 3201 errors 0 /);

  // earthquakes.json: one GeoJSON FeatureCollection object, nested three deep.
  const quakes = join(data, 'earthquakes.json');
  const q = dump('json', quakes);
  sameRecords(q, [JSON.parse(readFileSync(quakes, 'utf8'))], 'earthquakes.json');
  assert.equal(q[0].features.length, 1707);
  assert.equal(q[0].features[0].properties.place, '4km W of Castaic, CA');
  assert.match(run(['--format', 'json', 'convert', '0', quakes]), /^rows 1 errors 0 /);
  assert.match(run(['--format', 'json', '--nested-json', 'infer', '0', quakes]),
    /"name": "features", "type": "json"/);

  // flights-200k.json: one array of 200,000 objects, read in small blocks.
  const flights = join(data, 'flights-200k.json');
  const f = dump('json', flights, ['--block', '4096']);
  sameRecords(f, JSON.parse(readFileSync(flights, 'utf8')), 'flights-200k.json');
  assert.equal(await one(`SELECT count(*) FROM read_json('${flights}')`), 200000n);
  assert.equal(await one(`SELECT sum(delay) FROM read_json('${flights}')`),
    BigInt(f.reduce((s, r) => s + r.delay, 0)));
  // CSV: github.csv and birdstrikes.csv against DuckDB's reader, all columns as text.
  for (const name of ['github.csv', 'birdstrikes.csv']) {
    const file = join(data, name);
    const ours = dump('csv', file);
    const theirs = await rows(`SELECT * FROM read_csv('${file}', all_varchar = true, header = true)`);
    sameRecords(ours, theirs, name);
  }
  const birds = join(data, 'birdstrikes.csv');
  assert.equal(await one(`SELECT count(*) FROM read_csv('${birds}')`), 10000n);
  await sameTypes('csv', birds, `read_csv('${birds}', sample_size = -1)`, 'birdstrikes.csv');
  assert.match(run(['--format', 'csv', 'convert', '1000', birds]), /^rows 10000 errors 0 /);
  console.log(`ok: ${checks} records equal to the independent readers`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
