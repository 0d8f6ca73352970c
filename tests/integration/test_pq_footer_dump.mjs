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
import { dumpFooter, checkAgainstDuck, checkPageIndex, checkPages } from '../oracle/footer-check.mjs';

const tools = process.env.S3L_TOOLS_DIR;
const dump = dumpFooter;
const compare = (file, d, m) => checkAgainstDuck(d, m);

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
      assert.ok(checkPages(dump(f, '--pages'), f) >= 6);
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
  checkPageIndex(d, pi);
  // The same through a file:// store (stat + ranged GETs) gives the same footer and page index.
  assert.deepEqual(dump(`file://${f}`, '--page-index'), d);
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
