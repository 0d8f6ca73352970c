// Proves tests/oracle/wasm-read.mjs on a DuckDB-written file with values known by construction:
// a nanosecond timestamp (2020-01-01T00:00:00.123456789 = 1577836800123456789 ns; 1577836800 is
// 18262 days * 86400 s), an interval-shaped struct, 64-bit extremes, a decimal, nested values.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuck } from '../oracle/duck.mjs';
import { wasmRead } from '../oracle/wasm-read.mjs';

const dir = mkdtempSync(join(tmpdir(), 'oracle-wasm-'));
try {
  const duck = await openDuck();
  const f = join(dir, 'w.parquet');
  await duck.run(`COPY (SELECT * FROM (VALUES
      (TIMESTAMP_NS '2020-01-01 00:00:00.123456789',
       {'months': 14::INTEGER, 'days': (-3)::INTEGER, 'nanoseconds': 86400000000001::BIGINT},
       9223372036854775807::BIGINT, (-12.345)::DECIMAL(10,3), [1, NULL, 3], 'é', DATE '1970-01-02'),
      (NULL, NULL, (-9223372036854775808)::BIGINT, NULL, [], NULL, NULL)
    ) v(ts, iv, big, dec, l, s, d)) TO '${f}' (FORMAT parquet)`);
  duck.close();
  const r = await wasmRead(f);
  assert.equal(r.num_rows, 2);
  assert.deepEqual(r.schema.map(x => x.name), ['ts', 'iv', 'big', 'dec', 'l', 's', 'd']);
  assert.equal(r.schema[0].type, 'Timestamp<NANOSECOND>');
  assert.deepEqual(r.rows[0], {
    ts: '1577836800123456789',
    iv: { months: 14, days: -3, nanoseconds: '86400000000001' },
    big: '9223372036854775807', dec: '-12.345', l: [1, null, 3], s: 'é', d: '1',
  });
  assert.deepEqual(r.rows[1], { ts: null, iv: null, big: '-9223372036854775808', dec: null, l: [], s: null, d: null });
  const only = await wasmRead(f, { schemaOnly: true });
  assert.equal(only.rows, undefined);
  assert.equal(only.num_rows, 2);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log('1 passed, 0 failed');
