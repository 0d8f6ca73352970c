// Follow-mode soak (issue 12, Tests): two `s3land run --config` pipelines at once, one to file://
// and one to the Ceph RGW bucket (S3L_RGW_ENV, the s3_rgw fixture), each with two sources
// (`follow: true`, commit interval 2 s): `app` (files `logs/app.log*`, rotated twice by rename and
// create) and `web` (files `web.log`). A writer process (this file with --writer) appends
// sequence-numbered NDJSON lines at seeded random times, bursts and quiet gaps, the same lines to
// both pipelines' copies of a source; at each rotation it also writes a burst through the old
// descriptor after the rename (as a logger does before it reopens). Each run is SIGKILLed at
// seeded random moments about every 20 s and restarted at once. At the end the writer stops, each
// run is given time to catch up and is stopped by SIGTERM (what was read is committed: exit 143),
// and DuckDB checks, per pipeline and table:
//  - the committed rows (the data files the markers list; RGW's copied through `aws s3 cp`) are
//    the input's lines, read by DuckDB from the input files themselves, exactly once
//    (A EXCEPT ALL B and B EXCEPT ALL A empty), and the writer's count agrees;
//  - commits keep up: every burst appended while a run was up for 3 intervals after it is
//    followed by a marker (mtime on file://, LastModified on RGW) within 3 intervals (one
//    interval plus slack for a loaded machine).
// SOAK_SECONDS (default 90) sets how long the writer writes; SOAK_SEED replays a seed (printed).
// bench/soak_follow.sh runs it longer by hand.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3LAND, check, done, exceptAll, lit, query, tmpdir } from '../conformance/harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// mulberry32: a small seeded PRNG, so a seed replays the same schedule.
function prng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
const between = (rnd, lo, hi) => lo + rnd() * (hi - lo);

// ---- The writer process: node test_follow_soak.mjs --writer SEED SECONDS EVENTS DIR...
// Appends to DIR/logs/app.log and DIR/web.log for every DIR; one JSON event per line in EVENTS:
// {t, src, from, to} after each burst is written (t: ms since the epoch), {t, rotate} at a rotation.
if (process.argv[2] === '--writer') {
    const [seedText, secondsText, events, ...dirs] = process.argv.slice(3);
    const rnd = prng(Number(seedText) ^ 0x5eed);
    const seconds = Number(secondsText);
    const ev = fs.openSync(events, 'a');
    const log = (o) => fs.writeSync(ev, JSON.stringify({ t: Date.now(), ...o }) + '\n');
    const line = (seq, src) => JSON.stringify({ seq, src, msg: `${src} line ${seq} ${'x'.repeat(seq % 40)}` }) + '\n';
    const t0 = Date.now();
    const rotations = [seconds * 1000 / 3, seconds * 2000 / 3];
    let seq = 0;
    let rotated = 0;
    let stopping = false;
    process.on('SIGTERM', () => { stopping = true; });
    const burst = (src, fds) => {
        const n = 1 + Math.floor(rnd() * (rnd() < 0.2 ? 400 : 20));
        const from = seq + 1;
        let text = '';
        for (let i = 0; i < n; i++) text += line(++seq, src);
        for (const fd of fds) fs.writeSync(fd, text);
        log({ src, from, to: seq });
    };
    const appendTo = (src, file) => {
        const fds = dirs.map((d) => fs.openSync(path.join(d, file), 'a'));
        burst(src, fds);
        for (const fd of fds) fs.closeSync(fd);
    };
    while (!stopping && Date.now() - t0 < seconds * 1000) {
        if (rotated < rotations.length && Date.now() - t0 >= rotations[rotated]) {
            // app.log.1 -> app.log.2, app.log -> app.log.1 (the open descriptors still write to
            // the renamed file), then a new app.log.
            const old = dirs.map((d) => fs.openSync(path.join(d, 'logs/app.log'), 'a'));
            for (const d of dirs) {
                const p = path.join(d, 'logs/app.log');
                for (let k = rotated; k >= 1; k--) fs.renameSync(`${p}.${k}`, `${p}.${k + 1}`);
                fs.renameSync(p, `${p}.1`);
            }
            log({ rotate: ++rotated });
            burst('app', old);
            for (const fd of old) fs.closeSync(fd);
            await sleep(between(rnd, 0, 1500));
            for (const d of dirs) fs.writeFileSync(path.join(d, 'logs/app.log'), '');
            continue;
        }
        const mode = rnd();
        if (mode < 0.15) { // a quiet gap, up to 4 intervals
            await sleep(between(rnd, 2000, 8000));
        } else { // a burst of bursts, a few ms to half a second apart
            const k = 1 + Math.floor(rnd() * 8);
            for (let i = 0; i < k; i++) {
                const src = rnd() < 0.5 ? 'app' : 'web';
                appendTo(src, src === 'app' ? 'logs/app.log' : 'web.log');
                await sleep(between(rnd, 2, 500));
            }
        }
    }
    log({ end: seq });
    fs.closeSync(ev);
    process.exit(0);
}

// ---- The test.
const SECONDS = Number(process.env.SOAK_SECONDS ?? 90);
const SEED = process.env.SOAK_SEED !== undefined ? Number(process.env.SOAK_SEED) : Math.floor(Math.random() * 2 ** 31);
const INTERVAL_MS = 2000;
const SLACK_MS = 3 * INTERVAL_MS;
console.log(`# soak seed ${SEED} (SOAK_SEED=${SEED} replays it), ${SECONDS} s`);
const rnd = prng(SEED);

// The RGW: the fixture's environment file (export NAME=VALUE lines).
const envFile = process.env.S3L_RGW_ENV;
if (!envFile || !fs.existsSync(envFile)) {
    check(false, `S3L_RGW_ENV names the RGW fixture's environment (got ${envFile}): run through ctest (FIXTURES_REQUIRED s3_rgw)`);
    done();
}
const rgw = {};
for (const m of fs.readFileSync(envFile, 'utf8').matchAll(/^export ([A-Z0-9_]+)=(.*)$/gm))
    rgw[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
const awsEnv = {
    ...process.env, AWS_ACCESS_KEY_ID: rgw.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: rgw.AWS_SECRET_ACCESS_KEY,
    AWS_REGION: rgw.AWS_REGION, AWS_DEFAULT_REGION: rgw.AWS_REGION,
};
delete awsEnv.AWS_SESSION_TOKEN;
delete awsEnv.AWS_PROFILE;
delete awsEnv.AWS_ENDPOINT_URL;
function aws(args) {
    const r = spawnSync('aws', ['--endpoint-url', rgw.RGW_ENDPOINT, ...args], { env: awsEnv, encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`aws ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    return r.stdout;
}

const work = tmpdir('s3l-follow-soak');
const prefix = `follow-soak-${process.pid}-${Date.now()}`;
const pipes = [
    { name: 'file', url: `file://${path.join(work, 'file', 'lake')}` },
    { name: 'rgw', url: `s3://${rgw.RGW_BUCKET}/${prefix}` },
];
for (const p of pipes) {
    p.dir = path.join(work, p.name);
    fs.mkdirSync(path.join(p.dir, 'logs'), { recursive: true });
    fs.writeFileSync(path.join(p.dir, 'logs/app.log'), '');
    fs.writeFileSync(path.join(p.dir, 'web.log'), '');
    const config = p.name === 'rgw'
        ? { url: p.url, endpoint: rgw.RGW_ENDPOINT, region: rgw.AWS_REGION, accessKeyId: { secret: 'SOAK_KEY' }, secretAccessKey: { secret: 'SOAK_SECRET' } }
        : { url: p.url };
    fs.writeFileSync(path.join(p.dir, 'dest.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
        spec: { connector: 's3', config },
    }));
    fs.writeFileSync(path.join(p.dir, 'pipe.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: `soak-${p.name}` },
        spec: {
            destination: { name: 'lake' }, delivery: { commit: { interval: `${INTERVAL_MS}ms` } },
            sources: [{ name: 'app', files: ['logs/app.log*'], follow: true },
                { name: 'web', files: ['web.log'], follow: true }],
        },
    }));
    p.runs = []; // {start, end, code, signal, killed, stderr}
}
const runEnv = { ...process.env, S3LAND_SECRET_SOAK_KEY: rgw.AWS_ACCESS_KEY_ID, S3LAND_SECRET_SOAK_SECRET: rgw.AWS_SECRET_ACCESS_KEY };
delete runEnv.AWS_ENDPOINT_URL;
delete runEnv.AWS_ENDPOINT_URL_S3;

function start(p) {
    const child = spawn(S3LAND, ['run', '--config', 'dest.json', '--config', 'pipe.json'], { cwd: p.dir, env: runEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    const r = { start: Date.now(), end: null, code: null, signal: null, killed: false, stderr: '', child };
    child.stderr.on('data', (d) => { r.stderr += d; });
    r.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
        Object.assign(r, { end: Date.now(), code, signal });
        fs.writeFileSync(path.join(p.dir, `run-${p.runs.indexOf(r) + 1}.err`), r.stderr);
        resolve();
    }));
    p.runs.push(r);
    p.current = r;
    return r;
}

// The writer.
const events = path.join(work, 'events.ndjson');
const writer = spawn(process.execPath, [fileURLToPath(import.meta.url), '--writer', String(SEED), String(SECONDS), events, ...pipes.map((p) => p.dir)], { stdio: ['ignore', 'inherit', 'inherit'] });
const writerExit = new Promise((resolve) => writer.on('exit', (code, signal) => resolve({ code, signal })));
let writerDone = false;
writerExit.then(() => { writerDone = true; });

// The runs, killed and restarted on their own seeded schedules until the writer ends.
const unexpected = [];
async function chaos(p, rndP) {
    start(p);
    while (!writerDone) {
        const wait = between(rndP, 10000, 30000);
        const t0 = Date.now();
        while (!writerDone && Date.now() - t0 < wait && p.current.end === null) await sleep(100);
        if (writerDone) break;
        const r = p.current;
        if (r.end !== null) { // ended on its own: a defect; keep going with a new run
            unexpected.push(`${p.name}: run ended by itself (exit ${r.code}, signal ${r.signal}): ${r.stderr.trim().slice(-600)}`);
        } else {
            r.killed = true;
            r.child.kill('SIGKILL');
            await r.exited;
        }
        start(p);
    }
}
await Promise.all(pipes.map((p, i) => chaos(p, prng(SEED + 1 + i))));
const w = await writerExit;
check(w.code === 0, `the writer ended (exit ${w.code}, signal ${w.signal})`);
const ev = fs.readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const bursts = ev.filter((e) => e.src);
const total = ev.find((e) => e.end !== undefined)?.end ?? 0;
console.log(`# ${total} lines in ${bursts.length} bursts, ${ev.filter((e) => e.rotate).length} rotations; ` +
    pipes.map((p) => `${p.name}: ${p.runs.filter((r) => r.killed).length} SIGKILLs`).join(', '));
check(ev.filter((e) => e.rotate).length === 2, 'app.log rotated twice');
// The timeline, in seconds since the writer's first event: what to look at when a check fails.
const T0 = ev.length ? ev[0].t : 0;
const at = (t) => ((t - T0) / 1000).toFixed(3);
console.log(`# rotations at ${ev.filter((e) => e.rotate).map((e) => at(e.t)).join(', ')} s`);
for (const p of pipes)
    console.log(`# ${p.name} runs: ${p.runs.map((r) => `${at(r.start)}..${r.end === null ? 'up' : `${at(r.end)}${r.killed ? ' SIGKILL' : ''}`}`).join(', ')}`);

// Catch up: every run up for at least 4 intervals after the last line, then SIGTERM.
const lastWrite = bursts.length ? bursts[bursts.length - 1].t : Date.now();
for (const p of pipes) {
    const r = p.current;
    const upTo = Math.max(lastWrite, r.start) + 4 * INTERVAL_MS;
    while (Date.now() < upTo && r.end === null) await sleep(100);
}
for (const p of pipes) {
    const r = p.current;
    if (r.end === null) {
        r.child.kill('SIGTERM');
        await Promise.race([r.exited, sleep(60000)]);
    }
    if (!check(r.code === 143, `${p.name}: the last run stops on SIGTERM with exit 143 (exit ${r.code}, signal ${r.signal})`))
        console.log(r.stderr.trim().slice(-1500));
    if (r.end === null) { r.child.kill('SIGKILL'); await r.exited; }
}
for (const u of unexpected) check(false, u);
check(unexpected.length === 0, 'no run ended by itself during the soak');
const tooFew = pipes.filter((p) => SECONDS >= 60 && p.runs.filter((r) => r.killed).length < 2);
check(tooFew.length === 0, `each pipeline was SIGKILLed at least twice (${pipes.map((p) => p.runs.filter((r) => r.killed).length).join(', ')})`);

// The committed view: the data files the markers list, local (file://) or copied from RGW.
for (const p of pipes) {
    let root;
    if (p.name === 'rgw') {
        root = path.join(work, 'rgw-copy');
        aws(['s3', 'cp', '--recursive', '--quiet', `s3://${rgw.RGW_BUCKET}/${prefix}/`, root]);
        const listed = JSON.parse(aws(['s3api', 'list-objects-v2', '--bucket', rgw.RGW_BUCKET, '--prefix', `${prefix}/_openetl/markers/`, '--output', 'json']) || '{}');
        p.markerTimes = (table) => (listed.Contents ?? []).filter((o) => o.Key.startsWith(`${prefix}/_openetl/markers/${table}/`))
            .map((o) => Date.parse(o.LastModified)).sort((a, b) => a - b);
    } else {
        root = path.join(p.dir, 'lake');
        p.markerTimes = (table) => {
            const d = path.join(root, '_openetl/markers', table);
            return fs.existsSync(d) ? fs.readdirSync(d).map((f) => fs.statSync(path.join(d, f)).mtimeMs).sort((a, b) => a - b) : [];
        };
    }
    for (const table of ['app', 'web']) {
        const md = path.join(root, '_openetl/markers', table);
        const markers = fs.existsSync(md) ? fs.readdirSync(md).filter((f) => f.endsWith('.json')) : [];
        const files = [];
        for (const m of markers) {
            const doc = JSON.parse(fs.readFileSync(path.join(md, m), 'utf8'));
            for (const f of doc.files) {
                const rel = f.key.startsWith(`${prefix}/`) ? f.key.slice(prefix.length + 1) : f.key;
                files.push(path.join(root, rel));
            }
        }
        const missing = files.filter((f) => !fs.existsSync(f));
        check(missing.length === 0, `${p.name}/${table}: every data file the ${markers.length} markers list exists (${files.length})`);
        const inputs = table === 'app'
            ? fs.readdirSync(path.join(p.dir, 'logs')).filter((f) => /^app\.log(\.\d+)?$/.test(f)).map((f) => path.join(p.dir, 'logs', f))
            : [path.join(p.dir, 'web.log')];
        const nonEmpty = inputs.filter((f) => fs.statSync(f).size > 0);
        const want = nonEmpty.length
            ? `SELECT seq, src, msg FROM read_ndjson([${nonEmpty.map(lit).join(', ')}], columns = {seq: 'BIGINT', src: 'VARCHAR', msg: 'VARCHAR'})`
            : `SELECT 1::BIGINT AS seq, '' AS src, '' AS msg WHERE false`;
        const got = files.length
            ? `SELECT seq::BIGINT AS seq, src, msg FROM read_parquet([${files.map(lit).join(', ')}])`
            : `SELECT 1::BIGINT AS seq, '' AS src, '' AS msg WHERE false`;
        const nWant = Number(Object.values((await query(`SELECT count(*) FROM (${want})`))[0])[0]);
        const nWriter = bursts.filter((b) => b.src === table).reduce((s, b) => s + b.to - b.from + 1, 0);
        check(nWant === nWriter, `${p.name}/${table}: the input files hold the ${nWriter} lines the writer wrote (${nWant})`);
        if (!await exceptAll(want, got, `${p.name}/${table}: ${nWant} lines committed exactly once`)) {
            const twice = await query(`SELECT count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM (SELECT seq FROM (${got}) GROUP BY seq HAVING count(*) > 1)`);
            const lost = await query(`SELECT count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM ((SELECT seq FROM (${want})) EXCEPT (SELECT seq FROM (${got})))`);
            console.log(`# ${p.name}/${table}: landed more than once: ${JSON.stringify(twice[0])}; lost: ${JSON.stringify(lost[0])}`);
        }

        // Commits keep up: each burst of this table written while the run was up for 3
        // intervals after it has a marker within those 3 intervals.
        const times = p.markerTimes(table);
        // RGW's LastModified may be whole seconds: a marker of the same second counts.
        const granule = p.name === 'rgw' && times.every((m) => m % 1000 === 0) ? 1000 : 0;
        let late = 0;
        let checked = 0;
        for (const b of bursts.filter((x) => x.src === table)) {
            const up = p.runs.some((r) => r.start <= b.t && (r.end ?? Infinity) >= b.t + SLACK_MS);
            if (!up) continue;
            checked++;
            if (!times.some((m) => m > b.t - granule && m <= b.t + SLACK_MS)) {
                if (late < 5) console.log(`# ${p.name}/${table}: burst ${b.from}..${b.to} at ${new Date(b.t).toISOString()}: no marker within ${SLACK_MS} ms`);
                late++;
            }
        }
        check(late === 0 && checked > 0, `${p.name}/${table}: each of ${checked} bursts while the run was up has a marker within ${SLACK_MS} ms (${late} without; ${times.length} markers)`);
    }
}
for (const p of pipes) {
    const r = p.runs.find((x) => x.code !== null && x.code !== 143 && !x.killed);
    if (r) console.log(`# ${p.name}: ${r.stderr.trim().slice(-800)}`);
}
if (pipes.some((p) => p.name === 'rgw')) {
    try { aws(['s3', 'rm', '--recursive', '--quiet', `s3://${rgw.RGW_BUCKET}/${prefix}/`]); } catch (e) { console.log(`# cleanup: ${e.message}`); }
}
done();
