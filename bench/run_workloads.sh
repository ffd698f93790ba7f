# bench/run.sh, part 3 (sourced): the workloads, each against every server.
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

