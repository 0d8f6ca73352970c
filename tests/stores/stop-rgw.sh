#!/usr/bin/env bash
# stop-rgw.sh DIR [--keep]: stops the daemons start-rgw.sh recorded in DIR/pids, newest first,
# by PID only, and only while the PID still runs with DIR's ceph.conf (a reused PID is left
# alone). Then removes DIR, unless --keep (used to keep logs after a failed start).
set -uo pipefail
dir=${1:-${RGW_DIR:-}}
[ -n "$dir" ] || { echo "usage: stop-rgw.sh DIR [--keep]" >&2; exit 2; }
[ -d "$dir" ] || exit 0
dir=$(cd "$dir" && pwd -P)
say() { printf '[stop-rgw %s] %s\n' "$(date +%T)" "$*" >&2; }
ours() { [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' < "/proc/$1/cmdline" | grep -qF "$dir/ceph.conf"; }
if [ -f "$dir/pids" ]; then
    tac "$dir/pids" | while read -r name pid; do
        ours "$pid" || continue
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 50); do ours "$pid" || break; sleep 0.1; done
        if ours "$pid"; then
            say "$name ($pid) still running after 5 s; SIGKILL"
            kill -KILL "$pid" 2>/dev/null
            for _ in $(seq 1 30); do ours "$pid" || break; sleep 0.1; done
        fi
    done
    mv "$dir/pids" "$dir/pids.stopped"
fi
[ "${2:-}" = "--keep" ] && exit 0
case "$dir" in /|/tmp|"$HOME") say "refusing to remove $dir"; exit 1 ;; esac
rm -rf -- "$dir"
