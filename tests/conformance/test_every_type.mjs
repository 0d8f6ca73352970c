// Conformance: a table with every type. One NDJSON input holds a value of each Arrow type the
// schema record knows (and nulls); DuckDB reads the input under the same declared types (A) and
// the table (B); A EXCEPT ALL B and B EXCEPT ALL A must be empty, and the Parquet types DuckDB sees
// must be the ones written down here.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, duckColumns, exceptAll, lit, query, runOk, schemaFile, tableSql, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-types');
const lake = path.join(work, 'lake');
// [name, arrow type, DuckDB type of the input column, DuckDB type expected in the Parquet file]
const COLS = [
    ['i8', 'int8', 'TINYINT', 'TINYINT'], ['i16', 'int16', 'SMALLINT', 'SMALLINT'],
    ['i32', 'int32', 'INTEGER', 'INTEGER'], ['i64', 'int64', 'BIGINT', 'BIGINT'],
    ['u8', 'uint8', 'UTINYINT', 'UTINYINT'], ['u16', 'uint16', 'USMALLINT', 'USMALLINT'],
    ['u32', 'uint32', 'UINTEGER', 'UINTEGER'], ['u64', 'uint64', 'UBIGINT', 'UBIGINT'],
    ['f32', 'float', 'FLOAT', 'FLOAT'], ['f64', 'double', 'DOUBLE', 'DOUBLE'],
    ['b', 'bool', 'BOOLEAN', 'BOOLEAN'], ['s', 'string', 'VARCHAR', 'VARCHAR'],
    ['d', 'date32[day]', 'DATE', 'DATE'],
    ['ts', 'timestamp[us]', 'TIMESTAMP', 'TIMESTAMP'],
    ['tstz', 'timestamp[us, tz=UTC]', 'TIMESTAMPTZ', 'TIMESTAMP WITH TIME ZONE'],
    ['tsns', 'timestamp[ns]', 'TIMESTAMP_NS', 'TIMESTAMP_NS'],
    ['t', 'time64[us]', 'TIME', 'TIME'],
    ['dec', 'decimal128(18, 3)', 'DECIMAL(18,3)', 'DECIMAL(18,3)'],
    ['dec38', 'decimal128(38, 10)', 'DECIMAL(38,10)', 'DECIMAL(38,10)'],
    ['l', 'list<item: int64>', 'BIGINT[]', 'BIGINT[]'],
    ['st', 'struct<x: int64, y: string>', 'STRUCT(x BIGINT, y VARCHAR)', 'STRUCT(x BIGINT, y VARCHAR)'],
    ['m', 'map<string, int64>', 'MAP(VARCHAR, BIGINT)', 'MAP(VARCHAR, BIGINT)'],
    ['ls', 'list<item: struct<k: string>>', 'STRUCT(k VARCHAR)[]', 'STRUCT(k VARCHAR)[]'],
];
const rows = [
    { i8: -128, i16: -32768, i32: -2147483648, i64: '-9223372036854775808', u8: 255, u16: 65535, u32: 4294967295,
        u64: '18446744073709551615', f32: 1.5, f64: -2.25e-300, b: true, s: 'héllo, "world"\n', d: '1970-01-01',
        ts: '2024-02-29T23:59:59.123456', tstz: '2024-02-29T23:59:59.5+02:00', tsns: '2200-01-01T00:00:00.123456789',
        t: '23:59:59.999999', dec: '-123456789012345.678', dec38: '1234567890123456789012345678.0123456789',
        l: [1, null, 3], st: { x: 1, y: 'y' }, m: { a: 1, b: null }, ls: [{ k: 'v' }, null] },
    { i8: 127, i16: 32767, i32: 2147483647, i64: '9223372036854775807', u8: 0, u16: 0, u32: 0, u64: '0',
        f32: -0.0, f64: 1e308, b: false, s: '', d: '2038-01-19', ts: '1900-01-01T00:00:00', tstz: '1969-12-31T23:59:59Z',
        tsns: '1970-01-01T00:00:00.000000001', t: '00:00:00', dec: '0.001', dec38: '-0.0000000001',
        l: [], st: { x: null, y: null }, m: {}, ls: [] },
    Object.fromEntries(COLS.map(([n]) => [n, null])),
];
// Integers beyond 2^53 are written as JSON numbers verbatim, not through JS doubles.
const line = (r) => JSON.stringify(r).replace(/"(i64|u64)":"(-?\d+)"/g, '"$1":$2');
const input = path.join(work, 'types.ndjson');
fs.writeFileSync(input, rows.map(line).join('\n') + '\n');
const schema = schemaFile(work, 'schema.json', COLS.map(([name, type]) => ({ name, type, nullable: true })));

runOk(['write', '--url', lake, '--table', 'types', '--schema', schema, '--quiet', input]);
const dir = path.join(lake, 'types');
const desc = await query(`DESCRIBE ${tableSql(dir)}`);
for (const [name, , , want] of COLS) {
    const got = desc.find((c) => c.column_name === name)?.column_type;
    check(got === want, `column ${name}: Parquet type read as ${want} (got ${got})`);
}
// DuckDB's JSON reader cannot parse text into TIMESTAMP_NS: that column is read as text and cast.
const inputCols = COLS.map(([n, , d]) => [n, d === 'TIMESTAMP_NS' ? 'VARCHAR' : d]);
await exceptAll(
    `SELECT * REPLACE (tsns::TIMESTAMP_NS AS tsns) FROM read_json(${lit(input)}, format='newline_delimited', columns=${duckColumns(inputCols)})`,
    tableSql(dir), 'every type: input and table hold the same rows');
done();
