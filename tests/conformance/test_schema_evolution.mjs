// Conformance: schema evolution. An added column is recorded and later files have it; a changed
// type is refused with SCHEMA_DRIFT (exit 4) naming table, column, old and new type and saying to
// remove the record; --type-changes allow accepts it and updates the record.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, query, run, runOk, schemaFile, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-evolve');
const lake = path.join(work, 'lake');
const write = (name, lines, cols, extra = []) => {
    const f = path.join(work, name);
    fs.writeFileSync(f, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const s = schemaFile(work, `${name}.schema.json`, cols);
    return ['write', '--url', lake, '--table', 'ev', '--schema', s, '--quiet', ...extra, f];
};
runOk(write('v1.ndjson', [{ a: 1, b: 'x' }], [{ name: 'a', type: 'int64' }, { name: 'b', type: 'string' }]));
runOk(write('v2.ndjson', [{ a: 2, b: 'y', c: 2.5 }], [{ name: 'a', type: 'int64' }, { name: 'b', type: 'string' }, { name: 'c', type: 'double' }]));
const rec = JSON.parse(run(['schema', '--url', lake, '--table', 'ev', '--json']).stdout).record;
const cols = (Array.isArray(rec) ? rec : rec.columns).map((c) => `${c.name}:${c.type}`);
check(JSON.stringify(cols) === JSON.stringify(['a:int64', 'b:string', 'c:double']), `record has the added column (${cols})`);
const rows = await query(`SELECT a, b, c FROM read_parquet(${lit(path.join(lake, 'ev', '*.parquet'))}, union_by_name=true) ORDER BY a`);
check(JSON.stringify(rows) === JSON.stringify([{ a: '1', b: 'x', c: null }, { a: '2', b: 'y', c: 2.5 }]), 'later file has the new column, earlier reads as null');

const drift = run(write('v3.ndjson', [{ a: 3, b: 4 }], [{ name: 'a', type: 'int64' }, { name: 'b', type: 'int64' }]));
check(drift.code === 4, `a changed type exits 4 (got ${drift.code})`);
check(/SCHEMA_DRIFT/.test(drift.stderr) && /ev/.test(drift.stderr) && /\bb\b/.test(drift.stderr)
    && /string/.test(drift.stderr) && /int64/.test(drift.stderr) && /remove/.test(drift.stderr),
    `the drift names table, column, old and new type and says to remove the record: ${drift.stderr.trim()}`);
check(fs.readdirSync(path.join(lake, 'ev')).filter((f) => f.endsWith('.parquet')).length === 2, 'the refused run added no file');

runOk(write('v3.ndjson', [{ a: 3, b: 4 }], [{ name: 'a', type: 'int64' }, { name: 'b', type: 'int64' }], ['--type-changes', 'allow']));
const rec2 = JSON.parse(run(['schema', '--url', lake, '--table', 'ev', '--json']).stdout).record;
const b2 = (Array.isArray(rec2) ? rec2 : rec2.columns).find((c) => c.name === 'b');
check(b2?.type === 'int64', `--type-changes allow updated the record (b: ${b2?.type})`);
done();
