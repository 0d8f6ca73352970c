// Crash tests of `s3land run` (issue 12, item 3): a pipeline of two sources into two tables
// commits each epoch for both streams with one checkpoint write. $S3LAND_CRASH (the CLI linked
// with tests/support/crash_store.c) SIGKILLs itself at the k-th store operation (S3L_CRASH_AT=k):
// every k of a small run is enumerated; each time the process must die by SIGKILL and a rerun
// with the plain CLI must leave every input row in each table exactly once (DuckDB: input EXCEPT
// ALL table and table EXCEPT ALL input, both empty). Then runs over growing inputs, committing
// every 50ms, are killed with kill -9 at random moments (seed printed; S3L_KILL_SEED replays
// one), a final run finishes, and each table must again hold every row exactly once.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, check, done, exceptAll, lit, tableSql, tmpdir } from '../conformance/harness.mjs';

const CRASH = process.env.S3LAND_CRASH;
if (!CRASH || !fs.existsSync(CRASH)) {
    console.log('# no crash-test build of the CLI ($S3LAND_CRASH)');
    process.exit(1);
}
const work = tmpdir('s3l-run-crash');
const rows = (src, from, n) => Array.from({ length: n }, (_, i) =>
    JSON.stringify({ id: from + i, s: `${src} row ${from + i}` })).join('\n') + '\n';
const schema = [{ name: 'id', type: 'int64', nullable: false }, { name: 's', type: 'string' }];

// A lake directory with its two documents; inputs in dir/in.
function setup(name, interval) {
    const dir = path.join(work, name);
    fs.mkdirSync(path.join(dir, 'in'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'dest.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'd' },
        spec: { connector: 's3', config: { url: `file://${dir}/lake`, fileSize: '4KiB', compression: 'none' } },
    }));
    fs.writeFileSync(path.join(dir, 'pipe.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: 'p' },
        spec: {
            destination: { name: 'd', namespace: 'ns' },
            delivery: { commit: { interval: interval } },
            sources: [{ name: 'a', files: ['in/a.ndjson'], schema }, { name: 'b', files: ['in/b.ndjson'], schema }],
        },
    }));
    return dir;
}
const args = (dir) => ['run', '--quiet', '--config', path.join(dir, 'dest.json'), '--config', path.join(dir, 'pipe.json')];
const sql = (file) => `SELECT id, s FROM read_json(${lit(file)}, columns={'id': 'BIGINT', 's': 'VARCHAR'})`;
const lakes = [];

// 1. Every store operation k of a small run (one epoch: two streams, several files each).
let k = 0;
for (;;) {
    k++;
    const dir = setup(`k${k}`, '1h');
    fs.writeFileSync(path.join(dir, 'in', 'a.ndjson'), rows('a', 0, 300));
    fs.writeFileSync(path.join(dir, 'in', 'b.ndjson'), rows('b', 0, 200));
    const r = spawnSync(CRASH, args(dir), { env: { ...process.env, S3L_CRASH_AT: String(k) }, encoding: 'utf8' });
    if (r.status === 0) break;
    if (!check(r.signal === 'SIGKILL', `k=${k}: killed at the store operation (${r.signal ?? `exit ${r.status}`})`)) {
        console.log(r.stderr);
        break;
    }
    const again = spawnSync(S3LAND, args(dir), { encoding: 'utf8' });
    if (!check(again.status === 0, `k=${k}: the rerun finishes (exit ${again.status})`))
        console.log(again.stderr);
    lakes.push(dir);
}
check(k > 30, `every store operation enumerated: ${k - 1} kill points`);

// 2. kill -9 at random moments while runs commit every 50ms.
const dir = setup('kill9', '50ms');
const a = path.join(dir, 'in', 'a.ndjson'), b = path.join(dir, 'in', 'b.ndjson');
fs.writeFileSync(a, '');
fs.writeFileSync(b, '');
const killed = (ms) => new Promise((resolve) => {
    const child = spawn(S3LAND, args(dir), { stdio: 'ignore' });
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, signal) => { clearTimeout(t); resolve({ code, signal }); });
});
// The moment is drawn below the time the last run that was not killed took, so that runs are
// killed mid-way on a fast machine as on a loaded one; at least 12 runs, more (up to 40) until 4
// were killed.
let kills = 0, full = 400, n = 0;
for (; n < 40 && (n < 12 || kills < 4); n++) {
    const seed = process.env.S3L_KILL_SEED ? Number(process.env.S3L_KILL_SEED) + n : Math.floor(Math.random() * 2 ** 31);
    const delay = 5 + (seed % Math.max(10, full));
    fs.appendFileSync(a, rows('a', n * 3000, 3000));
    fs.appendFileSync(b, rows('b', n * 2000, 2000));
    const t0 = Date.now();
    const res = await killed(delay);
    if (res.signal === 'SIGKILL')
        kills++;
    else
        full = Date.now() - t0;
    check(res.signal === 'SIGKILL' || res.code === 0, `run ${n} seed ${seed}: killed after ${delay} ms (${res.signal ?? `exit ${res.code}`})`);
}
check(kills >= 4, `runs were killed mid-way (${kills} of ${n})`);
const fin = spawnSync(S3LAND, args(dir), { encoding: 'utf8' });
check(fin.status === 0, `the final run finishes (exit ${fin.status}) ${fin.stderr}`);
lakes.push(dir);

for (const d of lakes)
    for (const t of ['a', 'b'])
        await exceptAll(sql(path.join(d, 'in', `${t}.ndjson`)), tableSql(path.join(d, 'lake', 'ns', t), 'id, s'),
            `${path.basename(d)}: table ${t} holds every row exactly once`);
done();
