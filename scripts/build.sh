#!/usr/bin/env bash
# Builds s3land into build/ (or $1), warnings as errors. Usage: scripts/build.sh [DIR] [cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
# Only cmake's warnings and errors are shown (a missing library names itself there).
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo --log-level=WARNING "$@"
cmake --build "$dir" -j"$(nproc)"
