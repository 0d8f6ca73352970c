#!/usr/bin/env bash
# Orphaned multipart uploads (issue 13 item 6), on the s3 label's RADOS Gateway (S3L_RGW_ENV, or
# one started here), every upload witnessed through ListMultipartUploads by the AWS CLI:
# - a write (stdin from a fifo) killed (kill -9) after its first UploadPart (seen in ListParts)
#   leaves a pending upload, which `s3land uploads` lists with its age and as its pipeline's
#   current generation's;
# - a live writer's upload (stdin from a fifo, 1h interval), an upload of another program under
#   the destination (made by the AWS CLI), and two two-phase sink uploads (tests/tools/
#   twopc_engine): one killed at before_commit (its committable in the engine's checkpoint), one
#   killed at after_prepare (in no checkpoint) are pending too;
# - under a policy without s3:ListBucketMultipartUploads (the fault proxy answers AccessDenied to
#   ListMultipartUploads) `gc --uploads` says so, exits 8 and does nothing (no claim, no abort);
# - `gc --uploads --force --pipeline-id A` claims the killed pipeline (as its rerun would; the
#   claim by age is integration.cli_gc_claim's) and aborts its writer's upload, and only that;
# - `gc --uploads --older-than 0s --keep FILE` (the other upload's and the committable's ids in
#   FILE) aborts only the after_prepare engine's upload: ListMultipartUploads then shows exactly
#   the held ones; without the other's id in FILE it is aborted too; by default (7d) nothing is;
# - the kept committable is completed by its engine's rerun (every record once), and the live
#   writer, never touched, ends normally (exit 0), leaving no upload pending;
# - a two-phase `pipe` killed (kill -9) while the fault proxy holds back its
#   CompleteMultipartUpload, its state (the default state directory) holding the committable:
#   `uploads` shows its upload "held by pipe state FILE"; a damaged state there makes
#   `gc --uploads` refuse (nothing aborted); `gc --uploads --older-than 0s` keeps the pipe's
#   upload, aborts an old unrelated one and ignores a damaged state of another bucket
#   (--pipe-state DIR); the pipe's rerun completes it, every line once;
# - file://: `uploads` and `gc --uploads` say a local destination has no multipart uploads.
set -uo pipefail
S3LAND=${S3LAND:?}
TOOLS=${S3L_TOOLS_DIR:?}
SRC=${S3L_SOURCE_DIR:?}
work=$(mktemp -d /tmp/s3l-gc-uploads-XXXXXX)
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
rgw=""
writer=""
killed=""
proxy=""
cleanup() {
    [ -n "$writer" ] && kill "$writer" 2>/dev/null
    [ -n "$killed" ] && kill -9 "$killed" 2>/dev/null
    [ -n "$proxy" ] && kill "$proxy" 2>/dev/null
    [ -n "$rgw" ] && "$SRC/tests/stores/stop-rgw.sh" "$rgw" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
# gc and uploads read the pipe states of the default state directory: this test's own.
export XDG_STATE_HOME=$work/xdg

env_file=${S3L_RGW_ENV:-}
if [ -z "$env_file" ]; then
    rgw=/tmp/s3land-rgw-gcu.$$
    RGW_DIR=$rgw "$SRC/tests/stores/start-rgw.sh" >"$work/rgw.log" 2>&1 \
        || { cat "$work/rgw.log"; echo "not ok - the RADOS Gateway did not start"; exit 1; }
    env_file=$rgw/env
fi
# shellcheck disable=SC1090
. "$env_file"
run=gc-uploads-$$-$RANDOM
url=s3://$RGW_BUCKET/$run

# 300,000 rows of 80 random hex digits (no dictionary shrinks them): about 30 MB of Parquet
# without compression, so a file sends parts long before it ends.
awk 'BEGIN { srand(7); for (i = 0; i < 300000; i++) { s = ""; for (j = 0; j < 10; j++)
    s = s sprintf("%08x", int(rand() * 4294967296)); printf "{\"id\": %d, \"s\": \"%s\"}\n", i, s } }' >big.ndjson
echo '[{"name": "id", "type": "int64", "nullable": false}, {"name": "s", "type": "string"}]' >schema.json
big=(--schema schema.json --compression none --row-group-size 2MiB --quiet)

pending() { # prefix -> "key upload-id" lines of the pending uploads under $run/prefix
    aws s3api list-multipart-uploads --bucket "$RGW_BUCKET" --prefix "$run/$1" \
        --query 'Uploads[].[Key,UploadId]' --output text | grep -v '^None$'
}
parts() { # key id -> number of parts uploaded
    aws s3api list-parts --bucket "$RGW_BUCKET" --key "$1" --upload-id "$2" \
        --query 'length(Parts)' --output text 2>/dev/null
}
wait_part() { # prefix -> "key id" of the first upload under it with a part, within 600 s (a
    # loaded machine: the writer encodes megabytes before its first part)
    local line end=$((SECONDS + 600))
    while [ "$SECONDS" -lt "$end" ]; do
        line=$(pending "$1" | head -1)
        if [ -n "$line" ] && [ "$(parts $line)" -ge 1 ] 2>/dev/null; then
            echo "$line"
            return 0
        fi
        sleep 0.5
    done
    return 1
}
# 1. The killed writer: pipeline A, on stdin (a fifo) so that its upload is in flight for as long
# as the test needs, killed (kill -9) once ListParts shows a part.
pipe_a=0a0a0a0a-1111-4222-8333-444455556666
rm -f fifo_a && mkfifo fifo_a
"$S3LAND" write --url "$url" --table a "${big[@]}" --commit-interval 1h --pipeline-id "$pipe_a" \
    - <fifo_a 2>"$work/a.err" &
killed=$!
# The feeders write in the background, so that the waits below are bounded by time and not by
# how fast a writer on a loaded machine drains its fifo.
exec 4>fifo_a
head -n 250000 big.ndjson >&4 &
feeder_a=$!
if up_a=$(wait_part "_openetl/staging/$pipe_a"); then
    kill -9 "$killed"
    wait "$killed" 2>/dev/null
    killed=""
    ok "write A killed after its first UploadPart ($(parts $up_a) part(s) uploaded)"
else
    bad "no upload with a part appeared: $(cat "$work/a.err")"
fi
exec 4>&-
wait "$feeder_a" 2>/dev/null # its reader is gone: EPIPE
read -r key_a id_a <<<"$up_a"
pending _openetl/ | grep -q "$id_a" && ok "its upload is pending after the kill" \
    || bad "the killed writer's upload is not pending"

"$S3LAND" uploads --url "$url" >"$work/u1.out" 2>&1
st=$?
[ "$st" = 0 ] && grep -q "^${key_a#$run/}  upload $id_a  started 20.* ago)  kept: staged by generation 1, pipeline $pipe_a's current one: its writer may be running$" "$work/u1.out" \
    && ok "uploads lists it with its age, held by its pipeline's current generation" \
    || bad "uploads (exit $st): $(cat "$work/u1.out")"

# 2. A live writer (pipeline B) with an upload in flight, and another program's upload.
rm -f fifo && mkfifo fifo
"$S3LAND" write --url "$url" --table b "${big[@]}" --commit-interval 1h \
    --pipeline-id 0b0b0b0b-1111-4222-8333-444455556666 - <fifo >"$work/b.out" 2>"$work/b.err" &
writer=$!
# fd 3 is the only writer of B's fifo: every process started from here on gets it closed (3>&-),
# or B never sees the end of its input (a fault proxy that inherited it kept B waiting forever).
exec 3>fifo
head -n 250000 big.ndjson >&3 &
feeder_b=$!
if up_b=$(wait_part _openetl/staging/0b0b0b0b 3>&-); then
    ok "the live writer B has an upload with parts"
else
    bad "the live writer has no upload with a part: $(cat "$work/b.err")"
fi
read -r _ id_b <<<"$up_b"
id_f=$(aws s3api create-multipart-upload --bucket "$RGW_BUCKET" --key "$run/other/blob.bin" \
    --query UploadId --output text 3>&-)
head -c 5242880 /dev/zero >part.bin
aws s3api upload-part --bucket "$RGW_BUCKET" --key "$run/other/blob.bin" --upload-id "$id_f" \
    --part-number 1 --body part.bin >/dev/null 3>&-
pending other/ | grep -q "$id_f" && ok "another program's upload is pending under the destination" \
    || bad "the other upload is not pending"

# Two-phase sink uploads (tests/tools/twopc_engine, an engine in miniature; its checkpoint is its
# own state file, which only --keep tells gc about): engine P is killed at before_commit, its
# committable in its checkpoint (pending: kept through --keep); engine O at after_prepare, before
# its checkpoint holds the committable (held by nothing: an orphan).
engine() { # prefix state crash-point
    S3L_CRASH_POINT=$3 "$TOOLS/twopc_engine" --url "$url" --endpoint "$RGW_ENDPOINT" \
        --region "$AWS_DEFAULT_REGION" --state "$2" --records 300 --interval 300 \
        --record-bytes 100 --prefix "$1" 3>&-
}
engine sinkp p.state before_commit >p.out 2>p.err
id_p=$(awk '$1 == "prepared" { print $5 }' p.out)
key_p=$(awk '$1 == "prepared" { print $3 }' p.out)
[ -n "$id_p" ] && ! grep -q '^committed' p.out && pending sinkp/ | grep -q "$id_p" \
    && ok "2PC engine P killed at before_commit: its committable's upload ($key_p) is pending" \
    || bad "engine P: $(cat p.out p.err) / pending: $(pending sinkp/)"
engine sinko o.state after_prepare >o.out 2>o.err
read -r key_o id_o <<<"$(pending sinko/ | head -1)"
[ -n "$id_o" ] && ! grep -q '^prepared' o.out \
    && ok "2PC engine O killed at after_prepare: its upload is pending, in no checkpoint" \
    || bad "engine O: $(cat o.out o.err) / pending: $(pending sinko/)"

# 3. No right to list uploads: the proxy answers AccessDenied to ListMultipartUploads.
node "$SRC/tests/support/fault-proxy.mjs" --target "$AWS_ENDPOINT_URL_S3" --port 0 >proxy.out 2>&1 3>&- &
proxy=$!
for i in $(seq 50); do grep -q LISTENING proxy.out && break; sleep 0.1; done
pport=$(awk '/LISTENING/ { print $2 }' proxy.out)
curl -s -X POST "http://127.0.0.1:$pport/__proxy/rules" \
    -d '[{"op": "ListMultipartUploads", "action": "deny", "times": -1}]' >/dev/null 3>&-
ck_a() { aws s3 cp --quiet "$url/_openetl/checkpoints/$pipe_a.json" - 3>&- | grep -o '"generation":[0-9]*' | head -1; }
"$S3LAND" gc --uploads --older-than 0s --url "$url" --endpoint "http://127.0.0.1:$pport" \
    >"$work/g0.out" 2>&1 3>&-
st=$?
[ "$st" = 8 ] && grep -q "refused to list multipart uploads (the policy lacks s3:ListBucketMultipartUploads); gc --uploads did nothing" "$work/g0.out" \
    && ok "without s3:ListBucketMultipartUploads gc --uploads says so (exit 8)" \
    || bad "denied gc --uploads (exit $st): $(cat "$work/g0.out")"
[ "$(pending "" | wc -l)" = 5 ] && [ "$(ck_a)" = '"generation":1' ] \
    && ok "and did nothing: 5 uploads pending, pipeline A not claimed" \
    || bad "after the denied gc: $(pending "") / A: $(ck_a)"

# 4. A is dead, but its checkpoint is fresh (1h interval): claimed with --force, as a writer's
# rerun would (gc's claim by age is integration.cli_gc_claim's). With --pipeline-id, gc --uploads
# judges only A's staging uploads: A's (generation 1, below 2 now) is aborted; the other, old
# ones (--older-than 0s) and B's are not A's, and stay.
"$S3LAND" gc --uploads --force --pipeline-id "$pipe_a" --older-than 0s --url "$url" \
    >"$work/g1.out" 2>&1 3>&-
st=$?
[ "$st" = 0 ] && grep -q "pipeline $pipe_a (.*): claimed generation 2, with --force" "$work/g1.out" \
    && grep -q "^${key_a#$run/}  upload $id_a  started .*  aborted: staged by generation 1, below pipeline $pipe_a's current 2, and not pending" "$work/g1.out" \
    && grep -q "^gc: aborted 1 orphaned upload, kept 0$" "$work/g1.out" \
    && [ "$(grep -c '  upload ' "$work/g1.out")" = 1 ] \
    && ok "gc --uploads --force --pipeline-id A claims A and aborts its upload, nothing else" \
    || bad "gc --uploads --pipeline-id A (exit $st): $(cat "$work/g1.out")"
now=$(pending "")
! echo "$now" | grep -q "$id_a" && [ "$(echo "$now" | wc -l)" = 4 ] \
    && ok "ListMultipartUploads: A's upload is gone, the 4 others are pending" \
    || bad "ListMultipartUploads after gc --pipeline-id A: $now"

# 5. The whole destination, --keep listing the other program's upload and engine P's
# committable: only engine O's upload is an orphan. Afterwards exactly the held ones are pending.
{ echo "# an engine's committables"; echo "$id_f"; echo "$id_p   # engine P, checkpoint 1"; } >keep.txt
"$S3LAND" gc --uploads --older-than 0s --keep keep.txt --url "$url" >"$work/g2.out" 2>&1 3>&-
st=$?
[ "$st" = 0 ] && grep -q "pipeline $pipe_a (.*): not claimed" "$work/g2.out" \
    && grep -q "upload $id_b  .*  kept: staged by generation 1, pipeline 0b0b0b0b-1111-4222-8333-444455556666's current one" "$work/g2.out" \
    && grep -q "^other/blob.bin  upload $id_f  .*  kept: listed in --keep$" "$work/g2.out" \
    && grep -q "^$key_p  upload $id_p  .*  kept: listed in --keep$" "$work/g2.out" \
    && grep -q "^${key_o#$run/}  upload $id_o  .*  aborted: older than 0s and held by no checkpoint of this destination$" "$work/g2.out" \
    && grep -q "^gc: aborted 1 orphaned upload, kept 3$" "$work/g2.out" \
    && ok "gc --uploads --keep aborts engine O's orphan, keeps B's, the other and engine P's (and says why)" \
    || bad "gc --uploads --keep (exit $st): $(cat "$work/g2.out")"
now=$(pending "" | awk '{ print $2 }' | sort)
[ "$now" = "$(printf '%s\n' "$id_b" "$id_f" "$id_p" | sort)" ] \
    && ok "after the kills, ListMultipartUploads shows no orphan and every held upload" \
    || bad "ListMultipartUploads after gc --keep: $now"

# 6. Without the other upload in --keep it is an orphan too; B's and engine P's stay.
echo "$id_p" >keep2.txt
"$S3LAND" gc --uploads --older-than 0s --keep keep2.txt --url "$url" >"$work/g3.out" 2>&1 3>&-
st=$?
now=$(pending "" | awk '{ print $2 }' | sort)
[ "$st" = 0 ] && grep -q "^other/blob.bin  upload $id_f  .*  aborted: older than 0s and held by no checkpoint of this destination$" "$work/g3.out" \
    && [ "$now" = "$(printf '%s\n' "$id_b" "$id_p" | sort)" ] \
    && ok "without it in --keep the other upload is aborted; B's and engine P's are kept" \
    || bad "gc --uploads --keep P (exit $st): $(cat "$work/g3.out") / pending: $now"
"$S3LAND" gc --uploads --url "$url" >"$work/g4.out" 2>&1 3>&-
st=$?
now=$(pending "" | awk '{ print $2 }' | sort)
[ "$st" = 0 ] && grep -q "^gc: aborted 0 orphaned uploads, kept 2$" "$work/g4.out" \
    && [ "$now" = "$(printf '%s\n' "$id_b" "$id_p" | sort)" ] \
    && ok "with the default age (7d) nothing more is aborted" \
    || bad "gc --uploads by default (exit $st): $(cat "$work/g4.out") / pending: $now"

# 7. Engine P's rerun completes the kept committable (recovery) and runs to the end: its 300
# records are in the object, each once.
engine sinkp p.state "" >p2.out 2>p2.err
st=$?
aws s3 cp --quiet "$url/$key_p" p.obj 3>&-
[ "$st" = 0 ] && grep -q '^done$' p2.out && [ "$(cut -c1-12 p.obj | sort -u | wc -l)" = 300 ] \
    && [ "$(wc -l <p.obj)" = 300 ] && [ -z "$(pending sinkp/)" ] \
    && ok "engine P's rerun completed the kept upload: its 300 records landed once each" \
    || bad "engine P rerun (exit $st): $(cat p2.out p2.err) / $(wc -l <p.obj) lines / pending: $(pending sinkp/)"

# 8. The live writer ends normally: its upload was kept. Its input ends when fd 3 closes (no
# other process holds the fifo); a generous bound for a loaded machine, then a failure.
wait "$feeder_b"
sed -n 250001,260000p big.ndjson >&3
exec 3>&-
for _ in $(seq 1200); do kill -0 "$writer" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$writer" 2>/dev/null; then
    bad "live writer B still running 600 s after its input ended: $(ls -l /proc/*/fd 2>/dev/null | grep -c "$work/fifo") fd(s) on its fifo"
    kill "$writer"
fi
wait "$writer"
st=$?
writer=""
[ "$st" = 0 ] && ok "the live writer ends normally: its upload was never touched" \
    || bad "live writer B (exit $st): $(cat "$work/b.err")"
[ -z "$(pending "")" ] && ok "no upload is left pending" || bad "left pending: $(pending "")"

# 9. pipe state files. A two-phase `pipe` (its state in the default state directory,
# $XDG_STATE_HOME/s3land) is killed (kill -9) while the fault proxy holds back its
# CompleteMultipartUpload (answered only after 10 min, never forwarded): its state then holds the
# interval's committable. gc --uploads --older-than 0s keeps that upload (held by the state) and
# aborts an old unrelated one; a state it cannot parse makes it refuse (exit 1, naming the file,
# nothing aborted); a damaged state whose url names another bucket is ignored; pipe's rerun
# completes the kept upload, and every line lands once.
awk 'BEGIN { for (i = 1; i <= 20000; i++) printf "pipe line %06d\n", i }' >lines.txt
echo "CREATE TABLE p (line STRING) WITH (connector = 's3', bucket = '$RGW_BUCKET', key_prefix = '$run/piped', region = '$AWS_DEFAULT_REGION', delivery_guarantee = 'exactly_once')" >p.sql
curl -s -X POST "http://127.0.0.1:$pport/__proxy/reset" >/dev/null 3>&-
curl -s -X POST "http://127.0.0.1:$pport/__proxy/rules" \
    -d '[{"op": "CompleteMultipartUpload", "action": "error500", "delayMs": 600000, "times": -1}]' >/dev/null 3>&-
"$S3LAND" pipe --sql p.sql --commit-interval 1h --endpoint "http://127.0.0.1:$pport" --path-style \
    lines.txt >pp.out 2>pp.err 3>&- &
killed=$!
held=""
for _ in $(seq 1200); do
    st_file=$(ls "$XDG_STATE_HOME"/s3land/pipe-*.json 2>/dev/null | head -1)
    [ -n "$st_file" ] && grep -q '"committables":\["' "$st_file" && { held=yes; break; }
    kill -0 "$killed" 2>/dev/null || break
    sleep 0.5
done
kill -9 "$killed" 2>/dev/null
wait "$killed" 2>/dev/null
killed=""
read -r key_pp id_pp <<<"$(pending piped/ | head -1)"
[ "$held" = yes ] && [ -n "$id_pp" ] && ! grep -q '^committed' pp.out pp.err \
    && ok "pipe killed while its complete was held back: its state holds the committable, the upload is pending" \
    || bad "pipe kill: state $(cat "$st_file" 2>&1 | head -c 300) / $(cat pp.out pp.err) / pending: $(pending piped/)"
id_u=$(aws s3api create-multipart-upload --bucket "$RGW_BUCKET" --key "$run/unrelated/blob.bin" \
    --query UploadId --output text 3>&-)
"$S3LAND" uploads --url "$url" >"$work/u10.out" 2>&1 3>&-
st=$?
[ "$st" = 0 ] && grep -q "^${key_pp#$run/}  upload $id_pp  started .*  kept: held by pipe state $st_file (the committable of its checkpoint 1)$" "$work/u10.out" \
    && grep -q "^unrelated/blob.bin  upload $id_u  .*  orphan: older than 7d\|^unrelated/blob.bin  upload $id_u  .*  kept: held by no checkpoint, but younger than 7d" "$work/u10.out" \
    && ok "uploads shows the pipe's upload as held by pipe state FILE" \
    || bad "uploads with a pipe state (exit $st): $(cat "$work/u10.out")"
# A damaged state in the default directory: gc refuses, naming it, and aborts nothing.
printf '{"version": 1, "committables": ["5333' >"$XDG_STATE_HOME/s3land/pipe-broken.json"
"$S3LAND" gc --uploads --older-than 0s --url "$url" >"$work/g10.out" 2>&1 3>&-
st=$?
now=$(pending "" | awk '{ print $2 }' | sort)
[ "$st" != 0 ] && grep -q "pipe state $XDG_STATE_HOME/s3land/pipe-broken.json cannot be read (not JSON" "$work/g10.out" \
    && grep -q "gc --uploads aborts nothing" "$work/g10.out" \
    && [ "$now" = "$(printf '%s\n' "$id_pp" "$id_u" | sort)" ] \
    && ok "a state gc cannot parse: it refuses (exit $st), names the file, aborts nothing" \
    || bad "gc with a broken state (exit $st): $(cat "$work/g10.out") / pending: $now"
rm -f "$XDG_STATE_HOME/s3land/pipe-broken.json"
# --pipe-state DIR: a damaged state whose url names another bucket is another destination's.
mkdir -p others
printf '{"url": "s3://another-bucket-%s", "version": 1, "committables": ["zz"]}' "$$" >others/pipe-x.json
"$S3LAND" gc --uploads --older-than 0s --pipe-state others --url "$url" >"$work/g11.out" 2>&1 3>&-
st=$?
now=$(pending "" | awk '{ print $2 }')
[ "$st" = 0 ] && grep -q "^unrelated/blob.bin  upload $id_u  .*  aborted: older than 0s and held by no checkpoint of this destination$" "$work/g11.out" \
    && grep -q "^${key_pp#$run/}  upload $id_pp  .*  kept: held by pipe state $st_file (the committable of its checkpoint 1)$" "$work/g11.out" \
    && [ "$now" = "$id_pp" ] \
    && ok "gc --uploads --older-than 0s keeps the pipe's upload, aborts the unrelated one, ignores another destination's damaged state" \
    || bad "gc with the pipe state (exit $st): $(cat "$work/g11.out") / pending: $now"
# The rerun (straight to the store) completes the kept committable and ends; each line once.
"$S3LAND" pipe --sql p.sql --commit-interval 1h --endpoint "$RGW_ENDPOINT" --path-style \
    lines.txt >pp2.out 2>pp2.err 3>&-
st=$?
rm -rf pobj && aws s3 cp --recursive --quiet "$url/piped/" pobj/ 3>&-
[ "$st" = 0 ] && grep -q '^recovered: checkpoint 1' pp2.err \
    && cmp -s <(find pobj -type f | LC_ALL=C sort | xargs -r cat) lines.txt \
    && [ -z "$(pending piped/)" ] \
    && ok "pipe's rerun completed the kept upload: all $(wc -l <lines.txt) lines landed once, none pending" \
    || bad "pipe rerun (exit $st): $(cat pp2.out pp2.err | head -c 600) / $(find pobj -type f | xargs -r cat | wc -l) lines / pending: $(pending piped/)"

# 10. file:// has no multipart uploads.
mkdir -p "$work/lake"
"$S3LAND" uploads --url "file://$work/lake" >"$work/f.out" 2>&1
st=$?
[ "$st" = 0 ] && grep -q "a local destination has no multipart uploads" "$work/f.out" \
    && ok "file://: uploads says a local destination has none" || bad "file:// uploads (exit $st): $(cat "$work/f.out")"
"$S3LAND" gc --uploads --url "file://$work/lake" >"$work/f2.out" 2>&1
st=$?
[ "$st" = 0 ] && grep -q "a local destination has no multipart uploads" "$work/f2.out" \
    && ok "file://: gc --uploads says so too" || bad "file:// gc --uploads (exit $st): $(cat "$work/f2.out")"
# The pipe's state above (url s3://...) is another destination's here; a damaged one is not.
echo 'not json' >"$XDG_STATE_HOME/s3land/pipe-broken.json"
"$S3LAND" gc --uploads --url "file://$work/lake" >"$work/f3.out" 2>&1
st=$?
[ "$st" = 1 ] && grep -q "pipe state $XDG_STATE_HOME/s3land/pipe-broken.json cannot be read (not JSON" "$work/f3.out" \
    && ok "file://: a damaged pipe state makes gc --uploads refuse too (exit 1)" \
    || bad "file:// gc --uploads with a damaged state (exit $st): $(cat "$work/f3.out")"
rm -f "$XDG_STATE_HOME/s3land/pipe-broken.json"

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
[ "$fails" = 0 ]
