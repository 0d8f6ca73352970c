#!/usr/bin/env bash
# Builds s3land into build/ (or $1), warnings as errors. Usage: scripts/build.sh [DIR] [cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
