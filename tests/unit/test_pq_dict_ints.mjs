// test_pq_dict_ints: dictionary encoding of integer pages (src/lib/parquet/dict.c), read back by
// DuckDB. Pages of 1024 or more integers whose values lie within 8192 of each other take an
// array indexed by value instead of the hash table, and values that only grow (sorted
// timestamps) are appended without it until one does not; this file makes such pages next to
// wide ones: int32 and int64 with negatives, ranges that move between pages (earlier entries
// outside the new range, others inside it), a span of 8191, sorted values with repeats, sorted
// values that drop back mid-page, nulls, and a dictionary that fills up mid-chunk (the rest of
// the chunk PLAIN). tests/tools/pq_write writes it; every
// value is compared with the formula below (JavaScript, nothing shared with the writer), and the
// chunks must show both RLE_DICTIONARY and PLAIN pages where the options force them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata } from 'hyparquet';

const tools = process.env.S3L_TOOLS_DIR;
if (!tools) throw new Error('S3L_TOOLS_DIR is not set');
const dir = mkdtempSync(join(tmpdir(), 'pq-dict-ints-'));

const N = 24000;
// a: int32, a range of 3000 that moves by 5000 every 4000 rows, nulls every 97th row.
const a = i => (i % 97 === 0 ? null : ((i * 7919) % 3000) - 1500 + Math.floor(i / 4000) * 5000);
// b: int64, a span of 8191 in the first half (the array), wider in the second.
const b = i => (i < N / 2 ? ((i * 31) % 8192) - 4000 : ((i * 31) % 8193) - 4000);
// c: int64, wide (hash table), repeats in runs of 3.
const c = i => Math.floor(i / 3) * 1000003 - 7;
// d: int8, required, -100..99.
const d = i => (i % 200) - 100;
// e: int64, sorted evens, then from row 7000 on odds from 1 again (below the largest entry).
const e = i => (i < 7000 ? i * 2 : (i % 7000) * 2 + 1);
const rows = [];
for (let i = 0; i < N; i++) rows.push([a(i), b(i), c(i), d(i), e(i)]);
const schema = [
  { name: 'a', type: { id: 'int32' } },
  { name: 'b', type: { id: 'int64' } },
  { name: 'c', type: { id: 'int64' } },
  { name: 'd', type: { id: 'int8' }, nullable: false },
  { name: 'e', type: { id: 'int64' } },
];

function write(name, options) {
  const inPath = join(dir, name + '.json');
  const out = join(dir, name + '.parquet');
  writeFileSync(inPath, JSON.stringify({ schema, rows, options }));
  const res = execFileSync(join(tools, 'pq_write'), [inPath, out], { encoding: 'utf8' });
  assert.match(res, new RegExp(`rows ${N}`));
  return out;
}

const db = await DuckDBInstance.create(':memory:', {
  autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', threads: '1' });
const con = await db.connect();
const query = async sql => (await con.runAndReadAll(sql)).getRowObjectsJson();

try {
  // Pages of about 2000-4000 values (page_size 16 KiB), row groups of 10000 rows. The first
  // file's dictionaries have room; the second's fill up (20 KB: b's 8-byte entries overflow).
  const files = [
    ['roomy', { page_size: 16384, row_group_rows: 10000, codec: 'none' }, false],
    ['full', { page_size: 16384, row_group_rows: 10000, codec: 'zstd',
      dictionary_page_limit: 20000 }, true],
  ];
  for (const [name, options, fills] of files) {
    const out = write(name, options);
    const got = await query(`SELECT a, b, c, d, e FROM read_parquet('${out}',
                             file_row_number = true) ORDER BY file_row_number`);
    assert.equal(got.length, N, name);
    let bad = 0;
    for (let i = 0; i < N; i++) {
      const want = [a(i), b(i), c(i), d(i), e(i)].map(v => (v === null ? null : String(v)));
      const row = [got[i].a, got[i].b, got[i].c, got[i].d, got[i].e]
        .map(v => (v === null ? null : String(v)));
      if (JSON.stringify(row) !== JSON.stringify(want) && bad++ < 5)
        console.error(`${name} row ${i}: got ${JSON.stringify(row)} want ${JSON.stringify(want)}`);
    }
    assert.equal(bad, 0, `${name}: ${bad} rows differ`);
    // Data pages per chunk (hyparquet decodes encoding_stats): all RLE_DICTIONARY when the
    // dictionaries have room; with the small limit, b's chunks fall back to PLAIN mid-chunk.
    const buf = readFileSync(out);
    const meta = parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
    assert.equal(meta.row_groups.length, 3, name);
    const fellBack = { a: 0, b: 0, c: 0, d: 0, e: 0 };
    for (const rg of meta.row_groups) {
      for (const cc of rg.columns) {
        const col = cc.meta_data.path_in_schema.join('.');
        const data = cc.meta_data.encoding_stats.filter(e => e.page_type !== 'DICTIONARY_PAGE');
        assert.ok(data.some(e => e.encoding === 'RLE_DICTIONARY'), `${name} ${col}: no dict pages`);
        if (data.some(e => e.encoding === 'PLAIN'))
          fellBack[col]++;
      }
    }
    // 20000 bytes hold 5000 int32 or 2500 int64 entries. Row groups of 10000, 10000 and 4000
    // rows: a has about 7000, 7000 and 3000 distinct values, b 8000, 8000 and 4000, c 3334, 3333
    // and 1334, d (int8 stored as INT32) 200 each, e 10000, 10000 and 4000.
    const want = fills ? { a: 2, b: 3, c: 2, d: 0, e: 3 } : { a: 0, b: 0, c: 0, d: 0, e: 0 };
    assert.deepEqual(fellBack, want, `${name}: chunks with PLAIN pages`);
  }
  console.log('ok');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
