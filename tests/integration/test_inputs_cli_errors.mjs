// Input-side behaviour through the CLI, with expected values written by hand or read by DuckDB:
// - an error in pretty-printed JSON names the line and column of the offending byte;
// - integers past int64 land exactly as decimal128(38, 0) (DuckDB reads them back as text);
// - an endless line (/dev/zero) is reported at once, not after reading forever;
// - a sample whose only key cannot name a column ({"":1}) says so.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { S3LAND, check, done, query, lit, run, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-inputs-cli');
const lake = path.join(work, 'lake');

// '@' is byte 13 of the file, the 12th byte of line 2.
const pretty = path.join(work, 'x.json');
fs.writeFileSync(pretty, '[\n  {"a": 3, @}\n]');
let r = run(['write', '--url', lake, '--table', 't', '--input-format', 'json', pretty]);
check(r.code !== 0 && r.stderr.includes('x.json line 2, column 12 (byte offset 13): expected a member name'),
    `pretty-printed JSON: line 2, column 12 (${r.stderr.trim()})`);

const big = path.join(work, 'big.csv');
fs.writeFileSync(big, 'a\n9223372036854775807\n-9223372036854775808\n9223372036854775808\n');
r = run(['write', '--url', lake, '--table', 'big', '--input-format', 'csv', big]);
check(r.code === 0, `big integers land (${r.stderr.trim()})`);
const rows = await query(`SELECT a::VARCHAR AS v, typeof(a) AS t FROM read_parquet(${lit(path.join(lake, 'big', '*.parquet'))}) ORDER BY a`);
check(JSON.stringify(rows) === JSON.stringify([
    { v: '-9223372036854775808', t: 'DECIMAL(38,0)' },
    { v: '9223372036854775807', t: 'DECIMAL(38,0)' },
    { v: '9223372036854775808', t: 'DECIMAL(38,0)' }]), `every digit kept: ${JSON.stringify(rows)}`);

// 1 MiB limit: the error must come after about 1 MiB (+ a block) of /dev/zero, within seconds.
const t0 = Date.now();
r = spawnSync(S3LAND, ['write', '--url', lake, '--table', 'z', '--max-record-size', '1MiB', '/dev/zero'],
    { encoding: 'utf8', timeout: 20000 });
r.code = r.status;
check(r.signal === null && r.code !== 0 && /line 1 \(byte offset 0\): the record is longer than the maximum record size \(1048576 bytes\): no line end by byte offset \d+/.test(r.stderr),
    `/dev/zero: reported at once in ${Date.now() - t0} ms (${r.signal ?? ''} ${r.stderr.trim()})`);

const empty = path.join(work, 'e.ndjson');
fs.writeFileSync(empty, '{"":1}\n');
r = run(['write', '--url', lake, '--table', 'e', empty]);
check(r.code !== 0 && r.stderr.includes('no key that can name a column (not empty, without NUL) has a non-null value'),
    `{"":1}: an accurate message (${r.stderr.trim()})`);
done();
