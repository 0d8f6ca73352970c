// Conformance: replay without duplicates. One input is written in small epochs and rerun; lines
// are appended and a bad record stops a run in the middle; a rerun that skips the bad record and
// further reruns land every good record exactly once (compared with an independent copy of the
// good lines, EXCEPT ALL both ways).
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, run, runOk, scalar, schemaFile, tableSql, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-replay');
const lake = path.join(work, 'lake');
const a = path.join(work, 'a.ndjson');
const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ id: i, s: `r${i}` }));
fs.writeFileSync(a, lines.slice(0, 400).join('\n') + '\n');
const schema = schemaFile(work, 's.json', [{ name: 'id', type: 'int64' }, { name: 's', type: 'string' }]);
const args = ['write', '--url', lake, '--table', 'r', '--schema', schema, '--epoch-rows', '64', '--quiet', a];
runOk(args);
for (let i = 0; i < 3; i++) runOk(args); // reruns: nothing new
fs.appendFileSync(a, lines.slice(400, 700).join('\n') + '\n' + '{"id":"not a number"}\n');
const failed = run(args);
check(failed.code === 2, `a bad record stops the run (exit ${failed.code})`);
const dir = path.join(lake, 'r');
const n = await scalar(`SELECT count(*) FROM (${tableSql(dir)})`);
check(n === 656, `the epochs before the bad record are committed: 400 + 4 * 64 = 656 rows (got ${n})`);
// The rest of the input after the bad record is read by a run that skips it.
fs.appendFileSync(a, lines.slice(700).join('\n') + '\n');
runOk([...args.slice(0, -1), '--bad-records', 'skip', a]);
runOk(args);
const clean = path.join(work, 'expected.ndjson');
fs.writeFileSync(clean, lines.join('\n') + '\n');
const src = `SELECT * FROM read_json(${lit(clean)}, format='newline_delimited', columns={'id': 'BIGINT', 's': 'VARCHAR'})`;
check(await scalar(`SELECT count(*) FROM (${tableSql(dir)})`) === 1000, '1000 rows in all');
await exceptAll(src, tableSql(dir), 'every record exactly once across failed and repeated runs');
done();
