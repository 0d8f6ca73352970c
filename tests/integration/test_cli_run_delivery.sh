#!/usr/bin/env bash
# The delivery gate through the CLI (issue 12, item 5): `s3land connectors --json` shows each
# source kind's capability record; a Pipeline whose source reads stdin (at most once) is refused
# by default before any data moves (exit 1, naming the source, its capability and the setting
# that accepts it), and runs with delivery: { require: at_most_once }, DuckDB then finding every
# piped row; `write -` works as before and says once that stdin is at most once.
set -uo pipefail
S3LAND=${S3LAND:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-run-delivery-XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
cd "$work"

"$S3LAND" connectors --json >kinds
node -e '
const k = Object.fromEntries(require("fs").readFileSync("kinds", "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((o) => [o.name, o]));
const want = { files: "exactly_once", stdin: "at_most_once", pipe: "at_most_once" };
const bad = Object.entries(want).filter(([n, d]) => !k[n] || k[n].delivery !== d || !k[n].needs);
process.exit(bad.length ? 1 : 0);' && ok "connectors --json: files exactly_once, stdin and pipe at_most_once, each with its needs" \
    || bad "connectors --json: $(cat kinds)"

pipeline() { # require (or empty)
    cat >p.yaml <<DOC
apiVersion: openetl.io/v1alpha1
kind: Destination
metadata:
  name: here
spec:
  connector: s3
  config:
    url: file://$work/lake
---
apiVersion: openetl.io/v1alpha1
kind: Pipeline
metadata:
  name: piped
spec:
  destination:
    name: here
  sources:
    - name: feed
      files: ["-"]
DOC
    [ -n "$1" ] && printf '  delivery:\n    require: %s\n' "$1" >>p.yaml
}
seq 1 40 | awk '{ printf "{\"n\": %d, \"s\": \"line %d\"}\n", $1, $1 }' >rows.ndjson

pipeline ""
"$S3LAND" run --config p.yaml <rows.ndjson >out1 2>err1
st=$?
[ "$st" = 1 ] && grep -q 'source feed' err1 && grep -q 'at_most_once (stdin' err1 \
    && grep -q 'delivery: { require: at_most_once }' err1 \
    && ok "stdin in a pipeline is refused by default (exit 1), naming the source, its capability and the setting" \
    || bad "stdin refused: exit $st: $(cat err1)"
[ ! -e lake ] && ok "refused before any data moves (no lake)" || bad "the refused run made $(find lake | head -3)"

pipeline at_most_once
"$S3LAND" run --config p.yaml <rows.ndjson >out2 2>err2
st=$?
n=$(node -e '
const { DuckDBInstance } = require(process.argv[1] + "/node_modules/@duckdb/node-api");
(async () => {
    const con = await (await DuckDBInstance.create(":memory:")).connect();
    const r = await con.runAndReadAll(process.argv[2]);
    console.log(r.getRows().map((row) => row.join(" ")).join("\n"));
})();' "$SRC" "SELECT count(*), sum(n) FROM (SELECT n, s FROM read_parquet('$work/lake/feed/*.parquet') INTERSECT ALL SELECT n, s FROM read_json('$work/rows.ndjson', columns={'n': 'BIGINT', 's': 'VARCHAR'}))" 2>&1)
m=$(node -e '
const { DuckDBInstance } = require(process.argv[1] + "/node_modules/@duckdb/node-api");
(async () => {
    const con = await (await DuckDBInstance.create(":memory:")).connect();
    console.log((await con.runAndReadAll(process.argv[2])).getRows()[0].join(" "));
})();' "$SRC" "SELECT count(*) FROM read_parquet('$work/lake/feed/*.parquet')" 2>&1)
[ "$st" = 0 ] && [ "$n" = "40 820" ] && [ "$m" = 40 ] && ok "accepted with require: at_most_once; DuckDB finds the 40 piped rows" \
    || bad "at_most_once: exit $st, duckdb '$n': $(cat err2)"

"$S3LAND" write --url "$work/wlake" --table w - <rows.ndjson >out3 2>err3
st=$?
c=$(grep -c 'at most once' err3)
[ "$st" = 0 ] && [ "$c" = 1 ] && grep -q 'committed: - offset' err3 \
    && ok "write - works and says once that stdin is at most once" || bad "write -: exit $st, notes $c: $(cat err3)"
[ "$fails" = 0 ] && echo "all checks passed"
exit $((fails > 0))
