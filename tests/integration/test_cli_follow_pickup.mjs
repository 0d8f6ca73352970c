// Follow mode's glob pickup and its restarts (issue 12, item 3), with `s3land run` on file://,
// every sequence number checked exactly once by DuckDB (A EXCEPT ALL B both ways against
// range(1, N + 1)):
//  1. a new file that matches the source's glob, created while the run follows, is read from its
//     start and lands once; a kill -9 and a restart read nothing twice;
//  2. two rotations in a row (well under a second apart, before the run looks) while it follows
//     `files: [logs/app.log*]`: the middle file (app.log after the first rotation, app.log.1
//     after the second) was never opened by the run: the glob finds it, by identity it is no
//     input's and no retired file's, and it is read once; the old app.log (now app.log.2) is not
//     read again;
//  3. a file read to its end and committed, then kill -9, then rotated away while no run follows
//     (renamed out of the glob, or deleted) and a new file at its path: the restart reports
//     nothing lost, as the checkpoint recorded the file's size at the commit;
//  4. a checkpointed file gone before its end was read (its last line was still being written at
//     the commit), with no new file at its path (deleted while no run followed): an error naming
//     it and the bytes never read (exit 2); with missing: skip, the input_missing event, and the
//     run goes on; the loss is reported once.
import * as follow from './follow.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-follow-pickup');
const line = (seq) => JSON.stringify({ seq, msg: `line ${seq}` }) + '\n';
const lines = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => line(from + i)).join('');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

fs.writeFileSync(path.join(work, 'dest.json'), JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
    spec: { connector: 's3', config: { url: `file://${path.join(work, 'lake')}` } },
}));
// Each part has its own pipeline, source (table) and logs directory.
function pipeline(name, files, extra = {}) {
    fs.writeFileSync(path.join(work, `${name}.json`), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name },
        spec: {
            destination: { name: 'lake' }, delivery: { commit: { interval: '500ms' } },
            sources: [{ name, files, follow: true, ...extra }],
        },
    }));
    fs.mkdirSync(path.join(work, name), { recursive: true });
}
const start = (name, pre = []) =>
    follow.start([...pre, 'run', '--config', 'dest.json', '--config', `${name}.json`], work);
const table = (name) => path.join(work, 'lake', name);
async function rows(name) {
    const t = table(name);
    if (!fs.existsSync(t) || !fs.readdirSync(t).some((f) => f.endsWith('.parquet'))) return 0;
    return Number(await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(t, '*.parquet'))})`));
}
async function waitRows(name, n, limitMs = 60000) {
    const t0 = Date.now();
    while (Date.now() - t0 < limitMs) {
        if (await rows(name) >= n) return true;
        await sleep(100);
    }
    return false;
}
// The checkpoint records what was read: after rows land, one more interval commits positions
// (and a double landing, if any, commits within an interval or two).
const settle = () => sleep(1500);
async function exactlyOnce(name, n, what) {
    await exceptAll(`SELECT range AS seq FROM range(1, ${n + 1})`, tableSql(table(name), 'seq'),
        `${what}: seq 1..${n} exactly once`);
    const got = await rows(name);
    check(got === n, `${what}: ${n} rows, none twice (got ${got})`);
}
async function stop(r, what) {
    r.child.kill('SIGTERM');
    await r.exited;
    check(r.code === 143, `${what}: SIGTERM exits 143 (got ${r.code} ${r.signal}): ${r.stderr}`);
}
async function kill9(r) {
    r.child.kill('SIGKILL');
    await r.exited;
}

// 1. A new matching file while following; kill -9 and a restart.
{
    const name = 'newfile';
    pipeline(name, [`${name}/*.log`]);
    const dir = path.join(work, name);
    fs.writeFileSync(path.join(dir, 'a.log'), lines(1, 3));
    let r = start(name);
    check(await waitRows(name, 3), 'part 1: a.log committed');
    fs.writeFileSync(path.join(dir, 'b.log'), lines(4, 6));
    check(await waitRows(name, 6, 20000), `part 1: b.log, created while following, landed: ${r.stderr}`);
    fs.appendFileSync(path.join(dir, 'b.log'), lines(7, 8));
    check(await waitRows(name, 8, 20000), 'part 1: lines appended to the new b.log landed');
    await settle();
    await kill9(r);
    await exactlyOnce(name, 8, 'part 1: a new matching file');
    fs.appendFileSync(path.join(dir, 'b.log'), line(9));
    fs.writeFileSync(path.join(dir, 'c.log'), line(10));
    r = start(name);
    check(await waitRows(name, 10), 'part 1: after kill -9 and a restart, b.log read on, c.log read');
    await settle();
    await stop(r, 'part 1');
    await exactlyOnce(name, 10, 'part 1: a restart after the new file');
}

// 2. Two rotations before the run looks: the middle file is found by the glob and read once.
{
    const name = 'quick';
    pipeline(name, [`${name}/app.log*`]);
    const P = path.join(work, name, 'app.log');
    fs.writeFileSync(P, lines(1, 3));
    let r = start(name);
    check(await waitRows(name, 3), 'part 2: app.log committed');
    await settle();
    // Synchronous calls, microseconds apart: the run does not look between them.
    fs.renameSync(P, `${P}.1`);
    fs.writeFileSync(P, lines(4, 147)); // the middle file: 144 lines
    fs.renameSync(`${P}.1`, `${P}.2`);
    fs.renameSync(P, `${P}.1`);
    fs.writeFileSync(P, lines(148, 150));
    check(await waitRows(name, 150, 20000), `part 2: the middle file's 144 lines landed (${await rows(name)} rows): ${r.stderr}`);
    await settle();
    await stop(r, 'part 2');
    await exactlyOnce(name, 150, 'part 2: two quick rotations');
    // A restart finds every file read (by identity) and reads nothing twice.
    fs.appendFileSync(P, line(151));
    r = start(name);
    check(await waitRows(name, 151), 'part 2: after a restart, the line appended to app.log');
    await settle();
    await stop(r, 'part 2 restart');
    await exactlyOnce(name, 151, 'part 2: a restart after two quick rotations');
}

// 3. Read to its end, kill -9, rotated away while down (out of the glob; deleted): nothing lost.
for (const how of ['rename', 'delete']) {
    const name = `atend${how}`;
    pipeline(name, [`${name}/app.log*`]);
    const P = path.join(work, name, 'app.log');
    fs.writeFileSync(P, lines(1, 4));
    let r = start(name, ['--json']);
    check(await waitRows(name, 4), `part 3 (${how}): app.log committed`);
    await settle();
    await kill9(r);
    // The new file is made before the old one goes, so it cannot reuse the old one's inode
    // (a reused inode with other bytes is refused as a rewritten file: docs/internals/pipeline.md).
    fs.writeFileSync(`${P}.new`, lines(5, 6));
    if (how === 'rename') fs.renameSync(P, path.join(work, name, 'old.txt'));
    else fs.unlinkSync(P);
    fs.renameSync(`${P}.new`, P);
    r = start(name, ['--json']);
    check(await waitRows(name, 6), `part 3 (${how}): the new app.log landed: ${r.stderr}`);
    await settle();
    await stop(r, `part 3 (${how})`);
    check(!/never read|input_missing/.test(r.stderr + r.stdout),
        `part 3 (${how}): nothing reported lost: ${r.stderr}${r.stdout}`);
    await exactlyOnce(name, 6, `part 3 (${how}): a file read to its end, then rotated away`);
}

// 4. Gone before its end was read, no new file at its path: the missing rule.
{
    const name = 'vanish';
    pipeline(name, [`${name}/*.log`]);
    const dir = path.join(work, name);
    const A = path.join(dir, 'a.log');
    // a.log's last line is still being written at the commit: not read, so not at its end.
    const partial = '{"seq":6,"msg":"line';
    fs.writeFileSync(A, lines(1, 3) + partial);
    const committed = Buffer.byteLength(lines(1, 3));
    fs.writeFileSync(path.join(dir, 'b.log'), lines(4, 5));
    let r = start(name);
    check(await waitRows(name, 5), 'part 4: a.log and b.log committed');
    await settle();
    await kill9(r);
    fs.unlinkSync(A); // a.log deleted while no run follows, no new file at its path
    r = start(name);
    await r.exited;
    check(r.code === 2, `part 4: a checkpointed file gone before its end exits 2 (got ${r.code}): ${r.stderr}`);
    check(r.stderr.includes('a.log') && new RegExp(`after offset ${committed} was never read \\(${partial.length} bytes at least\\)`).test(r.stderr),
        `part 4: the error names the file, the offset after which it was never read and the bytes: ${r.stderr}`);
    pipeline(name, [`${name}/*.log`], { missing: 'skip' });
    fs.appendFileSync(path.join(dir, 'b.log'), line(9));
    r = start(name, ['--json']);
    check(await waitRows(name, 6), `part 4: with missing: skip, the run goes on: ${r.stderr}`);
    await settle();
    await stop(r, 'part 4');
    const ev = r.stdout.split('\n').filter((s) => s.startsWith('{')).map((s) => JSON.parse(s))
        .filter((e) => e.event === 'input_missing');
    check(ev.length === 1 && ev[0].path.endsWith('/a.log') && ev[0].offset === committed,
        `part 4: one input_missing event names a.log at offset ${committed}: ${JSON.stringify(ev)}`);
    await exceptAll('SELECT range AS seq FROM range(1, 6) UNION ALL SELECT 9',
        tableSql(table(name), 'seq'), 'part 4: every line read once, the lost ones absent');
    // The loss is recorded once: a further restart reports nothing.
    r = start(name, ['--json']);
    await settle();
    await stop(r, 'part 4 again');
    check(!/input_missing/.test(r.stdout), `part 4: the loss is not reported again: ${r.stdout}`);
}
done();
