#!/usr/bin/env bash
# The runner's credentials (issue 12, item 4) on the s3 label's RADOS Gateway (the fixture's env
# file S3L_RGW_ENV; or one started here): `run` gives the destination no ambient credentials,
# region or endpoint. The gateway's keys in the environment alone are refused (exit 8, saying
# what to set, before any request); with spec.runner.inherit: true the same environment is used
# (endpoint, region and keys); keys in the Destination from secrets (--secrets-dir files, and
# S3LAND_SECRET_* variables), with no AWS_* variable at all, work. `check --config` (item 7) with
# the Pipeline applies the same rule (refused where run is), with a Destination alone the ambient
# chain, as `write --config` does. What landed is read back with
# curl's own SigV4 signer: the marker's row count equals the input's line count. No secret value
# appears in any output.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-run-creds-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
rgw=""
cleanup() {
    [ -n "$rgw" ] && "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
env_file=${S3L_RGW_ENV:-}
if [ -z "$env_file" ]; then
    rgw=/tmp/s3land-rgw-runcreds.$$
    RGW_DIR=$rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 \
        || { cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
    env_file=$rgw/env
fi
# shellcheck disable=SC1090
. "$env_file"
unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN AWS_PROFILE
cd "$work"
prefix="run-creds-$$-$(date +%s)"
seq 1 37 | awk '{ printf "{\"n\": %d, \"s\": \"row %d\"}\n", $1, $1 }' >in.ndjson

# dest FILE URL [extra config lines]; pipe FILE [runner inherit]
dest() {
    { printf 'apiVersion: openetl.io/v1alpha1\nkind: Destination\nmetadata:\n  name: rgw\nspec:\n  connector: s3\n  config:\n    url: %s\n' "$2"
      shift 2
      for l in "$@"; do printf '    %s\n' "$l"; done; } >"$work/dest.yaml"
}
pipe() { # name [inherit]
    { printf 'apiVersion: openetl.io/v1alpha1\nkind: Pipeline\nmetadata:\n  name: %s\nspec:\n  destination:\n    name: rgw\n  sources:\n    - name: t\n      files: [in.ndjson]\n' "$1"
      [ -n "${2:-}" ] && printf '  runner:\n    inherit: %s\n' "$2"; } >"$work/pipe.yaml"
}
# rows of the committed marker of table t under URL prefix $1, read with curl's SigV4 signer
marker_rows() {
    local list key q
    q=$(printf '%s' "$1/_openetl/markers/t/" | sed 's|/|%2F|g')
    list=$(curl -s --aws-sigv4 "aws:amz:$AWS_REGION:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        "$RGW_ENDPOINT/$RGW_BUCKET?list-type=2&prefix=$q")
    key=$(printf '%s' "$list" | grep -o '<Key>[^<]*</Key>' | head -1 | sed 's/<[^>]*>//g')
    [ -n "$key" ] || { echo 0; return; }
    curl -s --aws-sigv4 "aws:amz:$AWS_REGION:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        "$RGW_ENDPOINT/$RGW_BUCKET/$key" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).rows))'
}
leaks() { grep -F -e "$AWS_SECRET_ACCESS_KEY" "$@" >/dev/null 2>&1; }

# 1. Ambient keys, region and endpoint only: refused, exit 8, naming what to set.
dest x "s3://$RGW_BUCKET/$prefix/a"
pipe a
"$S3LAND" run --config dest.yaml --config pipe.yaml >out1 2>err1
st=$?
[ "$st" = 8 ] && grep -q 'spec.config.accessKeyId' err1 && grep -q 'spec.runner.inherit: true' err1 \
    && ok "ambient credentials alone are refused (exit 8, says what to set)" \
    || bad "ambient credentials alone: exit $st: $(cat err1)"
[ "$(marker_rows "$prefix/a")" = 0 ] && ok "nothing landed when refused" || bad "something landed when refused"

# check --config (issue 12, item 7) with the Pipeline: the runner's rule, so it fails as run does.
both() { { cat dest.yaml; echo ---; cat pipe.yaml; } >both.yaml; }
both
"$S3LAND" check --config both.yaml >outc1 2>errc1
st=$?
[ "$st" = 8 ] && grep -q 'spec.runner.inherit: true' errc1 && ok "check --config with the Pipeline refuses as run does (exit 8)" \
    || bad "check --config with the Pipeline: exit $st: $(cat errc1)"
"$S3LAND" check --config dest.yaml >outc2 2>errc2
st=$?
[ "$st" = 0 ] && ok "check --config with the Destination alone uses the ambient chain, as write does" \
    || bad "check --config with the Destination alone: exit $st: $(cat errc2)"
"$S3LAND" write --config dest.yaml --table w in.ndjson >outw 2>errw
st=$?
rows=$(curl -s --aws-sigv4 "aws:amz:$AWS_REGION:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    "$RGW_ENDPOINT/$RGW_BUCKET?list-type=2&prefix=$(printf '%s' "$prefix/a/_openetl/markers/w/" | sed 's|/|%2F|g')" | grep -c '<Key>')
[ "$st" = 0 ] && [ "$rows" = 1 ] && ok "write --config takes the destination from the document (one marker)" \
    || bad "write --config: exit $st, markers $rows: $(cat errw)"

# 2. The same environment with spec.runner.inherit: true.
pipe a true
"$S3LAND" run --config dest.yaml --config pipe.yaml >out2 2>err2
st=$?
rows=$(marker_rows "$prefix/a")
[ "$st" = 0 ] && [ "$rows" = 37 ] && ok "inherit: true uses the environment (37 rows landed)" \
    || bad "inherit: true: exit $st, rows $rows: $(cat err2)"
both
"$S3LAND" check --config both.yaml >outc3 2>errc3 && ok "check --config with inherit: true passes" \
    || bad "check --config with inherit: true: $(cat errc3)"

# 3. Keys from secrets, endpoint and region in the Destination, no AWS_* variable at all.
mkdir -p secrets
printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >secrets/rgw_secret
dest x "s3://$RGW_BUCKET/$prefix/b" "endpoint: $RGW_ENDPOINT" "region: $AWS_REGION" \
    "accessKeyId: { secret: RGW_KEY }" "secretAccessKey: { secret: rgw_secret }"
pipe b
env -i PATH="$PATH" HOME="$work" S3LAND_SECRET_RGW_KEY="$AWS_ACCESS_KEY_ID" \
    "$S3LAND" run --config dest.yaml --config pipe.yaml --secrets-dir secrets --json >out3 2>err3
st=$?
both
env -i PATH="$PATH" HOME="$work" S3LAND_SECRET_RGW_KEY="$AWS_ACCESS_KEY_ID" \
    "$S3LAND" check --config both.yaml --secrets-dir secrets >outc4 2>errc4 \
    && ok "check --config with keys from secrets passes" || bad "check --config with secrets: $(cat errc4)"
rows=$(marker_rows "$prefix/b")
[ "$st" = 0 ] && [ "$rows" = 37 ] && ok "keys from secrets work without any AWS_* variable (37 rows)" \
    || bad "keys from secrets: exit $st, rows $rows: $(cat err3)"

# 4. A wrong secret: exit 8 from the store, and the value is nowhere in the output.
printf 'not-the-secret-%s\n' "$$" >secrets/rgw_secret
dest x "s3://$RGW_BUCKET/$prefix/c" "endpoint: $RGW_ENDPOINT" "region: $AWS_REGION" \
    "accessKeyId: { secret: RGW_KEY }" "secretAccessKey: { secret: rgw_secret }"
env -i PATH="$PATH" HOME="$work" S3LAND_SECRET_RGW_KEY="$AWS_ACCESS_KEY_ID" \
    "$S3LAND" run --config dest.yaml --config pipe.yaml --secrets-dir secrets --json >out4 2>err4
st=$?
[ "$st" = 8 ] && ok "a wrong secret key is refused by the store (exit 8)" || bad "wrong secret: exit $st: $(cat err4)"
if leaks out1 err1 out2 err2 out3 err3 outc1 errc1 outc4 errc4 || grep -F "not-the-secret-$$" out4 err4 >/dev/null; then
    bad "a secret value appears in the output"
else
    ok "no secret value appears in any output"
fi
[ "$fails" = 0 ] && echo "all checks passed"
exit $((fails > 0))
