// Proves tests/oracle/page-index.mjs: its own Thrift decoder and hyparquet agree on the page
// index of a file written by arrow-rs (parquet-wasm) with 100-row pages of known values, and the
// decoded bounds are the values put in, page by page.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPageIndexChecked, decodePlain, decodeStruct } from '../oracle/page-index.mjs';

const arrow = await import('apache-arrow');
const pw = await import('parquet-wasm');
const dir = mkdtempSync(join(tmpdir(), 'oracle-pageindex-'));
try {
  // id = 0..999 ascending; v = 'k' + id for even pages, null on odd ids of page 3.
  const ids = BigInt64Array.from({ length: 1000 }, (_, i) => BigInt(i));
  const vs = Array.from({ length: 1000 }, (_, i) => (i >= 300 && i < 400 && i % 2) ? null : 'k' + String(i).padStart(3, '0'));
  const t = new arrow.Table({ id: arrow.vectorFromArray(ids), v: arrow.vectorFromArray(vs, new arrow.Utf8()) });
  const props = new pw.WriterPropertiesBuilder().setDictionaryEnabled(false)
    .setStatisticsEnabled(pw.EnabledStatistics.Page).setDataPageSizeLimit(512)
    .setWriteBatchSize(100).setCompression(pw.Compression.UNCOMPRESSED).build();
  const f = join(dir, 'pi.parquet');
  writeFileSync(f, pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(t, 'stream')), props));

  const pi = await readPageIndexChecked(f);
  assert.equal(pi.length, 2);
  const [id, v] = pi;
  assert.equal(id.path, 'id');
  assert.equal(id.physical_type, 'INT64');
  const locs = id.offset_index.page_locations;
  assert.ok(locs.length >= 2);
  assert.equal(locs[0].first_row_index, 0);
  // Page k of id covers rows [first_row_index, next first_row_index): min and max are those ids.
  locs.forEach((p, k) => {
    const end = k + 1 < locs.length ? locs[k + 1].first_row_index : 1000;
    assert.equal(decodePlain(id.column_index.min_values[k], 'INT64'), String(p.first_row_index));
    assert.equal(decodePlain(id.column_index.max_values[k], 'INT64'), String(end - 1));
    assert.equal(id.column_index.null_pages[k], false);
    assert.equal(id.column_index.null_counts[k], 0);
    if (k) assert.ok(p.offset > locs[k - 1].offset);
  });
  assert.equal(id.column_index.boundary_order, 'ASCENDING');
  // v: 50 nulls in rows 300..399, counted on the pages that hold them.
  const vl = v.offset_index.page_locations;
  const nulls = v.column_index.null_counts.reduce((a, b) => a + b, 0);
  assert.equal(nulls, 50);
  vl.forEach((p, k) => {
    const first = p.first_row_index;
    assert.equal(decodePlain(v.column_index.min_values[k], 'BYTE_ARRAY'), 'k' + String(first).padStart(3, '0'));
  });
  // The generic decoder on a hand encoding: struct {1: i32 = 2; 2: list<bool> [true, false]}.
  const s = decodeStruct(new Uint8Array([0x15, 0x04, 0x19, 0x21, 0x01, 0x02, 0x00]));
  assert.equal(s.get(1), 2);
  assert.deepEqual(s.get(2), [true, false]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('1 passed, 0 failed');
