#!/usr/bin/env bash
# stdin resumed exactly once (--stdin-offset). stdin cannot be replayed, so s3land prints the
# committed offset at every commit and the caller resends from there. A crash just after the
# commit point leaves an epoch durable that was never printed: the next run finishes it, and a
# caller that resends from the last printed offset would land that epoch's rows twice. With
# --stdin-offset N the run knows where the resent stream starts and drops what is committed.
# Here the crash-test CLI ($S3LAND_CRASH) is killed by SIGKILL at named points after the
# checkpoint, the caller resends from the last offset printed (parsed from stderr), and DuckDB
# requires the table to equal the input exactly (exact.mjs). Also: an offset past the committed
# one is refused, a rerun resending everything from 0 adds nothing, and a JSON array and a CSV
# stream resume too.
set -euo pipefail
: "${S3LAND:?}" "${S3LAND_CRASH:?}" "${S3L_SOURCE_DIR:?}"
work=$(mktemp -d /tmp/s3l-stdin-resume.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
schema=$work/schema.json
echo '[{"name": "id", "type": "int64", "nullable": false}, {"name": "s", "type": "string"}]' >"$schema"
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "{\"id\": %d, \"s\": \"row %d\"}\n", i, i }' >in.ndjson
args=(--table t --schema "$schema" --epoch-rows 1000 --file-size 8KiB)
checks=()

# The last offset printed on stderr ("committed: - offset N (epoch E)"), or 0.
printed() { { grep -o 'committed: - offset [0-9]*' "$1" || true; } | tail -1 | awk '{ n = $4 } END { print n + 0 }'; }

# POINT:K dies at the K-th time the point is reached: with :2 the second epoch is durable when
# the process dies and only the first one's offset was printed; with :1 none was printed.
for point in after-checkpoint:1 after-checkpoint:2 before-marker:2 after-marker:2; do
    lake=$work/${point/:/-}
    set +e
    cat in.ndjson | S3L_CRASH_POINT=$point "$S3LAND_CRASH" write \
        --url "file://$lake" "${args[@]}" - 2>"$lake.err"
    st=$?
    set -e
    [ "$st" = 137 ] || { echo "$point: expected SIGKILL (137), got $st" >&2; cat "$lake.err" >&2; exit 1; }
    n=$(printed "$lake.err")
    grep -q '"pending":{' "$lake"/_openetl/checkpoints/*.json ||
        { echo "$point: no pending epoch in the checkpoint" >&2; exit 1; }
    echo "$point: killed with an epoch pending; last printed offset $n"
    # The caller resends from the last offset it saw.
    tail -c +$((n + 1)) in.ndjson | "$S3LAND" write --url "file://$lake" "${args[@]}" \
        --stdin-offset "$n" - 2>"$lake.err2" || { cat "$lake.err2" >&2; exit 1; }
    checks+=("$lake:in.ndjson")
done

# Without --stdin-offset the resent bytes would land twice: the same crash, resent from the last
# printed offset, shows it (the reason for the option; the test keeps it from regressing silently).
lake=$work/no-offset
set +e
cat in.ndjson | S3L_CRASH_POINT=after-checkpoint:2 "$S3LAND_CRASH" write \
    --url "file://$lake" "${args[@]}" - 2>"$lake.err"
set -e
n=$(printed "$lake.err")
tail -c +$((n + 1)) in.ndjson | "$S3LAND" write --url "file://$lake" "${args[@]}" - 2>/dev/null
rows=$("$S3LAND" ls --url "file://$lake" --table t --json | node -e '
    let t = ""; process.stdin.on("data", (d) => (t += d)).on("end", () => {
        const s = t.trim().split("\n").map((l) => JSON.parse(l)).find((o) => o.uncommitted_files !== undefined);
        console.log(s.rows); });')
[ "$rows" -gt 5000 ] || { echo "without --stdin-offset: expected duplicates, got $rows rows" >&2; exit 1; }
echo "without --stdin-offset the resent epoch lands twice ($rows rows for 5000): as documented"

# An offset past the committed one is refused (bytes would be missing), naming both offsets.
lake=$work/after-checkpoint-2
set +e
tail -c +101 in.ndjson | "$S3LAND" write --url "file://$lake" "${args[@]}" --stdin-offset 999999 - \
    2>"$work/past.err"
st=$?
set -e
size=$(stat -c %s in.ndjson)
{ [ "$st" = 2 ] && grep -q "starts at byte offset 999999 (--stdin-offset) but the pipeline committed it only up to offset $size" "$work/past.err"; } ||
    { echo "an offset past the committed one: exit $st" >&2; cat "$work/past.err" >&2; exit 1; }
echo "an offset past the committed one is refused (exit 2)"

# Resending everything from 0 adds nothing.
before=$(cd "$lake" && find . -name '*.parquet' | sort | xargs sha256sum)
"$S3LAND" write --url "file://$lake" "${args[@]}" --stdin-offset 0 - <in.ndjson 2>/dev/null
cat in.ndjson | "$S3LAND" write --url "file://$lake" "${args[@]}" --stdin-offset 0 - 2>/dev/null
after=$(cd "$lake" && find . -name '*.parquet' | sort | xargs sha256sum)
[ "$before" = "$after" ] || { echo "resending from 0 changed the table" >&2; exit 1; }
echo "resending the whole stream from offset 0 adds nothing"

# A JSON array and a CSV stream resumed the same way: the resent bytes start after a record, in
# the middle of the array (JSON: ',' comes first) or without the header line (CSV: the header is
# the one recorded with the pipeline). The first run ends early (cut mid-array: exit 2 after two
# epochs; CSV: the first 1,000 rows).
awk 'BEGIN { printf "["; for (i = 0; i < 5000; i++) printf "%s{\"id\": %d, \"s\": \"row %d\"}", (i ? ",\n" : ""), i, i; print "]" }' >in.json
set +e
head -c 60000 in.json | "$S3LAND" write --url "file://$work/json" "${args[@]}" --input-format json - 2>json.err
st=$?
set -e
n=$(printed json.err)
{ [ "$st" = 2 ] && [ "$n" -gt 0 ]; } || { echo "json: first run exit $st, offset $n" >&2; cat json.err >&2; exit 1; }
tail -c +$((n + 1)) in.json | "$S3LAND" write --url "file://$work/json" "${args[@]}" --input-format json \
    --stdin-offset "$n" - 2>json.err2 || { cat json.err2 >&2; exit 1; }
awk 'BEGIN { print "id,s"; for (i = 0; i < 5000; i++) printf "%d,row %d\n", i, i }' >in.csv
head -n 1001 in.csv | "$S3LAND" write --url "file://$work/csv" "${args[@]}" --input-format csv - 2>csv.err
n=$(printed csv.err)
tail -c +$((n + 1)) in.csv | "$S3LAND" write --url "file://$work/csv" "${args[@]}" --input-format csv \
    --stdin-offset "$n" - 2>csv.err2 || { cat csv.err2 >&2; exit 1; }
echo "a JSON array resumed mid-array, a CSV stream resumed without its header line"
checks+=("$work/json:in.ndjson" "$work/csv:in.ndjson")

node "$S3L_SOURCE_DIR/tests/crash/exact.mjs" "$schema" "${checks[@]}"
