// Two writers that open one table at the same moment cannot commit one column with two types
// (found by a break-it run: two `run --config` started together, `common` as double and as
// string, both exited 0 and the table held both types). Writer A (`v` declared as string, rows
// from a pipe it holds open) opens the new table t; writer B (`v` as int64) then lands its rows and
// records t's schema; A's commit reads the record again before its commit point and stops with
// SCHEMA_DRIFT (exit 4), committing nothing, as a second writer started after B would at open.
// DuckDB reads the table back: B's rows only, `v` BIGINT in every file. A rerun of A's input stops
// at open; with --type-changes allow A commits and the record keeps B's type (the files carry
// their own). On file:// and, with S3L_TEST_STORE=s3, on Ceph RGW (where the start's read-ahead
// answers must not stand in for the re-read).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, SOURCE_DIR, STORE, check, done, lit, mirror, query, run, runOk, scalar, tmpdir } from '../conformance/harness.mjs';
import { toStoreArgs } from '../conformance/store.mjs';

const work = tmpdir('s3l-concurrent-types');
const schemaA = path.join(work, 'a.json'), schemaB = path.join(work, 'b.json');
fs.writeFileSync(schemaA, JSON.stringify([{ name: 'id', type: 'int64' }, { name: 'v', type: 'string' }]));
fs.writeFileSync(schemaB, JSON.stringify([{ name: 'id', type: 'int64' }, { name: 'v', type: 'int64' }]));
const inB = path.join(work, 'b.ndjson');
fs.writeFileSync(inB, Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: 1000 + i, v: i })).join('\n') + '\n');
const linesA = Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: i, v: `a${i}` }) + '\n');

// Starts writer A on lake with its rows' first line sent, and waits until it has claimed its
// checkpoint (it opened table t, merging with no record, before its first row went in).
async function startA(lake, extra, schema = schemaA, lines = linesA) {
    const args = toStoreArgs(['write', '--url', lake, '--table', 't', '--schema', schema,
        '--epoch-rows', '0', '--commit-interval', '1h', '--quiet', ...extra, '-'], [work]);
    const child = spawn(S3LAND, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.write(lines[0]);
    const ckDir = path.join(lake, '_openetl', 'checkpoints');
    for (let i = 0; i < 300; i++) {
        mirror();
        if (fs.existsSync(ckDir) && fs.readdirSync(ckDir).some((f) => f.endsWith('.json'))) break;
        await new Promise((r) => setTimeout(r, 100));
    }
    check(fs.existsSync(ckDir), 'writer A claimed its checkpoint (its stream is open)');
    return { child, exited, stderr: () => stderr, lines };
}

async function finishA(a) {
    for (const l of a.lines.slice(1)) a.child.stdin.write(l);
    a.child.stdin.end();
    const code = await a.exited;
    mirror();
    return code;
}

const vTypes = (lake) => query(`SELECT DISTINCT type FROM parquet_schema(${lit(path.join(lake, 't', '*.parquet'))}) WHERE name = 'v' ORDER BY type`);
const recordOf = (lake) => JSON.parse(fs.readFileSync(path.join(lake, '_openetl', 'schemas', 't.json'), 'utf8'));

// 1. refuse (the default): A stops before its commit point.
{
    const lake = path.join(work, 'lake');
    const a = await startA(lake, []);
    runOk(['write', '--url', lake, '--table', 't', '--schema', schemaB, '--quiet', inB]);
    const code = await finishA(a);
    check(code === 4, `writer A exits 4 (SCHEMA_DRIFT) (got ${code})`);
    check(/epoch 1 is not committed: another writer changed the schema record of table t meanwhile/.test(a.stderr()) &&
        /column "v" changed type from int64 to string/.test(a.stderr()),
    `A's error names the epoch, the table, the column and both types: ${a.stderr().trim()}`);
    const types = await vTypes(lake);
    check(JSON.stringify(types) === JSON.stringify([{ type: 'INT64' }]), `every file holds v as INT64: ${JSON.stringify(types)}`);
    const rows = await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))})`);
    const sum = await scalar(`SELECT sum(id) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))})`);
    // B's ids 1000..1049: 50 rows summing 50 * 1000 + (0 + ... + 49) = 51225.
    check(rows === 50 && sum === 51225, `the table holds B's 50 rows only (count ${rows}, sum of ids ${sum})`);
    const rec = recordOf(lake);
    check(JSON.stringify(rec.map((c) => [c.name, c.type])) === JSON.stringify([['id', 'int64'], ['v', 'int64']]),
        `the record is B's: ${JSON.stringify(rec)}`);
    // A's input again, in a new run: stopped at open, nothing written.
    const r = run(['write', '--url', lake, '--table', 't', '--schema', schemaA, '--quiet', '-'], { input: linesA.join('') });
    check(r.code === 4 && /column "v" changed type from int64 to string/.test(r.stderr),
        `a rerun of A's input stops at open with exit 4 (got ${r.code}: ${r.stderr.trim()})`);
    check(await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))})`) === 50, 'still 50 rows');
}

// 1b. The same with epochs of 10 rows: the drift is found on the committer's thread while A reads
// its second epoch, and comes back with that epoch's commit. The run ends there with exit 4 (it
// took the drift for one stream's at open, read on, and ended with exit 3, STATE, "an earlier
// commit failed after its commit point": found by a break-it run), nothing of A committed.
{
    const lake = path.join(work, 'lake-epochs');
    const a = await startA(lake, ['--epoch-rows', '10']);
    runOk(['write', '--url', lake, '--table', 't', '--schema', schemaB, '--quiet', inB]);
    const code = await finishA(a);
    check(code === 4 && /epoch 1 is not committed: another writer changed the schema record of table t meanwhile \(run again/.test(a.stderr()) &&
        !/STATE/.test(a.stderr()), `epochs of 10 rows: writer A exits 4 with the drift (got ${code}: ${a.stderr().trim()})`);
    const rows = await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))})`);
    check(rows === 50, `the table holds B's 50 rows only (${rows})`);
    check(JSON.stringify(await vTypes(lake)) === JSON.stringify([{ type: 'INT64' }]), 'v is INT64 in every file');
}

// 1c. S3 only: A reads a file (its commits pipelined: the drift comes back with a later commit
// while the run reads on) and its claim is held 3 s at the fault proxy, so B records meanwhile.
// The run ends with exit 4 at the commit that returns the drift: it took it for one stream's
// drift at open, read on, committed again and ended with exit 3, STATE ("an earlier commit failed
// after its commit point"; found by a break-it run, 1 round in 3 with writers started together).
if (STORE === 's3') {
    const lake = path.join(work, 'lake-pipelined');
    const inA = path.join(work, 'a.ndjson');
    fs.writeFileSync(inA, linesA.join(''));
    const proxy = spawn('node', [path.join(SOURCE_DIR, 'tests/support/fault-proxy.mjs'), '--target',
        process.env.AWS_ENDPOINT_URL_S3], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise((resolve) => {
        let out = '';
        proxy.stdout.on('data', (d) => { out += d; const m = /LISTENING (\d+)/.exec(out); if (m) resolve(m[1]); });
    });
    const ctl = (what, body) => fetch(`http://127.0.0.1:${port}/__proxy/${what}`, { method: body ? 'POST' : 'GET', body }).then((r) => r.json());
    await ctl('rules', JSON.stringify([{ op: 'PutObject', keyIncludes: '/_openetl/checkpoints/', times: 1,
        action: 'slow', delayMs: 3000 }]));
    const args = toStoreArgs(['write', '--url', lake, '--table', 't', '--schema', schemaA, '--epoch-rows', '10',
        '--quiet', inA], [work]);
    const a = spawn(S3LAND, args, { stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` } });
    let stderr = '';
    a.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => a.on('exit', (code) => resolve(code)));
    // B once A's claim is at the proxy (A opened t, with no record, before that).
    for (let i = 0; i < 100; i++) {
        const { log } = await ctl('counts');
        if (log.some((e) => e.op === 'PutObject' && e.key.includes('/_openetl/checkpoints/'))) break;
        await new Promise((r) => setTimeout(r, 50));
    }
    runOk(['write', '--url', lake, '--table', 't', '--schema', schemaB, '--quiet', inB]);
    const code = await exited;
    proxy.kill('SIGTERM');
    mirror();
    check(code === 4 && /epoch 1 is not committed: another writer changed the schema record of table t meanwhile/.test(stderr) &&
        !/STATE/.test(stderr), `pipelined: writer A exits 4 with the drift (got ${code}: ${stderr.trim()})`);
    check(await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))})`) === 50,
        'pipelined: the table holds B\'s 50 rows only');
}

// 2. --type-changes allow: A commits; the record keeps B's type, each file its own.
{
    const lake = path.join(work, 'lake-allow');
    const a = await startA(lake, ['--type-changes', 'allow']);
    runOk(['write', '--url', lake, '--table', 't', '--schema', schemaB, '--quiet', inB]);
    const code = await finishA(a);
    check(code === 0, `with --type-changes allow writer A exits 0 (got ${code}: ${a.stderr().trim()})`);
    const types = await vTypes(lake);
    check(JSON.stringify(types) === JSON.stringify([{ type: 'BYTE_ARRAY' }, { type: 'INT64' }]),
        `the files hold v as each writer wrote it: ${JSON.stringify(types)}`);
    const rows = await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))}, union_by_name = true)`);
    check(rows === 80, `both writers' rows are there (got ${rows})`);
    const rec = recordOf(lake);
    check(rec.find((c) => c.name === 'v')?.type === 'int64', `the record keeps B's type: ${JSON.stringify(rec)}`);
}
// 3. Fields added to one struct column at once: A (s.a) commits after B (s.b) recorded t; the
// record then holds both fields (it kept one writer's only: the finish's union looked at
// top-level columns; found by a break-it run), and every row reads back by name.
{
    const lake = path.join(work, 'lake-struct');
    const sa = path.join(work, 'sa.json'), sb = path.join(work, 'sb.json'), nb = path.join(work, 'nb.ndjson');
    fs.writeFileSync(sa, JSON.stringify([{ name: 'id', type: 'int64' }, { name: 's', type: 'struct<a: int64>' }]));
    fs.writeFileSync(sb, JSON.stringify([{ name: 'id', type: 'int64' }, { name: 's', type: 'struct<b: string>' }]));
    fs.writeFileSync(nb, Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: 100 + i, s: { b: `b${i}` } })).join('\n') + '\n');
    const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: i, s: { a: i } }) + '\n');
    const a = await startA(lake, [], sa, lines);
    runOk(['write', '--url', lake, '--table', 't', '--schema', sb, '--quiet', nb]);
    const code = await finishA(a);
    check(code === 0, `struct fields: writer A exits 0 (got ${code}: ${a.stderr().trim()})`);
    const rec = recordOf(lake);
    check(rec.find((c) => c.name === 's')?.type === 'struct<b: string, a: int64>',
        `the record's s holds both writers' fields: ${JSON.stringify(rec)}`);
    const got = await scalar(`SELECT count(*) || ' ' || count(s.a) || ' ' || count(s.b) FROM read_parquet(${lit(path.join(lake, 't', '*.parquet'))}, union_by_name = true)`);
    check(got === '10 5 5', `DuckDB reads 10 rows, 5 with s.a and 5 with s.b (${got})`);
}
done();
