// A store's error text never carries a credential into what s3land prints or writes (issue 10,
// item 16). A loopback S3 stand-in answers every request 403 with an <Error> whose Message and
// RequestId echo the x-amz-security-token header it was sent and the first 20 characters of the
// secret key (as a store quoting a request, or a crafted one, would), and an x-amz-request-id
// header holding the token too. write, ls, schema and check run against it, with and without
// --json, with S3LAND_TRACE; no output and no trace line may contain the token, the secret, or
// a 8-byte piece of either, and the message must still say what the store answered. An endpoint
// with userinfo (http://u:PASS@host) is refused (exit 1) without PASS in the message.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { S3LAND, check, done, tmpdir } from '../conformance/harness.mjs';

const work = tmpdir('s3l-secrets');
const SECRET = 'wJalrXUtnFEMIK7MDENGbPxRfiCYSECRETKEY0123';
const TOKEN = 'IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKENcanaryZZZ9876543210abcdef';
const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
        const tok = req.headers['x-amz-security-token'] ?? '';
        const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>` +
            `<Message>token ${tok} is invalid for key ${SECRET.slice(0, 20)}</Message>` +
            `<RequestId>${tok.slice(0, 40)}</RequestId></Error>`;
        res.writeHead(403, { 'content-type': 'application/xml', 'x-amz-request-id': tok.slice(0, 60) });
        res.end(req.method === 'HEAD' ? undefined : body);
    });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${server.address().port}`;

// Runs s3land without blocking the loop (the server answers in this process).
function s3land(args, env = {}) {
    return new Promise((resolve) => {
        const p = spawn(S3LAND, args, { env: { ...process.env, ...env } });
        let out = '', err = '';
        p.stdout.on('data', (d) => (out += d));
        p.stderr.on('data', (d) => (err += d));
        p.on('close', (code) => resolve({ code, out, err }));
    });
}

const pieces = (s) => Array.from({ length: s.length - 7 }, (_, i) => s.slice(i, i + 8));
const leaks = (text) => [...pieces(SECRET), ...pieces(TOKEN)].filter((p) => text.includes(p));
const input = path.join(work, 'in.ndjson');
fs.writeFileSync(input, '{"a":1}\n');
const env = {
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLECANARY', AWS_SECRET_ACCESS_KEY: SECRET,
    AWS_SESSION_TOKEN: TOKEN, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ENDPOINT_URL: '',
};
const url = 's3://bucket/prefix';
const commands = [
    ['write', '--url', url, '--table', 't', input],
    ['ls', '--url', url],
    ['schema', '--url', url, '--table', 't'],
    ['check', '--url', url],
];
for (const cmd of commands) {
    for (const json of [false, true]) {
        const trace = path.join(work, `trace-${cmd[0]}-${json}.jsonl`);
        const args = json ? ['--json', ...cmd] : cmd;
        const r = await s3land(args, { ...env, S3LAND_TRACE: trace });
        const all = r.out + r.err + (fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '');
        const what = `s3land ${args.join(' ')}`;
        check(r.code !== 0, `${what}: fails (exit ${r.code})`);
        check(/AccessDenied|PERMISSION_DENIED/.test(r.out + r.err), `${what}: says the store refused`);
        check(/\[redacted\]/.test(r.out + r.err), `${what}: the echoed credential is shown redacted`);
        const l = leaks(all);
        if (!check(l.length === 0, `${what}: no piece of the secret key or session token in its output or trace`))
            console.log(all.slice(0, 2000));
    }
}
// Userinfo in an endpoint.
for (const json of [false, true]) {
    const args = [...(json ? ['--json'] : []), 'ls', '--url', url, '--endpoint', 'http://u:PASSWORD42@127.0.0.1:9/x'];
    const r = await s3land(args, env);
    check(r.code === 1, `s3land ${args.join(' ')}: exit 1 (got ${r.code})`);
    check(/user name or password/.test(r.out + r.err), 'the refusal says why');
    check(!(r.out + r.err).includes('PASSWORD42'), 'the password is not in the message');
}
server.close();
done();
