// Follow mode through rotations (issue 12, item 3), with `s3land run` and a source's follow: true
// on file://, every sequence number checked exactly once by DuckDB (A EXCEPT ALL B both ways
// against range(1, N + 1)):
//  1. rotation while followed: the file renamed away (its writer still appends to it through its
//     open descriptor), a new file created at the path: the old one is read to its end by its
//     identity, then the new one from its start; then a second rotation (app.log.1 to
//     app.log.2, app.log to app.log.1, a new app.log);
//  2. kill -9 mid-follow, a rotation while no run follows, and a restart whose files glob matches
//     the rotated names: the file committed at app.log is found by device and inode under its
//     new name and read on from its offset, the rotated ones read before are not read again, the
//     new app.log is read from its start;
//  3. a checkpointed file rotated away and not among the files any more is an error naming it and
//     the offset after which nothing was read (exit 2);
//  4. a followed file truncated in place (copytruncate) or rewritten in place is refused, naming
//     the file (exit 2).
import fs from 'node:fs';
import path from 'node:path';
import { check, done, run, tmpdir } from '../conformance/harness.mjs';
import * as follow from './follow.mjs';
import { line, lines, sleep, writeDestination } from './follow.mjs';

const work = tmpdir('s3l-follow-rot');
const lake = path.join(work, 'lake');
const logs = path.join(work, 'logs');
fs.mkdirSync(logs);
const P = path.join(logs, 'app.log');

writeDestination(work, lake);
function pipeline(files, name = 'rot', source = 'app') {
    fs.writeFileSync(path.join(work, 'pipe.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name },
        spec: {
            destination: { name: 'lake' }, delivery: { commit: { interval: '500ms' } },
            sources: [{ name: source, files, follow: true }],
        },
    }));
}
const runArgs = ['run', '--config', 'dest.json', '--config', 'pipe.json'];
const start = () => follow.start(runArgs, work);
const table = path.join(lake, 'app');
const rows = () => follow.rows(table);
const waitRows = (n) => follow.waitRows(table, n, 30000);
const exactlyOnce = (n, what) => follow.exactlyOnce(table, n, what);
// app.log -> app.log.1 -> app.log.2 ...: the numbered copies shifted up, then app.log renamed.
function shift() {
    const names = fs.readdirSync(logs).filter((f) => /^app\.log\.\d+$/.test(f))
        .map((f) => Number(f.split('.').pop())).sort((a, b) => b - a);
    for (const k of names) fs.renameSync(`${P}.${k}`, `${P}.${k + 1}`);
    fs.renameSync(P, `${P}.1`);
}

// 1. Rotations while followed.
fs.writeFileSync(P, lines(1, 5));
pipeline(['logs/app.log']);
let r = start();
check(await waitRows(5) >= 0, 'the first 5 lines landed');
let old = fs.openSync(P, 'a');
shift();
fs.writeSync(old, lines(6, 8)); // the writer appends to the renamed file before reopening
fs.closeSync(old);
await sleep(300);
fs.writeFileSync(P, lines(9, 12));
check(await waitRows(12) >= 0, `rotation: the old file's rest and the new file landed (${await rows()} rows)`);
old = fs.openSync(P, 'a');
shift();
fs.writeSync(old, lines(13, 14));
fs.closeSync(old);
fs.writeFileSync(P, lines(15, 20));
check(await waitRows(20) >= 0, `second rotation: ${await rows()} rows`);
await sleep(300);
check(await rows() === 20, `nothing landed twice after two rotations (${await rows()} rows)`);
await exactlyOnce(20, 'two rotations');

// 2. kill -9, a rotation while down, a restart with a glob over the rotated names.
fs.appendFileSync(P, lines(21, 25));
check(await waitRows(25) >= 0, 'lines 21..25 landed');
await sleep(1200); // a heartbeat commit or two after them
r.child.kill('SIGKILL');
await r.exited;
check(r.signal === 'SIGKILL', 'run killed with SIGKILL');
fs.appendFileSync(P, lines(26, 28)); // committed at app.log up to 25; 26..28 never read
shift();
fs.writeFileSync(P, lines(29, 30));
pipeline(['logs/app.log*']);
r = start();
check(await waitRows(30) >= 0, `restart: ${await rows()} rows`);
await sleep(1000);
r.child.kill('SIGINT');
await r.exited;
check(r.code === 130, `restart: SIGINT exits 130 (got ${r.code}): ${r.stderr.slice(-400)}`);
check(await rows() === 30, `after the restart 30 rows (${await rows()})`);
await exactlyOnce(30, 'kill -9 and a rotation while down');

// 3. Rotated away while down and not among the files: an error naming the file and the offset.
fs.appendFileSync(P, lines(31, 32));
r = start();
check(await waitRows(32) >= 0, 'lines 31..32 landed');
await sleep(1200);
r.child.kill('SIGKILL');
await r.exited;
shift();
fs.writeFileSync(P, lines(33, 34));
pipeline(['logs/app.log']);
const gone = run(runArgs, { cwd: work });
check(gone.code === 2 && /app\.log: the file committed at this path up to byte offset \d+ .*was rotated away and is not among the source's files/.test(gone.stderr),
    `a rotated-away checkpointed file not among the files is an error (exit ${gone.code}): ${gone.stderr.trim()}`);
check(await rows() === 32, `nothing landed by the refused run (${await rows()})`);

// 4. Truncation and rewrite in place while followed.
pipeline(['logs/app.log*']);
r = start();
check(await waitRows(34) >= 0, `the glob run lands 33..34 (${await rows()})`);
await sleep(1200);
fs.truncateSync(P, 0);
fs.appendFileSync(P, line(99));
await Promise.race([r.exited, sleep(20000)]);
check(r.code === 2 && /app\.log was truncated while followed/.test(r.stderr),
    `copytruncate is refused naming the file (exit ${r.code}): ${r.stderr.trim().slice(-400)}`);
await exactlyOnce(34, 'before the truncation');

// A rewrite in place, in another pipeline over another file.
const other = path.join(work, 'other.log');
fs.writeFileSync(other, lines(1, 4));
pipeline(['other.log'], 'rw', 'rw');
r = start();
const rwRows = () => follow.rows(path.join(lake, 'rw'));
await follow.waitRows(path.join(lake, 'rw'), 4, 30000);
check(await rwRows() === 4, `the other file landed (${await rwRows()})`);
await sleep(1200);
const fd = fs.openSync(other, 'r+');
fs.writeSync(fd, Buffer.from('{"seq":77,'), 0, 10, 0); // same length, other bytes
fs.closeSync(fd);
fs.appendFileSync(other, line(5));
await Promise.race([r.exited, sleep(20000)]);
check(r.code === 2 && /other\.log was rewritten/.test(r.stderr),
    `a rewrite in place is refused naming the file (exit ${r.code}): ${r.stderr.trim().slice(-400)}`);
if (r.code === null) r.child.kill('SIGKILL');
done();
