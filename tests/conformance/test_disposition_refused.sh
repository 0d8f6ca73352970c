#!/usr/bin/env bash
# Conformance: replace and merge refused with their reason, before any data moves: exit 6, the
# reason (plain files cannot replace/merge atomically), and the destination untouched.
# With S3L_TEST_STORE=s3 (label s3) the lake is s3://BUCKET/<prefix> on the store of S3L_RGW_ENV,
# and "untouched" compares the keys, sizes, ETags and LastModified listed by curl's own SigV4.
set -uo pipefail
S3LAND=${S3LAND:?}
work=$(mktemp -d /tmp/s3l-disp-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
url=$work/lake
snapshot() { (cd "$work/lake" && find . -type f -printf '%p %s\n' | sort); }
if [ "${S3L_TEST_STORE:-file}" = s3 ]; then
    set -a
    # shellcheck disable=SC1090
    . "${S3L_RGW_ENV:?S3L_TEST_STORE=s3 needs S3L_RGW_ENV}"
    set +a
    unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN
    export AWS_ENDPOINT_URL_S3=$RGW_ENDPOINT AWS_REGION=$AWS_DEFAULT_REGION
    prefix=$(basename "$work")-lake
    url=s3://$RGW_BUCKET/$prefix
    snapshot() {
        curl -sf --aws-sigv4 "aws:amz:$AWS_DEFAULT_REGION:s3" \
            -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
            "$RGW_ENDPOINT/$RGW_BUCKET?list-type=2&max-keys=1000&prefix=$prefix%2F" \
            | grep -oE '<(Key|Size|ETag|LastModified)>[^<]*'
    }
fi
printf '{"a":1}\n' >"$work/in.ndjson"
"$S3LAND" write --url "$url" --table t --quiet "$work/in.ndjson" || { echo "not ok - first write"; fails=1; }
before=$(snapshot)
[ -n "$before" ] || { echo "not ok - the first write left nothing to list"; fails=1; }
for d in replace merge; do
    "$S3LAND" write --url "$url" --table t --disposition $d "$work/in.ndjson" 2>"$work/err"
    code=$?
    if [ $code -eq 6 ] && grep -q "disposition $d is refused before any data moves" "$work/err" \
        && grep -q "append is the only disposition" "$work/err"; then
        echo "ok - $d refused with its reason (exit 6)"
    else
        echo "not ok - $d: exit $code"; cat "$work/err"; fails=1
    fi
done
after=$(snapshot)
[ "$before" = "$after" ] && echo "ok - destination untouched" || { echo "not ok - destination changed"; fails=1; }
exit $fails
