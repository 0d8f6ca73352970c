// Conformance: state and schema round trip.
// State: the checkpoint of the pipeline (its name is the UUIDv5 computed here independently, with
// node:crypto's SHA-1, per RFC 4122 section 4.3) records each input's real path, device, inode,
// the offset after the last epoch (the file's size) and the SHA-256 of the 4 KiB before it (also
// computed here); a CSV input's header is kept.
// Schema: a declared schema written with short type names comes back from `s3land schema` in
// Arrow's spelling, and the record itself is accepted as a declared schema (no drift).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DATA, STORE, check, destUrl, done, run, runOk, schemaFile, tmpdir } from './harness.mjs';

function uuid5(ns, name) {
    const nsBytes = Buffer.from(ns.replaceAll('-', ''), 'hex');
    const h = createHash('sha1').update(Buffer.concat([nsBytes, Buffer.from(name, 'utf8')])).digest();
    h[6] = (h[6] & 0x0f) | 0x50;
    h[8] = (h[8] & 0x3f) | 0x80;
    const x = h.subarray(0, 16).toString('hex');
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const work = tmpdir('s3l-state');
const lake = path.join(work, 'lake');
const csv = path.join(work, 'github.csv');
fs.copyFileSync(path.join(DATA, 'github.csv'), csv);
const schema = schemaFile(work, 's.json', [{ name: 'time', type: 'utf8' }, { name: 'count', type: 'int32' }]);
runOk(['write', '--url', `${lake}/`, '--table', 'gh', '--schema', schema, '--input-format', 'csv', '--quiet', csv]);

const real = fs.realpathSync(csv);
// The canonical destination: file:// and the real path, or on S3 the s3:// URL without its slash.
const dest = STORE === 's3' ? destUrl(lake) : `file://${fs.realpathSync(work)}/lake`;
const id = uuid5('221245c7-ac52-4405-b24f-f3fd2fdc3460', `${dest}\ngh\n${real}\n`);
const ckptPath = path.join(lake, '_openetl', 'checkpoints', `${id}.json`);
check(fs.existsSync(ckptPath), `the checkpoint is named by the pipeline id ${id}`);
const ckpt = fs.existsSync(ckptPath) ? JSON.parse(fs.readFileSync(ckptPath, 'utf8')) : {};
const inp = ckpt.state?.inputs?.[0] ?? {};
const st = fs.statSync(csv, { bigint: true });
const bytes = fs.readFileSync(csv);
check(inp.path === real, `input real path recorded (${inp.path})`);
check(BigInt(inp.dev ?? -1) === st.dev && BigInt(inp.ino ?? -1) === st.ino, 'device and inode recorded');
check(inp.offset === bytes.length, `offset = file size ${bytes.length} (got ${inp.offset})`);
const want = createHash('sha256').update(bytes.subarray(Math.max(0, bytes.length - 4096))).digest('hex');
check(inp.sha256 === want, 'SHA-256 of the 4 KiB before the offset');
check(inp.csv_header === 'time,count', `CSV header recorded (${JSON.stringify(inp.csv_header)})`);

const out = run(['schema', '--url', lake, '--table', 'gh', '--json']);
const rec = JSON.parse(out.stdout).record;
const cols = Array.isArray(rec) ? rec : rec.columns;
check(JSON.stringify(cols.map((c) => [c.name, c.type])) === JSON.stringify([['time', 'string'], ['count', 'int32']]),
    `short names come back in Arrow's spelling: ${JSON.stringify(cols)}`);
const recFile = path.join(work, 'record.json');
fs.writeFileSync(recFile, JSON.stringify(rec));
const more = path.join(work, 'more.csv');
fs.writeFileSync(more, 'time,count\n2020/01/01 00:00:00,7\n');
runOk(['write', '--url', lake, '--table', 'gh', '--schema', recFile, '--input-format', 'csv', '--quiet', more]);
done();
