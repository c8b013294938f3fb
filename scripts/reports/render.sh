#!/bin/sh
# `make reports`: renders every capture in captures/ into Reports/<file>.html (the self-contained
# page) and Reports/<file>.txt (the terminal report, plain), then takes screenshots of the problem
# reports with headless Chromium into Reports/screenshots/. The outputs are deterministic:
# Tests/CLITests/HTMLReportTests.swift regenerates them and fails when a committed one is stale.
set -eu
cd "$(dirname "$0")/../.."
BIN=${BLEANALYZE_BIN:-.build/debug/bleanalyze}
[ -x "$BIN" ] || { echo "build first: $BIN is missing" >&2; exit 2; }
mkdir -p Reports/screenshots
rm -f Reports/*.html Reports/*.txt
n=0
for f in captures/*.btsnoop captures/*.pcap captures/*.pcapng captures/*.gz; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  "$BIN" report "$f" -o "Reports/$name.html"
  "$BIN" report "$f" -o "Reports/$name.txt"
  n=$((n + 1))
done
echo "rendered $n captures into Reports/"

# The shared real corpus (../shared/captures/real), when present: the HTML page of every capture
# into Reports/real/ (the captures themselves are third-party files and are not copied).
REAL=../shared/captures/real
if [ -d "$REAL" ]; then
  mkdir -p Reports/real
  rm -f Reports/real/*.html
  m=0
  for f in "$REAL"/*; do
    case "$(basename "$f")" in *.md|SHA256SUMS) continue ;; esac
    "$BIN" report "$f" -o "Reports/real/$(basename "$f").html" || echo "report of $f failed" >&2
    m=$((m + 1))
  done
  echo "rendered $m real captures into Reports/real/"
fi

# The stuck pool, a flow stall, a failed subscription, a value cut at the MTU and two links lost with their causes, as a browser shows them.
SHOTS="pool_full idle_connection flow_stall cccd_insufficient_encryption mtu_truncated_read cause_peer_reset cause_short_supervision"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
  echo "chromium not found (apt-get install chromium): screenshots not updated" >&2
  exit 0
fi
for c in $SHOTS; do
  "$CHROMIUM" --headless --disable-gpu --no-sandbox --hide-scrollbars --force-device-scale-factor=1 \
    --window-size=1400,1000 --screenshot="Reports/screenshots/$c.png" "file://$PWD/Reports/$c.btsnoop.html" >/dev/null 2>&1
done
# Long phone logs with many connections, pages and findings, as a browser shows them (whole timeline).
REAL_SHOTS="android_pongbot_prepwrite_indicate.btsnoop android_jkbms_long_session_reconnects.btsnoop
blueheron_packetlogger_six_reconnects.pklg android_page_timeouts_supervision_timeout_writecmd.btsnoop"
for c in $REAL_SHOTS; do
  [ -e "Reports/real/$c.html" ] || continue
  "$CHROMIUM" --headless --disable-gpu --no-sandbox --hide-scrollbars --force-device-scale-factor=1 \
    --window-size=1400,2000 --screenshot="Reports/screenshots/real_${c%%.*}.png" "file://$PWD/Reports/real/$c.html" >/dev/null 2>&1
done
echo "screenshots in Reports/screenshots/"
