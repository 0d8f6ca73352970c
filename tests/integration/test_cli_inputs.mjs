// Several inputs in one pipeline: each keeps its own position. With two NDJSON files:
// the first run lands both; a rerun lands nothing; lines appended to the second file land
// once; a new third input makes another pipeline (its id covers the set of inputs), which starts
// every input from the beginning; given in another order, the inputs are the same pipeline.
import fs from 'node:fs';
import path from 'node:path';
import { check, done, exceptAll, listing, lit, run, runOk, scalar, schemaFile, tableSql, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-inputs');
const lake = path.join(work, 'lake');
const a = path.join(work, 'a.ndjson');
const b = path.join(work, 'b.ndjson');
const gen = (tag, from, to) => Array.from({ length: to - from }, (_, i) => JSON.stringify({ src: tag, n: from + i })).join('\n') + '\n';
fs.writeFileSync(a, gen('a', 0, 300));
fs.writeFileSync(b, gen('b', 0, 200));
const schema = schemaFile(work, 's.json', [{ name: 'src', type: 'string' }, { name: 'n', type: 'int64' }]);
const base = ['write', '--url', lake, '--table', 'm', '--schema', schema, '--epoch-rows', '128', '--quiet'];
runOk([...base, a, b]);
const dir = path.join(lake, 'm');
const union = (files) => files.map((f) => `SELECT * FROM read_json(${lit(f)}, columns={'src': 'VARCHAR', 'n': 'BIGINT'})`).join(' UNION ALL ');
await exceptAll(union([a, b]), tableSql(dir), 'two inputs land');
const before = listing(lake);
runOk([...base, b, a]);
check(JSON.stringify(listing(lake)) === JSON.stringify(before), 'the same inputs in another order: same pipeline, nothing new');
fs.appendFileSync(b, gen('b', 200, 260));
runOk([...base, a, b]);
await exceptAll(union([a, b]), tableSql(dir), 'lines appended to the second input land once');
const ckpts = fs.readdirSync(path.join(lake, '_openetl', 'checkpoints')).filter((f) => f.endsWith('.json'));
check(ckpts.length === 1, `one pipeline so far (${ckpts.length} checkpoints)`);
const state = JSON.parse(fs.readFileSync(path.join(lake, '_openetl', 'checkpoints', ckpts[0]), 'utf8')).state;
check(state.inputs.length === 2 && state.inputs.every((p) => p.offset === fs.statSync(p.path).size),
    'each input is recorded at its own end');
const c = path.join(work, 'c.ndjson');
fs.writeFileSync(c, gen('c', 0, 10));
runOk([...base, '--table', 'm2', a, b, c]);
check(await scalar(`SELECT count(*) FROM (${tableSql(path.join(lake, 'm2'))})`) === 570, 'a new set of inputs is a new pipeline: 300 + 260 + 10 rows');
const dup = run([...base, a, path.join(work, '.', 'a.ndjson')]);
check(dup.code === 1 && /given twice/.test(dup.stderr), `an input given twice is refused (${dup.stderr.trim()})`);
done();
