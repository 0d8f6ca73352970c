// Proves tests/oracle/duck.mjs: values known by construction (written in the SQL below) come
// back through plain() and canon() in the documented forms, extension loading is off, and the
// session is in UTC.
import assert from 'node:assert/strict';
import { openDuck, plain, canon, sqlString } from '../oracle/duck.mjs';

const duck = await openDuck();
try {
  const [r] = await duck.all(`SELECT 42::TINYINT a, 9007199254740993::BIGINT b,
    (-9223372036854775808)::BIGINT c, 'NaN'::DOUBLE d, -(0.0::DOUBLE) e, '\\x00\\xff'::BLOB f,
    [1, NULL]::INTEGER[] g, {'x': 'y'} h, MAP {'k': 2} i, 1.25::DECIMAL(5,2) j,
    TIMESTAMPTZ '2020-01-01 12:00:00+02' k, 'Infinity'::DOUBLE l, NULL::INTEGER m`);
  assert.equal(r.a, 42);
  assert.equal(r.b, '9007199254740993');
  assert.equal(r.c, '-9223372036854775808');
  assert.equal(r.d, 'NaN');
  assert.equal(r.e, '-0');
  assert.equal(r.f, '0x00ff');
  assert.deepEqual(r.g, [1, null]);
  assert.deepEqual(r.h, { x: 'y' });
  assert.deepEqual(r.i, [{ key: 'k', value: 2 }]);
  assert.equal(r.j, '1.25');
  assert.equal(r.k, '2020-01-01 10:00:00+00');
  assert.equal(r.l, 'Infinity');
  assert.equal(r.m, null);
  const [c] = await duck.all(`SELECT 5::INTEGER a, 5::BIGINT b, 2.5::DOUBLE x`, { canon: true });
  assert.equal(c.a, '5');
  assert.equal(c.b, '5');
  assert.equal(c.x, 2.5);
  assert.equal(plain(5n), 5);
  assert.equal(canon(5n), '5');
  assert.equal(sqlString("it's"), "'it''s'");
  const [s] = await duck.all(`SELECT current_setting('autoload_known_extensions') AS al,
    current_setting('autoinstall_known_extensions') AS ai, current_setting('TimeZone') AS tz`);
  assert.equal(s.al, false);
  assert.equal(s.ai, false);
  assert.equal(s.tz, 'UTC');
  const [cols, rows] = await duck.table(`SELECT 1 AS one, 'a' AS s`);
  assert.deepEqual(cols, ['one', 's']);
  assert.deepEqual(rows, [['1', 'a']]);
} finally {
  duck.close();
}
console.log('1 passed, 0 failed');
