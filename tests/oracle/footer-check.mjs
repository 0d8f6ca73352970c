// footer-check.mjs: compares the JSON of tests/tools/pq_footer_dump (our footer reader) with
// what DuckDB (pq-meta.mjs) and page-index.mjs (own decoder + hyparquet) report for the same
// file. Used by the footer reader's integration tests; throws an AssertionError on the first
// difference, naming the column.
//
//   import { dumpFooter, checkAgainstDuck, checkPageIndex } from '../oracle/footer-check.mjs';
//   const d = dumpFooter(file, '--page-index', '--arrow');   // needs S3L_TOOLS_DIR
//   checkAgainstDuck(d, await pqMeta(file));
//   checkPageIndex(d, await readPageIndexChecked(file));
//   checkPages(dumpFooter(file, '--pages', '--page-index'), file);
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { decodeStructAt } from './page-index.mjs';

export function dumpFooter(file, ...args) {
  const tools = process.env.S3L_TOOLS_DIR;
  assert.ok(tools, 'S3L_TOOLS_DIR must name the built test tools');
  return JSON.parse(execFileSync(join(tools, 'pq_footer_dump'), [file, ...args],
    { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

export function checkAgainstDuck(d, m) {
  assert.equal(d.validation, null, 's3l_pq_footer_validate');
  assert.equal(d.num_rows, m.file.num_rows);
  assert.equal(d.created_by, m.file.created_by);
  assert.equal(d.metadata_len, m.file.footer_size);
  assert.equal(d.row_groups.length, m.file.num_row_groups);
  assert.deepEqual(d.schema.map(s => [s.name, s.type, s.repetition, s.converted_type, s.num_children]),
    m.schema.map(s => [s.name, s.type, s.repetition_type, s.converted_type, s.num_children ?? 0]));
  const cols = d.row_groups.flatMap((rg, g) => rg.columns.map(c => ({ g, rows: rg.num_rows, ...c })));
  assert.equal(cols.length, m.columns.length);
  cols.forEach((c, k) => {
    const e = m.columns[k], at = `row group ${c.g} column ${c.path}`;
    assert.equal(c.g, e.row_group_id, at);
    assert.equal(c.rows, e.row_group_num_rows, at);
    assert.equal(c.path, e.path, at);
    assert.equal(c.type, e.type, at);
    assert.equal(c.codec, e.compression, at);
    assert.deepEqual(c.encodings, e.encodings, at);
    assert.equal(c.num_values, e.num_values, at);
    assert.equal(c.total_compressed_size, e.total_compressed_size, at);
    assert.equal(c.total_uncompressed_size, e.total_uncompressed_size, at);
    assert.equal(c.data_page_offset, e.data_page_offset, at);
    assert.equal(c.dictionary_page_offset, e.dictionary_page_offset, at);
    if (e.stats_null_count !== null) assert.equal(c.statistics.null_count, e.stats_null_count, at);
    // s3l_pq_value_format renders statistics the way DuckDB does, where DuckDB renders them.
    if (e.stats_min_value !== null) assert.equal(c.statistics.min_text, String(e.stats_min_value), `${at} min`);
    if (e.stats_max_value !== null) assert.equal(c.statistics.max_text, String(e.stats_max_value), `${at} max`);
  });
  assert.deepEqual(d.key_value_metadata.map(k => [k.key, k.value_hex]), m.kv.map(k => [k.key, k.value_hex]));
  return cols.length;
}

export function checkPageIndex(d, pi) {
  const mine = d.row_groups.flatMap(rg => rg.columns.map(c => ({
    path: c.path,
    column_index: c.page_index.column_index ? {
      null_pages: c.page_index.column_index.null_pages,
      min_values: c.page_index.column_index.min_values,
      max_values: c.page_index.column_index.max_values,
      boundary_order: ['UNORDERED', 'ASCENDING', 'DESCENDING'][c.page_index.column_index.boundary_order],
      null_counts: c.page_index.column_index.null_counts,
    } : null,
    offset_index: c.page_index.page_locations ? { page_locations: c.page_index.page_locations } : null,
  })));
  assert.deepEqual(mine, pi.map(({ path, column_index, offset_index }) => ({ path, column_index, offset_index })));
  return mine.length;
}

// The page headers our reader listed (pq_footer_dump --pages) against page-index.mjs's own
// Thrift decoder reading the file at the same offsets (parquet.thrift PageHeader: 1 type,
// 2 uncompressed_page_size, 3 compressed_page_size; 5/7/8 the type's header, field 1 num_values,
// 2 (v1, dictionary) or 4 (v2) encoding); pages must tile each chunk, and when the file has an
// OffsetIndex its data pages must be where it says.
export function checkPages(d, file) {
  const buf = readFileSync(file);
  let n = 0;
  for (const rg of d.row_groups) {
    for (const c of rg.columns) {
      assert.ok(Array.isArray(c.pages), `${c.path}: ${JSON.stringify(c.pages)}`);
      let at = c.dictionary_page_offset ?? c.data_page_offset;
      let values = 0;
      for (const p of c.pages) {
        assert.equal(p.offset, at, `${c.path}: pages must tile the chunk`);
        const { value: h, end } = decodeStructAt(buf, p.offset);
        const sub = h.get(5) || h.get(7) || h.get(8);
        assert.deepEqual([p.type, p.uncompressed_page_size, p.compressed_page_size, p.header_len,
          p.num_values, p.encoding], [h.get(1), h.get(2), h.get(3), end - p.offset, sub.get(1),
          h.has(8) ? sub.get(4) : sub.get(2)], `${c.path} page at ${p.offset}`);
        if (p.type !== 2) values += p.num_values;
        at += p.header_len + p.compressed_page_size;
        n++;
      }
      assert.equal(at, (c.dictionary_page_offset ?? c.data_page_offset) + c.total_compressed_size);
      assert.equal(values, c.num_values, `${c.path}: values in data pages`);
      if (c.page_index && c.page_index.page_locations) {
        const data = c.pages.filter(p => p.type !== 2);
        assert.deepEqual(data.map(p => [p.offset, p.header_len + p.compressed_page_size]),
          c.page_index.page_locations.map(l => [l.offset, l.compressed_page_size]), `${c.path} OffsetIndex`);
      }
    }
  }
  return n;
}
