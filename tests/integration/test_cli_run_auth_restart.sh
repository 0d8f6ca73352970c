#!/usr/bin/env bash
# `run` restarts its attempt on AUTH_EXPIRED only (issue 12, item 3): with backoff (1 s, 2 s,
# 4 s ...), at most 5 times in a row. Through tests/support/fault-proxy.mjs in front of Ceph RGW
# (the s3 label's gateway, S3L_RGW_ENV, or one started here), with static keys in the
# Destination (which cannot refresh, so every ExpiredToken fails the attempt):
# - the proxy answers ExpiredToken to the first 5 PutObject requests: the run notes its restarts,
#   recovers and exits 0, and DuckDB, reading the committed files (copied out of the bucket with
#   the AWS CLI), finds every input row exactly once (A EXCEPT ALL B both ways, and the count);
# - the proxy answers ExpiredToken every time: the run stops after 5 restarts in a row with exit
#   8, and the proxy saw 6 attempts' first PutObject (no more);
# - the proxy answers AccessDenied (PERMISSION_DENIED) every time: no restart, exit 8 at once.
# shellcheck source=tests/integration/lib.sh
. "${S3L_SOURCE_DIR:?}/tests/integration/lib.sh" run-auth
s3l_rgw runauth
unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN AWS_PROFILE
cd "$work" || exit 1
s3l_proxy "$RGW_ENDPOINT"
rules() { curl -s -X POST "$purl/__proxy/reset" >/dev/null; curl -s -X POST "$purl/__proxy/rules" -d "$1" >/dev/null; }
put_injected() { # injected ExpiredToken / AccessDenied answers to PutObject
    curl -s "$purl/__proxy/counts" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
const o = JSON.parse(s).ops; let n = 0;
for (const [k, v] of Object.entries(o)) if (k.startsWith("PutObject ")) n += v.injected;
console.log(n); })'
}
prefix=run-auth-$$
python3 -c 'import json
for i in range(2500): print(json.dumps({"id": i, "s": "row %d" % i}))' >in.ndjson
docs() { # PREFIX
    cat >p.yaml <<DOC
apiVersion: openetl.io/v1alpha1
kind: Destination
metadata:
  name: rgw
spec:
  connector: s3
  config:
    url: s3://$RGW_BUCKET/$1
    endpoint: $purl
    region: $AWS_REGION
    accessKeyId: { secret: K }
    secretAccessKey: { secret: S }
---
apiVersion: openetl.io/v1alpha1
kind: Pipeline
metadata:
  name: expiring
spec:
  destination:
    name: rgw
  sources:
    - name: t
      files: [in.ndjson]
DOC
}
export S3LAND_SECRET_K=$AWS_ACCESS_KEY_ID S3LAND_SECRET_S=$AWS_SECRET_ACCESS_KEY

# 1. ExpiredToken a few times: restarts, then every row once
docs "$prefix/a"
rules '[{"op":"PutObject","action":"expired_token","times":5}]'
"$S3LAND" run --config p.yaml >a.out 2>a.err
st=$?
restarts=$(grep -c 'restarting the run' a.err)
inj=$(put_injected)
[ "$st" = 0 ] && [ "$restarts" -ge 1 ] && [ "$restarts" -le 5 ] && [ "$inj" = 5 ] \
    && ok "5 ExpiredToken answers: $restarts restarts, then the run ends (exit 0)" \
    || bad "ExpiredToken 5 times: exit $st, $restarts restarts, $inj injected: $(cat a.err)"
mkdir -p got
command aws --endpoint-url "$RGW_ENDPOINT" s3 cp --recursive --quiet \
    "s3://$RGW_BUCKET/$prefix/a/t/" got/ --exclude '*' --include '*.parquet' >cp.out 2>&1
res=$(node -e '
const { DuckDBInstance } = require(process.argv[1] + "/node_modules/@duckdb/node-api");
(async () => {
    const con = await (await DuckDBInstance.create(":memory:")).connect();
    const q = async (s) => (await con.runAndReadAll(s)).getRows()[0].map(String).join(" ");
    const A = "SELECT id, s FROM read_json(\x27in.ndjson\x27, columns={\x27id\x27: \x27BIGINT\x27, \x27s\x27: \x27VARCHAR\x27})";
    const B = "SELECT id, s FROM read_parquet(\x27got/**/*.parquet\x27)";
    console.log([await q(`SELECT count(*) FROM (${A} EXCEPT ALL ${B})`),
        await q(`SELECT count(*) FROM (${B} EXCEPT ALL ${A})`), await q(`SELECT count(*) FROM (${B})`)].join(" "));
})().catch((e) => console.log(String(e)));' "$SRC")
[ "$res" = "0 0 2500" ] && ok "DuckDB: the 2500 input rows landed exactly once" \
    || bad "rows after the restarts: '$res' $(cat cp.out)"

# 2. ExpiredToken every time: 5 restarts in a row, then exit 8
docs "$prefix/b"
rules '[{"op":"PutObject","action":"expired_token","times":-1}]'
"$S3LAND" run --config p.yaml >b.out 2>b.err
st=$?
restarts=$(grep -c 'restarting the run' b.err)
inj=$(put_injected)
[ "$st" = 8 ] && [ "$restarts" = 5 ] && grep -q 'restarting the run (5 of 5)' b.err \
    && grep -q 'AUTH_EXPIRED\|expired' b.err \
    && ok "ExpiredToken always: 5 restarts, then exit 8 ($(tail -1 b.err | cut -c1-120))" \
    || bad "ExpiredToken always: exit $st, $restarts restarts: $(cat b.err)"
# each attempt is stopped by its first PutObject's answer (and the one retry after a refresh)
[ "$inj" -ge 6 ] && [ "$inj" -le 12 ] && ok "6 attempts reached the store ($inj ExpiredToken answers)" \
    || bad "ExpiredToken answers: $inj, expected 6 attempts (6 to 12)"

# 3. AccessDenied every time: not restarted
docs "$prefix/c"
rules '[{"op":"PutObject","action":"deny","times":-1}]'
"$S3LAND" run --config p.yaml >c.out 2>c.err
st=$?
[ "$st" = 8 ] && ! grep -q 'restarting the run' c.err \
    && ok "AccessDenied: exit 8 at once, no restart" \
    || bad "AccessDenied: exit $st: $(cat c.err)"
if grep -rqF -e "$AWS_SECRET_ACCESS_KEY" ./*.out ./*.err; then
    bad "the secret key appears in an output"
else
    ok "no secret in any output"
fi
[ "$fails" = 0 ] && echo "all ok"
exit $((fails > 0))
