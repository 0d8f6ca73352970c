#!/usr/bin/env bash
# A Destination's spec.config.aws {role, externalId, sessionName, durationSeconds, stsEndpoint}
# under `run` (issue 12, item 4; issue 11's roles): the role is assumed through STS AssumeRole
# with the runner's own ambient identity (here the gateway user's keys in AWS_*), although the
# Pipeline does not say spec.runner.inherit: true; the destination itself gets only the role's
# credentials. On a Ceph RGW of its own with STS on (tests/stores/start-rgw.sh RGW_STS=1, STS on
# the S3 endpoint, given as aws.stsEndpoint):
# - role writer (s3:*): the run lands both sources, the markers' rows equal the inputs';
# - role reader (GetObject, ListBucket only): the run is refused (exit 8) and the message names
#   the assumed role's session (assumed-role/reader/SESSIONNAME): the role's credentials signed
#   it, not the runner's keys, which may write;
# - keys in the Destination and a role that does not trust anyone: the keys are used (the run
#   lands), and `check --config` prints the credential source "keys from the document; aws.role
#   ARN ignored: explicit keys win"; with the role alone, check prints "assume-role ARN";
# - no runner identity at all (env -i): exit 8 from the chain, listing the sources tried.
# The external id against the fake STS (tests/support/fake-creds.mjs; RGW 16 refuses every
# AssumeRole of a role with an sts:ExternalId condition): role/external with a wrong externalId is
# refused (exit 8, the trust-policy advice); with ext-good STS answers (its log shows ExternalId,
# RoleSessionName and DurationSeconds as the document gives them, signed by the runner's key) and
# the role's credentials sign the store's requests: the fault proxy in front of RGW answers them
# AccessDenied, and the refusal (exit 8) names the assumed role's session and "credentials from
# assume-role".
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-run-role-XXXXXX)
rgw=/tmp/s3land-rgw-runrole.$$
fails=0
fake_pid=""
sleep_pid=""
proxy_pid=""
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() {
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
    [ -n "$sleep_pid" ] && kill "$sleep_pid" 2>/dev/null
    [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
    "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
RGW_DIR=$rgw RGW_STS=1 "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 ||
    { tail -5 "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
# shellcheck disable=SC1090
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
role reader '["arn:aws:iam:::user/s3land"]' '["s3:GetObject","s3:ListBucket"]' &&
role nobody '["arn:aws:iam:::user/someone-else"]' '["s3:*"]' ||
    { cat "$work/admin.log"; echo "not ok - roles not created"; exit 1; }
R=arn:aws:iam:::role
cd "$work"
seq 1 41 | awk '{ printf "{\"n\": %d, \"s\": \"row %d\"}\n", $1, $1 }' >a.ndjson
seq 1 17 | awk '{ printf "{\"m\": %d}\n", $1 }' >b.ndjson
prefix=run-role-$$

# docs URL [extra config lines]: the Destination and a Pipeline of two sources (no inherit)
docs() {
    { printf 'apiVersion: openetl.io/v1alpha1\nkind: Destination\nmetadata:\n  name: rgw\nspec:\n  connector: s3\n  config:\n    url: %s\n    endpoint: %s\n    region: %s\n' \
        "$1" "$RGW_ENDPOINT" "$AWS_REGION"
      shift
      for l in "$@"; do printf '    %s\n' "$l"; done
      printf -- '---\napiVersion: openetl.io/v1alpha1\nkind: Pipeline\nmetadata:\n  name: roles\nspec:\n  destination:\n    name: rgw\n  sources:\n    - name: a\n      files: [a.ndjson]\n    - name: b\n      files: [b.ndjson]\n'
    } >p.yaml
}
# The runner's environment: its own identity (the gateway user's keys), nothing else.
runner() { # NAME ARGS...
    local name=$1
    shift
    env -i PATH="$PATH" HOME="$work" AWS_EC2_METADATA_DISABLED=true \
        AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" \
        "$S3LAND" "$@" >"$name.out" 2>"$name.err" </dev/null
    echo $? >"$name.rc"
}
st() { cat "$1.rc"; }
marker_rows() { # PREFIX TABLE
    local list key q
    q=$(printf '%s' "$1/_openetl/markers/$2/" | sed 's|/|%2F|g')
    list=$(curl -s --aws-sigv4 "aws:amz:$AWS_REGION:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
        --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$RGW_ENDPOINT/$RGW_BUCKET?list-type=2&prefix=$q")
    key=$(printf '%s' "$list" | grep -o '<Key>[^<]*</Key>' | head -1 | sed 's/<[^>]*>//g')
    [ -n "$key" ] || { echo 0; return; }
    curl -s --aws-sigv4 "aws:amz:$AWS_REGION:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
        --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$RGW_ENDPOINT/$RGW_BUCKET/$key" |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).rows))'
}

# 1. role writer, assumed with the runner's identity although inherit is not set
docs "s3://$RGW_BUCKET/$prefix/w" "aws:" "  role: $R/writer" "  sessionName: run-writer" \
    "  durationSeconds: 900" "  stsEndpoint: $RGW_ENDPOINT"
runner w run --config p.yaml
ra=$(marker_rows "$prefix/w" a)
rb=$(marker_rows "$prefix/w" b)
[ "$(st w)" = 0 ] && [ "$ra" = 41 ] && [ "$rb" = 17 ] \
    && ok "aws.role writer assumed with the runner's identity: both tables landed (41 + 17 rows)" \
    || bad "role writer: exit $(st w), rows $ra + $rb: $(cat w.err)"
runner cw check --config p.yaml
[ "$(st cw)" = 0 ] && grep -q "credentials: assume-role $R/writer" cw.out \
    && ok "check --config says the role is assumed ($(grep credentials: cw.out))" \
    || bad "check with the role: exit $(st cw): $(cat cw.out cw.err)"

# 2. role reader: its credentials sign the writes, and RGW refuses them
docs "s3://$RGW_BUCKET/$prefix/r" "aws:" "  role: $R/reader" "  sessionName: run-reader" \
    "  durationSeconds: 900" "  stsEndpoint: $RGW_ENDPOINT"
runner r run --config p.yaml
[ "$(st r)" = 8 ] && grep -q 'assumed-role/reader/run-reader' r.err \
    && ok "a read-only role: the run is refused (8), naming the assumed role's session" \
    || bad "role reader: exit $(st r): $(cat r.err)"
[ "$(marker_rows "$prefix/r" a)" = 0 ] && ok "nothing landed through the read-only role" \
    || bad "something landed through the read-only role"

# 3. keys in the document win over a role (one that would be refused)
docs "s3://$RGW_BUCKET/$prefix/k" "accessKeyId: { secret: K }" "secretAccessKey: { secret: S }" \
    "aws:" "  role: $R/nobody" "  stsEndpoint: $RGW_ENDPOINT"
export S3LAND_SECRET_K=$AWS_ACCESS_KEY_ID S3LAND_SECRET_S=$AWS_SECRET_ACCESS_KEY
env -i PATH="$PATH" HOME="$work" S3LAND_SECRET_K="$AWS_ACCESS_KEY_ID" \
    S3LAND_SECRET_S="$AWS_SECRET_ACCESS_KEY" "$S3LAND" run --config p.yaml >k.out 2>k.err
stk=$?
[ "$stk" = 0 ] && [ "$(marker_rows "$prefix/k" a)" = 41 ] \
    && ok "keys in the Destination are used even though it names a role" \
    || bad "keys and role: exit $stk: $(cat k.err)"
env -i PATH="$PATH" HOME="$work" S3LAND_SECRET_K="$AWS_ACCESS_KEY_ID" \
    S3LAND_SECRET_S="$AWS_SECRET_ACCESS_KEY" "$S3LAND" check --config p.yaml >ck.out 2>ck.err
stc=$?
[ "$stc" = 0 ] && grep -qF "credentials: keys from the document (spec.config.accessKeyId); aws.role $R/nobody ignored: explicit keys win" ck.out \
    && ok "check --config says the role was ignored: explicit keys win" \
    || bad "check with keys and a role: exit $stc: $(cat ck.out ck.err)"

# 4. a role but no runner identity anywhere
docs "s3://$RGW_BUCKET/$prefix/n" "aws:" "  role: $R/writer" "  stsEndpoint: $RGW_ENDPOINT"
env -i PATH="$PATH" HOME="$work" AWS_EC2_METADATA_DISABLED=true "$S3LAND" run --config p.yaml \
    >n.out 2>n.err
stn=$?
[ "$stn" = 8 ] && grep -q 'no credentials found' n.err \
    && ok "a role without any runner identity: exit 8, the sources tried listed" \
    || bad "role without identity: exit $stn: $(cat n.err)"

# 5. the external id, against the fake STS
exec 3< <(sleep 600) # the fake exits when its stdin closes
sleep_pid=$!
node "$SRC/tests/support/fake-creds.mjs" --idle 300 <&3 >fake.out 2>&1 &
fake_pid=$!
exec 3<&-
for _ in $(seq 100); do grep -q LISTENING fake.out && break; sleep 0.1; done
fport=$(awk '/LISTENING/ {print $2}' fake.out)
F=arn:aws:iam::123456789012:role
docs "s3://$RGW_BUCKET/$prefix/x" "aws:" "  role: $F/external" "  externalId: ext-bad" \
    "  stsEndpoint: http://127.0.0.1:$fport"
runner xb run --config p.yaml
[ "$(st xb)" = 8 ] && grep -q 'role/external' xb.err && grep -q 'trust policy' xb.err \
    && ok "a wrong externalId: AssumeRole refused (8) with the trust-policy advice" \
    || bad "wrong external id: exit $(st xb): $(cat xb.err)"
# The fake's credentials mean nothing to RGW: the store is the fault proxy, which answers every
# ListObjectsV2 AccessDenied, so that the refusal names who signed it.
node "$SRC/tests/support/fault-proxy.mjs" --target "$RGW_ENDPOINT" >proxy.out 2>&1 &
proxy_pid=$!
for _ in $(seq 100); do grep -q LISTENING proxy.out && break; sleep 0.1; done
purl=http://127.0.0.1:$(awk '/LISTENING/ {print $2}' proxy.out)
curl -s -X POST "$purl/__proxy/rules" -d '[{"op":"ListObjectsV2","action":"deny","times":-1}]' >/dev/null
docs "s3://$RGW_BUCKET/$prefix/x" "aws:" "  role: $F/external" "  externalId: ext-good" \
    "  sessionName: ext-session" "  durationSeconds: 1800" "  stsEndpoint: http://127.0.0.1:$fport"
sed -i "s|endpoint: $RGW_ENDPOINT|endpoint: $purl|" p.yaml
runner xg run --config p.yaml
curl -s "http://127.0.0.1:$fport/__log" >fake.log
if [ "$(st xg)" = 8 ] && grep -q 'credentials from assume-role' xg.err &&
    grep -q 'assumed-role/external/ext-session' xg.err && node -e '
const log = JSON.parse(require("fs").readFileSync("fake.log", "utf8")).filter((e) => e.sts === "AssumeRole");
const good = log.filter((e) => e.externalId === "ext-good");
const bad = log.filter((e) => e.externalId === "ext-bad");
const ok = good.length >= 1 && bad.length >= 1 && good.every((e) => e.session === "ext-session" &&
    e.duration === "1800" && e.akid === process.argv[1] && e.role.endsWith("role/external"));
process.exit(ok ? 0 : 1);' "$AWS_ACCESS_KEY_ID"; then
    ok "externalId ext-good: STS got it (signed by the runner's key, session and duration as given), the role's credentials went to the store"
else
    bad "external id ext-good: exit $(st xg): $(cat xg.err) $(cat fake.log)"
fi

if grep -rqF -e "$AWS_SECRET_ACCESS_KEY" -e "not-for-output" ./*.out ./*.err; then
    bad "a secret appears in an output"
else
    ok "no secret (the user's or the role's) in any output"
fi
[ "$fails" = 0 ] && echo "all ok"
exit $((fails > 0))
