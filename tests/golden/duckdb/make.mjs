// make.mjs: writes the golden Parquet files of the footer reader's tests, and next to each one
// NAME.expected.json with what independent readers report about it. Run it from the repository
// root only to regenerate (the outputs are committed; tests never run it):
//     node tests/golden/duckdb/make.mjs
// Files:
//   flat_types.parquet   DuckDB, zstd: one column per flat type, 3 rows, nulls in every column
//   nested.parquet       DuckDB, snappy: list, struct, map, list<struct>, list<list>
//   row_groups.parquet   DuckDB, gzip: 5000 rows in several row groups, key/value metadata
//   uncompressed.parquet DuckDB, no compression, a dictionary-encoded string column
//   empty.parquet        DuckDB: a schema and no rows
//   arrowrs_codecs.parquet  arrow-rs, data page v2, a codec and an encoding per column, a list
//   arrowrs_page_index.parquet  arrow-rs (npm parquet-wasm): page statistics, ColumnIndex and
//                        OffsetIndex over many small pages in 2 row groups, with nulls and
//                        null pages
// NAME.expected.json = { duckdb: pqMeta() (parquet_file_metadata, parquet_schema,
// parquet_metadata, parquet_kv_metadata), page_index: per row group and column, the page index
// as hyparquet decodes it (arrowrs_* only) }.
import { writeFileSync, rmSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDuck } from '../../oracle/duck.mjs';
import { pqMeta } from '../../oracle/pq-meta.mjs';
import { readPageIndexHyparquet } from '../../oracle/page-index.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const out = name => join(here, name);

const flatTypes = `
SELECT * FROM (VALUES
  (true, (-128)::TINYINT, (-32768)::SMALLINT, (-2147483648)::INTEGER, (-9223372036854775808)::BIGINT,
   0::UTINYINT, 0::USMALLINT, 0::UINTEGER, 0::UBIGINT, (-1.5)::FLOAT, (-2.25)::DOUBLE, 'alpha',
   '\\x00\\x01'::BLOB, DATE '1969-12-31', TIME '00:00:01', TIMESTAMP '1900-01-01 00:00:00',
   TIMESTAMPTZ '2000-01-01 00:00:00+00', TIMESTAMP_MS '2001-02-03 04:05:06.007',
   TIMESTAMP_NS '2262-04-11 23:47:16.854775', (-12.34)::DECIMAL(4,2),
   (-123456789012345.678)::DECIMAL(18,3), 1.5::DECIMAL(38,10),
   '00000000-0000-0000-0000-000000000001'::UUID, '{"a":1}'::JSON),
  (false, 127::TINYINT, 32767::SMALLINT, 2147483647::INTEGER, 9223372036854775807::BIGINT,
   255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER, 18446744073709551615::UBIGINT,
   3.5::FLOAT, 1e300::DOUBLE, 'omega', '\\xff'::BLOB, DATE '2100-01-01', TIME '23:59:59.999999',
   TIMESTAMP '2200-12-31 23:59:59.999999', TIMESTAMPTZ '1960-06-01 12:00:00+00',
   TIMESTAMP_MS '1950-01-01 00:00:00', TIMESTAMP_NS '1677-09-22 00:00:00.000000001', 99.99::DECIMAL(4,2),
   0::DECIMAL(18,3), (-99999999999999999999999999.9999999999)::DECIMAL(38,10),
   'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID, '[]'::JSON),
  (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
) v(b, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, s, bl, dt, t, ts, tstz, ts_ms, ts_ns,
    dec4, dec18, dec38, u, j)`;

const nested = `
SELECT * FROM (VALUES
  (1, [1, 2, NULL], {'a': 1, 'b': 'x'}, MAP {'k1': 10, 'k2': NULL}, [{'x': 1}, NULL],
   [[1], [], NULL]),
  (2, [], {'a': NULL, 'b': NULL}, MAP {}, [], []),
  (3, NULL, NULL, NULL, NULL, NULL)
) v(id, l, s, m, ls, ll)`;

async function duckFiles(duck) {
  await duck.run(`COPY (${flatTypes}) TO '${out('flat_types.parquet')}'
                  (FORMAT parquet, COMPRESSION zstd)`);
  await duck.run(`COPY (${nested}) TO '${out('nested.parquet')}'
                  (FORMAT parquet, COMPRESSION snappy)`);
  await duck.run(`COPY (SELECT range::BIGINT AS id, 'v' || (range % 13) AS s,
                         CASE WHEN range % 10 = 0 THEN NULL ELSE range * 0.5 END AS d
                  FROM range(5000))
                  TO '${out('row_groups.parquet')}'
                  (FORMAT parquet, COMPRESSION gzip, ROW_GROUP_SIZE 1000,
                   KV_METADATA {writer: 'make.mjs', purpose: 'golden'})`);
  await duck.run(`COPY (SELECT range::INTEGER AS n, ['red', 'green', 'blue'][range % 3 + 1] AS c
                  FROM range(300))
                  TO '${out('uncompressed.parquet')}' (FORMAT parquet, COMPRESSION uncompressed)`);
  await duck.run(`COPY (SELECT 1::BIGINT AS a, 'x' AS b WHERE false)
                  TO '${out('empty.parquet')}' (FORMAT parquet)`);
}

// arrow-rs through parquet-wasm: 1000 rows in 2 row groups, pages of about 512 bytes, page-level
// statistics; `nothing` is all nulls, so its pages are null pages.
async function arrowRsFile() {
  const arrow = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  const ids = new BigInt64Array(1000).map((_, i) => BigInt(i));
  const names = Array.from({ length: 1000 }, (_, i) => (i >= 200 && i < 400) ? null
    : 'name' + String(i).padStart(4, '0'));
  const nothing = arrow.vectorFromArray(new Array(1000).fill(null), new arrow.Utf8());
  const table = new arrow.Table({
    id: arrow.vectorFromArray(ids), name: arrow.vectorFromArray(names, new arrow.Utf8()), nothing,
  });
  const wasmTable = pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
  const props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.SNAPPY)
    .setDictionaryEnabled(false)
    .setStatisticsEnabled(pw.EnabledStatistics.Page)
    .setDataPageSizeLimit(512)
    .setWriteBatchSize(50)
    .setMaxRowGroupSize(500)
    .setCreatedBy('parquet-wasm (arrow-rs) via make.mjs')
    .build();
  writeFileSync(out('arrowrs_page_index.parquet'), pw.writeParquet(wasmTable, props));
}

// arrow-rs again, data page v2 with a codec and an encoding per column (DELTA_BINARY_PACKED,
// DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT, RLE_DICTIONARY; BROTLI, LZ4_RAW, ZSTD, GZIP) and a list.
async function arrowRsCodecs() {
  const arrow = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  const n = 300;
  const table = new arrow.Table({
    a: arrow.vectorFromArray(BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 3 - 400))),
    b: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `prefix-${i % 17}`), new arrow.Utf8()),
    c: arrow.vectorFromArray(Float64Array.from({ length: n }, (_, i) => i / 4)),
    d: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => `d${i % 5}`), new arrow.Utf8()),
    l: arrow.vectorFromArray(Array.from({ length: n }, (_, i) => (i % 4 ? [i, i + 1] : null)),
      new arrow.List(new arrow.Field('item', new arrow.Int32(), true))),
  });
  const props = new pw.WriterPropertiesBuilder()
    .setWriterVersion(pw.WriterVersion.V2)
    .setDictionaryEnabled(false)
    .setColumnEncoding('a', pw.Encoding.DELTA_BINARY_PACKED).setColumnCompression('a', pw.Compression.BROTLI)
    .setColumnEncoding('b', pw.Encoding.DELTA_BYTE_ARRAY).setColumnCompression('b', pw.Compression.LZ4_RAW)
    .setColumnEncoding('c', pw.Encoding.BYTE_STREAM_SPLIT).setColumnCompression('c', pw.Compression.ZSTD)
    .setColumnDictionaryEnabled('d', true).setColumnCompression('d', pw.Compression.GZIP)
    .setCreatedBy('parquet-wasm (arrow-rs) v2 pages via make.mjs')
    .build();
  writeFileSync(out('arrowrs_codecs.parquet'), pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props));
}

const bigintJson = (k, v) => (typeof v === 'bigint' ? v.toString() : v);

const duck = await openDuck();
await duckFiles(duck);
await arrowRsFile();
await arrowRsCodecs();
for (const name of ['flat_types', 'nested', 'row_groups', 'uncompressed', 'empty',
  'arrowrs_page_index', 'arrowrs_codecs']) {
  const file = out(name + '.parquet');
  const expected = { duckdb: await pqMeta(file, { duck }) };
  if (name.startsWith('arrowrs_')) expected.page_index = await readPageIndexHyparquet(file);
  rmSync(out(name + '.expected.json'), { force: true });
  writeFileSync(out(name + '.expected.json'), JSON.stringify(expected, bigintJson, 1) + '\n');
  console.log(`${name}: ${readFileSync(file).length} bytes`);
}
duck.close();
