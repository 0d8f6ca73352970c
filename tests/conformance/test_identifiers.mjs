// Conformance: identifier edge cases. Table and namespace names with spaces, unicode, "=", and
// long names (255 bytes) land under exactly that name and read back; "..", ".", an absolute name,
// a "/" in a name, 256 bytes and the reserved _openetl are refused (exit 1) before anything is
// written.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, run, runOk, scalar, schemaFile, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-ident');
const lake = path.join(work, 'lake');
const input = path.join(work, 'in.ndjson');
fs.writeFileSync(input, '{"x":1}\n{"x":2}\n');
const schema = schemaFile(work, 's.json', [{ name: 'x', type: 'int64' }]);
// 255 bytes of UTF-8 (127 two-byte characters and one ASCII byte), as a table name and as a
// namespace. A table name of 255 bytes makes the schema record's file name "T.json" 260 bytes,
// over NAME_MAX: the local store keeps such a component under a shortened on-disk name (see
// docs/internals/store.md), and the table still lands and reads back under its own name.
// The namespace is another 255-byte name: a namespace named like a table is refused (below),
// since the table's directory would then hold the namespace's tables.
const long255 = 'é'.repeat(127) + 'x';
const longNs = 'é'.repeat(127) + 'y';
const good = [['with spaces', null], ['ünïcødé 表', null], ['k=v', 'dt=2024-01-01'], [long255, null],
    ['t', longNs], [long255, longNs], ['t', 'ns with space']];
for (const [table, ns] of good) {
    const args = ['write', '--url', lake, '--table', table, '--schema', schema, '--quiet', input];
    if (ns) args.push('--namespace', ns);
    runOk(args);
    const dir = ns ? path.join(lake, ns, table) : path.join(lake, table);
    const n = fs.existsSync(dir) ? await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(dir, '*.parquet'))})`) : -1;
    check(n === 2, `table ${JSON.stringify(table).slice(0, 40)}${ns ? ` in ${ns}` : ''}: 2 rows under its own name`);
}
{
    const r = run(['write', '--url', lake, '--table', 't', '--namespace', long255, '--schema', schema, input]);
    check(r.code === 1 && /would lie inside the directory of table/.test(r.stderr),
        `a namespace named like table ${long255.slice(0, 8)}... is refused (got ${r.code})`);
}
for (const bad of ['..', '.', '/abs', 'a/b', 'x'.repeat(256), '_openetl', '']) {
    const r = run(['write', '--url', path.join(work, 'lake-bad'), '--table', bad, '--schema', schema, input]);
    check(r.code === 1, `table name ${JSON.stringify(bad).slice(0, 20)} refused with exit 1 (got ${r.code}: ${r.stderr.trim().slice(0, 120)})`);
}
const r = run(['write', '--url', path.join(work, 'lake-bad'), '--table', 't', '--namespace', '..', '--schema', schema, input]);
check(r.code === 1, `namespace ".." refused (got ${r.code})`);
check(!fs.existsSync(path.join(work, 't')) && !fs.existsSync(path.join(work, 'x')), 'nothing escaped the destination');
const parquetOutside = fs.readdirSync(work).filter((f) => f.endsWith('.parquet'));
check(parquetOutside.length === 0, 'no file next to the destination');
done();
