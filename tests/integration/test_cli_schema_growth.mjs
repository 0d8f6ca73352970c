// Inferred schemas grow: a key first seen after the inference sample, and a column that was null
// in the whole sample, become columns when their first value arrives (issue 3, item 5: "an all-null
// column waits for its first non-null value"): the epoch before that record is committed, the
// schema record gains the column, and later files have it. With 1 and with 2 lanes, the table read
// by DuckDB (union_by_name over its files) equals the input read under the recorded types, and a
// rerun adds nothing.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, listing, lit, run, runOk, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-grow');
const lake = path.join(work, 'lake');
const input = path.join(work, 'in.ndjson');
const rows = [];
for (let i = 0; i < 3000; i++) {
    const r = { id: i, name: `n${i}`, later: null };
    if (i >= 50) r.later = i + 0.25;          // null in the sample, then doubles
    if (i >= 1200) r.extra = `e${i % 17}`;    // a key that appears after the sample
    if (i >= 2500) r.tags = [i % 3, i % 5];   // and a list
    rows.push(JSON.stringify(r));
}
fs.writeFileSync(input, rows.join('\n') + '\n');
const DUCK = { int64: 'BIGINT', string: 'VARCHAR', double: 'DOUBLE', 'list<item: int64>': 'BIGINT[]' };
for (const lanes of ['1', '2']) {
    const table = `grow${lanes}`;
    const args = ['write', '--url', lake, '--table', table, '--infer-rows', '20', '--epoch-rows', '700',
        '--lanes', lanes, '--json', input];
    const r = runOk(args);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop());
    check(summary.rows === 3000 && summary.values_ignored === 0, `lanes ${lanes}: 3000 rows, no value ignored (${JSON.stringify(summary)})`);
    const rec = JSON.parse(run(['schema', '--url', lake, '--table', table, '--json']).stdout).record;
    const cols = (Array.isArray(rec) ? rec : rec.columns).map((c) => [c.name, c.type]);
    check(JSON.stringify(cols) === JSON.stringify([['id', 'int64'], ['name', 'string'], ['later', 'double'],
        ['extra', 'string'], ['tags', 'list<item: int64>']]), `lanes ${lanes}: the record grew: ${JSON.stringify(cols)}`);
    const colSql = `{${cols.map(([n, t]) => `${lit(n)}: ${lit(DUCK[t])}`).join(', ')}}`;
    await exceptAll(`SELECT * FROM read_json(${lit(input)}, columns=${colSql})`,
        `SELECT ${cols.map(([n]) => `"${n}"`).join(', ')} FROM read_parquet(${lit(path.join(lake, table, '*.parquet'))}, union_by_name=true)`,
        `lanes ${lanes}: every value landed`);
    const before = listing(lake);
    runOk(args);
    check(JSON.stringify(listing(lake)) === JSON.stringify(before), `lanes ${lanes}: a rerun adds nothing`);
}
done();
