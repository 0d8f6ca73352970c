#!/usr/bin/env bash
# Golden Parquet files (tests/golden/pq): regenerates each from its JSON description with
# tests/tools/pq_write and requires the same bytes as the committed file; DuckDB and parquet-wasm
# read each one as its hand-written expectation says (tests/golden/pq/make.mjs --check).
set -euo pipefail
cd "$S3L_SOURCE_DIR"
node tests/golden/pq/make.mjs --check
