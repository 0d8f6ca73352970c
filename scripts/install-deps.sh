#!/usr/bin/env bash
# Installs what s3land needs on Debian 12, then the npm packages (real datasets; with --test also
# the independent readers). Idempotent. Usage: scripts/install-deps.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
    SUDO="sudo"
fi

# Build and runtime libraries, all from Debian's packages.
# cmocka is here, not with the test tools: the default build includes the tests.
BUILD_PKGS=(cmake pkg-config gcc make libc6-dev libcmocka-dev libzstd-dev libsnappy-dev zlib1g-dev libssl-dev
            libcurl4-openssl-dev libexpat1-dev uuid-dev libjansson-dev libfyaml-dev ca-certificates)
TEST_PKGS=(util-linux
           ceph-mon ceph-osd radosgw ceph-common uuid-runtime openssl curl  # the RGW test store
           awscli  # bench/s3_upload.sh
           python3-botocore  # the credentials oracle (tests/unit/test_creds_botocore.py), gen_vectors.py
           zstd)  # compresses inputs in tests/integration/test_cli_compressed.mjs (gzip is node's zlib)

pkgs=("${BUILD_PKGS[@]}")
[ "${1:-}" = "--test" ] && pkgs+=("${TEST_PKGS[@]}")
# Node.js and npm fetch the datasets and the readers; Debian 12's nodejs is v18, which they run on.
# A machine that already has node from elsewhere keeps it (Debian's npm conflicts with it).
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: apt-get install ${missing[*]}"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

# npm: exact versions from package-lock.json.
if [ ! -d node_modules/vega-datasets ] || [ ! -d node_modules/@duckdb/node-api ] \
   || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "install-deps: npm ci"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
