#!/usr/bin/env bash
# --endpoint, --region and --path-style on every command that opens a store (issue 4): a tiny
# HTTP server on 127.0.0.1 (python3) records each request's path and Host header and answers
# 403 AccessDenied, so every command fails fast after its first request. Expected, by the S3
# addressing rules: path-style puts the bucket first in the path (/bkt/p/... or /bkt?list-type=2...), Host localhost;
# virtual-hosted (--path-style=no) puts it in the host (bkt.localhost, which curl resolves to
# the loopback), the path not starting with /bkt. The region is only signed, so it is
# checked in the Authorization header's credential scope (.../eu-west-3/s3/aws4_request).
# Also: each command's --help documents the flags; a bad --path-style value is a usage error
# (exit 1); the AWS_ENDPOINT_URL_S3 environment variable is honoured when --endpoint is absent.
set -uo pipefail
S3LAND=${S3LAND:?}
work=$(mktemp -d /tmp/s3l-path-style-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
srv=
cleanup() {
    [ -n "$srv" ] && kill "$srv" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/srv.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def handle_one(self):
        with open(sys.argv[2], 'a') as f:
            f.write('%s %s host=%s auth=%s\n' % (self.command, self.path, self.headers.get('Host'),
                                                  self.headers.get('Authorization')))
        body = b'<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>no</Message></Error>'
        self.send_response(403)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)
    do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = handle_one
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(('127.0.0.1', 0), H)
with open(sys.argv[1], 'w') as f:
    f.write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$work/srv.py" "$work/port" "$work/req.log" &
srv=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")
ep="http://localhost:$port"
export AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=not-a-secret
unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_REGION AWS_DEFAULT_REGION AWS_SESSION_TOKEN
printf '{"a":1}\n' >"$work/in.ndjson"

# The first request of `s3land CMD` with FLAGS, from the server's log.
first_request() {
    : >"$work/req.log"
    timeout 60 "$S3LAND" "$@" >/dev/null 2>&1
    # the first S3 request: check's STS GetCallerIdentity (a POST / to the S3 endpoint, where
    # Ceph RGW serves STS) is not one
    grep -v '^POST / ' "$work/req.log" | head -1
}
declare -A extra=([write]="--table t $work/in.ndjson" [ls]="" [schema]="--table t" [recover]=""
    [gc]="" [check]="")
for cmd in write ls schema recover gc check; do
    # shellcheck disable=SC2086
    req=$(first_request $cmd --url s3://bkt/p --endpoint "$ep" --region eu-west-3 --path-style ${extra[$cmd]})
    case "$req" in
    *" /bkt"[/?\ ]*"host=localhost:$port "*"/eu-west-3/s3/aws4_request"*) ok "$cmd --path-style: bucket in the path, region signed" ;;
    *) bad "$cmd --path-style: got '$req'" ;;
    esac
    # shellcheck disable=SC2086
    req=$(first_request $cmd --url s3://bkt/p --endpoint "$ep" --path-style=no ${extra[$cmd]})
    case "$req" in
    *"host=bkt.localhost:$port "*) ok "$cmd --path-style=no: bucket in the host" ;;
    *) bad "$cmd --path-style=no: got '$req'" ;;
    esac
    # shellcheck disable=SC2086
    req=$(AWS_ENDPOINT_URL_S3="$ep" AWS_REGION=ap-south-2 first_request $cmd --url s3://bkt/p ${extra[$cmd]})
    case "$req" in
    *" /bkt"[/?\ ]*"/ap-south-2/s3/aws4_request"*) ok "$cmd: AWS_ENDPOINT_URL_S3 and AWS_REGION honoured" ;;
    *) bad "$cmd with AWS_ENDPOINT_URL_S3: got '$req'" ;;
    esac
    # shellcheck disable=SC2086
    timeout 60 "$S3LAND" $cmd --url s3://bkt/p --path-style=sideways ${extra[$cmd]} >/dev/null 2>&1
    rc=$?
    [ "$rc" = 1 ] && ok "$cmd --path-style=sideways is a usage error" || bad "$cmd --path-style=sideways exits $rc"
    help=$("$S3LAND" $cmd --help)
    if grep -q -- '--path-style' <<<"$help" && grep -q -- '--endpoint' <<<"$help" &&
        grep -q -- '--region' <<<"$help" && grep -q AWS_ENDPOINT_URL_S3 <<<"$help" &&
        grep -q AWS_DEFAULT_REGION <<<"$help"; then
        ok "$cmd --help documents --endpoint, --region, --path-style and their variables"
    else
        bad "$cmd --help lacks the S3 connection flags"
    fi
done
[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
