// What the follow-mode tests (test_cli_follow*.mjs) share: numbered NDJSON lines, an s3land
// child whose output is collected, the file:// Destination document, and the landed table's row
// count read by DuckDB. No test_ prefix: CMake does not register it as a test.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, exceptAll, lit, scalar, tableSql } from '../conformance/harness.mjs';

// Line `seq` of an input, and lines from..to (inclusive), each ending in '\n'.
export const line = (seq) => JSON.stringify({ seq, msg: `line ${seq}` }) + '\n';
export const lines = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => line(from + i)).join('');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// s3land ARGS in CWD, running on: {stdout, stderr, code, signal, child, exited}; `exited` resolves
// once it has ended, with code and signal set.
export function start(args, cwd) {
    const child = spawn(S3LAND, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '', code: null, signal: null, child };
    child.stdout.on('data', (d) => { out.stdout += d; });
    child.stderr.on('data', (d) => { out.stderr += d; });
    out.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
        out.code = code;
        out.signal = signal;
        resolve();
    }));
    return out;
}

// WORK/dest.json: the Destination "lake" at file://LAKE.
export function writeDestination(work, lake) {
    fs.writeFileSync(path.join(work, 'dest.json'), JSON.stringify({
        apiVersion: 'openetl.io/v1alpha1', kind: 'Destination', metadata: { name: 'lake' },
        spec: { connector: 's3', config: { url: `file://${lake}` } },
    }));
}

// The rows of the table at DIR (0 before its first Parquet file), counted by DuckDB.
export async function rows(dir) {
    if (!fs.existsSync(dir) || !fs.readdirSync(dir).some((f) => f.endsWith('.parquet'))) return 0;
    return scalar(`SELECT count(*) FROM read_parquet(${lit(path.join(dir, '*.parquet'))})`);
}

// Waits until the table at DIR has n rows; returns the ms it took, or -1 after limitMs.
export async function waitRows(dir, n, limitMs) {
    const t0 = Date.now();
    while (Date.now() - t0 < limitMs) {
        if (await rows(dir) >= n) return Date.now() - t0;
        await sleep(50);
    }
    return -1;
}

// DuckDB: the table at DIR holds seq 1..n exactly once (A EXCEPT ALL B both ways).
export const exactlyOnce = (dir, n, what) => exceptAll(`SELECT range AS seq FROM range(1, ${n + 1})`,
    tableSql(dir, 'seq'), `${what}: seq 1..${n} exactly once`);
