// kill -9 at random moments, through the real CLI: 50 runs of `s3land write` (20,000 rows in all,
// small files, 2 lanes, epochs of 50 rows, so a run spends its time in commits) are each
// SIGKILLed after a random delay drawn from [0, T), T the time one uninterrupted run of the same
// shape takes on this machine (the median of 3 runs on a scratch lake, measured first: a fixed
// range would let a fast machine finish most runs before the kill); the seed of each run and T
// are printed, so a failure can be replayed with S3L_KILL_SEED=<seed> S3L_KILL_SPAN_MS=<T>.
// 400 lines are appended before each run, so every run has work.
// A final run finishes; then the table must hold every input line exactly once
// (DuckDB: A EXCEPT ALL B and B EXCEPT ALL A empty), every visible file must be covered by a
// marker, and one more run must change nothing.
//
// On S3 (S3L_TEST_STORE=s3, the s3 label) a run takes longer (every commit is several requests
// to the gateway), so the same test is shorter there: runs go on, with new seeds, until 12 of
// them died by SIGKILL (at most 36 runs; a run that finished before its kill is fine and does
// not count), then the same final run and checks. The lake is the harness's s3:// URL for
// the temp directory (destUrl), read back through its mirror of the bucket.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
    S3LAND, STORE, check, destUrl, done, exceptAll, listing, lit, run, runOk, schemaFile, tableSql,
    tmpdir,
} from '../conformance/harness.mjs';

const work = tmpdir('s3l-kill9');
const lake = path.join(work, 'lake');
const input = path.join(work, 'in.ndjson');
// file://: 50 runs, at least 10 of them killed. s3://: runs until 12 were killed, at most 36.
const ON_S3 = STORE === 's3';
const RUNS = ON_S3 ? 36 : 50;
const KILLS = ON_S3 ? 12 : 10;
const lines = Array.from({ length: RUNS * 400 }, (_, i) =>
    JSON.stringify({ id: i, name: `row ${i} ${'x'.repeat(i % 50)}`, v: i % 7 === 0 ? null : i / 4 }));
fs.writeFileSync(input, '');
const schema = schemaFile(work, 's.json', [
    { name: 'id', type: 'int64', key: true }, { name: 'name', type: 'string' }, { name: 'v', type: 'double' }]);
const argsFor = (url, file) => ['write', '--url', url, '--table', 'k', '--schema', schema, '--lanes', '2',
    '--epoch-rows', '50', '--file-size', '16KiB', '--quiet', file];
const args = argsFor(destUrl(lake), input);

// A small deterministic generator (mulberry32), so each run's delay follows from its seed.
function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = Math.imul(a ^ (a >>> 15), 1 | a);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

function killedRun(delayMs, runArgs = args) {
    return new Promise((resolve) => {
        const child = spawn(S3LAND, runArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d) => { stderr += d; });
        const timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
        child.on('exit', (code, signal) => {
            clearTimeout(timer);
            resolve({ code, signal, stderr });
        });
    });
}

// T: the median wall time (process start to exit, as the kill timer sees it) of 3 uninterrupted
// runs of 400 new lines each on a scratch lake and input (the 2nd and 3rd resume, like most
// runs below).
async function spanMs() {
    if (process.env.S3L_KILL_SPAN_MS) return Number(process.env.S3L_KILL_SPAN_MS);
    const scratchIn = path.join(work, 'scratch.ndjson');
    const scratchArgs = argsFor(destUrl(path.join(work, 'scratch-lake')), scratchIn);
    const times = [];
    for (let n = 0; n < 3; n++) {
        fs.appendFileSync(scratchIn, lines.slice(n * 400, (n + 1) * 400).join('\n') + '\n');
        const t0 = performance.now();
        const res = await killedRun(600000, scratchArgs);
        times.push(performance.now() - t0);
        check(res.code === 0, `scratch run ${n} finishes (${res.signal ?? `exit ${res.code}`})`);
    }
    return Math.max(1, Math.round(times.sort((a, b) => a - b)[1]));
}
const span = await spanMs();
console.log(`# one uninterrupted run takes ${span} ms: kill delays are drawn from [0, ${span})`);

const seeds = process.env.S3L_KILL_SEED ? [Number(process.env.S3L_KILL_SEED)]
    : Array.from({ length: RUNS }, () => Math.floor(Math.random() * 2 ** 31));
let killed = 0;
let appended = 0;
for (const [n, seed] of seeds.entries()) {
    if (ON_S3 && killed >= KILLS) break;
    const r = rng(seed);
    const delay = Math.floor(r() * span);
    fs.appendFileSync(input, lines.slice(n * 400, (n + 1) * 400).join('\n') + '\n');
    appended = (n + 1) * 400;
    const res = await killedRun(delay);
    killed += res.signal === 'SIGKILL';
    const fine = res.signal === 'SIGKILL' || res.code === 0;
    if (!check(fine, `run ${n} seed ${seed} span ${span}: killed after ${delay} ms (${res.signal ?? `exit ${res.code}`})`))
        console.log(res.stderr);
}
if (seeds.length > 1)
    check(killed >= KILLS, `at least ${KILLS} of the runs were killed mid-way (${killed})`);
if (seeds.length === 1) {
    fs.appendFileSync(input, lines.slice(400).join('\n') + '\n');
    appended = lines.length;
}
runOk(args);
const dir = path.join(lake, 'k');
const clean = path.join(work, 'expected.ndjson');
fs.writeFileSync(clean, lines.slice(0, appended).join('\n') + '\n');
await exceptAll(
    `SELECT * FROM read_json(${lit(clean)}, columns={'id': 'BIGINT', 'name': 'VARCHAR', 'v': 'DOUBLE'})`,
    tableSql(dir), `every line (${appended}) exactly once after ${killed} kills`);
const ls = run(['ls', '--url', lake, '--table', 'k', '--json']);
const files = ls.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((o) => o.file);
check(files.length > 0 && files.every((f) => f.committed), `every visible file is covered by a marker (${files.length})`);
const before = listing(lake);
runOk(args);
check(JSON.stringify(listing(lake)) === JSON.stringify(before), 'one more run changes nothing');
done();
