#!/bin/sh
# build-deb.sh BINARY VERSION OUTDIR: roost_VERSION_ARCH.deb from a release
# build (make deb). The Swift runtime goes beside the binary in
# /usr/lib/roost (no Debian package has it), /usr/bin/roostd links to it,
# Depends and Recommends come from packaging/runtime-packages.
set -eu
binary=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
arch=$(dpkg --print-architecture)
root=$(mktemp -d)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

sh "$here/stage-runtime.sh" "$binary" "$root/usr/lib/roost"
install -d "$root/usr/bin"
ln -s ../lib/roost/roostd "$root/usr/bin/roostd"
# The repository's hardened units, pointed at the packaged binary; the
# package makes a static roost user, so no dynamic one.
install -d "$root/lib/systemd/system"
sed -e 's|/usr/local/bin/roostd|/usr/bin/roostd|' -e 's|/usr/local/share/doc/roost|/usr/share/doc/roost|' \
    -e 's|^DynamicUser=yes|DynamicUser=no|' -e 's|Install with `make install`.*|Installed by the roost package (make deb).|' \
    "$repo/systemd/roostd.service" > "$root/lib/systemd/system/roostd.service"
install -m 0644 "$repo/systemd/roostd.socket" "$root/lib/systemd/system/roostd.socket"
install -D -m 0644 "$repo/etc/roost/roost.yaml" "$root/etc/roost/roost.yaml"
install -d "$root/usr/share/roost/scripts" "$root/usr/share/roost/templates"
for folder in scripts templates; do
    if [ -d "$repo/etc/roost/$folder" ]; then cp -R "$repo/etc/roost/$folder/." "$root/usr/share/roost/$folder/"; fi
done
install -D -m 0644 "$repo/README.md" "$root/usr/share/doc/roost/README.md"
for doc in "$repo"/docs/*.md; do install -m 0644 "$doc" "$root/usr/share/doc/roost/"; done

depends=$(grep -v '^#' "$here/runtime-packages" | grep -v '^recommends ' | grep . | paste -sd, - | sed 's/,/, /g')
recommends=$(grep '^recommends ' "$here/runtime-packages" | cut -d' ' -f2 | paste -sd, - | sed 's/,/, /g')
install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: roost
Version: $version
Architecture: $arch
Maintainer: Roost maintainers <roost@localhost>
Section: net
Priority: optional
Depends: $depends, adduser | passwd
Recommends: $recommends
Installed-Size: $(du -sk "$root" | cut -f1)
Homepage: https://github.com/roost/roost
Description: self-hosted mobile backend
 Roost (roostd) serves collections, accounts, files with thumbnails,
 messaging, live streams and delta sync over HTTP, from SQLite or PostgreSQL.
CONTROL
echo /etc/roost/roost.yaml > "$root/DEBIAN/conffiles"
install -m 0755 "$here/deb/postinst" "$here/deb/prerm" "$here/deb/postrm" "$root/DEBIAN/"
install -d "$out"
dpkg-deb -Zgzip -z6 --build --root-owner-group "$root" "$out/roost_${version}_${arch}.deb" >/dev/null
echo "$out/roost_${version}_${arch}.deb"
