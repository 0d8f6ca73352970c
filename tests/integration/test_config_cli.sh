#!/usr/bin/env bash
# `s3land validate` and `s3land config-schema` as a user runs them (issue 12, items 1 and 2):
# - secrets from S3LAND_SECRET_<NAME> and from --secrets-dir (one trailing newline stripped,
#   exactly one), and a canary value of each that must appear in no output of any failure path,
#   with --json and without, on stdout and stderr;
# - exit codes: 0 valid, 1 invalid or unreadable, 1 for usage;
# - config-schema from another directory prints schemas/KIND.schema.json byte for byte;
# - `cmake --install` puts the binary and the three schemas in place.
set -uo pipefail
S3LAND=${S3LAND:?S3LAND must name the s3land binary}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-config-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

ENV_CANARY='env-CaNaRy-5b2c'
DIR_CANARY='dir-CaNaRy-81af'
mkdir -p "$work/secrets"
printf '%s\n' "$DIR_CANARY" >"$work/secrets/DIR_KEY"
printf 'zstd\n' >"$work/secrets/CODEC"        # one newline: the value is zstd
printf 'zstd\n\n' >"$work/secrets/CODEC2"     # two: the value is "zstd\n", not a codec
printf 'http://127.0.0.1:7480\n' >"$work/secrets/EP"
printf '%s' "$DIR_CANARY" >"$work/secrets/BAD_EP" # not an endpoint
export S3LAND_SECRET_ENV_KEY=$ENV_CANARY

doc_head() {
    cat <<EOF
apiVersion: openetl.io/v1alpha1
kind: Destination
metadata:
  name: lake
spec:
  connector: s3
  config:
    url: s3://my-bucket/p
    accessKeyId: { secret: ENV_KEY }
    secretAccessKey: { secret: DIR_KEY }
EOF
}
doc() { { doc_head; printf '%s\n' "$@" | sed 's/^/    /'; } >"$work/$name.yaml"; }

# run NAME CODE PATTERN [ARGS...]: validate $work/NAME.yaml with --secrets-dir, with and without
# --json; checks the exit code, the pattern, and that no canary appears anywhere.
run() {
    local name=$1 code=$2 pattern=$3
    shift 3
    for mode in text json; do
        local j=()
        [ "$mode" = json ] && j=(--json)
        "$S3LAND" "${j[@]}" validate --secrets-dir "$work/secrets" "$@" "$work/$name.yaml" \
            >"$work/out" 2>"$work/err"
        local got=$?
        if [ "$got" -ne "$code" ]; then
            bad "$name ($mode): exit $got, wanted $code"; sed 's/^/    /' "$work/err" | head -3
        elif ! grep -Eq -- "$pattern" "$work/out" "$work/err"; then
            bad "$name ($mode): no /$pattern/"; sed 's/^/    /' "$work/out" "$work/err" | head -3
        elif grep -q -e "$ENV_CANARY" -e "$DIR_CANARY" "$work/out" "$work/err"; then
            bad "$name ($mode): a secret's value was printed"
        else
            ok "$name ($mode): exit $code, /$pattern/, no secret value"
        fi
    done
}

name=valid doc "compression: { secret: CODEC }" "endpoint: { secret: EP }"
run valid 0 'Destination lake: valid|"event":"valid"'
name=two-newlines doc "compression: { secret: CODEC2 }"
run two-newlines 1 'spec.config.compression: one of zstd, snappy, gzip, none'
name=missing doc "sessionToken: { secret: NOPE }"
run missing 1 'spec.config.sessionToken: secret NOPE not found: set S3LAND_SECRET_NOPE or put a file NOPE in'
name=bad-endpoint doc "endpoint: { secret: BAD_EP }"
run bad-endpoint 1 'spec.config.endpoint: expected an endpoint .*got the value of secret BAD_EP \(not shown\)'
name=env-as-url doc "region: eu-west-1"
sed -i 's|url: s3://my-bucket/p|url: { secret: ENV_KEY }|' "$work/env-as-url.yaml"
run env-as-url 1 'spec.config.url: expected a URL with a scheme.*secret ENV_KEY \(not shown\)'
name=unknown doc "fileSzie: 1MiB"
run unknown 1 'spec.config.fileSzie: unknown field'
name=bad-size doc "fileSize: big"
run bad-size 1 'spec.config.fileSize: expected a size like 256MiB, got "big"'
name=secret-shape doc "sessionToken: { secret: ENV_KEY, value: x }"
run secret-shape 1 'spec.config.sessionToken.value: unknown field'
# A secrets directory that is not a directory: a read error, named, and no value.
"$S3LAND" --json validate --secrets-dir "$work/secrets/DIR_KEY" "$work/missing.yaml" >"$work/out" 2>"$work/err"
if [ $? -eq 1 ] && ! grep -q -e "$ENV_CANARY" -e "$DIR_CANARY" "$work/out" "$work/err"; then
    ok "a secrets dir that is a file: exit 1, no secret value"
else
    bad "a secrets dir that is a file"
fi
# Without --check-secrets the secrets are not looked up: a missing one is no error.
"$S3LAND" validate "$work/missing.yaml" >"$work/out" 2>&1 && ok "secrets unresolved without --check-secrets" \
    || bad "validate without --check-secrets resolved secrets: $(cat "$work/out")"
# With --check-secrets and no dir, the environment still serves.
"$S3LAND" validate --check-secrets "$work/valid.yaml" >"$work/out" 2>&1
grep -q 'secret DIR_KEY not found: set S3LAND_SECRET_DIR_KEY or give --secrets-dir' "$work/out" \
    && ok "--check-secrets without a dir names the variable" || bad "--check-secrets without a dir: $(cat "$work/out")"

# Several files, one unreadable: every document judged, exit 1, the file named.
"$S3LAND" validate "$SRC/docs/examples/config/pipeline.yaml" "$work/none.yaml" >"$work/out" 2>"$work/err"
if [ $? -eq 1 ] && grep -q "Pipeline web-logs: valid" "$work/out" && grep -q "none.yaml" "$work/err"; then
    ok "an unreadable file among valid ones: exit 1, named"
else
    bad "unreadable file: $(cat "$work/err")"
fi
: >"$work/empty.yaml"
"$S3LAND" validate "$work/empty.yaml" >"$work/out" 2>&1
[ $? -eq 1 ] && grep -q "empty.yaml: holds no documents" "$work/out" && ok "an empty file: exit 1, named" \
    || bad "an empty file: $(cat "$work/out")"
"$S3LAND" validate >/dev/null 2>&1; [ $? -eq 1 ] && ok "validate without files: exit 1" || bad "validate without files"
"$S3LAND" validate --bogus x >/dev/null 2>&1; [ $? -eq 1 ] && ok "validate --bogus: exit 1" || bad "validate --bogus"

# config-schema from another directory, byte for byte.
for k in destination pipeline sink; do
    if (cd / && "$S3LAND" config-schema $k) | cmp -s - "$SRC/schemas/$k.schema.json"; then
        ok "config-schema $k from / equals schemas/$k.schema.json"
    else
        bad "config-schema $k differs"
    fi
done

# The install rule: the binary and the schemas.
if [ -n "${S3L_BUILD_DIR:-}" ]; then
    if cmake --install "$S3L_BUILD_DIR" --prefix "$work/inst" >/dev/null 2>&1 && [ -x "$work/inst/bin/s3land" ]; then
        all=1
        for k in destination pipeline sink; do
            cmp -s "$work/inst/share/s3land/schemas/$k.schema.json" "$SRC/schemas/$k.schema.json" || all=0
        done
        [ $all = 1 ] && ok "cmake --install: bin/s3land and share/s3land/schemas/*.schema.json" \
            || bad "installed schemas differ or are missing"
    else
        bad "cmake --install failed"
    fi
fi

[ "$fails" -eq 0 ] && echo "all ok" || echo "$fails failures"
exit $((fails > 0))
