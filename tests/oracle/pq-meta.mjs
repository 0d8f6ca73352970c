// pq-meta.mjs: a Parquet file's metadata as DuckDB reports it, as JSON.
//
//   import { pqMeta } from '../oracle/pq-meta.mjs';
//   const m = await pqMeta('/path/file.parquet');       // or pqMeta(path, {duck}) to reuse one
//   m.file       parquet_file_metadata(): created_by, num_rows, num_row_groups, format_version...
//   m.schema     parquet_schema() rows in file order, each with `path` (dotted, root excluded)
//   m.columns    parquet_metadata() rows ordered by row group and column, with `path` dotted
//                (path_in_schema joins components with ', ') and `encodings` as an array
//   m.kv         parquet_kv_metadata(): [{key, value (UTF-8 text, or null), value_hex}]
//   m.row_count  count(*) as scanned
//
// CLI: node tests/oracle/pq-meta.mjs FILE  prints that object (exit 1 when DuckDB cannot read it).
// Statistics come as DuckDB renders them: stats_min_value/stats_max_value are text in the
// column's logical type (e.g. '2047', 'x0'), stats_null_count a number.
import { openDuck, sqlString } from './duck.mjs';
import { pathToFileURL } from 'node:url';

const td = new TextDecoder('utf-8', { fatal: true });

function bytesOf(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' && v.startsWith('0x')) return Buffer.from(v.slice(2), 'hex');
  return Buffer.from(String(v), 'utf8');
}

// Rebuilds dotted paths from the depth-first schema list and num_children.
function schemaPaths(rows) {
  const stack = [];
  return rows.map((s, i) => {
    while (stack.length && stack[stack.length - 1].left === 0) stack.pop();
    const parents = stack.map(x => x.name);
    if (stack.length) stack[stack.length - 1].left--;
    const path = i === 0 ? '' : [...parents.slice(1), s.name].join('.');
    const n = s.num_children == null ? 0 : Number(s.num_children);
    if (n > 0) stack.push({ name: s.name, left: n });
    return { ...s, path };
  });
}

export async function pqMeta(file, { duck } = {}) {
  const own = !duck;
  if (own) duck = await openDuck();
  try {
    const F = sqlString(file);
    const [fileRow] = await duck.all(`SELECT * FROM parquet_file_metadata(${F})`);
    delete fileRow.file_name;
    const schema = schemaPaths((await duck.all(`SELECT * FROM parquet_schema(${F})`))
      .map(({ file_name, ...r }) => r));
    const columns = (await duck.all(
      `SELECT * FROM parquet_metadata(${F}) ORDER BY row_group_id, column_id`))
      .map(({ file_name, ...r }) => ({
        ...r,
        path: String(r.path_in_schema).split(', ').join('.'),
        encodings: r.encodings ? String(r.encodings).split(', ').filter(Boolean) : [],
      }));
    const kv = (await duck.all(`SELECT key, value FROM parquet_kv_metadata(${F})`)).map(r => {
      const k = bytesOf(r.key), v = bytesOf(r.value);
      let text = null;
      if (v) { try { text = td.decode(v); } catch { text = null; } }
      return { key: k.toString('utf8'), value: text, value_hex: v ? v.toString('hex') : null };
    });
    const [cnt] = await duck.all(`SELECT count(*) AS n FROM read_parquet(${F})`);
    return { file: fileRow, schema, columns, kv, row_count: cnt.n };
  } finally {
    if (own) duck.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file || process.argv.length > 3) {
    console.error('usage: pq-meta.mjs FILE');
    process.exit(2);
  }
  try {
    process.stdout.write(JSON.stringify(await pqMeta(file), null, 1) + '\n');
  } catch (e) {
    console.error(`pq-meta: ${file}: ${e.message}`);
    process.exit(1);
  }
}
