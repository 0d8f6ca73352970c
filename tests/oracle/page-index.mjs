// page-index.mjs: an independent reader of Parquet page indexes (ColumnIndex and OffsetIndex,
// apache/parquet-format PageIndex.md), for checking a writer page by page.
//
// Two decoders that share nothing with the C code nor with each other:
//   - readPageIndex(file): a small Thrift compact-protocol decoder written here from
//     apache/thrift doc/specs/thrift-compact-protocol.md, walking FileMetaData for the index
//     locations (parquet.thrift ColumnChunk fields 4-7) and decoding each index;
//   - readPageIndexHyparquet(file): npm hyparquet's parquetMetadata, readColumnIndex and
//     readOffsetIndex.
// readPageIndexChecked(file) runs both and throws when they disagree.
// All return, per row group and leaf column, in file order:
//   { row_group, column, path, physical_type,
//     column_index: { null_pages: [bool], min_values: [hex], max_values: [hex],
//                     boundary_order: 'UNORDERED'|'ASCENDING'|'DESCENDING',
//                     null_counts: [number] | null } | null,
//     offset_index: { page_locations: [{ offset, compressed_page_size, first_row_index }] } | null }
// min/max are lowercase hex of the raw PLAIN bytes; decodePlain(hex, physical_type) turns one
// into a value (INT32/INT64 as decimal strings, FLOAT/DOUBLE as numbers, BOOLEAN, BYTE_ARRAY as
// UTF-8 text, others hex).
// CLI: node tests/oracle/page-index.mjs FILE  prints the checked result as JSON.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const PHYSICAL = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY',
  'FIXED_LEN_BYTE_ARRAY'];
const ORDER = ['UNORDERED', 'ASCENDING', 'DESCENDING'];
const hex = b => Buffer.from(b).toString('hex');

// ---- Thrift compact protocol -------------------------------------------------------------
// Values: struct -> Map(field id -> value); list/set -> array; binary -> Uint8Array;
// i8/i16/i32 -> number; i64 -> BigInt; bool -> boolean; double -> number.
class Compact {
  constructor(bytes, pos = 0) { this.b = bytes; this.pos = pos; this.depth = 0; }
  byte() {
    if (this.pos >= this.b.length) throw new Error(`thrift: truncated at ${this.pos}`);
    return this.b[this.pos++];
  }
  varint() {
    let v = 0n, shift = 0n;
    for (let i = 0; i < 10; i++) {
      const x = this.byte();
      v |= BigInt(x & 0x7f) << shift;
      if (!(x & 0x80)) return v;
      shift += 7n;
    }
    throw new Error(`thrift: varint too long at ${this.pos}`);
  }
  zigzag() { const n = this.varint(); return (n >> 1n) ^ -(n & 1n); }
  value(type) {
    switch (type) {
      case 1: return true;   // only reached for list elements written with type 1
      case 2: return false;
      case 3: { const x = this.byte(); return x > 127 ? x - 256 : x; }
      case 4: case 5: return Number(this.zigzag());
      case 6: return this.zigzag();
      case 7: { const v = Buffer.from(this.b.subarray(this.pos, this.pos + 8)).readDoubleLE(0); this.pos += 8; return v; }
      case 8: {
        const n = Number(this.varint());
        if (this.pos + n > this.b.length) throw new Error(`thrift: binary beyond buffer at ${this.pos}`);
        const v = this.b.subarray(this.pos, this.pos + n); this.pos += n; return v;
      }
      case 9: case 10: return this.list();
      case 11: return this.map();
      case 12: return this.struct();
      default: throw new Error(`thrift: unknown type ${type} at ${this.pos}`);
    }
  }
  list() {
    const h = this.byte();
    let n = h >> 4; const t = h & 0x0f;
    if (n === 15) n = Number(this.varint());
    if (n > this.b.length - this.pos) throw new Error(`thrift: list count ${n} beyond buffer`);
    const out = [];
    for (let i = 0; i < n; i++) {
      // A bool element is one byte: 1 true; 0 or 2 false (writers differ from the spec).
      out.push(t === 1 || t === 2 ? this.byte() === 1 : this.value(t));
    }
    return out;
  }
  map() {
    const n = Number(this.varint());
    if (n === 0) return new Map();
    const kv = this.byte(), out = new Map();
    for (let i = 0; i < n; i++) out.set(this.value(kv >> 4), this.value(kv & 0x0f));
    return out;
  }
  struct() {
    if (++this.depth > 64) throw new Error('thrift: nesting too deep');
    const out = new Map();
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) break;
      const t = h & 0x0f, delta = h >> 4;
      const id = delta ? last + delta : Number(this.zigzag());
      last = id;
      out.set(id, t === 1 || t === 2 ? t === 1 : this.value(t));
    }
    this.depth--;
    return out;
  }
}

export function decodeStruct(bytes, pos = 0) {
  const c = new Compact(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), pos);
  return c.struct();
}

// A struct at byte pos of bytes, and where it ends (for page headers: the page follows).
export function decodeStructAt(bytes, pos) {
  const c = new Compact(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), pos);
  const value = c.struct();
  return { value, end: c.pos };
}

// FileMetaData of a whole file: "PAR1" ... metadata, u32 length, "PAR1".
export function readFileMetaData(buf) {
  if (buf.length < 12 || buf.toString('latin1', buf.length - 4) !== 'PAR1' ||
      buf.toString('latin1', 0, 4) !== 'PAR1') throw new Error('not a Parquet file (magic)');
  const len = buf.readUInt32LE(buf.length - 8);
  return decodeStruct(buf.subarray(buf.length - 8 - len, buf.length - 8));
}

// ColumnIndex: 1 null_pages, 2 min_values, 3 max_values, 4 boundary_order, 5 null_counts.
function columnIndexOf(s) {
  return {
    null_pages: s.get(1),
    min_values: s.get(2).map(hex),
    max_values: s.get(3).map(hex),
    boundary_order: ORDER[s.get(4)],
    null_counts: s.has(5) ? s.get(5).map(Number) : null,
  };
}

// OffsetIndex: 1 page_locations [PageLocation: 1 offset, 2 compressed_page_size, 3 first_row_index].
function offsetIndexOf(s) {
  return {
    page_locations: s.get(1).map(p => ({
      offset: Number(p.get(1)), compressed_page_size: p.get(2), first_row_index: Number(p.get(3)),
    })),
  };
}

export function pageIndexOfBuffer(buf) {
  const fm = readFileMetaData(buf);
  const out = [];
  (fm.get(4) || []).forEach((rg, g) => {
    rg.get(1).forEach((cc, i) => {
      const md = cc.get(3);
      const at = (off, len) => buf.subarray(Number(off), Number(off) + len);
      out.push({
        row_group: g, column: i,
        path: md.get(3).map(p => Buffer.from(p).toString('utf8')).join('.'),
        physical_type: PHYSICAL[md.get(1)],
        column_index: cc.has(6) ? columnIndexOf(decodeStruct(at(cc.get(6), cc.get(7)))) : null,
        offset_index: cc.has(4) ? offsetIndexOf(decodeStruct(at(cc.get(4), cc.get(5)))) : null,
      });
    });
  });
  return out;
}

export function readPageIndex(file) {
  return pageIndexOfBuffer(readFileSync(file));
}

export async function readPageIndexHyparquet(file) {
  const { parquetMetadata, readColumnIndex, readOffsetIndex } = await import('hyparquet');
  const buf = readFileSync(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
  const md = parquetMetadata(ab);
  const out = [];
  md.row_groups.forEach((rg, g) => {
    rg.columns.forEach((cc, i) => {
      const reader = (off, len) => ({ view: new DataView(ab, Number(off), len), offset: 0 });
      let column_index = null, offset_index = null;
      if (cc.column_index_offset !== undefined) {
        // An empty schema element makes hyparquet return min/max as raw bytes.
        const ci = readColumnIndex(reader(cc.column_index_offset, cc.column_index_length), {});
        column_index = {
          null_pages: ci.null_pages,
          min_values: ci.min_values.map(hex),
          max_values: ci.max_values.map(hex),
          boundary_order: ci.boundary_order,
          null_counts: ci.null_counts ? ci.null_counts.map(Number) : null,
        };
      }
      if (cc.offset_index_offset !== undefined) {
        const oi = readOffsetIndex(reader(cc.offset_index_offset, cc.offset_index_length));
        offset_index = {
          page_locations: oi.page_locations.map(p => ({
            offset: Number(p.offset), compressed_page_size: p.compressed_page_size,
            first_row_index: Number(p.first_row_index),
          })),
        };
      }
      out.push({
        row_group: g, column: i, path: cc.meta_data.path_in_schema.join('.'),
        physical_type: cc.meta_data.type, column_index, offset_index,
      });
    });
  });
  return out;
}

export async function readPageIndexChecked(file) {
  const mine = readPageIndex(file), theirs = await readPageIndexHyparquet(file);
  const a = JSON.stringify(mine), b = JSON.stringify(theirs);
  if (a !== b) throw new Error(`page index of ${file}: our decoder and hyparquet disagree:\n${a}\n${b}`);
  return mine;
}

// One PLAIN-encoded statistics value (no length prefix) as a comparable value.
export function decodePlain(hexValue, physicalType) {
  const b = Buffer.from(hexValue, 'hex');
  switch (physicalType) {
    case 'BOOLEAN': return b.length ? b[0] === 1 : null;
    case 'INT32': return b.length === 4 ? String(b.readInt32LE(0)) : null;
    case 'INT64': return b.length === 8 ? b.readBigInt64LE(0).toString() : null;
    case 'FLOAT': return b.length === 4 ? b.readFloatLE(0) : null;
    case 'DOUBLE': return b.length === 8 ? b.readDoubleLE(0) : null;
    case 'BYTE_ARRAY': return b.toString('utf8');
    default: return hexValue;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) { console.error('usage: page-index.mjs FILE'); process.exit(2); }
  try {
    process.stdout.write(JSON.stringify(await readPageIndexChecked(file), null, 1) + '\n');
  } catch (e) {
    console.error(`page-index: ${e.message}`);
    process.exit(1);
  }
}
