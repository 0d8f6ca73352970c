// Conformance: appending 100,000 rows. The rows are generated here (deterministic), written in
// epochs of 30,000 rows with small files, and read back exactly (EXCEPT ALL both ways); then a
// second batch is appended to the same input and only it lands.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, lit, runOk, scalar, schemaFile, tableSql, tmpdir } from './harness.mjs';

const work = tmpdir('s3l-100k');
const lake = path.join(work, 'lake');
const input = path.join(work, 'rows.ndjson');
const gen = (from, to) => {
    const out = [];
    for (let i = from; i < to; i++)
        out.push(JSON.stringify({ id: i, name: `name-${i % 977}`, score: (i * 7919) % 10007 / 8, ok: i % 3 === 0 }));
    return out.join('\n') + '\n';
};
fs.writeFileSync(input, gen(0, 100000));
const schema = schemaFile(work, 'schema.json', [
    { name: 'id', type: 'int64', key: true }, { name: 'name', type: 'string' },
    { name: 'score', type: 'double' }, { name: 'ok', type: 'bool' }]);
const args = ['write', '--url', lake, '--table', 'rows', '--schema', schema, '--epoch-rows', '30000',
    '--file-size', '64KiB', '--quiet', input];
runOk(args);
const dir = path.join(lake, 'rows');
const src = `SELECT * FROM read_json(${lit(input)}, format='newline_delimited', columns={'id': 'BIGINT', 'name': 'VARCHAR', 'score': 'DOUBLE', 'ok': 'BOOLEAN'})`;
check(await scalar(`SELECT count(*) FROM (${tableSql(dir)})`) === 100000, '100,000 rows');
await exceptAll(src, tableSql(dir), '100,000 rows exactly');
check(await scalar(`SELECT count(DISTINCT filename) FROM read_parquet(${lit(path.join(dir, '*.parquet'))}, filename=true)`) > 4,
    'several files (epochs of 30,000 rows, 64 KiB files)');
fs.appendFileSync(input, gen(100000, 100500));
runOk(args);
check(await scalar(`SELECT count(*) FROM (${tableSql(dir)})`) === 100500, '100,500 rows after the append');
await exceptAll(src, tableSql(dir), 'append: exactly the input, no duplicates');
done();
