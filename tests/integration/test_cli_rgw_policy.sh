#!/usr/bin/env bash
# The minimal policy (issue 11, item 3) on Ceph RGW, with a second RGW user (tests/stores/
# rgw-user.sh) that owns nothing and is granted, by the bucket owner's PutBucketPolicy, only
#   GetObject, PutObject, DeleteObject, AbortMultipartUpload on BUCKET/lake/*
#   ListBucket, GetBucketLocation on BUCKET with StringLike s3:prefix ["lake/*"]
# (the policy of docs/cli.md). The gateway is the s3 label's fixture (S3L_RGW_ENV), or one
# started here; the bucket is this test's own.
# - the policy is live: botocore (Debian's python3-botocore, not our client) as that user is
#   refused a list of the bucket root, of "lake" without the slash, and HeadBucket, and may list
#   "lake/";
# - as that user, s3land: write (several epochs), write again with a new column, a write killed
#   (kill -9 between the copies of a committed epoch) then recover, a write killed after staging
#   then gc (claims it, removes its staged files), ls, ls --committed, schema, check: all exit
#   0, and DuckDB reads every row of the table exactly once (the files fetched by botocore);
# - bucket_probe (s3l_s3_store_bucket_probe): HeadBucket is refused, the bucket is reachable
#   through the list of lake/, and its region is named;
# - the same user on a prefix granted all but s3:DeleteObject: write exits 0 and says how many
#   staged files it could not delete (botocore finds them);
# - the same user writing to another prefix: PERMISSION_DENIED, exit 8, the message naming the
#   principal (first 4 and last 4 of the key id), the operation, the bucket and the key; the
#   secret appears in no output.
# shellcheck source=tests/integration/lib.sh
. "${S3L_SOURCE_DIR:?}/tests/integration/lib.sh" rgw-policy
S3LAND_CRASH=${S3LAND_CRASH:?}
TOOLS=${S3L_TOOLS_DIR:?}
PY=/usr/bin/python3
cd "$work" || exit 1
s3l_rgw policy
owner_ak=$AWS_ACCESS_KEY_ID owner_sk=$AWS_SECRET_ACCESS_KEY
read -r ak sk < <("$SRC/tests/stores/rgw-user.sh" s3land-lander) ||
    { echo "not ok - rgw-user.sh made no user"; exit 1; }
[ -n "$ak" ] && [ -n "$sk" ] || { echo "not ok - rgw-user.sh printed no keys"; exit 1; }
bucket=s3l-policy-$$-$RANDOM

# s3 AS OP ARGS...: one request through botocore as owner or lander; prints OK or the error code
cat >"$work/s3.py" <<'EOF'
import os, sys, json
import botocore.session
from botocore.exceptions import ClientError
who, op, *args = sys.argv[1:]
ak, sk = (os.environ['OWNER_AK'], os.environ['OWNER_SK']) if who == 'owner' else (os.environ['LANDER_AK'], os.environ['LANDER_SK'])
c = botocore.session.Session().create_client('s3', endpoint_url=os.environ['RGW_ENDPOINT'],
    region_name='us-east-1', aws_access_key_id=ak, aws_secret_access_key=sk)
b = os.environ['BUCKET']
try:
    if op == 'create':
        c.create_bucket(Bucket=b)
    elif op == 'policy':
        c.put_bucket_policy(Bucket=b, Policy=open(args[0]).read())
    elif op == 'list':
        kw = {'Prefix': args[0]} if args and args[0] != '-' else {}
        c.list_objects_v2(Bucket=b, **kw)
    elif op == 'head-bucket':
        c.head_bucket(Bucket=b)
    elif op == 'count':  # count PREFIX SUFFIX: keys under PREFIX ending in SUFFIX
        n = 0
        for page in c.get_paginator('list_objects_v2').paginate(Bucket=b, Prefix=args[0]):
            n += sum(1 for o in page.get('Contents', []) if o['Key'].endswith(args[1]))
        print(n)
        sys.exit(0)
    elif op == 'fetch':  # fetch PREFIX DIR: every .parquet under PREFIX into DIR
        n = 0
        for page in c.get_paginator('list_objects_v2').paginate(Bucket=b, Prefix=args[0]):
            for o in page.get('Contents', []):
                if o['Key'].endswith('.parquet') and '/' not in o['Key'][len(args[0]):]:
                    body = c.get_object(Bucket=b, Key=o['Key'])['Body'].read()
                    open(os.path.join(args[1], os.path.basename(o['Key'])), 'wb').write(body)
                    n += 1
        print(n)
    print('OK')
except ClientError as e:
    print(e.response.get('Error', {}).get('Code') or e.response['ResponseMetadata']['HTTPStatusCode'])
EOF
s3() { OWNER_AK=$owner_ak OWNER_SK=$owner_sk LANDER_AK=$ak LANDER_SK=$sk BUCKET=$bucket \
    "$PY" "$work/s3.py" "$@" 2>&1 | tail -1; }

cat >"$work/policy.json" <<EOF
{"Version": "2012-10-17", "Statement": [
  {"Sid": "Objects", "Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam:::user/s3land-lander"]},
   "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
   "Resource": ["arn:aws:s3:::$bucket/lake/*"]},
  {"Sid": "List", "Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam:::user/s3land-lander"]},
   "Action": ["s3:ListBucket", "s3:GetBucketLocation"], "Resource": ["arn:aws:s3:::$bucket"],
   "Condition": {"StringLike": {"s3:prefix": ["lake/*", "nodelete/*"]}}},
  {"Sid": "NoDelete", "Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam:::user/s3land-lander"]},
   "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
   "Resource": ["arn:aws:s3:::$bucket/nodelete/*"]}]}
EOF
[ "$(s3 owner create)" = OK ] && [ "$(s3 owner policy "$work/policy.json")" = OK ] &&
    ok "bucket $bucket made by its owner, with the minimal policy for s3land-lander" ||
    { echo "not ok - bucket or policy not made"; exit 1; }

# ---- the policy is live (botocore as the lander)
root=$(s3 lander list -) noslash=$(s3 lander list lake) lake=$(s3 lander list lake/)
hb=$(s3 lander head-bucket)
if [ "$root" = AccessDenied ] && [ "$noslash" = AccessDenied ] && [ "$lake" = OK ] &&
    [ "$hb" = 403 ]; then
    ok "RGW enforces the s3:prefix condition: root and 'lake' lists refused, 'lake/' allowed, HeadBucket 403"
else
    bad "the policy is not live: root list $root, 'lake' $noslash, 'lake/' $lake, HeadBucket $hb"
fi

# ---- s3land as the lander
run() { # run NAME ARGS...: the CLI as the lander, output in NAME.out / NAME.err, status NAME.rc
    local name=$1
    shift
    env -i PATH="$PATH" HOME="$work" AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-east-1 \
        AWS_ENDPOINT_URL_S3="$RGW_ENDPOINT" AWS_ACCESS_KEY_ID="$ak" AWS_SECRET_ACCESS_KEY="$sk" \
        ${CRASH:+S3L_CRASH_POINT=$CRASH} "${BIN:-$S3LAND}" "$@" >"$work/$name.out" \
        2>"$work/$name.err" </dev/null
    echo $? >"$work/$name.rc"
}
st() { cat "$work/$1.rc"; }
expect0() { # NAME WHAT
    if [ "$(st "$1")" = 0 ]; then ok "$2"; else bad "$2: exit $(st "$1"): $(head -c 1500 "$work/$1.err")"; fi
}
gen() { # FIRST N [extra]: N rows from id FIRST
    awk -v a="$1" -v n="$2" -v x="${3:-}" 'BEGIN { for (i = a; i < a + n; i++)
        if (x) printf "{\"id\": %d, \"s\": \"row %d\", \"extra\": %d}\n", i, i, i * 2;
        else printf "{\"id\": %d, \"s\": \"row %d\"}\n", i, i }'
}
gen 0 300 >in1.ndjson
gen 300 300 x >in2.ndjson
gen 600 300 x >in3.ndjson
gen 900 300 x >in4.ndjson
url=s3://$bucket/lake
w=(--url "$url" --table t --epoch-rows 100 --file-size 4KiB --compression none)

run w1 write "${w[@]}" in1.ndjson
expect0 w1 "write: 300 rows in 3 epochs"
run w2 write "${w[@]}" in2.ndjson
expect0 w2 "write again with a new column (schema growth)"
# one epoch of several files, so that there is a moment between two of its copies
w3=(--url "$url" --table t --epoch-rows 300 --file-size 4KiB --compression none)
CRASH=between-copies BIN=$S3LAND_CRASH run w3k write "${w3[@]}" in3.ndjson
[ "$(st w3k)" = 137 ] && ok "a write killed (kill -9) between the copies of a committed epoch" ||
    bad "crash between-copies: exit $(st w3k): $(head -c 1500 "$work/w3k.err")"
run rec recover --url "$url"
if [ "$(st rec)" = 0 ] && grep -q 'committed pending epoch' "$work/rec.out"; then
    ok "recover finishes the pending epoch"
else
    bad "recover: exit $(st rec): $(cat "$work/rec.out") $(head -c 1500 "$work/rec.err")"
fi
run w3 write "${w3[@]}" in3.ndjson
expect0 w3 "the rerun of the killed write lands the rest"
CRASH=after-stage:2 BIN=$S3LAND_CRASH run w4k write "${w[@]}" --commit-interval 1s in4.ndjson
[ "$(st w4k)" = 137 ] && ok "a write killed after staging files" ||
    bad "crash after-stage: exit $(st w4k): $(head -c 1500 "$work/w4k.err")"
sleep 3 # the killed writer's checkpoint gets older than twice its 1 s interval: gc claims it
run gc gc --url "$url"
left=$(s3 lander count lake/_openetl/staging/ .parquet)
if [ "$(st gc)" = 0 ] && grep -qE 'claimed generation .*; removed [1-9][0-9]* staged file' "$work/gc.out" &&
    [ "$left" = 0 ]; then
    ok "gc claims the killed writer and removes its staged files (none left, listed by botocore)"
else
    bad "gc: exit $(st gc), staged files left: $left: $(cat "$work/gc.out") $(head -c 1500 "$work/gc.err")"
fi
run w4 write "${w[@]}" in4.ndjson
expect0 w4 "the write after gc"
run ls ls --url "$url"
expect0 ls "ls"
run lst ls --url "$url" --table t --json
expect0 lst "ls --table t"
run lsc ls --url "$url" --table t --committed
expect0 lsc "ls --table t --committed"
run sch schema --url "$url" --table t
if [ "$(st sch)" = 0 ] && grep -q extra "$work/sch.out"; then
    ok "schema --table t (with the added column)"
else
    bad "schema: exit $(st sch): $(head -c 1500 "$work/sch.out" "$work/sch.err")"
fi
run check check --url "$url"
expect0 check "check"
if grep -q '"rows":1200' "$work/lst.out" || grep -q '"rows": 1200' "$work/lst.out"; then
    ok "ls counts 1200 rows"
else
    bad "ls --json: $(head -c 600 "$work/lst.out")"
fi

# ---- DuckDB reads every row exactly once (the files fetched through botocore, as the lander:
# the objects are the lander's, and the bucket's owner may not read them)
mkdir -p "$work/t"
fetched=$(s3 lander fetch lake/t/ "$work/t")
[ "$fetched" = OK ] || bad "botocore fetch of lake/t/: $fetched"
got=$( (cd "$SRC" && node scripts/duckdb.mjs "SELECT count(*) AS n, count(DISTINCT id) AS d,
    min(id) AS lo, max(id) AS hi, count(extra) AS x, sum(extra) AS sx FROM read_parquet('$work/t/*.parquet',
    union_by_name = true)") | awk 'NR == 3 { print $1, $2, $3, $4, $5, $6 }')
# extra = 2 * id for ids 300..1199: 2 * (300 + ... + 1199) = 2 * 900 * 1499 / 2 = 1349100
[ "$got" = "1200 1200 0 1199 900 1349100" ] && ok "DuckDB: every row exactly once ($got)" ||
    bad "DuckDB count, distinct, min, max, count(extra), sum(extra): '$got', expected '1200 1200 0 1199 900 1349100'"

# ---- the bucket, reached through the list that the policy grants
probe=$(env -i PATH="$PATH" AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-east-1 \
    AWS_ENDPOINT_URL_S3="$RGW_ENDPOINT" AWS_ACCESS_KEY_ID="$ak" AWS_SECRET_ACCESS_KEY="$sk" \
    "$TOOLS/bucket_probe" "$url" 2>&1)
probe_other=$(env -i PATH="$PATH" AWS_EC2_METADATA_DISABLED=true AWS_REGION=us-east-1 \
    AWS_ENDPOINT_URL_S3="$RGW_ENDPOINT" AWS_ACCESS_KEY_ID="$ak" AWS_SECRET_ACCESS_KEY="$sk" \
    "$TOOLS/bucket_probe" "s3://$bucket/other" 2>&1)
if [ "$probe" = "reachable region=us-east-1" ] &&
    [[ "$probe_other" == "error=PERMISSION_DENIED message=ListObjectsV2 "*"HeadBucket was refused too"* ]]; then
    ok "bucket probe: HeadBucket refused, reached through the list of lake/ (region us-east-1); other/ refused"
else
    bad "bucket probe: lake: '$probe'; other: '$probe_other'"
fi

# ---- a prefix without s3:DeleteObject: every epoch commits, and the staged files it cannot
# delete are said (a warning naming the refusal, the summary's count; --json: one staged_left
# event and the summary's staged_left), and are there (botocore counts them)
gen 2000 300 >in5.ndjson
nd=(--url "s3://$bucket/nodelete" --epoch-rows 100 --compression none)
run nd1 write "${nd[@]}" --table t in5.ndjson
staged_nd=$(s3 owner count nodelete/_openetl/staging/ .parquet)
files_nd=$(s3 owner count nodelete/t/ .parquet)
if [ "$(st nd1)" = 0 ] && [ "$files_nd" = 3 ] && [ "$staged_nd" = 3 ] &&
    [ "$(grep -c '^warning: epoch 1 is committed, but 1 of its staged files could not be deleted (DeleteObject nodelete/_openetl/staging/' "$work/nd1.err")" = 1 ] &&
    grep -q 'AccessDenied' "$work/nd1.err" && grep -q '3 staged files left to gc$' "$work/nd1.err"; then
    ok "no s3:DeleteObject: 3 epochs committed, their 3 staged files left and said"
else
    bad "no s3:DeleteObject: exit $(st nd1), $files_nd files, $staged_nd staged: $(cat "$work/nd1.err")"
fi
gen 2300 300 >in6.ndjson
run nd2 --json write "${nd[@]}" --table t2 in6.ndjson
if [ "$(st nd2)" = 0 ] && [ "$(grep -c '"event":"staged_left"' "$work/nd2.out")" = 1 ] &&
    grep -q '"event":"summary".*"staged_left":3' "$work/nd2.out"; then
    ok "no s3:DeleteObject, --json: one staged_left event, the summary's staged_left 3"
else
    bad "no s3:DeleteObject, --json: exit $(st nd2): $(grep -v progress "$work/nd2.out" | head -c 1500)"
fi

# ---- the negative: another prefix
run neg write --url "s3://$bucket/other" --table t in1.ndjson
short="${ak:0:4}...${ak: -4}"
if [ "$(st neg)" = 8 ] &&
    grep -qE "as ${short//./\\.} \(credentials from env\), bucket $bucket, (key|prefix) other/" "$work/neg.err" &&
    grep -qE 'error: (GetObject|HeadObject|PutObject|ListObjectsV2) other/' "$work/neg.err" &&
    grep -q 'AccessDenied' "$work/neg.err"; then
    ok "another prefix: exit 8, naming the principal $short, the operation, bucket and key"
else
    bad "another prefix: exit $(st neg): $(cat "$work/neg.err")"
fi
if grep -rqF -e "$sk" -e "$owner_sk" "$work"/*.out "$work"/*.err; then
    bad "a secret key appears in an output"
else
    ok "no secret key in any output"
fi
[ "$fails" = 0 ] && echo "all ok" || echo "$fails failed"
exit $((fails > 0))
