#!/bin/sh
# Usage: scripts/reports/check-labels.sh PAGE.html…
# Loads each report page in headless Chromium with scripts/reports/measure-labels.js appended and
# prints, per page, the text labels of the timeline, the pairs that overlap and those cut off.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "chromium not found (apt-get install chromium)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for page in "$@"; do
  { sed 's#</body></html>##' "$page"; printf '<script>'; cat "$here/measure-labels.js"; printf '</script>\n</body></html>\n'; } > "$tmp/page.html"
  "$CHROMIUM" --headless --disable-gpu --no-sandbox --user-data-dir="$tmp/profile" --window-size=1400,1000 --hide-scrollbars \
    --virtual-time-budget=2000 --dump-dom "file://$tmp/page.html" 2>/dev/null > "$tmp/dom.html" || true
  counts=$(grep -o 'id="label-check"[^>]*' "$tmp/dom.html" | sed 's/id="label-check" //')
  echo "$(basename "$page"): ${counts:-no result}"
  [ -n "${VERBOSE:-}" ] && sed -n '/id="label-check"/,/<\/pre>/p' "$tmp/dom.html" | sed 's/&quot;/"/g' | head -40
done
