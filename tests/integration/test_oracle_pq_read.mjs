// Proves tests/oracle/pq-read.mjs on DuckDB-written files whose rows are known by construction:
// one file, a directory of two files, --sql and --order-by, and the CLI.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDuck } from '../oracle/duck.mjs';
import { pqRead } from '../oracle/pq-read.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'oracle-pqread-'));
try {
  const duck = await openDuck();
  mkdirSync(join(dir, 'd', 'sub'), { recursive: true });
  await duck.run(`COPY (SELECT * FROM (VALUES (1, 'a', 1.5::DOUBLE), (2, NULL, 'NaN'::DOUBLE),
                  (3, 'c', -0.0::DOUBLE)) v(id, s, x)) TO '${join(dir, 'one.parquet')}' (FORMAT parquet)`);
  await duck.run(`COPY (SELECT 10 AS id, 'ten' AS s) TO '${join(dir, 'd', 'a.parquet')}' (FORMAT parquet)`);
  await duck.run(`COPY (SELECT 20 AS id, 'twenty' AS s) TO '${join(dir, 'd', 'sub', 'b.parquet')}' (FORMAT parquet)`);
  duck.close();

  const rows = await pqRead(join(dir, 'one.parquet'));
  assert.deepEqual(rows, [
    { id: '1', s: 'a', x: 1.5 },
    { id: '2', s: null, x: 'NaN' },
    { id: '3', s: 'c', x: '-0' },
  ]);
  assert.deepEqual(await pqRead(join(dir, 'one.parquet'), { orderBy: 'id DESC' }).then(r => r.map(x => x.id)), ['3', '2', '1']);
  assert.deepEqual(await pqRead(join(dir, 'd'), { orderBy: 'id' }), [{ id: '10', s: 'ten' }, { id: '20', s: 'twenty' }]);
  assert.deepEqual(await pqRead(join(dir, 'd'), { sql: 'SELECT sum(id) AS t FROM t' }), [{ t: '30' }]);

  const out = execFileSync('node', [join(here, '..', 'oracle', 'pq-read.mjs'), join(dir, 'one.parquet'),
    '--sql', 'SELECT id FROM t WHERE s IS NULL'], { encoding: 'utf8' });
  assert.equal(out, '{"id":"2"}\n');
  let failed = false;
  try {
    execFileSync('node', [join(here, '..', 'oracle', 'pq-read.mjs'), join(dir, 'missing.parquet')], { stdio: 'pipe' });
  } catch (e) {
    failed = e.status === 1;
  }
  assert.ok(failed, 'a missing file must exit 1');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('1 passed, 0 failed');
