#!/usr/bin/env bash
# The part of scripts/demo.sh after the install and the build (tests/integration/test_docs.sh
# runs it to set up what README's guide starts from): lands 200,000 real US flights
# (node_modules/vega-datasets/data/flights-200k.json, one JSON array) with the declared schema
# docs/examples/flights.schema.json as the Parquet table `flights` in ./lake, and shows the
# result: tables, files, row counts from the Parquet footers, the schema, and a DuckDB query
# (scripts/duckdb.mjs) over the committed files. Idempotent: a second run adds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

S3LAND=build/s3land
DATA=node_modules/vega-datasets/data/flights-200k.json
# The declared schema: delay in minutes, distance in miles, time of day in hours (a fraction).
SCHEMA=docs/examples/flights.schema.json

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

sql="SELECT count(*), avg(delay) FROM read_parquet('lake/flights/*.parquet', union_by_name = true)"
echo
echo "== scripts/duckdb.mjs \"$sql\""
scripts/duckdb.mjs "$sql"
echo
echo "Run this script again: the write finds nothing new and adds nothing."
