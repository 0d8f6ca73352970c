// Conformance: the C validator of config documents (`s3land validate`) against an independent
// one, Ajv 8 (npm ajv, `ajv/dist/2020`, JSON Schema 2020-12, allErrors off), on every example
// document of docs/examples/config/ and every bad document of tests/fixtures/config/bad/. Each
// document's verdict (valid or not) and the path it names must be equal. YAML is parsed here by
// the npm `yaml` package (YAML 1.2, core schema), not by libfyaml.
//
// Paths: Ajv names the place with a JSON Pointer (instancePath, "/spec/sources/0/format") and,
// for a missing or unknown property, the parent with params.missingProperty or
// params.additionalProperty beside it. The C validator names the field itself, dotted with [i]
// for list items ("spec.sources[0].format", "spec.config.url" for a missing url). The mapping is
// one-to-one: each pointer token is a key (".key", no dot at the start) or, where the value is a
// list, an index ("[i]"); then the missing or additional property is appended as a key.
// Also checked: `s3land config-schema KIND` prints schemas/KIND.schema.json byte for byte, and
// every bad document names the defect it was written for (a file name's words, below).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import Ajv2020 from 'ajv/dist/2020.js';
import YAML from 'yaml';

const src = process.env.S3L_SOURCE_DIR ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const s3land = process.env.S3LAND ?? path.join(src, 'build/s3land');
let failures = 0;
const fail = (msg) => { failures++; console.log(`not ok - ${msg}`); };

// The schemas as shipped, and as the binary prints them.
const kinds = ['destination', 'pipeline', 'sink'];
const validators = {};
for (const k of kinds) {
    const file = path.join(src, 'schemas', `${k}.schema.json`);
    const bytes = fs.readFileSync(file);
    const printed = spawnSync(s3land, ['config-schema', k]);
    if (printed.status !== 0 || !Buffer.from(printed.stdout).equals(bytes))
        fail(`s3land config-schema ${k} differs from schemas/${k}.schema.json (exit ${printed.status})`);
    const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true });
    validators[k] = ajv.compile(JSON.parse(bytes.toString('utf8')));
}
if (spawnSync(s3land, ['config-schema', 'table']).status !== 1)
    fail('config-schema with an unknown kind must exit 1');

// The C side's choice of schema: by kind, anything else checked as a Destination.
function schemaFor(doc) {
    const k = doc && typeof doc === 'object' && !Array.isArray(doc) ? doc.kind : undefined;
    return k === 'Pipeline' ? 'pipeline' : k === 'Sink' ? 'sink' : 'destination';
}

function dotted(doc, pointer, extra) {
    let out = '', node = doc;
    const tokens = pointer === '' ? [] : pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    for (const t of tokens) {
        if (Array.isArray(node)) out += `[${t}]`;
        else out += (out ? '.' : '') + t;
        node = node?.[t];
    }
    if (extra !== undefined) out += (out ? '.' : '') + extra;
    return out;
}

function ajvVerdict(doc) {
    const v = validators[schemaFor(doc)];
    if (v(doc)) return { valid: true };
    const e = v.errors[0];
    const extra = e.params?.missingProperty ?? e.params?.additionalProperty;
    return { valid: false, path: dotted(doc, e.instancePath, extra), ajv: `${e.instancePath} ${e.message}` };
}

function documentsOf(file) {
    const text = fs.readFileSync(file, 'utf8');
    if (file.endsWith('.json')) return [JSON.parse(text)];
    return YAML.parseAllDocuments(text).map((d) => {
        if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
        return d.toJS();
    });
}

function cVerdicts(file) {
    const r = spawnSync(s3land, ['--json', 'validate', file], { encoding: 'utf8' });
    const byDoc = new Map();
    for (const line of r.stdout.split('\n').filter(Boolean)) {
        const ev = JSON.parse(line);
        if (ev.event === 'valid') byDoc.set(ev.document, { valid: true });
        if (ev.event === 'invalid') byDoc.set(ev.document, { valid: false, path: ev.path, check: ev.check, message: ev.message });
    }
    return { status: r.status, byDoc };
}

const examples = fs.readdirSync(path.join(src, 'docs/examples/config')).sort().map((f) => path.join(src, 'docs/examples/config', f));
const bad = fs.readdirSync(path.join(src, 'tests/fixtures/config/bad')).sort().map((f) => path.join(src, 'tests/fixtures/config/bad', f));
let compared = 0, agreed = 0, badDocs = 0;
for (const file of [...examples, ...bad]) {
    const rel = path.relative(src, file);
    const docs = documentsOf(file);
    const c = cVerdicts(file);
    const isExample = examples.includes(file);
    let anyInvalid = false;
    docs.forEach((doc, i) => {
        compared++;
        const a = ajvVerdict(doc);
        const cv = c.byDoc.get(i + 1);
        if (!cv) return fail(`${rel} document ${i + 1}: no verdict from s3land validate`);
        if (!a.valid) anyInvalid = true;
        if (isExample && !a.valid) fail(`${rel} document ${i + 1}: ajv finds an example invalid: ${a.ajv}`);
        if (a.valid === cv.valid && (a.valid || (a.path === cv.path && cv.check === 'schema'))) {
            agreed++;
            if (!cv.valid) {
                badDocs++;
                // The message names the file, the document and the path.
                const want = `${file} (document ${i + 1}): ${cv.path}${cv.path ? ': ' : ''}`;
                if (!cv.message.startsWith(want)) fail(`${rel}: message does not start with "${want}": ${cv.message}`);
            }
        } else {
            fail(`${rel} document ${i + 1}: ajv ${a.valid ? 'valid' : `invalid at "${a.path}" (${a.ajv})`}, ` +
                 `s3land ${cv.valid ? 'valid' : `invalid at "${cv.path}" (${cv.check}: ${cv.message})`}`);
        }
    });
    const wantStatus = isExample ? 0 : 1;
    if (c.status !== wantStatus) fail(`${rel}: s3land validate exited ${c.status}, expected ${wantStatus}`);
    if (!isExample && !anyInvalid) fail(`${rel}: a bad document that ajv finds valid`);
}

// Differential: documents mutated at random from the examples (a key deleted or renamed, a value
// replaced by another of a pool of tricky values, an unknown key added), written as one YAML
// stream and judged by both. Seeded (S3L_CONFIG_SEED, printed), so a failure can be replayed.
// The C side's checks beyond the schema (check "references") may refuse what Ajv accepts; every
// other verdict and every path must be equal.
const seed = Number(process.env.S3L_CONFIG_SEED ?? 20261201);
let state = seed >>> 0;
const rand = (n) => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    state = (state ^ (state >>> 13)) >>> 0;
    return state % n;
};
const pool = ['big', '256MiB', '1m', '1d', '', 'yes', 'file://lake', 'file:///abs', 's3://b', 's3://bkt/x',
    'http://h:1', 'exactly_once', 'replace', 'append', 'zstd', 'Destination', 'Pipeline', 'openetl.io/v1alpha1',
    -1, 0, 1, 23, 900, 1.5, 3.0, 1e30, true, false, null, [], ['x'], {}, { secret: 'A' }, { secret: 5 },
    { secret: 'A', x: 1 }, { name: 'a', files: ['f'] }, '12345678901234567890', 'ÄÖ', 'a'.repeat(70)];
const clone = (x) => JSON.parse(JSON.stringify(x));
function places(node, out = [], at = []) {
    if (node && typeof node === 'object') {
        for (const k of Object.keys(node)) {
            out.push([...at, Array.isArray(node) ? Number(k) : k]);
            places(node[k], out, [...at, Array.isArray(node) ? Number(k) : k]);
        }
    }
    return out;
}
function mutate(doc) {
    const d = clone(doc);
    const ps = places(d);
    const n = 1 + rand(2);
    for (let m = 0; m < n && ps.length; m++) {
        const at = ps[rand(ps.length)];
        let parent = d;
        for (const k of at.slice(0, -1)) parent = parent?.[k];
        if (!parent || typeof parent !== 'object') continue;
        const key = at[at.length - 1];
        const op = rand(4);
        if (op === 0 && !Array.isArray(parent)) delete parent[key];
        else if (op === 1 && !Array.isArray(parent)) { parent[`${key}x`] = parent[key]; delete parent[key]; }
        else if (op === 2 && !Array.isArray(parent)) parent[['extra', 'fileSzie', '0', '10'][rand(4)]] = 1;
        else parent[key] = clone(pool[rand(pool.length)]);
    }
    return d;
}
const base = examples.flatMap((f) => documentsOf(f));
const mutated = [];
for (let i = 0; i < 600; i++) mutated.push(mutate(base[rand(base.length)]));
const streamFile = path.join(fs.mkdtempSync('/tmp/s3l-config-ajv-'), 'mutated.yaml');
fs.writeFileSync(streamFile, mutated.map((d) => YAML.stringify(d)).join('---\n'));
const reparsed = documentsOf(streamFile);
const cm = cVerdicts(streamFile);
let mCompared = 0, mAgreed = 0, mInvalid = 0, mReferences = 0;
reparsed.forEach((doc, i) => {
    mCompared++;
    const a = ajvVerdict(doc);
    const cv = cm.byDoc.get(i + 1) ?? { valid: undefined };
    if (a.valid && cv.valid === false && cv.check === 'references') { mAgreed++; mReferences++; return; }
    if (a.valid === cv.valid && (a.valid || (a.path === cv.path && cv.check === 'schema'))) {
        mAgreed++;
        if (!a.valid) mInvalid++;
        return;
    }
    fail(`mutated document ${i + 1} (seed ${seed}): ajv ${a.valid ? 'valid' : `invalid at "${a.path}" (${a.ajv})`}, ` +
         `s3land ${cv.valid ? 'valid' : `invalid at "${cv.path}" (${cv.check}: ${cv.message})`}\n    ${JSON.stringify(doc)}`);
});
fs.rmSync(path.dirname(streamFile), { recursive: true });
console.log(`seed ${seed}: ${mCompared} mutated documents compared with ajv, ${mAgreed} agreed ` +
            `(${mInvalid} invalid with the same path, ${mReferences} refused only by the checks beyond the schema)`);
if (mCompared !== 600) fail(`${mCompared} mutated documents read back, 600 written`);

// Messages the issue gives word for word.
const words = {
    'dest-bad-size.yaml': 'spec.config.fileSize: expected a size like 256MiB, got "big"',
    'pipe-bad-require.yaml': 'spec.delivery.require: one of exactly_once, at_least_once, at_most_once',
    'pipe-disposition-replace.yaml': 'spec.streams[0].disposition: replace is refused: plain files cannot',
    'dest-url-relative-file.yaml': 'spec.config.url: a file:// URL needs an absolute path',
    'dest-unknown-field.yaml': 'spec.config.fileSzie: unknown field',
    'dest-wrong-kind.yaml': 'kind: one of Destination, Pipeline, Sink, got "Destinaton"',
    // a bare YAML number read as its own example ("expected ... 30s ..., got 30") before
    // validate passed what run and write refuse (a break-it run); the password is never shown
    'dest-endpoint-userinfo.yaml': 'spec.config.endpoint: expected an endpoint http(s)://HOST[:PORT], got "http://[userinfo]@127.0.0.1:7480"',
    'pipe-follow-json.yaml': 'spec.sources[0].format: one of ndjson, csv, debezium (with follow: true, not json: a JSON array has no end',
    'pipe-duration-number.yaml': 'spec.delivery.commit.interval: expected a duration like 1m, 30s or 500ms, written as a string, got the number 60',
};
for (const [f, w] of Object.entries(words)) {
    const c = cVerdicts(path.join(src, 'tests/fixtures/config/bad', f));
    const m = c.byDoc.get(1)?.message ?? '';
    if (!m.includes(w)) fail(`${f}: message "${m}" lacks "${w}"`);
    if (/NOT-SHOWN/.test(JSON.stringify([...c.byDoc.values()]))) fail(`${f}: a password of the endpoint is shown`);
}

compared += mCompared;
agreed += mAgreed;
console.log(`${compared} documents compared with ajv in all, ${agreed} agreed (${badDocs} invalid ones, same path); ` +
            `${bad.length} bad files, ${examples.length} example files`);
if (bad.length < 40) fail(`only ${bad.length} bad documents (at least 40)`);
if (failures) {
    console.log(`${failures} failures`);
    process.exit(1);
}
console.log('ok');
