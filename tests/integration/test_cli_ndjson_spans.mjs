// NDJSON read by spans of lines (s3l__reader_next_lines), converted on the reading thread and in
// worker lanes: flights-200k as NDJSON, with what real feeds hold between good lines -- blank and
// white-space lines, CRLF line ends, white space around members, an escaped key, bad values, lines
// that are not objects, a line over --max-record-size, and a last line without a line end. With
// --lanes 1, 2 and 3 and epochs of 7,777 rows (many spans per epoch, epochs ending mid-span):
//  - the table equals (A EXCEPT ALL B, both ways, by DuckDB) DuckDB's reading of the good lines,
//    which this test picks with JSON.parse, independently of s3land's reader;
//  - every bad line is counted once, and the epochs of the 1-lane run hold exactly 7,777 rows;
//  - --bad-records=fail names the line of a bad record and commits nothing of its epoch;
//  - a rerun adds nothing.
import fs from 'node:fs';
import path from 'node:path';
import {
    DATA, check, done, duckColumns, exceptAll, listing, lit, runOk, schemaFile, tableSql, tmpdir,
} from '../conformance/harness.mjs';

const work = tmpdir('s3l-spans');
const lake = path.join(work, 'lake');
const COLS = [['delay', 'int64', 'BIGINT'], ['distance', 'int64', 'BIGINT'], ['time', 'double', 'DOUBLE']];
const schema = schemaFile(work, 'flights.schema.json', COLS.map(([name, type]) => ({ name, type })));
const MAX = 4096;

// The input, line by line, and the good rows as this test reads them.
const flights = JSON.parse(fs.readFileSync(path.join(DATA, 'flights-200k.json'), 'utf8'));
const lines = [];
const good = [];
const bad = []; // 1-based line numbers
for (let i = 0; i < flights.length; i++) {
    const f = flights[i];
    let line = JSON.stringify(f);
    if (i % 10007 === 5) lines.push('');
    if (i % 10009 === 7) lines.push(' \t ');
    if (i % 5003 === 11) line += '\r';
    if (i % 7001 === 13) line = ` { "delay" : ${f.delay} ,\t"distance": ${f.distance}, "time" : ${f.time} }  `;
    if (i % 9001 === 17) line = `{"del\\u0061y":${f.delay},"distance":${f.distance},"time":${f.time}}`;
    let isBad = false;
    if (i % 20011 === 19) { line = `{"delay":"late","distance":${f.distance},"time":${f.time}}`; isBad = true; }
    if (i % 30011 === 23) { line = `{"delay":${f.delay}.5,"distance":${f.distance}}`; isBad = true; }
    if (i % 40009 === 29) { line = '[1, 2, 3]'; isBad = true; }
    if (i % 50021 === 31) { line = '{"delay": 1, "distance": '; isBad = true; }
    if (i === 123457) { line = `{"delay":1,"distance":2,"note":"${'x'.repeat(MAX + 10)}"}`; isBad = true; }
    lines.push(line);
    if (isBad) bad.push(lines.length);
    else good.push({ delay: f.delay, distance: f.distance, time: f.time });
}
const input = path.join(work, 'flights.ndjson');
fs.writeFileSync(input, lines.join('\n')); // no line end after the last line
// The good rows, as DuckDB reads them (A).
const clean = path.join(work, 'good.ndjson');
fs.writeFileSync(clean, good.map((r) => JSON.stringify(r)).join('\n') + '\n');
const goodSql = `SELECT * FROM read_json(${lit(clean)}, format='newline_delimited', ` +
    `columns=${duckColumns(COLS.map(([n, , d]) => [n, d]))})`;
// Our own check of the test's input, counted by hand: i = 19 + 20011k (10 lines), 23 + 30011k (7),
// 29 + 40009k (5), 31 + 50021k (4), and 123457 are bad: 27 lines.
check(bad.length === 27 && good.length + bad.length === flights.length,
    `the input holds ${bad.length} bad lines and ${good.length} good ones`);

const markers = (table) => {
    const dir = path.join(lake, '_openetl', 'markers', table);
    return fs.readdirSync(dir).sort().map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
};

for (const lanes of [1, 2, 3]) {
    const table = `spans_${lanes}`;
    const args = ['write', '--url', lake, '--table', table, '--schema', schema, '--lanes', String(lanes),
        '--epoch-rows', '7777', '--max-record-size', String(MAX), '--bad-records', 'skip', '--json', input];
    const r = runOk(args);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop());
    check(summary.rows === good.length && summary.rows_bad === bad.length,
        `lanes ${lanes}: ${summary.rows} rows and ${summary.rows_bad} bad records (want ${good.length}, ${bad.length})`);
    await exceptAll(goodSql, tableSql(path.join(lake, table)), `lanes ${lanes}: the table is the good lines`);
    const m = markers(table);
    const rows = m.map((x) => x.rows);
    check(rows.reduce((a, b) => a + b, 0) === good.length, `lanes ${lanes}: markers cover every row`);
    if (lanes === 1)
        check(rows.slice(0, -1).every((n) => n === 7777) && rows.at(-1) === good.length % 7777,
            `lanes 1: epochs of exactly 7,777 rows (${rows.slice(0, 3).join(', ')} ... ${rows.at(-1)})`);
    else
        check(rows.every((n) => n <= 7777), `lanes ${lanes}: no epoch over 7,777 records`);
    const before = listing(lake);
    const again = runOk(args);
    check(JSON.stringify(listing(lake)) === JSON.stringify(before) && /"event":"up_to_date"/.test(again.stdout),
        `lanes ${lanes}: a rerun changes nothing`);
}

// --bad-records=fail: the error names a bad line; nothing of the failed epoch is committed. The
// bad lines of the first 40,000 are made good, so that several epochs commit before the failure.
const failLines = lines.map((l, k) => (k + 1 < 40000 && bad.includes(k + 1) ? '{"delay":1,"distance":2,"time":3}' : l));
const failBad = bad.filter((n) => n >= 40000);
const failInput = path.join(work, 'flights-fail.ndjson');
fs.writeFileSync(failInput, failLines.join('\n'));
for (const lanes of [1, 2]) {
    const table = `spans_fail_${lanes}`;
    const r = runOk(['write', '--url', lake, '--table', table, '--schema', schema, '--lanes', String(lanes),
        '--epoch-rows', '7777', '--max-record-size', String(MAX), failInput], {}, 2);
    const m = /line (\d+)/.exec(r.stderr);
    const line = m ? Number(m[1]) : -1;
    // One lane meets the first bad line first; with more lanes, another lane may meet a later one.
    check(lanes === 1 ? line === failBad[0] : failBad.includes(line),
        `lanes ${lanes}: the error names bad line ${line} (first bad line: ${failBad[0]}): ${r.stderr.trim().slice(0, 160)}`);
    const off = /byte offset (\d+)/.exec(r.stderr);
    const want = failLines.slice(0, failBad[0] - 1).reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);
    check(lanes > 1 || (off && Number(off[1]) === want), `lanes ${lanes}: the byte offset of that line (${want})`);
    const dir = path.join(lake, '_openetl', 'markers', table);
    const m2 = fs.existsSync(dir) ? markers(table) : [];
    const committed = m2.reduce((a, x) => a + x.rows, 0);
    // Every line before the first bad one is good: the epochs before it commit, its own does not.
    const goodBefore = failBad[0] - 1 - failLines.slice(0, failBad[0] - 1).filter((l) => !l.trim()).length;
    check(committed === Math.floor(goodBefore / 7777) * 7777,
        `lanes ${lanes}: ${committed} rows committed before the failure (${goodBefore} good lines before it)`);
    const onDisk = fs.existsSync(path.join(lake, table)) ? fs.readdirSync(path.join(lake, table)).length : 0;
    check(onDisk === m2.reduce((a, x) => a + x.files.length, 0), `lanes ${lanes}: only committed files are in the table`);
}

done();
