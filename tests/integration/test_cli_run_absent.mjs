// An input absent from one run of a pipeline comes back without landing twice (a break-it run:
// a source left out of the Pipeline document for a run, then put back, landed its 50 rows again;
// a file moved out of a glob for a run and back landed whole again, also in follow mode). The
// checkpoint carries the positions of the inputs a run does not have, so the file coming back
// resumes from its committed offset. Checked with DuckDB over the table against the inputs read
// by DuckDB itself (A EXCEPT ALL B both ways) and by count(DISTINCT id):
//  1. source b left out of the document for a run (a's appended lines land), then put back with
//     lines appended to it: b's old rows stay once, its new ones land once;
//  2. a file moved out of its source's glob for a run, then moved back (the same inode, the
//     same bytes, more appended): nothing twice;
//  3. the same with follow: true: the file is moved out while no run follows and back while one
//     follows; the run picks it up from its committed offset;
//  4. a file that comes back changed (other bytes before the committed offset) is not resumed
//     from that offset: it is refused as write refuses a changed input (exit 2).
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, check, done, exceptAll, lit, run, runOk, scalar, tmpdir } from '../conformance/harness.mjs';
import * as follow from './follow.mjs';

const work = tmpdir('s3l-run-absent');
const lake = path.join(work, 'lake');
fs.mkdirSync(path.join(work, 'in'), { recursive: true });
const lines = (tag, from, n) => Array.from({ length: n }, (_, i) =>
    JSON.stringify({ id: `${tag}-${from + i}`, n: from + i })).join('\n') + '\n';
const dest = path.join(work, 'dest.json');
fs.writeFileSync(dest, JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
    spec: { connector: 's3', config: { url: `file://${lake}` } },
}));
function pipeline(file, name, sources, extra = {}) {
    fs.writeFileSync(path.join(work, file), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name },
        spec: { destination: { name: 'lake' }, sources, ...extra },
    }));
    return ['run', '--quiet', '--config', dest, '--config', path.join(work, file)];
}
const inputSql = (files) => `SELECT id, n FROM read_json([${files.map(lit).join(', ')}], ` +
    `format='newline_delimited', columns={'id': 'VARCHAR', 'n': 'BIGINT'})`;
const tableSql = (t) => `SELECT id, n FROM read_parquet(${lit(path.join(lake, t, '*.parquet'))})`;
const counts = (t) => scalar(`SELECT count(*) || ' ' || count(DISTINCT id) FROM ` +
    `read_parquet(${lit(path.join(lake, t, '*.parquet'))})`);

// 1. A source left out of the document for one run.
const A = path.join(work, 'in', 'a.ndjson'), B = path.join(work, 'in', 'b.ndjson');
fs.writeFileSync(A, lines('a', 0, 100));
fs.writeFileSync(B, lines('b', 0, 50));
const both = [{ name: 'a', files: ['in/a.ndjson'] }, { name: 'b', files: ['in/b.ndjson'] }];
runOk(pipeline('p1.json', 'evo', both), { cwd: work });
fs.appendFileSync(A, lines('a', 100, 10));
fs.appendFileSync(B, lines('b', 50, 10));
runOk(pipeline('p1.json', 'evo', [both[0]]), { cwd: work });
check(await counts('a') === '110 110', `source b left out: a's appended lines land (${await counts('a')})`);
runOk(pipeline('p1.json', 'evo', both), { cwd: work });
check(await counts('b') === '60 60', `source b put back: 60 rows, 60 distinct (${await counts('b')}; 110 110 before)`);
await exceptAll(inputSql([B]), tableSql('b'), 'source b put back: its table equals its file');
await exceptAll(inputSql([A]), tableSql('a'), 'source a: its table equals its file');

// 2. A file moved out of its glob for one run, then back (same inode, same bytes, more lines).
fs.mkdirSync(path.join(work, 'g'));
const G1 = path.join(work, 'g', 'g1.ndjson'), G2 = path.join(work, 'g', 'g2.ndjson');
const away = path.join(work, 'g2.away');
fs.writeFileSync(G1, lines('g1', 0, 100));
fs.writeFileSync(G2, lines('g2', 0, 50));
const globArgs = pipeline('p2.json', 'globbed', [{ name: 'g', files: ['g/*.ndjson'] }]);
runOk(globArgs, { cwd: work });
fs.renameSync(G2, away);
fs.appendFileSync(G1, lines('g1', 100, 5));
runOk(globArgs, { cwd: work });
fs.renameSync(away, G2);
fs.appendFileSync(G2, lines('g2', 50, 7));
runOk(globArgs, { cwd: work });
check(await counts('g') === '162 162', `a file out of the glob for a run and back: 162 rows, 162 distinct (${await counts('g')}; 212 162 before)`);
await exceptAll(inputSql([G1, G2]), tableSql('g'), 'the globbed table equals its files');

// 3. The same in follow mode: moved out while no run follows, back while one follows.
fs.mkdirSync(path.join(work, 'f'));
const F1 = path.join(work, 'f', 'f1.ndjson'), F2 = path.join(work, 'f', 'f2.ndjson');
const faway = path.join(work, 'f2.away');
fs.writeFileSync(F1, lines('f1', 0, 100));
fs.writeFileSync(F2, lines('f2', 0, 50));
const followArgs = pipeline('p3.json', 'followed', [{ name: 'f', files: ['f/*.ndjson'], follow: true }],
    { delivery: { commit: { interval: '500ms' } } });
const rowsF = () => follow.rows(path.join(lake, 'f'));
let w = follow.start(followArgs, work);
check(await follow.waitRows(path.join(lake, 'f'), 150, 20000) >= 0, `follow: the two files landed (${await rowsF()})`);
w.child.kill('SIGINT');
await w.exited;
fs.renameSync(F2, faway);
w = follow.start(followArgs, work);
fs.appendFileSync(F1, lines('f1', 100, 5));
check(await follow.waitRows(path.join(lake, 'f'), 155, 20000) >= 0, `follow: f1's appended lines landed while f2 is away (${await rowsF()})`);
fs.renameSync(faway, F2);
fs.appendFileSync(F2, lines('f2', 50, 7));
check(await follow.waitRows(path.join(lake, 'f'), 162, 20000) >= 0, `follow: f2's appended lines landed once it was back (${await rowsF()})`);
await new Promise((r) => setTimeout(r, 2500)); // a glob look and a commit more: nothing else comes
w.child.kill('SIGINT');
await w.exited;
check(w.code === 130, `follow: SIGINT exits 130 (got ${w.code}): ${w.stderr.slice(-300)}`);
check(await counts('f') === '162 162', `follow: a file out of the glob and back: 162 rows, 162 distinct (${await counts('f')}; 212 162 before)`);

// 5. A file renamed onto the path of one absent from the run is that file, not a rotation of the
// absent one (a break-it run: refused with exit 2 once absent positions were carried).
fs.mkdirSync(path.join(work, 'r'));
const R1 = path.join(work, 'r', 'r1.ndjson'), R2 = path.join(work, 'r', 'r2.ndjson');
fs.writeFileSync(R1, lines('r1', 0, 60));
fs.writeFileSync(R2, lines('r2', 0, 40));
const rotArgs = pipeline('p5.json', 'renamed', [{ name: 'r', files: ['r/*.ndjson'] }]);
runOk(rotArgs, { cwd: work });
fs.renameSync(R2, path.join(work, 'r2.away'));
fs.appendFileSync(R1, lines('r1', 60, 5));
runOk(rotArgs, { cwd: work });
fs.renameSync(R1, R2); // r1's file now at r2's path (r2's position is carried, absent)
fs.appendFileSync(R2, lines('r1', 65, 10));
runOk(rotArgs, { cwd: work });
check(await counts('r') === '115 115', `a file renamed onto an absent one's path resumes as itself: 115 rows, 115 distinct (${await counts('r')})`);

// 4. A file that comes back changed before its committed offset is not resumed from it.
fs.renameSync(G2, away);
runOk(globArgs, { cwd: work });
fs.writeFileSync(G2, lines('x', 0, 80)); // another file (other bytes) at the path
const r = run(globArgs, { cwd: work });
check(r.code === 2 && /g2\.ndjson/.test(r.stderr), `a changed file at the path is refused, exit 2 (${r.code}: ${r.stderr.trim().slice(0, 300)})`);
check(await counts('g') === '162 162', `nothing of the changed file landed (${await counts('g')})`);
done();
