#!/bin/sh
# Runs a command next to a private, standalone systemd-journald, then dumps
# the journal as JSON. Meant to run under `unshare -m` (its own mount
# namespace), so the tmpfs mounts below hide the host's journal entirely.
#   journald_sandbox.sh OUT_JSON READY_FILE STOP_FILE -- command args...
# Starts journald, starts the command, touches READY_FILE, waits for
# STOP_FILE, sends the command SIGTERM, and writes `journalctl -o json` to OUT_JSON.
set -eu
out=$1 ready=$2 stop=$3
shift 4
mount --make-rprivate / 2>/dev/null || true
mount -t tmpfs tmpfs /run/systemd/journal 2>/dev/null || { mkdir -p /run/systemd/journal && mount -t tmpfs tmpfs /run/systemd/journal; }
mkdir -p /run/log
mount -t tmpfs tmpfs /run/log
[ -d /var/log/journal ] && mount -t tmpfs tmpfs /var/log/journal
/lib/systemd/systemd-journald &
journald=$!
i=0
while [ ! -S /run/systemd/journal/socket ]; do
    i=$((i + 1)); [ $i -gt 200 ] && { echo "journald did not start" >&2; kill $journald; exit 3; }
    sleep 0.05
done
"$@" &
daemon=$!
touch "$ready"
while [ ! -e "$stop" ]; do
    kill -0 $daemon 2>/dev/null || break
    sleep 0.05
done
kill -TERM $daemon 2>/dev/null || true
wait $daemon || true
sleep 0.3
timeout 5 journalctl --sync 2>/dev/null || true
{ journalctl -D /run/log/journal -o json --no-pager 2>/dev/null || true
  [ -d /var/log/journal ] && journalctl -D /var/log/journal -o json --no-pager 2>/dev/null || true; } > "$out"
kill -TERM $journald
wait $journald || true
