// A lake written before issue 9 ("Structure") moved the storage layout into commit/layout.c is
// read, recovered, appended to and collected by today's build, and every row is there exactly
// once. The lake is tests/fixtures/lake-v1/lake (its README says how it was made: 4 pipelines,
// 3 tables of which one in a namespace, 3 epochs of 2 lanes, a column added, dead letters, an
// epoch killed between its two copies and left pending, and files staged by a run killed before
// its commit point). Its inputs are in tests/fixtures/lake-v1/inputs: the expected rows are those
// (DuckDB reads them), not figures copied from a run.
import fs from 'node:fs';
import path from 'node:path';
import { SOURCE_DIR, check, done, exceptAll, lit, query, run, runOk, scalar, tmpdir } from '../conformance/harness.mjs';

const fixture = path.join(SOURCE_DIR, 'tests/fixtures/lake-v1');
const inputs = path.join(fixture, 'inputs');
const work = tmpdir('s3l-lake-v1');
const lake = path.join(work, 'lake');
fs.cpSync(path.join(fixture, 'lake'), lake, { recursive: true });
// The fixture's writers are long dead: their checkpoints are an hour old, as a copy would not keep
// them (gc claims a pipeline whose checkpoint is older than twice its commit interval).
const ckdir = path.join(lake, '_openetl/checkpoints');
const anHourAgo = new Date(Date.now() - 3600 * 1000);
for (const f of fs.readdirSync(ckdir)) fs.utimesSync(path.join(ckdir, f), anHourAgo, anHourAgo);
const P3 = '33333333-3333-4333-8333-333333333333';
const P4 = '44444444-4444-4444-8444-444444444444';
const jsonLines = (out) => out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const byTable = (out) => Object.fromEntries(jsonLines(out).map((t) => [t.table, t]));

// ls: the tables as the old build committed them (logs' only file is not covered by a marker).
let tables = byTable(runOk(['ls', '--url', lake, '--json']).stdout);
check(JSON.stringify(Object.keys(tables).sort()) === '["events","logs","shop/orders"]',
    `ls: three tables (${Object.keys(tables)})`);
check(tables.events?.files === 3 && tables.events?.rows === 50 && tables.events?.epochs === 3,
    `ls: events 3 files, 50 rows, 3 epochs (${JSON.stringify(tables.events)})`);
check(tables['shop/orders']?.files === 2 && tables['shop/orders']?.rows === 13 &&
    tables['shop/orders']?.epochs === 2, `ls: shop/orders 2 files, 13 rows, 2 epochs`);
check(tables.logs?.files === 0 && tables.logs?.epochs === 0, 'ls: logs has nothing committed yet');
let logs = jsonLines(runOk(['ls', '--url', lake, '--table', 'logs', '--json']).stdout);
check(logs.filter((f) => f.file).length === 1 && logs.some((f) => f.file && f.committed === false && f.rows === 11),
    'ls --table logs: the copied file of the pending epoch, 11 rows, not committed');
logs = jsonLines(runOk(['ls', '--url', lake, '--table', 'logs', '--committed', '--json']).stdout);
check(logs.filter((f) => f.file).length === 0, 'ls --committed --table logs: no file before recover');

// schema: the records, the added column included.
const cols = (t) => {
    const rec = JSON.parse(runOk(['schema', '--url', lake, '--table', t, '--json']).stdout).record;
    return (Array.isArray(rec) ? rec : rec.columns).map((c) => `${c.name}:${c.type}:${c.nullable}`).join(',');
};
check(cols('events') === 'id:int64:true,s:string:true,extra:string:true', `schema events: ${cols('events')}`);
const rec = JSON.parse(runOk(['schema', '--url', lake, '--namespace', 'shop', '--table', 'orders', '--json']).stdout).record;
const orderCols = (Array.isArray(rec) ? rec : rec.columns).map((c) => `${c.name}:${c.type}:${c.nullable}`).join(',');
check(orderCols === 'id:int64:false,amount:double:true', `schema shop/orders: ${orderCols}`);

// recover: the pending epoch of P3 is finished with the names it recorded.
const rec3 = jsonLines(runOk(['recover', '--url', lake, '--json']).stdout);
check(rec3.length === 1 && rec3[0].pipeline === P3 && rec3[0].epoch === 1,
    `recover: P3's epoch 1 (${JSON.stringify(rec3)})`);
logs = jsonLines(runOk(['ls', '--url', lake, '--table', 'logs', '--committed', '--json']).stdout);
check(logs.filter((f) => f.file && f.committed).length === 1, 'ls --committed --table logs: the file after recover');
check(jsonLines(runOk(['recover', '--url', lake, '--json']).stdout).length === 0, 'recover again: nothing pending');

// An append to a table of the old lake, by a new pipeline.
const more = path.join(work, 'more.ndjson');
fs.writeFileSync(more, Array.from({ length: 10 }, (_, i) =>
    JSON.stringify({ id: 1000 + i, s: `m${i}`, extra: i % 2 ? null : `y${i}` })).join('\n') + '\n');
runOk(['write', '--url', lake, '--table', 'events', '--quiet', more]);
runOk(['write', '--url', lake, '--table', 'events', '--quiet', more]); // a rerun adds nothing
tables = byTable(runOk(['ls', '--url', lake, '--json']).stdout);
check(tables.events?.rows === 60 && tables.events?.epochs === 4, `ls after the append: events 60 rows, 4 epochs`);

// gc: the files P4 staged before its kill can never commit; they go, nothing else does.
const staging4 = path.join(lake, '_openetl/staging', P4);
const stagedFiles = (d) => fs.existsSync(d) ? fs.readdirSync(d, { recursive: true })
    .filter((f) => f.endsWith('.parquet')) : [];
check(stagedFiles(staging4).length === 1, 'P4 left one staged file');
const gc = jsonLines(runOk(['gc', '--url', lake, '--json']).stdout);
const removed = Object.fromEntries(gc.filter((e) => e.pipeline).map((e) => [e.pipeline, e.removed]));
check(removed[P4] === 1 && Object.values(removed).reduce((a, b) => a + b, 0) === 1,
    `gc removed P4's staged file and nothing else (${JSON.stringify(removed)})`);
check(stagedFiles(staging4).length === 0, 'no staged file of P4 after gc');
// gc names each pipeline with its tables (issue 10 item 12): by its markers, its pending epoch or
// what it staged (P4 never committed: its table comes from its staged file).
const tablesOf = Object.fromEntries(gc.filter((e) => e.pipeline).map((e) => [e.pipeline, JSON.stringify(e.tables)]));
check(tablesOf['11111111-1111-4111-8111-111111111111'] === '["events"]' && tablesOf[P3] === '["logs"]' &&
    tablesOf['22222222-2222-4222-8222-222222222222'] === '["shop/orders"]' && tablesOf[P4] === '["shop/orders"]',
    `gc names each pipeline's tables (${JSON.stringify(tablesOf)})`);
const gcText = runOk(['gc', '--url', lake]).stdout;
// Again: P4 has nothing left anywhere (never committed, its staged file gone), so no table.
// (The first gc claimed them all, so this one finds fresh checkpoints and claims none.)
check(gcText.includes(`pipeline ${P3} (table logs): not claimed`) &&
    gcText.includes(`pipeline ${P4} (no table): not claimed`), `gc's text names the tables:\n${gcText}`);
check(stagedFiles(path.join(lake, '_openetl/staging')).length === 0, 'no staged file at all after gc');

// Every row exactly once (DuckDB over the inputs and over the tables).
const rd = (f, c) => `SELECT * FROM read_json(${lit(path.join(inputs, f))}, format='newline_delimited', columns=${c})`;
const pq = (t, c) => `SELECT ${c} FROM read_parquet(${lit(path.join(lake, t, '*.parquet'))}, union_by_name=true)`;
await exceptAll(
    `${rd('events.ndjson', "{id: 'BIGINT', s: 'VARCHAR', extra: 'VARCHAR'}")} UNION ALL SELECT * FROM read_json(${lit(more)}, format='newline_delimited', columns={id: 'BIGINT', s: 'VARCHAR', extra: 'VARCHAR'})`,
    pq('events', 'id, s, extra'), 'events: the old rows and the appended ones, once each');
await exceptAll(`SELECT id, amount FROM (${rd('orders.ndjson', "{id: 'BIGINT', amount: 'VARCHAR'}")}) WHERE id NOT IN (4, 11)`,
    pq('shop/orders', 'id, CAST(amount AS VARCHAR) AS amount'), 'shop/orders: every good row once, P4\'s rows none');
await exceptAll(`SELECT CAST(n AS BIGINT) AS n, msg FROM (${rd('logs.ndjson', "{n: 'VARCHAR', msg: 'VARCHAR'}")}) WHERE n <> 'seven'`,
    pq('logs', 'n, msg'), 'logs: every good row of the recovered epoch once');
check(await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 'shop/orders/*.parquet'))}) WHERE id >= 100`) === 0,
    'shop/orders: nothing of the run killed before its commit point');

// Dead letters: the rejected records, once each, under _openetl/deadletter/T/.
const dead = (t) => {
    const d = path.join(lake, '_openetl/deadletter', t);
    return fs.readdirSync(d).filter((f) => f.endsWith('.ndjson'))
        .flatMap((f) => jsonLines(fs.readFileSync(path.join(d, f), 'utf8'))).map((r) => JSON.parse(r.record).id ?? JSON.parse(r.record).n).sort();
};
check(JSON.stringify(dead('shop/orders')) === '[11,4]', `dead letters of shop/orders: ids 4 and 11 (${dead('shop/orders')})`);
check(JSON.stringify(dead('logs')) === '["seven"]', `dead letters of logs: the recovered one (${dead('logs')})`);
check((await query(`SELECT 1`)).length === 1, 'DuckDB answers');
done();
