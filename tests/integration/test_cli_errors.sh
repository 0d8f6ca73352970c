#!/usr/bin/env bash
# The s3land command's help, usage errors, bad inputs and destination faults (issue 3, "Bad input
# and faults"): each gives a clear error naming the thing and its documented exit code, and never
# a half-committed epoch. Faults run for real: an unwritable destination as an unprivileged user
# (setpriv; the tests run as root), a full disk on a 1 MiB tmpfs.
set -uo pipefail
S3LAND=${S3LAND:?S3LAND must name the s3land binary}
work=$(mktemp -d /tmp/s3l-cli-errors-XXXXXX)
chmod 755 "$work"
fails=0
cleanup() {
    mountpoint -q "$work/full" 2>/dev/null && umount "$work/full"
    rm -rf "$work"
}
trap cleanup EXIT

ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

# expect CODE PATTERN DESCRIPTION -- ARGS...: runs s3land, checks the exit code and that stderr
# matches PATTERN (grep -E).
expect() {
    local code=$1 pattern=$2 what=$3
    shift 4
    "$S3LAND" "$@" >"$work/out" 2>"$work/err"
    local got=$?
    if [ "$got" -eq "$code" ] && { [ -z "$pattern" ] || grep -Eq -- "$pattern" "$work/err" "$work/out"; }; then
        ok "$what (exit $code)"
    else
        bad "$what: wanted exit $code and /$pattern/, got exit $got"
        sed 's/^/    /' "$work/err" | head -5
    fi
}

# The number of committed Parquet files of a table directory.
nfiles() { find "$1" -maxdepth 1 -name '*.parquet' 2>/dev/null | wc -l; }

lake="$work/lake"
printf '{"a":1}\n{"a":2}\n' >"$work/good.ndjson"

# ---- help and usage ----
for cmd in write ls schema recover gc check; do
    expect 0 "Usage: s3land $cmd" "$cmd --help" -- "$cmd" --help
done
expect 0 "Exit codes" "--help lists the exit codes" -- --help
expect 0 "^s3land [0-9]+\.[0-9]+\.[0-9]+" "--version" -- --version
expect 1 "unknown command" "unknown command" -- frobnicate
# A trace file that cannot be opened is the caller's setting (exit 1, as docs/cli.md says; it
# was 3, the destination's, found by a break-it run): before any request is made.
S3LAND_TRACE=/nonexistent-dir/t.jsonl expect 1 "open trace file /nonexistent-dir/t.jsonl \(S3LAND_TRACE\)" \
    "an S3LAND_TRACE that cannot be opened" -- ls --url s3://bucket/p --endpoint http://127.0.0.1:9
printf '[]' >"$work/no-columns.json"
expect 1 "no-columns\.json: declares no column" "a declared schema without columns" -- \
    write --url "$work/lake-lv" --table t --schema "$work/no-columns.json" "$work/good.ndjson"
expect 1 "compression-level 15: gzip takes 1\.\.9" "a gzip level out of gzip's range" -- \
    write --url "$work/lake-lv" --table t --compression gzip --compression-level 15 "$work/good.ndjson"
expect 1 "compression-level 3: snappy has no levels" "a level for snappy" -- \
    write --url "$work/lake-lv" --table t --compression-level 3 --compression snappy "$work/good.ndjson"
expect 1 "unknown option --tabel \(did you mean --table\?\)" "a misspelt option gets a suggestion" -- \
    write --tabel t "$work/good.ndjson"
expect 1 "unknown option --commited \(did you mean --committed\?\)" "ls: a misspelt option" -- \
    ls --commited
expect 1 "unknown option --pipline-id \(did you mean --pipeline-id\?\)" "gc: a misspelt option" -- \
    gc --pipline-id x
expect 1 "unknown option --frobnicate$" "an option far from every name gets no suggestion" -- \
    write --frobnicate --table t "$work/good.ndjson"
expect 1 "--url needs a value" "a missing value is named" -- write --table t --url
expect 0 "check +check that a destination \(file:// or s3://\)" "the main help: check is not local-only" -- --help
expect 1 "--table is required" "write without --table" -- write --url "$lake" "$work/good.ndjson"
expect 1 "--file-size 12XB" "bad size" -- write --table t --file-size 12XB "$work/good.ndjson"
expect 1 "--memory 99999999999G: too large" "--memory 99999999999G says too large" -- write --table t --memory 99999999999G "$work/good.ndjson"
expect 1 "--file-size 99999999999999999999: too large" "--file-size over 64 bits says too large" -- write --table t --file-size 99999999999999999999 "$work/good.ndjson"
# Destinations that are not accepted (each says why; exit 1 before anything is written).
expect 1 "starts like a URL with the scheme \"s3:\"" "--url s3:/bucket is refused" -- write --url s3:/bucket --table t "$work/good.ndjson"
[ ! -e "s3:" ] && ok "no directory s3: was made" || bad "a directory s3: was made"
expect 1 "filesystem root" "--url file:/// is refused" -- write --url file:/// --table t "$work/good.ndjson"
expect 1 '"\.\." segment' "an s3:// prefix with .. is refused" -- write --url s3://bucket/x/../../evil/p --table t "$work/good.ndjson"
expect 1 "not valid UTF-8" "an s3:// prefix with invalid UTF-8 is refused" -- write --url "$(printf 's3://bucket/p\xff')" --table t "$work/good.ndjson"
expect 1 "filesystem root" "ls --url file:/// is refused" -- ls --url file:///
# An s3:// data file is one object: over S3's 5 TiB limit is refused before anything moves; 100 GiB
# is accepted (its parts are sized to fit 10,000: the missing input is the next thing to fail).
expect 1 "over S3's limit of 5 TiB" "--file-size 6TiB on s3://" -- write --url s3://bucket/p --table t --file-size 6TiB "$work/good.ndjson"
expect 1 "over S3's limit of 5 TiB" "--file-size 60TiB on s3://" -- write --url s3://bucket/p --table t --file-size 60TiB "$work/good.ndjson"
expect 2 "no-such-input" "--file-size 100GiB on s3:// passes the check" -- write --url s3://bucket/p --table t --file-size 100GiB "$work/no-such-input.ndjson"
expect 1 "--input-format xml" "bad input format" -- write --table t --input-format xml "$work/good.ndjson"
expect 1 "expected a UUID" "bad pipeline id" -- write --table t --pipeline-id nope "$work/good.ndjson"

# ---- dispositions: refused before any data moves ----
expect 6 "replace is refused before any data moves.*cannot replace" "replace refused" -- \
    write --url "$work/lake-r" --table t --disposition replace "$work/good.ndjson"
expect 6 "merge is refused before any data moves.*cannot merge" "merge refused" -- \
    write --url "$work/lake-r" --table t --disposition merge "$work/good.ndjson"
[ ! -e "$work/lake-r" ] && ok "refused dispositions created nothing" || bad "refused disposition touched the destination"

# ---- bad inputs ----
expect 2 "missing\.ndjson" "missing input is named" -- write --url "$lake" --table t "$work/missing.ndjson"
: >"$work/empty.ndjson"
# An empty file is not an error: it lands nothing and says so (exit 0); with other inputs, they land.
expect 0 "nothing to write: input .*empty\.ndjson is empty \(table empty at .* is unchanged\)" \
    "an empty input lands nothing, and says so" -- write --url "$lake" --table empty "$work/empty.ndjson"
[ ! -d "$lake/empty" ] && ok "the empty input created no table files" || bad "the empty input wrote files"
expect 0 "note: input .*empty\.ndjson is empty: nothing to write from it" \
    "an empty input among others is noted" -- write --url "$lake" --table empty2 \
    "$work/empty.ndjson" "$work/good.ndjson"
expect 0 "total: 1 file, 2 rows" "and the other input lands" -- ls --url "$lake" --table empty2
printf '' | "$S3LAND" write --url "$lake" --table empty3 - >"$work/out" 2>"$work/err"
[ $? -eq 2 ] && grep -q "is empty" "$work/err" && ok "an empty stdin is still refused (exit 2)" \
    || bad "empty stdin: $(cat "$work/err")"
expect 2 "is a directory" "a directory as input" -- write --url "$lake" --table t "$work"
grep -q "cannot be replayed" "$work/err" && bad "a directory as input is first called a stream (cannot be replayed)" ||
    ok "a directory as input is not called a stream first"
cp "$work/good.ndjson" "$work/secret.ndjson"
chmod 600 "$work/secret.ndjson"
chmod 777 "$work"
setpriv --reuid 65534 --regid 65534 --clear-groups "$S3LAND" write --url "$work/lake-nobody" \
    --table t "$work/secret.ndjson" >"$work/out" 2>"$work/err"
code=$?
[ $code -eq 2 ] && grep -q "secret.ndjson" "$work/err" && ok "unreadable input is named (exit 2)" \
    || { bad "unreadable input: exit $code"; cat "$work/err"; }
chmod 755 "$work"

schema="$work/schema.json"
echo '[{"name": "a", "type": "int64"}, {"name": "s", "type": "string"}]' >"$schema"
# A malformed line in the 2nd epoch: the 1st epoch (2 rows) is committed, nothing of the 2nd.
printf '{"a":1}\n{"a":2}\n{"a":3}\n{"a":4,,}\n{"a":5}\n' >"$work/malformed.ndjson"
expect 2 "malformed\.ndjson.*line 4" "malformed line is named with its line" -- \
    write --url "$lake" --table malformed --schema "$schema" --epoch-rows 2 "$work/malformed.ndjson"
[ "$(nfiles "$lake/malformed")" -eq 1 ] && ok "only the epoch before the malformed line is committed" \
    || bad "malformed: $(nfiles "$lake/malformed") files committed, wanted 1"
printf '{"a":1,"s":"ok"}\n{"a":2,"s":"\xff\xfe"}\n' >"$work/utf8.ndjson"
expect 2 "utf8\.ndjson.*(UTF-8|utf-8)" "invalid UTF-8 is named" -- \
    write --url "$lake" --table utf8 --schema "$schema" "$work/utf8.ndjson"
[ "$(nfiles "$lake/utf8")" -eq 0 ] && ok "nothing of the invalid-UTF-8 epoch is committed" || bad "utf8: files committed"
{ printf '{"a":1}\n{"a":2,"s":"'; head -c 300 /dev/zero | tr '\0' x; printf '"}\n'; } >"$work/long.ndjson"
expect 2 "long\.ndjson.*line 2" "a line over --max-record-size is named" -- \
    write --url "$lake" --table long --schema "$schema" --max-record-size 128 "$work/long.ndjson"
# --max-record-size holds to the byte in every format (the line end not counted): a row of
# exactly the limit lands, one byte more is refused naming the line; CSV once let a row through
# when its end was already in the buffer. 128 bytes: '1,' + 126 x is 128.
echo '[{"name": "a", "type": "int64"}, {"name": "s", "type": "string"}]' >"$work/as.json"
x126=$(head -c 126 /dev/zero | tr '\0' x)
printf 'a,s\n1,%s\n' "$x126" >"$work/at.csv"
printf 'a,s\n1,%sx\n2,y\n' "$x126" >"$work/over.csv"
printf 'a,s\n1,%sx' "$x126" >"$work/over-eof.csv"
printf 'a,s\r\n1,%s\r\n' "$x126" >"$work/at-crlf.csv"
expect 0 "" "a CSV row of exactly --max-record-size lands" -- \
    write --url "$lake" --table rs1 --schema "$work/as.json" --input-format csv --max-record-size 128 --quiet "$work/at.csv"
expect 0 "" "a CRLF CSV row of exactly --max-record-size lands" -- \
    write --url "$lake" --table rs4 --schema "$work/as.json" --input-format csv --max-record-size 128 --quiet "$work/at-crlf.csv"
expect 2 "over\.csv line 2 .*longer than the maximum record size \(128 bytes\)" "a CSV row one byte over is refused" -- \
    write --url "$lake" --table rs2 --schema "$work/as.json" --input-format csv --max-record-size 128 "$work/over.csv"
expect 2 "over-eof\.csv line 2 .*longer than the maximum record size" "a last CSV row one byte over is refused" -- \
    write --url "$lake" --table rs3 --schema "$work/as.json" --input-format csv --max-record-size 128 "$work/over-eof.csv"
printf '{"a":1,"s":"%s"}\n' "$(head -c 114 /dev/zero | tr '\0' x)" >"$work/at.ndjson"
printf '{"a":1,"s":"%s"}\n' "$(head -c 115 /dev/zero | tr '\0' x)" >"$work/over.ndjson"
expect 0 "" "an NDJSON line of exactly --max-record-size lands" -- \
    write --url "$lake" --table rs5 --schema "$work/as.json" --max-record-size 128 --quiet "$work/at.ndjson"
expect 2 "over\.ndjson.*line 1" "an NDJSON line one byte over is refused" -- \
    write --url "$lake" --table rs6 --schema "$work/as.json" --max-record-size 128 "$work/over.ndjson"
# The issue's case: a 17,000,000-byte CSV field at the default 16 MiB limit.
{ printf 'a,s\n1,'; head -c 17000000 /dev/zero | tr '\0' x; printf '\n2,y\n'; } >"$work/field17m.csv"
expect 2 "field17m\.csv line 2 .*longer than the maximum record size \(16777216 bytes\)" "a 17,000,000-byte CSV field is refused at 16 MiB" -- \
    write --url "$lake" --table rs7 --schema "$work/as.json" --input-format csv "$work/field17m.csv"
rm -f "$work/field17m.csv"
printf '{"a":1.5}\n' >"$work/lossy.ndjson"
expect 2 "lossy\.ndjson.*line 1.*\"?a\"?" "a lossy value names file, line and column" -- \
    write --url "$lake" --table lossy --schema "$schema" "$work/lossy.ndjson"
# skip and dead-letter keep the good rows.
expect 0 "" "bad records skipped" -- write --url "$lake" --table skipped --schema "$schema" \
    --bad-records skip --quiet "$work/malformed.ndjson"
expect 0 "" "bad records dead-lettered" -- write --url "$lake" --table dl --schema "$schema" \
    --bad-records dead-letter --quiet "$work/malformed.ndjson"
expect 3 "table nope not found at" "ls of a table that does not exist" -- ls --url "$lake" --table nope
# A writer caught mid-line: the last line, unterminated and not yet valid JSON, is left unread
# (a note, exit 0), in fail and skip mode alike; once the append completes, the next run lands it
# and the lines after it, each once.
for mode in fail skip; do
    printf '{"a":1}\n{"a":' >"$work/partial-$mode.ndjson"
    expect 0 "note: .*partial-$mode\.ndjson line 2 \(byte offset 8\): the last line has no line end" \
        "a half-written last line is left unread ($mode)" -- write --url "$lake" --table "partial_$mode" \
        --schema "$schema" --bad-records "$mode" "$work/partial-$mode.ndjson"
    printf '2}\n{"a":3}\n' >>"$work/partial-$mode.ndjson"
    expect 0 "wrote 2 rows" "the completed line lands on the next run ($mode)" -- write --url "$lake" \
        --table "partial_$mode" --schema "$schema" --bad-records "$mode" "$work/partial-$mode.ndjson"
    expect 0 "total: 2 files, 3 rows" "the table holds the 3 rows once ($mode)" -- ls --url "$lake" \
        --table "partial_$mode"
done
# Every record bad: the summary counts them, and does not claim that nothing was new.
printf '{"a":"x"}\n{"a":"y"}\n' >"$work/all-bad.ndjson"
expect 0 "wrote 0 rows .*, 2 bad records" "every record skipped: counted, not 'nothing new'" -- \
    write --url "$lake" --table allbad --schema "$schema" --bad-records skip "$work/all-bad.ndjson"
printf '{"a":1}\n' >"$work/one.ndjson"
expect 0 "wrote 1 row to table one at .*: 1 file, .* 1 epoch, " "one row, one file, one epoch: singular" -- \
    write --url "$lake" --table one --schema "$schema" "$work/one.ndjson"
expect 0 "1 file, 1 row \\(from footers\\)" "ls: one file, one row" -- ls --url "$lake" --table one
# The summary's bytes and ls's say what each counts: all put to the store, vs the data files.
expect 0 "1 file, [0-9.]+ KiB put to the store \(data files and commit records\)" \
    "the summary says what its bytes count" -- write --url "$lake" --table sizes --schema "$schema" "$work/one.ndjson"
expect 0 "[0-9.]+ (B|KiB) of data files; 1 epoch" "ls says its bytes are the data files'" -- \
    ls --url "$lake" --table sizes
if find "$lake/_openetl/deadletter/dl" -name '*.ndjson' -exec cat {} + 2>/dev/null | grep -q 'a\\":4,,'; then
    ok "the dead letter holds the raw record"
else
    bad "no dead letter with the raw record"
fi

# The same with 2 lanes (records are converted by worker threads).
expect 2 "malformed\.ndjson.*line 4" "lanes: malformed line named" -- \
    write --url "$lake" --table lanes_fail --schema "$schema" --lanes 2 "$work/malformed.ndjson"
printf '{"a":1}\n{"a":1.5}\n{"a":3}\n' >"$work/fraction.ndjson"
expect 2 "fraction\.ndjson line 2, column \"a\"" "lanes: a value that does not fit is named" -- \
    write --url "$lake" --table lanes_frac --schema "$schema" --lanes 2 "$work/fraction.ndjson"
[ "$(nfiles "$lake/lanes_frac")" -eq 0 ] && ok "lanes: nothing of the failed epoch committed" || bad "lanes: files committed"
expect 0 "" "lanes: dead-letter" -- write --url "$lake" --table lanes_dl --schema "$schema" --lanes 2 \
    --bad-records dead-letter --quiet "$work/fraction.ndjson"
if find "$lake/_openetl/deadletter/lanes_dl" -name '*.ndjson' -exec cat {} + 2>/dev/null \
    | grep -q 'fraction.ndjson line 2, column'; then
    ok "lanes: the dead letter holds the reason"
else
    bad "lanes: no dead letter with its reason"
fi

# ---- an unwritable destination, as an unprivileged user ----
mkdir -p "$work/ro-lake"
chmod 755 "$work/ro-lake"
chmod 644 "$work/good.ndjson"
setpriv --reuid 65534 --regid 65534 --clear-groups "$S3LAND" write --url "$work/ro-lake" \
    --table t "$work/good.ndjson" >"$work/out" 2>"$work/err"
code=$?
[ $code -eq 8 ] && grep -q "ro-lake" "$work/err" && grep -qi "permission" "$work/err" \
    && ok "unwritable destination: exit 8 (access) naming the path" || { bad "unwritable destination: exit $code"; cat "$work/err"; }

# ---- a full disk: 1 MiB of tmpfs ----
mkdir -p "$work/full"
if mount -t tmpfs -o size=1m tmpfs "$work/full"; then
    seq 1 200000 | awk '{printf "{\"a\":%d,\"s\":\"row %d of a load that cannot fit\"}\n", $1, $1}' >"$work/big.ndjson"
    "$S3LAND" write --url "$work/full/lake" --table big --schema "$schema" --compression none \
        "$work/big.ndjson" >"$work/out" 2>"$work/err"
    code=$?
    [ $code -eq 3 ] && grep -qiE "no space|NO_SPACE" "$work/err" && ok "full disk: exit 3, no space named" \
        || { bad "full disk: exit $code"; cat "$work/err"; }
    [ "$(nfiles "$work/full/lake/big")" -eq 0 ] && ok "full disk: nothing half-committed" \
        || bad "full disk: files visible"
    # Room again: a rerun lands every row once (gc first removes the staged garbage).
    mount -o remount,size=64m "$work/full"
    "$S3LAND" gc --url "$work/full/lake" --quiet
    "$S3LAND" write --url "$work/full/lake" --table big --schema "$schema" --compression none \
        --quiet "$work/big.ndjson" && ok "full disk: the rerun succeeds once there is room" \
        || bad "full disk: rerun failed"
    rows=$("$S3LAND" ls --url "$work/full/lake" --table big --json | sed -n 's/.*"table":"big","files":[0-9]*,"rows":\([0-9]*\).*/\1/p')
    [ "$rows" = "200000" ] && ok "full disk: 200000 rows after the rerun (from footers)" \
        || bad "full disk: $rows rows after the rerun"
    umount "$work/full"
else
    bad "cannot mount a tmpfs (tests run as root)"
fi

# ---- stdin: the committed offset is printed at every commit, even with --quiet ----
printf '{"a":1}\n{"a":2}\n{"a":3}\n' | "$S3LAND" write --url "$lake" --table stdin --schema "$schema" \
    --epoch-rows 2 --quiet - >"$work/out" 2>"$work/err"
code=$?
if [ $code -eq 0 ] && grep -q "committed: - offset 16 (epoch 1)" "$work/err" \
    && grep -q "committed: - offset 24 (epoch 2)" "$work/err"; then
    ok "stdin offsets printed at each commit"
else
    bad "stdin offsets: exit $code"; cat "$work/err"
fi
# Resuming the stream: offsets continue from the committed one (positions in the original stream).
printf '{"a":4}\n' | "$S3LAND" write --url "$lake" --table stdin --schema "$schema" --quiet - \
    >"$work/out" 2>"$work/err"
grep -q "committed: - offset 32 (epoch 3)" "$work/err" && ok "stdin offsets continue across runs" \
    || { bad "stdin resume offsets"; cat "$work/err"; }
# A slow stream commits by time (--commit-interval), not only at its end.
(for i in 1 2 3 4 5; do echo "{\"a\":$i}"; sleep 0.6; done) | "$S3LAND" write --url "$lake" \
    --table slow --schema "$schema" --commit-interval 1s --quiet - >"$work/out" 2>"$work/err"
[ "$(grep -c '^committed: - offset' "$work/err")" -ge 2 ] && ok "a slow stream commits by time" \
    || { bad "slow stream: $(cat "$work/err")"; }
# Two runs of one pipeline (stdin, same URL and table): the newer generation fences the older,
# which stops at its next commit with exit 5 and commits nothing more.
( (for i in 1 2 3 4 5 6 7 8; do echo "{\"a\":$i}"; sleep 0.4; done) | "$S3LAND" write --url "$lake" \
    --table fenced --schema "$schema" --commit-interval 300ms --quiet - 2>"$work/old.err"
  echo $? >"$work/old.code" ) &
sleep 1.5
printf '{"a":100}\n' | "$S3LAND" write --url "$lake" --table fenced --schema "$schema" --quiet - \
    2>"$work/new.err"
new_code=$?
wait
if [ "$new_code" -eq 0 ] && [ "$(cat "$work/old.code")" -eq 5 ] && grep -q "FENCED" "$work/old.err"; then
    ok "the older run of a pipeline is fenced (exit 5)"
else
    bad "fencing: new exit $new_code, old exit $(cat "$work/old.code")"; cat "$work/old.err"
fi
# --json: one object per line, ending with the summary.
"$S3LAND" write --url "$lake" --table json --schema "$schema" --json "$work/good.ndjson" >"$work/out" 2>"$work/err"
if tail -1 "$work/out" | grep -q '"event":"summary".*"rows":2'; then ok "--json summary"; else bad "--json summary"; cat "$work/out"; fi
"$S3LAND" write --url "$lake" --table json --schema "$schema" "$work/good.ndjson" >"$work/out" 2>"$work/err"
grep -q "nothing new" "$work/err" && ok "a rerun says nothing is new" || { bad "rerun message"; cat "$work/err"; }

# ---- an input broken beyond resynchronisation stops the run in every --bad-records mode ----
# (skipping it would meet the same error again forever: once, this filled a disk with dead letters)
printf 'a,s\n1,x\n3,"unterminated,3\n' >"$work/open-quote.csv"
printf '[{"a":1},{"a":2' >"$work/cut.json"
for mode in skip dead-letter; do
    expect 2 "open-quote\.csv line 3 \(byte offset 8\): a quoted field is not closed" \
        "$mode: a CSV quote left open stops the run" -- write --url "$lake" \
        --table "oq_${mode%-*}" --input-format csv --bad-records "$mode" "$work/open-quote.csv"
    expect 2 "cut\.json line 1 \(byte offset 9\): expected the rest of the array element" \
        "$mode: a JSON array cut short stops the run" -- write --url "$lake" \
        --table "cut_${mode%-*}" --input-format json --bad-records "$mode" "$work/cut.json"
    [ "$(nfiles "$lake/cut_${mode%-*}")" -eq 0 ] && ok "$mode: nothing of it committed" \
        || bad "$mode: files committed from a broken input"
done
[ -z "$(find "$lake/_openetl" -path '*deadletter*' -name '*.ndjson' -newer "$work/cut.json" 2>/dev/null)" ] \
    && ok "no dead letter written for a broken input" || bad "dead letters written for a broken input"

# ---- an input another pipeline already landed is refused, not landed twice ----
# The default pipeline id comes from the inputs' paths: adding an input to the command, or
# renaming one, makes another pipeline, which must not read the landed bytes again.
# The values of column a of a table, sorted, as DuckDB reads its files (not our own reader).
values_of() {
    node "${S3L_SOURCE_DIR:?}/tests/oracle/pq-read.mjs" "$lake/$1" \
        --sql "SELECT string_agg(a::VARCHAR, ',' ORDER BY a) AS v FROM t" 2>&1
}
printf '{"a":1}\n{"a":2}\n' >"$work/day1.ndjson"
printf '{"a":3}\n' >"$work/day2.ndjson"
"$S3LAND" write --url "$lake" --table days --schema "$schema" --quiet "$work/day1.ndjson"
expect 2 "day1\.ndjson was already landed into table days, up to byte 16, by pipeline [0-9a-f-]{36}" \
    "an input added to the command: the landed one is refused" -- \
    write --url "$lake" --table days --schema "$schema" "$work/day1.ndjson" "$work/day2.ndjson"
mv "$work/day1.ndjson" "$work/day1-renamed.ndjson"
expect 2 "day1-renamed\.ndjson was already landed .* \(as [^)]*/day1\.ndjson\)" \
    "a renamed input is refused" -- write --url "$lake" --table days --schema "$schema" \
    "$work/day1-renamed.ndjson"
first=$(sed -n 's/.*by pipeline \([0-9a-f-]\{36\}\).*/\1/p' "$work/err" | head -1)
printf '{"a":4}\n' >>"$work/day1-renamed.ndjson"
expect 0 "" "the first pipeline goes on with the renamed file" -- write --url "$lake" \
    --table days --schema "$schema" --pipeline-id "$first" "$work/day1-renamed.ndjson"
[ "$(values_of days)" = '{"v":"1,2,4"}' ] && ok "only the appended row landed (1,2 then 4)" \
    || bad "days holds $(values_of days), expected 1,2,4"
expect 0 "" "a file of its own lands" -- write --url "$lake" --table days --schema "$schema" \
    --quiet "$work/day2.ndjson"
[ "$(values_of days)" = '{"v":"1,2,3,4"}' ] && ok "day2's row landed once (1,2,3,4)" \
    || bad "days holds $(values_of days), expected 1,2,3,4"
ln "$work/day2.ndjson" "$work/day2-link.ndjson"
expect 1 "day2-link\.ndjson is given twice \(a hard link to" "a hard link to another input" -- \
    write --url "$lake" --table days2 --schema "$schema" "$work/day2.ndjson" "$work/day2-link.ndjson"

# ---- a table never lies inside another table's directory ----
expect 0 "" "table nest" -- write --url "$lake" --table nest --schema "$schema" --quiet "$work/good.ndjson"
expect 1 "table nest/inner would lie inside the directory of table nest" \
    "a namespace named like a table is refused" -- write --url "$lake" --namespace nest \
    --table inner --schema "$schema" "$work/good.ndjson"
expect 0 "" "table ns1/inner" -- write --url "$lake" --namespace ns1 --table inner \
    --schema "$schema" --quiet "$work/good.ndjson"
expect 1 "table ns1: ns1 is already a namespace of other tables" \
    "a table named like a namespace is refused" -- write --url "$lake" --table ns1 \
    --schema "$schema" "$work/good.ndjson"
[ ! -d "$lake/nest/inner" ] && [ "$(nfiles "$lake/ns1")" -eq 0 ] \
    && ok "nothing written inside the other table" || bad "a table was written inside another"

# ---- a changed input is refused ----
printf '{"a":9}\n{"a":2}\n' >"$work/good.ndjson"
expect 2 "good\.ndjson was rewritten.*give a new --pipeline-id" "a rewritten input is refused, saying the way forward" -- \
    write --url "$lake" --table json --schema "$schema" "$work/good.ndjson"
expect 0 "wrote 2 rows" "a new --pipeline-id lands the rewritten file" -- write --url "$lake" --table json \
    --schema "$schema" --pipeline-id 0d7c3a52-8f7e-4b8e-9a43-3e2f3c1b6a01 "$work/good.ndjson"

printf '{"a":1}\n{"a":2}\n' >"$work/rot.ndjson"
"$S3LAND" write --url "$lake" --table rot --schema "$schema" --quiet "$work/rot.ndjson"
printf '{"a":1}\n{"a":2}\n{"a":3}\n' >"$work/rot.ndjson.1"
mv "$work/rot.ndjson.1" "$work/rot.ndjson"
expect 2 "rot\.ndjson was replaced \(rotated\?\).*give a new --pipeline-id, or move it to another path" \
    "a rotated input is refused, saying the way forward" -- \
    write --url "$lake" --table rot --schema "$schema" "$work/rot.ndjson"
# The way forward works: the new file moved to another path lands, into the same table.
mv "$work/rot.ndjson" "$work/rot-new.ndjson"
expect 0 "wrote 3 rows" "the rotated file, moved to another path, lands" -- write --url "$lake" \
    --table rot --schema "$schema" "$work/rot-new.ndjson"
expect 0 "total: 2 files, 5 rows" "the table holds the old 2 rows and the new 3" -- ls --url "$lake" --table rot
cp "$work/rot-new.ndjson" "$work/rot.ndjson"
"$S3LAND" write --url "$lake" --table trunc --schema "$schema" --quiet "$work/rot.ndjson"
: >"$work/rot.ndjson"
expect 2 "rot\.ndjson was truncated.*give a new --pipeline-id, or move it" "a truncated input is refused, saying the way forward" -- \
    write --url "$lake" --table trunc --schema "$schema" "$work/rot.ndjson"

[ $fails -eq 0 ] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
