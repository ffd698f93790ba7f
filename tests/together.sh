#!/bin/sh
# tests/together.sh NAME COMMAND [NAME COMMAND ...]
#
# Runs the commands at the same time, each one's output into its own file,
# then prints each output in turn under its name (so no two interleave) and
# fails if any command failed. `make test` runs the parts that leave the two
# cores mostly idle this way: the serial pytest parts (one test at a time, mostly
# waiting out throttles and timers) and `swift test` (about one core).
set -u
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
while [ $# -ge 2 ]; do
    n=$((n + 1))
    printf '%s\n' "$1" > "$dir/$n.name"
    ( sh -c "$2" > "$dir/$n.out" 2>&1; echo $? > "$dir/$n.rc" ) &
    shift 2
done
wait
failed=0
i=1
while [ $i -le $n ]; do
    name=$(cat "$dir/$i.name")
    rc=$(cat "$dir/$i.rc")
    echo "=== $name (exit $rc) ==="
    cat "$dir/$i.out"
    [ "$rc" -eq 0 ] || failed=1
    i=$((i + 1))
done
exit $failed
