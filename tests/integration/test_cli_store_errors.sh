#!/usr/bin/env bash
# Exit codes of store failures, whichever step meets them (issue 10, item 7), on the s3 label's
# RADOS Gateway (tests/stores, the fixture's env file S3L_RGW_ENV; or one started here): write,
# ls, schema, check, recover and gc each exit 3 (destination) for a missing bucket, an
# unreachable endpoint and a host that does not resolve, and 8 (access) for a wrong secret and an
# unknown access key.
# `write` with a file input meets the store first in the check for inputs other pipelines landed,
# which once reported every failure as the input's (exit 2). A failing `ls` prints nothing on
# stdout (it once printed its header first). And the env file works with `. env` alone: a
# command started after it, without `set -a`, finds the store.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-store-errors-XXXXXX)
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
    rgw=/tmp/s3land-rgw-errors.$$
    RGW_DIR=$rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 \
        || { cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
    env_file=$rgw/env
fi

# `. env` alone, in a clean environment: the exports reach s3land (endpoint, region, keys).
env -i PATH="$PATH" bash -c ". '$env_file' && '$S3LAND' ls --url \"s3://\$RGW_BUCKET/env-check\"" \
    >"$work/out" 2>&1 && grep -q "tables at s3://" "$work/out" \
    && ok "'. env' alone points s3land at the store" \
    || bad "'. env' alone: $(cat "$work/out")"

# shellcheck disable=SC1090
. "$env_file"
unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN
printf '{"a":1}\n{"a":2}\n' >"$work/in.ndjson"

# expect CODE WHAT ENV... -- URL ENDPOINT: each command against the store, with ENV set.
expect() {
    local code=$1 what=$2
    shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    local url=$2 ep=$3
    local s3=(--url "$url" --endpoint "$ep" --region "$AWS_DEFAULT_REGION")
    local cmd
    for cmd in "write --table t $work/in.ndjson" "write --table t -" "ls" "ls --table t" \
               "schema --table t" "check" "recover" "gc"; do
        # shellcheck disable=SC2086
        env "${envs[@]}" timeout 120 "$S3LAND" $cmd "${s3[@]}" <"$work/in.ndjson" \
            >"$work/out" 2>"$work/err"
        local got=$?
        if [ "$got" -eq "$code" ] && grep -q "error:" "$work/err"; then
            ok "$what: $cmd exits $code"
        else
            bad "$what: $cmd exits $got, wanted $code: $(head -c 300 "$work/err")"
        fi
        case $cmd in
        ls*) [ -s "$work/out" ] && bad "$what: $cmd printed on stdout: $(head -c 200 "$work/out")" \
                 || ok "$what: $cmd prints nothing on stdout" ;;
        esac
    done
}

good="$RGW_ENDPOINT"
# A port nothing listens on: the gateway's, once closed, is unsafe (reused); port 1 is never ours.
expect 3 "missing bucket" -- "s3://s3land-no-such-bucket/p" "$good"
expect 3 "unreachable endpoint" -- "s3://$RGW_BUCKET/p" "http://127.0.0.1:1"
expect 3 "unresolvable host" -- "s3://$RGW_BUCKET/p" "http://s3land-no-such-host.invalid:8000"
expect 8 "wrong secret" AWS_SECRET_ACCESS_KEY=not-the-secret -- "s3://$RGW_BUCKET/p" "$good"
expect 8 "unknown access key" AWS_ACCESS_KEY_ID=S3LANDNOSUCHKEY00001 -- "s3://$RGW_BUCKET/p" "$good"

# The secret never appears in what s3land printed.
AWS_SECRET_ACCESS_KEY=s3land-canary-secret-4711 "$S3LAND" write --table t --url "s3://$RGW_BUCKET/p" \
    --endpoint "$good" "$work/in.ndjson" >"$work/out" 2>"$work/err"
grep -q "s3land-canary-secret-4711" "$work/out" "$work/err" \
    && bad "the secret appears in the output" || ok "the wrong secret is not printed"

[ $fails -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
