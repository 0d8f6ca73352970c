// duck.mjs: DuckDB (npm @duckdb/node-api) as an independent reader for tests.
//
//   import { openDuck, plain, canon, sqlString } from '../oracle/duck.mjs';
//   const duck = await openDuck();                 // in-memory, 1 thread, no extension loading
//   const rows = await duck.all(`SELECT ...`);     // plain JS rows (see plain())
//   await duck.run(`COPY ... TO '...'`);           // statements without results
//   duck.close();
//
// Extension auto-install and auto-load are off, so a test never reaches the network and never
// silently depends on an extension. The session time zone is UTC (when ICU is built in), and
// TIMESTAMP WITH TIME ZONE values are rendered in UTC whatever the machine's zone.
//
// plain(v) turns any DuckDB value into JSON-safe JS, BigInt-safe and lossless:
//   BIGINT/HUGEINT/UBIGINT...  -> Number when it is a safe integer, else a decimal string
//   DOUBLE/FLOAT               -> Number; NaN, Infinity, -Infinity and -0 as those strings
//   BLOB                       -> '0x' + lowercase hex
//   DECIMAL, DATE, TIME, TIMESTAMP*, INTERVAL, UUID, BIT -> DuckDB's text form (toString)
//   LIST/ARRAY -> array; STRUCT -> object (field order kept); MAP -> [{key, value}]
//   UNION -> {tag, value}
// canon(v) is the same, except that every integer is a decimal string, so 5 and 5n compare
// equal and nothing depends on the width of the column.
import { DuckDBInstance, DuckDBTimestampTZValue } from '@duckdb/node-api';

DuckDBTimestampTZValue.timezoneOffsetInMinutes = 0;

export function sqlString(s) {
  return "'" + String(s).replace(/'/g, "''") + "'";
}

function scalar(v, ints) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') {
    if (ints === 'string') return v.toString();
    const safe = v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER);
    return safe ? Number(v) : v.toString();
  }
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (v === Infinity) return 'Infinity';
    if (v === -Infinity) return '-Infinity';
    if (Object.is(v, -0)) return '-0';
    if (ints === 'string' && Number.isInteger(v)) return String(v);
    return v;
  }
  return undefined;
}

function convert(v, ints) {
  const s = scalar(v, ints);
  if (s !== undefined) return s;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Uint8Array) return '0x' + Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(x => convert(x, ints));
  if (typeof v === 'object') {
    const name = v.constructor ? v.constructor.name : 'Object';
    if (name === 'DuckDBListValue' || name === 'DuckDBArrayValue') return v.items.map(x => convert(x, ints));
    if (name === 'DuckDBStructValue') {
      const o = {};
      for (const [k, x] of Object.entries(v.entries)) o[k] = convert(x, ints);
      return o;
    }
    if (name === 'DuckDBMapValue') return v.entries.map(e => ({ key: convert(e.key, ints), value: convert(e.value, ints) }));
    if (name === 'DuckDBBlobValue') return '0x' + Buffer.from(v.bytes).toString('hex');
    if (name === 'DuckDBUnionValue') return { tag: v.tag, value: convert(v.value, ints) };
    if (name === 'Object') {
      const o = {};
      for (const [k, x] of Object.entries(v)) o[k] = convert(x, ints);
      return o;
    }
    return v.toString();
  }
  return String(v);
}

export function plain(v) {
  return convert(v, 'number');
}

export function canon(v) {
  return convert(v, 'string');
}

// Rows of a DuckDB result as objects, through plain() (or canon() with {canon: true}).
function rowsOf(result, opts) {
  const f = opts && opts.canon ? canon : plain;
  const names = result.columnNames();
  return result.getRows().map(r => {
    const o = {};
    names.forEach((n, i) => { o[n] = f(r[i]); });
    return o;
  });
}

export async function openDuck({ threads = 1, path = ':memory:' } = {}) {
  const inst = await DuckDBInstance.create(path, {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: String(threads),
  });
  const con = await inst.connect();
  try { await con.run(`SET TimeZone = 'UTC'`); } catch { /* ICU not built in: plain UTC anyway */ }
  return {
    instance: inst,
    connection: con,
    // Runs SQL and returns its rows as plain objects; {canon: true} renders integers as strings.
    async all(sql, opts) { return rowsOf(await con.runAndReadAll(sql), opts); },
    // Runs SQL and returns [columnNames, rows as arrays] (canonical values).
    async table(sql) {
      const r = await con.runAndReadAll(sql);
      return [r.columnNames(), r.getRows().map(row => row.map(canon))];
    },
    async run(sql) { await con.run(sql); },
    close() { try { con.closeSync(); } catch { /* already closed */ } try { inst.closeSync(); } catch { /* idem */ } },
  };
}

// JSON text of a value made by plain()/canon(), stable across runs (key order as produced).
export function toJson(v, space) {
  return JSON.stringify(v, null, space);
}
