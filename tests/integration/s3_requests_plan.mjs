// The request plan of a run on S3, counted at the fault proxy (issue 14, "Done when"): a small
// multi-epoch run through tests/support/fault-proxy.mjs, every request it sends named by S3
// operation and key on the proxy's side, compared with the plan of docs/internals/commit.md
// ("Requests per epoch"). It fails when a run or an epoch costs more than the plan says, so a
// repeated read (a second GET of the checkpoint, a HEAD before a copy) cannot come back unseen,
// when an epoch's copies do not travel together, and when `s3land write --json` reports other
// counts than the proxy saw (per run and per epoch).
// Runs in the s3 label against the fixture's RGW (S3L_RGW_ENV).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { S3LAND, SOURCE_DIR, check, done, schemaFile, tmpdir } from '../conformance/harness.mjs';

const envFile = process.env.S3L_RGW_ENV;
if (!envFile) {
    console.log('SKIP: needs S3L_RGW_ENV (the env file of tests/stores/start-rgw.sh)');
    process.exit(77);
}
const rgw = {};
for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
    const m = /^(?:export )?([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) rgw[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
}

// The proxy, in front of the fixture's gateway.
const proxy = spawn('node', [path.join(SOURCE_DIR, 'tests/support/fault-proxy.mjs'), '--target',
    rgw.RGW_ENDPOINT], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: proxy.stdout });
    rl.on('line', (l) => { const m = /^LISTENING (\d+)/.exec(l); if (m) resolve(Number(m[1])); });
    proxy.on('exit', (c) => reject(new Error(`fault proxy exited (${c})`)));
});
const control = async (what, method = 'GET', body = undefined) =>
    (await fetch(`http://127.0.0.1:${port}/__proxy/${what}`, { method, body })).text();

const env = {
    ...process.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`, AWS_REGION: rgw.AWS_DEFAULT_REGION,
    AWS_DEFAULT_REGION: rgw.AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID: rgw.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: rgw.AWS_SECRET_ACCESS_KEY,
};
delete env.AWS_ENDPOINT_URL;
delete env.AWS_SESSION_TOKEN;
delete env.S3LAND_TRACE;

const work = tmpdir('s3l-requests');
const prefix = `requests-${process.pid}-${Date.now()}`;
const input = path.join(work, 'ev.ndjson');
fs.writeFileSync(input, Array.from({ length: 3000 }, (_, i) =>
    JSON.stringify({ id: i, name: `n${i}`, v: i * 1.5 })).join('\n') + '\n');
const schema = schemaFile(work, 'ev.json', [{ name: 'id', type: 'int64' },
    { name: 'name', type: 'string' }, { name: 'v', type: 'float64' }]);

// One CLI run through the proxy: its --json events and the proxy's log of what it sent.
async function run(lake, extra) {
    await control('reset', 'POST');
    // Copies answered 50 ms late: copies sent one after the other can never overlap then.
    await control('rules', 'POST', JSON.stringify([{ op: 'CopyObject', times: -1, action: 'slow',
        delayMs: 50 }]));
    const r = spawnSync(S3LAND, ['write', '--url', `s3://${rgw.RGW_BUCKET}/${prefix}/${lake}`,
        '--table', 'ev', '--schema', schema, '--json', ...extra, input], { env, encoding: 'utf8' });
    check(r.status === 0, `s3land write ${lake} exits 0 (${r.status}: ${r.stderr.trim()})`);
    const events = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const { log, maxInFlight } = JSON.parse(await control('counts'));
    return { events, maxInFlight,
        log: log.filter((e) => e.key === '' || e.key.startsWith(`${prefix}/${lake}/`)) };
}

const byOp = (log) => {
    const m = {};
    for (const e of log) m[e.op] = (m[e.op] || 0) + 1;
    return m;
};
const same = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
const epochOf = (key) => { const m = /-(\d{20})[.-]/.exec(path.basename(key)); return m ? Number(m[1]) : 0; };
const kind = (key) => key.includes('/_openetl/checkpoints/') ? 'checkpoint'
    : key.includes('/_openetl/schemas/') ? 'schema' : key.includes('/_openetl/markers/') ? 'marker'
        : key.includes('/_openetl/staging/') ? 'staged' : key === '' ? 'bucket' : 'data';

// The plan (docs/internals/commit.md "Requests per epoch") for one table, one lane, a declared
// schema, derived pipeline id, fresh lake, E epochs of f files each, every file under the part
// size (one PutObject): start 4 reads (ListObjectsV2 of the table's markers, GetObject of the
// checkpoint, ListObjectsV2 of the records under T/, GetObject of T's record), the claim (1
// PutObject of the checkpoint), then per epoch f PutObject (staging) + 1 PutObject (commit
// point) + f CopyObject + 1 PutObject (marker) + 1 PutObject (committed) + 1 delete (DeleteObject
// for one file, DeleteObjects for more), and the first epoch 1 PutObject of the schema record.
function plan(E, f) {
    const ops = {
        ListObjectsV2: 2, GetObject: 2,
        PutObject: 1 + E * (f + 3) + 1, CopyObject: E * f,
    };
    ops[f === 1 ? 'DeleteObject' : 'DeleteObjects'] = E;
    const epoch = (e) => 2 * f + 4 + (e === 1 ? 2 : 0); // the first: the claim and the record
    return { ops, epoch };
}

async function checkRun(lake, E, f, extra) {
    const { events, log, maxInFlight } = await run(lake, extra);
    // An epoch's copies go out together (CopyObjects at once), never more than its files.
    check((maxInFlight.CopyObject || 0) === f, `${lake}: ${f} CopyObject in flight at once ` +
        `(${maxInFlight.CopyObject})`);
    const want = plan(E, f);
    const seen = byOp(log);
    check(same(seen, want.ops), `${lake}: requests by operation at the proxy ${JSON.stringify(seen)} ` +
        `are the plan's ${JSON.stringify(want.ops)}`);
    check(!log.some((e) => e.op === 'HeadObject'), `${lake}: no HeadObject at all`);
    const reads = (k) => log.filter((e) => e.op === 'GetObject' && kind(e.key) === k).length;
    check(reads('checkpoint') === 1, `${lake}: the checkpoint is read once (${reads('checkpoint')})`);
    check(reads('schema') === 1, `${lake}: the schema record is read once (${reads('schema')})`);
    for (let e = 1; e <= E; e++) {
        const mine = log.filter((x) => x.key && epochOf(x.key) === e);
        const per = byOp(mine);
        const wantPer = { PutObject: f + 1, CopyObject: f };
        if (f === 1) wantPer.DeleteObject = 1;
        check(same(per, wantPer), `${lake}: epoch ${e}'s own keys cost ${JSON.stringify(per)}, ` +
            `the plan ${JSON.stringify(wantPer)}`);
    }
    const summary = events.find((x) => x.event === 'summary');
    check(summary?.requests?.unit === 's3 requests', `${lake}: the summary reports s3 requests`);
    check(same(summary.requests.ops, seen), `${lake}: the summary's counts ${JSON.stringify(summary.requests.ops)} ` +
        'are the proxy\'s');
    check(summary.requests.total === log.length, `${lake}: summary total ${summary.requests.total} = ${log.length}`);
    const commits = events.filter((x) => x.event === 'commit');
    check(commits.length === E, `${lake}: ${E} commit events (${commits.length})`);
    for (const c of commits)
        check(c.requests?.total === want.epoch(c.epoch), `${lake}: epoch ${c.epoch} cost ` +
            `${c.requests?.total} requests, the plan ${want.epoch(c.epoch)}`);
    return summary;
}

try {
    // Three epochs of one file each, then three of two files each (small files: --file-size).
    await checkRun('one', 3, 1, ['--epoch-rows', '1000']);
    await checkRun('two', 3, 2, ['--epoch-rows', '1000', '--file-size', '8KiB', '--row-group-rows', '250']);
    // A rerun with nothing new: the markers' listing (landed elsewhere?) and the checkpoint, once
    // each; no stream is opened (no record read), nothing is written.
    const { events, log } = await run('one', ['--epoch-rows', '1000']);
    const seen = byOp(log);
    check(same(seen, { ListObjectsV2: 1, GetObject: 1 }), `rerun: only two reads ${JSON.stringify(seen)}`);
    check(events.some((x) => x.event === 'up_to_date'), 'rerun: up to date');
} finally {
    proxy.kill('SIGTERM');
}
done();
