// A value that fits the recorded type lands in it (issue 10, item 3): inference must not fight
// the table's schema record. JSON: "A17" lands `code` as string; an appended "2024-01-01" (which
// alone infers date32) is text and fits string: exit 0, no SCHEMA_DRIFT, the record stays string,
// and with --type-changes allow the record is not switched to date32 (so a later "B99" lands too).
// An integer fits a recorded double and a recorded decimal. CSV the same: a column of text, then a
// file of timestamps only, lands as string. A value that does not fit (text into a recorded
// timestamp) is still drift (exit 4). Values read back by DuckDB and compared with the inputs.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, lit, query, run, runOk, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-fits');
const lake = path.join(work, 'lake');
const put = (name, text) => {
    const f = path.join(work, name);
    fs.writeFileSync(f, text);
    return f;
};
const recordOf = (table) => {
    const rec = JSON.parse(run(['schema', '--url', lake, '--table', table, '--json']).stdout).record;
    return Object.fromEntries((Array.isArray(rec) ? rec : rec.columns).map((c) => [c.name, c.type]));
};
const values = async (table, col) =>
    (await query(`SELECT ${col} AS v FROM read_parquet(${lit(path.join(lake, table, '*.parquet'))}, union_by_name=true) ORDER BY v`))
        .map((r) => r.v);

// JSON text into a string column, in both --type-changes modes.
for (const mode of ['refuse', 'allow']) {
    const t = `code_${mode}`;
    runOk(['write', '--url', lake, '--table', t, put(`a-${mode}.ndjson`, '{"code":"A17"}\n')]);
    const r = run(['write', '--url', lake, '--table', t, '--type-changes', mode, put(`b-${mode}.ndjson`, '{"code":"2024-01-01"}\n')]);
    check(r.code === 0, `${mode}: "2024-01-01" into string code exits 0 (got ${r.code}: ${r.stderr.trim()})`);
    check(recordOf(t).code === 'string', `${mode}: the record keeps code as string (${recordOf(t).code})`);
    const r2 = run(['write', '--url', lake, '--table', t, '--type-changes', mode, put(`c-${mode}.ndjson`, '{"code":"B99"}\n')]);
    check(r2.code === 0, `${mode}: then "B99" exits 0 (got ${r2.code}: ${r2.stderr.trim()})`);
    const got = await values(t, 'code');
    check(JSON.stringify(got) === JSON.stringify(['2024-01-01', 'A17', 'B99']), `${mode}: DuckDB reads ${JSON.stringify(got)}`);
}

// An integer fits a recorded double and a recorded decimal.
runOk(['write', '--url', lake, '--table', 'num', put('n1.ndjson', '{"d":1.5,"m":12345678901234567890123}\n')]);
check(JSON.stringify(recordOf('num')) === JSON.stringify({ d: 'double', m: 'decimal128(38, 0)' }), `num: recorded ${JSON.stringify(recordOf('num'))}`);
const rn = run(['write', '--url', lake, '--table', 'num', put('n2.ndjson', '{"d":2,"m":7}\n')]);
check(rn.code === 0, `integers into double and decimal exit 0 (got ${rn.code}: ${rn.stderr.trim()})`);
check(JSON.stringify(recordOf('num')) === JSON.stringify({ d: 'double', m: 'decimal128(38, 0)' }), `num: the record is unchanged`);
const d = await values('num', 'd');
check(JSON.stringify(d) === JSON.stringify([1.5, 2]), `num: DuckDB reads d = ${JSON.stringify(d)}`);

// CSV: text, then timestamps only, then booleans only: all land in the string column.
runOk(['write', '--url', lake, '--table', 'csv', '--input-format', 'csv', put('t1.csv', 'id,when\n1,soon\n')]);
const rc1 = run(['write', '--url', lake, '--table', 'csv', '--input-format', 'csv', put('t2.csv', 'id,when\n2,2024-01-01 10:00:00\n3,2024-02-03T04:05:06\n')]);
check(rc1.code === 0, `CSV timestamps into string exit 0 (got ${rc1.code}: ${rc1.stderr.trim()})`);
const rc2 = run(['write', '--url', lake, '--table', 'csv', '--input-format', 'csv', put('t3.csv', 'id,when\n4,true\n')]);
check(rc2.code === 0, `CSV booleans into string exit 0 (got ${rc2.code}: ${rc2.stderr.trim()})`);
check(recordOf('csv').when === 'string', `CSV: the record keeps when as string (${recordOf('csv').when})`);
const w = await values('csv', '"when"');
check(JSON.stringify(w) === JSON.stringify(['2024-01-01 10:00:00', '2024-02-03T04:05:06', 'soon', 'true']), `CSV: DuckDB reads ${JSON.stringify(w)}`);

// A value that does not fit is still drift: text into a recorded timestamp.
runOk(['write', '--url', lake, '--table', 'ts', put('s1.ndjson', '{"at":"2024-01-01T00:00:00"}\n')]);
const rd = run(['write', '--url', lake, '--table', 'ts', put('s2.ndjson', '{"at":"later"}\n')]);
check(rd.code === 4 && /changed type from timestamp\[us\] to string/.test(rd.stderr), `text into a timestamp is drift (exit ${rd.code}: ${rd.stderr.trim()})`);
done();
