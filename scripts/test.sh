#!/usr/bin/env bash
# Runs every test: README's second command, and what .ci/run calls.
#  1. installs the test tools (Debian packages, DuckDB and the other readers from npm);
#  2. builds with -Werror (RelWithDebInfo, -O2) and runs every CTest label; builds a Release tree
#     (-O3) with -Werror too, the library and the command only (no tests run there): GCC's
#     -O3 inlining finds warnings (maybe-uninitialized) that -O2 does not;
#  3. builds again with AddressSanitizer + UBSan and runs the unit, golden and fuzz labels, then
#     the S3 suites (the s3 label on its gateway, and the C tests of the S3 client, store and
#     fault proxy);
#  4. builds with ThreadSanitizer and runs the suites whose code runs on several threads (the
#     pipelined commit's committer, publisher and staged delete beside the stager, lanes, the
#     claim): the destination's unit tests, the runner's, the crash points on file:// and S3, the
#     request plan, the S3 integration and fault suites; a race reported fails the test (TSan's
#     exit code 66);
#  5. checks the JUnit reports: any failed, skipped or not-run test, or a label with fewer tests
#     than tests/expected-counts.json commits to, fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
# The structure rules (issue 9), in figures; fails on new debt. Fast: it reads files only.
scripts/check-structure.sh

jobs=$(nproc)
# Some tests mount a small tmpfs (a full disk) and drop to an unprivileged user (an unwritable
# destination): they need root, so a user with sudo runs ctest through it.
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
scripts/build.sh build -DS3L_WERROR=ON
scripts/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DS3L_WERROR=ON -DS3L_TESTS=OFF
(cd build && $SUDO ctest --output-on-failure -j"$jobs" --output-junit junit.xml) || true

scripts/build.sh build-asan -DS3L_SANITIZE=ON -DS3L_WERROR=ON
(cd build-asan && $SUDO env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs" -L '^(unit|golden|fuzz)$' --output-junit junit.xml) || true
(cd build-asan && $SUDO env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs" --output-junit junit-s3.xml \
    -R '^s3\.|^integration\.s3_(rgw|list)$|^fault\.s3_faults$|^crash\.crash_s3$') || true

scripts/build.sh build-tsan -DS3L_TSAN=ON -DS3L_WERROR=ON
(cd build-tsan && $SUDO env TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" \
    ctest --output-on-failure -j"$jobs" --output-junit junit.xml \
    -R '^unit\.(commit|commit_alloc|commit_pipelined|local|store|pipeline|pipeline_runner|pipeline_memory)$|^crash\.crash_(points|s3)$|^s3\.cli_s3_requests$|^integration\.s3_rgw$|^fault\.s3_faults$') || true

node scripts/check-junit.mjs tests/expected-counts.json build/junit.xml build-asan/junit.xml \
    build-asan/junit-s3.xml build-tsan/junit.xml
