#!/usr/bin/env bash
# start-rgw.sh: starts a throw-away S3 server for the tests: Ceph's RADOS Gateway on a one-node
# cluster (one mon, one OSD, no mgr, no systemd), all under one temporary directory, listening on
# 127.0.0.1 only. Installs Debian's ceph-mon, ceph-osd, radosgw and ceph-common when missing.
#
# Prints shell `export NAME=VALUE` lines (RGW_DIR, RGW_ENDPOINT, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION, AWS_REGION, AWS_ENDPOINT_URL_S3, RGW_BUCKET) and
# writes them to $RGW_DIR/env: `. $RGW_DIR/env` then points s3land and the AWS tools at the store. Every daemon it starts is
# recorded as "NAME PID" in $RGW_DIR/pids; stop-rgw.sh stops exactly those.
#
# Environment (all optional):
#   RGW_DIR        state directory (default: a new mktemp -d)
#   RGW_PORT       S3 port (default: a free port); RGW_TLS_PORT (a port, or auto: a free one) adds
#                  an HTTPS frontend, with a throw-away CA and certificate made here
#                  ($RGW_DIR/tls/ca.pem, for 127.0.0.1 and localhost)
#   RGW_STORE      memstore (default: data in RAM, fastest start) or bluestore (sparse file)
#   RGW_STORE_BYTES  store size (default 4 GiB)
#   RGW_DNS_NAME   rgw_dns_name, for virtual-hosted requests (default s3.localhost.test)
#   RGW_BUCKET     bucket created for the tests (default s3land-test)
#   RGW_TIMEOUT    seconds allowed per readiness step (default 90)
#   RGW_STS        1: STS on (rgw_sts_key, rgw_s3_auth_use_sts; AssumeRole on the S3 endpoint),
#                  the test user may manage roles (caps roles=*). With STS on, RGW answers a
#                  wrong secret with AccessDenied: keep it off but for the role tests
#   RGW_RESTART    1: start again the store whose state is RGW_DIR (required), after its
#                  daemons were killed or stopped: same ceph.conf (fsid, ports, object store),
#                  no mkfs, same user and bucket; mon, osd and radosgw are started on the old
#                  data and recorded afresh in $RGW_DIR/pids. Only with RGW_STORE=bluestore
#                  (the store keeps objects and pending multipart uploads across an OSD
#                  restart; memstore loses them, so a memstore state is refused). Fails if one
#                  of the recorded daemons still runs, or if a port of the old store was taken
#                  meanwhile. Prints and rewrites $RGW_DIR/env as a first start does.
# SSE-KMS: RGW's testing KMS backend is always on, with keys testkey-1 and testkey-2 (harmless:
# only requests asking for aws:kms use it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { printf '[start-rgw %s] %s\n' "$(date +%T)" "$*" >&2; }
fail() { say "error: $*"; exit 1; }

RGW_STORE=${RGW_STORE:-memstore}
RGW_STORE_BYTES=${RGW_STORE_BYTES:-4294967296}
RGW_DNS_NAME=${RGW_DNS_NAME:-s3.localhost.test}
RGW_BUCKET=${RGW_BUCKET:-s3land-test}
RGW_TIMEOUT=${RGW_TIMEOUT:-90}
# 32-byte AES keys (base64) of the testing KMS backend: fixed test values, never secrets
RGW_KMS_KEY1=AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=
RGW_KMS_KEY2=ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=
ACCESS=${RGW_ACCESS_KEY:-S3LANDTESTKEY0000001}
SECRET=${RGW_SECRET_KEY:-s3land/test+secret=0000000000000000000001}
t0=$SECONDS

# ---- packages: only what is missing, the way scripts/install-deps.sh does it
missing=()
for tool in ceph-mon:ceph-mon ceph-osd:ceph-osd radosgw:radosgw ceph:ceph-common \
            radosgw-admin:ceph-common monmaptool:ceph-common ceph-authtool:ceph-common \
            uuidgen:uuid-runtime openssl:openssl curl:curl; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    export DEBIAN_FRONTEND=noninteractive
    apt-cache show radosgw >/dev/null 2>&1 || $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
    $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
        ceph-mon ceph-osd radosgw ceph-common uuid-runtime openssl curl >&2
fi

# ---- free ports. Two things can take a port between the probe and the bind: another store that
# starts at the same time (ctest -j2 runs several RGW tests at once), and the kernel handing the
# port to an outgoing connection. So the ports come from below the ephemeral range, and stores
# start one at a time: the lock below is held from choosing the ports until radosgw answers.
# The daemons get the lock's descriptor closed (9>&-), so they never hold it.
exec 9>>"${TMPDIR:-/tmp}/s3land-rgw-start.lock"
flock -w 600 9 || fail "another store has been starting for 10 minutes"
busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [ "${RGW_RESTART:-0}" = 1 ]; then
    # ---- a restart on existing state (RGW_RESTART, above): nothing is made anew
    [ -n "${RGW_DIR:-}" ] && [ -f "$RGW_DIR/ceph.conf" ] && [ -f "$RGW_DIR/env" ] ||
        fail "RGW_RESTART=1 needs RGW_DIR holding a store's ceph.conf and env"
    RGW_DIR=$(cd "$RGW_DIR" && pwd -P)
    conf=$RGW_DIR/ceph.conf
    grep -q '^osd_objectstore = bluestore$' "$conf" ||
        fail "$RGW_DIR is not a bluestore store: a memstore OSD loses its data when it stops"
    ours() { [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' < "/proc/$1/cmdline" | grep -qF "$conf"; }
    for f in "$RGW_DIR/pids" "$RGW_DIR/pids.stopped"; do
        [ -f "$f" ] || continue
        while read -r name pid; do
            ours "$pid" && fail "$name ($pid) of $RGW_DIR still runs; stop it first"
        done < "$f"
    done
    # shellcheck disable=SC1091
    . "$RGW_DIR/env"
    mon_port=$(sed -n 's/^mon_host = \[v2:127\.0\.0\.1:\([0-9]*\)\]$/\1/p' "$conf")
    [ -n "$mon_port" ] || fail "no mon port in $conf"
    tls_port=""
    [ -n "${RGW_TLS_ENDPOINT:-}" ] && tls_port=${RGW_TLS_ENDPOINT##*:}
    for p in "$RGW_PORT" "$mon_port" $tls_port; do
        busy "$p" && fail "127.0.0.1:$p of the old store is in use now"
    done
    [ -f "$RGW_DIR/pids" ] && mv "$RGW_DIR/pids" "$RGW_DIR/pids.killed"
    : > "$RGW_DIR/pids"
    trap 'rc=$?; [ $rc -eq 0 ] || { say "restart failed ($rc)"; "$here/stop-rgw.sh" "$RGW_DIR" --keep >&2; }' EXIT
    wait_for() { # as below
        local what=$1; shift
        local end=$((SECONDS + RGW_TIMEOUT))
        until "$@" >/dev/null 2>&1; do
            [ $SECONDS -lt $end ] || fail "$what not ready after ${RGW_TIMEOUT}s; logs in $RGW_DIR/log"
            sleep 0.3
        done
    }
    ceph_() { ceph --conf "$conf" --connect-timeout 10 "$@"; }
    ceph-mon --conf "$conf" -i a -f </dev/null >>"$RGW_DIR/log/mon.out" 2>&1 9>&- &
    echo "mon.a $!" >> "$RGW_DIR/pids"
    wait_for "mon" ceph_ mon stat
    say "mon up again ($((SECONDS - t0)) s)"
    ceph-osd --conf "$conf" -i 0 -f </dev/null >>"$RGW_DIR/log/osd.out" 2>&1 9>&- &
    echo "osd.0 $!" >> "$RGW_DIR/pids"
    radosgw --conf "$conf" -n client.rgw.a -f </dev/null >>"$RGW_DIR/log/rgw.out" 2>&1 9>&- &
    rgw_pid=$!
    echo "rgw.a $rgw_pid" >> "$RGW_DIR/pids"
    # Ready when a signed HEAD of the old bucket answers 200: radosgw is up and reaches the
    # restarted OSD (the mon may still list the killed OSD as up, so its state proves nothing).
    head_bucket() {
        kill -0 "$rgw_pid" 2>/dev/null || return 0 # checked below
        [ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' -I --aws-sigv4 'aws:amz:us-east-1:s3' \
            -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
            --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
            "http://127.0.0.1:$RGW_PORT/$RGW_BUCKET")" = 200 ]
    }
    wait_for "radosgw (restart)" head_bucket
    kill -0 "$rgw_pid" 2>/dev/null || { tail -n 5 "$RGW_DIR/log/client.rgw.a.log" >&2;
                                        fail "radosgw exited; see $RGW_DIR/log"; }
    flock -u 9
    exec 9>&-
    say "ready again ($((SECONDS - t0)) s) on 127.0.0.1:$RGW_PORT, state in $RGW_DIR"
    cat "$RGW_DIR/env"
    exit 0
fi
ephemeral_lo=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
port_hi=$(( ephemeral_lo - 100 ))
[ "$port_hi" -gt 11000 ] || port_hi=32000
free_port() { # free_port [N]: the first of N consecutive free ports
    local p n=${1:-1} i ok
    for _ in $(seq 1 200); do
        p=$(( 10000 + (RANDOM * 32768 + RANDOM) % (port_hi - 10000 - n) ))
        ok=1
        for ((i = 0; i < n; i++)); do busy $((p + i)) && { ok=0; break; }; done
        [ $ok = 1 ] && { echo "$p"; return; }
    done
    fail "no free port found"
}
RGW_PORT=${RGW_PORT:-$(free_port)}
[ "${RGW_TLS_PORT:-}" = auto ] && RGW_TLS_PORT=$(free_port)
MON_PORT=$(free_port)
OSD_MIN=$(free_port 41); OSD_MAX=$((OSD_MIN + 40))
busy "$RGW_PORT" && fail "127.0.0.1:$RGW_PORT is in use"

RGW_DIR=${RGW_DIR:-$(mktemp -d /tmp/s3land-rgw.XXXXXX)}
mkdir -p "$RGW_DIR"
RGW_DIR=$(cd "$RGW_DIR" && pwd -P)
[ -e "$RGW_DIR/pids" ] && fail "$RGW_DIR already has a running store"
mkdir -p "$RGW_DIR"/{log,run,mon.a,osd.0,rgw,tls}
: > "$RGW_DIR/pids"
cleanup_on_failure() {
    local rc=$?
    [ $rc -eq 0 ] && return
    say "start failed ($rc); last log lines:"
    tail -n 20 "$RGW_DIR"/log/*.log "$RGW_DIR"/log/*.out 2>/dev/null >&2 || true
    "$here/stop-rgw.sh" "$RGW_DIR" --keep >&2 || true
}
trap cleanup_on_failure EXIT

frontends="beast endpoint=127.0.0.1:$RGW_PORT"
if [ -n "${RGW_TLS_PORT:-}" ]; then
    # a throw-away CA and a server certificate for localhost / 127.0.0.1, for the TLS tests
    tls=$RGW_DIR/tls
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=s3land test CA" \
        -keyout "$tls/ca.key" -out "$tls/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" \
        -out "$tls/server.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$tls/ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
        -CAcreateserial -days 2 -extfile "$tls/ext" -out "$tls/server.pem" 2>/dev/null
    frontends="beast endpoint=127.0.0.1:$RGW_PORT ssl_endpoint=127.0.0.1:$RGW_TLS_PORT"
    frontends+=" ssl_certificate=$tls/server.pem ssl_private_key=$tls/server.key"
fi
# Without it every answer on a reused connection waits ~40 ms: the gateway writes headers and
# body apart, Nagle holds the body until the client's delayed ACK (measured: 43 ms -> 1 ms).
frontends+=" tcp_nodelay=1"

conf=$RGW_DIR/ceph.conf
fsid=$(uuidgen)
# With auth off, every messenger must use crc mode, or radosgw never reaches the mon.
cat > "$conf" <<CONF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$MON_PORT]
public_addr = 127.0.0.1
public_network = 127.0.0.1/32
cluster_network = 127.0.0.1/32
ms_bind_msgr1 = false
ms_bind_msgr2 = true
ms_bind_port_min = $OSD_MIN
ms_bind_port_max = $OSD_MAX
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
auth_allow_insecure_global_id_reclaim = true
mon_warn_on_insecure_global_id_reclaim_allowed = false
ms_mon_client_mode = crc
ms_mon_service_mode = crc
ms_mon_cluster_mode = crc
ms_client_mode = crc
ms_service_mode = crc
ms_cluster_mode = crc
keyring = $RGW_DIR/keyring
run_dir = $RGW_DIR/run
log_file = $RGW_DIR/log/\$name.log
admin_socket = $RGW_DIR/run/\$name.asok
pid_file = $RGW_DIR/run/\$name.pid
crash_dir = $RGW_DIR/run
log_to_stderr = false
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_max_pg_per_osd = 1000
mon_data_avail_warn = 1
mon_data_avail_crit = 0
osd_objectstore = $RGW_STORE
[mon]
mon_data = $RGW_DIR/mon.\$id
[osd]
osd_data = $RGW_DIR/osd.\$id
memstore_device_bytes = $RGW_STORE_BYTES
bluestore_block_path = $RGW_DIR/osd.\$id/block.file
bluestore_block_size = $RGW_STORE_BYTES
bluestore_block_create = true
bluestore_block_db_create = false
bluestore_block_wal_create = false
bluestore_fsck_on_mount = false
osd_op_num_shards = 2
osd_op_num_threads_per_shard = 1
[client.rgw.a]
rgw_data = $RGW_DIR/rgw
rgw_frontends = $frontends
rgw_dns_name = $RGW_DNS_NAME
rgw_enable_usage_log = false
# SSE-KMS through RGW's testing KMS backend (keys in this file, test data only): used only by
# requests that ask for aws:kms (tests/integration/test_cli_sse.sh); SSE over plain HTTP allowed.
rgw_crypt_s3_kms_backend = testing
rgw_crypt_s3_kms_encryption_keys = testkey-1=$RGW_KMS_KEY1 testkey-2=$RGW_KMS_KEY2
rgw_crypt_require_ssl = false
CONF
if [ "${RGW_STS:-0}" = 1 ]; then
    printf 'rgw_sts_key = s3landstskey0001\nrgw_s3_auth_use_sts = true\n' >>"$conf"
fi

wait_for() { # wait_for WHAT CMD...: polls CMD every 0.3 s until it succeeds or time runs out
    local what=$1; shift
    local end=$((SECONDS + RGW_TIMEOUT))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || fail "$what not ready after ${RGW_TIMEOUT}s; logs in $RGW_DIR/log"
        sleep 0.3
    done
}
ceph_() { ceph --conf "$conf" --connect-timeout 10 "$@"; }

ceph-authtool --create-keyring "$RGW_DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$MON_PORT]" "$RGW_DIR/monmap" >/dev/null
ceph-mon --conf "$conf" --mkfs -i a --monmap "$RGW_DIR/monmap" --keyring "$RGW_DIR/keyring" \
    2>>"$RGW_DIR/log/mkfs.out"
ceph-mon --conf "$conf" -i a -f </dev/null >>"$RGW_DIR/log/mon.out" 2>&1 9>&- &
echo "mon.a $!" >> "$RGW_DIR/pids"
wait_for "mon" ceph_ mon stat
say "mon up ($((SECONDS - t0)) s)"

osd_uuid=$(uuidgen)
[ "$(ceph_ osd new "$osd_uuid")" = 0 ] || fail "unexpected OSD id"
ceph-osd --conf "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >>"$RGW_DIR/log/mkfs.out" 2>&1
ceph-osd --conf "$conf" -i 0 -f </dev/null >>"$RGW_DIR/log/osd.out" 2>&1 9>&- &
echo "osd.0 $!" >> "$RGW_DIR/pids"
osd_up() { ceph_ osd dump 2>/dev/null | grep -q '^osd\.0 up'; }
wait_for "osd" osd_up
say "osd up ($((SECONDS - t0)) s)"

radosgw --conf "$conf" -n client.rgw.a -f </dev/null >>"$RGW_DIR/log/rgw.out" 2>&1 9>&- &
rgw_pid=$!
echo "rgw.a $rgw_pid" >> "$RGW_DIR/pids"
answers() {
    kill -0 "$rgw_pid" 2>/dev/null || return 0 # checked below, where the message is seen
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$RGW_PORT/"
}
wait_for "radosgw" answers
kill -0 "$rgw_pid" 2>/dev/null || { tail -n 5 "$RGW_DIR/log/client.rgw.a.log" >&2;
                                    fail "radosgw exited; see $RGW_DIR/log"; }
flock -u 9 # every port is bound: the next store may choose its own
exec 9>&-
radosgw-admin --conf "$conf" user create --uid=s3land --display-name=s3land \
    --access-key="$ACCESS" --secret-key="$SECRET" >/dev/null 2>>"$RGW_DIR/log/admin.out"
if [ "${RGW_STS:-0}" = 1 ]; then
    radosgw-admin --conf "$conf" caps add --uid=s3land --caps="roles=*" >/dev/null \
        2>>"$RGW_DIR/log/admin.out"
fi
# ready when a signed request works; the same request creates the test bucket
make_bucket() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 'aws:amz:us-east-1:s3' \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --user "$ACCESS:$SECRET" \
        "http://127.0.0.1:$RGW_PORT/$RGW_BUCKET")" = 200 ]
}
wait_for "bucket $RGW_BUCKET" make_bucket
say "ready ($((SECONDS - t0)) s) on 127.0.0.1:$RGW_PORT, state in $RGW_DIR"

{
    # `export` lines, so that `. env` alone (no `set -a`) hands them to the commands run after
    # it; AWS_ENDPOINT_URL_S3 and AWS_REGION point s3land (and the AWS tools) at this store.
    echo "export RGW_DIR=$RGW_DIR"
    echo "export RGW_ENDPOINT=http://127.0.0.1:$RGW_PORT"
    [ -n "${RGW_TLS_PORT:-}" ] && echo "export RGW_TLS_ENDPOINT=https://127.0.0.1:$RGW_TLS_PORT" \
        && echo "export RGW_CA_FILE=$RGW_DIR/tls/ca.pem"
    echo "export RGW_PORT=$RGW_PORT"
    echo "export RGW_DNS_NAME=$RGW_DNS_NAME"
    echo "export RGW_BUCKET=$RGW_BUCKET"
    echo "export AWS_ACCESS_KEY_ID=$ACCESS"
    echo "export AWS_SECRET_ACCESS_KEY=$SECRET"
    echo "export AWS_DEFAULT_REGION=us-east-1"
    echo "export AWS_REGION=us-east-1"
    echo "export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$RGW_PORT"
    echo "export RGW_CONF=$conf"
} > "$RGW_DIR/env"
cat "$RGW_DIR/env"
