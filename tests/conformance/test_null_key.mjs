// Conformance: null-key rejection. A column marked "key": true refuses nulls: with the default
// --bad-records fail the run stops (exit 2) naming file, line and column, and nothing of that
// epoch lands; with skip the row is dropped and the others land.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, parquetFiles, query, run, runOk, schemaFile, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-nullkey');
const lake = path.join(work, 'lake');
const input = path.join(work, 'k.ndjson');
fs.writeFileSync(input, '{"id":1,"v":"a"}\n{"id":null,"v":"b"}\n{"v":"c"}\n{"id":4,"v":"d"}\n');
const schema = schemaFile(work, 's.json', [{ name: 'id', type: 'int64', key: true }, { name: 'v', type: 'string' }]);
const r = run(['write', '--url', lake, '--table', 'k', '--schema', schema, input]);
check(r.code === 2, `a null key fails the run with exit 2 (got ${r.code})`);
check(/k\.ndjson/.test(r.stderr) && /line 2/.test(r.stderr) && /id/.test(r.stderr), `the error names file, line 2 and column id: ${r.stderr.trim()}`);
check(parquetFiles(path.join(lake, 'k')).length === 0, 'nothing of the failed epoch is visible');
runOk(['write', '--url', lake, '--table', 'k2', '--schema', schema, '--bad-records', 'skip', '--quiet', input]);
const rows = await query(`SELECT id, v FROM read_parquet(${lit(path.join(lake, 'k2', '*.parquet'))}) ORDER BY id`);
check(JSON.stringify(rows) === JSON.stringify([{ id: '1', v: 'a' }, { id: '4', v: 'd' }]), `skip keeps the rows with keys: ${JSON.stringify(rows)}`);
done();
