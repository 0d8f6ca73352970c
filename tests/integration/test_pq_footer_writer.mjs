// The footer reader over the files of our own writer (tests/tools/pq_write): for every codec, data
// page v1 and v2, dictionary on and off, 2,000 rows of a type matrix in several row groups and
// small pages, pq_footer_dump (our reader) must agree with DuckDB's parquet_metadata() /
// parquet_schema() (pq-meta.mjs, statistics text included), its page index with page-index.mjs
// (own JS decoder and hyparquet, which must agree), its page headers with page-index.mjs's decoder
// (tiling each chunk, where the OffsetIndex says), its row count with parquet-wasm, and its
// Arrow mapping must give back the schema the writer was given (written below by hand).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuck } from '../oracle/duck.mjs';
import { pqMeta } from '../oracle/pq-meta.mjs';
import { readPageIndexChecked } from '../oracle/page-index.mjs';
import { wasmRead } from '../oracle/wasm-read.mjs';
import { dumpFooter, checkAgainstDuck, checkPageIndex, checkPages } from '../oracle/footer-check.mjs';

const tools = process.env.S3L_TOOLS_DIR;
assert.ok(tools, 'S3L_TOOLS_DIR must name the built test tools');

const N = 2000;
const hex = (i, w) => (i >>> 0).toString(16).padStart(2 * w, '0').slice(-2 * w);
// [name, declared type, nullable, value of row i, expected Arrow type as pq_footer_dump prints it]
const cols = [
  ['id', { id: 'int64' }, false, i => i, /^int64$/],
  ['i8', { id: 'int8' }, true, i => (i % 256) - 128, /^int8$/],
  ['u32', { id: 'uint32' }, true, i => i * 1000, /^uint32$/],
  ['f64', { id: 'float64' }, true, i => (i % 10 ? i / 8 : null), /^double$/],
  ['s', { id: 'utf8' }, true, i => (i % 7 ? `s${i % 37}` : null), /^string$/],
  ['bin', { id: 'binary' }, true, i => ({ hex: hex(i, 2) }), /^binary$/],
  ['dt', { id: 'date32' }, true, i => i - 1000, /^date32\[day\]$/],
  ['ts', { id: 'timestamp', unit: 'us', tz: 'UTC' }, true, i => i * 1000003, /^timestamp\[us, tz=UTC\]$/],
  ['tns', { id: 'timestamp', unit: 'ns' }, true, i => -i * 999, /^timestamp\[ns\]$/],
  ['t32', { id: 'time32', unit: 'ms' }, true, i => i * 40000, /^time32\[ms\]$/],
  ['dec', { id: 'decimal', precision: 10, scale: 2 }, true, i => String(i * 101 - 5000), /^decimal128\(10, 2\)$/],
  ['dec30', { id: 'decimal', precision: 30, scale: 4 }, true, i => `${i}00000000000000000${i % 10}`, /^decimal128\(30, 4\)$/],
  ['u', { id: 'uuid' }, true, i => ({ hex: hex(i, 4).repeat(4) }), /^uuid$/],
  ['fx', { id: 'fixed', width: 3 }, true, i => ({ hex: hex(i, 3) }), /^fixed_size_binary\[3\]$/],
  ['js', { id: 'json' }, true, i => `{"k":${i % 5}}`, /^json$/],
  ['f16', { id: 'float16' }, true, i => (i % 64) / 4, /^halffloat$/],
  ['iv', { id: 'interval' }, true, i => [i, -i, i * 1000], /^struct<months: int32( not null)?, days: int32( not null)?, nanoseconds: int64( not null)?>$/],
  ['l', { id: 'list', item: { name: 'element', type: { id: 'int32' } } }, true,
    i => (i % 5 === 0 ? [] : [i, null, -i]), /^list<\w+: int32>$/],
  ['st', { id: 'struct', fields: [{ name: 'a', type: { id: 'int32' } }, { name: 'b', type: { id: 'utf8' } }] }, true,
    i => (i % 9 ? { a: i, b: `b${i % 4}` } : null), /^struct<a: int32, b: string>$/],
  ['m', { id: 'map', key: { id: 'utf8' }, value: { name: 'value', type: { id: 'int64' } } }, true,
    i => [[`k${i % 3}`, i]], /^map<string, int64>$/],
];
const schema = cols.map(([name, type, nullable]) => ({ name, type, nullable }));
const rows = Array.from({ length: N }, (_, i) => cols.map(c => c[3](i)));

// Statistics 1 max and 2 min (deprecated, no sort order: old readers compare them signed) are
// written, as Arrow C++ and parquet-mr write them, for the leaves whose type-defined order is
// signed (BOOLEAN, INT32, INT64, FLOAT, DOUBLE but unsigned integers), with the bytes of
// max_value/min_value; unsigned integers and (fixed-length) byte arrays get none. Both readers
// are asked: our footer dump (hex of fields 1/2 and 5/6) and DuckDB's parquet_metadata()
// (stats_min/stats_max against stats_min_value/stats_max_value).
const LEGACY = new Set(['id', 'i8', 'f64', 'dt', 'ts', 'tns', 't32', 'dec', 'iv.months', 'iv.days',
  'iv.nanoseconds', 'l.list.element', 'st.a', 'm.key_value.value']);
const NO_LEGACY = new Set(['u32', 's', 'bin', 'dec30', 'u', 'fx', 'js', 'f16', 'st.b', 'm.key_value.key']);
function checkLegacyStats(d, m) {
  const cols = d.row_groups.flatMap(rg => rg.columns);
  const seen = new Set();
  cols.forEach((c, k) => {
    const e = m.columns[k], st = c.statistics, at = `column ${c.path}`;
    seen.add(c.path);
    assert.ok(LEGACY.has(c.path) || NO_LEGACY.has(c.path), `${at} is classified`);
    if (LEGACY.has(c.path) && st.min_value !== null) {
      assert.equal(st.min, st.min_value, `${at}: Statistics.min = min_value`);
      assert.equal(st.max, st.max_value, `${at}: Statistics.max = max_value`);
      assert.equal(String(e.stats_min), String(e.stats_min_value), `${at}: DuckDB stats_min`);
      assert.equal(String(e.stats_max), String(e.stats_max_value), `${at}: DuckDB stats_max`);
    } else if (NO_LEGACY.has(c.path)) {
      assert.equal(st.min, null, `${at}: no Statistics.min`);
      assert.equal(st.max, null, `${at}: no Statistics.max`);
      assert.equal(e.stats_min, null, `${at}: DuckDB stats_min null`);
      assert.equal(e.stats_max, null, `${at}: DuckDB stats_max null`);
    }
  });
  for (const p of [...LEGACY, ...NO_LEGACY]) assert.ok(seen.has(p), `column ${p} was checked`);
}

const dir = mkdtempSync(join(tmpdir(), 'footer-writer-'));
let passed = 0;
try {
  const duck = await openDuck({ threads: 2 });
  for (const codec of ['none', 'snappy', 'gzip', 'zstd']) {
    for (const [page_version, dictionary] of [[1, true], [2, false]]) {
      const base = join(dir, `${codec}_v${page_version}_${dictionary}`);
      writeFileSync(base + '.json', JSON.stringify({ schema, rows, options: {
        codec, page_version, dictionary, page_size: 2048, row_group_rows: 700 } }));
      const out = execFileSync(join(tools, 'pq_write'), [base + '.json', base + '.parquet'], { encoding: 'utf8' });
      assert.match(out, new RegExp(`rows ${N}`), out);
      const file = base + '.parquet';
      const d = dumpFooter(file, '--page-index', '--arrow', '--pages');
      assert.equal(d.num_rows, N);
      assert.equal(d.row_groups.length, 3);
      const meta = await pqMeta(file, { duck });
      checkAgainstDuck(d, meta);
      checkLegacyStats(d, meta);
      checkPageIndex(d, await readPageIndexChecked(file));
      assert.ok(checkPages(d, file) > 20);
      const pages = d.row_groups[0].columns[0].page_index.page_locations.length;
      assert.ok(pages > 1, `id has ${pages} pages in row group 0`);
      const w = await wasmRead(file, { schemaOnly: true });
      assert.equal(w.num_rows, N);
      assert.deepEqual(d.arrow_schema.map(f => f.name), cols.map(c => c[0]));
      d.arrow_schema.forEach((f, k) => {
        assert.match(f.type, cols[k][4], `column ${f.name}`);
        assert.equal(f.nullable, cols[k][2], `column ${f.name} nullable`);
      });
      const codecName = { none: 'UNCOMPRESSED', snappy: 'SNAPPY', gzip: 'GZIP', zstd: 'ZSTD' }[codec];
      assert.ok(d.row_groups.every(rg => rg.columns.every(c => c.codec === codecName)));
      passed++;
    }
  }
  duck.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${passed} passed, 0 failed`);
