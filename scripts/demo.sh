#!/usr/bin/env bash
# README's first command: installs what s3land needs (Debian packages, the real datasets from npm),
# builds it, lands 200,000 real US flights (vega-datasets' flights-200k.json, one JSON array) as
# the Parquet table `flights` in ./lake, and shows the result: tables, files, row counts, schema.
# Idempotent: a second run adds nothing, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh build

S3LAND=build/s3land
DATA=node_modules/vega-datasets/data/flights-200k.json
SCHEMA=build/flights.schema.json

# The declared schema: delay in minutes, distance in miles, time of day in hours (a fraction).
cat > "$SCHEMA" <<'EOF'
[
  {"name": "delay", "type": "int64", "nullable": true},
  {"name": "distance", "type": "int64", "nullable": true},
  {"name": "time", "type": "double", "nullable": true}
]
EOF

echo
echo "== s3land write --url file://$PWD/lake --table flights --schema $SCHEMA --input-format json $DATA"
"$S3LAND" write --url "file://$PWD/lake" --table flights --schema "$SCHEMA" \
    --input-format json "$DATA"

echo
echo "== s3land ls (tables)"
"$S3LAND" ls --url "file://$PWD/lake"

echo
echo "== s3land ls --table flights (epochs, files, row counts from the Parquet footers)"
"$S3LAND" ls --url "file://$PWD/lake" --table flights

echo
echo "== s3land schema --table flights"
"$S3LAND" schema --url "file://$PWD/lake" --table flights

echo
echo "Read it with DuckDB:  SELECT count(*), avg(delay) FROM read_parquet('lake/flights/*.parquet', union_by_name = true);"
echo "Run this script again: the write finds nothing new and adds nothing."
