#!/usr/bin/env bash
# The STS endpoint from a profile's `services` section (issue 11, item 1: "region and endpoint
# come from the profile too"), against the fake STS of tests/support/fake-creds.mjs on 127.0.0.1,
# the store an endpoint nobody listens on (so every command ends with exit 3 after STS):
#   [profile svc]                 services = local
#   [services local]              sts =
#                                   endpoint_url = http://127.0.0.1:FAKE
# The precedence is the AWS SDKs and Tools Reference Guide's ("Service-specific endpoints"):
# AWS_ENDPOINT_URL_STS, then AWS_ENDPOINT_URL, then the services section's sts endpoint_url,
# then the profile's endpoint_url; botocore 1.29 knows neither profile setting, so the fake's
# log is the oracle: which endpoint got the AssumeRole, signed with which key, for which region.
# - --role-arn over --profile svc: AssumeRole reaches the services section's endpoint;
# - a role profile (role_arn + source_profile) naming the services section: the same;
# - AWS_ENDPOINT_URL_STS, and AWS_ENDPOINT_URL, win over the profile (which points at port 9);
# - the services section's sts entry wins over the profile's endpoint_url;
# - unchanged otherwise: the S3 endpoint is --endpoint, then AWS_ENDPOINT_URL_S3, then the
#   profile's services s3 endpoint_url (seen in the failure naming the port); the region is
#   --region, then AWS_REGION, then the profile's region (seen in the STS request's scope).
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-sts-svc-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
coproc FAKE { exec node "$SRC/tests/support/fake-creds.mjs" --idle 120; }
fake_pid=$FAKE_PID
read -r word port <&"${FAKE[0]}"
cleanup() { kill "$fake_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
[ "$word" = LISTENING ] || { echo "not ok - fake-creds.mjs did not start"; exit 1; }
fake=http://127.0.0.1:$port
dead=http://127.0.0.1:9

mkdir -p "$work/home/.aws"
cat >"$work/home/.aws/credentials" <<'EOT'
[svc]
aws_access_key_id = AKIDSVCPROFILE01
aws_secret_access_key = svc-secret-not-for-output
[glob]
aws_access_key_id = AKIDGLOBPROFILE1
aws_secret_access_key = glob-secret-not-for-output
[deadsts]
aws_access_key_id = AKIDDEADSTSPROF1
aws_secret_access_key = dead-secret-not-for-output
EOT
cat >"$work/home/.aws/config" <<EOT
[profile svc]
region = eu-west-3
services = local
[services local]
sts =
  endpoint_url = $fake
s3 =
  endpoint_url = http://127.0.0.1:5
[profile chained]
role_arn = arn:aws:iam::123456789012:role/chained
source_profile = svc
services = local
[profile deadsts]
region = eu-west-3
services = dead
[services dead]
sts =
  endpoint_url = $dead
[profile glob]
region = eu-west-3
endpoint_url = $dead
services = local
EOT
# run NAME [VAR=VALUE...] -- ARGS...: s3land ls under the temporary HOME, nothing else inherited
run() {
    local name=$1
    shift
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    env -i PATH="$PATH" HOME="$work/home" AWS_EC2_METADATA_DISABLED=true "${vars[@]}" \
        "$S3LAND" ls --url s3://bucket/prefix "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null
    echo $? >"$work/$name.rc"
}
st() { cat "$work/$1.rc"; }
nlog() { curl -s "$fake/__log" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).filter(e=>e.sts).length))'; }
last() { # the last STS request's FIELD
    curl -s "$fake/__log" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const l=JSON.parse(s).filter(e=>e.sts);console.log(String((l[l.length-1]||{})[process.argv[1]]))})' "$1"
}
# reached NAME EXPECTED-AKID: the run's AssumeRole came to the fake (one more call, that key)
reached() {
    local before=$1 name=$2 akid=$3 now
    now=$(nlog)
    [ "$now" = $((before + 1)) ] && [ "$(last akid)" = "$akid" ] && [ "$(st "$name")" = 3 ]
}
role=arn:aws:iam::123456789012:role/plain

n=$(nlog)
run svc -- --endpoint "$dead" --profile svc --role-arn "$role"
reached "$n" svc AKIDSVCPROFILE01 && ok "--role-arn over --profile svc: AssumeRole sent to the services section's sts endpoint_url" ||
    bad "services sts endpoint not used: log $n -> $(nlog), exit $(st svc): $(cat "$work/svc.err")"

n=$(nlog)
run chained -- --endpoint "$dead" --profile chained
reached "$n" chained AKIDSVCPROFILE01 && [ "$(last role)" = arn:aws:iam::123456789012:role/chained ] &&
    ok "a role profile (role_arn + source_profile) with a services section: AssumeRole sent there" ||
    bad "role profile: log $n -> $(nlog), exit $(st chained): $(cat "$work/chained.err")"

n=$(nlog)
run envsts AWS_ENDPOINT_URL_STS="$fake" -- --endpoint "$dead" --profile deadsts --role-arn "$role"
run envall AWS_ENDPOINT_URL="$fake" -- --endpoint "$dead" --profile deadsts --role-arn "$role"
if [ "$(nlog)" = $((n + 2)) ] && [ "$(st envsts)" = 3 ] && [ "$(st envall)" = 3 ]; then
    ok "AWS_ENDPOINT_URL_STS and AWS_ENDPOINT_URL come before the profile's services section"
else
    bad "environment over profile: log $n -> $(nlog); $(st envsts) $(cat "$work/envsts.err"); $(st envall) $(cat "$work/envall.err")"
fi

n=$(nlog)
run glob -- --endpoint "$dead" --profile glob --role-arn "$role"
reached "$n" glob AKIDGLOBPROFILE1 && ok "the services section's sts endpoint_url comes before the profile's endpoint_url" ||
    bad "services over endpoint_url: log $n -> $(nlog), exit $(st glob): $(cat "$work/glob.err")"

# unchanged: S3 endpoint and region precedence (flag, then environment, then profile)
run ep_flag AWS_ENDPOINT_URL_S3=http://127.0.0.1:7 -- --endpoint "$dead" --profile svc
run ep_env AWS_ENDPOINT_URL_S3=http://127.0.0.1:7 -- --profile svc
run ep_prof -- --profile svc
if grep -q 'port 9\b' "$work/ep_flag.err" && grep -q 'port 7\b' "$work/ep_env.err" &&
    grep -q 'port 5\b' "$work/ep_prof.err"; then
    ok "S3 endpoint: --endpoint, then AWS_ENDPOINT_URL_S3, then the profile's services s3 endpoint_url"
else
    bad "S3 endpoint precedence: $(cat "$work/ep_flag.err" "$work/ep_env.err" "$work/ep_prof.err")"
fi
run r_flag AWS_REGION=ap-south-1 -- --endpoint "$dead" --region us-west-1 --profile svc --role-arn "$role"
r1=$(last region)
run r_env AWS_REGION=ap-south-1 -- --endpoint "$dead" --profile svc --role-arn "$role"
r2=$(last region)
run r_prof -- --endpoint "$dead" --profile svc --role-arn "$role"
r3=$(last region)
if [ "$r1 $r2 $r3" = "us-west-1 ap-south-1 eu-west-3" ]; then
    ok "region: --region, then AWS_REGION, then the profile's region (the STS request's scope)"
else
    bad "region precedence: flag/env/profile gave '$r1 $r2 $r3', expected 'us-west-1 ap-south-1 eu-west-3'"
fi
if grep -rq -e 'not-for-output' "$work"/*.out "$work"/*.err; then
    bad "a secret appears in an output"
else
    ok "no secret in any output"
fi
[ "$fails" = 0 ] && echo "all ok" || echo "$fails failed"
exit $((fails > 0))
