// `s3land run` (issue 12, item 3): a Pipeline document with three sources (NDJSON, CSV, and a glob
// of NDJSON files with an exclude) into three tables of one Destination, on file:// and, with
// S3L_TEST_STORE=s3 (label s3), on Ceph RGW with the keys given as secrets. DuckDB reads every
// table back and compares it with the inputs read by DuckDB itself (A EXCEPT ALL B both ways):
// every row exactly once. Then: a rerun changes nothing; appended lines and a new file that the
// glob matches land once; a source added to the document keeps the pipeline id (one checkpoint,
// the same name) and lands only the new source's rows; a stream whose declared column type
// drifts stops with SCHEMA_DRIFT (the message naming the Pipeline's typeChanges: allow, not
// write's --type-changes) while the other stream lands, the run exits 4, and once the
// type change is allowed the drifted stream lands its rows from where it stopped, once.
import fs from 'node:fs';
import path from 'node:path';
import {
    STORE, check, destUrl, done, exceptAll, listing, lit, run, runOk, tableSql, tmpdir,
} from '../conformance/harness.mjs';

const work = tmpdir('s3l-run');
const lake = path.join(work, 'lake');
const url = STORE === 's3' ? destUrl(lake) : `file://${lake}`;
const inDir = path.join(work, 'in');
fs.mkdirSync(path.join(inDir, 'logs'), { recursive: true });

const ndjson = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const orders = (from, n) => Array.from({ length: n }, (_, i) => ({ id: from + i, item: `item ${from + i}`, qty: (from + i) % 9 }));
const logs = (file, n) => Array.from({ length: n }, (_, i) => ({ file, seq: i, msg: `line ${i} of ${file}` }));
fs.writeFileSync(path.join(inDir, 'orders.ndjson'), ndjson(orders(0, 300)));
fs.writeFileSync(path.join(inDir, 'users.csv'),
    'uid,name\n' + Array.from({ length: 200 }, (_, i) => `${i},user ${i}`).join('\n') + '\n');
for (const f of ['a', 'b', 'c'])
    fs.writeFileSync(path.join(inDir, 'logs', `${f}.ndjson`), ndjson(logs(f, 50 + f.charCodeAt(0) - 97)));
fs.writeFileSync(path.join(inDir, 'logs', 'old-x.ndjson'), ndjson(logs('old-x', 7)));

// The Destination: on S3 the gateway's endpoint and region, and its keys from secrets (the
// runner inherits no ambient credentials).
const destConfig = { url };
const env = {};
if (STORE === 's3') {
    Object.assign(destConfig, {
        endpoint: process.env.AWS_ENDPOINT_URL_S3, region: process.env.AWS_REGION,
        accessKeyId: { secret: 'RGW_KEY' }, secretAccessKey: { secret: 'RGW_SECRET' },
    });
    env.S3LAND_SECRET_RGW_KEY = process.env.AWS_ACCESS_KEY_ID;
    env.S3LAND_SECRET_RGW_SECRET = process.env.AWS_SECRET_ACCESS_KEY;
}
const destFile = path.join(work, 'dest.json');
fs.writeFileSync(destFile, JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
    spec: { connector: 's3', config: destConfig },
}));
const baseSources = [
    { name: 'orders', files: ['in/orders.ndjson'] },
    { name: 'users', files: ['in/users.csv'], format: 'csv' },
    { name: 'logs', files: ['in/logs/*.ndjson'], exclude: ['in/logs/old-*'] },
];
const pipeFile = path.join(work, 'pipe.json');
function writePipeline(sources, destination = {}) {
    fs.writeFileSync(pipeFile, JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: 'shop' },
        spec: { destination: { name: 'lake', ...destination }, sources },
    }));
}
const runArgs = ['run', '--config', destFile, '--config', pipeFile];

const ordersSql = (file) => `SELECT id, item, qty FROM read_json(${lit(file)}, columns={'id': 'BIGINT', 'item': 'VARCHAR', 'qty': 'BIGINT'})`;
const logsSql = (files) => `SELECT file, seq, msg FROM read_json([${files.map(lit).join(', ')}], columns={'file': 'VARCHAR', 'seq': 'BIGINT', 'msg': 'VARCHAR'})`;
const logFiles = () => fs.readdirSync(path.join(inDir, 'logs')).filter((f) => !f.startsWith('old-')).map((f) => path.join(inDir, 'logs', f));
async function checkAll(what) {
    await exceptAll(ordersSql(path.join(inDir, 'orders.ndjson')), tableSql(path.join(lake, 'orders'), 'id, item, qty'), `${what}: orders`);
    await exceptAll(`SELECT uid, name FROM read_csv(${lit(path.join(inDir, 'users.csv'))}, header=true, columns={'uid': 'BIGINT', 'name': 'VARCHAR'})`,
        tableSql(path.join(lake, 'users'), 'uid, name'), `${what}: users`);
    await exceptAll(logsSql(logFiles()), tableSql(path.join(lake, 'logs'), 'file, seq, msg'), `${what}: logs (glob minus exclude)`);
}
const checkpoints = () => fs.readdirSync(path.join(lake, '_openetl', 'checkpoints')).filter((f) => f.endsWith('.json'));

// 1. Three sources into three tables, one epoch commit for all.
writePipeline(baseSources);
let r = runOk(runArgs, { cwd: work, env });
await checkAll('first run');
const ids = checkpoints();
check(ids.length === 1, `one checkpoint for the three streams (${ids.join(' ')})`);
const markers = (t) => fs.existsSync(path.join(lake, '_openetl', 'markers', t)) ? fs.readdirSync(path.join(lake, '_openetl', 'markers', t)).sort() : [];
check(['orders', 'users', 'logs'].every((t) => markers(t).length === 1 && markers(t)[0] === markers('orders')[0]),
    'each stream has its marker of the same epoch');

// 2. A rerun with nothing new changes nothing.
const before = listing(lake);
r = runOk(runArgs, { cwd: work, env });
check(/nothing new/.test(r.stderr), 'the rerun says nothing new');
check(JSON.stringify(listing(lake)) === JSON.stringify(before), 'the rerun changes nothing');

// 3. Appended lines and a new file matched by the glob land once.
fs.appendFileSync(path.join(inDir, 'orders.ndjson'), ndjson(orders(300, 40)));
fs.writeFileSync(path.join(inDir, 'logs', 'd.ndjson'), ndjson(logs('d', 30)));
runOk(runArgs, { cwd: work, env });
await checkAll('after appending and a new glob match');

// 4. A new source keeps the pipeline id and lands only its own rows.
fs.writeFileSync(path.join(inDir, 'extra.ndjson'), ndjson(orders(1000, 25)));
writePipeline([...baseSources, { name: 'extra', files: ['in/extra.ndjson'] }]);
runOk(runArgs, { cwd: work, env });
check(JSON.stringify(checkpoints()) === JSON.stringify(ids), `the pipeline id is kept (${checkpoints().join(' ')})`);
await checkAll('after adding a source');
await exceptAll(ordersSql(path.join(inDir, 'extra.ndjson')), tableSql(path.join(lake, 'extra'), 'id, item, qty'), 'the new source');

// 5. A drifting stream stops, the other lands, exit 4; allowed, it goes on from where it was.
fs.appendFileSync(path.join(inDir, 'orders.ndjson'), ndjson(orders(340, 10)));
fs.appendFileSync(path.join(inDir, 'extra.ndjson'), ndjson(orders(1025, 5)));
const extraBefore = listing(path.join(lake, 'extra'));
const drifting = { name: 'extra', files: ['in/extra.ndjson'], schema: [{ name: 'id', type: 'string' }, { name: 'item', type: 'string' }, { name: 'qty', type: 'int64' }] };
writePipeline([...baseSources, drifting]);
r = run([...runArgs, '--json'], { cwd: work, env });
check(r.code === 4, `a drifting stream makes the run exit 4 (got ${r.code}): ${r.stderr.trim().split('\n').pop()}`);
check(/SCHEMA_DRIFT/.test(r.stderr) && /extra/.test(r.stderr) && /int64/.test(r.stderr), 'the SCHEMA_DRIFT message names the table and the types');
check(/typeChanges: allow in the Pipeline's spec\.destination/.test(r.stderr) && !/--type-changes/.test(r.stderr),
    `the SCHEMA_DRIFT message names the Pipeline's typeChanges: allow, not write's flag: ${r.stderr.trim()}`);
check(r.stdout.split('\n').some((l) => l && JSON.parse(l).event === 'stream_stopped'), 'a stream_stopped event');
// The summary says what the run cost the store, as write's does (it had no requests).
const sum = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.event === 'summary');
const ops = sum?.requests ? Object.values(sum.requests.ops).reduce((a, b) => a + b, 0) : -1;
const unit = process.env.S3L_TEST_STORE === 's3' ? 's3 requests' : 'store operations';
check(sum?.requests?.unit === unit && sum.requests.total > 0 && ops === sum.requests.total,
    `run's --json summary carries the requests by operation (${JSON.stringify(sum?.requests)})`);
await checkAll('the other streams went on');
check(JSON.stringify(listing(path.join(lake, 'extra'))) === JSON.stringify(extraBefore), 'the drifted table is untouched');
writePipeline([...baseSources, drifting], { typeChanges: 'allow' });
runOk(runArgs, { cwd: work, env });
await exceptAll(`SELECT CAST(id AS VARCHAR) AS id, item, qty FROM (${ordersSql(path.join(inDir, 'extra.ndjson'))})`,
    tableSql(path.join(lake, 'extra'), 'CAST(id AS VARCHAR) AS id, item, qty'), 'the drifted stream lands from where it stopped, once');
done();
