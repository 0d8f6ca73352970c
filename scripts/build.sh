#!/usr/bin/env bash
# Builds s3land into build/ (or $1). Usage: scripts/build.sh [DIR] [cmake args]
# Warnings are not errors unless -DS3L_WERROR=ON is given (CI, scripts/test.sh, does): a user's or a
# packager's build must not fail on a warning a newer compiler adds.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
# Only cmake's warnings and errors are shown (a missing library names itself there).
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo --log-level=WARNING "$@"
cmake --build "$dir" -j"$(nproc)"
