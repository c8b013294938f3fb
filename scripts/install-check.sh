#!/usr/bin/env bash
# `make install-check`: installs the static release binary into a temporary DESTDIR with
# `make install`, runs it with Swift out of reach, then `make uninstall`s it. Fails (exit 1) with the
# reason when the installed binary needs Swift's libraries or does not run.
#   - empty environment (env -i): PATH=/usr/bin:/bin, no LD_LIBRARY_PATH, so /opt/swift cannot be found;
#   - ldd: no libswift*, libFoundation*, libdispatch or anything under the toolchain;
#   - `info --json` of captures/healthy.btsnoop from the installed binary equals the debug build's
#     when one exists (.build/debug/bleanalyze), else only its frame count is checked against the file.
# Linux (ldd); on macOS the Swift runtime is part of the OS.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$(mktemp -d "${TMPDIR:-/tmp}/bleanalyze-install-XXXXXX")
trap 'rm -rf "$stage"' EXIT
prefix=/usr/local
make --no-print-directory -o .build-static/release/bleanalyze install DESTDIR="$stage" PREFIX="$prefix" >/dev/null
bin="$stage$prefix/bin/bleanalyze"
[ -x "$bin" ] || { echo "install-check: $bin was not installed"; exit 1; }

libs=$(ldd "$bin")
if grep -Ei 'libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift|not found' <<<"$libs"; then
  echo "install-check: the installed binary still needs the libraries above"; exit 1
fi
echo "shared libraries (all from the system):"
sed 's/^/  /' <<<"$libs"

capture=captures/healthy.btsnoop
out=$(env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH= "$bin" info "$capture" --json)
if [ -x .build/debug/bleanalyze ]; then
  expected=$(.build/debug/bleanalyze info "$capture" --json)
  [ "$out" = "$expected" ] || { echo "install-check: the installed binary's info differs from the debug build's"; exit 1; }
fi
grep -q '"format":"btsnoop"' <<<"$out" || { echo "install-check: unexpected output: $out"; exit 1; }
# stdin too, through a pipe, with the same empty environment.
cat "$capture" | env -i PATH=/usr/bin:/bin "$bin" info - >/dev/null

make --no-print-directory uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null
[ ! -e "$bin" ] || { echo "install-check: make uninstall left $bin"; exit 1; }
echo "install-check: OK ($(wc -c <.build-static/release/bleanalyze) bytes, runs without Swift)"
