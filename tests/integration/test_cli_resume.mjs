// Resuming inputs at their committed offsets, per format:
// - CSV: a file that grows is resumed after its last committed row, with the header kept in the
//   checkpoint (the resumed reader never sees the header line again);
// - JSON array: a run of flights-200k.json in epochs of 20,000 rows is killed (SIGKILL) after
//   its first commits, and the rerun resumes inside the array (after an element, before "," or
//   "]"); the table then equals the file, once.
// On S3 (S3L_TEST_STORE=s3) the killed run gets the harness's s3:// URL for the lake (destUrl),
// and the checkpoint is polled through the harness's mirror of the bucket.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
    DATA, S3LAND, check, destUrl, done, exceptAll, lit, mirror, runOk, schemaFile, tableSql, tmpdir,
} from '../conformance/harness.mjs';

const work = tmpdir('s3l-resume');
const lake = path.join(work, 'lake');

// CSV growing under a header.
const csv = path.join(work, 'birds.csv');
const all = fs.readFileSync(path.join(DATA, 'birdstrikes.csv'), 'utf8').split(/\r?\n/);
const header = all[0];
const rows = all.slice(1).filter((l) => l.length);
fs.writeFileSync(csv, [header, ...rows.slice(0, 4000)].join('\n') + '\n');
const cols = [['Airport Name', 'string'], ['Aircraft Make Model', 'string'], ['Effect Amount of damage', 'string'],
    ['Flight Date', 'date32[day]'], ['Aircraft Airline Operator', 'string'], ['Origin State', 'string'],
    ['Phase of flight', 'string'], ['Wildlife Size', 'string'], ['Wildlife Species', 'string'], ['Time of day', 'string'],
    ['Cost Other', 'int64'], ['Cost Repair', 'int64'], ['Cost Total $', 'int64'], ['Speed IAS in knots', 'int64']];
const DUCK = { string: 'VARCHAR', 'date32[day]': 'DATE', int64: 'BIGINT' };
const schema = schemaFile(work, 'birds.json', cols.map(([name, type]) => ({ name, type })));
const args = ['write', '--url', lake, '--table', 'birds', '--schema', schema, '--input-format', 'csv', '--quiet', csv];
runOk(args);
fs.appendFileSync(csv, rows.slice(4000).join('\n') + '\n');
runOk(args);
const duckCols = `{${cols.map(([n, t]) => `${lit(n)}: ${lit(DUCK[t])}`).join(', ')}}`;
await exceptAll(`SELECT * FROM read_csv(${lit(csv)}, header=true, columns=${duckCols})`, tableSql(path.join(lake, 'birds')),
    'CSV resumed after its header and 4,000 rows');

// JSON array killed mid-way, then resumed inside the array.
const fschema = schemaFile(work, 'flights.json', [{ name: 'delay', type: 'int64' }, { name: 'distance', type: 'int64' }, { name: 'time', type: 'double' }]);
const file = path.join(DATA, 'flights-200k.json');
const fargs = ['write', '--url', destUrl(lake), '--table', 'flights', '--schema', fschema, '--input-format', 'json',
    '--epoch-rows', '20000', '--quiet', file];
const ckptDir = path.join(lake, '_openetl', 'checkpoints');
const committedOffset = () => {
    mirror();
    for (const f of fs.existsSync(ckptDir) ? fs.readdirSync(ckptDir) : []) {
        if (!f.endsWith('.json')) continue;
        const st = JSON.parse(fs.readFileSync(path.join(ckptDir, f), 'utf8')).state;
        const inp = st?.inputs?.find((i) => i.path === fs.realpathSync(file));
        if (inp) return inp.offset;
    }
    return 0;
};
let midway = false;
for (let attempt = 0; attempt < 20 && !midway; attempt++) {
    const child = spawn(S3LAND, fargs, { stdio: 'ignore' });
    // Kill as soon as the checkpoint shows a first commit.
    await new Promise((resolve) => {
        const poll = setInterval(() => {
            if (committedOffset() > 0) child.kill('SIGKILL');
        }, 2);
        child.on('exit', () => { clearInterval(poll); resolve(); });
    });
    const off = committedOffset();
    midway = off > 0 && off < fs.statSync(file).size;
}
check(midway, 'a run was killed after committing part of the array');
runOk(fargs);
await exceptAll(`SELECT * FROM read_json(${lit(file)}, format='array', columns={'delay': 'BIGINT', 'distance': 'BIGINT', 'time': 'DOUBLE'})`,
    tableSql(path.join(lake, 'flights')), 'JSON array resumed inside the array');
done();
