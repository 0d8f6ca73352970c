// CDC rows: `s3land write --input-format debezium` over Debezium change event files generated
// here (seeded; the seed is printed), checked with DuckDB against a state computed independently
// by replaying the events in this script:
// - inserts (c), a snapshot (r), updates (u) and deletes (d) of the same keys, with and without
//   the schema/payload wrapper: the README's latest-row query over the landed table equals the
//   replayed source state;
// - an event sent again at another offset (a connector's resend) gets the same _openetl_id, and
//   the latest-row query still holds;
// - tombstones (`null`, and {"schema": null, "payload": null}) are skipped and counted;
// - a truncate (op "t") is refused naming its line;
// - Connect's logical types become DuckDB's types, with their values;
// - the input landed in two runs (the file grown in between) equals the input landed in one.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, query, run, runOk, tableSql, tmpdir } from '../conformance/harness.mjs';

const seed = Number(process.env.S3L_SEED ?? Date.now() % 100000);
console.log(`seed ${seed}`);
let state = seed >>> 0;
const rand = () => { // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (n) => Math.floor(rand() * n);

const work = tmpdir('s3l-cdc');
const lake = path.join(work, 'lake');

// ---- the events -------------------------------------------------------------------------------
// A Decimal's unscaled value as Connect writes it: base64 of its two's complement, big-endian.
const decimalB64 = (u) => {
    let hex = (u < 0n ? (1n << 128n) + u : u).toString(16).padStart(32, '0');
    let bytes = Buffer.from(hex, 'hex');
    while (bytes.length > 1 && ((bytes[0] === 0 && !(bytes[1] & 0x80)) || (bytes[0] === 0xff && bytes[1] & 0x80)))
        bytes = bytes.subarray(1);
    return bytes.toString('base64');
};
const field = (f, type, name, extra = {}) => ({ type, optional: f !== 'id', ...(name ? { name, version: 1 } : {}), ...extra, field: f });
const columns = [
    field('id', 'int32'),
    field('name', 'string'),
    field('price', 'bytes', 'org.apache.kafka.connect.data.Decimal', { parameters: { scale: '2', 'connect.decimal.precision': '10' } }),
    field('born', 'int32', 'io.debezium.time.Date'),
    field('seen', 'int64', 'io.debezium.time.MicroTimestamp'),
    field('seen_tz', 'string', 'io.debezium.time.ZonedTimestamp'),
    field('tod', 'int64', 'io.debezium.time.MicroTime'),
    field('qty', 'int16'),
    field('ratio', 'double'),
];
const rowSchema = { type: 'struct', fields: columns, optional: true, name: 'pg.public.items.Value' };
const envelopeSchema = {
    type: 'struct', optional: false, name: 'pg.public.items.Envelope', version: 1,
    fields: [{ ...rowSchema, field: 'before' }, { ...rowSchema, field: 'after' },
        { type: 'struct', optional: false, name: 'io.debezium.connector.postgresql.Source', field: 'source',
            fields: [{ type: 'int64', optional: true, field: 'lsn' }, { type: 'int64', optional: true, field: 'txId' }] },
        { type: 'string', optional: false, field: 'op' }, { type: 'int64', optional: true, field: 'ts_ms' }],
};

// A row's values as this script knows them (the truth) and as Debezium writes them.
const newRow = (id) => ({
    id, name: `item-${id}-${pick(1000)}`, price: BigInt(pick(2000000) - 1000000), born: pick(40000) - 10000,
    seen: BigInt(pick(2e9)) * 1000000n + BigInt(pick(1e6)), seen_tz: BigInt(pick(2e9)) * 1000000n + BigInt(pick(1e6)),
    tod: BigInt(pick(86400)) * 1000000n + BigInt(pick(1e6)), qty: pick(60000) - 30000, ratio: pick(1000) / 8,
});
const isoUs = (us) => {
    const ms = Number(us / 1000n - (us % 1000n < 0n ? 1n : 0n));
    const frac = ((us % 1000000n) + 1000000n) % 1000000n;
    return new Date(ms).toISOString().slice(0, 19) + '.' + String(frac).padStart(6, '0') + 'Z';
};
const nul = (f) => (v) => (v === null ? null : f(v));
const wire = (r) => r && {
    id: r.id, name: r.name, price: nul(decimalB64)(r.price), born: r.born, seen: nul(Number)(r.seen),
    seen_tz: nul(isoUs)(r.seen_tz), tod: nul(Number)(r.tod), qty: r.qty, ratio: r.ratio,
};

let lsn = 1000;
let tx = 500;
// Every event is written twice: with the schema/payload wrapper into `lines`, and without it
// (value.converter.schemas.enable=false) into `plain`.
const events = []; // { op, key, after, lsn } in input order
const lines = [];
const plain = [];
const emit = (op, before, after, lsnOf = ++lsn) => {
    const payload = { before: wire(before), after: wire(after), source: { version: '2.5.0.Final', connector: 'postgresql',
        name: 'pg', db: 'shop', schema: 'public', table: 'items', lsn: lsnOf, txId: ++tx }, op, ts_ms: 1700000000000 + lsnOf };
    events.push({ op, key: (after ?? before).id, after, lsn: lsnOf });
    lines.push(JSON.stringify({ schema: envelopeSchema, payload }));
    plain.push(JSON.stringify(payload));
    return [lines[lines.length - 1], plain[plain.length - 1]];
};

// The snapshot: every row of the table at one LSN (op r), then the changes.
const live = new Map();
const snapshotLsn = ++lsn;
for (let id = 1; id <= 25; id++) {
    const r = newRow(id);
    live.set(id, r);
    emit('r', null, r, snapshotLsn);
}
let nextId = 26;
let tombstones = 0;
let resent = null;
for (let k = 0; k < 300; k++) {
    const ids = [...live.keys()];
    const roll = rand();
    if (roll < 0.25 || ids.length < 5) {
        const r = newRow(nextId++);
        live.set(r.id, r);
        emit('c', null, r);
    } else if (roll < 0.75) {
        const id = ids[pick(ids.length)];
        const r = { ...newRow(id) };
        const line = emit('u', live.get(id), r);
        live.set(id, r);
        if (k >= 40 && !resent) resent = { line, lsn };
    } else {
        const id = ids[pick(ids.length)];
        // PostgreSQL's default replica identity logs the old row's key only.
        emit('d', { id, name: null, price: null, born: null, seen: null, seen_tz: null, tod: null, qty: null, ratio: null }, null);
        live.delete(id);
        // The tombstone that follows a delete (tombstones.on.delete).
        lines.push(rand() < 0.5 ? JSON.stringify({ schema: null, payload: null }) : 'null');
        plain.push('null');
        tombstones++;
    }
    if (k >= 200 && resent && !resent.again) { // sent again, far from where it was first
        resent.again = true;
        lines.push(resent.line[0]);
        plain.push(resent.line[1]);
    }
}
check(resent !== null, 'an update to resend was generated');

// ---- the independent source state ------------------------------------------------------------
// The events applied in log order (LSN), the resent one counted once.
const expected = new Map();
const applied = new Map(); // key -> the LSN last applied
for (const e of events) {
    if ((applied.get(e.key) ?? -1) >= e.lsn) continue;
    applied.set(e.key, e.lsn);
    if (e.op === 'd') expected.delete(e.key);
    else expected.set(e.key, e.after);
}
check(expected.size === live.size, `the replayed state has the ${live.size} live rows (${expected.size})`);

// ---- land it, in two runs over a growing file -------------------------------------------------
const file = path.join(work, 'items.ndjson');
const half = Math.floor(lines.length / 2);
fs.writeFileSync(file, lines.slice(0, half).join('\n') + '\n');
const args = (url, f) => ['write', '--url', url, '--table', 'items', '--input-format', 'debezium', '--json', f];
const first = runOk(args(lake, file));
fs.appendFileSync(file, lines.slice(half).join('\n') + '\n');
const second = runOk(args(lake, file));
const summary = (r) => JSON.parse(r.stdout.trim().split('\n').filter((l) => l.includes('"summary"')).pop());
const skipped = summary(first).records_skipped + summary(second).records_skipped;
check(skipped === tombstones, `the summaries count the ${tombstones} tombstones skipped (${skipped})`);
const rowsLanded = summary(first).rows + summary(second).rows;
check(rowsLanded === events.length + 1, `one row per change event, the resent one too: ${events.length + 1} (${rowsLanded})`);

// The same file landed in one run lands the same rows (ids included).
const lake1 = path.join(work, 'lake1');
const one = runOk(['write', '--url', lake1, '--table', 'items', '--input-format', 'debezium', file]);
check(/tombstones? skipped/.test(one.stderr), `the summary says the tombstones were skipped: ${one.stderr.trim()}`);
const table = tableSql(path.join(lake, 'items'));
await exceptAll(table, tableSql(path.join(lake1, 'items')), 'two runs over the grown file and one run over it');

// ---- the latest-row query ---------------------------------------------------------------------
const latest = `SELECT * EXCLUDE (_openetl_op, _openetl_seq, _openetl_id) FROM (${table})
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY _openetl_seq DESC) = 1`;
const latestLive = `SELECT * FROM (SELECT *, _openetl_op AS op FROM (${table})
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY _openetl_seq DESC) = 1) WHERE op <> 'delete'`;
const got = await query(`SELECT id, name, price::VARCHAR AS price, born::VARCHAR AS born, epoch_us(seen) AS seen,
    epoch_us(seen_tz) AS seen_tz, epoch_us(DATE '1970-01-01' + tod)::BIGINT AS tod, qty, ratio FROM (${latestLive}) ORDER BY id`);
const dateOf = (days) => new Date(days * 86400000).toISOString().slice(0, 10);
const decimalText = (u) => {
    const neg = u < 0n;
    const s = (neg ? -u : u).toString().padStart(3, '0');
    return `${neg ? '-' : ''}${s.slice(0, -2)}.${s.slice(-2)}`;
};
const want = [...expected.values()].sort((a, b) => a.id - b.id).map((r) => ({
    id: r.id, name: r.name, price: decimalText(r.price), born: dateOf(r.born), seen: String(r.seen),
    seen_tz: String(r.seen_tz), tod: String(r.tod), qty: r.qty, ratio: r.ratio,
}));
const same = check(JSON.stringify(got) === JSON.stringify(want),
    `the latest row of each key, deletes dropped, equals the replayed source state (${want.length} rows)`);
if (!same) {
    const i = got.findIndex((g, k) => JSON.stringify(g) !== JSON.stringify(want[k]));
    console.log('got ', JSON.stringify(got[i]));
    console.log('want', JSON.stringify(want[i]));
}
const deleted = await query(`SELECT count(*)::INTEGER AS n FROM (${latest.replace('EXCLUDE (_openetl_op, _openetl_seq, _openetl_id)', '')}) WHERE _openetl_op = 'delete'`);
const deletedKeys = new Set(events.filter((e) => e.op === 'd').map((e) => e.key).filter((k) => !expected.has(k)));
check(deleted[0].n === deletedKeys.size, `keys whose latest change is a delete: ${deletedKeys.size} (${deleted[0].n})`);

// ---- the resent event -------------------------------------------------------------------------
const dup = await query(`SELECT _openetl_id::VARCHAR AS id, count(*)::INTEGER AS n, min(_openetl_seq)::BIGINT AS seq,
    count(DISTINCT _openetl_op)::INTEGER AS ops FROM (${table}) GROUP BY 1 HAVING count(*) > 1`);
check(dup.length === 1 && dup[0].n === 2 && Number(dup[0].seq) === resent.lsn,
    `only the resent event has its _openetl_id twice, with its LSN ${resent.lsn} (${JSON.stringify(dup)})`);
const ops = await query(`SELECT _openetl_op AS op, count(*)::INTEGER AS n FROM (${table}) GROUP BY 1 ORDER BY 1`);
const count = (o) => events.filter((e) => o.includes(e.op)).length;
check(JSON.stringify(ops) === JSON.stringify([{ op: 'delete', n: count('d') }, { op: 'insert', n: count('cr') },
    { op: 'update', n: count('u') + 1 }]), `_openetl_op: insert for c and r, update, delete (${JSON.stringify(ops)})`);
const seqs = await query(`SELECT count(*)::INTEGER AS n FROM (${table}) WHERE _openetl_op = 'insert' AND _openetl_seq = ${snapshotLsn}`);
check(seqs[0].n === 25, `the snapshot's rows carry its LSN as _openetl_seq (${seqs[0].n} of 25)`);

// ---- types ------------------------------------------------------------------------------------
const types = await query(`SELECT column_name AS c, column_type AS t FROM (DESCRIBE ${table})`);
const typeOf = Object.fromEntries(types.map((r) => [r.c, r.t]));
const wantTypes = { id: 'INTEGER', name: 'VARCHAR', price: 'DECIMAL(10,2)', born: 'DATE', seen: 'TIMESTAMP',
    seen_tz: 'TIMESTAMP WITH TIME ZONE', tod: 'TIME', qty: 'SMALLINT', ratio: 'DOUBLE', _openetl_op: 'VARCHAR',
    _openetl_seq: 'BIGINT', _openetl_id: 'UUID' };
check(JSON.stringify(typeOf) === JSON.stringify(wantTypes), `Connect's types map to ${JSON.stringify(wantTypes)} (${JSON.stringify(typeOf)})`);

// Without the wrapper the types are inferred from the values (as for NDJSON): the same events
// give the same latest rows, in Connect's JSON forms (a Decimal's base64, counts of days and
// microseconds, ISO-8601 text).
const plainEvents = path.join(work, 'plain-events.ndjson');
fs.writeFileSync(plainEvents, plain.join('\n') + '\n');
runOk(['write', '--url', lake, '--table', 'items_plain', '--input-format', 'debezium', '--quiet', plainEvents]);
const plainTable = tableSql(path.join(lake, 'items_plain'));
const gotPlain = await query(`SELECT id, name, price, born, seen, epoch_us(seen_tz) AS seen_tz, tod, qty, ratio FROM (SELECT *, _openetl_op AS op FROM (${plainTable})
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY _openetl_seq DESC) = 1) WHERE op <> 'delete' ORDER BY id`);
const wantPlain = [...expected.values()].sort((a, b) => a.id - b.id).map((r) => {
    const w = wire(r);
    return { ...w, id: String(w.id), born: String(w.born), seen: String(w.seen), tod: String(w.tod), qty: String(w.qty),
        seen_tz: String(r.seen_tz) };
});
const samePlain = check(JSON.stringify(gotPlain) === JSON.stringify(wantPlain),
    `without the wrapper: the latest rows equal the replayed state in Connect's JSON forms (${wantPlain.length} rows)`);
if (!samePlain) {
    const i = gotPlain.findIndex((g, k) => JSON.stringify(g) !== JSON.stringify(wantPlain[k]));
    console.log('got ', JSON.stringify(gotPlain[i]));
    console.log('want', JSON.stringify(wantPlain[i]));
}
const dupPlain = await query(`SELECT _openetl_id::VARCHAR AS id FROM (${plainTable}) GROUP BY 1 HAVING count(*) > 1`);
const dupWrapped = await query(`SELECT _openetl_id::VARCHAR AS id FROM (${table}) GROUP BY 1 HAVING count(*) > 1`);
check(dupPlain.length === 1 && dupWrapped.length === 1 && dupPlain[0].id !== undefined,
    `without the wrapper the resent event also has one _openetl_id (${JSON.stringify(dupPlain)})`);
const plainFile = path.join(work, 'plain.ndjson');
fs.writeFileSync(plainFile, `${JSON.stringify({ before: null, after: { id: 1, v: 'x', d: '2024-01-02' }, source: { lsn: 7 }, op: 'c' })}\nnull\n`);
runOk(['write', '--url', lake, '--table', 'plain', '--input-format', 'debezium', '--quiet', plainFile]);
const ptypes = await query(`SELECT column_name AS c, column_type AS t FROM (DESCRIBE ${tableSql(path.join(lake, 'plain'))})`);
check(JSON.stringify(ptypes.map((r) => r.t)) === JSON.stringify(['BIGINT', 'VARCHAR', 'DATE', 'VARCHAR', 'BIGINT', 'UUID']),
    `without the wrapper: inferred types, and the _openetl_ columns typed (${JSON.stringify(ptypes)})`);

// _openetl_id recomputed here from its definition (docs/internals/input.md, "debezium"): a
// UUID v5 (RFC 4122 section 4.3: SHA-1 of the namespace's bytes and the name) over the table,
// the source position fields, the op and the images, each value written as kind letter, length
// and bytes.
const canon = (v) => {
    if (v === null) return 'n0:';
    if (v === true) return 't0:';
    if (v === false) return 'f0:';
    if (typeof v === 'number') return `N${String(v).length}:${v}`;
    if (typeof v === 'string') return `S${Buffer.byteLength(v)}:${v}`;
    if (Array.isArray(v)) return `A${v.length}:` + v.map(canon).join('');
    const keys = Object.keys(v);
    return `O${keys.length}:` + keys.map((k) => canon(k) + canon(v[k])).join('');
};
const positionFields = ['lsn', 'txId', 'sequence', 'xmin', 'file', 'pos', 'row', 'gtid', 'change_lsn', 'commit_lsn',
    'event_serial_no', 'scn', 'commit_scn', 'rs_id', 'ssn', 'row_id', 'ord'];
const eventId = (e) => {
    const src = e.source ?? {};
    let name = ['db', 'schema', 'table', 'collection'].map((f) => `${f}=${f in src ? canon(src[f]) : ''}\n`).join('');
    for (const f of positionFields) if (f in src) name += `${f}=${canon(src[f])}\n`;
    name += `op=${e.op}\n` + `before=${'before' in e ? canon(e.before) : ''}\n` + `after=${'after' in e ? canon(e.after) : ''}\n`;
    const ns = Buffer.from('5f0f6bd27c4e5b529a3e2f4bb7d0c1a9', 'hex');
    const h = createHash('sha1').update(Buffer.concat([ns, Buffer.from(name)])).digest().subarray(0, 16);
    h[6] = (h[6] & 0x0f) | 0x50;
    h[8] = (h[8] & 0x3f) | 0x80;
    const x = h.toString('hex');
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
};
const wantIds = plain.filter((l) => l !== 'null').map((l) => eventId(JSON.parse(l))).sort();
const gotIds = (await query(`SELECT _openetl_id::VARCHAR AS id FROM (${table}) ORDER BY 1`)).map((r) => r.id);
check(JSON.stringify(gotIds) === JSON.stringify(wantIds),
    `every _openetl_id equals the UUID v5 recomputed from its definition (${wantIds.length} ids; first ${gotIds[0]} vs ${wantIds[0]})`);

// ---- refusals ---------------------------------------------------------------------------------
const truncFile = path.join(work, 'trunc.ndjson');
const ev = (op, id) => JSON.stringify({ before: null, after: id ? { id } : null, source: { lsn: 1 }, op });
fs.writeFileSync(truncFile, [ev('c', 1), 'null', ev('t', 0), ev('c', 2)].join('\n') + '\n');
const t = run(['write', '--url', lake, '--table', 'trunc', '--input-format', 'debezium', truncFile]);
check(t.code !== 0 && /line 3, column \d+/.test(t.stderr) && /truncate/.test(t.stderr),
    `a truncate is refused naming its line (exit ${t.code}): ${t.stderr.trim()}`);
const badFile = path.join(work, 'bad.ndjson');
fs.writeFileSync(badFile, `${ev('c', 1)}\n{"op": "c", "after": 5}\n`);
const b = run(['write', '--url', lake, '--table', 'bad', '--input-format', 'debezium', badFile]);
check(b.code !== 0 && b.stderr.includes(`${badFile} line 2, column`) && /expected "after": an object/.test(b.stderr),
    `an event without an after object: file, line, column and what was expected (${b.stderr.trim()})`);

done();
