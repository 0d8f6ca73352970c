// pq-read.mjs: the rows of a Parquet file, or of every *.parquet under a directory, read by
// DuckDB, as canonical JSON values (duck.mjs canon(): integers as decimal strings, blobs as
// 0x-hex, temporal and decimal values in DuckDB's text form, NaN/±Infinity/-0 as strings).
//
//   import { pqRead } from '../oracle/pq-read.mjs';
//   const rows = await pqRead(path);                           // all rows, file order
//   const rows = await pqRead(path, { sql: 'SELECT count(*) AS n FROM t' });
//   const rows = await pqRead(path, { orderBy: 'id' });
//
// The data is visible to `sql` as the view t. A directory is read as the glob DIR/**/*.parquet
// (union_by_name, so files written with evolving schemas read together). One thread keeps the
// file order of rows when no ORDER BY is given.
// CLI: node tests/oracle/pq-read.mjs FILE|DIR [--sql SQL] [--order-by EXPR]
//      prints one JSON object per line; exit 1 when DuckDB cannot read the input.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDuck, sqlString } from './duck.mjs';

export function sourceSql(path) {
  const dir = statSync(path).isDirectory();
  const target = dir ? join(path, '**', '*.parquet') : path;
  return `read_parquet(${sqlString(target)}${dir ? ', union_by_name = true' : ''})`;
}

export async function pqRead(path, { sql, orderBy, duck } = {}) {
  const own = !duck;
  if (own) duck = await openDuck({ threads: 1 });
  try {
    await duck.run(`CREATE OR REPLACE TEMP VIEW t AS SELECT * FROM ${sourceSql(path)}`);
    const q = sql || `SELECT * FROM t${orderBy ? ` ORDER BY ${orderBy}` : ''}`;
    return await duck.all(q, { canon: true });
  } finally {
    if (own) duck.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  let path = null, sql, orderBy;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--sql') sql = args[++i];
    else if (args[i] === '--order-by') orderBy = args[++i];
    else if (path === null) path = args[i];
    else path = undefined;
  }
  if (!path) {
    console.error('usage: pq-read.mjs FILE|DIR [--sql SQL] [--order-by EXPR]');
    process.exit(2);
  }
  process.stdout.on('error', e => { if (e.code === 'EPIPE') process.exit(0); throw e; });
  try {
    for (const r of await pqRead(path, { sql, orderBy })) process.stdout.write(JSON.stringify(r) + '\n');
  } catch (e) {
    console.error(`pq-read: ${path}: ${e.message}`);
    process.exit(1);
  }
}
