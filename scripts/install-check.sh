#!/usr/bin/env bash
# `make install-check`: installs the static release binary into a temporary DESTDIR with
# `make install`, runs it with Swift out of reach, then `make uninstall`s it. Fails (exit 1) with the
# reason when the installed binary needs Swift's libraries or does not run.
#   - empty environment (env -i): PATH=/usr/bin:/bin, no LD_LIBRARY_PATH, so /opt/swift cannot be found;
#   - ldd: no libswift*, libFoundation*, libdispatch or anything under the toolchain;
#   - `info --json` of captures/healthy.btsnoop: the format, and as many frames as the file has records;
#   - the same capture through a pipe (`bleanalyze info -`);
#   - the man pages and bash/zsh/fish completions installed beside it, and nothing left after uninstall.
# Linux (ldd); on macOS the Swift runtime is part of the OS.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$(mktemp -d "${TMPDIR:-/tmp}/bleanalyze-install-XXXXXX")
trap 'rm -rf "$stage"' EXIT
prefix=/usr/local
make --no-print-directory -o .build-static/release/bleanalyze install DESTDIR="$stage" PREFIX="$prefix" >/dev/null
bin="$stage$prefix/bin/bleanalyze"
[ -x "$bin" ] || { echo "install-check: $bin was not installed"; exit 1; }

libs=$(env -i PATH=/usr/bin:/bin ldd "$bin")
if grep -Ei 'libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift|not found' <<<"$libs"; then
  echo "install-check: the installed binary still needs the libraries above"; exit 1
fi
echo "shared libraries (all from the system):"
sed 's/^/  /' <<<"$libs"

capture=captures/healthy.btsnoop
out=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$bin" info "$capture" --json)
grep -q '"format":"btsnoop"' <<<"$out" || { echo "install-check: unexpected output: $out"; exit 1; }
# The frame count: the records of the btsnoop file, counted here from its bytes (16-byte header, then
# a 24-byte record header with the included length at offset 4, big-endian).
records=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(); at = 16; n = 0
while at + 24 <= len(b):
    at += 24 + struct.unpack(">I", b[at + 4:at + 8])[0]; n += at <= len(b)
print(n)' "$capture")
grep -q "\"frames\":$records," <<<"$out" || { echo "install-check: expected $records frames: $out"; exit 1; }
# stdin too, through a pipe, with the same empty environment.
piped=$(cat "$capture" | env -i PATH=/usr/bin:/bin "$bin" info - --json)
grep -q "\"frames\":$records," <<<"$piped" || { echo "install-check: from a pipe: $piped"; exit 1; }

# Man pages and completions beside it.
share=$stage$prefix/share
extras="$share/man/man1/bleanalyze.1.gz $share/man/man1/bleanalyze-report.1.gz
  $share/bash-completion/completions/bleanalyze $share/zsh/site-functions/_bleanalyze
  $share/fish/vendor_completions.d/bleanalyze.fish"
for f in $extras; do [ -s "$f" ] || { echo "install-check: $f was not installed"; exit 1; }; done

size=$(wc -c <"$bin")
make --no-print-directory uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null
left=$(find "$stage" -type f)
[ -z "$left" ] || { echo "install-check: make uninstall left $left"; exit 1; }
echo "install-check: OK (installed $size bytes, runs without Swift)"
