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
//  3. a checkpointed file rotated away before its end was read and not among the files any more
//     is an error naming it and the offset after which nothing was read (exit 2);
//  4. a followed file truncated in place (copytruncate) or rewritten in place is refused, naming
//     the file (exit 2);
//  5. missing: skip: the same loss (a checkpointed file rotated away while down, lines appended
//     to it never read, not among the files) is noted on stderr naming the file and the offset
//     the loss starts at, and as a --json input_missing event, and the run goes on: every line
//     read once, the lost ones absent; missing: fail (and the default) is the error.
import * as follow from './follow.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, run, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-follow-rot');
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
function pipeline(files, name = 'rot', source = 'app', extra = {}) {
    fs.writeFileSync(path.join(work, 'pipe.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name },
        spec: {
            destination: { name: 'lake' }, delivery: { commit: { interval: '500ms' } },
            sources: [{ name: source, files, follow: true, ...extra }],
        },
    }));
}
const runArgs = ['run', '--config', 'dest.json', '--config', 'pipe.json'];
const start = (pre = []) => follow.start([...pre, ...runArgs], work);
const table = path.join(lake, 'app');
async function rows() {
    if (!fs.existsSync(table) || !fs.readdirSync(table).some((f) => f.endsWith('.parquet'))) return 0;
    return scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(table, '*.parquet'))})`);
}
async function waitRows(n, limitMs = 30000) {
    const t0 = Date.now();
    while (Date.now() - t0 < limitMs) {
        if (await rows() >= n) return Date.now() - t0;
        await sleep(50);
    }
    return -1;
}
const exactlyOnce = (n, what) => exceptAll(`SELECT range AS seq FROM range(1, ${n + 1})`, tableSql(table, 'seq'), `${what}: seq 1..${n} exactly once`);
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
// Not read to its end: a line still being written when it was rotated (one read to its end at
// the commit is not lost: test_cli_follow_pickup.mjs part 3).
fs.appendFileSync(P, '{"seq": 0, "msg": "unended');
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
const rwRows = async () => fs.existsSync(path.join(lake, 'rw')) && fs.readdirSync(path.join(lake, 'rw')).some((f) => f.endsWith('.parquet'))
    ? scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 'rw', '*.parquet'))})`) : 0;
for (let t0 = Date.now(); Date.now() - t0 < 30000 && await rwRows() < 4;) await sleep(50);
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

// 5. missing: skip, in another pipeline over another file (miss.log, table miss).
const M = path.join(work, 'miss.log');
const missTable = path.join(lake, 'miss');
const missRows = async () => fs.existsSync(missTable) && fs.readdirSync(missTable).some((f) => f.endsWith('.parquet'))
    ? scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(missTable, '*.parquet'))})`) : 0;
async function waitMiss(n) {
    for (let t0 = Date.now(); Date.now() - t0 < 30000 && await missRows() < n;) await sleep(50);
    return missRows();
}
// Lands what miss.log holds, is killed after a commit, then loses `lostFrom..lostTo`: appended to
// miss.log while no run follows, which is then renamed away out of the files, and a new miss.log
// holds `nextFrom..nextTo`. Returns the committed size of the lost file (the loss's offset).
async function loseWhileDown(have, lostFrom, lostTo, nextFrom, nextTo, k) {
    const before = fs.statSync(M).size;
    check(await waitMiss(have) === have, `miss: ${have} rows landed before the kill (${await missRows()})`);
    await sleep(1200);
    r.child.kill('SIGKILL');
    await r.exited;
    fs.appendFileSync(M, lines(lostFrom, lostTo));
    fs.renameSync(M, path.join(work, `miss.old${k}`)); // out of the files
    fs.writeFileSync(M, lines(nextFrom, nextTo));
    return before;
}
fs.writeFileSync(M, lines(1, 4));
pipeline(['miss.log'], 'miss', 'miss');
r = start();
let lostAt = await loseWhileDown(4, 5, 6, 7, 9, 1);
for (const mode of [{}, { missing: 'fail' }]) {
    pipeline(['miss.log'], 'miss', 'miss', mode);
    const refused = run(runArgs, { cwd: work });
    check(refused.code === 2 && new RegExp(`miss\\.log: the file committed at this path up to byte offset ${lostAt} .*was rotated away.*after offset ${lostAt} was never read`).test(refused.stderr),
        `missing ${mode.missing ?? '(default)'}: the loss is an error naming the file and offset ${lostAt} (exit ${refused.code}): ${refused.stderr.trim()}`);
}
check(await missRows() === 4, `nothing landed by the refused runs (${await missRows()})`);
pipeline(['miss.log'], 'miss', 'miss', { missing: 'skip' });
r = start();
check(await waitMiss(7) === 7, `missing: skip goes on: the new miss.log landed (${await missRows()} rows): ${r.stderr.slice(-400)}`);
check(new RegExp(`note: source miss: input \\S*miss\\.log: the file committed at this path up to byte offset ${lostAt} .*after offset ${lostAt} .*never read and is skipped \\(missing: skip\\)`).test(r.stderr),
    `missing: skip notes the file and the offset on stderr: ${r.stderr.trim().slice(-600)}`);
check(r.code === null, `missing: skip: the run still follows (exit ${r.code})`);
// Once more with --json: the event, then lines appended to the new file still land.
lostAt = await loseWhileDown(7, 10, 11, 12, 13, 2);
r = start(['--json']);
check(await waitMiss(9) === 9, `missing: skip with --json goes on (${await missRows()} rows): ${r.stderr.slice(-400)}`);
fs.appendFileSync(M, lines(14, 15));
check(await waitMiss(11) === 11, `missing: skip: appended lines land while followed (${await missRows()} rows)`);
await sleep(1000);
r.child.kill('SIGINT');
await r.exited;
const events = r.stdout.split('\n').filter((s) => s.startsWith('{')).map((s) => JSON.parse(s));
const ev = events.filter((e) => e.event === 'input_missing');
check(ev.length === 1 && ev[0].source === 'miss' && ev[0].path.endsWith('/miss.log') && ev[0].offset === lostAt &&
    /never read and is skipped/.test(ev[0].message),
    `--json: one input_missing event {source, path, offset ${lostAt}, message}: ${JSON.stringify(ev)}`);
check(r.code === 130, `missing: skip run: SIGINT exits 130 (got ${r.code}): ${r.stderr.slice(-300)}`);
await exceptAll('SELECT range AS seq FROM range(1, 5) UNION ALL SELECT range FROM range(7, 10) UNION ALL SELECT range FROM range(12, 16)',
    tableSql(missTable, 'seq'), 'missing: skip: every line read lands once, the lost ones (5, 6, 10, 11) do not');
done();
