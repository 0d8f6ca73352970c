// Inputs as users have them (issue 10, item 11), on real data (vega-datasets), each table read
// back by DuckDB and compared with DuckDB's own reading of the source file:
// - without --input-format the format comes from the extension (.csv, .tsv, .json, .jsonl,
//   .ndjson); inputs whose extensions disagree are refused clearly, and a .gz that is not gzip;
// - a CSV separated by ';', tabs or '|' is split by the delimiter detected from its header, and
//   the run says what it detected;
// - an input read in the wrong format says which --input-format to give.
import fs from 'node:fs';
import path from 'node:path';
import { DATA, check, done, exceptAll, lit, run, runOk, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-inputs-formats');
const lake = path.join(work, 'lake');
const table = (t) => path.join(lake, t);
const at = (name, text) => {
    const p = path.join(work, name);
    fs.writeFileSync(p, text);
    return p;
};

// CSV by extension: the same rows as DuckDB's read_csv of the file (all as text, compared as
// text: our price is double, and a double's text in DuckDB is its shortest round trip).
const stocksText = fs.readFileSync(path.join(DATA, 'stocks.csv'), 'utf8');
const stocks = at('stocks.csv', stocksText);
runOk(['write', '--url', lake, '--table', 'stocks', stocks]);
const duckStocks = `SELECT symbol, date, price::DOUBLE::VARCHAR AS price FROM read_csv(${lit(stocks)}, all_varchar = true)`;
await exceptAll(tableSql(table('stocks'), 'symbol, date, price::VARCHAR AS price'), duckStocks,
    'stocks.csv by its extension');
const nStocks = await scalar(`SELECT count(*)::INT FROM read_csv(${lit(stocks)})`);
check(nStocks === 560 && await scalar(`SELECT count(*)::INT FROM read_parquet(${lit(path.join(table('stocks'), '*.parquet'))})`) === nStocks,
    `stocks.csv: ${nStocks} rows, as DuckDB reads them`);

// The same file separated by ';' and by '|' (no value holds either): detected, said, and the
// same table.
for (const [name, d, said] of [['semi', ';', "';'"], ['pipe', '|', "'|'"]]) {
    const f = at(`stocks-${name}.csv`, stocksText.replaceAll(',', d));
    const r = runOk(['write', '--url', lake, '--table', name, f]);
    check(r.stderr.includes(`note: ${f}: CSV fields separated by ${said} (detected from the header row)`),
        `${name}: the detected delimiter is said (${r.stderr.trim()})`);
    await exceptAll(tableSql(table(name), 'symbol, date, price::VARCHAR AS price'), duckStocks,
        `stocks separated by ${d}`);
}

// TSV by extension: unemployment.tsv (id, rate) as DuckDB reads it with delim '\t'.
const tsv = at('unemployment.tsv', fs.readFileSync(path.join(DATA, 'unemployment.tsv')));
let r = runOk(['write', '--url', lake, '--table', 'unemp', tsv]);
check(r.stderr.includes(`note: ${tsv}: CSV fields separated by tabs`), `tsv: tabs said (${r.stderr.trim()})`);
await exceptAll(tableSql(table('unemp'), 'id::BIGINT AS id, rate::DOUBLE AS rate'),
    `SELECT id::BIGINT AS id, rate::DOUBLE AS rate FROM read_csv(${lit(tsv)}, delim = '\t', header = true)`,
    'unemployment.tsv by its extension');
check(await scalar(`SELECT count(*)::INT FROM read_parquet(${lit(path.join(table('unemp'), '*.parquet'))})`) === 3218,
    'unemployment.tsv: 3218 rows');

// A JSON array by extension (.json), and the same records as NDJSON (.jsonl, .ndjson).
const carsText = fs.readFileSync(path.join(DATA, 'cars.json'), 'utf8');
const cars = at('cars.json', carsText);
const carsLines = JSON.parse(carsText).map((o) => JSON.stringify(o)).join('\n') + '\n';
const duckCars = `SELECT Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin FROM read_json(${lit(cars)})`;
for (const [t, f] of [['cars', cars], ['carsl', at('cars.jsonl', carsLines)], ['carsn', at('cars.ndjson', carsLines)]]) {
    runOk(['write', '--url', lake, '--table', t, f]);
    await exceptAll(tableSql(table(t), 'Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin'),
        duckCars, `${path.basename(f)} by its extension`);
}

// --input-format still decides: cars.jsonl read as json (objects back to back) lands the same.
runOk(['write', '--url', lake, '--table', 'carsj', '--input-format', 'json', path.join(work, 'cars.jsonl')]);
await exceptAll(tableSql(table('carsj'), 'Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin'),
    duckCars, 'cars.jsonl with --input-format json');

// Extensions that disagree: a usage error (exit 1) that says what to do.
r = run(['write', '--url', lake, '--table', 'mix', stocks, path.join(work, 'cars.ndjson')]);
check(r.code === 1 && r.stderr.includes(`inputs ${stocks} (csv) and ${path.join(work, 'cars.ndjson')} (ndjson) differ in format by their extensions: give --input-format`),
    `mixed extensions refused (${r.code} ${r.stderr.trim()})`);
// A .gz input is read as gzip (test_cli_compressed.mjs): one that is not gzip is corrupt data.
const gz = at('stocks.csv.gz', 'not really gzip');
r = run(['write', '--url', lake, '--table', 'gz', gz]);
check(r.code === 2 && r.stderr.includes(`${gz}: the gzip data is corrupt at compressed byte offset `) && r.stderr.includes("(incorrect header check)"),
    `a .gz input that is not gzip refused clearly (${r.code} ${r.stderr.trim()})`);
check(!fs.existsSync(table('mix')) && !fs.existsSync(table('gz')), 'nothing landed for refused runs');

// The wrong format says which flag to give (exit 2, nothing landed).
const hint = {
    csv: 'the input starts like CSV: give --input-format csv',
    json: 'the input starts like JSON that is not one object per line (a JSON array, or objects spread over lines): give --input-format json',
    nd: 'the input starts like JSON, not CSV: give --input-format ndjson (one object per line) or json (an array)',
};
const wrong = [
    ['w1', ['--input-format', 'ndjson', stocks], `${stocks} line 1, column 1 (byte offset 0): expected a value (object, array, string, number, true, false, null); ${hint.csv}`],
    ['w2', ['--input-format', 'ndjson', cars], `${cars} line 1, column 2 (byte offset 1): expected a value (object, array, string, number, true, false, null); ${hint.json}`],
    ['w3', ['--input-format', 'json', stocks], `${stocks} line 1 (byte offset 0): expected '[' (a JSON array of objects) or '{' (objects); ${hint.csv}`],
    ['w4', ['--input-format', 'csv', path.join(work, 'cars.ndjson')], `line 1: expected a CSV header row, got what looks like JSON; ${hint.nd}`],
    ['w5', ['--input-format', 'csv', cars], `line 1: expected a CSV header row, got what looks like JSON; ${hint.nd}`],
    // No extension that names a format: NDJSON, as before, and the hint.
    ['w6', [at('stocks.txt', stocksText)], `line 1, column 1 (byte offset 0): expected a value (object, array, string, number, true, false, null); ${hint.csv}`],
];
for (const [t, args, want] of wrong) {
    r = run(['write', '--url', lake, '--table', t, ...args]);
    check(r.code === 2 && r.stderr.includes(want), `${t}: ${want} (${r.code} ${r.stderr.trim()})`);
    check(!fs.existsSync(table(t)), `${t}: nothing landed`);
}
done();
