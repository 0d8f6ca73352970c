#!/usr/bin/env bash
# README's first command: installs what s3land needs (Debian packages, the real datasets and
# DuckDB from npm), builds it, then runs scripts/demo-lake.sh: lands 200,000 real US flights
# (vega-datasets' flights-200k.json, one JSON array) as the Parquet table `flights` in ./lake and
# shows the result (tables, files, row counts, schema, a DuckDB query).
# Idempotent: a second run adds nothing, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh build
scripts/demo-lake.sh
