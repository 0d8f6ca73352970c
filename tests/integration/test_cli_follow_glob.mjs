// Follow mode with a glob that matches the rotated copies (issue 12, item 3; found by the follow
// soak): `files: [logs/app.log*]` follows app.log and app.log.1 at once; a rotation renames
// app.log.1 to app.log.2 and app.log to app.log.1 and creates a new app.log. app.log.1's input
// then finds at its path the file app.log's input reads: that is not a new file, and reading it
// from its start landed seq 4..6 twice. Now every sequence number lands exactly once (DuckDB,
// A EXCEPT ALL B both ways against range(1, 10)), through the rotation and a restart after it.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, tmpdir } from '../conformance/harness.mjs';
import * as follow from './follow.mjs';
import { line, lines, sleep, writeDestination } from './follow.mjs';

const work = tmpdir('s3l-follow-glob');
const lake = path.join(work, 'lake');
const logs = path.join(work, 'logs');
fs.mkdirSync(logs);
const P = path.join(logs, 'app.log');

writeDestination(work, lake);
fs.writeFileSync(path.join(work, 'pipe.json'), JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: 'glob' },
    spec: {
        destination: { name: 'lake' }, delivery: { commit: { interval: '500ms' } },
        sources: [{ name: 'app', files: ['logs/app.log*'], follow: true }],
    },
}));
const start = () => follow.start(['run', '--config', 'dest.json', '--config', 'pipe.json'], work);
const table = path.join(lake, 'app');
const rows = () => follow.rows(table);
const waitRows = async (n) => await follow.waitRows(table, n, 60000) >= 0;
const exactlyOnce = (n, what) => follow.exactlyOnce(table, n, what);

fs.writeFileSync(`${P}.1`, lines(1, 3));
fs.writeFileSync(P, lines(4, 6));
let r = start();
check(await waitRows(6), 'the 6 lines of app.log.1 and app.log committed');
fs.renameSync(`${P}.1`, `${P}.2`);
fs.renameSync(P, `${P}.1`);
fs.writeFileSync(P, line(7));
check(await waitRows(7), 'the new app.log committed');
await sleep(1500); // a double landing, if any, commits within an interval or two
r.child.kill('SIGTERM');
await r.exited;
check(r.code === 143, `run stopped by SIGTERM exits 143 (got ${r.code} ${r.signal}): ${r.stderr}`);
await exactlyOnce(7, 'a rotation under a glob that matches the rotated copies');
check(await rows() === 7, `7 rows, none twice (got ${await rows()})`);

// A restart after a second rotation: every file found by its identity, nothing read twice.
fs.renameSync(`${P}.2`, `${P}.3`);
fs.renameSync(`${P}.1`, `${P}.2`);
fs.renameSync(P, `${P}.1`);
fs.writeFileSync(P, lines(8, 9));
r = start();
check(await waitRows(9), 'after the restart, the new app.log committed');
await sleep(1500);
r.child.kill('SIGTERM');
await r.exited;
check(r.code === 143, `the restarted run exits 143 (got ${r.code} ${r.signal}): ${r.stderr}`);
await exactlyOnce(9, 'a restart after a second rotation');
check(await rows() === 9, `9 rows, none twice (got ${await rows()})`);
done();
