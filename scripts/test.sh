#!/usr/bin/env bash
# Runs every test: README's second command, and what .ci/run calls.
#  1. installs the test tools (Debian packages, DuckDB and the other readers from npm);
#  2. builds with -Werror (RelWithDebInfo, -O2) and runs every CTest label; builds a Release tree
#     (-O3) with -Werror too, the library and the command only (no tests run there): GCC's
#     -O3 inlining finds warnings (maybe-uninitialized) that -O2 does not;
#  3. builds again with AddressSanitizer + UBSan and runs the unit, golden and fuzz labels, then
#     the S3 suites (the s3 label on its gateway, and the C tests of the S3 client, store and
#     fault proxy);
#  4. checks the JUnit reports: any failed, skipped or not-run test, or a label with fewer tests
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

node scripts/check-junit.mjs tests/expected-counts.json build/junit.xml build-asan/junit.xml \
    build-asan/junit-s3.xml
