// Compressed inputs (issue 10, item 11): .gz (gzip, several members) and .zst (zstd, several
// frames) are read by extension in every format (the format from the extension before it),
// through the reader's decompressing byte source, on real data (vega-datasets) compressed here
// (gzip by node's zlib, zstd by the zstd command); DuckDB reads back the same rows as from the
// plain file. A rerun lands nothing; a file cut inside its last member (still being written) lands
// what it holds and the rest once whole, nothing twice; appended members land alone; a kill -9
// mid-run and a rerun land every row once; corrupt data is an error naming the compressed byte
// offset; a rewritten compressed file is refused with the way forward.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { DATA, S3LAND, check, done, exceptAll, lit, run, runOk, scalar, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-compressed');
const lake = path.join(work, 'lake');
const table = (t) => path.join(lake, t);
const count = async (t) => scalar(`SELECT count(*)::INT FROM read_parquet(${lit(path.join(table(t), '*.parquet'))})`);
const zstd = (buf) => {
    const r = spawnSync('zstd', ['-q', '-c', '-3'], { input: buf, maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`zstd: ${r.stderr}`);
    return r.stdout;
};
// Two members (frames): the text split at a byte in its middle, each part compressed alone.
const pack = (kind, text) => {
    const b = Buffer.from(text), mid = b.length >> 1;
    const one = kind === 'gz' ? zlib.gzipSync : zstd;
    return Buffer.concat([one(b.subarray(0, mid)), one(b.subarray(mid))]);
};

const carsText = fs.readFileSync(path.join(DATA, 'cars.json'), 'utf8');
const carsLines = JSON.parse(carsText).map((o) => JSON.stringify(o)).join('\n') + '\n';
const plain = {
    csv: ['stocks.csv', fs.readFileSync(path.join(DATA, 'stocks.csv'), 'utf8'), 'symbol, date, price::VARCHAR AS price',
        (f) => `SELECT symbol, date, price::DOUBLE::VARCHAR AS price FROM read_csv(${lit(f)}, all_varchar = true)`],
    json: ['cars.json', carsText, 'Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin',
        (f) => `SELECT Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin FROM read_json(${lit(f)})`],
    ndjson: ['cars.ndjson', carsLines, 'Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin',
        (f) => `SELECT Name, Miles_per_Gallon::DOUBLE AS mpg, Horsepower::DOUBLE AS hp, Origin FROM read_json(${lit(f)}, format = 'newline_delimited')`],
};

for (const [fmt, [name, text, cols, duck]] of Object.entries(plain)) {
    const plainFile = path.join(work, name);
    fs.writeFileSync(plainFile, text);
    const want = await scalar(`SELECT count(*)::INT FROM (${duck(plainFile)})`);
    for (const kind of ['gz', 'zst']) {
        const t = `${fmt}_${kind}`, packed = pack(kind, text);
        // Whole: the same rows as DuckDB reads from the plain file; a rerun lands nothing.
        const f = path.join(work, `${name}.${kind}`);
        fs.writeFileSync(f, packed);
        runOk(['write', '--url', lake, '--table', t, f]);
        await exceptAll(tableSql(table(t), cols), duck(plainFile), `${path.basename(f)}: the rows of ${name}`);
        check(await count(t) === want, `${t}: ${want} rows`);
        let r = runOk(['write', '--url', lake, '--table', t, f]);
        check(r.stderr.includes('nothing new'), `${t}: a rerun lands nothing (${r.stderr.trim()})`);

        // Cut inside its last member, as a file still being written: what it holds lands, with
        // a note; the rerun of the same bytes lands nothing; once whole, the rest lands, once.
        const tc = `${t}_cut`, fc = path.join(work, `cut-${name}.${kind}`);
        const cutAt = packed.length - Math.floor(packed.length / 5);
        fs.writeFileSync(fc, packed.subarray(0, cutAt));
        r = runOk(['write', '--url', lake, '--table', tc, fc]);
        check(r.stderr.includes(`the compressed data ends inside its last ${kind === 'gz' ? 'gzip member' : 'zstd frame'}`),
            `${tc}: the cut member is said (${r.stderr.trim()})`);
        const first = fs.existsSync(table(tc)) ? await count(tc) : 0;
        check(first > 0 && first < want, `${tc}: ${first} of ${want} rows land from the cut file`);
        r = runOk(['write', '--url', lake, '--table', tc, fc]);
        check(fs.existsSync(table(tc)) && await count(tc) === first, `${tc}: the rerun of the same bytes lands nothing more`);
        fs.appendFileSync(fc, packed.subarray(cutAt));
        runOk(['write', '--url', lake, '--table', tc, fc]);
        await exceptAll(tableSql(table(tc), cols), duck(plainFile), `${tc}: once whole, every row once`);
    }
}

// NDJSON: a member appended later lands alone (the first run's rows are not read twice).
const fa = path.join(work, 'append.ndjson.gz'), la = carsLines.split('\n').filter(Boolean);
fs.writeFileSync(fa, zlib.gzipSync(la.slice(0, 200).join('\n') + '\n'));
runOk(['write', '--url', lake, '--table', 'app', fa]);
fs.appendFileSync(fa, zlib.gzipSync(la.slice(200).join('\n') + '\n'));
let r = runOk(['write', '--url', lake, '--table', 'app', fa]);
check(r.stderr.includes(`wrote ${la.length - 200} rows`), `an appended gzip member lands its ${la.length - 200} rows alone (${r.stderr.trim()})`);
await exceptAll(tableSql(table('app'), plain.ndjson[2]), plain.ndjson[3](path.join(work, 'cars.ndjson')), 'append: every row once');

// --input-format still decides: a .gz without a format extension read as csv.
const fx = path.join(work, 'stocks.gz');
fs.writeFileSync(fx, zlib.gzipSync(plain.csv[1]));
runOk(['write', '--url', lake, '--table', 'fmt', '--input-format', 'csv', fx]);
await exceptAll(tableSql(table('fmt'), plain.csv[2]), plain.csv[3](path.join(work, 'stocks.csv')), 'stocks.gz with --input-format csv');

// Corrupt data: an error naming the file and the compressed byte offset (exit 2), nothing landed.
for (const kind of ['gz', 'zst']) {
    const bad = Buffer.from(pack(kind, plain.csv[1]));
    bad.fill(0x55, 400, 420);
    const fb = path.join(work, `bad.csv.${kind}`);
    fs.writeFileSync(fb, bad);
    // --bad-records skip: rows the garbage decoded before the fault makes are skipped; the
    // corrupt data itself stops the run in every mode (nothing after it can be read).
    r = run(['write', '--url', lake, '--table', `bad_${kind}`, '--bad-records', 'skip', fb]);
    check(r.code === 2 && new RegExp(`${fb.replaceAll('.', '\\.')}: the ${kind === 'gz' ? 'gzip' : 'zstd'} data is corrupt at compressed byte offset \\d+`).test(r.stderr),
        `corrupt ${kind}: exit 2 naming the compressed byte offset (${r.code} ${r.stderr.trim()})`);
    check(!fs.existsSync(table(`bad_${kind}`)), `corrupt ${kind}: nothing landed`);
}

// A compressed file rewritten since its commit: refused with the way forward (exit 2).
const fr = path.join(work, 'rewrite.ndjson.zst');
fs.writeFileSync(fr, zstd(Buffer.from(carsLines)));
runOk(['write', '--url', lake, '--table', 'rw', fr]);
fs.writeFileSync(fr, zstd(Buffer.from(carsLines.replaceAll('USA', 'US').repeat(2))));
r = run(['write', '--url', lake, '--table', 'rw', fr]);
check(r.code === 2 && r.stderr.includes(`input ${fr} was rewritten: its compressed bytes before byte`) && r.stderr.includes('give a new --pipeline-id'),
    `a rewritten .zst refused with the way forward (${r.code} ${r.stderr.trim()})`);

// kill -9 mid-run, then a rerun: every row of flights-200k exactly once (DuckDB EXCEPT ALL both ways).
const flights = JSON.parse(fs.readFileSync(path.join(DATA, 'flights-200k.json'), 'utf8'));
const fk = path.join(work, 'flights.ndjson.gz');
fs.writeFileSync(fk, zlib.gzipSync(flights.map((o) => JSON.stringify(o)).join('\n') + '\n'));
const kid = spawn(S3LAND, ['write', '--url', lake, '--table', 'kill', '--epoch-rows', '20000', fk], { stdio: 'ignore' });
const markers = path.join(lake, '_openetl', 'markers', 'kill');
for (let i = 0; i < 400 && !(fs.existsSync(markers) && fs.readdirSync(markers).length >= 2); i++)
    await new Promise((res) => setTimeout(res, 25));
kid.kill('SIGKILL');
await new Promise((res) => kid.on('exit', res));
const before = fs.existsSync(markers) ? fs.readdirSync(markers).length : 0;
check(before >= 1 && before < 10, `killed after ${before} committed epochs of 10`);
runOk(['write', '--url', lake, '--table', 'kill', '--epoch-rows', '20000', fk]);
await exceptAll(tableSql(table('kill'), 'delay::BIGINT AS delay, distance::BIGINT AS distance, time::DOUBLE AS time'),
    `SELECT delay::BIGINT AS delay, distance::BIGINT AS distance, time::DOUBLE AS time FROM read_json(${lit(path.join(DATA, 'flights-200k.json'))})`,
    'flights.ndjson.gz killed and rerun: every row once');
done();
