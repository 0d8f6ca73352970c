# shellcheck shell=bash
# The preamble the shell integration tests share: sourced (`. "$S3L_SOURCE_DIR/tests/integration/
# lib.sh" NAME`), never run. CMake registers test_*.sh only, so this file is not a test itself.
#
# It gives a test:
# - S3LAND and SRC (from S3LAND and S3L_SOURCE_DIR, which CTest sets), bash strict mode without -e
#   (a failed check counts, it does not end the run);
# - work: a fresh directory /tmp/s3l-NAME-XXXXXX, removed at exit;
# - fails, ok MESSAGE, bad MESSAGE: TAP-like "ok - " and "not ok - " lines, bad counting failures;
# - s3l_rgw TAG: the s3 label's Ceph RGW (the fixture's env file, S3L_RGW_ENV) or, without one, a
#   gateway of this test's own under /tmp/s3land-rgw-TAG.PID, stopped at exit; either way its env
#   file is sourced (RGW_ENDPOINT, RGW_BUCKET, RGW_CONF, AWS_* for the gateway user);
# - s3l_proxy TARGET: tests/support/fault-proxy.mjs in front of TARGET, killed at exit; sets
#   proxy_pid, proxy_port and purl (its base URL), its output in $work/proxy.out;
# - s3l_kill_at_exit PID...: more processes to kill (SIGTERM) at exit;
# - cleanup_extra: if the test defines a function of that name, it runs at exit first (for what a
#   plain SIGTERM does not cover, e.g. kill -9 of a writer left running on purpose).
# The trap is set here: a test sets no EXIT trap of its own.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d "/tmp/s3l-${1:?lib.sh NAME}-XXXXXX")
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

s3l_exit_pids=()
s3l_own_rgw=""
s3l_kill_at_exit() { s3l_exit_pids+=("$@"); }
s3l_cleanup() {
    declare -F cleanup_extra >/dev/null && cleanup_extra
    local p
    for p in "${s3l_exit_pids[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$s3l_own_rgw" ] && "$SRC/tests/stores/stop-rgw.sh" "$s3l_own_rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap s3l_cleanup EXIT

s3l_rgw() { # TAG [VAR=VALUE...: start-rgw.sh's settings for a gateway of our own]
    local tag=$1 env_file=${S3L_RGW_ENV:-}
    shift
    if [ -z "$env_file" ]; then
        s3l_own_rgw=/tmp/s3land-rgw-$tag.$$
        env RGW_DIR="$s3l_own_rgw" "$@" "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 ||
            { cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
        env_file=$s3l_own_rgw/env
    fi
    # shellcheck disable=SC1090
    . "$env_file"
}

s3l_proxy() { # TARGET: the fault proxy in front of TARGET
    node "$SRC/tests/support/fault-proxy.mjs" --target "$1" >"$work/proxy.out" 2>&1 3>&- &
    proxy_pid=$!
    s3l_kill_at_exit "$proxy_pid"
    local _
    for _ in $(seq 100); do grep -q LISTENING "$work/proxy.out" && break; sleep 0.1; done
    proxy_port=$(awk '/LISTENING/ {print $2}' "$work/proxy.out")
    [ -n "$proxy_port" ] ||
        { cat "$work/proxy.out"; echo "not ok - the fault proxy did not start"; exit 1; }
    # shellcheck disable=SC2034 # used by the sourcing test
    purl=http://127.0.0.1:$proxy_port
}
