// Conformance: rollback on a failure in the middle of a load. A load of 250 rows in epochs of 100
// fails at row 180 (a value that does not fit): epoch 1 (rows 1-100) is committed and visible;
// nothing of epoch 2 (rows 101-179) is visible in the table, in the listing of committed files,
// or left staged after gc; a rerun without the bad row's failure lands the rest exactly once.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, parquetFiles, run, runOk, scalar, schemaFile, tableSql, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-rollback');
const lake = path.join(work, 'lake');
const input = path.join(work, 'in.ndjson');
const lines = Array.from({ length: 250 }, (_, i) => JSON.stringify({ id: i + 1, v: i === 179 ? 'oops' : i * 2 }));
fs.writeFileSync(input, lines.join('\n') + '\n');
const schema = schemaFile(work, 's.json', [{ name: 'id', type: 'int64' }, { name: 'v', type: 'int64' }]);
const args = ['write', '--url', lake, '--table', 'rb', '--schema', schema, '--epoch-rows', '100', '--file-size', '4KiB', input];
const r = run(args);
check(r.code === 2 && /line 180/.test(r.stderr), `the load fails at line 180 with exit 2 (${r.code}: ${r.stderr.trim()})`);
const dir = path.join(lake, 'rb');
check(await scalar(`SELECT count(*) FROM (${tableSql(dir)})`) === 100, 'only epoch 1 is visible: 100 rows');
check(await scalar(`SELECT max(id) FROM (${tableSql(dir)})`) === 100, 'and they are rows 1-100');
const ls = run(['ls', '--url', lake, '--table', 'rb', '--json']);
const files = ls.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((o) => o.file);
check(files.length === parquetFiles(dir).length && files.every((f) => f.committed), 'every visible file is covered by a marker');
runOk(['gc', '--url', lake, '--quiet']);
const staged = [];
const walk = (d) => { if (fs.existsSync(d)) for (const e of fs.readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(path.join(d, e.name)) : staged.push(e.name); };
walk(path.join(lake, '_openetl', 'staging'));
check(staged.length === 0, `nothing of the failed epoch is left staged after gc (${staged.length})`);
runOk([...args.slice(0, -1), '--bad-records', 'skip', '--quiet', input]);
check(await scalar(`SELECT count(*) FROM (${tableSql(dir)})`) === 249, 'the retry lands the other 149 rows: 249');
check(await scalar(`SELECT count(DISTINCT id) FROM (${tableSql(dir)})`) === 249, 'each once');
done();
