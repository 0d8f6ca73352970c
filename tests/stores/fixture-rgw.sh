#!/usr/bin/env bash
# fixture-rgw.sh start|stop DIR: the CTest fixture of the `s3` label (tests/CMakeLists.txt): one
# RADOS Gateway for every test of that label, its state (and env file DIR/env) in DIR. `start`
# first stops a store left in DIR by an interrupted run (stop-rgw.sh checks each PID is DIR's).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${2:?usage: fixture-rgw.sh start|stop DIR}
case "$1" in
    start)
        "$here/stop-rgw.sh" "$dir" >/dev/null 2>&1
        RGW_DIR=$dir "$here/start-rgw.sh" >/dev/null || exit 1
        [ -s "$dir/env" ] && echo "RADOS Gateway up; env file $dir/env" ;;
    stop)
        "$here/stop-rgw.sh" "$dir" ;;
    *)
        echo "usage: fixture-rgw.sh start|stop DIR" >&2; exit 2 ;;
esac
