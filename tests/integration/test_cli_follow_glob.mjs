// Follow mode with a glob that matches the rotated copies (issue 12, item 3; found by the follow
// soak): `files: [logs/app.log*]` follows app.log and app.log.1 at once; a rotation renames
// app.log.1 to app.log.2 and app.log to app.log.1 and creates a new app.log. app.log.1's input
// then finds at its path the file app.log's input reads: that is not a new file, and reading it
// from its start landed seq 4..6 twice. Now every sequence number lands exactly once (DuckDB,
// A EXCEPT ALL B both ways against range(1, 10)), through the rotation and a restart after it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, check, done, exceptAll, lit, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-follow-glob');
const lake = path.join(work, 'lake');
const logs = path.join(work, 'logs');
fs.mkdirSync(logs);
const P = path.join(logs, 'app.log');
const line = (seq) => JSON.stringify({ seq, msg: `line ${seq}` }) + '\n';
const lines = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => line(from + i)).join('');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

fs.writeFileSync(path.join(work, 'dest.json'), JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
    spec: { connector: 's3', config: { url: `file://${lake}` } },
}));
fs.writeFileSync(path.join(work, 'pipe.json'), JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: 'glob' },
    spec: {
        destination: { name: 'lake' }, delivery: { commit: { interval: '500ms' } },
        sources: [{ name: 'app', files: ['logs/app.log*'], follow: true }],
    },
}));
function start() {
    const child = spawn(S3LAND, ['run', '--config', 'dest.json', '--config', 'pipe.json'],
        { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stderr: '', code: null, signal: null, child };
    child.stdout.on('data', () => {});
    child.stderr.on('data', (d) => { out.stderr += d; });
    out.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
        out.code = code;
        out.signal = signal;
        resolve();
    }));
    return out;
}
const table = path.join(lake, 'app');
async function rows() {
    if (!fs.existsSync(table) || !fs.readdirSync(table).some((f) => f.endsWith('.parquet'))) return 0;
    return Number(await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(table, '*.parquet'))})`));
}
async function waitRows(n, limitMs = 60000) {
    const t0 = Date.now();
    while (Date.now() - t0 < limitMs) {
        if (await rows() >= n) return true;
        await sleep(100);
    }
    return false;
}
const exactlyOnce = (n, what) => exceptAll(`SELECT range AS seq FROM range(1, ${n + 1})`,
    tableSql(table, 'seq'), `${what}: seq 1..${n} exactly once`);

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
