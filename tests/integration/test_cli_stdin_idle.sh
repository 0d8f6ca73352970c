#!/usr/bin/env bash
# --commit-interval holds while stdin is quiet (issue 3: epochs every --epoch-rows rows or
# --commit-interval): rows read from a pipe are committed within the interval even when no more
# bytes come, as `tail -f log | s3land write -` needs; before, they waited for the next line, and
# a kill lost them. Two lines go into a FIFO, nothing more for a while; within 2 s the table has a
# committed epoch of exactly those 2 rows and the offset after them (34 bytes, counted by hand) is
# printed; a kill -9 then loses nothing committed. With 1 lane and with 2. And SIGTERM/SIGINT stop
# a run gracefully: what was read is committed before the exit. No wall-clock bound is asserted
# (the machine is shared): with no more bytes coming and no end of input, any commit at all is the
# interval's; the waits are long so a loaded machine does not fail them.
set -uo pipefail
S3LAND=${S3LAND:?S3LAND must name the s3land binary}
work=$(mktemp -d /tmp/s3l-stdin-idle-XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }
# Waits (up to 30 s) until the reader has taken every byte written into FIFO $1: FIONREAD on a
# second, non-blocking write end tells how many bytes the pipe still holds.
drained() {
    python3 - "$1" <<'PY'
import fcntl, os, struct, sys, termios, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
for _ in range(600):
    left = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    if left == 0:
        sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
}

echo '[{"name": "id", "type": "int64"}, {"name": "s", "type": "string"}]' >"$work/schema.json"
for lanes in 1 2; do
    lake=$work/lake$lanes
    fifo=$work/in$lanes
    mkfifo "$fifo"
    "$S3LAND" write --url "$lake" --table t --schema "$work/schema.json" --lanes "$lanes" \
        --commit-interval 300ms - <"$fifo" 2>"$work/err$lanes" &
    pid=$!
    exec 3>"$fifo"
    printf '{"id":1,"s":"a"}\n{"id":2,"s":"b"}\n' >&3 # 17 + 17 = 34 bytes
    committed=no
    for _ in $(seq 400); do # up to 20 s
        sleep 0.05
        if grep -q "committed: - offset 34 " "$work/err$lanes"; then committed=yes; break; fi
    done
    [ "$committed" = yes ] && ok "lanes $lanes: committed while stdin is quiet (offset 34 printed)" ||
        { bad "lanes $lanes: no commit while stdin is quiet"; cat "$work/err$lanes"; }
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=
    exec 3>&-
    rows=$("$S3LAND" ls --url "$lake" --table t --committed --json | grep uncommitted_files |
        grep -o '"rows": *[0-9]*' | grep -o '[0-9]*$')
    [ "$rows" = 2 ] && ok "lanes $lanes: after kill -9 the 2 quiet rows are committed" ||
        bad "lanes $lanes: $rows rows committed after kill -9 (want 2)"
done
# SIGTERM and SIGINT stop the run: what was read is committed (no commit by time or rows here),
# and the exit code is 128 + the signal (143, 130).
for sig in TERM INT; do
    lake=$work/lake-$sig
    fifo=$work/in-$sig
    mkfifo "$fifo"
    lanes=1
    [ "$sig" = INT ] && lanes=2
    "$S3LAND" write --url "$lake" --table t --schema "$work/schema.json" --lanes "$lanes" \
        --commit-interval 0 --epoch-rows 0 - <"$fifo" 2>"$work/err-$sig" &
    pid=$!
    exec 3>"$fifo"
    printf '{"id":1,"s":"a"}\n{"id":2,"s":"b"}\n' >&3
    drained "$fifo" || bad "SIG$sig: the run did not read its input in 30 s"
    sleep 0.5
    kill -"$sig" "$pid"
    wait "$pid"
    st=$?
    pid=
    exec 3>&-
    want=143
    [ "$sig" = INT ] && want=130
    rows=$("$S3LAND" ls --url "$lake" --table t --committed --json | grep uncommitted_files |
        grep -o '"rows": *[0-9]*' | grep -o '[0-9]*$')
    if [ "$st" = "$want" ] && [ "$rows" = 2 ] && grep -q "stopped by SIG$sig" "$work/err-$sig" &&
        grep -q "committed: - offset 34 " "$work/err-$sig"; then
        ok "SIG$sig (lanes $lanes): exit $want, the 2 rows read are committed and offset 34 printed"
    else
        bad "SIG$sig: exit $st (want $want), $rows rows committed (want 2)"
        cat "$work/err-$sig"
    fi
done
[ "$fails" -eq 0 ]
