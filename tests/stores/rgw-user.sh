#!/usr/bin/env bash
# rgw-user.sh NAME: makes sure a Ceph RGW user NAME exists on the gateway that start-rgw.sh
# started, and prints its keys on one line, "ACCESS_KEY SECRET_KEY". For tests that need a
# second principal (a bucket policy that grants another user something: its principal is
# arn:aws:iam:::user/NAME). Run after `. $RGW_DIR/env` (it reads RGW_CONF, the gateway's
# ceph.conf). A user that exists already keeps its keys: they are read back, so a second call
# prints the same line. The keys are test values made here, never secrets of anyone's.
#   read -r ak sk < <(tests/stores/rgw-user.sh alice)
set -euo pipefail
name=${1:?usage: rgw-user.sh NAME (after . \$RGW_DIR/env)}
conf=${RGW_CONF:?RGW_CONF is not set: source the env file start-rgw.sh wrote first}
case "$name" in *[!A-Za-z0-9_-]*|"") echo "rgw-user.sh: NAME may hold only [A-Za-z0-9_-]" >&2; exit 2 ;; esac
admin() { radosgw-admin --conf "$conf" -n client.admin "$@" 2>>"$(dirname "$conf")/log/admin.out"; }
keys() { # the first S3 key of the JSON user record on stdin
    jq -r '.keys[0] | "\(.access_key) \(.secret_key)"'
}
if info=$(admin user info --uid="$name"); then
    printf '%s\n' "$info" | keys
    exit 0
fi
# 20 upper-case letters and digits, 40 bytes of base64: the shapes of AWS's key ids and secrets
access=$(printf 'S3L%s' "$(openssl rand -hex 16 | tr a-f A-F)" | cut -c1-20)
secret=$(openssl rand -base64 30)
admin user create --uid="$name" --display-name="$name" --access-key="$access" \
    --secret="$secret" | keys
