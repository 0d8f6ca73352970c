#!/usr/bin/env bash
# CSV and JSON-array input from a pipe (issue 10: as NDJSON stdin already did, tests
# integration.cli_stdin_idle and cli_stdin_inferred): --commit-interval holds while the pipe is
# quiet, and SIGINT/SIGTERM stop the run within a second, committing every row read, with a true
# message. Before, these formats blocked in read(2) until more bytes or the end of the input came:
# nothing was committed by time, and a signal was not seen (read was retried after EINTR).
# Each format with a declared and an inferred schema; the rows go into a FIFO that stays open and
# quiet. Offsets counted by hand: CSV "id,s\n1,a\n2,b\n" is 5 + 4 + 4 = 13 bytes; the JSON array
# '[{"id":1,"s":"a"},{"id":2,"s":"b"}' (not closed: more may come) is 1 + 16 + 1 + 16 = 34 bytes,
# and its offset is just after the second element.
set -uo pipefail
S3LAND=${S3LAND:?S3LAND must name the s3land binary}
work=$(mktemp -d /tmp/s3l-stdin-stop-XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

echo '[{"name": "id", "type": "int64"}, {"name": "s", "type": "string"}]' >"$work/schema.json"
committed_rows() {
    "$S3LAND" ls --url "$1" --table t --committed --json | grep uncommitted_files |
        grep -o '"rows": *[0-9]*' | grep -o '[0-9]*$'
}
feed() { # the rows of format $1, without an end
    if [ "$1" = csv ]; then printf 'id,s\n1,a\n2,b\n'; else printf '[{"id":1,"s":"a"},{"id":2,"s":"b"}'; fi
}
# Waits up to $2 tenths of a second for process $1 to end; its exit status in $st (or "running").
wait_end() {
    st=running
    for _ in $(seq "$2"); do
        if ! kill -0 "$1" 2>/dev/null; then
            wait "$1"
            st=$?
            return
        fi
        sleep 0.1
    done
}

n=0
for fmt in csv json; do
    off=13
    [ "$fmt" = json ] && off=34
    for mode in declared inferred; do
        sch=()
        [ "$mode" = declared ] && sch=(--schema "$work/schema.json")
        # --commit-interval on a quiet pipe: committed within 2 s, nothing lost to a kill -9.
        n=$((n + 1))
        lake=$work/lake$n
        fifo=$work/in$n
        mkfifo "$fifo"
        "$S3LAND" write --url "$lake" --table t --input-format "$fmt" "${sch[@]}" \
            --commit-interval 300ms - <"$fifo" 2>"$work/err$n" &
        pid=$!
        exec 3>"$fifo"
        feed "$fmt" >&3
        committed=no
        for _ in $(seq 40); do # up to 2 s
            sleep 0.05
            if grep -q "committed: - offset $off " "$work/err$n"; then committed=yes; break; fi
        done
        [ "$committed" = yes ] && ok "$fmt $mode: committed while the pipe is quiet (offset $off printed)" ||
            { bad "$fmt $mode: no commit while the pipe is quiet"; cat "$work/err$n"; }
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        pid=
        exec 3>&-
        rows=$(committed_rows "$lake")
        [ "$rows" = 2 ] && ok "$fmt $mode: after kill -9 the 2 quiet rows are committed" ||
            bad "$fmt $mode: ${rows:-no} rows committed after kill -9 (want 2)"

        # SIGTERM and SIGINT (no commit by time or rows): the run ends within a second, exit
        # 128 + the signal, the 2 rows read are committed and the message says so.
        for sig in TERM INT; do
            n=$((n + 1))
            lake=$work/lake$n
            fifo=$work/in$n
            mkfifo "$fifo"
            "$S3LAND" write --url "$lake" --table t --input-format "$fmt" "${sch[@]}" \
                --commit-interval 0 --epoch-rows 0 - <"$fifo" 2>"$work/err$n" &
            pid=$!
            exec 3>"$fifo"
            feed "$fmt" >&3
            sleep 0.5
            kill -"$sig" "$pid"
            wait_end "$pid" 10
            if [ "$st" = running ]; then
                bad "$fmt $mode SIG$sig: still running 1 s after the signal"
                kill -9 "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
            fi
            pid=
            exec 3>&-
            want=143
            [ "$sig" = INT ] && want=130
            rows=$(committed_rows "$lake")
            if [ "$st" = "$want" ] && [ "$rows" = 2 ] &&
                grep -q "stopped by SIG$sig: what was read is committed" "$work/err$n" &&
                grep -q "committed: - offset $off " "$work/err$n" && grep -q "wrote 2 rows" "$work/err$n"; then
                ok "$fmt $mode SIG$sig: exit $want within 1 s, the 2 rows read committed, offset $off printed"
            else
                bad "$fmt $mode SIG$sig: exit $st (want $want), ${rows:-no} rows committed (want 2)"
                cat "$work/err$n"
            fi
        done
    done
done
[ "$fails" -eq 0 ]
