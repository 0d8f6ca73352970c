// Edge cases of resuming and of pipeline identity that a user found (each value below is written
// down by hand, or read back by DuckDB):
// 1. a file whose last line has no line break: that record lands; bytes appended later that
//    extend the line are refused (exit 2, naming input, line and offset), the table unchanged;
//    appended bytes that start with a line break continue normally (CSV and NDJSON);
// 2. error line numbers after a resume count from the start of the file (NDJSON, CSV, and the
//    reasons of dead-lettered records);
// 3. an inferred type that differs from the recorded one is SCHEMA_DRIFT (exit 4) naming table,
//    column and both types; --type-changes allow updates the record; int64 data into a float64
//    column and a date into a timestamp column are not drift (the recorded types stay);
// 4. a destination reached through a symbolic link is the same pipeline: no duplicate rows;
// 5. `ls --json` without --table counts each table's epochs (markers).
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, query, run, runOk, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-edges');
const lake = path.join(work, 'lake');
const rowsOf = async (table, cols) => (await query(`${tableSql(path.join(lake, table), cols)} ORDER BY ALL`));

// 1. CSV: the unterminated "3,4" lands; "5\n6,7\n" appended would make it "3,45": refused.
const p = path.join(work, 'p.csv');
fs.writeFileSync(p, 'a,b\n1,2\n3,4');
const csvArgs = (file, table) => ['write', '--url', lake, '--table', table, '--input-format', 'csv', '--quiet', file];
runOk(csvArgs(p, 'c'));
fs.appendFileSync(p, '5\n6,7\n');
for (const attempt of ['first', 'second']) {
    const r = run(csvArgs(p, 'c'));
    check(r.code === 2, `CSV: the extended last line is refused with exit 2 (${attempt} rerun; got ${r.code})`);
    // "a,b\n1,2\n3,4" is 11 bytes; "3,4" is line 3.
    check(r.stderr.includes(fs.realpathSync(p)) && r.stderr.includes('line 3') && r.stderr.includes('offset 11') &&
        r.stderr.includes('no line break'), `CSV: the refusal names input, line 3, offset 11 and the cause: ${r.stderr.trim()}`);
}
check(JSON.stringify(await rowsOf('c', 'a, b')) === JSON.stringify([{ a: '1', b: '2' }, { a: '3', b: '4' }]),
    'CSV: the table still holds (1,2), (3,4) and nothing of the extended line');
// Appended bytes that start with the line break continue after the last row.
const q = path.join(work, 'q.csv');
fs.writeFileSync(q, 'a,b\n1,2\n3,4');
runOk(csvArgs(q, 'cq'));
fs.appendFileSync(q, '\n6,7\n');
runOk(csvArgs(q, 'cq'));
check(JSON.stringify(await rowsOf('cq', 'a, b')) === JSON.stringify([{ a: '1', b: '2' }, { a: '3', b: '4' }, { a: '6', b: '7' }]),
    'CSV: a continuation starting with a line break lands (1,2), (3,4), (6,7)');
// NDJSON, the same two ways.
const n1 = path.join(work, 'n1.ndjson'), n2 = path.join(work, 'n2.ndjson');
const ndArgs = (file, table, ...more) => ['write', '--url', lake, '--table', table, '--quiet', ...more, file];
fs.writeFileSync(n1, '{"a":1}\n{"a":2}');
fs.writeFileSync(n2, '{"a":1}\n{"a":2}');
runOk(ndArgs(n1, 'n1'));
runOk(ndArgs(n2, 'n2'));
fs.appendFileSync(n1, '{"a":3}\n');
fs.appendFileSync(n2, '\n{"a":3}\n');
const rn = run(ndArgs(n1, 'n1'));
check(rn.code === 2 && rn.stderr.includes('line 2') && rn.stderr.includes('offset 15') && rn.stderr.includes('no line break'),
    `NDJSON: the extended last line is refused at line 2, offset 15 (8 + 7 bytes): ${rn.stderr.trim()}`);
runOk(ndArgs(n2, 'n2'));
check(JSON.stringify(await rowsOf('n1', 'a')) === JSON.stringify([{ a: '1' }, { a: '2' }]), 'NDJSON: refused table holds 1, 2');
check(JSON.stringify(await rowsOf('n2', 'a')) === JSON.stringify([{ a: '1' }, { a: '2' }, { a: '3' }]), 'NDJSON: continued table holds 1, 2, 3');

// 2. Line numbers after a resume: the bad record is line 5 of the file, not line 2.
const r = path.join(work, 'r.ndjson');
fs.writeFileSync(r, '{"a":1}\n{"a":2}\n{"a":3}\n');
runOk(ndArgs(r, 'r'));
fs.appendFileSync(r, '{"a":4}\n{"a":5,}\n');
const rr = run(ndArgs(r, 'r'));
check(rr.code === 2 && rr.stderr.includes('line 5') && !rr.stderr.includes('line 2'), `NDJSON resumed: error names line 5: ${rr.stderr.trim()}`);
const s = path.join(work, 's.csv');
fs.writeFileSync(s, 'a,b\n1,2\n');
runOk(csvArgs(s, 's'));
fs.appendFileSync(s, '3,4\n5\n');
const rs = run(csvArgs(s, 's'));
check(rs.code === 2 && rs.stderr.includes('line 4'), `CSV resumed: error names line 4: ${rs.stderr.trim()}`);
// Two resumes in a row, dead-lettered: the reason names line 7 ("{"a":6,}" is the 7th line).
fs.appendFileSync(r, '{"a":6,}\n');
const dl = path.join(work, 'dl.ndjson');
fs.writeFileSync(dl, '{"a":1}\n{"a":2}\n');
runOk(ndArgs(dl, 'dl'));
fs.appendFileSync(dl, '{"a":3}\n');
runOk(ndArgs(dl, 'dl'));
fs.appendFileSync(dl, '{"a":4}\n{"a":5}\n{"a":6}\n{"a":7,}\n');
runOk(ndArgs(dl, 'dl', '--bad-records', 'dead-letter'));
const dlDir = path.join(lake, '_openetl', 'deadletter', 'dl');
const reasons = fs.readdirSync(dlDir).flatMap((f) => fs.readFileSync(path.join(dlDir, f), 'utf8').trim().split('\n'))
    .map((l) => JSON.parse(l).reason);
check(reasons.length === 1 && reasons[0].includes('line 7'), `dead-letter reason names line 7: ${JSON.stringify(reasons)}`);

// 3. Inferred type changes against the schema record.
const d1 = path.join(work, 'd1'), d2 = path.join(work, 'd2');
fs.writeFileSync(d1, '{"a":1}\n');
fs.writeFileSync(d2, '{"a":"str"}\n');
runOk(ndArgs(d1, 'd'));
const rd = run(ndArgs(d2, 'd'));
check(rd.code === 4 && rd.stderr.includes('SCHEMA_DRIFT') && rd.stderr.includes('"a"') && rd.stderr.includes('int64') &&
    rd.stderr.includes('string') && rd.stderr.includes('table d'), `inferred type change: exit 4 naming table, column, types: ${rd.stderr.trim()}`);
runOk(ndArgs(d2, 'd', '--type-changes', 'allow'));
const sd = JSON.parse(run(['schema', '--url', lake, '--table', 'd', '--json']).stdout.trim());
const colA = sd.record.find((c) => c.name === 'a');
check(colA?.type === 'string', `--type-changes allow updated the record: a is ${colA?.type}`);
const e1 = path.join(work, 'e1'), e2 = path.join(work, 'e2');
fs.writeFileSync(e1, '{"f":1.5,"t":"2024-01-01T00:00:00Z"}\n');
fs.writeFileSync(e2, '{"f":2,"t":"2024-01-02"}\n');
runOk(ndArgs(e1, 'e'));
runOk(ndArgs(e2, 'e'));
const se = JSON.parse(run(['schema', '--url', lake, '--table', 'e', '--json']).stdout.trim());
const types = Object.fromEntries(se.record.map((c) => [c.name, c.type]));
check(types.f === 'double' && types.t === 'timestamp[us, tz=UTC]', `int64 into double, date into timestamp keep the record: ${JSON.stringify(types)}`);
await exceptAll(`SELECT * FROM (VALUES (1.5, TIMESTAMPTZ '2024-01-01 00:00:00+00'), (2.0, TIMESTAMPTZ '2024-01-02 00:00:00+00')) v(f, t)`,
    tableSql(path.join(lake, 'e'), 'f, t'), 'coerced rows read back');

// 4. The same destination through a symbolic link is the same pipeline.
const real = path.join(work, 'lu'), link = path.join(work, 'lulink');
const u = path.join(work, 'u.ndjson');
fs.writeFileSync(u, '{"a":1}\n{"a":2}\n');
runOk(['write', '--url', real, '--table', 't', '--quiet', u]);
fs.symlinkSync(real, link);
runOk(['write', '--url', link, '--table', 't', '--quiet', u]);
const cnt = await query(`SELECT count(*)::INTEGER AS n FROM read_parquet(${lit(path.join(real, 't', '*.parquet'))})`);
check(cnt[0].n === 2, `write through a symlink to the same lake adds nothing (rows: ${cnt[0].n}, want 2)`);

// 5. ls --json without --table: epochs per table. Table r has 1 epoch (the resumed run failed),
//    dl has 3 (three runs with new rows), d has 2 (d1; d2 allowed).
const ls = run(['ls', '--url', lake, '--json']).stdout.trim().split('\n').map((l) => JSON.parse(l));
const ep = Object.fromEntries(ls.filter((o) => o.table && o.files !== undefined).map((o) => [o.table, o.epochs]));
check(ep.r === 1 && ep.dl === 3 && ep.d === 2, `ls --json epochs: r 1, dl 3, d 2 (got ${JSON.stringify(ep)})`);
done();
