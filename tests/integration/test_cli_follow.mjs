// Follow mode (issue 12, item 3): `s3land write --follow` and a Pipeline source's `follow: true`
// wait after the end of a file and land what is appended, committing by --commit-interval while
// they wait. Checked with DuckDB over the landed table against the input read by DuckDB itself
// (A EXCEPT ALL B both ways), and against the sequence numbers written:
//  1. lines appended while write --follow runs land, each batch within the interval (+ slack)
//     though nothing more comes after it;
//  2. a line being written (no line end yet) is not landed, also after several intervals; once
//     its line end comes it lands whole, once;
//  3. SIGTERM commits what was read and exits 143, naming a last line still without its end;
//     whole lines appended as the stop comes are named as such;
//  4. a rerun resumes after what was committed (nothing twice), and `run` with follow: true does
//     the same for a source (SIGINT: exit 130);
//  5. follow on a JSON array input is refused before anything runs.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, run, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';
import * as follow from './follow.mjs';
import { line, lines, sleep, writeDestination } from './follow.mjs';

const work = tmpdir('s3l-follow');
const lake = path.join(work, 'lake');
const input = path.join(work, 'app.ndjson');
fs.writeFileSync(input, lines(1, 3));

const start = (args) => follow.start(args, work);
const table = path.join(lake, 't');
const rows = (dir = table) => follow.rows(dir);
// Waits until the table has n rows; returns the ms it took (or -1 after limitMs).
const waitRows = (n, limitMs, dir = table) => follow.waitRows(dir, n, limitMs);
const inputSql = (file) => `SELECT seq, msg FROM read_json(${lit(file)}, format='newline_delimited', columns={'seq': 'BIGINT', 'msg': 'VARCHAR'})`;

// 1. write --follow with a 1 s interval: the first 3 lines, then appended batches.
const args = ['write', '--follow', '--table', 't', '--url', lake, '--commit-interval', '1s', '--json', input];
let w = start(args);
let t = await waitRows(3, 20000);
check(t >= 0, `the file's first 3 lines landed while following (${t} ms)`);
for (const [from, to] of [[4, 10], [11, 11], [12, 40]]) {
    fs.appendFileSync(input, lines(from, to));
    t = await waitRows(to, 20000);
    // One interval plus slack for a loaded machine (2 cores shared by many builds): what matters
    // is that the rows land without more data coming, by the interval's clock.
    check(t >= 0 && t < 10000, `appended lines ${from}..${to} landed without more data coming (${t} ms)`);
}
check(w.code === null, 'write --follow is still running after its input stopped growing');

// 2. A line being written: half of it, then several intervals: not landed.
const half = line(41);
fs.appendFileSync(input, half.slice(0, 10));
await sleep(3500);
check(await rows() === 40, `a line without its line end is not landed (${await rows()} rows after 3.5 s)`);
fs.appendFileSync(input, half.slice(10));
t = await waitRows(41, 20000);
check(t >= 0, `the line landed once its line end came (${t} ms)`);

// 3. SIGTERM with a last line unended: what was read is committed, exit 143, the line named.
fs.appendFileSync(input, lines(42, 45) + line(46).slice(0, 7));
await waitRows(45, 20000);
w.child.kill('SIGTERM');
await w.exited;
check(w.code === 143, `SIGTERM: exit 143 (got ${w.code}, signal ${w.signal}): ${w.stderr.slice(-400)}`);
check(/without a line end yet/.test(w.stdout + w.stderr), `the unended last line is named at the stop: ${w.stdout.slice(-600)}`);
check(await rows() === 45, `45 rows after the stop (${await rows()})`);
const seqs = await scalar(`SELECT count(DISTINCT seq) FROM read_parquet(${lit(path.join(table, '*.parquet'))})`);
check(seqs === 45, `every sequence number once (${seqs} distinct)`);

// 4. A rerun: the rest of line 46, and more; nothing committed lands twice.
fs.appendFileSync(input, line(46).slice(7) + lines(47, 50));
w = start(args);
t = await waitRows(50, 20000);
check(t >= 0, `the rerun landed the rest (${t} ms)`);
// Whole lines appended just as the stop comes are named as lines appended, not as one line
// still being written (a break-it run saw 37 whole lines so named): the writer is frozen, 300,000
// lines (about 10 MB) appended, SIGINT sent, the writer thawed; the stop ends the reading
// between two reads, long before the end of what was appended.
const big = 300050;
w.child.kill('SIGSTOP');
fs.appendFileSync(input, lines(51, big));
w.child.kill('SIGINT');
w.child.kill('SIGCONT');
await w.exited;
check(w.code === 130, `SIGINT: exit 130 (got ${w.code})`);
const left = /(\d+) bytes appended after the last read were left unread at the stop/.exec(w.stdout + w.stderr);
check(left && Number(left[1]) > 0 && !/without a line end yet/.test(w.stdout + w.stderr),
    `whole lines left at the stop are named so: ${(w.stdout + w.stderr).slice(-400)}`);
// The rerun lands them; then the table equals the input.
w = start(args);
t = await waitRows(big, 60000);
check(t >= 0, `the rerun landed the lines left at the stop (${t} ms)`);
w.child.kill('SIGINT');
await w.exited;
await exceptAll(inputSql(input), tableSql(table, 'seq, msg'), 'write --follow: the table equals the input');

// run with a Pipeline source's follow: true.
const logs = path.join(work, 'logs.ndjson');
fs.writeFileSync(logs, lines(1, 5));
writeDestination(work, lake);
fs.writeFileSync(path.join(work, 'pipe.json'), JSON.stringify({
    apiVersion: 'openetl.io/v1alpha1', kind: 'Pipeline', metadata: { name: 'follow' },
    spec: {
        destination: { name: 'lake' }, delivery: { commit: { interval: '1s' } },
        sources: [{ name: 'logs', files: ['logs.ndjson'], follow: true }],
    },
}));
const r = start(['run', '--config', 'dest.json', '--config', 'pipe.json']);
const logsTable = path.join(lake, 'logs');
t = await waitRows(5, 20000, logsTable);
check(t >= 0, `run: the source's first lines landed (${t} ms)`);
fs.appendFileSync(logs, lines(6, 20));
t = await waitRows(20, 20000, logsTable);
check(t >= 0 && t < 10000, `run: appended lines landed while following (${t} ms)`);
check(r.code === null, 'run with follow: true is still running');
r.child.kill('SIGINT');
await r.exited;
check(r.code === 130, `run: SIGINT exits 130 (got ${r.code}): ${r.stderr.slice(-300)}`);
await exceptAll(inputSql(logs), tableSql(logsTable, 'seq, msg'), 'run follow: the table equals the input');

// A CSV row being written waits for its line end too (the CSV reader would take an unended last
// row as whole: follow mode reads only up to the last line feed).
const csv = path.join(work, 'rows.csv');
fs.writeFileSync(csv, 'id,name\n1,a\n2,b\n');
const csvTable = path.join(lake, 'c');
const cw = start(['write', '--follow', '--table', 'c', '--url', lake, '--commit-interval', '500ms', csv]);
t = await waitRows(2, 20000, csvTable);
check(t >= 0, `csv: the first rows landed (${t} ms)`);
fs.appendFileSync(csv, '3,c');
await sleep(2500);
check(await rows(csvTable) === 2, `csv: a row without its line end is not landed (${await rows(csvTable)} rows)`);
fs.appendFileSync(csv, 'x\n4,d\n');
t = await waitRows(4, 20000, csvTable);
check(t >= 0, `csv: the row landed whole once its line end came (${t} ms)`);
cw.child.kill('SIGTERM');
await cw.exited;
check(cw.code === 143, `csv: SIGTERM exits 143 (got ${cw.code})`);
await exceptAll(`SELECT id, name FROM read_csv(${lit(csv)}, header=true, columns={'id': 'BIGINT', 'name': 'VARCHAR'})`,
    tableSql(csvTable, 'id, name'), 'csv follow: the table equals the input ("3,cx" whole)');

// 5. A JSON array cannot be followed.
const arr = path.join(work, 'a.json');
fs.writeFileSync(arr, '[{"a":1}]');
const j = run(['write', '--follow', '--table', 'j', '--url', lake, arr]);
check(j.code !== 0 && /JSON array/.test(j.stderr), `follow on a JSON array is refused: ${j.code} ${j.stderr.trim()}`);
check(!fs.existsSync(path.join(lake, 'j')), 'nothing of the refused run landed');
done();
