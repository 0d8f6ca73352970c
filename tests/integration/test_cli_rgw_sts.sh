#!/usr/bin/env bash
# AssumeRole against Ceph RGW with STS on (issue 11; its STS is on the S3 endpoint, so
# AWS_ENDPOINT_URL_STS points there): a gateway of its own (tests/stores/start-rgw.sh with
# RGW_STS=1; STS changes how RGW answers wrong keys, so the shared fixture keeps it off).
# - write and ls through --role-arn (the role may do anything): they work;
# - a profile chained through two source profiles (top -> mid -> base keys): ls works;
# - a role whose permissions allow reading only: write is refused (exit 8), and the message
#   names the assumed role's session ARN, which proves the role's credentials signed it;
# - a role whose trust policy names someone else: exit 8, the role named, the trust-policy advice.
# The external id's path is tested against the fake STS (unit.creds_sts): RGW 16 refuses every
# AssumeRole of a role whose trust policy has an sts:ExternalId condition.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-rgw-sts-XXXXXX)
rgw=/tmp/s3land-rgw-sts.$$
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() {
    "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
RGW_DIR=$rgw RGW_STS=1 "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 ||
    { tail -5 "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
. "$rgw/env"
role() { # role NAME TRUSTED-PRINCIPALS-JSON ACTIONS-JSON
    radosgw-admin --conf "$RGW_CONF" role create --role-name="$1" --path=/ \
        --assume-role-policy-doc="{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"AWS\":$2},\"Action\":[\"sts:AssumeRole\"]}]}" \
        >/dev/null 2>>"$work/admin.log" &&
    radosgw-admin --conf "$RGW_CONF" role-policy put --role-name="$1" --policy-name=p \
        --policy-doc="{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Action\":$3,\"Resource\":[\"arn:aws:s3:::*\"]}]}" \
        >/dev/null 2>>"$work/admin.log"
}
role writer '["arn:aws:iam:::user/s3land"]' '["s3:*"]' &&
role second '["arn:aws:iam:::user/s3land","arn:aws:iam:::role/writer"]' '["s3:*"]' &&
role reader '["arn:aws:iam:::user/s3land"]' '["s3:GetObject","s3:ListBucket"]' &&
role nobody '["arn:aws:iam:::user/someone-else"]' '["s3:*"]' ||
    { cat "$work/admin.log"; echo "not ok - roles not created"; exit 1; }

home=$work/home
mkdir -p "$home/.aws"
printf '[base]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
    "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$home/.aws/credentials"
cat >"$home/.aws/config" <<'EOT'
[profile mid]
role_arn = arn:aws:iam:::role/writer
source_profile = base
duration_seconds = 900
[profile top]
role_arn = arn:aws:iam:::role/second
source_profile = mid
duration_seconds = 900
EOT
run() { # run NAME ARGS...
    local name=$1
    shift
    env -i PATH="$PATH" HOME="$home" AWS_EC2_METADATA_DISABLED=true \
        AWS_ENDPOINT_URL_S3="$RGW_ENDPOINT" AWS_ENDPOINT_URL_STS="$RGW_ENDPOINT" \
        "$S3LAND" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
    echo $? >"$work/$name.rc"
}
st() { cat "$work/$1.rc"; }
url=s3://$RGW_BUCKET/sts
printf '{"a":1}\n{"a":2}\n' >"$work/in.ndjson"
R=arn:aws:iam:::role

run w write --url "$url" --table t --profile base --role-arn $R/writer --role-duration 15m \
    "$work/in.ndjson"
run l ls --url "$url" --profile base --role-arn $R/writer --role-duration 15m --json
if [ "$(st w)" = 0 ] && [ "$(st l)" = 0 ] && grep -q '"rows":2' "$work/l.out"; then
    ok "write and ls through --role-arn on RGW's STS"
else
    bad "role writer: write $(st w) ls $(st l): $(cat "$work/w.err" "$work/l.err")"
fi
run chain ls --url "$url" --profile top --json
if [ "$(st chain)" = 0 ] && grep -q '"rows":2' "$work/chain.out"; then
    ok "a profile chained through two source profiles (top -> mid -> base)"
else
    bad "chained profile: $(st chain): $(cat "$work/chain.err")"
fi
run ro write --url "$url" --table t2 --profile base --role-arn $R/reader --role-duration 15m \
    --role-session-name ro-session "$work/in.ndjson"
if [ "$(st ro)" = 8 ] && grep -q 'assumed-role/reader/ro-session' "$work/ro.err" &&
    grep -q 'credentials from assume-role' "$work/ro.err"; then
    ok "a read-only role: write refused (8), naming the assumed role's session"
else
    bad "read-only role: $(st ro): $(cat "$work/ro.err")"
fi
run nob ls --url "$url" --profile base --role-arn $R/nobody --role-duration 15m
if [ "$(st nob)" = 8 ] && grep -q 'role/nobody' "$work/nob.err" &&
    grep -q 'trust policy first' "$work/nob.err"; then
    ok "a role that does not trust the caller: exit 8 with the trust-policy advice"
else
    bad "untrusting role: $(st nob): $(cat "$work/nob.err")"
fi
if grep -rq -e "$AWS_SECRET_ACCESS_KEY" "$work"/*.out "$work"/*.err; then
    bad "the secret key appears in an output"
else
    ok "no secret in any output"
fi
[ "$fails" = 0 ] && echo "all ok" || echo "$fails failed"
exit $((fails > 0))
