// The footer reader through tests/tools/pq_footer_dump, against DuckDB's own metadata functions
// (tests/oracle/pq-meta.mjs), on files DuckDB writes now with each codec, row group sizes that
// make several row groups, dictionary and plain columns, nested columns and key/value metadata;
// plus the page index of an arrow-rs file against page-index.mjs (own decoder and hyparquet).
// Everything compared comes from those readers; nothing from the C code is taken as truth.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuck } from '../oracle/duck.mjs';
import { pqMeta } from '../oracle/pq-meta.mjs';
import { readPageIndexChecked } from '../oracle/page-index.mjs';

const tools = process.env.S3L_TOOLS_DIR;
assert.ok(tools, 'S3L_TOOLS_DIR must name the built test tools');
const dump = (file, ...args) =>
  JSON.parse(execFileSync(join(tools, 'pq_footer_dump'), [file, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 }));

function compare(file, d, m) {
  assert.equal(d.num_rows, m.file.num_rows, file);
  assert.equal(d.created_by, m.file.created_by);
  assert.equal(d.metadata_len, m.file.footer_size);
  assert.equal(d.row_groups.length, m.file.num_row_groups);
  assert.deepEqual(d.schema.map(s => [s.name, s.type, s.repetition, s.converted_type, s.num_children]),
    m.schema.map(s => [s.name, s.type, s.repetition_type, s.converted_type, s.num_children ?? 0]));
  const cols = d.row_groups.flatMap((rg, g) => rg.columns.map(c => ({ g, rows: rg.num_rows, ...c })));
  assert.equal(cols.length, m.columns.length);
  cols.forEach((c, k) => {
    const e = m.columns[k];
    assert.equal(c.g, e.row_group_id);
    assert.equal(c.rows, e.row_group_num_rows);
    assert.equal(c.path, e.path);
    assert.equal(c.type, e.type);
    assert.equal(c.codec, e.compression);
    assert.deepEqual(c.encodings, e.encodings);
    assert.equal(c.num_values, e.num_values);
    assert.equal(c.total_compressed_size, e.total_compressed_size);
    assert.equal(c.total_uncompressed_size, e.total_uncompressed_size);
    assert.equal(c.data_page_offset, e.data_page_offset);
    assert.equal(c.dictionary_page_offset, e.dictionary_page_offset);
    assert.equal(c.statistics.null_count, e.stats_null_count);
    if (e.type === 'BYTE_ARRAY' && e.stats_min_value !== null) {
      assert.equal(Buffer.from(c.statistics.min_value, 'hex').toString('utf8'), e.stats_min_value);
      assert.equal(Buffer.from(c.statistics.max_value, 'hex').toString('utf8'), e.stats_max_value);
    }
    if (e.type === 'INT64' && e.stats_min_value !== null && /^-?\d+$/.test(String(e.stats_min_value))) {
      assert.equal(Buffer.from(c.statistics.min_value, 'hex').readBigInt64LE(0).toString(), String(e.stats_min_value));
      assert.equal(Buffer.from(c.statistics.max_value, 'hex').readBigInt64LE(0).toString(), String(e.stats_max_value));
    }
  });
  assert.deepEqual(d.key_value_metadata.map(k => [k.key, k.value_hex]), m.kv.map(k => [k.key, k.value_hex]));
}

const dir = mkdtempSync(join(tmpdir(), 'footer-dump-'));
let files = 0;
try {
  const duck = await openDuck({ threads: 2 });
  const src = `SELECT range::BIGINT AS id, 'name-' || (range % 50) AS low_card,
      md5(range::VARCHAR) AS high_card, CASE WHEN range % 3 = 0 THEN NULL ELSE range / 7 END AS q,
      [range, range + 1] AS l, {'a': range % 2 = 0, 'b': range::VARCHAR} AS s
    FROM range(20000)`;
  for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd']) {
    for (const rg of [4096, 100000]) {
      const f = join(dir, `${codec}_${rg}.parquet`);
      await duck.run(`COPY (${src}) TO '${f}' (FORMAT parquet, COMPRESSION ${codec},
                      ROW_GROUP_SIZE ${rg}, KV_METADATA {codec: '${codec}', rg: '${rg}'})`);
      compare(f, dump(f), await pqMeta(f, { duck }));
      files++;
    }
  }
  duck.close();

  const arrow = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  const t = new arrow.Table({
    x: arrow.vectorFromArray(Float64Array.from({ length: 3000 }, (_, i) => Math.sin(i))),
    s: arrow.vectorFromArray(Array.from({ length: 3000 }, (_, i) => (i % 11 ? `s${i % 97}` : null)), new arrow.Utf8()),
  });
  const props = new pw.WriterPropertiesBuilder().setStatisticsEnabled(pw.EnabledStatistics.Page)
    .setDataPageSizeLimit(1024).setWriteBatchSize(128).setMaxRowGroupSize(1000).build();
  const f = join(dir, 'arrowrs.parquet');
  writeFileSync(f, pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(t, 'stream')), props));
  const d = dump(f, '--page-index');
  const pi = await readPageIndexChecked(f);
  const mine = d.row_groups.flatMap(rg => rg.columns.map(c => ({
    path: c.path,
    column_index: {
      null_pages: c.page_index.column_index.null_pages,
      min_values: c.page_index.column_index.min_values,
      max_values: c.page_index.column_index.max_values,
      boundary_order: ['UNORDERED', 'ASCENDING', 'DESCENDING'][c.page_index.column_index.boundary_order],
      null_counts: c.page_index.column_index.null_counts,
    },
    offset_index: { page_locations: c.page_index.page_locations },
  })));
  assert.deepEqual(mine, pi.map(({ path, column_index, offset_index }) => ({ path, column_index, offset_index })));
  assert.ok(pi.length === 6 && pi.every(c => c.offset_index.page_locations.length >= 1));
  files++;

  // A file that is not Parquet: exit 1 with the file named.
  const bad = join(dir, 'bad.parquet');
  writeFileSync(bad, 'not parquet at all, just text');
  let msg = '';
  try { execFileSync(join(tools, 'pq_footer_dump'), [bad], { stdio: 'pipe' }); } catch (e) { msg = String(e.stderr); assert.equal(e.status, 1); }
  assert.match(msg, /bad\.parquet: not a Parquet file: bad magic at offset 25/);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${files} passed, 0 failed`);
