// Proves tests/oracle/except-all.mjs: equal multisets in any order are equal, a duplicate or a
// changed value is found on the right side, and a DuckDB-written Parquet file equals its source.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuck } from '../oracle/duck.mjs';
import { exceptAll } from '../oracle/except-all.mjs';

const dir = mkdtempSync(join(tmpdir(), 'oracle-except-'));
try {
  const duck = await openDuck();
  const A = `SELECT * FROM (VALUES (1, 'a'), (1, 'a'), (2, 'b')) t(x, y)`;
  let r = await exceptAll(A, `SELECT * FROM (VALUES (2, 'b'), (1, 'a'), (1, 'a')) t(x, y)`, { duck });
  assert.equal(r.equal, true);
  assert.equal(r.count_a, 3);
  r = await exceptAll(A, `SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (2, 'c')) t(x, y)`, { duck });
  assert.equal(r.equal, false);
  assert.equal(r.n_only_in_a, 1);
  assert.deepEqual(r.only_in_a, [{ x: '1', y: 'a' }]);
  assert.deepEqual(r.only_in_b, [{ x: '2', y: 'c' }]);
  const f = join(dir, 'src.parquet');
  const src = `SELECT range AS id, range % 7 AS k, 'v' || range AS s FROM range(10000)`;
  await duck.run(`COPY (${src}) TO '${f}' (FORMAT parquet)`);
  r = await exceptAll(src, `SELECT * FROM read_parquet('${f}')`, { duck });
  assert.equal(r.equal, true);
  assert.equal(r.count_b, 10000);
  r = await exceptAll(src, `SELECT * FROM read_parquet('${f}') WHERE id <> 77`, { duck, limit: 5 });
  assert.equal(r.equal, false);
  assert.deepEqual(r.only_in_a, [{ id: '77', k: '0', s: 'v77' }]);
  duck.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('1 passed, 0 failed');
