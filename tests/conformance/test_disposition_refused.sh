#!/usr/bin/env bash
# Conformance: replace and merge refused with their reason, before any data moves: exit 6, the
# reason (plain files cannot replace/merge atomically), and the destination untouched.
set -uo pipefail
S3LAND=${S3LAND:?}
work=$(mktemp -d /tmp/s3l-disp-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
printf '{"a":1}\n' >"$work/in.ndjson"
"$S3LAND" write --url "$work/lake" --table t --quiet "$work/in.ndjson" || { echo "not ok - first write"; fails=1; }
before=$(cd "$work/lake" && find . -type f -printf '%p %s\n' | sort | sha256sum)
for d in replace merge; do
    "$S3LAND" write --url "$work/lake" --table t --disposition $d "$work/in.ndjson" 2>"$work/err"
    code=$?
    if [ $code -eq 6 ] && grep -q "disposition $d is refused before any data moves" "$work/err" \
        && grep -q "append is the only disposition" "$work/err"; then
        echo "ok - $d refused with its reason (exit 6)"
    else
        echo "not ok - $d: exit $code"; cat "$work/err"; fails=1
    fi
done
after=$(cd "$work/lake" && find . -type f -printf '%p %s\n' | sort | sha256sum)
[ "$before" = "$after" ] && echo "ok - destination untouched" || { echo "not ok - destination changed"; fails=1; }
exit $fails
