# bench/run.sh, part 1 (sourced): logging, clean-up and the measuring helpers.
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

