// Follow-mode soak (issue 12, Tests): two `s3land run --config` pipelines at once, one to file://
// and one to the Ceph RGW bucket (S3L_RGW_ENV, the s3_rgw fixture), each with two sources
// (`follow: true`, commit interval 2 s): `app` (files `logs/app.log*`, rotated twice by rename and
// create) and `web` (files `web.log`). A writer process (this file with --writer) appends
// sequence-numbered NDJSON lines at seeded random times, bursts and quiet gaps, the same lines to
// both pipelines' copies of a source; at each rotation it also writes a burst through the old
// descriptor after the rename (as a logger does before it reopens). Each run is SIGKILLed at
// seeded random moments (at least 3 times in SOAK_SECONDS >= 60; about every 20 s in a long soak)
// and restarted at once. A probe process (this file with --probe) measures how starved the
// machine is meanwhile. At the end the writer stops, each run is given time to catch up and is
// stopped by SIGTERM (what was read is committed: exit 143), and DuckDB checks, per pipeline:
//  - exactly once: the committed rows of each table (the data files its markers list; RGW's
//    copied through `aws s3 cp`) are the input's lines, read by DuckDB from the input files
//    themselves (A EXCEPT ALL B and B EXCEPT ALL A empty), the writer's count agrees, and the
//    sequence numbers of both tables together are 1..N, each once (EXCEPT ALL both ways against
//    generate_series);
//  - commits keep up (the issue: "markers at most one interval apart while lines arrive"): each
//    burst's lines are in markers whose own time (mtime on file://, LastModified on RGW) is at
//    most the bound below after the burst was appended, unless the run was down (killed, then
//    restarting until it watches its inputs again) or the machine starved (the probe) within the
//    burst's window; every excluded window is printed, and the longest commit delay and marker
//    gap seen.
// SOAK_SECONDS (default 60) sets how long the writer writes; SOAK_SEED replays a seed (printed).
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
// {t, src, from, to} after each burst is written to every copy (t: ms since the epoch, when the
// last write returned: the lines are whole in every file from then on), {t, rotate} at a rotation.
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

// ---- The probe process: node test_follow_soak.mjs --probe OUT DIR ENDPOINT
// Until SIGTERM, steps of what a commit waits on, one JSON line per step in OUT: {t0, t1, sched,
// fsync, rgw} in ms: how late a 100 ms timer fired (CPU), a 64-byte write and fsync in DIR (the
// disk of the file:// lake and of the gateway's store), and one round trip to the gateway (an
// anonymous GET /, refused or not). On an idle machine each is a few ms.
if (process.argv[2] === '--probe') {
    const [out, dir, endpoint] = process.argv.slice(3);
    let stopping = false;
    process.on('SIGTERM', () => { stopping = true; });
    const file = path.join(dir, 'probe.bin');
    const bytes = Buffer.alloc(64, 0x5a);
    while (!stopping) {
        const t0 = Date.now();
        await sleep(100);
        const a = Date.now();
        const fd = fs.openSync(file, 'w');
        fs.writeSync(fd, bytes);
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        const b = Date.now();
        try {
            const res = await fetch(endpoint, { signal: AbortSignal.timeout(60000) });
            await res.arrayBuffer();
        } catch { /* a gateway that does not answer in 60 s: the step's time says it */ }
        const t1 = Date.now();
        fs.appendFileSync(out, JSON.stringify({ t0, t1, sched: a - t0 - 100, fsync: b - a, rgw: t1 - b }) + '\n');
    }
    process.exit(0);
}

// ---- The test.
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const SEED = process.env.SOAK_SEED !== undefined ? Number(process.env.SOAK_SEED) : Math.floor(Math.random() * 2 ** 31);
// The pipelines' delivery.commit.interval.
const INTERVAL_MS = 2000;
// The bound on a burst's commit delay (the time from its append to the markers that hold its
// lines) while the run is up and the machine is not starved, from what the runner does
// (src/lib/pipeline/runner.c):
//  - the line is read when inotify wakes the follow loop, or at the latest when its wait ends:
//    FOLLOW_WAIT_MS, 250 ms (runner.c);
//  - a commit is decided at most one interval after the previous one (epoch_due, follow_inputs):
//    a line read just after a decision waits INTERVAL_MS for the next;
//  - that commit then does its store operations one after the other (the run's --json commit
//    event counts them: requests.total, store operations on file://, S3 requests on RGW) and its
//    marker is the last; each costs at most STARVED_MS while the machine is not starved (below),
//    as the probe's own one-operation step does.
// So bound = INTERVAL_MS + FOLLOW_WAIT_MS + ops x STARVED_MS.
const FOLLOW_WAIT_MS = 250;
// The machine is starved while a probe step takes longer than this for one of its parts (a
// timer's lateness, one fsync, one round trip to the gateway): on an idle machine each takes a few
// ms, and a store operation of a commit (a small Parquet file, a checkpoint, a marker: one PUT or
// one write, fsync and rename) about as long; 250 ms is the follow loop's own longest wait, 25 to
// 100 times that. A burst later than its bound is excused only when [append, append + bound]
// holds time the run was down (not before the append: a restarted run's first commit is due one
// interval after its loop began, before it watches its inputs, runner.c's loop_init) or
// [append - INTERVAL_MS, append + bound] a starved step (a commit that began before the append,
// in a starved step, may still run then).
const STARVED_MS = 250;
console.log(`# soak seed ${SEED} (SOAK_SEED=${SEED} replays it), ${SECONDS} s`);

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
    p.runs = []; // {start, ready, end, code, signal, killed, stderr, commits}
}
const runEnv = { ...process.env, S3LAND_SECRET_SOAK_KEY: rgw.AWS_ACCESS_KEY_ID, S3LAND_SECRET_SOAK_SECRET: rgw.AWS_SECRET_ACCESS_KEY };
delete runEnv.AWS_ENDPOINT_URL;
delete runEnv.AWS_ENDPOINT_URL_S3;

// Whether process pid holds an inotify descriptor: the runner sets its watch after the
// destination's open and recovery, just before it reads the inputs (s3l__runner_loop's
// watch_inputs), so from then on the run is up again.
function watching(pid) {
    try {
        const d = `/proc/${pid}/fd`;
        return fs.readdirSync(d).some((f) => { try { return fs.readlinkSync(`${d}/${f}`) === 'anon_inode:inotify'; } catch { return false; } });
    } catch { return false; }
}

// A run with --json: its commit events (with the store operations each cost) on stdout.
function start(p) {
    const child = spawn(S3LAND, ['run', '--json', '--config', 'dest.json', '--config', 'pipe.json'], { cwd: p.dir, env: runEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const r = { start: Date.now(), ready: null, end: null, code: null, signal: null, killed: false, stderr: '', stdout: '', commits: [], child };
    child.stderr.on('data', (d) => { r.stderr += d; });
    child.stdout.on('data', (d) => {
        r.stdout += d;
        let nl;
        while ((nl = r.stdout.indexOf('\n')) >= 0) {
            const text = r.stdout.slice(0, nl);
            r.stdout = r.stdout.slice(nl + 1);
            let e;
            try { e = JSON.parse(text); } catch { r.stderr += `(stdout) ${text}\n`; continue; }
            if (r.ready === null) r.ready = Date.now(); // an event: it is up (poll fallback of watching())
            if (e.event === 'commit' || e.event === 'recovered')
                r.commits.push({ t: Date.now(), epoch: e.epoch, ops: e.requests?.total ?? null });
            if (e.event === 'error') r.stderr += `${text}\n`;
        }
    });
    r.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
        Object.assign(r, { end: Date.now(), code, signal });
        fs.writeFileSync(path.join(p.dir, `run-${p.runs.indexOf(r) + 1}.err`), r.stderr);
        resolve();
    }));
    (async () => {
        while (r.ready === null && r.end === null) {
            if (watching(child.pid)) r.ready = Date.now();
            else await sleep(20);
        }
    })();
    p.runs.push(r);
    p.current = r;
    return r;
}

// The probe, the writer.
const probeOut = path.join(work, 'probe.ndjson');
const probe = spawn(process.execPath, [fileURLToPath(import.meta.url), '--probe', probeOut, work, rgw.RGW_ENDPOINT], { stdio: ['ignore', 'inherit', 'inherit'] });
const probeExit = new Promise((resolve) => probe.on('exit', (code, signal) => resolve({ code, signal })));
const events = path.join(work, 'events.ndjson');
const writer = spawn(process.execPath, [fileURLToPath(import.meta.url), '--writer', String(SEED), String(SECONDS), events, ...pipes.map((p) => p.dir)], { stdio: ['ignore', 'inherit', 'inherit'] });
const writerExit = new Promise((resolve) => writer.on('exit', (code, signal) => resolve({ code, signal })));
let writerDone = false;
writerExit.then(() => { writerDone = true; });

// The runs, killed and restarted on their own seeded schedules until the writer ends: a kill
// every KILL_LO..KILL_HI ms, so at least 3 in 60 s (3 x 15 s < 60 s) and about every 20 s in a
// long soak (the issue's rate).
const KILL_HI = Math.min(30000, SECONDS * 1000 / 4);
const KILL_LO = KILL_HI / 2;
const unexpected = [];
async function chaos(p, rndP) {
    start(p);
    while (!writerDone) {
        const wait = between(rndP, KILL_LO, KILL_HI);
        const t0 = Date.now();
        while (!writerDone && Date.now() - t0 < wait && p.current.end === null) await sleep(50);
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

// Catch up: every run up for at least 4 intervals after the last line, then SIGTERM.
const lastWrite = bursts.length ? bursts[bursts.length - 1].t : Date.now();
for (const p of pipes) {
    const r = p.current;
    const upTo = Math.max(lastWrite, r.ready ?? r.start) + 4 * INTERVAL_MS;
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
probe.kill('SIGTERM');
await probeExit;
for (const p of pipes)
    console.log(`# ${p.name} runs (start/up..end): ${p.runs.map((r) => `${at(r.start)}/${r.ready === null ? '-' : at(r.ready)}..${r.end === null ? 'up' : `${at(r.end)}${r.killed ? ' SIGKILL' : ''}`}`).join(', ')}`);
for (const u of unexpected) check(false, u);
check(unexpected.length === 0, 'no run ended by itself during the soak');
const killsOf = (p) => p.runs.filter((r) => r.killed).length;
check(SECONDS < 60 || pipes.every((p) => killsOf(p) >= 3), `each pipeline was SIGKILLed at least 3 times (${pipes.map(killsOf).join(', ')})`);

// Excluded windows: the machine starved (probe steps with a part over STARVED_MS, adjacent ones
// merged) and, per pipeline, the run down (from a run's end to the next one's watch; from the
// start to the first one's).
const steps = fs.existsSync(probeOut) ? fs.readFileSync(probeOut, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
check(steps.length > 0, `the probe measured the machine (${steps.length} steps)`);
const merge = (ws) => {
    const out = [];
    for (const x of [...ws].sort((a, b) => a.from - b.from)) {
        const last = out[out.length - 1];
        if (last && x.from <= last.to) { last.to = Math.max(last.to, x.to); last.why = last.why === x.why ? last.why : `${last.why}; ${x.why}`; }
        else out.push({ ...x });
    }
    return out;
};
const worst = (s) => Math.max(s.sched, s.fsync, s.rgw);
const starved = merge(steps.filter((s) => worst(s) > STARVED_MS).map((s) => ({
    from: s.t0, to: s.t1, why: `starved (${['sched', 'fsync', 'rgw'].filter((k) => s[k] > STARVED_MS).map((k) => `${k} ${s[k]} ms`).join(', ')})` })));
const stepMax = steps.length ? steps.reduce((m, s) => Math.max(m, worst(s)), 0) : 0;
console.log(`# probe: ${steps.length} steps, the slowest part ${stepMax} ms; ${starved.length} starved windows:`);
for (const x of starved) console.log(`#   excluded ${at(x.from)}..${at(x.to)} s: ${x.why}`);
for (const p of pipes) {
    const down = [];
    let prevEnd = T0 === 0 ? p.runs[0].start : Math.min(T0, p.runs[0].start);
    for (const r of p.runs) {
        const up = r.ready ?? r.end ?? Date.now();
        down.push({ from: prevEnd, to: up, why: `${p.name} down (${p.runs.indexOf(r) ? `restart, ${up - r.start} ms to watch again` : 'first start'})` });
        prevEnd = r.end ?? Infinity;
    }
    p.down = merge(down);
    for (const x of down) console.log(`#   excluded ${at(x.from)}..${at(x.to)} s: ${x.why}`);
}
const overlaps = (ws, a, b) => ws.find((x) => x.from <= b && x.to >= a);

// The committed view: the data files the markers list, local (file://) or copied from RGW.
for (const p of pipes) {
    let root;
    let markerTime; // key of a marker relative to the lake -> its time in ms
    if (p.name === 'rgw') {
        root = path.join(work, 'rgw-copy');
        aws(['s3', 'cp', '--recursive', '--quiet', `s3://${rgw.RGW_BUCKET}/${prefix}/`, root]);
        const listed = JSON.parse(aws(['s3api', 'list-objects-v2', '--bucket', rgw.RGW_BUCKET, '--prefix', `${prefix}/_openetl/markers/`, '--output', 'json']) || '{}');
        const byKey = new Map((listed.Contents ?? []).map((o) => [o.Key.slice(prefix.length + 1), Date.parse(o.LastModified)]));
        markerTime = (rel) => byKey.get(rel);
    } else {
        root = path.join(p.dir, 'lake');
        markerTime = (rel) => fs.statSync(path.join(root, rel)).mtimeMs;
    }
    // Store operations of each epoch's commit (the runs' --json events); an epoch whose event was
    // lost to a SIGKILL (after its marker, before the event) counts as the costliest one seen.
    const opsOf = new Map();
    for (const r of p.runs) for (const c of r.commits) if (c.ops !== null) opsOf.set(c.epoch, c.ops);
    const opsMax = Math.max(0, ...opsOf.values());
    check(opsOf.size > 0, `${p.name}: the runs reported their commits' store operations (${opsOf.size} epochs, at most ${opsMax} operations)`);
    const seqs = [];
    for (const table of ['app', 'web']) {
        const md = path.join(root, '_openetl/markers', table);
        const markers = fs.existsSync(md) ? fs.readdirSync(md).filter((f) => f.endsWith('.json')).sort() : [];
        const files = []; // {path, t (its marker's time), epoch}
        for (const m of markers) {
            const doc = JSON.parse(fs.readFileSync(path.join(md, m), 'utf8'));
            const t = markerTime(`_openetl/markers/${table}/${m}`);
            for (const f of doc.files) {
                const rel = f.key.startsWith(`${prefix}/`) ? f.key.slice(prefix.length + 1) : f.key;
                files.push({ path: path.join(root, rel), t, epoch: doc.epoch });
            }
        }
        const missing = files.filter((f) => !fs.existsSync(f.path));
        check(missing.length === 0, `${p.name}/${table}: every data file the ${markers.length} markers list exists (${files.length})`);
        const inputs = table === 'app'
            ? fs.readdirSync(path.join(p.dir, 'logs')).filter((f) => /^app\.log(\.\d+)?$/.test(f)).map((f) => path.join(p.dir, 'logs', f))
            : [path.join(p.dir, 'web.log')];
        const nonEmpty = inputs.filter((f) => fs.statSync(f).size > 0);
        const want = nonEmpty.length
            ? `SELECT seq, src, msg FROM read_ndjson([${nonEmpty.map(lit).join(', ')}], columns = {seq: 'BIGINT', src: 'VARCHAR', msg: 'VARCHAR'})`
            : `SELECT 1::BIGINT AS seq, '' AS src, '' AS msg WHERE false`;
        const got = files.length
            ? `SELECT seq::BIGINT AS seq, src, msg FROM read_parquet([${files.map((f) => lit(f.path)).join(', ')}])`
            : `SELECT 1::BIGINT AS seq, '' AS src, '' AS msg WHERE false`;
        seqs.push(`SELECT seq FROM (${got})`);
        const nWant = Number(Object.values((await query(`SELECT count(*) FROM (${want})`))[0])[0]);
        const nWriter = bursts.filter((b) => b.src === table).reduce((s, b) => s + b.to - b.from + 1, 0);
        check(nWant === nWriter, `${p.name}/${table}: the input files hold the ${nWriter} lines the writer wrote (${nWant})`);
        if (!await exceptAll(want, got, `${p.name}/${table}: ${nWant} lines committed exactly once`)) {
            const twice = await query(`SELECT seq, count(*) AS n FROM (${got}) GROUP BY seq HAVING count(*) > 1 ORDER BY seq LIMIT 50`);
            const lost = await query(`SELECT seq FROM ((SELECT seq FROM (${want})) EXCEPT (SELECT seq FROM (${got}))) ORDER BY seq LIMIT 50`);
            console.log(`# ${p.name}/${table}: seed ${SEED}: landed more than once: ${JSON.stringify(twice)}; lost: ${JSON.stringify(lost.map((x) => x.seq))}`);
        }

        // Commits keep up: the time of the last marker that holds a line of each burst.
        const tb = bursts.filter((x) => x.src === table);
        if (!tb.length || !files.length) {
            check(false, `${p.name}/${table}: bursts (${tb.length}) and committed files (${files.length}) to judge the commit delay by`);
            continue;
        }
        const rows = await query(`WITH b(lo, hi) AS (VALUES ${tb.map((b) => `(${b.from}, ${b.to})`).join(', ')}),
            f(name, t, epoch) AS (VALUES ${files.map((f) => `(${lit(f.path)}, ${f.t}::DOUBLE, ${f.epoch})`).join(', ')}),
            r AS (SELECT seq::BIGINT AS seq, filename FROM read_parquet([${files.map((f) => lit(f.path)).join(', ')}], filename = true))
            SELECT b.lo, max(f.t) AS t, arg_max(f.epoch, f.t) AS epoch, count(r.seq) AS n
            FROM b LEFT JOIN r ON r.seq BETWEEN b.lo AND b.hi LEFT JOIN f ON f.name = r.filename GROUP BY b.lo`);
        const commitOf = new Map(rows.map((x) => [Number(x.lo), { t: Number(x.t), epoch: Number(x.epoch), n: Number(x.n) }]));
        let judged = 0;
        let late = 0;
        let excused = 0;
        let longest = null;   // the longest delay judged
        let longestAll = null; // the longest delay of any burst
        for (const b of tb) {
            const c = commitOf.get(b.from);
            if (!c || c.n !== b.to - b.from + 1) continue; // lost lines: the exactly-once check said so
            const ops = opsOf.get(c.epoch) ?? opsMax;
            const bound = INTERVAL_MS + FOLLOW_WAIT_MS + ops * STARVED_MS;
            const delay = c.t - b.t;
            if (!longestAll || delay > longestAll.delay) longestAll = { b, delay, c };
            if (delay > bound && (overlaps(p.down, b.t, b.t + bound) || overlaps(starved, b.t - INTERVAL_MS, b.t + bound))) {
                excused++;
                continue;
            }
            judged++;
            if (!longest || delay - bound > longest.delay - longest.bound) longest = { b, delay, bound, c };
            if (delay > bound) {
                if (late < 5) console.log(`# ${p.name}/${table}: burst ${b.from}..${b.to} appended at ${at(b.t)} s: its last marker (epoch ${c.epoch}, ${ops} store operations) at ${at(c.t)} s, ${Math.round(delay)} ms later; the bound is ${bound} ms`);
                late++;
            }
        }
        // The longest gap between markers while lines were waiting: from the later of a marker
        // and the first append of the lines the next marker holds, to that next marker (a quiet
        // stretch without lines is no gap); "excluded" when it meets an excluded window.
        const times = [...new Set(files.map((f) => f.t))].sort((a, b) => a - b);
        const firstIn = new Map();
        for (const b of tb) {
            const c = commitOf.get(b.from);
            if (c && (!firstIn.has(c.t) || b.t < firstIn.get(c.t))) firstIn.set(c.t, b.t);
        }
        let gap = null;
        let gapAll = null;
        for (let i = 1; i < times.length; i++) {
            if (!firstIn.has(times[i])) continue;
            const g = { from: Math.max(times[i - 1], firstIn.get(times[i])), to: times[i] };
            g.ms = Math.round(g.to - g.from);
            if (!gapAll || g.ms > gapAll.ms) gapAll = g;
            if (!overlaps(p.down, g.from, g.to) && !overlaps(starved, g.from, g.to) && (!gap || g.ms > gap.ms)) gap = g;
        }
        const ms = (x) => Math.round(x);
        const span = (g) => (g ? `${g.ms} ms (${at(g.from)}..${at(g.to)} s)` : 'none');
        console.log(`# ${p.name}/${table}: ${times.length} markers; the longest gap between markers while lines waited ${span(gap)}, ${span(gapAll)} with excluded windows; ` +
            `the longest commit delay ${ms(longestAll.delay)} ms (burst ${longestAll.b.from}..${longestAll.b.to} at ${at(longestAll.b.t)} s)` +
            (longest ? `, judged: ${ms(longest.delay)} ms of a bound of ${longest.bound} ms (burst ${longest.b.from}..${longest.b.to} at ${at(longest.b.t)} s)` : ''));
        check(judged > 0 && late === 0, `${p.name}/${table}: ${judged - late} of ${tb.length} bursts are in markers within their bound, ${excused} later in an excluded window, ${late} later without one`);
    }
    // Every sequence number once per pipeline, over both tables, against 1..N.
    await exceptAll(`SELECT generate_series AS seq FROM generate_series(1, ${total})`, seqs.join(' UNION ALL '),
        `${p.name}: the sequence numbers 1..${total} of both tables, each once`);
}
for (const p of pipes) {
    const r = p.runs.find((x) => x.code !== null && x.code !== 143 && !x.killed);
    if (r) console.log(`# ${p.name}: ${r.stderr.trim().slice(-800)}`);
}
if (pipes.some((p) => p.name === 'rgw')) {
    try { aws(['s3', 'rm', '--recursive', '--quiet', `s3://${rgw.RGW_BUCKET}/${prefix}/`]); } catch (e) { console.log(`# cleanup: ${e.message}`); }
}
done();
