// Where the CLI tests land (not a test itself: no test_ prefix). By default on file://, as the
// tests are written. With S3L_TEST_STORE=s3 and S3L_RGW_ENV naming the env file of
// tests/stores/start-rgw.sh, the same tests land on S3 instead, unchanged in what they assert:
//
// - toStoreArgs(): every `--url DIR` (or file://DIR) under one of the test's temp directories
//   becomes s3://BUCKET/<that temp directory's name>-<unique>/<rest of DIR> (symbolic links
//   resolved: a link to a lake is that lake); the CLI gets the endpoint, region and keys from
//   the environment (AWS_ENDPOINT_URL_S3, AWS_REGION, ...).
//   A --url outside the temp directories throws, and a run that never used S3 fails at exit.
// - mirror(): after each CLI run, the objects under those prefixes are copied down into the temp
//   directory at the same relative paths, so the tests' local reads (DuckDB's read_parquet, the
//   listings compared byte for byte, fs.existsSync of a table) see exactly what the bucket holds.
//   Objects gone from the bucket are removed from the mirror; files the test wrote itself are never
//   touched. The copy is incremental (key, size, ETag and LastModified unchanged: kept).
//
// The bucket is read with curl's own SigV4 signer (--aws-sigv4), not with s3land's client, so what
// the tests read back comes from an independent implementation.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const STORE = process.env.S3L_TEST_STORE || 'file';
if (STORE !== 'file' && STORE !== 's3') throw new Error(`S3L_TEST_STORE=${STORE}: want file or s3`);

let rgw = null;
if (STORE === 's3') {
    const envFile = process.env.S3L_RGW_ENV;
    if (!envFile)
        throw new Error('S3L_TEST_STORE=s3 needs S3L_RGW_ENV (the env file of start-rgw.sh)');
    rgw = {};
    for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
        const m = /^(?:export )?([A-Z0-9_]+)=(.*)$/.exec(line);
        if (m) rgw[m[1]] = m[2].replace(/^'(.*)'$/, '$1');
    }
    for (const k of ['RGW_ENDPOINT', 'RGW_BUCKET', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY',
        'AWS_DEFAULT_REGION'])
        if (!rgw[k]) throw new Error(`${envFile}: no ${k}`);
    // The CLI reads these as the AWS tools do (issue 4, item 3); other endpoint settings would win.
    delete process.env.AWS_ENDPOINT_URL;
    delete process.env.AWS_SESSION_TOKEN;
    Object.assign(process.env, {
        AWS_ENDPOINT_URL_S3: rgw.RGW_ENDPOINT, AWS_REGION: rgw.AWS_DEFAULT_REGION,
        AWS_DEFAULT_REGION: rgw.AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID: rgw.AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: rgw.AWS_SECRET_ACCESS_KEY,
    });
}

const prefixes = new Map(); // local temp root -> key prefix (no trailing slash)
const mirrored = new Map(); // local temp root -> Map(relative key -> "size etag lastmodified")

// p with its symbolic links resolved, as far as it exists: a link under a temp directory is the
// lake it points to, as on file:// (S3 has no links).
function real(p) {
    const tail = [];
    while (!fs.existsSync(p) && path.dirname(p) !== p) {
        tail.unshift(path.basename(p));
        p = path.dirname(p);
    }
    return path.join(fs.realpathSync(p), ...tail);
}

// args with each --url under a root in `roots` mapped to its s3:// URL (file:// mode: args as is).
export function toStoreArgs(args, roots, cwd) {
    if (STORE === 'file') return args;
    return args.map((a, i) => {
        const otherScheme = /^[a-z0-9]+:\/\//i.test(a) && !a.startsWith('file://');
        if (i === 0 || args[i - 1] !== '--url' || otherScheme)
            return a;
        const p = real(path.resolve(cwd ?? process.cwd(), a.replace(/^file:\/\//, '')));
        const root = roots.find((r) => p === real(r) || p.startsWith(real(r) + path.sep));
        // A lake outside the test's temp directories would silently stay on file://.
        if (!root) throw new Error(`S3L_TEST_STORE=s3: --url ${a} is not under a harness tmpdir()`);
        if (!prefixes.has(root))
            prefixes.set(root, `${path.basename(root)}-${process.pid}-${Date.now().toString(36)}`);
        const rel = path.relative(real(root), p).split(path.sep).join('/');
        const slash = a.endsWith('/') ? '/' : '';
        return `s3://${rgw.RGW_BUCKET}/${prefixes.get(root)}${rel ? '/' + rel : ''}${slash}`;
    });
}

// curl with our keys; fail: an HTTP error fails the call (else the caller reads the codes).
function curl(args, { fail = true } = {}) {
    const sigv4 = `aws:amz:${rgw.AWS_DEFAULT_REGION}:s3`;
    const r = spawnSync('curl', ['-sS', ...(fail ? ['--fail'] : []), '--aws-sigv4', sigv4,
        '-H', 'x-amz-content-sha256: UNSIGNED-PAYLOAD',
        '--user', `${rgw.AWS_ACCESS_KEY_ID}:${rgw.AWS_SECRET_ACCESS_KEY}`, ...args],
    { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.error) throw r.error;
    if (r.status !== 0)
        throw new Error(`curl ${args.slice(-1)[0]}: exit ${r.status}: ${r.stderr.trim()}`);
    return r.stdout;
}

const xmlText = (s) => s.replace(/&(lt|gt|quot|apos|amp|#x[0-9a-f]+|#\d+);/gi, (_, e) =>
    ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e.toLowerCase()] ??
    String.fromCodePoint(/^#x/i.test(e) ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)));
const tag = (s, t) => {
    const m = new RegExp(`<${t}>([^<]*)</${t}>`).exec(s);
    return m ? xmlText(m[1]) : null;
};
// S3 path segments: RFC 3986 unreserved characters stay, everything else is %-encoded.
const keyPath = (k) => k.split('/').map((s) => encodeURIComponent(s).replace(/[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');

// Every object under prefix/ as [relative key, "size etag lastmodified"] (ListObjectsV2, paged).
function listObjects(prefix) {
    const out = [];
    let token = null;
    do {
        const q = `list-type=2&max-keys=1000&prefix=${encodeURIComponent(prefix + '/')}` +
            (token ? `&continuation-token=${encodeURIComponent(token)}` : '');
        const xml = curl([`${rgw.RGW_ENDPOINT}/${rgw.RGW_BUCKET}?${q}`]);
        for (const c of xml.match(/<Contents>[\s\S]*?<\/Contents>/g) ?? [])
            out.push([tag(c, 'Key').slice(prefix.length + 1),
                `${tag(c, 'Size')} ${tag(c, 'ETag')} ${tag(c, 'LastModified')}`]);
        token = tag(xml, 'IsTruncated') === 'true' ? tag(xml, 'NextContinuationToken') : null;
    } while (token);
    return out;
}

// A test run on S3 that never gave the CLI an s3:// URL proved nothing about S3: it fails.
if (STORE === 's3') {
    process.on('exit', (code) => {
        if (code === 0 && prefixes.size === 0) {
            console.log('not ok - S3L_TEST_STORE=s3 but no s3:// destination was used');
            process.exitCode = 1;
        }
    });
}

// Brings every local mirror up to date with its prefix (file:// mode: nothing to do).
export function mirror() {
    for (const [root, prefix] of prefixes) {
        const have = mirrored.get(root) ?? new Map();
        // A key with a path component over NAME_MAX (255 bytes, e.g. the schema record of a
        // 255-byte table name, "T.json") has no local file name: S3 keeps it, the mirror cannot,
        // and no test reads such an object through the mirror.
        const fits = ([k]) => k.split('/').every((c) => Buffer.byteLength(c) <= 255);
        const now = new Map(listObjects(prefix).filter(fits));
        for (const k of have.keys()) {
            if (!now.has(k)) fs.rmSync(path.join(root, k), { force: true });
        }
        const fetch = [...now].filter(([k, v]) => have.get(k) !== v && !k.endsWith('/'))
            .map(([k]) => k);
        for (let i = 0; i < fetch.length; i += 200) {
            const args = [];
            const batch = fetch.slice(i, i + 200);
            for (const k of batch) {
                fs.rmSync(path.join(root, k), { force: true });
                const url = `${rgw.RGW_ENDPOINT}/${rgw.RGW_BUCKET}/${keyPath(`${prefix}/${k}`)}`;
                args.push('-o', path.join(root, k), url);
            }
            // A CLI that still runs (a test polling its checkpoint) may delete an object between
            // the listing and its GET: a 404 leaves it out of the copy, as if listed after.
            const codes = curl(['--create-dirs', '-w', '%{http_code}\n', ...args], { fail: false })
                .trim().split('\n');
            batch.forEach((k, j) => {
                if (codes[j] === '200') return;
                if (codes[j] !== '404') throw new Error(`GET ${prefix}/${k}: HTTP ${codes[j]}`);
                fs.rmSync(path.join(root, k), { force: true });
                now.delete(k);
            });
        }
        mirrored.set(root, now);
    }
}
