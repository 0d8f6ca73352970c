#!/usr/bin/env bash
# NDJSON objects under a prefix landed as a Parquet table (issue 13, Build item 4's last
# sentence: `s3land write --table T s3://bucket/prefix/`), exactly once: on file://
# (integration.object_table: source file:///.../raw/, lake a local directory) and, with
# S3L_TEST_STORE=s3, on the s3 label's Ceph RGW (s3.object_table: source and lake both in the
# fixture's bucket, one --endpoint/--region for both). DuckDB reads the table (from the lake, or
# on RGW from a copy fetched by `aws s3 cp`) and its rows must equal the input lines' (EXCEPT
# ALL both ways, so a row landed twice or lost fails):
#  1. vega-datasets flights-20k as lines, in parts part-0 .. part-4 put by hand (part-1 gzip,
#     part-3 zstd): one write lands them all;
#  2. a rerun lands nothing (no new data file);
#  3. part-5 and part-10 added: a rerun lands only them (part-10 after part-5, by number); then
#     part-0b, which sorts before objects already read: a rerun lands it alone;
#  4. flights-200k in 4 parts (one gzip, one zstd), a write killed (SIGKILL) after its first
#     commit, then rerun: every record exactly once;
#  5. one large object, a write killed mid-object, the object then replaced (new ETag): the
#     rerun is refused naming the key and landing nothing; with the object put back, the rerun
#     lands every record once;
#  6. a bad line names the object's URL, its line and column.
set -uo pipefail
SRC=${S3L_SOURCE_DIR:?}
S3LAND=${S3LAND:?}
work=$(mktemp -d /tmp/s3l-object-table-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
cleanup() {
    [ -n "${pid:-}" ] && kill -9 "$pid" 2>/dev/null
    [ -n "${own_rgw:-}" ] && "$SRC/tests/stores/stop-rgw.sh" "$own_rgw" >/dev/null 2>&1
    [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

if [ "${S3L_TEST_STORE:-}" = s3 ]; then
    env_file=${S3L_RGW_ENV:-}
    if [ -z "$env_file" ]; then
        own_rgw=/tmp/s3land-rgw-objtab.$$
        RGW_DIR=$own_rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 || {
            cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
        env_file=$own_rgw/env
    fi
    # shellcheck disable=SC1090
    . "$env_file"
    unset AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
    kb="objtab-$$-$(date +%s)"
    store=(--endpoint "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
    aws_=(aws --endpoint-url "$RGW_ENDPOINT" --region "$AWS_DEFAULT_REGION")
    src_url() { echo "s3://$RGW_BUCKET/$kb/$1/"; }
    lake="s3://$RGW_BUCKET/$kb/lake"
    put() { "${aws_[@]}" s3 cp --quiet "$2" "s3://$RGW_BUCKET/$kb/$1"; }
    # The table's data files, where DuckDB can read them.
    table_dir() {
        rm -rf "$work/mirror"
        "${aws_[@]}" s3 cp --recursive --quiet --exclude '*' --include '*.parquet' \
            "$lake/$1/" "$work/mirror/$1/" >/dev/null 2>&1
        echo "$work/mirror/$1"
    }
else
    store=()
    src_url() { echo "file://$work/src/$1/"; }
    lake=$work/lake
    put() { mkdir -p "$(dirname "$work/src/$1")" && cp "$2" "$work/src/$1.tmp" &&
        mv "$work/src/$1.tmp" "$work/src/$1"; }
    table_dir() { echo "$lake/$1"; }
fi

write() { timeout 600 "$S3LAND" write --url "$lake" "${store[@]}" "$@"; }
files_of() { find "$(table_dir "$1")" -maxdepth 1 -name '*.parquet' 2>/dev/null | wc -l; }
# The table's rows against the lines of $2 (flights-20k's columns, or with $3 = 200k those of
# flights-200k), as multisets.
same_rows() {
    local dir cols types
    dir=$(table_dir "$1")
    if [ "${3:-}" = 200k ]; then
        cols="CAST(delay AS BIGINT), CAST(distance AS BIGINT), CAST(time AS DOUBLE)"
        types="{'delay': 'BIGINT', 'distance': 'BIGINT', 'time': 'DOUBLE'}"
    else
        cols="CAST(date AS VARCHAR), CAST(delay AS BIGINT), CAST(distance AS BIGINT), \
CAST(origin AS VARCHAR), CAST(destination AS VARCHAR)"
        types="{'date': 'VARCHAR', 'delay': 'BIGINT', 'distance': 'BIGINT', 'origin': 'VARCHAR', \
'destination': 'VARCHAR'}"
    fi
    node "$SRC/tests/oracle/except-all.mjs" \
        --a "SELECT $cols FROM read_json('$2', format='newline_delimited', columns=$types)" \
        --b "SELECT $cols FROM read_parquet('$dir/*.parquet')" >"$work/except.json" 2>&1
}
# Rows of table $1 where $2, by DuckDB.
count() {
    local dir
    dir=$(table_dir "$1")
    node -e '
const { DuckDBInstance } = require(process.argv[1] + "/node_modules/@duckdb/node-api");
(async () => {
    const con = await (await DuckDBInstance.create(":memory:")).connect();
    console.log(String((await con.runAndReadAll(process.argv[2])).getRows()[0][0]));
})();' "$SRC" "SELECT count(*) FROM read_parquet('$dir/*.parquet') WHERE $2" 2>&1
}
lines_of() {
    node -e 'for (const r of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")))
        console.log(JSON.stringify(r))' "$SRC/node_modules/vega-datasets/data/$1.json"
}

lines_of flights-20k >"$work/f20k.ndjson" || bad "flights-20k missing"
split -n l/7 -d -a 1 "$work/f20k.ndjson" "$work/p20-"
# part-0 .. part-4, part-1 gzip and part-3 zstd; part-5 and part-10 come later.
mk() { # $1: piece, $2: key
    case $2 in
    *.gz) gzip -c "$work/p20-$1" >"$work/obj" ;;
    *.zst) zstd -q -c "$work/p20-$1" >"$work/obj" ;;
    *) cp "$work/p20-$1" "$work/obj" ;;
    esac
    put "$3/$2" "$work/obj"
}
mk 0 part-0 raw; mk 1 part-1.gz raw; mk 2 part-2 raw; mk 3 part-3.zst raw; mk 4 part-4 raw
cat "$work"/p20-[0-4] >"$work/first.ndjson"

# 1. One write lands them all.
write --table flights "$(src_url raw)" >"$work/w1.out" 2>"$work/w1.err" ||
    bad "write of the prefix failed: $(cat "$work/w1.err")"
if same_rows flights "$work/first.ndjson"; then
    ok "5 objects (a .gz, a .zst) landed: DuckDB's rows equal the $(wc -l <"$work/first.ndjson") input lines (EXCEPT ALL both ways)"
else
    bad "round trip differs: $(head -c 600 "$work/except.json")"
fi

# 2. A rerun lands nothing.
n1=$(files_of flights)
write --table flights "$(src_url raw)" >"$work/w2.out" 2>"$work/w2.err" ||
    bad "rerun failed: $(cat "$work/w2.err")"
n2=$(files_of flights)
if [ "$n1" -gt 0 ] && [ "$n2" = "$n1" ] && same_rows flights "$work/first.ndjson"; then
    ok "a rerun lands nothing new ($n2 data files, rows unchanged)"
else
    bad "rerun: $n1 -> $n2 data files, $(head -c 300 "$work/except.json")"
fi

# 3. New objects: only they land.
mk 5 part-5 raw; mk 6 part-10 raw
write --json --table flights "$(src_url raw)" >"$work/w3.out" 2>"$work/w3.err" ||
    bad "rerun after new objects failed: $(cat "$work/w3.err")"
rows3=$(node -e 'let r = 0; for (const l of require("fs").readFileSync(0, "utf8").split("\n"))
    if (l.startsWith("{")) { const e = JSON.parse(l); if (e.event === "summary") r = e.rows; }
    console.log(r)' <"$work/w3.out")
want3=$(cat "$work/p20-5" "$work/p20-6" | wc -l)
if same_rows flights "$work/f20k.ndjson" && [ "$rows3" = "$want3" ]; then
    ok "part-5 and part-10 added: the rerun lands only their $rows3 rows; the table equals all 20k lines"
else
    bad "new objects: rerun landed ${rows3:-?} rows (want $want3), $(head -c 600 "$work/except.json")"
fi

# 3b. An object put later under a name that sorts before ones already read is read too, alone.
lines_of flights-2k | head -n 100 >"$work/p20-e"
mk e part-0b raw
cat "$work/f20k.ndjson" "$work/p20-e" >"$work/all.ndjson"
write --json --table flights "$(src_url raw)" >"$work/w4.out" 2>"$work/w4.err" ||
    bad "rerun after part-0b failed: $(cat "$work/w4.err")"
rows4=$(node -e 'let r = 0; for (const l of require("fs").readFileSync(0, "utf8").split("\n"))
    if (l.startsWith("{")) { const e = JSON.parse(l); if (e.event === "summary") r = e.rows; }
    console.log(r)' <"$work/w4.out")
if same_rows flights "$work/all.ndjson" && [ "$rows4" = 100 ]; then
    ok "part-0b (sorting before part-1.gz, read already) added: the rerun lands its 100 rows only"
else
    bad "part-0b: rerun landed ${rows4:-?} rows (want 100), $(head -c 600 "$work/except.json")"
fi

# 4. Killed after its first commit, then rerun: exactly once.
lines_of flights-200k >"$work/f200k.ndjson" || bad "flights-200k missing"
split -n l/4 -d -a 1 "$work/f200k.ndjson" "$work/p200-"
for k in 0 1 2 3; do cp "$work/p200-$k" "$work/p20-b$k"; done
mk b0 part-0 big; mk b1 part-1.gz big; mk b2 part-2 big; mk b3 part-3.zst big
"$S3LAND" --json write --url "$lake" "${store[@]}" --table big --epoch-rows 3000 \
    "$(src_url big)" >"$work/k1.out" 2>"$work/k1.err" &
pid=$!
for _ in $(seq 1 3000); do
    grep -q '"event": *"commit"' "$work/k1.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
killed=$?
pid=
commits=$(grep -c '"event": *"commit"' "$work/k1.out")
write --table big "$(src_url big)" >"$work/k2.out" 2>"$work/k2.err" ||
    bad "rerun after the kill failed: $(cat "$work/k2.err")"
if [ "$killed" = 137 ] && [ "$commits" -ge 1 ] && same_rows big "$work/f200k.ndjson" 200k; then
    ok "killed (SIGKILL) after $commits commit(s), rerun: every one of the $(wc -l <"$work/f200k.ndjson") records exactly once"
else
    bad "kill and rerun: exit $killed, $commits commits, $(head -c 600 "$work/except.json")"
fi

# 5. Killed mid-object, the object replaced: refused naming its key; put back: lands once.
cat "$work/f200k.ndjson" "$work/f200k.ndjson" >"$work/p20-one"
put one/all.ndjson "$work/p20-one"
"$S3LAND" --json write --url "$lake" "${store[@]}" --table one --epoch-rows 2000 \
    "$(src_url one)" >"$work/r1.out" 2>"$work/r1.err" &
pid=$!
for _ in $(seq 1 3000); do
    grep -q '"event": *"commit"' "$work/r1.out" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=
[ "${S3L_TEST_STORE:-}" != s3 ] && mv "$work/src/one/all.ndjson" "$work/saved"
# The new version's rows are unlike any of the old one's: none of them may land.
for _ in $(seq 1 1000); do echo '{"delay":-99999,"distance":0,"time":0.0}'; done >"$work/replaced"
put one/all.ndjson "$work/replaced"
write --table one "$(src_url one)" >"$work/r2.out" 2>"$work/r2.err"
st=$?
if [ "$st" != 0 ] && grep -q 'all.ndjson' "$work/r2.err" && grep -q 'replaced' "$work/r2.err" &&
    [ "$(count one "delay = -99999")" = 0 ]; then
    ok "object replaced after a kill mid-object: refused (exit $st) naming it: $(grep error "$work/r2.err" | head -n 1)"
else
    bad "replaced object: exit $st, $(cat "$work/r2.err")"
fi
if [ "${S3L_TEST_STORE:-}" != s3 ]; then
    # The local store's ETag of a large file is its size, mtime and inode: the file moved
    # back is the original object.
    mv "$work/saved" "$work/src/one/all.ndjson"
    write --table one "$(src_url one)" >"$work/r3.out" 2>"$work/r3.err" ||
        bad "rerun with the object put back failed: $(cat "$work/r3.err")"
    if same_rows one "$work/p20-one" 200k; then
        ok "the object put back: the rerun resumes mid-object, every record once"
    else
        bad "put back: $(head -c 600 "$work/except.json")"
    fi
fi

# 6. A bad line names the object, its line and column.
printf '{"a": 1}\n{"a": 2}\n{"a": 3,,}\n' >"$work/badobj"
put bad/x.ndjson "$work/badobj"
write --table bad "$(src_url bad)" >"$work/b.out" 2>"$work/b.err"
st=$?
if [ "$st" != 0 ] && grep -q "bad/x.ndjson" "$work/b.err" && grep -q 'line 3' "$work/b.err" &&
    grep -q 'column' "$work/b.err"; then
    ok "a bad line is refused naming the object, line and column: $(head -n 1 "$work/b.err")"
else
    bad "bad line: exit $st, $(cat "$work/b.err")"
fi

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
