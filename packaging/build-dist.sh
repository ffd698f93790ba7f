#!/bin/sh
# build-dist.sh BINARY VERSION OUTDIR: roost-VERSION-linux-ARCH.tar.gz (make
# dist) for other distributions: lib/roost holds roostd and the Swift
# runtime it loads, bin/roostd links to it; install the libraries in
# runtime-packages (or your distribution's names for them) first.
set -eu
binary=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
name=roost-$version-linux-$(uname -m)
work=$(mktemp -d)
chmod 0755 "$work"
trap 'rm -rf "$work"' EXIT
top=$work/$name
sh "$here/stage-runtime.sh" "$binary" "$top/lib/roost"
install -d "$top/bin"
ln -s ../lib/roost/roostd "$top/bin/roostd"
install -D -m 0644 "$repo/etc/roost/roost.yaml" "$top/etc/roost.yaml"
install -D -m 0644 "$repo/etc/roost/dev.yaml" "$top/etc/dev.yaml"
install -D -m 0644 "$repo/systemd/roostd.service" "$top/systemd/roostd.service"
install -D -m 0644 "$repo/systemd/roostd.socket" "$top/systemd/roostd.socket"
install -m 0644 "$repo/README.md" "$here/runtime-packages" "$top/"
install -d "$out"
tar -C "$work" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
