// End to end on real datasets (vega-datasets): each is written by `s3land write` with a declared
// schema, then DuckDB reads the input under the same schema (A) and the table with read_parquet over
// the table directory (B), and A EXCEPT ALL B and B EXCEPT ALL A must both be empty.
// Then: a rerun of a finished command leaves the destination byte-identical, and appending lines to
// an input lands only the new lines (the table equals the whole input, with no duplicates).
import fs from 'node:fs';
import path from 'node:path';
import {
    DATA, check, done, duckColumns, exceptAll, ident, listing, lit, parquetFiles, query, runOk,
    scalar, schemaFile, tableSql, tmpdir,
} from '../conformance/harness.mjs';

const work = tmpdir('s3l-e2e');
const lake = path.join(work, 'lake');
const url = `file://${lake}`;

// [name, arrow type, duckdb type]
const FLIGHTS = [['delay', 'int64', 'BIGINT'], ['distance', 'int64', 'BIGINT'], ['time', 'double', 'DOUBLE']];
const MOVIES = [
    ['Title', 'string', 'VARCHAR'], ['US Gross', 'int64', 'BIGINT'], ['Worldwide Gross', 'int64', 'BIGINT'],
    ['US DVD Sales', 'int64', 'BIGINT'], ['Production Budget', 'int64', 'BIGINT'],
    ['Release Date', 'string', 'VARCHAR'], ['MPAA Rating', 'string', 'VARCHAR'],
    ['Running Time min', 'int64', 'BIGINT'], ['Distributor', 'string', 'VARCHAR'], ['Source', 'string', 'VARCHAR'],
    ['Major Genre', 'string', 'VARCHAR'], ['Creative Type', 'string', 'VARCHAR'], ['Director', 'string', 'VARCHAR'],
    ['Rotten Tomatoes Rating', 'int64', 'BIGINT'], ['IMDB Rating', 'double', 'DOUBLE'], ['IMDB Votes', 'int64', 'BIGINT'],
];
const PROPS = [
    ['mag', 'double', 'DOUBLE'], ['place', 'string', 'VARCHAR'], ['time', 'int64', 'BIGINT'],
    ['updated', 'int64', 'BIGINT'], ['tz', 'int64', 'BIGINT'], ['url', 'string', 'VARCHAR'],
    ['detail', 'string', 'VARCHAR'], ['felt', 'int64', 'BIGINT'], ['cdi', 'double', 'DOUBLE'],
    ['mmi', 'double', 'DOUBLE'], ['alert', 'string', 'VARCHAR'], ['status', 'string', 'VARCHAR'],
    ['tsunami', 'int64', 'BIGINT'], ['sig', 'int64', 'BIGINT'], ['net', 'string', 'VARCHAR'],
    ['code', 'string', 'VARCHAR'], ['ids', 'string', 'VARCHAR'], ['sources', 'string', 'VARCHAR'],
    ['types', 'string', 'VARCHAR'], ['nst', 'int64', 'BIGINT'], ['dmin', 'double', 'DOUBLE'],
    ['rms', 'double', 'DOUBLE'], ['gap', 'double', 'DOUBLE'], ['magType', 'string', 'VARCHAR'],
    ['type', 'string', 'VARCHAR'], ['title', 'string', 'VARCHAR'],
];
const QUAKES = [
    ['type', 'string', 'VARCHAR'],
    ['properties', `struct<${PROPS.map(([n, t]) => `${n}: ${t}`).join(', ')}>`,
        `STRUCT(${PROPS.map(([n, , d]) => `${ident(n)} ${d}`).join(', ')})`],
    ['geometry', 'struct<type: string, coordinates: list<item: double>>',
        'STRUCT("type" VARCHAR, coordinates DOUBLE[])'],
    ['id', 'string', 'VARCHAR'],
];
const GITHUB = [['time', 'string', 'VARCHAR'], ['count', 'int64', 'BIGINT']];
const BIRDS = [
    ['Airport Name', 'string', 'VARCHAR'], ['Aircraft Make Model', 'string', 'VARCHAR'],
    ['Effect Amount of damage', 'string', 'VARCHAR'], ['Flight Date', 'date32[day]', 'DATE'],
    ['Aircraft Airline Operator', 'string', 'VARCHAR'], ['Origin State', 'string', 'VARCHAR'],
    ['Phase of flight', 'string', 'VARCHAR'], ['Wildlife Size', 'string', 'VARCHAR'],
    ['Wildlife Species', 'string', 'VARCHAR'], ['Time of day', 'string', 'VARCHAR'],
    ['Cost Other', 'int64', 'BIGINT'], ['Cost Repair', 'int64', 'BIGINT'], ['Cost Total $', 'int64', 'BIGINT'],
    ['Speed IAS in knots', 'int64', 'BIGINT'],
];

// earthquakes.json is one GeoJSON object; its features become an NDJSON input.
const quakesNd = path.join(work, 'earthquakes.ndjson');
const features = JSON.parse(fs.readFileSync(path.join(DATA, 'earthquakes.json'), 'utf8')).features;
fs.writeFileSync(quakesNd, features.map((f) => JSON.stringify(f)).join('\n') + '\n');

const readJson = (file, cols, fmt) =>
    `SELECT * FROM read_json(${lit(file)}, format=${lit(fmt)}, columns=${duckColumns(cols.map(([n, , d]) => [n, d]))})`;
const readCsv = (file, cols) =>
    `SELECT * FROM read_csv(${lit(file)}, header=true, columns=${duckColumns(cols.map(([n, , d]) => [n, d]))})`;

const datasets = [
    { table: 'flights', file: path.join(DATA, 'flights-200k.json'), format: 'json', cols: FLIGHTS, rows: 200000,
        src: (f) => readJson(f, FLIGHTS, 'array') },
    { table: 'movies', file: path.join(DATA, 'movies.json'), format: 'json', cols: MOVIES, rows: 3201,
        src: (f) => readJson(f, MOVIES, 'array') },
    { table: 'earthquakes', file: quakesNd, format: 'ndjson', cols: QUAKES, rows: 1707,
        src: (f) => readJson(f, QUAKES, 'newline_delimited') },
    { table: 'github', file: path.join(DATA, 'github.csv'), format: 'csv', cols: GITHUB, rows: 955,
        src: (f) => readCsv(f, GITHUB) },
    { table: 'birdstrikes', file: path.join(DATA, 'birdstrikes.csv'), format: 'csv', cols: BIRDS, rows: 10000,
        src: (f) => readCsv(f, BIRDS) },
];

for (const d of datasets) {
    const schema = schemaFile(work, `${d.table}.schema.json`, d.cols.map(([name, type]) => ({ name, type })));
    const args = ['write', '--url', url, '--table', d.table, '--schema', schema, '--input-format', d.format, '--quiet', d.file];
    runOk(args);
    const dir = path.join(lake, d.table);
    check(parquetFiles(dir).length >= 1, `${d.table}: at least one Parquet file`);
    const n = await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(dir, '*.parquet'))})`);
    check(n === d.rows, `${d.table}: ${d.rows} rows read back (got ${n})`);
    await exceptAll(d.src(d.file), tableSql(dir), `${d.table}`);

    // A rerun of the finished command adds nothing: the whole destination is byte-identical.
    const before = listing(lake);
    const r = runOk(args.filter((a) => a !== '--quiet'));
    check(JSON.stringify(listing(lake)) === JSON.stringify(before), `${d.table}: rerun leaves the destination byte-identical`);
    check(/nothing new|up to date/.test(r.stderr), `${d.table}: rerun says nothing was new`);
}

// Inferred schemas: without --schema the types come from the first 1,000 records; the table must
// equal the input read by DuckDB under the recorded types.
const DUCK_OF = { int64: 'BIGINT', double: 'DOUBLE', string: 'VARCHAR', 'date32[day]': 'DATE', bool: 'BOOLEAN' };
for (const d of [datasets[1], datasets[4], datasets[0]]) {
    const table = `${d.table}_inferred`;
    runOk(['write', '--url', url, '--table', table, '--input-format', d.format, '--quiet', d.file]);
    const out = runOk(['schema', '--url', url, '--table', table, '--json']);
    const rec = JSON.parse(out.stdout).record;
    const cols = (Array.isArray(rec) ? rec : rec.columns).map((c) => [c.name, c.type, DUCK_OF[c.type]]);
    check(cols.every((c) => c[2]), `${table}: inferred types ${cols.map((c) => c[1]).join(', ')}`);
    const src = d.format === 'csv' ? readCsv(d.file, cols) : readJson(d.file, cols, 'array');
    await exceptAll(src, tableSql(path.join(lake, table)), `${table}: inferred schema`);
}

// --nested-as-json: GeoJSON features' objects become json text columns holding the same values.
{
    runOk(['write', '--url', url, '--table', 'quakes_json', '--nested-as-json', '--quiet', quakesNd]);
    const rec = JSON.parse(runOk(['schema', '--url', url, '--table', 'quakes_json', '--json']).stdout).record;
    const types = (Array.isArray(rec) ? rec : rec.columns).map((c) => `${c.name}:${c.type}`).join(',');
    check(types === 'type:string,properties:json,geometry:json,id:string', `nested columns inferred as json (${types})`);
    const pick = `SELECT id, json_extract_string(properties, '$.place') AS place,
                  json_extract(properties, '$.mag')::DOUBLE AS mag,
                  json_extract(geometry, '$.coordinates[2]')::DOUBLE AS depth`;
    await exceptAll(`${pick} FROM read_json(${lit(quakesNd)}, columns={'id': 'VARCHAR', 'properties': 'JSON', 'geometry': 'JSON'})`,
        `${pick} FROM read_parquet(${lit(path.join(lake, 'quakes_json', '*.parquet'))})`, 'json text columns hold the input values');
}

// Parallel lanes: 3 encoding threads, epochs of 70,000 rows, files per lane; still exactly the input.
{
    const d = datasets[0];
    const schema = path.join(work, `${d.table}.schema.json`);
    runOk(['write', '--url', url, '--table', 'flights_lanes', '--schema', schema, '--input-format', 'json',
        '--lanes', '3', '--epoch-rows', '70000', '--quiet', d.file]);
    const dir = path.join(lake, 'flights_lanes');
    const files = parquetFiles(dir);
    // Lanes 1 and 2 are worker threads fed batch by batch; lane 0 is the reading thread, which
    // encodes records itself only while both workers are busy (so it may have no file).
    check(files.some((f) => /-g\d{20}-00001-\d{5}\.parquet$/.test(f)) &&
          files.some((f) => /-g\d{20}-00002-\d{5}\.parquet$/.test(f)) &&
          files.every((f) => /-g\d{20}-(0000[12]-)?\d{5}\.parquet$/.test(f)),
        `lanes 1 and 2 wrote files named by lane, lane 0 without (${files.length} files)`);
    await exceptAll(d.src(d.file), tableSql(dir), 'flights with 3 lanes');
}

// Appending lines to an input lands only the new lines.
{
    const part = path.join(work, 'quakes-growing.ndjson');
    const lines = features.map((f) => JSON.stringify(f));
    fs.writeFileSync(part, lines.slice(0, 700).join('\n') + '\n');
    const schema = path.join(work, 'earthquakes.schema.json');
    const args = ['write', '--url', url, '--table', 'growing', '--schema', schema, '--quiet', part];
    runOk(args);
    const dir = path.join(lake, 'growing');
    const files1 = parquetFiles(dir);
    check(await scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(dir, '*.parquet'))})`) === 700, 'growing: 700 rows after the first run');
    fs.appendFileSync(part, lines.slice(700).join('\n') + '\n');
    runOk(args);
    const files2 = parquetFiles(dir);
    check(files1.every((f) => files2.includes(f)) && files2.length > files1.length, 'growing: the second run added files and kept the first ones');
    const newFiles = files2.filter((f) => !files1.includes(f));
    const nNew = await scalar(`SELECT count(*) FROM read_parquet([${newFiles.map((f) => lit(path.join(dir, f))).join(', ')}])`);
    check(nNew === features.length - 700, `growing: the new files hold exactly the ${features.length - 700} appended lines (got ${nNew})`);
    await exceptAll(readJson(quakesNd, QUAKES, 'newline_delimited'), tableSql(dir), 'growing: whole input, no duplicates');
}

// The same pipeline from another directory, with a trailing slash and a relative input path: nothing new.
{
    const before = listing(lake);
    const rel = path.relative(work, path.join(DATA, 'github.csv'));
    runOk(['write', '--url', `${url}/`, '--table', 'github', '--schema', path.join(work, 'github.schema.json'),
        '--input-format', 'csv', '--quiet', rel], { cwd: work });
    check(JSON.stringify(listing(lake)) === JSON.stringify(before), 'github: same pipeline from another directory and URL spelling');
}

done();
