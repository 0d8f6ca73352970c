#!/usr/bin/env bash
# The access options of every command that touches a store (issue 11): --profile, --role-arn,
# --external-id, --role-session-name, --role-duration, against the fake STS of
# tests/support/fake-creds.mjs (on 127.0.0.1) and a store endpoint nobody listens on.
# - a refused AssumeRole (a wrong external id, a role that refuses) exits 8 from write, ls,
#   schema, recover, gc and check, names the role and says to check the trust policy first;
# - the options reach STS (the fake's log: role, external id, session name, duration, signed by
#   the profile's key), and the region comes from the profile;
# - the role options' usage errors exit 1; no credentials anywhere exits 8 listing the sources;
# - canary: a unique secret key and session token, and the fake STS's secrets, appear in no
#   output (stdout, stderr, --json) and in no trace file (S3LAND_TRACE).
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-access-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
coproc FAKE { exec node "$SRC/tests/support/fake-creds.mjs" --idle 120; }
fake_pid=$FAKE_PID
read -r word port <&"${FAKE[0]}"
cleanup() { kill "$fake_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
[ "$word" = LISTENING ] || { echo "not ok - fake-creds.mjs did not start"; exit 1; }

canary_secret="canary-secret-$$-$RANDOM-zq"
canary_token="canary-token-$$-$RANDOM-zq"
mkdir -p "$work/home/.aws"
cat >"$work/home/.aws/credentials" <<EOT
[base]
aws_access_key_id = AKIDCANARYBASE01
aws_secret_access_key = $canary_secret
aws_session_token = $canary_token
EOT
cat >"$work/home/.aws/config" <<'EOT'
[profile base]
region = eu-west-3
[profile ext-bad]
role_arn = arn:aws:iam::123456789012:role/external
source_profile = base
external_id = wrong-id
EOT
run() { # run NAME ARGS...: stdout, stderr and status into $work/NAME.*
    local name=$1
    shift
    env -i PATH="$PATH" HOME="$work/home" AWS_EC2_METADATA_DISABLED=true \
        AWS_ENDPOINT_URL_STS="http://127.0.0.1:$port" S3LAND_TRACE="$work/$name.trace" \
        "$S3LAND" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
    echo $? >"$work/$name.rc"
}
st() { cat "$work/$1.rc"; }
url=s3://bucket/prefix
ep=http://127.0.0.1:9
printf '{"a":1}\n' >"$work/in.ndjson"

for cmd in write ls schema recover gc check; do
    extra=()
    [ "$cmd" = write ] && extra=(--table t "$work/in.ndjson")
    [ "$cmd" = schema ] && extra=(--table t)
    run "$cmd-ext" "$cmd" --url "$url" --endpoint "$ep" --profile ext-bad --json "${extra[@]}"
    if [ "$(st "$cmd-ext")" = 8 ] && grep -q 'role/external' "$work/$cmd-ext.err" &&
        grep -q 'trust policy first' "$work/$cmd-ext.err" &&
        grep -q '"exit":8' "$work/$cmd-ext.out"; then
        ok "$cmd: AssumeRole refused (wrong external id) exits 8 with the trust-policy advice"
    else
        bad "$cmd: wrong external id: status $(st "$cmd-ext"): $(cat "$work/$cmd-ext.err")"
    fi
    run "$cmd-denied" "$cmd" --url "$url" --endpoint "$ep" --profile base \
        --role-arn arn:aws:iam::123456789012:role/denied --external-id some-id "${extra[@]}"
    if [ "$(st "$cmd-denied")" = 8 ] && grep -q 'role/denied' "$work/$cmd-denied.err"; then
        ok "$cmd: --role-arn refused exits 8"
    else
        bad "$cmd: --role-arn denied: status $(st "$cmd-denied"): $(cat "$work/$cmd-denied.err")"
    fi
done

# the options reach STS: a role that is granted, then the store (nobody on port 9) fails: 3
before=$(curl -s "http://127.0.0.1:$port/__log")
run granted ls --url "$url" --endpoint "$ep" --profile base \
    --role-arn arn:aws:iam::123456789012:role/external --external-id ext-good \
    --role-session-name cli-session --role-duration 15m
log=$(curl -s "http://127.0.0.1:$port/__log")
if [ "$(st granted)" = 3 ] && node -e '
    const before = JSON.parse(process.argv[1]).length;
    const l = JSON.parse(process.argv[2]).slice(before).filter((e) => e.sts);
    const e = l[0] || {};
    const ok = l.length === 1 && e.sts === "AssumeRole" && e.externalId === "ext-good" &&
      e.session === "cli-session" && e.duration === "900" && e.akid === "AKIDCANARYBASE01" &&
      e.region === "eu-west-3" && e.token === true;
    process.exit(ok ? 0 : 1);' "$before" "$log"; then
    ok "ls --role-arn: AssumeRole with the external id, session name, duration, profile's key and region"
else
    bad "the role options did not reach STS as given: status $(st granted); $log"
fi

run dur ls --url "$url" --role-arn arn:aws:iam::1:role/r --role-duration 10s
run noarn ls --url "$url" --external-id x
run badarn ls --url "$url" --role-arn role/r
if [ "$(st dur)" = 1 ] && [ "$(st noarn)" = 1 ] && [ "$(st badarn)" = 1 ]; then
    ok "--role-duration under 900 s, --external-id without --role-arn, a non-ARN: usage (1)"
else
    bad "role usage errors: $(st dur) $(st noarn) $(st badarn)"
fi

# no credentials anywhere: 8, each source and why
mv "$work/home/.aws" "$work/home/aws.off"
run none ls --url "$url" --endpoint "$ep"
if [ "$(st none)" = 8 ] && grep -q 'no credentials found' "$work/none.err" &&
    grep -q 'env: AWS_ACCESS_KEY_ID not set' "$work/none.err" &&
    grep -q 'iam-role: off' "$work/none.err"; then
    ok "no credentials anywhere: exit 8 listing each source"
else
    bad "no credentials: status $(st none): $(cat "$work/none.err")"
fi
mv "$work/home/aws.off" "$work/home/.aws"

# canary: no secret in any output or trace
leak=$(grep -rl -e "$canary_secret" -e "$canary_token" -e 'not-for-output' "$work" --include='*.out' \
    --include='*.err' --include='*.trace' 2>/dev/null)
if [ -z "$leak" ]; then
    ok "canary: no secret key or session token in any output or trace"
else
    bad "a secret appears in: $leak"
fi
[ "$fails" = 0 ] && echo "all ok" || echo "$fails failed"
exit $((fails > 0))
