// Nested schema growth through the CLI: a struct field first seen after the inference sample, in
// a later run, or first non-null after the sample, and a field new in the struct items of a list,
// are schema growth like a new top-level column: the table's schema record gains the field, later
// files carry it, and no value is lost (values_ignored 0). DuckDB reads the input itself under the
// recorded types (read_json with declared columns) and the table (read_parquet, union_by_name):
// both EXCEPT ALL ways must be empty. With a declared schema that lacks the nested field, the
// value is not written and is counted in values_ignored (never a silent drop).
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, run, runOk, schemaFile, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-nested-grow');
const lake = path.join(work, 'lake');
const in1 = path.join(work, 'a.ndjson');
const in2 = path.join(work, 'b.ndjson');
const r1 = [];
for (let i = 0; i < 1500; i++) {
    const r = { s: { x: i, n: null }, l: [{ p: `p${i}` }] };
    if (i === 1200) r.s.n = 'first';            // a nested field null in the whole sample
    if (i >= 1400) r.l.push({ p: 'q', q: i });  // list<struct> items gain q after the sample
    r1.push(JSON.stringify(r));
}
r1.push(JSON.stringify({ s: { x: 1, z: true }, l: [] })); // the user's repro: z after the sample
fs.writeFileSync(in1, r1.join('\n') + '\n');
fs.writeFileSync(in2, JSON.stringify({ s: { x: 2, w: 2.5 }, l: null }) + '\n'); // a later run

const base = ['write', '--url', lake, '--table', 'n', '--json'];
const sum = (r) => JSON.parse(r.stdout.trim().split('\n').pop());
const s1 = sum(runOk([...base, in1]));
check(s1.rows === 1501 && s1.values_ignored === 0, `run 1: 1501 rows, no value ignored (${JSON.stringify(s1)})`);
const s2 = sum(runOk([...base, in2]));
check(s2.rows === 1 && s2.values_ignored === 0, `run 2: 1 row, no value ignored (${JSON.stringify(s2)})`);
const rec = JSON.parse(run(['schema', '--url', lake, '--table', 'n', '--json']).stdout).record;
const cols = (Array.isArray(rec) ? rec : rec.columns).map((c) => [c.name, c.type]);
const want = [['s', 'struct<x: int64, n: string, z: bool, w: double>'],
    ['l', 'list<item: struct<p: string, q: int64>>']];
check(JSON.stringify(cols) === JSON.stringify(want), `the record grew nested fields: ${JSON.stringify(cols)}`);
const duckCols = `{'s': 'STRUCT(x BIGINT, n VARCHAR, z BOOLEAN, w DOUBLE)', 'l': 'STRUCT(p VARCHAR, q BIGINT)[]'}`;
await exceptAll(`SELECT * FROM read_json([${lit(in1)}, ${lit(in2)}], columns=${duckCols}, format='newline_delimited')`,
    `SELECT {'x': s.x, 'n': s.n, 'z': s.z, 'w': s.w}::STRUCT(x BIGINT, n VARCHAR, z BOOLEAN, w DOUBLE) AS s,
            list_transform(l, e -> {'p': e.p, 'q': e.q})::STRUCT(p VARCHAR, q BIGINT)[] AS l
     FROM read_parquet(${lit(path.join(lake, 'n', '*.parquet'))}, union_by_name=true)`,
    'every nested value landed');

// A declared schema without the nested fields: the values are counted, not dropped silently.
const decl = schemaFile(work, 'decl.json', [{ name: 's', type: 'struct<x: int64>' },
    { name: 'l', type: 'list<item: struct<p: string>>' }]);
const s3 = sum(runOk(['write', '--url', lake, '--table', 'd', '--json', '--schema', decl, in1]));
// s.n once, q in items of 100 records, z once (s.n null elsewhere is no value)
check(s3.rows === 1501 && s3.values_ignored === 102, `declared: values_ignored 102 (${JSON.stringify(s3)})`);
done();
