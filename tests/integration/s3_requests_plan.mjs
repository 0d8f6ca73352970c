// The request plan of a run on S3, counted at the fault proxy (issue 14, "Done when"): a small
// multi-epoch run through tests/support/fault-proxy.mjs, every request it sends named by S3
// operation and key on the proxy's side, compared with the plan of docs/internals/commit.md
// ("Requests per epoch"). It fails when a run or an epoch costs more than the plan says, so a
// repeated read (a second GET of the checkpoint, a HEAD before a copy) cannot come back unseen;
// when requests that go out together do not overlap at the proxy (every read, copy, marker,
// schema record, checkpoint write and delete answered 50 ms late, listings 100 ms, so that
// requests sent one after the other never overlap): an epoch's copies (both streams' at once),
// its schema records (both at once), its staged delete and its committed checkpoint, the start's
// reads (the markers' listing, the checkpoint, a stream's records' listing and its record, all
// in one round trip), the markers of an epoch's streams (two tables through `run --config`:
// after every copy, before the committed checkpoint); when `s3land write --json` reports other
// counts than the proxy saw (per run and per epoch); and when a checkpoint PUT whose answer was
// lost stops the run.
// Runs in the s3 label against the fixture's RGW (S3L_RGW_ENV).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { S3LAND, SOURCE_DIR, check, done, lit, scalar, schemaFile, tmpdir } from '../conformance/harness.mjs';

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
async function run(lake, extra, argv = null) {
    await control('reset', 'POST');
    // Copies, reads and markers answered 50 ms late: requests sent one after the other can never
    // overlap then.
    const slow = (op, more = {}) => ({ op, times: -1, action: 'slow', delayMs: 50, ...more });
    // Listings 100 ms: the start's batch goes out in waves of the client's 4 in flight, each
    // read after the first wave sent when one of it is answered; with every read equally late
    // the whole wave could be answered before the next read goes out (a gap, on a loaded
    // machine or under a sanitizer), which the batch's check could not tell from two groups.
    await control('rules', 'POST', JSON.stringify([slow('CopyObject'), slow('GetObject'),
        slow('ListObjectsV2', { delayMs: 100 }), slow('PutObject', { keyIncludes: '/_openetl/markers/' }),
        slow('PutObject', { keyIncludes: '/_openetl/checkpoints/' }),
        slow('PutObject', { keyIncludes: '/_openetl/schemas/' }), slow('DeleteObject'),
        slow('DeleteObjects')]));
    const r = spawnSync(S3LAND, argv || ['write', '--url', `s3://${rgw.RGW_BUCKET}/${prefix}/${lake}`,
        '--table', 'ev', '--schema', schema, '--json', ...extra, input], { env, encoding: 'utf8' });
    check(r.status === 0, `s3land ${lake} exits 0 (${r.status}: ${r.stderr.trim()})`);
    const events = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const { log, maxInFlight } = JSON.parse(await control('counts'));
    if (process.env.S3L_PLAN_DEBUG)
        console.log(JSON.stringify({ stdout: r.stdout, log }, null, 1));
    return { events, maxInFlight,
        log: log.filter((e) => e.key === '' || e.key.startsWith(`${prefix}/${lake}/`)) };
}

const byOp = (log) => {
    const m = {};
    for (const e of log) m[e.op] = (m[e.op] || 0) + 1;
    return m;
};
const same = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
// Two requests overlapped at the proxy: each arrived before the other was answered.
const overlap = (a, b) => a.t0 < b.t1 && b.t0 < a.t1;
// Requests' arrival and answer times at the proxy, for a message: "12-63, 13-70 ms".
const spans = (list) => `${list.map((e) => `${Math.round(e.t0)}-${Math.round(e.t1)}`).join(', ')} ms`;
// The requests of op whose key holds part (a list's: whose prefix ends with part).
const find = (log, op, part) => log.filter((e) => e.op === op &&
    (op === 'ListObjectsV2' ? e.prefix.endsWith(part) : e.key.includes(part)));
function overlapped(log, what, a, b) {
    check(a.length === 1 && b.length === 1, `${what}: one request each (${a.length}, ${b.length})`);
    if (a.length === 1 && b.length === 1)
        check(overlap(a[0], b[0]), `${what}: they travel together (${a[0].op} ${spans(a)}, ` +
            `${b[0].op} ${spans(b)})`);
}
// The start's four reads of table t travel together (one round trip): the markers' listing, the
// checkpoint, the records' listing and the record, each overlapping the others.
function startReads(log, what, t) {
    const reads = [find(log, 'ListObjectsV2', `/_openetl/markers/${t}/`),
        find(log, 'GetObject', '/_openetl/checkpoints/'),
        find(log, 'ListObjectsV2', `/_openetl/schemas/${t}/`),
        // the record's first read (the second is the re-read before the first commit point)
        find(log, 'GetObject', `/_openetl/schemas/${t}.json`).sort((x, y) => x.t0 - y.t0).slice(0, 1)];
    const names = ['markers\' listing', 'checkpoint', 'records\' listing', 'record'];
    for (let i = 0; i < reads.length; i++)
        for (let j = i + 1; j < reads.length; j++)
            overlapped(log, `${what}: ${t}'s ${names[i]} and ${names[j]}`, reads[i], reads[j]);
}
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
// for one file, DeleteObjects for more), and the first epoch, which carries the new table's
// schema record, 1 GetObject of it (read again before the commit point: has another writer
// recorded a column with another type?) and 1 PutObject of it.
function plan(E, f) {
    const ops = {
        ListObjectsV2: 2, GetObject: 2 + 1,
        PutObject: 1 + E * (f + 3) + 1, CopyObject: E * f,
    };
    ops[f === 1 ? 'DeleteObject' : 'DeleteObjects'] = E;
    // the first: the claim, the record's re-read and its write
    const epoch = (e) => 2 * f + 4 + (e === 1 ? 3 : 0);
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
    check(reads('schema') === 2, `${lake}: the schema record is read twice: at the start and ` +
        `before the first epoch's commit point (${reads('schema')})`);
    // That re-read: after the epoch's staged files were answered, before its commit point.
    const rec = find(log, 'GetObject', '/_openetl/schemas/ev.json').sort((x, y) => x.t0 - y.t0);
    const staged1 = log.filter((e) => e.op === 'PutObject' && kind(e.key) === 'staged' && epochOf(e.key) === 1);
    const point1 = find(log, 'PutObject', '/_openetl/checkpoints/').sort((x, y) => x.t0 - y.t0)[1];
    check(rec.length === 2 && staged1.length === f && staged1.every((p) => rec[1].t0 > p.t1) &&
        point1 && point1.t0 > rec[1].t1, `${lake}: the record's re-read goes out after epoch 1's ` +
        `staged files and before its commit point (${spans(rec)}; ${spans(staged1)}; ${spans([point1])})`);
    // The start's reads in one round trip, not four: the markers' listing (landed elsewhere?),
    // the checkpoint, the stream's listing of the records under ev/ and ev's record.
    startReads(log, lake, 'ev');
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

// Two streams in one epoch: `run --config` with two sources, one table each, one commit at the
// end (interval 1h). The plan: the checkpoint and each table's markers' listing (the id is
// derived: the landed check), together; per table its records' listing and its record,
// together; the claim (when the first table's rows are staged, before the second table's stream
// opens: so it is counted in the start, not in the epoch); then the epoch: 2 staged files, the
// commit point, 2 schema records, 2 copies, 2 markers (together, after both copies), the
// committed checkpoint (after both markers), 1 DeleteObjects.
async function checkMulti() {
    const lake = 'multi';
    const tables = ['ma', 'mb'];
    for (const t of tables)
        fs.writeFileSync(path.join(work, `${t}.ndjson`), Array.from({ length: 500 }, (_, i) =>
            JSON.stringify({ id: i, name: `${t}${i}`, v: i * 0.5 })).join('\n') + '\n');
    const doc = path.join(work, 'multi.yaml');
    fs.writeFileSync(doc, [
        'apiVersion: openetl.io/v1alpha1', 'kind: Destination', 'metadata: {name: rgw}',
        `spec: {connector: s3, config: {url: "s3://${rgw.RGW_BUCKET}/${prefix}/${lake}", ` +
        `endpoint: "http://127.0.0.1:${port}", region: "${rgw.AWS_DEFAULT_REGION}", ` +
        'accessKeyId: {secret: RGW_KEY}, secretAccessKey: {secret: RGW_SECRET}}}', '---',
        'apiVersion: openetl.io/v1alpha1', 'kind: Pipeline', 'metadata: {name: multi}',
        'spec: {destination: {name: rgw}, delivery: {commit: {interval: 1h}}, sources: [' +
        tables.map((t) => `{name: ${t}, files: ["${t}.ndjson"], schema: "${schema}"}`).join(', ') +
        ']}', ''].join('\n'));
    env.S3LAND_SECRET_RGW_KEY = rgw.AWS_ACCESS_KEY_ID;
    env.S3LAND_SECRET_RGW_SECRET = rgw.AWS_SECRET_ACCESS_KEY;
    const { events, log } = await run(lake, [], ['run', '--config', doc, '--json']);
    const want = { GetObject: 1 + tables.length + tables.length, ListObjectsV2: 2 * tables.length,
        PutObject: 1 + tables.length + 1 + tables.length + tables.length + 1,
        CopyObject: tables.length, DeleteObjects: 1 };
    const seen = byOp(log);
    check(same(seen, want), `${lake}: requests by operation at the proxy ${JSON.stringify(seen)} ` +
        `are the plan's ${JSON.stringify(want)}`);
    // The start's seven reads (the checkpoint, and per table its markers' listing, its records'
    // listing and its record) are one batch: more than the client's 4 in flight, so they travel
    // in waves, but each goes out before all the earlier ones were answered (never a gap with no
    // read in flight, as between two groups sent one after the other).
    const reads = [...find(log, 'GetObject', '/_openetl/checkpoints/')];
    const rereads = [];
    for (const t of tables) {
        const recs = find(log, 'GetObject', `/_openetl/schemas/${t}.json`).sort((x, y) => x.t0 - y.t0);
        reads.push(...find(log, 'ListObjectsV2', `/_openetl/markers/${t}/`),
            ...find(log, 'ListObjectsV2', `/_openetl/schemas/${t}/`), recs[0]);
        rereads.push(recs[1]);
    }
    // The records read again before the commit point (both at once), after the start's reads.
    check(rereads.every(Boolean) && overlap(rereads[0], rereads[1]), `${lake}: the two records' ` +
        `re-reads travel together (${spans(rereads.filter(Boolean))})`);
    check(reads.length === 7, `${lake}: the start's 7 reads, once each (${reads.length})`);
    reads.sort((x, y) => x.t0 - y.t0);
    let end = reads[0].t1, gaps = 0;
    for (const r of reads.slice(1)) {
        if (r.t0 > end) gaps++;
        end = Math.max(end, r.t1);
    }
    check(gaps === 0, `${lake}: the start's reads go out as one batch (${gaps} gaps with none in ` +
        `flight: ${spans(reads)})`);
    const markers = find(log, 'PutObject', '/_openetl/markers/');
    const copies = log.filter((e) => e.op === 'CopyObject');
    const ckpts = find(log, 'PutObject', '/_openetl/checkpoints/');
    check(markers.length === tables.length, `${lake}: ${tables.length} markers (${markers.length})`);
    check(markers.length === 2 && overlap(markers[0], markers[1]), `${lake}: the streams' markers ` +
        `travel together (${spans(markers)})`);
    check(markers.every((m) => copies.every((c) => m.t0 > c.t1)), `${lake}: every marker goes out ` +
        'after every copy was answered');
    // The two tables' schema records in one batch, before any copy.
    const records = find(log, 'PutObject', '/_openetl/schemas/');
    check(records.length === 2 && overlap(records[0], records[1]), `${lake}: the two schema ` +
        `records travel together (${spans(records)})`);
    check(records.every((r) => copies.every((c) => c.t0 > r.t1)), `${lake}: every copy goes out ` +
        'after both records were answered');
    // The copies of both streams in one batch (one round trip for the epoch, not one a stream).
    check(copies.length === 2 && overlap(copies[0], copies[1]), `${lake}: the two streams' copies ` +
        `travel together (${spans(copies)})`);
    const committed = ckpts[ckpts.length - 1];
    check(ckpts.length === 3 && markers.every((m) => committed.t0 > m.t1), `${lake}: the committed ` +
        `checkpoint goes out after both markers were answered (${ckpts.length} checkpoint writes)`);
    // The staged delete: after every marker was answered (a recovery then reads no staged file),
    // together with the committed checkpoint (one round trip for both, commit.md step 4).
    const dels = log.filter((e) => e.op === 'DeleteObjects');
    check(dels.length === 1 && markers.every((m) => dels[0].t0 > m.t1), `${lake}: the staged ` +
        'delete goes out after both markers were answered');
    check(dels.length === 1 && overlap(dels[0], committed), `${lake}: the staged delete travels ` +
        `with the committed checkpoint (${spans(dels)}; ${spans([committed])})`);
    const commits = events.filter((x) => x.event === 'commit');
    // f files and s streams: 2f + 3s + 3 (f staged, the commit point, f copies, s markers, the
    // committed checkpoint, 1 delete, and s records read again and written, the epoch being the
    // first; the claim went to the start, above).
    const per = 2 * tables.length + 3 * tables.length + 3;
    check(commits.length === 1 && commits[0].requests?.total === per, `${lake}: the epoch cost ` +
        `${commits[0]?.requests?.total} requests, the plan ${per}`);
}

// A checkpoint PUT the store performed whose answer was lost (the proxy forwards it, then drops
// the connection, or answers without the ETag; `action`): the client's retry fails its condition (412, the checkpoint is already ours),
// and the writer, re-reading it, finds its own bytes and goes on (it stopped with CONFLICT
// before). Three epochs: the claim, then per epoch the commit point and the committed write;
// the 4th checkpoint PUT (epoch 2's commit point) loses its answer. The run ends 0 with three
// epochs, each data file copied once and holding every row once (read back by curl and DuckDB),
// and a rerun finds nothing new.
async function checkLostCheckpointAnswer(lake, skip, action = 'reset_after') {
    const lost = { op: 'PutObject', keyIncludes: '/_openetl/checkpoints/', times: 1, skip,
        action };
    await control('reset', 'POST');
    await control('rules', 'POST', JSON.stringify([lost]));
    const url = `s3://${rgw.RGW_BUCKET}/${prefix}/${lake}`;
    const args = ['write', '--url', url, '--table', 'ev', '--schema', schema, '--json',
        '--epoch-rows', '1000', input];
    const r = spawnSync(S3LAND, args, { env, encoding: 'utf8' });
    check(r.status === 0, `${lake}: a lost checkpoint answer does not stop the run (${r.status}: ${r.stderr.trim()})`);
    const events = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const { log } = JSON.parse(await control('counts'));
    const mine = log.filter((e) => e.key.startsWith(`${prefix}/${lake}/`));
    const ckPuts = find(mine, 'PutObject', '/_openetl/checkpoints/');
    check(ckPuts.some((e) => e.status === 412), `${lake}: the retried checkpoint PUT failed its ` +
        `condition (${ckPuts.map((e) => e.status).join(', ')})`);
    const commits = events.filter((x) => x.event === 'commit');
    check(commits.length === 3, `${lake}: 3 epochs committed (${commits.length})`);
    const finals = mine.filter((e) => e.op === 'CopyObject').map((e) => e.key);
    check(finals.length === 3, `${lake}: each data file copied once (${finals.length})`);
    // The data files read back with curl's own SigV4 signer and counted by DuckDB: every row of
    // the input once (ids 0..2999).
    const files = finals.map((k, i) => {
        const out = path.join(work, `${lake}-${i}.parquet`);
        const g = spawnSync('curl', ['-sf', '--aws-sigv4', `aws:amz:${rgw.AWS_DEFAULT_REGION}:s3`,
            '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD', '--user', `${rgw.AWS_ACCESS_KEY_ID}:${rgw.AWS_SECRET_ACCESS_KEY}`, '-o', out,
            `${rgw.RGW_ENDPOINT}/${rgw.RGW_BUCKET}/${k}`]);
        check(g.status === 0, `${lake}: GET ${k} (curl ${g.status})`);
        return out;
    });
    const got = await scalar(`SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || sum(id) FROM ` +
        `read_parquet([${files.map(lit).join(', ')}])`);
    check(got === '3000 3000 4498500', `${lake}: DuckDB reads 3000 rows, 3000 distinct ids, ` +
        `their sum 4498500 (${got})`);
    await control('reset', 'POST');
    const again = spawnSync(S3LAND, args, { env, encoding: 'utf8' });
    check(again.status === 0 && again.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
        .some((x) => x.event === 'up_to_date'), `${lake}: the rerun finds nothing new`);
}

try {
    // Three epochs of one file each, then three of two files each (small files: --file-size).
    await checkRun('one', 3, 1, ['--epoch-rows', '1000']);
    await checkRun('two', 3, 2, ['--epoch-rows', '1000', '--file-size', '8KiB', '--row-group-rows', '250']);
    // A rerun with nothing new: the start's four reads, once each, in one round trip (the
    // records are read with the rest, before the runner knows whether a stream will open; none
    // does), nothing written.
    const { events, log } = await run('one', ['--epoch-rows', '1000']);
    const seen = byOp(log);
    check(same(seen, { ListObjectsV2: 2, GetObject: 2 }), `rerun: only the start's four reads ${JSON.stringify(seen)}`);
    startReads(log, 'rerun', 'ev');
    check(events.some((x) => x.event === 'up_to_date'), 'rerun: up to date');
    await checkMulti();
    // Epoch 2's commit point (the 4th checkpoint PUT), then the claim (the 1st): a claim whose
    // answer was lost finds its own bytes (its writer's token) and stands (exit 5 FENCED, "another
    // writer took the checkpoint", before).
    await checkLostCheckpointAnswer('lost', 3);
    await checkLostCheckpointAnswer('lost-claim', 0);
    // The same answer mangled instead of lost (a break-it run: the writer kept the ETag it did
    // not get and signed an empty If-Match, which curl does not send: 403 SignatureDoesNotMatch,
    // exit 8): a 200 carrying an <Error>, and a 200 without its ETag, are retried as lost.
    await checkLostCheckpointAnswer('err200', 3, 'error_in_200');
    await checkLostCheckpointAnswer('no-etag', 3, 'drop_etag');
} finally {
    proxy.kill('SIGTERM');
}
done();
