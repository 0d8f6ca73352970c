// test_pq_types: the Parquet writer's type matrix, read back by independent readers.
//
// tests/tools/pq_write writes a file from a JSON description; DuckDB (@duckdb/node-api, extension
// autoloading off) reads it back and every value is compared with the expected text written
// below by hand (timestamps: from JavaScript's Date, which shares nothing with our code).
// For each configuration (data page v1/v2, each codec, dictionary on/off, tiny pages) it checks:
// values; the codec recorded for every column chunk; RLE_DICTIONARY vs PLAIN pages (hyparquet's
// encoding_stats); chunk statistics (min, max, null_count from parquet_metadata()) against what
// DuckDB computes from the data; the page index (tests/oracle/page-index.mjs) page by page
// against the rows of each page; and byte-identical output when written twice.
// hyparquet reads what DuckDB cannot: nanosecond timestamps with a time zone.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readPageIndexChecked, decodePlain } from '../oracle/page-index.mjs';
import { wasmRead } from '../oracle/wasm-read.mjs';

const tools = process.env.S3L_TOOLS_DIR;
if (!tools) throw new Error('S3L_TOOLS_DIR is not set');
const dir = mkdtempSync(join(tmpdir(), 'pq-types-'));
let failures = 0;
function check(cond, msg) {
  if (!cond) { failures++; console.error('FAIL: ' + msg); }
}

// ---------------------------------------------------------------------------------------------
// The matrix. Each column: type, nullable, the six input values, the six expected texts (DuckDB
// CAST(... AS VARCHAR), or to_json for nested values, or hex() for binaries) and how its
// statistics can be compared.
const T = (id, extra = {}) => ({ id, ...extra });
const iso = (ms, frac = '') => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '')
  .replace('Z', '') + frac;
const U = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
const cols = [
  { name: 'b', type: T('bool'), v: [false, true, null, true, false, true],
    e: ['false', 'true', null, 'true', 'false', 'true'] },
  { name: 'i8', type: T('int8'), v: [-128, 127, null, 5, 0, -1],
    e: ['-128', '127', null, '5', '0', '-1'] },
  { name: 'i16', type: T('int16'), v: [-32768, 32767, null, 300, 0, -1],
    e: ['-32768', '32767', null, '300', '0', '-1'] },
  { name: 'i32', type: T('int32'), v: [-2147483648, 2147483647, null, 70000, 0, -1],
    e: ['-2147483648', '2147483647', null, '70000', '0', '-1'] },
  { name: 'i64', type: T('int64'),
    v: ['-9223372036854775808', '9223372036854775807', null, 5000000000, 0, -1],
    e: ['-9223372036854775808', '9223372036854775807', null, '5000000000', '0', '-1'] },
  { name: 'u8', type: T('uint8'), v: [0, 255, null, 7, 1, 128],
    e: ['0', '255', null, '7', '1', '128'] },
  { name: 'u16', type: T('uint16'), v: [0, 65535, null, 7, 1, 32768],
    e: ['0', '65535', null, '7', '1', '32768'] },
  { name: 'u32', type: T('uint32'), v: [0, 4294967295, null, 7, 1, 2147483648],
    e: ['0', '4294967295', null, '7', '1', '2147483648'] },
  { name: 'u64', type: T('uint64'),
    v: ['0', '18446744073709551615', null, '9223372036854775808', '1', '42'],
    e: ['0', '18446744073709551615', null, '9223372036854775808', '1', '42'] },
  { name: 'f16', type: T('float16'), v: [-65504, 65504, null, 0.5, '-0', 1.5],
    e: ['-65504.0', '65504.0', null, '0.5', '-0.0', '1.5'] },
  { name: 'f32', type: T('float32'),
    v: [-3.4028234663852886e38, 3.4028234663852886e38, null, 'NaN', '-0', 1.5],
    e: ['-3.4028235e+38', '3.4028235e+38', null, 'nan', '-0.0', '1.5'], nan: true },
  { name: 'f64', type: T('float64'),
    v: [-1.7976931348623157e308, 1.7976931348623157e308, null, 'NaN', '-0', 0],
    e: ['-1.7976931348623157e+308', '1.7976931348623157e+308', null, 'nan', '-0.0', '0.0'],
    nan: true },
  { name: 's', type: T('utf8'), v: ['', 'héllo wörld ✓ 😀', null, 'a', 'zzz', '日本語'],
    e: ['', 'héllo wörld ✓ 😀', null, 'a', 'zzz', '日本語'] },
  { name: 'bin', type: T('binary'),
    v: [{ hex: '' }, { hex: '00ff10' }, null, { hex: 'ff' }, { hex: '41' }, { hex: '0000' }],
    e: ['', '00FF10', null, 'FF', '41', '0000'], sql: c => `hex(${c})` },
  { name: 'fx3', type: T('fixed', { width: 3 }),
    v: [{ hex: '000000' }, { hex: 'ffffff' }, null, { hex: '616263' }, { hex: '010203' },
      { hex: '7f0000' }],
    e: ['000000', 'FFFFFF', null, '616263', '010203', '7F0000'], sql: c => `hex(${c})` },
  { name: 'uid', type: T('uuid'),
    v: ['00000000-0000-0000-0000-000000000000', U, null,
      '550e8400-e29b-41d4-a716-446655440000', { hex: '0123456789abcdef0123456789abcdef' },
      '7fffffff-ffff-ffff-ffff-ffffffffffff'],
    e: ['00000000-0000-0000-0000-000000000000', U, null,
      '550e8400-e29b-41d4-a716-446655440000', '01234567-89ab-cdef-0123-456789abcdef',
      '7fffffff-ffff-ffff-ffff-ffffffffffff'] },
  { name: 'js', type: T('json'), v: ['{"a":1}', '[]', null, '"x"', 'null', '{}'],
    e: ['{"a":1}', '[]', null, '"x"', 'null', '{}'] },
  { name: 'd32', type: T('date32'), v: [-719162, 2932896, null, -1, 0, 19000],
    e: ['0001-01-01', '9999-12-31', null, '1969-12-31', '1970-01-01', '2022-01-08'] },
  { name: 't32s', type: T('time32', { unit: 's' }), v: [0, 86399, null, 3600, 1, 45296],
    e: ['00:00:00', '23:59:59', null, '01:00:00', '00:00:01', '12:34:56'] },
  { name: 't32ms', type: T('time32', { unit: 'ms' }), v: [0, 86399999, null, 1, 500, 45296789],
    e: ['00:00:00', '23:59:59.999', null, '00:00:00.001', '00:00:00.5', '12:34:56.789'] },
  { name: 't64us', type: T('time64', { unit: 'us' }), v: [0, 86399999999, null, 1, 10, 45296789012],
    e: ['00:00:00', '23:59:59.999999', null, '00:00:00.000001', '00:00:00.00001',
      '12:34:56.789012'] },
  { name: 'tss', type: T('timestamp', { unit: 's' }),
    v: [-62135596800, 253402300799, null, -1, 0, 1700000000],
    e: [iso(-62135596800000), iso(253402300799000), null, iso(-1000), iso(0), iso(1700000000000)] },
  { name: 'tsms_utc', type: T('timestamp', { unit: 'ms', tz: 'UTC' }),
    v: [-1, 253402300799999, null, 0, 1, 1700000000123],
    e: [iso(-1, '.999+00'), iso(253402300799999, '.999+00'), null, iso(0, '+00'),
      iso(1, '.001+00'), iso(1700000000123, '.123+00')] },
  { name: 'tsus', type: T('timestamp', { unit: 'us' }),
    v: ['-62135596800000000', '32503680000000000', null, -1, 0, '1700000000123456'],
    e: [iso(-62135596800000), iso(32503680000000), null, iso(-1, '.999999'), iso(0),
      iso(1700000000123, '.123456')] },
  { name: 'tsns', type: T('timestamp', { unit: 'ns' }),
    // DuckDB reads +-(2^63 - 1) as +-infinity and refuses values near them, so the extremes
    // are +-9000000000.123456789 s: the negative one is -9000000001 s + .876543211.
    v: ['-9000000000123456789', '9000000000123456789', null, -1, 0, '1700000000123456789'],
    e: [iso(-9000000001000, '.876543211'), iso(9000000000000, '.123456789'), null,
      iso(-1000, '.999999999'), iso(0), iso(1700000000000, '.123456789')] },
  { name: 'dec9', type: T('decimal', { precision: 9, scale: 2 }),
    v: ['-999999999', '999999999', null, '12345', '0', '-1'],
    e: ['-9999999.99', '9999999.99', null, '123.45', '0.00', '-0.01'] },
  { name: 'dec18', type: T('decimal', { precision: 18, scale: 4 }),
    v: ['-999999999999999999', '999999999999999999', null, '12345', '0', '-1'],
    e: ['-99999999999999.9999', '99999999999999.9999', null, '1.2345', '0.0000', '-0.0001'] },
  { name: 'dec38', type: T('decimal', { precision: 38, scale: 10 }),
    v: ['-99999999999999999999999999999999999999', '99999999999999999999999999999999999999',
      null, '12345', '0', '-1'],
    e: ['-9999999999999999999999999999.9999999999', '9999999999999999999999999999.9999999999',
      null, '0.0000012345', '0.0000000000', '-0.0000000001'] },
  { name: 'dec20', type: T('decimal', { precision: 20, scale: 0 }),
    v: ['-99999999999999999999', '99999999999999999999', null, '256', '0', '-256'],
    e: ['-99999999999999999999', '99999999999999999999', null, '256', '0', '-256'] },
  { name: 'iv', type: T('interval'),
    v: [[0, 0, 0], [2147483647, -2147483648, '9223372036854775807'], null, [1, 2, 3],
      [-1, 0, '-9223372036854775808'], [0, 31, 1000]],
    e: ['{"months":0,"days":0,"nanoseconds":0}',
      '{"months":2147483647,"days":-2147483648,"nanoseconds":9223372036854775807}', null,
      '{"months":1,"days":2,"nanoseconds":3}',
      '{"months":-1,"days":0,"nanoseconds":-9223372036854775808}',
      '{"months":0,"days":31,"nanoseconds":1000}'], sql: c => `to_json(${c})`,
    stats: { nulls: 1, min: '-1', max: '2147483647' } },
  { name: 'l', type: T('list', { item: { name: 'item', type: T('int32') } }),
    v: [[], [1, 2, 3], null, [null], [null, 4], [5]],
    e: ['[]', '[1,2,3]', null, '[null]', '[null,4]', '[5]'], sql: c => `to_json(${c})`,
    stats: { nulls: 4, min: '1', max: '5' } },
  { name: 'll', type: T('list', { item: { name: 'item',
    type: T('list', { item: { name: 'item', type: T('int64') } }) } }),
    v: [[[1], [2, 3]], [], null, [[], null, [4]], [[null]], [[5, 6], [7]]],
    e: ['[[1],[2,3]]', '[]', null, '[[],null,[4]]', '[[null]]', '[[5,6],[7]]'],
    sql: c => `to_json(${c})`, stats: { nulls: 5, min: '1', max: '7' } },
  { name: 'st', type: T('struct', { fields: [
    { name: 'a', type: T('int32') }, { name: 'b', type: T('utf8') },
    { name: 'c', type: T('list', { item: { name: 'item', type: T('int8') } }) }] }),
    v: [{ a: 1, b: 'x', c: [1] }, { a: null, b: null, c: null }, null, { a: 2, b: '', c: [] },
      { a: -5, b: 'yy', c: [null, 2] }, { a: 0, b: 'z', c: [3, 4] }],
    e: ['{"a":1,"b":"x","c":[1]}', '{"a":null,"b":null,"c":null}', null,
      '{"a":2,"b":"","c":[]}', '{"a":-5,"b":"yy","c":[null,2]}', '{"a":0,"b":"z","c":[3,4]}'],
    sql: c => `to_json(${c})`, stats: { nulls: 2, min: '-5', max: '2' } },
  { name: 'm', type: T('map', { key: T('utf8'), value: { name: 'value', type: T('int64') } }),
    v: [[['a', 1], ['b', null]], [], null, [['x', 2]], [['k', -1], ['l', 0], ['m', 9]],
      [['', 5]]],
    e: ['{"a":1,"b":null}', '{}', null, '{"x":2}', '{"k":-1,"l":0,"m":9}', '{"":5}'],
    sql: c => `to_json(${c})`, stats: { nulls: 2, min: '', max: 'x' } },
  { name: 'req_i32', type: T('int32'), nullable: false, v: [1, 2, 3, 4, 5, 6],
    e: ['1', '2', '3', '4', '5', '6'] },
  { name: 'req_s', type: T('utf8'), nullable: false, v: ['a', '', 'b', 'c', 'd', 'e'],
    e: ['a', '', 'b', 'c', 'd', 'e'] },
  { name: 'req_l', type: T('list', { item: { name: 'item', type: T('int16'), nullable: false } }),
    nullable: false, v: [[1], [], [2, 3], [], [4], [5, 6, 7]],
    e: ['[1]', '[]', '[2,3]', '[]', '[4]', '[5,6,7]'], sql: c => `to_json(${c})`,
    stats: { nulls: 2, min: '1', max: '7' } },
  { name: 'st_req', type: T('struct', { fields: [
    { name: 'x', type: T('float64'), nullable: false },
    { name: 'y', type: T('list', { item: { name: 'item', type: T('utf8') } }), nullable: false }] }),
    v: [{ x: 1.5, y: ['a'] }, { x: -2, y: [] }, null, { x: 0, y: [null, 'b'] },
      { x: 3, y: ['c', 'd'] }, { x: 4, y: [''] }],
    e: ['{"x":1.5,"y":["a"]}', '{"x":-2.0,"y":[]}', null, '{"x":0.0,"y":[null,"b"]}',
      '{"x":3.0,"y":["c","d"]}', '{"x":4.0,"y":[""]}'], sql: c => `to_json(${c})`,
    stats: { nulls: 1, min: '-2.0', max: '4.0' } },
  { name: 'lst', type: T('list', { item: { name: 'item', type: T('struct', { fields: [
    { name: 'k', type: T('utf8') }, { name: 'v', type: T('list', { item: { name: 'item',
      type: T('int32') } }) }] }) } }),
    v: [[{ k: 'a', v: [1, 2] }, { k: 'b', v: [] }], [null], null, [], [{ k: null, v: null }],
      [{ k: 'c', v: [3] }, null, { k: 'd', v: [null] }]],
    e: ['[{"k":"a","v":[1,2]},{"k":"b","v":[]}]', '[null]', null, '[]',
      '[{"k":null,"v":null}]', '[{"k":"c","v":[3]},null,{"k":"d","v":[null]}]'],
    sql: c => `to_json(${c})`, stats: { nulls: 5, min: 'a', max: 'd' } },
];
// The Arrow type parquet-wasm (arrow-rs) gives each column: time32[s] and timestamp[s] come back
// in milliseconds (Parquet has no second unit); uuid as FixedSizeBinary[16]; json as Utf8.
const arrowTypes = ['Bool', 'Int8', 'Int16', 'Int32', 'Int64', 'Uint8', 'Uint16', 'Uint32',
  'Uint64', 'Float16', 'Float32', 'Float64', 'Utf8', 'Binary', 'FixedSizeBinary[3]',
  'FixedSizeBinary[16]', 'Utf8', 'Date32<DAY>', 'Time32<MILLISECOND>', 'Time32<MILLISECOND>',
  'Time64<MICROSECOND>', 'Timestamp<MILLISECOND>', 'Timestamp<MILLISECOND, UTC>',
  'Timestamp<MICROSECOND>', 'Timestamp<NANOSECOND>', 'Decimal[9e+2]', 'Decimal[18e+4]',
  'Decimal[38e+10]', 'Decimal[20e0]', 'Struct<{months:Int32, days:Int32, nanoseconds:Int64}>',
  'List<Int32>', 'List<List<Int64>>', 'Struct<{a:Int32, b:Utf8, c:List<Int8>}>',
  'Map<{key:Utf8, value:Int64}>', 'Int32!', 'Utf8!', 'List<Int16>!',
  'Struct<{x:Float64, y:List<Utf8>}>', 'List<Struct<{k:Utf8, v:List<Int32>}>>'];
const N = 6;
const rows = [];
for (let r = 0; r < N; r++) rows.push(cols.map(c => c.v[r]));
const schema = cols.map(c => ({ name: c.name, type: c.type, nullable: c.nullable !== false }));

function writeFile(name, doc) {
  const inPath = join(dir, name + '.json');
  const out = join(dir, name + '.parquet');
  writeFileSync(inPath, JSON.stringify(doc));
  const res = execFileSync(join(tools, 'pq_write'), [inPath, out], { encoding: 'utf8' });
  return { out, res };
}

const db = await DuckDBInstance.create(':memory:', {
  autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
const con = await db.connect();
await con.run("SET TimeZone = 'UTC'").catch(() => {});
async function query(sql) {
  try {
    const r = await con.runAndReadAll(sql);
    return r.getRowObjectsJson();
  } catch (e) {
    throw new Error(`${e.message} in: ${sql}`);
  }
}
const ab = path => { const b = readFileSync(path); return b.buffer.slice(b.byteOffset,
  b.byteOffset + b.byteLength); };

async function checkValues(file, tag) {
  const exprs = cols.map(c => `${(c.sql || (x => `CAST(${x} AS VARCHAR)`))(c.name)} AS "${c.name}"`);
  const got = await query(`SELECT ${exprs.join(', ')} FROM read_parquet('${file}',
    file_row_number = true) ORDER BY file_row_number`);
  check(got.length === N, `${tag}: ${got.length} rows, expected ${N}`);
  for (const c of cols) {
    for (let r = 0; r < N; r++) {
      const g = got[r] ? got[r][c.name] : undefined;
      check(g === c.e[r], `${tag}: ${c.name} row ${r}: got ${JSON.stringify(g)}, ` +
        `expected ${JSON.stringify(c.e[r])}`);
    }
  }
}

// Chunk statistics against DuckDB's own aggregates over the rows of each row group.
async function checkStats(file, tag) {
  const md = await query(`SELECT row_group_id AS g, row_group_num_rows AS rows, path_in_schema,
    stats_min_value, stats_max_value, stats_null_count, compression
    FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`);
  const groups = [...new Set(md.map(m => m.g))];
  let first = 0;
  for (const g of groups) {
    const inGroup = md.filter(m => m.g === g);
    const end = first + Number(inGroup[0].rows);
    const src = `read_parquet('${file}', file_row_number = true)`;
    const range = `file_row_number >= ${first} AND file_row_number < ${end}`;
    const at = `${tag} group ${g}`;
    for (const c of cols) {
      if (c.stats === 'none') continue;
      if (typeof c.stats === 'object') {
        if (groups.length > 1) continue; // hand-counted for the whole file
        const leaf = inGroup.find(m => m.path_in_schema.startsWith(c.name + ','));
        check(leaf && leaf.stats_null_count === String(c.stats.nulls) &&
          leaf.stats_min_value === c.stats.min && leaf.stats_max_value === c.stats.max,
        `${at}: ${c.name} stats ${JSON.stringify(leaf)} vs ${JSON.stringify(c.stats)}`);
        continue;
      }
      const m = inGroup.find(x => x.path_in_schema === c.name);
      const nan = c.nan ? `AND NOT isnan(${c.name})` : '';
      const [agg] = await query(`SELECT CAST(min(${c.name}) AS VARCHAR) AS mn,
        CAST(max(${c.name}) AS VARCHAR) AS mx FROM ${src} WHERE ${range} ${nan}`);
      const [nulls] = await query(`SELECT CAST(count(*) - count(${c.name}) AS VARCHAR) AS n
        FROM ${src} WHERE ${range}`);
      check(m.stats_null_count === nulls.n, `${at}: ${c.name} null_count ` +
        `${m.stats_null_count} vs ${nulls.n}`);
      // Zeros: the spec writes -0.0 as the min and +0.0 as the max of float columns, so floats
      // compare as numbers (-0 == 0).
      const same = (a, b) => a === b || (c.nan !== undefined || c.name === 'f16') &&
        a !== null && b !== null && Number(a) === Number(b);
      check(same(m.stats_min_value, agg.mn), `${at}: ${c.name} min ${m.stats_min_value} ` +
        `vs ${agg.mn}`);
      check(same(m.stats_max_value, agg.mx), `${at}: ${c.name} max ${m.stats_max_value} ` +
        `vs ${agg.mx}`);
    }
    first = end;
  }
  return md;
}

const configs = [
  { tag: 'v1-zstd-dict', options: {} },
  { tag: 'v2-zstd', options: { page_version: 2 } },
  { tag: 'v1-snappy', options: { codec: 'snappy' } },
  { tag: 'v1-gzip', options: { codec: 'gzip' } },
  { tag: 'v1-none-nodict', options: { codec: 'none', dictionary: false } },
  { tag: 'v2-snappy-nodict', options: { codec: 'snappy', dictionary: false, page_version: 2 } },
  { tag: 'v2-gzip', options: { codec: 'gzip', page_version: 2 } },
  { tag: 'v2-none', options: { codec: 'none', page_version: 2 } },
  { tag: 'v1-zstd-tiny-pages', options: { page_size: 16, row_group_rows: 4 } },
  { tag: 'v2-zstd-tiny-pages-nodict', options: { page_size: 16, dictionary: false,
    page_version: 2 } },
];
const codecName = { snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };
for (const cfg of configs) {
  const doc = { schema, rows, options: cfg.options };
  const { out, res } = writeFile(cfg.tag, doc);
  check(res.includes('rows 6'), `${cfg.tag}: tool said ${res}`);
  await checkValues(out, cfg.tag);
  const md = await checkStats(out, cfg.tag);
  const want = codecName[cfg.options.codec] || 'ZSTD';
  check(md.every(m => m.compression === want), `${cfg.tag}: codecs ` +
    [...new Set(md.map(m => m.compression))].join(','));
  // Determinism: the same rows give the same bytes.
  const again = writeFile(cfg.tag + '-again', doc).out;
  check(Buffer.compare(readFileSync(out), readFileSync(again)) === 0,
    `${cfg.tag}: two runs gave different bytes`);
  // Encodings per page (hyparquet decodes encoding_stats).
  const meta = parquetMetadata(ab(out));
  for (const rg of meta.row_groups) {
    for (const cc of rg.columns) {
      const es = cc.meta_data.encoding_stats || [];
      const dataEnc = es.filter(e => e.page_type !== 'DICTIONARY_PAGE').map(e => e.encoding);
      const path = cc.meta_data.path_in_schema.join('.');
      const allNull = String(cc.meta_data.statistics?.null_count) ===
        String(cc.meta_data.num_values);
      if (cfg.options.dictionary === false || cc.meta_data.type === 'BOOLEAN' || allNull)
        check(dataEnc.every(e => e === 'PLAIN'), `${cfg.tag}: ${path} pages ${dataEnc}`);
      else if (cfg.options.page_size)
        // Tiny pages: a page of only nulls has nothing to look up and is PLAIN.
        check(dataEnc.includes('RLE_DICTIONARY'), `${cfg.tag}: ${path} pages ${dataEnc}`);
      else
        check(dataEnc.length > 0 && dataEnc.every(e => e === 'RLE_DICTIONARY'),
          `${cfg.tag}: ${path} pages ${dataEnc}`);
    }
  }
  // parquet-wasm: row count and the Arrow schema.
  const wr = await wasmRead(out, { schemaOnly: true });
  const got = wr.schema.map(f => f.type + (f.nullable ? '' : '!'));
  check(wr.num_rows === N && JSON.stringify(got) === JSON.stringify(arrowTypes) &&
    wr.schema.map(f => f.name).join() === cols.map(c => c.name).join(),
  `${cfg.tag}: parquet-wasm read ${wr.num_rows} rows, ${JSON.stringify(got)}`);
  // hyparquet: row count, and the nanosecond timestamp with a time zone DuckDB truncates.
  const objs = await parquetReadObjects({ file: ab(out), compressors, columns: ['req_i32'] });
  check(objs.length === N && objs.map(o => o.req_i32).join() === '1,2,3,4,5,6',
    `${cfg.tag}: hyparquet read ${JSON.stringify(objs)}`);
}

// Nanosecond timestamps with a time zone: hyparquet gives the raw int64 nanoseconds.
{
  const ns = ['-1', '1700000000123456789', null, '9223372036854775807'];
  const doc = { schema: [{ name: 't', type: T('timestamp', { unit: 'ns', tz: 'UTC' }) }],
    rows: ns.map(v => [v]) };
  const { out } = writeFile('tsns-tz', doc);
  const meta = parquetMetadata(ab(out));
  const lt = meta.schema[1].logical_type;
  check(lt && lt.type === 'TIMESTAMP' && lt.isAdjustedToUTC === true && lt.unit === 'NANOS',
    `tsns-tz logical type ${JSON.stringify(lt)}`);
  const objs = await parquetReadObjects({ file: ab(out), compressors, utf8: false,
    parsers: { timestampFromNanoseconds: x => x } });
  const got = objs.map(o => o.t === null || o.t === undefined ? null : String(o.t));
  check(JSON.stringify(got) === JSON.stringify(ns), `tsns-tz: hyparquet ${JSON.stringify(got)}`);
  const [d] = await query(`SELECT CAST(t AS VARCHAR) AS t FROM '${out}' LIMIT 1 OFFSET 1`);
  check(d.t === '2023-11-14 22:13:20.123456+00', `tsns-tz via DuckDB (us): ${d.t}`);
}

// Strings over 1 MiB, and long min/max truncated (max rounded up, never below the true max).
{
  const big = { repeat: 'ab', n: 600000 };
  const doc = { schema: [{ name: 's', type: T('utf8') }, { name: 'b', type: T('binary') }],
    rows: [[big, { hex: 'ff'.repeat(100) }], ['x'.repeat(100) + 'é', { hex: '00'.repeat(80) }],
      [null, null], ['zz' + '\u{10FFFF}'.repeat(40), { hex: 'fe' + 'ff'.repeat(90) }]] };
  const { out } = writeFile('big', doc);
  const [r] = await query(`SELECT length(s) AS n, s = repeat('ab', 600000) AS same
    FROM read_parquet('${out}', file_row_number = true) WHERE file_row_number = 0`);
  check(r.n === '1200000' && r.same === true, `big string: ${JSON.stringify(r)}`);
  const md = await query(`SELECT path_in_schema AS p, stats_min_value AS mn, stats_max_value AS mx,
    max_is_exact, min_is_exact FROM parquet_metadata('${out}')`);
  const [agg] = await query(`SELECT max(s) AS mx, min(s) AS mn FROM '${out}'`);
  const s = md.find(m => m.p === 's');
  check(s.mx.length <= 70 && s.mx > agg.mx && s.max_is_exact === false,
    `truncated max ${JSON.stringify(s.mx)} vs true max ${agg.mx.slice(0, 10)}...`);
  check(agg.mn.startsWith(s.mn) && s.mn.length <= 64 && s.min_is_exact === false,
    `truncated min ${JSON.stringify(s.mn).slice(0, 80)}`);
  const meta = parquetMetadata(ab(out), { parsers: { stringFromBytes: b => b } });
  const bst = meta.row_groups[0].columns[1].meta_data.statistics;
  const hx = v => Buffer.from(v).toString('hex');
  // Binary max fe ff..ff (91 bytes) truncated to 64 bytes and rounded up: ff (one byte).
  check(hx(bst.max_value) === 'ff'.repeat(100), `binary max ${hx(bst.max_value)}`);
  check(hx(bst.min_value) === '00'.repeat(64), `binary min ${hx(bst.min_value)}`);
}

// Dictionary fallback: many distinct values and a small dictionary limit give RLE_DICTIONARY
// pages first, then PLAIN pages; low-cardinality columns stay RLE_DICTIONARY.
{
  const rowsF = [];
  for (let i = 0; i < 3000; i++) rowsF.push([`value-${i}-${'x'.repeat(i % 7)}`, i % 3]);
  const doc = { schema: [{ name: 's', type: T('utf8') }, { name: 'k', type: T('int64') }],
    rows: rowsF, options: { dictionary_page_limit: 4096, page_size: 2048 } };
  const { out } = writeFile('fallback', doc);
  const meta = parquetMetadata(ab(out));
  const [s, k] = meta.row_groups[0].columns.map(c => c.meta_data);
  const enc = m => m.encoding_stats.map(e => `${e.page_type}:${e.encoding}:${e.count}`).join(' ');
  check(s.encoding_stats.some(e => e.page_type === 'DATA_PAGE' && e.encoding === 'PLAIN') &&
    s.encoding_stats.some(e => e.encoding === 'RLE_DICTIONARY'), `fallback s: ${enc(s)}`);
  check(s.encodings.includes('PLAIN') && s.encodings.includes('RLE_DICTIONARY'),
    `fallback s encodings ${s.encodings}`);
  check(k.encoding_stats.every(e => e.page_type === 'DICTIONARY_PAGE' ||
    e.encoding === 'RLE_DICTIONARY'), `fallback k: ${enc(k)}`);
  const [agg] = await query(`SELECT count(*) AS n, count(DISTINCT s) AS d, sum(k) AS sk,
    min(s) AS mn FROM '${out}'`);
  check(agg.n === '3000' && agg.d === '3000' && agg.sk === '3000' && agg.mn === 'value-0-',
    `fallback values ${JSON.stringify(agg)}`);
  const [last] = await query(`SELECT s FROM read_parquet('${out}', file_row_number = true)
    WHERE file_row_number = 2999`);
  check(last.s === 'value-2999-' + 'x'.repeat(2999 % 7), `fallback last ${last.s}`);
}

// The page index, page by page: every page's rows (from the OffsetIndex) have the min, max and
// null count the ColumnIndex says, computed by DuckDB over exactly those rows. The indexes are
// decoded by tests/oracle/page-index.mjs (its own Thrift decoder, cross-checked with hyparquet).
{
  const rowsP = [];
  for (let i = 0; i < 500; i++)
    rowsP.push([i % 11 === 0 ? null : i * 3 - 700, i % 5 === 0 ? null : `s${(i * 7919) % 1000}`,
      i < 100 ? null : (i % 13) - 6.5]);
  const doc = { schema: [{ name: 'a', type: T('int32') }, { name: 's', type: T('utf8') },
    { name: 'f', type: T('float64') }], rows: rowsP,
    options: { page_size: 256, row_group_rows: 300 } };
  const { out } = writeFile('pageindex', doc);
  const meta = parquetMetadata(ab(out));
  const index = await readPageIndexChecked(out);
  const names = ['a', 's', 'f'];
  let pages = 0;
  const rowBase = [0];
  for (const rg of meta.row_groups) rowBase.push(rowBase[rowBase.length - 1] + Number(rg.num_rows));
  check(index.length === meta.row_groups.length * 3, `pageindex: ${index.length} chunks`);
  for (const chunk of index) {
    const col = names[chunk.column];
    const rg = meta.row_groups[chunk.row_group];
    const cc = rg.columns[chunk.column];
    const locs = chunk.offset_index.page_locations;
    const cix = chunk.column_index;
    check(locs.length > 1 && cix && cix.null_pages.length === locs.length,
      `pageindex ${col}: ${locs.length} pages`);
    const firstPage = Number(cc.meta_data.dictionary_page_offset ?? cc.meta_data.data_page_offset);
    check(Number(locs[0].offset) === Number(cc.meta_data.data_page_offset) &&
      Number(locs[0].offset) >= firstPage, `pageindex ${col}: first page offset`);
    for (let p = 0; p < locs.length; p++) {
      pages++;
      if (p + 1 < locs.length)
        check(Number(locs[p].offset) + Number(locs[p].compressed_page_size) ===
          Number(locs[p + 1].offset), `pageindex ${col} page ${p}: pages not contiguous`);
      const base = rowBase[chunk.row_group];
      const first = base + Number(locs[p].first_row_index);
      const end = p + 1 < locs.length ? base + Number(locs[p + 1].first_row_index)
        : base + Number(rg.num_rows);
      const [agg] = await query(`SELECT CAST(min(${col}) AS VARCHAR) AS mn,
        CAST(max(${col}) AS VARCHAR) AS mx, count(*) - count(${col}) AS nulls
        FROM read_parquet('${out}', file_row_number = true)
        WHERE file_row_number >= ${first} AND file_row_number < ${end}`);
      check(String(cix.null_counts[p]) === String(agg.nulls),
        `pageindex ${col} page ${p}: nulls ${cix.null_counts[p]} vs ${agg.nulls}`);
      if (agg.mn === null) {
        check(cix.null_pages[p] === true, `pageindex ${col} page ${p}: not a null page`);
        continue;
      }
      check(cix.null_pages[p] === false, `pageindex ${col} page ${p}: null page?`);
      const mn = decodePlain(cix.min_values[p], chunk.physical_type);
      const mx = decodePlain(cix.max_values[p], chunk.physical_type);
      const same = (x, y) => String(x) === y || Number(x) === Number(y);
      check(same(mn, agg.mn), `pageindex ${col} page ${p}: min ${mn} vs ${agg.mn}`);
      check(same(mx, agg.mx), `pageindex ${col} page ${p}: max ${mx} vs ${agg.mx}`);
    }
  }
  check(pages > 10, `pageindex: only ${pages} pages`);
}

// Bad input: each bad row is rejected whole, naming column and row; the other rows are kept.
{
  const doc = { schema: [{ name: 'i', type: T('int8') }, { name: 's', type: T('utf8') },
    { name: 'd', type: T('decimal', { precision: 5, scale: 2 }) },
    { name: 'st', type: T('struct', { fields: [{ name: 'x', type: T('int32') }] }) },
    { name: 'r', type: T('int32'), nullable: false },
    { name: 'l', type: T('list', { item: { name: 'item', type: T('int32') } }) }],
  rows: [
    [1, 'ok', '100', { x: 1 }, 1, [1]],
    [128, 'bad int', '1', { x: 1 }, 2, [1]],
    [2, { hex: 'c328' }, '1', { x: 1 }, 3, [2]],
    [3, 'too many digits', '100000', { x: 1 }, 4, [3]],
    [4, 'list for struct', '1', { $raw: 'list' }, 5, [4]],
    [5, 'null required', '1', { x: 1 }, null, [5]],
    [6, 'ok', '-99999', null, 6, [null, 6]],
    [7, 'string in list', '1', { x: 1 }, 7, [{ $raw: 'string', v: 'x' }]],
  ] };
  const { out, res } = writeFile('bad', doc);
  const want = [
    /^reject 1: row 2, column i: 128 is out of range \[-128, 127\]$/m,
    /^reject 2: row 3, column s: invalid UTF-8 at byte 0$/m,
    /^reject 3: row 4, column d: more than 5 digits for decimal128\(5, 2\)$/m,
    /^reject 4: row 5, column st: expected a struct, got a list$/m,
    /^reject 5: row 6, column r: null in a required column$/m,
    /^reject 7: row 8, column l\.element: expected an integer, got a string$/m,
    /^rows 2$/m];
  for (const re of want) check(re.test(res), `bad input: ${re} not in:\n${res}`);
  const got = await query(`SELECT i, s, CAST(d AS VARCHAR) AS d, to_json(st) AS st, r,
    to_json(l) AS l FROM '${out}'`);
  check(JSON.stringify(got) === JSON.stringify([
    { i: 1, s: 'ok', d: '1.00', st: '{"x":1}', r: 1, l: '[1]' },
    { i: 6, s: 'ok', d: '-999.99', st: null, r: 6, l: '[null,6]' }]),
  `bad input kept rows ${JSON.stringify(got)}`);
}

if (process.env.PQ_KEEP) console.log(dir); else rmSync(dir, { recursive: true, force: true });
if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log('test_pq_types: all checks passed');
