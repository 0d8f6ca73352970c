// wasm-read.mjs: a second independent reader, npm parquet-wasm (arrow-rs compiled to
// WebAssembly) with npm apache-arrow, for schemas, row counts, and the values DuckDB cannot read
// exactly: nanosecond timestamps with a time zone (DuckDB truncates them to microseconds) and
// intervals.
//
//   import { wasmRead } from '../oracle/wasm-read.mjs';
//   const r = await wasmRead('/path/file.parquet');
//   r.num_rows                        row count
//   r.schema   [{ name, type, nullable }]  type as apache-arrow prints it ("Timestamp<NANOSECOND, UTC>")
//   r.rows     [{ column: value }]    values read from the Arrow buffers, never through Number:
//       integers of 64 bits, timestamps, times, dates -> the raw integer in the column's unit, as a
//       decimal string (int8..int32, float -> Number; NaN, ±Infinity, -0 as strings)
//       decimal -> its exact decimal text ("-12.34"); utf8 -> string; binary -> '0x' + hex
//       interval month_day_nano -> { months, days, nanoseconds (string) }
//       list -> array; struct -> object; map -> [{ key, value }]; null -> null
// Note: parquet-wasm rejects files whose key/value metadata is not valid UTF-8.
// CLI: node tests/oracle/wasm-read.mjs FILE [--schema]  prints the result as JSON.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const td = new TextDecoder('utf-8');

function isValid(data, i) {
  const bm = data.nullBitmap;
  if (!bm || bm.length === 0 || data.nullCount === 0) return true;
  const j = data.offset + i;
  return (bm[j >> 3] & (1 << (j & 7))) !== 0;
}

function num(v) {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (Object.is(v, -0)) return '-0';
  return v;
}

// The 128-bit two's complement value of 4 little-endian 32-bit words.
function int128(words, k) {
  let v = 0n;
  for (let w = 3; w >= 0; w--) v = (v << 32n) | BigInt(words[k * 4 + w] >>> 0);
  return v >= (1n << 127n) ? v - (1n << 128n) : v;
}

function decimalText(unscaled, scale) {
  const neg = unscaled < 0n;
  let s = (neg ? -unscaled : unscaled).toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, '0');
    s = s.slice(0, s.length - scale) + '.' + s.slice(s.length - scale);
  }
  return (neg ? '-' : '') + s;
}

function valueAt(arrow, data, i) {
  if (!isValid(data, i)) return null;
  const T = arrow.Type, t = data.type, j = data.offset + i;
  switch (t.typeId) {
    case T.Null: return null;
    case T.Bool: return (data.values[j >> 3] & (1 << (j & 7))) !== 0;
    case T.Int: return t.bitWidth === 64 ? data.values[j].toString() : data.values[j];
    case T.Float:
      if (t.precision === arrow.Precision.HALF) return num(arrow.makeVector(data).get(i));
      return num(data.values[j]);
    case T.Utf8: case T.LargeUtf8:
      return td.decode(data.values.subarray(Number(data.valueOffsets[j]), Number(data.valueOffsets[j + 1])));
    case T.Binary: case T.LargeBinary:
      return '0x' + Buffer.from(data.values.subarray(Number(data.valueOffsets[j]), Number(data.valueOffsets[j + 1]))).toString('hex');
    case T.FixedSizeBinary:
      return '0x' + Buffer.from(data.values.subarray(j * t.byteWidth, (j + 1) * t.byteWidth)).toString('hex');
    case T.Decimal:
      if (t.bitWidth !== 128) break;
      return decimalText(int128(data.values, j), t.scale);
    case T.Date: case T.Time: case T.Timestamp: case T.Duration:
      // One value per slot: Int32Array (date32, time32) or BigInt64Array (the 64-bit ones).
      return String(data.values[j]);
    case T.Interval:
      if (t.unit === arrow.IntervalUnit.MONTH_DAY_NANO) {
        const w = data.values;
        const nanos = (BigInt(w[j * 4 + 3]) << 32n) | BigInt(w[j * 4 + 2] >>> 0);
        return { months: w[j * 4], days: w[j * 4 + 1], nanoseconds: nanos.toString() };
      }
      break;
    case T.List: case T.LargeList: {
      const a = Number(data.valueOffsets[j]), b = Number(data.valueOffsets[j + 1]);
      const out = [];
      for (let k = a; k < b; k++) out.push(valueAt(arrow, data.children[0], k - data.children[0].offset));
      return out;
    }
    case T.FixedSizeList: {
      const out = [];
      for (let k = 0; k < t.listSize; k++) out.push(valueAt(arrow, data.children[0], j * t.listSize + k - data.children[0].offset));
      return out;
    }
    case T.Struct: {
      const o = {};
      t.children.forEach((f, k) => { o[f.name] = valueAt(arrow, data.children[k], i + data.offset - data.children[k].offset); });
      return o;
    }
    case T.Map: {
      const a = Number(data.valueOffsets[j]), b = Number(data.valueOffsets[j + 1]);
      const entries = data.children[0], out = [];
      for (let k = a; k < b; k++) {
        const e = k - entries.offset;
        out.push({ key: valueAt(arrow, entries.children[0], e + entries.offset - entries.children[0].offset),
          value: valueAt(arrow, entries.children[1], e + entries.offset - entries.children[1].offset) });
      }
      return out;
    }
    default: break;
  }
  const v = arrow.makeVector(data).get(i);
  return typeof v === 'bigint' ? v.toString() : (v && typeof v.toString === 'function' && typeof v !== 'number' ? v.toString() : v);
}

export async function wasmRead(file, { schemaOnly = false } = {}) {
  const arrow = await import('apache-arrow');
  const pw = await import('parquet-wasm');
  const wasmTable = pw.readParquet(new Uint8Array(readFileSync(file)));
  const table = arrow.tableFromIPC(wasmTable.intoIPCStream());
  const schema = table.schema.fields.map(f => ({ name: f.name, type: String(f.type), nullable: f.nullable }));
  const result = { num_rows: table.numRows, schema };
  if (schemaOnly) return result;
  const rows = [];
  for (const batch of table.batches) {
    for (let i = 0; i < batch.numRows; i++) {
      const r = {};
      batch.schema.fields.forEach((f, k) => { r[f.name] = valueAt(arrow, batch.data.children[k], i); });
      rows.push(r);
    }
  }
  result.rows = rows;
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) { console.error('usage: wasm-read.mjs FILE [--schema]'); process.exit(2); }
  try {
    const r = await wasmRead(file, { schemaOnly: process.argv.includes('--schema') });
    process.stdout.write(JSON.stringify(r, null, 1) + '\n');
  } catch (e) {
    console.error(`wasm-read: ${file}: ${e.message || e}`);
    process.exit(1);
  }
}
