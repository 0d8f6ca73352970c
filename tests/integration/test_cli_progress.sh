#!/usr/bin/env bash
# Progress on a terminal (issue 12, item 3), for `write` and `run`: rows, bytes read, commits,
# bytes committed and the lag behind the inputs' ends (bytes not read yet), on stderr, at most
# once a second, only when stderr is a terminal. The runs are made to last several seconds by
# tests/support/fault-proxy.mjs in front of Ceph RGW (the s3 label's gateway, S3L_RGW_ENV, or
# one started here) holding every PutObject 300 ms, so that progress is due whatever the load.
# - `write` under script(1) (stderr a pty): at least 2 progress draws, each with rows, commits and
#   "behind the inputs' ends"; no more draws than seconds elapsed + 1; commits never go down, the
#   lag never goes up, and the last draw's commits are below the run's epochs;
# - the same with stderr a file: no progress drawn at all;
# - `write --json` and `run --json` (two sources): each progress event's bytes_behind equals the
#   inputs' sizes minus its bytes_in (a fresh pipeline starts at offset 0: computed here from
#   the file sizes), and its commits never go down; a write rerun after 4000 lines were
#   appended: the appended bytes minus its bytes_in (it resumes at the committed offset).
# shellcheck source=tests/integration/lib.sh
. "${S3L_SOURCE_DIR:?}/tests/integration/lib.sh" progress
s3l_rgw progress
unset AWS_ENDPOINT_URL AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL_S3
cd "$work" || exit 1
s3l_proxy "$RGW_ENDPOINT"
curl -s -X POST "$purl/__proxy/rules" \
    -d '[{"op":"PutObject","action":"slow","delayMs":300,"times":-1}]' >/dev/null
python3 -c 'import json
for i in range(12000): print(json.dumps({"id": i, "s": "row %d" % i}))' >a.ndjson
python3 -c 'import json
for i in range(5000): print(json.dumps({"k": i}))' >b.ndjson
prefix=progress-$$
wargs() { echo "write --url s3://$RGW_BUCKET/$prefix/$1 --endpoint $purl --table t --epoch-rows 2000 a.ndjson"; }

# 1. write with stderr a terminal
start=$(date +%s)
# shellcheck disable=SC2046
script -qec "$S3LAND $(wargs tty)" /dev/null >tty.out 2>&1
st=$?
secs=$(( $(date +%s) - start ))
python3 - "$secs" tty.out >tty.check 2>&1 <<'PY'
import re, sys
secs = int(sys.argv[1])
text = open(sys.argv[2], "rb").read().decode("utf-8", "replace")
draws = [m.group(1) for m in re.finditer(r"\r\x1b\[K([^\r\n]*rows,[^\r\n\x1b]*)", text)]
draws = [d for d in draws if d.strip()]
assert len(draws) >= 2, f"{len(draws)} progress draws in {text!r}"
assert len(draws) <= secs + 1, f"{len(draws)} draws in {secs} s"
pat = re.compile(r"^(\d+) rows, .* read, (\d+) commits?, .* committed, ([\d.]+ \w+) behind the inputs' ends, \d+ rows/s$")
unit = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
prev = None
for d in draws:
    m = pat.match(d)
    assert m, f"draw {d!r}"
    n, lag = int(m.group(2)), m.group(3).split()
    lag = float(lag[0]) * unit[lag[1]]
    if prev:
        assert n >= prev[0] and lag <= prev[1], f"{d!r} after {prev}"
    prev = (n, lag)
assert prev[0] < 6, f"the last draw shows {prev[0]} commits, of 6"
summary = [l for l in (re.sub(r"\x1b\[K", "", x) for x in re.split(r"[\r\n]", text))
           if l.startswith("wrote 12000 rows")]
assert summary, "no summary line"
print(f"{len(draws)} draws in {secs} s, last: {draws[-1]}")
PY
pst=$?
[ "$st" = 0 ] && [ "$pst" = 0 ] && ok "write on a terminal: $(cat tty.check)" || bad "write on a terminal: exit $st: $(cat tty.check)"

# 2. stderr a file: nothing drawn
# shellcheck disable=SC2046
"$S3LAND" $(wargs file) >file.out 2>file.err
st=$?
if [ "$st" = 0 ] && ! grep -q $'\033\\[K' file.err && ! grep -q 'behind' file.err && grep -q '^wrote 12000 rows' file.err; then
    ok "stderr not a terminal: no progress, the summary only"
else
    bad "stderr a file: exit $st: $(cat -v file.err | head -5)"
fi

# 3. --json: bytes_behind equals the inputs' sizes minus bytes_in, for write and run
check_json() { # FILE TOTAL-BYTES [MIN-EVENTS]
    python3 - "$2" "$1" "${3:-2}" <<'PY'
import json, sys
total = int(sys.argv[1])
ev = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
pr = [e for e in ev if e.get("event") == "progress"]
assert len(pr) >= int(sys.argv[3]), f"{len(pr)} progress events"
last = 0
for e in pr:
    assert e["bytes_behind"] == total - e["bytes_in"], e
    assert e["commits"] >= last, e
    last = e["commits"]
print(f"{len(pr)} progress events, the last {pr[-1]['bytes_behind']} bytes behind of {total}")
PY
}
# shellcheck disable=SC2046
"$S3LAND" $(wargs json) --json >wj.out 2>wj.err
st=$?
res=$(check_json wj.out "$(stat -c %s a.ndjson)" 2>&1)
pst=$?
[ "$st" = 0 ] && [ "$pst" = 0 ] && ok "write --json: $res" \
    || bad "write --json: exit $st: $res $(cat wj.err)"
# a rerun after lines were appended resumes at the committed offset: the lag is what follows it
old=$(stat -c %s a.ndjson)
python3 -c 'import json
for i in range(12000, 16000): print(json.dumps({"id": i, "s": "row %d" % i}))' >>a.ndjson
# shellcheck disable=SC2046
"$S3LAND" $(wargs json) --json >wj2.out 2>wj2.err
st=$?
res=$(check_json wj2.out $(( $(stat -c %s a.ndjson) - old )) 1 2>&1)
pst=$?
[ "$st" = 0 ] && [ "$pst" = 0 ] && ok "write --json, resumed after an append: $res" \
    || bad "write --json resumed: exit $st: $res $(cat wj2.err)"
cat >p.yaml <<DOC
apiVersion: openetl.io/v1alpha1
kind: Destination
metadata:
  name: rgw
spec:
  connector: s3
  config:
    url: s3://$RGW_BUCKET/$prefix/run
    endpoint: $purl
    region: $AWS_REGION
    accessKeyId: { secret: K }
    secretAccessKey: { secret: S }
    fileSize: 16KiB
---
apiVersion: openetl.io/v1alpha1
kind: Pipeline
metadata:
  name: progress
spec:
  destination:
    name: rgw
  delivery:
    commit:
      interval: 1s
  sources:
    - name: a
      files: [a.ndjson]
    - name: b
      files: [b.ndjson]
DOC
S3LAND_SECRET_K=$AWS_ACCESS_KEY_ID S3LAND_SECRET_S=$AWS_SECRET_ACCESS_KEY \
    "$S3LAND" run --config p.yaml --json >rj.out 2>rj.err
st=$?
res=$(check_json rj.out $(( $(stat -c %s a.ndjson) + $(stat -c %s b.ndjson) )) 2>&1)
pst=$?
[ "$st" = 0 ] && [ "$pst" = 0 ] && ok "run --json (two sources): $res" \
    || bad "run --json: exit $st: $res $(cat rj.err)"
[ "$fails" = 0 ] && echo "all ok"
exit $((fails > 0))
