#!/bin/sh
# stage-runtime.sh BINARY DIR: copies roostd into DIR with every shared
# library it loads that no Debian package provides (the Swift runtime), so
# the binary's $ORIGIN run path finds them beside it. Used by build-deb.sh
# and build-dist.sh.
set -eu
binary=$1 dir=$2
install -d "$dir"
install -m 0755 "$binary" "$dir/roostd"
ldd "$binary" | awk '/=> \// { print $3 }' | while read -r lib; do
    if ! dpkg -S "$lib" >/dev/null 2>&1 && ! dpkg -S "$(readlink -f "$lib")" >/dev/null 2>&1; then
        install -m 0644 "$(readlink -f "$lib")" "$dir/$(basename "$lib")"
    fi
done
