// Conformance: double-underscored table names. `__quarantine` is an ordinary table: it lands, is
// listed by `s3land ls`, and reads back (only `_openetl` is reserved).
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, run, runOk, schemaFile, tableSql, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-dunder');
const lake = path.join(work, 'lake');
const input = path.join(work, 'in.ndjson');
fs.writeFileSync(input, '{"id":1,"why":"bad date"}\n{"id":2,"why":"missing key"}\n');
const schema = schemaFile(work, 's.json', [{ name: 'id', type: 'int64' }, { name: 'why', type: 'string' }]);
for (const t of ['__quarantine', '_private', '__']) {
    runOk(['write', '--url', lake, '--table', t, '--schema', schema, '--quiet', input]);
    await exceptAll(`SELECT * FROM read_json(${lit(input)}, columns={'id': 'BIGINT', 'why': 'VARCHAR'})`, tableSql(path.join(lake, t)), `table ${t}`);
}
const ls = run(['ls', '--url', lake]);
check(ls.code === 0 && /__quarantine/.test(ls.stdout) && /_private/.test(ls.stdout), `ls lists them:\n${ls.stdout}`);
done();
