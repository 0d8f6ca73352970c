// Two sources into one table (issue 12, item 1: spec.streams maps sources to tables): `s3land
// run` lands the logs of app_a (a glob of two files) and app_b into one `events` table, one
// stream, one checkpoint holding every input's position. The sources' records differ (app_a has
// `host`, app_b `level`): the inferred schema is the union of their columns. DuckDB reads the
// table back and compares it with the inputs read by DuckDB itself (A EXCEPT ALL B both ways):
// every line of both exactly once, each row with its own source's columns and nulls for the
// other's. Then appended lines land once; runs committing every 50ms are killed with SIGKILL at
// random moments (seed printed; S3L_KILL_SEED replays) and a final run must leave every line
// exactly once. Sources that cannot share a table (another format, another declared schema) are
// refused before any data moves, naming both sources.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, check, done, exceptAll, lit, run, runOk, scalar, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-run-shared');
const lake = path.join(work, 'lake');
const inDir = path.join(work, 'in');
fs.mkdirSync(path.join(inDir, 'a'), { recursive: true });
const A1 = path.join(inDir, 'a', 'a1.ndjson'), A2 = path.join(inDir, 'a', 'a2.ndjson'), B = path.join(inDir, 'b.ndjson');

const linesA = (file, from, n) => Array.from({ length: n }, (_, i) =>
    JSON.stringify({ seq: from + i, src: file, host: `h${(from + i) % 7}`, msg: `${file} line ${from + i}` })).join('\n') + '\n';
const linesB = (from, n) => Array.from({ length: n }, (_, i) =>
    JSON.stringify({ seq: from + i, src: 'b', level: ['info', 'warn', 'error'][(from + i) % 3], msg: `b line ${from + i}` })).join('\n') + '\n';
fs.writeFileSync(A1, linesA('a1', 0, 120));
fs.writeFileSync(A2, linesA('a2', 0, 80));
fs.writeFileSync(B, linesB(0, 150));

const destFile = path.join(work, 'dest.json');
fs.writeFileSync(destFile, JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
    spec: { connector: 's3', config: { url: `file://${lake}`, fileSize: '8KiB' } },
}));
const pipeFile = path.join(work, 'pipe.json');
function writePipeline(sources, streams, extra = {}) {
    fs.writeFileSync(pipeFile, JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: 'logs' },
        spec: { destination: { name: 'lake' }, sources, streams, ...extra },
    }));
}
const sources = [{ name: 'app_a', files: ['in/a/*.ndjson'] }, { name: 'app_b', files: ['in/b.ndjson'] }];
const streams = [{ source: 'app_a', table: 'events' }, { source: 'app_b', table: 'events' }];
const runArgs = ['run', '--quiet', '--config', destFile, '--config', pipeFile];

const cols = `{'seq': 'BIGINT', 'src': 'VARCHAR', 'host': 'VARCHAR', 'level': 'VARCHAR', 'msg': 'VARCHAR'}`;
const inputSql = () => `SELECT seq, src, host, level, msg FROM read_json([${[A1, A2, B].map(lit).join(', ')}], columns=${cols})`;
const table = path.join(lake, 'events');
// The table's files by column name: those written before the schema grew lack its new columns.
const tableSql = (dir, c) => `SELECT ${c} FROM read_parquet(${lit(path.join(dir, '*.parquet'))}, union_by_name = true)`;
const checkpoints = () => fs.readdirSync(path.join(lake, '_openetl', 'checkpoints')).filter((f) => f.endsWith('.json'));

// 1. Both sources into one table: every line once, the union of the columns.
writePipeline(sources, streams);
runOk(runArgs, { cwd: work });
await exceptAll(inputSql(), tableSql(table, 'seq, src, host, level, msg'), 'first run: every line of app_a and app_b once');
// The last file written (names sort by epoch) has the table's schema as it grew.
const last = fs.readdirSync(table).filter((f) => f.endsWith('.parquet')).sort().pop();
const names = await scalar(`SELECT string_agg(name, ',' ORDER BY name) FROM parquet_schema(${lit(path.join(table, last))}) WHERE type IS NOT NULL`);
check(names === 'host,level,msg,seq,src',
    `the table's columns are the union of both sources' (${names})`);
check(Number(await scalar(`SELECT count(*) FROM read_parquet(${lit(table + '/*.parquet')}, union_by_name = true) WHERE src = 'b' AND host IS NULL AND level IS NOT NULL`)) === 150,
    "app_b's rows have level, and host null");
check(!fs.existsSync(path.join(lake, 'app_a')) && !fs.existsSync(path.join(lake, 'app_b')), 'no table per source');
const ids = checkpoints();
check(ids.length === 1, `one checkpoint (${ids.join(' ')})`);
const cp = fs.readFileSync(path.join(lake, '_openetl', 'checkpoints', ids[0]), 'utf8');
check([A1, A2, B].every((f) => cp.includes(fs.realpathSync(f))), "the checkpoint holds each source's inputs' positions");

// 2. A rerun lands nothing; appended lines of both land once.
runOk(runArgs, { cwd: work });
await exceptAll(inputSql(), tableSql(table, 'seq, src, host, level, msg'), 'rerun: nothing landed twice');
fs.appendFileSync(A2, linesA('a2', 80, 40));
fs.appendFileSync(B, linesB(150, 60));
runOk(runArgs, { cwd: work });
await exceptAll(inputSql(), tableSql(table, 'seq, src, host, level, msg'), 'appended lines of both sources once');

// 3. kill -9 at random moments while runs commit every 50ms, then a final run: exactly once.
writePipeline(sources, streams, { delivery: { commit: { interval: '50ms' } } });
const killed = (ms) => new Promise((resolve) => {
    const child = spawn(S3LAND, runArgs, { cwd: work, stdio: 'ignore' });
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, signal) => { clearTimeout(t); resolve({ code, signal }); });
});
let kills = 0, full = 400, n = 0;
for (; n < 30 && (n < 8 || kills < 3); n++) {
    const seed = process.env.S3L_KILL_SEED ? Number(process.env.S3L_KILL_SEED) + n : Math.floor(Math.random() * 2 ** 31);
    const delay = 5 + (seed % Math.max(10, full));
    fs.appendFileSync(A1, linesA('a1', 1000 + n * 2000, 2000));
    fs.appendFileSync(B, linesB(1000 + n * 3000, 3000));
    const t0 = Date.now();
    const res = await killed(delay);
    if (res.signal === 'SIGKILL')
        kills++;
    else
        full = Date.now() - t0;
    check(res.signal === 'SIGKILL' || res.code === 0, `run ${n} seed ${seed}: killed after ${delay} ms (${res.signal ?? `exit ${res.code}`})`);
}
check(kills >= 3, `runs were killed mid-way (${kills} of ${n})`);
runOk(runArgs, { cwd: work });
await exceptAll(inputSql(), tableSql(table, 'seq, src, host, level, msg'), 'after kill -9 and a rerun: every line of both once');
check(checkpoints().length === 1, 'still one checkpoint');

// 4. Sources that cannot share a table are refused before any data moves, naming both.
const csv = path.join(inDir, 'c.csv');
fs.writeFileSync(csv, 'seq,src,msg\n1,c,hello\n');
function refused(srcs, want, what) {
    const lake2 = path.join(work, `lake-${what}`);
    const dest2 = path.join(work, `dest-${what}.json`);
    fs.writeFileSync(dest2, JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
        spec: { connector: 's3', config: { url: `file://${lake2}` } },
    }));
    writePipeline(srcs, srcs.map((s) => ({ source: s.name, table: 'events' })));
    const r = run(['run', '--quiet', '--config', dest2, '--config', pipeFile], { cwd: work });
    check(r.code === 1, `${what}: refused with exit 1 (exit ${r.code})`);
    check(want.every((w) => r.stderr.includes(w)), `${what}: the message names both sources and why: ${r.stderr.trim()}`);
    check(!fs.existsSync(lake2), `${what}: nothing written`);
}
refused([{ name: 'app_a', files: ['in/a/a1.ndjson'] }, { name: 'app_c', files: ['in/c.csv'], format: 'csv' }],
    ['table events', 'sources app_a and app_c', 'differ in format'], 'formats');
const schema = [{ name: 'seq', type: 'int64' }, { name: 'msg', type: 'string' }];
refused([{ name: 'app_a', files: ['in/a/a1.ndjson'], schema }, { name: 'app_b', files: ['in/b.ndjson'] }],
    ['table events', 'sources app_a and app_b', 'differ in schema'], 'schemas');
done();
