// fake-creds.mjs: a fake EC2 instance metadata service (IMDSv2 and v1), a fake container
// credentials endpoint and a fake STS, for the credentials providers' tests. Listens on
// 127.0.0.1 only, prints "LISTENING <port>" on stdout when ready, and exits by itself when its stdin closes (the test
// that started it ended) or after --idle seconds without a request (default 120).
//
//   node fake-creds.mjs [--auth TOKEN] [--idle SECONDS] [--sts-expiry SECONDS]
//
// IMDS, the EC2 User Guide's paths, under a mode prefix (empty for the default):
//   PUT  /latest/api/token          needs X-aws-ec2-metadata-token-ttl-seconds (1..21600),
//                                   answers a fresh token
//   GET  /latest/meta-data/iam/security-credentials/       "fake-role\n"
//   GET  /latest/meta-data/iam/security-credentials/fake-role
//                                   JSON: Code Success, AccessKeyId AKIDIMDSROLE0001, ...
//   every GET needs a token this server issued (401 otherwise), except under /v1only.
// Mode prefixes: /v1only (the token PUT answers 403; GETs need no token), /norole (the role
// list answers 404), /silent (never answers: the client's timeout must end it), /badjson (the
// credentials are not JSON).
// Container: GET /container/creds needs "Authorization: TOKEN" when --auth is given (401
// otherwise), answers AccessKeyId AKIDCONTAINER001, SecretAccessKey, Token, Expiration.
// STS (the Query API, any path, POST with a form body; answers in AWS's XML shapes):
//   Action=AssumeRole needs a SigV4 Authorization header for service sts (400
//   MissingAuthenticationToken otherwise); Action=AssumeRoleWithWebIdentity needs
//   WebIdentityToken (400 InvalidIdentityToken for the token "bad-token"). Roles by name:
//   role/external needs ExternalId=ext-good (403 AccessDenied otherwise), role/denied is always
//   refused (403 AccessDenied), role/throttled answers 400 Throttling to its first call,
//   role/short issues credentials that expire in 299 s (inside the 5-minute refresh window).
//   Credentials: AccessKeyId ASIAFAKESTS0000N (N counts the calls), a secret and token with
//   "not-for-output" in them, Expiration now + DurationSeconds (default 3600; --sts-expiry S
//   overrides), AssumedRoleUser Arn arn:aws:sts::123456789012:assumed-role/ROLE/SESSION.
// Control: GET /__log answers the JSON list of requests seen ({method, path, ttl, token, auth}:
// ttl the TTL header, token whether the IMDS token header was right, auth whether the
// Authorization header was right).
import http from 'node:http';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const auth = opt('--auth', null);
const stsExpiry = opt('--sts-expiry', null);
let stsCalls = 0;
const throttled = new Set();
const idleMs = Number(opt('--idle', '120')) * 1000;
const tokens = new Set();
const log = [];
let idle = null;
const touch = () => {
  clearTimeout(idle);
  idle = setTimeout(() => process.exit(0), idleMs);
};

const expiration = () => new Date(Date.now() + 6 * 3600 * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const answer = (res, status, body, type = 'text/plain') => {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

function imds(req, res, mode, path) {
  const ttl = req.headers['x-aws-ec2-metadata-token-ttl-seconds'];
  const tokenOk = tokens.has(req.headers['x-aws-ec2-metadata-token']);
  log.push({ method: req.method, path: req.url, ttl: ttl ?? null, token: tokenOk });
  if (mode === '/silent') return; // never answered
  if (path === '/latest/api/token') {
    if (req.method !== 'PUT') return answer(res, 405, '');
    if (mode === '/v1only') return answer(res, 403, '');
    const n = Number(ttl);
    if (!(n >= 1 && n <= 21600)) return answer(res, 400, '');
    const t = `TOKEN-${tokens.size + 1}-${Math.random().toString(36).slice(2)}`;
    tokens.add(t);
    return answer(res, 200, t);
  }
  if (req.method !== 'GET') return answer(res, 405, '');
  if (mode !== '/v1only' && !tokenOk) return answer(res, 401, '');
  const base = '/latest/meta-data/iam/security-credentials/';
  if (path === base) return mode === '/norole' ? answer(res, 404, '') : answer(res, 200, 'fake-role\n');
  if (path === base + 'fake-role') {
    if (mode === '/badjson') return answer(res, 200, 'not json');
    return answer(res, 200, JSON.stringify({
      Code: 'Success', LastUpdated: new Date().toISOString(), Type: 'AWS-HMAC',
      AccessKeyId: 'AKIDIMDSROLE0001', SecretAccessKey: 'imds-secret-not-for-output',
      Token: 'imds-token-not-for-output', Expiration: expiration(),
    }), 'application/json');
  }
  return answer(res, 404, '');
}

const xmlEsc = (v) => String(v).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const stsError = (res, status, code, message) => answer(res, status,
  `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>` +
  `<Code>${code}</Code><Message>${xmlEsc(message)}</Message></Error>` +
  `<RequestId>fake-sts-${stsCalls}</RequestId></ErrorResponse>`, 'text/xml');

function sts(req, res, body) {
  const f = new URLSearchParams(body);
  const action = f.get('Action');
  const authz = req.headers.authorization ?? '';
  const scope = authz.match(/Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request/);
  const role = f.get('RoleArn') ?? '';
  const entry = {
    method: 'POST', path: req.url, sts: action, role, externalId: f.get('ExternalId'),
    session: f.get('RoleSessionName'), duration: f.get('DurationSeconds'), version: f.get('Version'),
    akid: scope ? scope[1] : null, region: scope ? scope[3] : null, service: scope ? scope[4] : null,
    signed: authz !== '', token: req.headers['x-amz-security-token'] ? true : false,
    contentType: req.headers['content-type'] ?? null,
  };
  log.push(entry);
  stsCalls++;
  if (f.get('Version') !== '2011-06-15') return stsError(res, 400, 'InvalidAction', 'bad Version');
  if (action === 'GetCallerIdentity') {
    // STS API Reference, GetCallerIdentity: no parameters, no permission; signed for sts.
    if (!scope || scope[4] !== 'sts') return stsError(res, 400, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
    const n = String(stsCalls).padStart(5, '0');
    return answer(res, 200,
      `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>` +
      `<Arn>arn:aws:iam::123456789012:user/fake-${xmlEsc(scope[1].slice(-4))}</Arn>` +
      `<UserId>AIDAFAKE${n}</UserId><Account>123456789012</Account></GetCallerIdentityResult>` +
      `<ResponseMetadata><RequestId>fake-sts-${n}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
      'text/xml');
  }
  if (!role || !f.get('RoleSessionName')) return stsError(res, 400, 'ValidationError', 'RoleArn and RoleSessionName are required');
  if (action === 'AssumeRole') {
    if (!scope || scope[4] !== 'sts') return stsError(res, 400, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
  } else if (action === 'AssumeRoleWithWebIdentity') {
    const t = f.get('WebIdentityToken');
    if (!t || t === 'bad-token') return stsError(res, 400, 'InvalidIdentityToken', 'The web identity token that was passed could not be validated');
  } else {
    return stsError(res, 400, 'InvalidAction', 'unknown action');
  }
  const roleName = role.split('/').pop();
  if (roleName === 'denied' || (roleName === 'external' && f.get('ExternalId') !== 'ext-good'))
    return stsError(res, 403, 'AccessDenied', `User: ${entry.akid} is not authorized to perform: sts:AssumeRole on resource: ${role}`);
  if (roleName === 'throttled' && !throttled.has(role)) {
    throttled.add(role);
    return stsError(res, 400, 'Throttling', 'Rate exceeded');
  }
  const secs = roleName === 'short' ? 299 : Number(stsExpiry ?? f.get('DurationSeconds') ?? 3600);
  const exp = new Date(Date.now() + secs * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  const n = String(stsCalls).padStart(5, '0');
  const arn = `arn:aws:sts::123456789012:assumed-role/${roleName}/${f.get('RoleSessionName')}`;
  return answer(res, 200,
    `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><${action}Result>` +
    `<Credentials><AccessKeyId>ASIAFAKESTS${n}</AccessKeyId>` +
    `<SecretAccessKey>sts-secret-not-for-output-${n}</SecretAccessKey>` +
    `<SessionToken>sts-token-not-for-output-${n}</SessionToken><Expiration>${exp}</Expiration>` +
    `</Credentials><AssumedRoleUser><AssumedRoleId>AROAFAKE:${xmlEsc(f.get('RoleSessionName'))}</AssumedRoleId>` +
    `<Arn>${xmlEsc(arn)}</Arn></AssumedRoleUser></${action}Result>` +
    `<ResponseMetadata><RequestId>fake-sts-${n}</RequestId></ResponseMetadata></${action}Response>`,
    'text/xml');
}

const server = http.createServer((req, res) => {
  touch();
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://x');
    if (req.method === 'POST') return sts(req, res, Buffer.concat(chunks).toString('utf8'));
    if (url.pathname === '/__log') return answer(res, 200, JSON.stringify(log), 'application/json');
    if (url.pathname === '/container/creds') {
      const ok = auth === null || req.headers.authorization === auth;
      log.push({ method: req.method, path: req.url, auth: ok });
      if (!ok) return answer(res, 401, '');
      return answer(res, 200, JSON.stringify({
        AccessKeyId: 'AKIDCONTAINER001', SecretAccessKey: 'container-secret-not-for-output',
        Token: 'container-token-not-for-output', Expiration: expiration(),
      }), 'application/json');
    }
    const m = url.pathname.match(/^(\/v1only|\/norole|\/silent|\/badjson)?(\/.*)$/);
    return imds(req, res, m[1] ?? '', m[2]);
  });
});
server.listen(0, '127.0.0.1', () => {
  touch();
  process.stdout.write(`LISTENING ${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
