// fault-proxy.mjs: a fault-injecting HTTP proxy that sits between the S3 client and the test
// store (Ceph RGW). It forwards requests unchanged (the client signed them for this proxy's
// host:port, and RGW checks the Host header as sent), names each one by S3 operation and key,
// counts what it sees, and injects the faults a test asks for. The counts are the proxy's own:
// tests judge retries and concurrency from them, never from the client's word.
//
//   node fault-proxy.mjs --target http://127.0.0.1:PORT [--port 0] [--log FILE]
// prints "LISTENING <port>" on stdout when ready. --log FILE: one JSON line per request served
// (control requests aside), appended as its body has arrived: {method, op, key, uploadId and
// partNumber (null when absent), contentLength (the header, null when absent), transferEncoding (null when absent), bodyBytes
// (what arrived)}: the store's own view of what the client sent. Control, on the same port:
//   POST /__proxy/rules   JSON array of rules, replacing the current ones
//   GET  /__proxy/counts  JSON: {ops: {"OP KEY": {seen, forwarded, injected, ok}},
//                                maxInFlight: {OP: n}, log: [{op, key, inFlight, amzDate,
//                                scope, sse, storageClass, action, status, t0, t1,
//                                prefix}]}
//                         t0: when the request arrived, t1: when its answer was sent (ms on the
//                         proxy's monotonic clock; t1 0 until then): two requests overlapped
//                         when each arrived before the other was answered; prefix: a list's
//                         prefix query parameter ('' when it has none)
//                         scope: the Authorization header's credential scope without the key
//                         id (DATE/REGION/SERVICE/aws4_request); never the signature
//   POST /__proxy/reset   forget rules and counts
// A rule: {op, key?, keyIncludes? (a part of the key: the rule's keys are those holding it),
//          times? (default 1; -1 every time), skip? (let this many pass first),
//          action, delayMs? (also delays injected answers), region?, skewSeconds?}. Actions:
//   slowdown        503 SlowDown, not forwarded
//   error500        500 InternalError, not forwarded
//   reset           the connection is destroyed in the middle of the request body
//   reset_after     forwarded, then the connection is destroyed instead of answering
//   slow            forwarded after delayMs
//   error_in_200    forwarded, then answered 200 with an <Error><Code>InternalError body
//   drop_etag       forwarded, then answered with the store's status and an empty body, without
//                   its ETag header (a gateway that drops it)
//   expired_token   400 ExpiredToken, not forwarded
//   redirect        301 PermanentRedirect with x-amz-bucket-region: region, not forwarded
//   auth_malformed  400 AuthorizationHeaderMalformed with <Region>region</Region> in the body
//                   and no header, not forwarded
//   region_denied   403 AccessDenied with x-amz-bucket-region: region, not forwarded
//   skew            403 RequestTimeTooSkewed with a Date skewSeconds ahead, not forwarded
//   deny            403 AccessDenied, not forwarded
//   bad_key         403 InvalidAccessKeyId, not forwarded
//   html            502 with an HTML body, not forwarded
//   corrupt         one byte of the request body is flipped, then forwarded (the store's
//                   Content-MD5 check must refuse it)
//   strip_headers   the request's headers named in the rule's `headers` (default
//                   ["if-none-match", "if-match"]) are removed and the request is signed
//                   again (SigV4, with the secret of $AWS_SECRET_ACCESS_KEY), then forwarded:
//                   the store never sees the condition, as a store that ignores it would
//                   behave. A request without any of them passes unchanged (not counted as
//                   injected).
// Integrity: a request carrying x-amz-checksum-crc32c has it checked here (Ceph RGW 16 ignores
// it); counts get checksummed / checksumBad per operation and key.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const target = new URL(opt('--target', 'http://127.0.0.1:7480'));
const logFile = opt('--log', null);
function logRequest(req, op, key, bodyBytes) {
  if (!logFile) return;
  const h = req.headers;
  const q = new URL(req.url, 'http://x').searchParams;
  fs.appendFileSync(logFile, JSON.stringify({
    method: req.method, op, key, uploadId: q.get('uploadId'),
    partNumber: q.has('partNumber') ? Number(q.get('partNumber')) : null,
    contentLength: h['content-length'] === undefined ? null : Number(h['content-length']),
    transferEncoding: h['transfer-encoding'] === undefined ? null : h['transfer-encoding'],
    bodyBytes }) + '\n');
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

// CRC-32C (Castagnoli, reflected 0x82F63B78), table-driven: the proxy's own implementation
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = (c & 1) ? (c >>> 1) ^ 0x82F63B78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();
function crc32c(buf) {
  let c = 0xFFFFFFFF;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xFF] ^ (c >>> 8);
  return (c ^ 0xFFFFFFFF) >>> 0;
}

let rules = [];
let counts = {};
let maxInFlight = {};
let inFlight = {};
let log = [];

function reset() {
  rules = [];
  counts = {};
  maxInFlight = {};
  inFlight = {};
  log = [];
}

// S3 operation and key of a path-style request, from method, query and headers.
function classify(req) {
  const u = new URL(req.url, 'http://x');
  const parts = u.pathname.split('/');
  const key = parts.length > 2 ? decodeURIComponent(parts.slice(2).join('/')) : '';
  const q = u.searchParams;
  const copy = 'x-amz-copy-source' in req.headers;
  const m = req.method;
  let op = 'Unknown';
  if (m === 'PUT') op = q.has('partNumber') ? (copy ? 'UploadPartCopy' : 'UploadPart')
                                             : (copy ? 'CopyObject' : 'PutObject');
  else if (m === 'POST') op = q.has('uploads') ? 'CreateMultipartUpload'
                           : q.has('uploadId') ? 'CompleteMultipartUpload'
                           : q.has('delete') ? 'DeleteObjects' : 'Post';
  else if (m === 'DELETE') op = q.has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject';
  else if (m === 'GET') op = q.has('uploadId') ? 'ListParts' : q.has('uploads')
                           ? 'ListMultipartUploads' : key ? 'GetObject' : 'ListObjectsV2';
  else if (m === 'HEAD') op = key ? 'HeadObject' : 'HeadBucket';
  return { op, key };
}

// "Credential=AKID/DATE/REGION/SERVICE/aws4_request" -> "DATE/REGION/SERVICE/aws4_request":
// the key id is left out, and the signature is never read.
function credentialScope(req) {
  const m = /Credential=[^/,\s]+\/([^,\s]+)/.exec(req.headers.authorization || '');
  return m ? m[1] : '';
}

// SigV4 (the AWS General Reference, "Create a signed AWS API request"), the proxy's own: the
// request signed again after headers were removed, with the key id, date, region and service of
// its Authorization header and the payload hash of its x-amz-content-sha256.
function resign(req, secret) {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/([^,]+), ?SignedHeaders=([^,]+), ?Signature=/
    .exec(req.headers.authorization || '');
  if (!m) return false;
  const [, akid, scope, signed] = m;
  const [date, region, service] = scope.split('/');
  const names = signed.split(';').filter((n) => n in req.headers).sort();
  const u = req.url.indexOf('?');
  const path = u < 0 ? req.url : req.url.slice(0, u);
  const query = u < 0 ? '' : req.url.slice(u + 1).split('&').filter((x) => x)
    .map((x) => (x.includes('=') ? x : `${x}=`))
    .sort((a, b) => { const ka = a.split('=')[0], kb = b.split('=')[0];
                      return ka < kb ? -1 : ka > kb ? 1 : a < b ? -1 : a > b ? 1 : 0; })
    .join('&');
  const canon = [req.method, path, query,
    names.map((n) => `${n}:${String(req.headers[n]).trim().replace(/\s+/g, ' ')}\n`).join(''),
    names.join(';'), req.headers['x-amz-content-sha256'] || 'UNSIGNED-PAYLOAD'].join('\n');
  const sts = ['AWS4-HMAC-SHA256', req.headers['x-amz-date'], scope,
    crypto.createHash('sha256').update(canon).digest('hex')].join('\n');
  const hmac = (k, d) => crypto.createHmac('sha256', k).update(d).digest();
  let k = hmac(`AWS4${secret}`, date);
  k = hmac(hmac(hmac(k, region), service), 'aws4_request');
  const sig = crypto.createHmac('sha256', k).update(sts).digest('hex');
  req.headers.authorization = `AWS4-HMAC-SHA256 Credential=${akid}/${scope}, ` +
    `SignedHeaders=${names.join(';')}, Signature=${sig}`;
  return true;
}

const arrived = (req) => req.arrivedAt || performance.now();

function pickRule(op, key) {
  for (const r of rules) {
    if (r.op !== op || (r.key !== undefined && r.key !== key)) continue;
    if (r.keyIncludes !== undefined && !key.includes(r.keyIncludes)) continue;
    r.seen = (r.seen || 0) + 1;
    if (r.seen <= (r.skip || 0)) continue;
    const times = r.times === undefined ? 1 : r.times;
    if (times >= 0 && (r.used || 0) >= times) continue;
    r.used = (r.used || 0) + 1;
    return r;
  }
  return null;
}

function s3Error(res, status, code, message, extraHeaders = {}, extraXml = '') {
  const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code>` +
    `<Message>${message}</Message>${extraXml}<RequestId>proxy-${Date.now()}</RequestId></Error>`;
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length':
    Buffer.byteLength(body), 'x-amz-request-id': `proxy-${Date.now()}`, ...extraHeaders });
  res.end(body);
}

function forward(req, body, onAnswer) {
  const up = http.request({
    host: target.hostname, port: target.port, method: req.method, path: req.url,
    headers: req.headers, agent,
  }, (ures) => {
    const chunks = [];
    ures.on('data', (c) => chunks.push(c));
    ures.on('end', () => onAnswer(ures.statusCode, ures.headers, Buffer.concat(chunks)));
  });
  up.on('error', () => onAnswer(502, {}, Buffer.from('upstream error')));
  up.end(body);
}

function control(req, res, body) {
  if (req.url === '/__proxy/rules' && req.method === 'POST') {
    rules = JSON.parse(body.toString() || '[]');
  } else if (req.url === '/__proxy/reset') {
    reset();
  } else if (req.url !== '/__proxy/counts') {
    res.writeHead(404);
    res.end();
    return;
  }
  const out = JSON.stringify({ ops: counts, maxInFlight, log });
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length':
    Buffer.byteLength(out) });
  res.end(out);
}

function handle(req, res, body, op, key, rule) {
  const name = `${op} ${key}`;
  const c = counts[name] || (counts[name] = { seen: 0, forwarded: 0, injected: 0, ok: 0,
                                              checksummed: 0, checksumBad: 0 });
  c.seen++;
  const sum = req.headers['x-amz-checksum-crc32c'];
  if (sum !== undefined) {
    const want = Buffer.alloc(4);
    want.writeUInt32BE(crc32c(body));
    c.checksummed++;
    if (want.toString('base64') !== sum) c.checksumBad++;
  }
  const entry = { op, key, inFlight: inFlight[op], amzDate: req.headers['x-amz-date'] || '',
                  scope: credentialScope(req),
                  sse: req.headers['x-amz-server-side-encryption'] || '',
                  storageClass: req.headers['x-amz-storage-class'] || '',
                  action: rule ? rule.action : '', status: 0, t0: arrived(req), t1: 0,
                  prefix: new URL(req.url, 'http://x').searchParams.get('prefix') || '' };
  log.push(entry);
  const done = (status) => {
    entry.status = status;
    entry.t1 = performance.now();
    inFlight[op]--;
  };
  const pass = (status, headers, data) => {
    c.forwarded++;
    if (status >= 200 && status < 300) c.ok++;
    done(status);
    res.writeHead(status, headers);
    res.end(data);
  };
  const inject = (status, code, msg, extra, extraXml) => {
    c.injected++;
    const answer = () => {
      done(status);
      s3Error(res, status, code, msg, extra, extraXml);
    };
    if (rule && rule.delayMs) setTimeout(answer, rule.delayMs);
    else answer();
  };
  switch (rule ? rule.action : '') {
  case 'slowdown': return inject(503, 'SlowDown', 'Please reduce your request rate.');
  case 'error500': return inject(500, 'InternalError', 'We encountered an internal error.');
  case 'expired_token': return inject(400, 'ExpiredToken', 'The provided token has expired.');
  case 'deny': return inject(403, 'AccessDenied', 'Access Denied');
  case 'bad_key': return inject(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  case 'redirect':
    return inject(301, 'PermanentRedirect', 'Use the specified endpoint.',
                  { 'x-amz-bucket-region': rule.region || 'eu-west-1' });
  case 'auth_malformed': {
    const region = rule.region || 'eu-west-1';
    return inject(400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; ` +
                  `the region is wrong; expecting '${region}'`, {}, `<Region>${region}</Region>`);
  }
  case 'region_denied':
    return inject(403, 'AccessDenied', 'Access Denied',
                  { 'x-amz-bucket-region': rule.region || 'eu-west-1' });
  case 'skew':
    return inject(403, 'RequestTimeTooSkewed', 'The difference is too large.',
                  { Date: new Date(Date.now() + (rule.skewSeconds || 600) * 1000).toUTCString() });
  case 'html': {
    c.injected++;
    done(502);
    const h = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    res.writeHead(502, { 'Content-Type': 'text/html', 'Content-Length': h.length });
    return res.end(h);
  }
  case 'reset_after':
    return forward(req, body, (status) => {
      c.forwarded++;
      c.injected++;
      done(-1);
      req.socket.destroy();
    });
  case 'drop_etag':
    return forward(req, body, (status, headers) => {
      c.forwarded++;
      c.injected++;
      done(status);
      res.writeHead(status, { 'Content-Length': 0,
                              'x-amz-request-id': headers['x-amz-request-id'] || 'proxy' });
      res.end();
    });
  case 'error_in_200':
    return forward(req, body, (status, headers) => {
      c.forwarded++;
      c.injected++;
      done(200);
      const b = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>' +
        '<Message>We encountered an internal error. Please try again.</Message></Error>';
      res.writeHead(200, { 'Content-Type': 'application/xml', 'Content-Length': b.length,
                           'x-amz-request-id': headers['x-amz-request-id'] || 'proxy' });
      res.end(b);
    });
  case 'slow':
    return setTimeout(() => forward(req, body, pass), rule.delayMs || 1000);
  case 'corrupt': {
    c.injected++;
    const bad = Buffer.from(body);
    if (bad.length > 0) bad[bad.length >> 1] ^= 0x5a;
    return forward(req, bad, pass);
  }
  case 'strip_headers': {
    const names = rule.headers || ['if-none-match', 'if-match'];
    if (!names.some((n) => n in req.headers)) return forward(req, body, pass);
    c.injected++;
    for (const n of names) delete req.headers[n];
    if (!resign(req, process.env.AWS_SECRET_ACCESS_KEY || '')) {
      return inject(500, 'ProxyError', 'strip_headers: the request has no SigV4 Authorization');
    }
    return forward(req, body, pass);
  }
  default:
    return forward(req, body, pass);
  }
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/__proxy/')) {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => control(req, res, Buffer.concat(chunks)));
    return;
  }
  const { op, key } = classify(req);
  req.arrivedAt = performance.now();
  inFlight[op] = (inFlight[op] || 0) + 1;
  maxInFlight[op] = Math.max(maxInFlight[op] || 0, inFlight[op]);
  const rule = pickRule(op, key);
  if (rule && rule.action === 'reset') {
    // destroy the connection once part of the request body has arrived (or at once if none)
    const name = `${op} ${key}`;
    const c = counts[name] || (counts[name] = { seen: 0, forwarded: 0, injected: 0, ok: 0 });
    c.seen++;
    c.injected++;
    log.push({ op, key, inFlight: inFlight[op], amzDate: req.headers['x-amz-date'] || '',
               action: 'reset', status: -1 });
    inFlight[op]--;
    if (Number(req.headers['content-length'] || 0) === 0) return req.socket.destroy();
    req.once('data', () => req.socket.destroy());
    return;
  }
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    logRequest(req, op, key, body.length);
    handle(req, res, body, op, key, rule);
  });
});
server.keepAliveTimeout = 30000;
server.listen(Number(opt('--port', '0')), '127.0.0.1', () => {
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
