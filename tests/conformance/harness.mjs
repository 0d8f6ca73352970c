// Shared helpers of the CLI's end-to-end and conformance tests (not a test itself: no test_ prefix).
//
// - run(): runs the s3land CLI ($S3LAND) and returns its exit code and output;
// - duck(): DuckDB in memory, extension autoload and autoinstall OFF, as the independent reader;
// - exceptAll(): exact equality of two SQL queries (A EXCEPT ALL B and B EXCEPT ALL A empty);
// - listing(): every file under a directory with its size and SHA-256, for "nothing changed" checks.
// Values the tests expect come from DuckDB reading the input, or are written down in the test.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { mirror, toStoreArgs } from './store.mjs';

// STORE: 'file' or 's3'. mirror(): brings the local copy of every s3:// lake of the test up to
// date now (run() does it after each CLI run; file://: nothing to do), for a test that reads the
// lake while a CLI it spawned itself still runs.
export { STORE, mirror } from './store.mjs';

export const SOURCE_DIR = process.env.S3L_SOURCE_DIR ?? path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
export const BUILD_DIR = process.env.S3L_BUILD_DIR ?? path.join(SOURCE_DIR, 'build');
export const S3LAND = process.env.S3LAND ?? path.join(BUILD_DIR, 's3land');
export const DATA = path.join(SOURCE_DIR, 'node_modules/vega-datasets/data');

const require = createRequire(path.join(SOURCE_DIR, 'package.json'));

let failures = 0;
export function check(cond, what) {
    if (cond) {
        console.log(`ok - ${what}`);
    } else {
        failures++;
        console.log(`not ok - ${what}`);
    }
    return cond;
}

export function fail(what) {
    check(false, what);
}

// Ends the test: exit 1 if any check failed. Never exits 77 (a skip counts as a failure in CI).
export function done() {
    if (failures) {
        console.log(`${failures} check(s) failed`);
        process.exit(1);
    }
    console.log('all checks passed');
}

const tmpRoots = [];
export function tmpdir(tag = 's3l') {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `${tag}-`));
    tmpRoots.push(d);
    return d;
}
process.on('exit', () => {
    if (!process.env.S3L_KEEP_TMP)
        for (const d of tmpRoots) fs.rmSync(d, { recursive: true, force: true });
});

// Runs s3land with args; opts: { input (stdin data), cwd, env, bin }. With S3L_TEST_STORE=s3 the
// --url goes to S3 and the lake is mirrored back into the temp directory after the run (store.mjs).
export function run(args, opts = {}) {
    const r = spawnSync(opts.bin ?? S3LAND, toStoreArgs(args, tmpRoots, opts.cwd), {
        input: opts.input,
        cwd: opts.cwd,
        env: { ...process.env, ...(opts.env ?? {}) },
        encoding: 'utf8',
        maxBuffer: 64 << 20,
    });
    if (r.error) throw r.error;
    mirror();
    return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

// The destination URL the CLI is given for a local lake directory: dir itself on file://, its
// s3://BUCKET/... URL with S3L_TEST_STORE=s3 (store.mjs).
export const destUrl = (dir) => toStoreArgs(['--url', dir], tmpRoots)[1];

// Runs s3land and requires exit code `want` (default 0); prints the output when it differs.
export function runOk(args, opts = {}, want = 0) {
    const r = run(args, opts);
    if (!check(r.code === want, `s3land ${args.join(' ')} exits ${want} (got ${r.code})`)) {
        console.log(r.stdout);
        console.log(r.stderr);
    }
    return r;
}

let duckCon = null;
export async function duck() {
    if (duckCon) return duckCon;
    const { DuckDBInstance } = require('@duckdb/node-api');
    const inst = await DuckDBInstance.create(':memory:', {
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
        threads: '2',
    });
    duckCon = await inst.connect();
    return duckCon;
}

// Rows of a query as JSON-safe objects (BIGINT as strings).
export async function query(sql) {
    const con = await duck();
    const r = await con.runAndReadAll(sql);
    return r.getRowObjectsJson();
}

export async function scalar(sql) {
    const rows = await query(sql);
    const v = Object.values(rows[0])[0];
    return typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
}

// SQL quoting of a string literal and an identifier.
export const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;
export const ident = (s) => `"${String(s).replaceAll('"', '""')}"`;

// Exact multiset equality of the rows of sqlA and sqlB; prints up to 5 differing rows each way.
export async function exceptAll(sqlA, sqlB, what) {
    const ab = await query(`SELECT * FROM ((${sqlA}) EXCEPT ALL (${sqlB})) LIMIT 5`);
    const ba = await query(`SELECT * FROM ((${sqlB}) EXCEPT ALL (${sqlA})) LIMIT 5`);
    const ok = check(ab.length === 0 && ba.length === 0, `${what}: A EXCEPT ALL B and B EXCEPT ALL A are empty`);
    if (!ok) {
        console.log('in A, not in B:', JSON.stringify(ab));
        console.log('in B, not in A:', JSON.stringify(ba));
    }
    return ok;
}

// read_parquet over a table directory (every committed file).
export const tableSql = (dir, cols = '*') =>
    `SELECT ${cols} FROM read_parquet(${lit(path.join(dir, '*.parquet'))})`;

// Every file under dir (recursively): relative path, size and SHA-256, sorted by path.
export function listing(dir) {
    const out = [];
    const walk = (d) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const p = path.join(d, e.name);
            if (e.isDirectory()) walk(p);
            else {
                const data = fs.readFileSync(p);
                out.push(`${path.relative(dir, p)} ${data.length} ${createHash('sha256').update(data).digest('hex')}`);
            }
        }
    };
    if (fs.existsSync(dir)) walk(dir);
    return out.sort();
}

// Data files (*.parquet) of a table directory, sorted.
export function parquetFiles(dir) {
    if (!fs.existsSync(dir)) return [];
    return fs.readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort();
}

// Writes a declared schema file and returns its path.
export function schemaFile(dir, name, columns) {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify(columns, null, 1));
    return p;
}

// DuckDB columns={...} text for a declared schema, given DuckDB type names per column.
export const duckColumns = (cols) =>
    `{${cols.map(([n, t]) => `${lit(n)}: ${lit(t)}`).join(', ')}}`;
