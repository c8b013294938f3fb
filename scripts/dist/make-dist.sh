#!/usr/bin/env bash
# `make dist` (make-dist.sh VERSION [OUTDIR], default dist/): packages the static release binary
# (`make static`) for machines without Swift.
#   dist/bleanalyze-VERSION-linux-ARCH.tar.gz  bleanalyze-VERSION/{bin,share}: what `make install` puts
#                                              under a prefix (binary, man pages, completions);
#   dist/bleanalyze_VERSION_DEBARCH.deb        the same under /usr, built with dpkg-deb --root-owner-group.
# The .deb's Depends is read, not listed: each NEEDED entry of the binary's dynamic section (readelf -d)
# is resolved to its file (ldd) and to the Debian package that owns it (dpkg -S), so a library added
# to the link shows up in the package without anyone remembering to declare it.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${1:?usage: make-dist.sh VERSION [OUTDIR]}
out=${2:-dist}
bin=.build-static/release/bleanalyze
stage=$(mktemp -d "${TMPDIR:-/tmp}/bleanalyze-dist-XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"

# The tarball: `make install` into a relocatable tree (PREFIX empty, so bin/ and share/ at its top).
name=bleanalyze-$version
make --no-print-directory -o "$bin" install DESTDIR="$stage/tar/$name" PREFIX= >/dev/null
tarball=$out/$name-linux-$(uname -m).tar.gz
tar -C "$stage/tar" --owner=0 --group=0 --numeric-owner --sort=name -czf "$tarball" "$name"

# The Debian package: the same files under /usr.
command -v dpkg-deb >/dev/null || { echo "make dist: dpkg-deb not found, $tarball only"; exit 0; }
root=$stage/deb
make --no-print-directory -o "$bin" install DESTDIR="$root" PREFIX=/usr >/dev/null
arch=$(dpkg --print-architecture)

# NEEDED sonames -> files (as the loader finds them) -> owning packages.
declare -A owners=()
resolved=$(ldd "$bin")
for soname in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  # "libz.so.1 => /lib/.../libz.so.1 (0x...)", or the loader itself: "/lib64/ld-linux-x86-64.so.2 (0x...)".
  path=$(awk -v so="$soname" '$1 == so && $2 == "=>" { print $3 }
    $1 ~ /^\// && substr($1, length($1) - length(so)) == "/" so { print $1 }' <<<"$resolved" | head -1)
  [ -n "$path" ] || { echo "make dist: $soname is not found by ldd"; exit 1; }
  pkg=""
  # usrmerge: dpkg may know the file as /lib/... or /usr/lib/..., and the soname may be a symlink.
  for candidate in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
    pkg=$(dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$pkg" ] && break
  done
  [ -n "$pkg" ] || { echo "make dist: no Debian package owns $path ($soname)"; exit 1; }
  owners[$pkg]=1
done
depends=$(printf '%s\n' "${!owners[@]}" | sort | paste -sd, - | sed 's/,/, /g')

# DEB_MAINTAINER overrides; by default the author of the commit packaged.
maintainer=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
[ -n "$maintainer" ] || { echo "make dist: set DEB_MAINTAINER='Name <email>'"; exit 1; }
mkdir -p "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<CONTROL
Package: bleanalyze
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: net
Priority: optional
Description: Bluetooth HCI captures turned into answers
 bleanalyze reads btsnoop, pcap/pcapng, PacketLogger captures and Android bug reports and tells
 what happened, connection by connection, and what went wrong, with the frames that prove it.
 The Swift runtime is linked in: no Swift toolchain is needed.
CONTROL
deb=$out/bleanalyze_${version}_$arch.deb
dpkg-deb --build --root-owner-group "$root" "$deb" >/dev/null
echo "make dist: $tarball ($(wc -c <"$tarball") bytes)"
echo "make dist: $deb ($(wc -c <"$deb") bytes), Depends: $depends"
