// Conformance: row-count read-back from footers. `s3land ls --table T --json` reports each data
// file's rows from its Parquet footer; DuckDB counts the rows of each file independently.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, query, run, runOk, schemaFile, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-footer');
const lake = path.join(work, 'lake');
const input = path.join(work, 'in.ndjson');
fs.writeFileSync(input, Array.from({ length: 5000 }, (_, i) => JSON.stringify({ i, s: `value ${i * 31}` })).join('\n') + '\n');
const schema = schemaFile(work, 's.json', [{ name: 'i', type: 'int64' }, { name: 's', type: 'string' }]);
runOk(['write', '--url', lake, '--table', 'f', '--schema', schema, '--epoch-rows', '1500', '--quiet', input]);
const ls = run(['ls', '--url', lake, '--table', 'f', '--json']);
check(ls.code === 0, 'ls exits 0');
const files = ls.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((o) => o.file);
check(files.length === 4, `4 files (epochs of 1500 rows + 500; got ${files.length})`);
let total = 0;
for (const f of files) {
    const [{ n }] = await query(`SELECT count(*) AS n FROM read_parquet(${lit(path.join(lake, f.file))})`);
    check(Number(n) === f.rows && f.committed === true, `${path.basename(f.file)}: ls says ${f.rows} rows, DuckDB counts ${n}`);
    total += f.rows;
}
check(total === 5000, `5000 rows in all (${total})`);
const summary = ls.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((o) => o.table && o.bytes !== undefined && !o.file && !o.marker);
check(summary?.rows === 5000 && summary?.epochs === 4, `table summary: ${JSON.stringify(summary)}`);
const all = run(['ls', '--url', lake, '--json']);
check(all.stdout.includes('"table":"f"') && all.stdout.includes('"rows":5000'), 'ls of all tables shows f with 5000 rows');
done();
