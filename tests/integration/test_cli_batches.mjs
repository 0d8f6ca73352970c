// `s3land write` of NDJSON under a declared schema, where the lanes take the fast path's rows in
// column batches (s3l__convert_fast_lines -> the lane sink's put_columns -> the Parquet writer's
// s3l_pq_write_columns), read back by DuckDB against values written by hand, with 1 and 2 lanes
// and data files closed at a small --file-size inside the batches.
// Hand computations: 2001-01-01 is day 11323, so 2001-01-01 00:01:00 is 978,307,260 s and
// 2001-01-01T23:59:59.999 is 978,307,200,000 + 86,399,999 = 978,393,599,999 ms; 2024-01-01 is
// day 19723 (1,704,067,200 s); 2024-02-29 is day 19782; 12:00:00.5 is 43,200,500 ms of the day
// and 23:59:59.999999 is 86,399,999,999 us.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, parquetFiles, query, runOk, scalar, schemaFile, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-batches');
const schema = schemaFile(work, 's.json', [
    { name: 'req', type: 'int64', nullable: false }, { name: 'i8', type: 'int8' },
    { name: 'u16', type: 'uint16' }, { name: 'i32', type: 'int32' }, { name: 'i64', type: 'int64' },
    { name: 'f32', type: 'float' }, { name: 'f64', type: 'double' }, { name: 'b', type: 'bool' },
    { name: 's', type: 'string' }, { name: 'd', type: 'date32[day]' },
    { name: 't32', type: 'time32[ms]' }, { name: 't64', type: 'time64[us]' },
    { name: 'ts_s', type: 'timestamp[s]' }, { name: 'ts_ms', type: 'timestamp[ms]' },
    { name: 'ts_us', type: 'timestamp[us, tz=UTC]' }, { name: 'ts_ns', type: 'timestamp[ns]' },
]);
const hand = [
    '{"req":1,"i8":-128,"u16":65535,"i32":2147483647,"i64":-9223372036854775808,"f32":0.5,' +
        '"f64":1.25,"b":true,"s":"LAS","d":"2024-02-29","t32":"12:00:00.5","t64":"23:59:59.999999",' +
        '"ts_s":"2001-01-01 00:01:00","ts_ms":"2001-01-01T23:59:59.999","ts_us":"2024-01-01T00:00:00Z",' +
        '"ts_ns":"1970-01-01 00:00:00.000000001"}',
    '{"req":2,"i8":null,"u16":null,"i32":null,"i64":null,"f32":null,"f64":null,"b":null,"s":null,' +
        '"d":null,"t32":null,"t64":null,"ts_s":null,"ts_ms":null,"ts_us":null,"ts_ns":null}',
    '{"req":3}',
    '{"s":12,"f64":7,"i8":127,"b":false,"req":4}',
    '{"req":5,"s":"a\\"b","i8":1}', // an escape: the generic path, between batches
    '{"req":6,"s":true,"u16":0,"f32":-2}',
    '{"req":7,"s":"h\u00e9 \u2713"}',
];
// 3,000 generated rows after them: n, s from 37 values, ts_s one second apart.
const gen = [];
for (let k = 0; k < 3000; k++) {
    gen.push(JSON.stringify({ req: 100 + k, i64: k * 1000003, s: `v${k % 37}`,
        ts_s: `2001-01-01 00:${String(Math.floor(k / 60) % 60).padStart(2, '0')}:${String(k % 60).padStart(2, '0')}`,
        b: k % 3 === 0 ? null : k % 2 === 0 }));
}
const input = path.join(work, 'in.ndjson');
fs.writeFileSync(input, [...hand, ...gen].join('\n') + '\n');

// The hand rows as DuckDB reads them: integers, and text for the rest.
const HAND_SQL = (dir) => `SELECT req, i8, u16, i32, i64::VARCHAR AS i64, f32::VARCHAR AS f32,
    f64::VARCHAR AS f64, b, s, d::VARCHAR AS d, epoch_ms(('1970-01-01'::DATE + t32)::TIMESTAMP) AS t32,
    epoch_us(('1970-01-01'::DATE + t64)::TIMESTAMP) AS t64, epoch_ms(ts_s) AS ts_s, epoch_ms(ts_ms) AS ts_ms,
    epoch_us(ts_us) AS ts_us, epoch_ns(ts_ns) AS ts_ns
    FROM (${tableSql(dir)}) WHERE req < 100 ORDER BY req`;
const N = (v) => (v === null ? null : String(v));
const want = [
    [1, -128, 65535, 2147483647, '-9223372036854775808', '0.5', '1.25', true, 'LAS', '2024-02-29',
        43200500, 86399999999, 978307260000, 978393599999, 1704067200000000, 1],
    [2, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null],
    [3, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null],
    [4, 127, null, null, null, null, '7.0', false, '12', null, null, null, null, null, null, null],
    [5, 1, null, null, null, null, null, null, 'a"b', null, null, null, null, null, null, null],
    [6, null, 0, null, null, '-2.0', null, null, 'true', null, null, null, null, null, null, null],
    [7, null, null, null, null, null, null, null, 'h\u00e9 \u2713', null, null, null, null, null, null, null],
];
const cols = ['req', 'i8', 'u16', 'i32', 'i64', 'f32', 'f64', 'b', 's', 'd', 't32', 't64', 'ts_s', 'ts_ms', 'ts_us', 'ts_ns'];

for (const lanes of [1, 2]) {
    const lake = path.join(work, `lake-${lanes}`);
    runOk(['write', '--url', lake, '--table', 't', '--schema', schema, '--lanes', String(lanes),
        '--file-size', '12KiB', '--quiet', input]);
    const dir = path.join(lake, 't');
    const rows = await query(HAND_SQL(dir));
    check(rows.length === want.length, `${lanes} lane(s): ${rows.length} hand rows`);
    for (let i = 0; i < want.length; i++) {
        const got = cols.map((c) => (typeof rows[i]?.[c] === 'boolean' ? rows[i][c] : N(rows[i]?.[c] ?? null)));
        const exp = want[i].map((v) => (typeof v === 'boolean' ? v : N(v)));
        check(JSON.stringify(got) === JSON.stringify(exp),
            `${lanes} lane(s), row ${i + 1}: ${JSON.stringify(got)} (want ${JSON.stringify(exp)})`);
    }
    // The generated rows: counts and sums computed here from what was written.
    const sumI64 = gen.reduce((a, _, k) => a + BigInt(k * 1000003), 0n);
    check(await scalar(`SELECT count(*) FROM (${tableSql(dir)}) WHERE req >= 100`) === 3000, `${lanes} lane(s): 3000 generated rows`);
    check(String(await scalar(`SELECT sum(i64)::VARCHAR FROM (${tableSql(dir)}) WHERE req >= 100`)) === String(sumI64),
        `${lanes} lane(s): sum of i64 is ${sumI64}`);
    check(await scalar(`SELECT count(DISTINCT s) FROM (${tableSql(dir)}) WHERE req >= 100`) === 37, `${lanes} lane(s): 37 strings`);
    check(await scalar(`SELECT count(*) FROM (${tableSql(dir)}) WHERE req >= 100 AND b IS NULL`) === 1000, `${lanes} lane(s): 1000 null bools`);
    check(await scalar(`SELECT sum(req - 100)::BIGINT FROM (${tableSql(dir)}) WHERE req >= 100 AND b`) ===
        gen.reduce((a, _, k) => a + (k % 3 !== 0 && k % 2 === 0 ? k : 0), 0), `${lanes} lane(s): the true bools' rows`);
    check(await scalar(`SELECT max(epoch(ts_s))::BIGINT - min(epoch(ts_s))::BIGINT FROM (${tableSql(dir)}) WHERE req >= 100`) === 2999,
        `${lanes} lane(s): timestamps span 2999 s`);
    const files = parquetFiles(dir);
    check(files.length >= 3, `${lanes} lane(s): ${files.length} files closed at 12 KiB`);
}
done();
