// A UTF-8 byte order mark and a half-written first line (issue 10: found by the write-path
// fuzzer, input tests/fuzz/corpus/write_path/crash-bom-partial-line-rerun). The readers skip a
// BOM at offset 0, so a run that leaves an unterminated, not yet valid first line unread commits
// offset 3; the rerun took offset 3 for the end of a committed line without a line break, and
// refused the file ("the last committed line had no line break ..."). Just after a BOM at offset
// 0 is a line start, as offset 0 is: the rerun finds nothing new, and once the line is whole it
// lands once. A BOM anywhere else is data (here: a bad first line, refused as such).
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, query, run, runOk, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-bom-partial');
const lake = path.join(work, 'lake');
const schema = path.join(work, 'schema.json');
fs.writeFileSync(schema, JSON.stringify([{ name: 'a', type: 'int64' }, { name: 'b', type: 'string' }]));
const rows = async (t) => (await query(`SELECT a, b FROM read_parquet(${lit(path.join(lake, t, '*.parquet'))}) ORDER BY a`))
    .map((r) => `${r.a}:${r.b}`).join(' ');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

// The fuzzer's input: a BOM, then a last line without a line end that is not JSON yet.
for (const [t, extra] of [['fz', ['--schema', schema]], ['fzi', []]]) {
    const f = path.join(work, `${t}.ndjson`);
    fs.writeFileSync(f, Buffer.concat([BOM, Buffer.from([0x62, 0xa7, 0xa0, 0x3f, 0xfe, 0x7f, 0, 0])]));
    let r = runOk(['write', '--url', lake, '--table', t, ...extra, f]);
    check(r.stderr.includes(`${f} line 1 (byte offset 3): the last line has no line end`),
        `${t}: the half-written line after the BOM is left unread with a note (${r.stderr.trim()})`);
    r = run(['write', '--url', lake, '--table', t, ...extra, f]);
    check(r.code === 0 && !r.stderr.includes('no line break'), `${t}: the rerun is not refused (${r.code} ${r.stderr.trim()})`);
}

// A BOM and a first line still being written: left unread, the rerun lands nothing and fails
// nothing, and once the line ends it lands exactly once (DuckDB reads the row back).
for (const [t, extra] of [['grow', ['--schema', schema]], ['growi', []]]) {
    const f = path.join(work, `${t}.ndjson`);
    fs.writeFileSync(f, Buffer.concat([BOM, Buffer.from('{"a":1,"b":"x')]));
    runOk(['write', '--url', lake, '--table', t, ...extra, f]);
    let r = run(['write', '--url', lake, '--table', t, ...extra, f]);
    check(r.code === 0, `${t}: rerun over the same half line exits 0 (${r.code} ${r.stderr.trim()})`);
    fs.appendFileSync(f, '"}\n{"a":2,"b":"y"}\n');
    r = run(['write', '--url', lake, '--table', t, ...extra, f]);
    check(r.code === 0, `${t}: the line once whole lands (${r.code} ${r.stderr.trim()})`);
    const got = await rows(t);
    check(got === '1:x 2:y', `${t}: rows ${got} (want 1:x 2:y)`);
    r = runOk(['write', '--url', lake, '--table', t, ...extra, f]);
    check((await rows(t)) === '1:x 2:y', `${t}: a third run lands nothing more`);
}

// A BOM that is not at offset 0 is not skipped: it is the first line's bytes, a bad record.
const mid = path.join(work, 'mid.ndjson');
fs.writeFileSync(mid, Buffer.concat([Buffer.from(' '), BOM, Buffer.from('{"a":1}\n')]));
const r = run(['write', '--url', lake, '--table', 'mid', '--schema', schema, mid]);
check(r.code === 2 && r.stderr.includes(`${mid} line 1, column 2 (byte offset 1): expected a value`),
    `a BOM at offset 1 is data, refused as a bad line (${r.code} ${r.stderr.trim()})`);
done();
