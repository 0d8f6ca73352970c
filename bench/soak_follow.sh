#!/usr/bin/env bash
# The follow-mode soak run longer by hand (not in CI; issue 12, Tests): the same test as CTest's
# integration.follow_soak (tests/integration/test_follow_soak.mjs: two `s3land run` pipelines,
# file:// and Ceph RGW, two followed sources each, a seeded writer with bursts, quiet gaps and two
# rotations, seeded SIGKILLs about every 20 s (15 to 30 s apart once SOAK_SECONDS >= 120), a probe
# of how starved the machine is, then DuckDB's exactly-once and commit-delay checks), for
# SOAK_SECONDS (default 600; CTest's run: 60) of writing. The seed is printed; SOAK_SEED replays
# it. The output lists every window the commit-delay check excluded (a run down, the machine
# starved) and the longest delay and marker gap seen.
# Usage: bench/soak_follow.sh [BUILD_DIR]
#   env: SOAK_SECONDS (default 600), SOAK_SEED (default: a random one, printed),
#        S3L_RGW_ENV (a running store's env file; else one is started here and stopped at the end),
#        S3L_KEEP_TMP=1 keeps the work directory (inputs, lakes, the writer's events).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export S3LAND
S3LAND=$(realpath "${S3LAND:-$build/s3land}")
export S3L_SOURCE_DIR=$PWD S3L_BUILD_DIR
S3L_BUILD_DIR=$(realpath "$build")
export SOAK_SECONDS=${SOAK_SECONDS:-600}
[ -x "$S3LAND" ] || { echo "bench: no $S3LAND (scripts/build.sh $build first)" >&2; exit 1; }
rgw=""
cleanup() {
    [ -n "$rgw" ] && { bash tests/stores/stop-rgw.sh "$rgw" >/dev/null 2>&1; rm -f "$rgw.log"; }
    return 0
}
trap cleanup EXIT
if [ -z "${S3L_RGW_ENV:-}" ]; then
    rgw=/tmp/s3land-rgw-soak.$$
    RGW_DIR=$rgw bash tests/stores/start-rgw.sh >"$rgw.log" 2>&1 \
        || { cat "$rgw.log"; echo "bench: the RADOS Gateway did not start" >&2; exit 1; }
    export S3L_RGW_ENV=$rgw/env
fi
node tests/integration/test_follow_soak.mjs
