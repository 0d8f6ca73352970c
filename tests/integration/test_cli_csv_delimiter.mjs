// --csv-delimiter (issue 10, item 11): the delimiter given overrides the one detected from the
// header row, on real data (vega-datasets), each table read back by DuckDB and compared with
// DuckDB's own read_csv of the file with that delimiter; tab is written \t or tab; a quote, a
// line break, more than one character and a non-CSV input are refused with a clear message; the
// delimiter is recorded with the checkpoint, so a rerun without the flag splits the appended
// rows as the first run did, and one with another delimiter is refused with the way forward.
import fs from 'node:fs';
import path from 'node:path';
import { DATA, check, done, exceptAll, lit, run, runOk, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-csv-delim');
const lake = path.join(work, 'lake');
const table = (t) => path.join(lake, t);
const at = (name, text) => {
    const p = path.join(work, name);
    fs.writeFileSync(p, text);
    return p;
};
const count = async (t) => scalar(`SELECT count(*)::INT FROM read_parquet(${lit(path.join(table(t), '*.parquet'))})`);

// stocks.csv separated by ';', with a header name that holds a ',' ("price,usd"): detection takes
// ',' (the header has one), which is wrong here; --csv-delimiter ';' gives the three columns.
const stocksLines = fs.readFileSync(path.join(DATA, 'stocks.csv'), 'utf8').trimEnd().split('\n');
const semiLines = stocksLines.map((l, i) => (i === 0 ? 'symbol;date;price,usd' : l.replaceAll(',', ';')));
const head = semiLines.slice(0, 301).join('\n') + '\n', tail = semiLines.slice(301).join('\n') + '\n';
const semi = at('stocks-semi.csv', head);
const duck = (f) => `SELECT symbol, date, "price,usd"::DOUBLE::VARCHAR AS price FROM read_csv(${lit(f)}, delim = ';', header = true, all_varchar = true)`;
let r = runOk(['write', '--url', lake, '--table', 'semi', '--csv-delimiter', ';', semi]);
check(!r.stderr.includes('detected from the header'), `no detection note when the delimiter is given (${r.stderr.trim()})`);
await exceptAll(tableSql(table('semi'), 'symbol, date, "price,usd"::VARCHAR AS price'), duck(semi), '--csv-delimiter ; over a header holding ,');
check(await count('semi') === 300, 'semi: 300 rows');

// Rows appended, rerun without the flag: split on the recorded ';' (detection would say ',').
fs.appendFileSync(semi, tail);
r = runOk(['write', '--url', lake, '--table', 'semi', semi]);
await exceptAll(tableSql(table('semi'), 'symbol, date, "price,usd"::VARCHAR AS price'), duck(semi), 'the appended rows split on the recorded delimiter');
check(await count('semi') === stocksLines.length - 1, `semi: ${stocksLines.length - 1} rows after the rerun`);
// Another delimiter than the recorded one: refused before anything moves (exit 2).
fs.appendFileSync(semi, 'XYZ;Jan 1 2011;1.5\n');
r = run(['write', '--url', lake, '--table', 'semi', '--csv-delimiter', '|', semi]);
check(r.code === 2 && r.stderr.includes("--csv-delimiter '|' differs from the delimiter ';' its committed rows were split on; give the same one (or none), or land it as a new input with a new --pipeline-id"),
    `another delimiter on resume refused (${r.code} ${r.stderr.trim()})`);
check(await count('semi') === stocksLines.length - 1, 'semi: nothing landed by the refused run');
runOk(['write', '--url', lake, '--table', 'semi', '--csv-delimiter', ';', semi]);
check(await count('semi') === stocksLines.length, 'semi: the same delimiter given again lands the new row');

// Tab, as \t and as tab, on unemployment.tsv read under a .txt name (no extension, no detection
// wanted: --input-format csv).
const tsvText = fs.readFileSync(path.join(DATA, 'unemployment.tsv'));
for (const [t, d] of [['tab1', '\\t'], ['tab2', 'tab'], ['tab3', '\t']]) {
    const f = at(`${t}.txt`, tsvText);
    runOk(['write', '--url', lake, '--table', t, '--input-format', 'csv', '--csv-delimiter', d, f]);
    await exceptAll(tableSql(table(t), 'id::BIGINT AS id, rate::DOUBLE AS rate'),
        `SELECT id::BIGINT AS id, rate::DOUBLE AS rate FROM read_csv(${lit(f)}, delim = '\t', header = true)`,
        `--csv-delimiter ${JSON.stringify(d)}`);
}
check(await count('tab1') === 3218, 'tab1: 3218 rows');

// '|' given for a file whose header would be detected as ',' otherwise: every field one column.
const pipeText = 'a|b,c\n1|x,y\n2|z\n';
const pipe = at('pipe.csv', pipeText);
runOk(['write', '--url', lake, '--table', 'pipe', '--csv-delimiter', '|', pipe]);
await exceptAll(tableSql(table('pipe'), 'a::BIGINT AS a, "b,c"'),
    `SELECT a::BIGINT AS a, "b,c" FROM read_csv(${lit(pipe)}, delim = '|', header = true)`, "--csv-delimiter '|'");

// Refused: exit 1, saying what was expected; nothing landed.
const refused = [
    ['"', 'the quote \'"\' cannot separate fields'],
    ['\n', 'a line break cannot separate fields'],
    ['\r', 'a line break cannot separate fields'],
    [';;', 'got more than one'],
    ['', 'got nothing'],
    ['é', 'got more than one'],
    ['\x01', 'got a control character'],
];
for (const [d, why] of refused) {
    r = run(['write', '--url', lake, '--table', 'bad', '--csv-delimiter', d, pipe]);
    check(r.code === 1 && r.stderr.includes(`--csv-delimiter: CSV delimiter "${d}": `) && r.stderr.includes(why),
        `--csv-delimiter ${JSON.stringify(d)} refused (${r.code} ${r.stderr.trim()})`);
}
r = run(['write', '--url', lake, '--table', 'bad', '--csv-delimiter', ';', at('x.ndjson', '{"a":1}\n')]);
check(r.code === 1 && r.stderr.includes('--csv-delimiter applies to CSV input only, and the input format is ndjson'),
    `--csv-delimiter with NDJSON refused (${r.code} ${r.stderr.trim()})`);
check(!fs.existsSync(table('bad')), 'nothing landed for refused runs');
done();
