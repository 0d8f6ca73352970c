// Proves tests/oracle/pq-meta.mjs on a DuckDB-written file whose layout is fixed by the COPY
// options: 3000 rows in row groups of 1000 (DuckDB rounds to its vector size of 2048), zstd,
// two columns, key/value metadata, dotted paths of nested columns.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuck } from '../oracle/duck.mjs';
import { pqMeta } from '../oracle/pq-meta.mjs';

const dir = mkdtempSync(join(tmpdir(), 'oracle-pqmeta-'));
try {
  const duck = await openDuck();
  const f = join(dir, 'm.parquet');
  await duck.run(`COPY (SELECT range::BIGINT AS id, {'a': range::INTEGER} AS s FROM range(3000))
                  TO '${f}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1000,
                  KV_METADATA {owner: 'test'})`);
  const m = await pqMeta(f, { duck });
  duck.close();
  assert.equal(m.file.num_rows, 3000);
  assert.equal(m.row_count, 3000);
  assert.ok(m.file.created_by.startsWith('DuckDB'));
  assert.deepEqual(m.schema.map(s => s.path), ['', 'id', 's', 's.a']);
  assert.equal(m.schema[1].type, 'INT64');
  assert.equal(m.schema[2].num_children, 1);
  const rg0 = m.columns.filter(c => c.row_group_id === 0);
  assert.deepEqual(rg0.map(c => c.path), ['id', 's.a']);
  assert.ok(m.columns.every(c => c.compression === 'ZSTD'));
  assert.equal(m.columns.reduce((n, c) => n + (c.path === 'id' ? c.num_values : 0), 0), 3000);
  assert.equal(rg0[0].stats_min_value, '0');
  assert.ok(Array.isArray(rg0[0].encodings) && rg0[0].encodings.length >= 1);
  assert.deepEqual(m.kv, [{ key: 'owner', value: 'test', value_hex: '74657374' }]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('1 passed, 0 failed');
