#!/usr/bin/env bash
# The live session's memory over a long run (issue 32: "an 8-hour synthetic session with thousands of
# connections keeps RSS flat"). Not part of `make bench` (it takes minutes); numbers go in reports.
#   bash scripts/bench/live_soak.sh BLEANALYZE [FRAMES] [DIR] [LIVE OPTIONS…]
# - makes a synthetic session with scripts/bench/gen_btsnoop.c --shape writes (short connections:
#   ~1 per 4000 frames, thousands at 20 M frames; its clock spans hours of capture time), cached in DIR;
# - pipes it into `bleanalyze live - --jsonl` at full speed and samples the process's RSS
#   (/proc/PID/status VmRSS) every 50 ms;
# - prints frames, connections, findings told before the end, and RSS at 10 %, 50 %, 90 % of the run
#   and its peak, and the growth per connection between 50 % and 90 % (past the connections kept whole,
#   --keep-connections, default 1000, the rest are summarised): flat means the 90 % sample is within
#   a few MB of the 50 % one.
set -euo pipefail
BLEANALYZE=$1 FRAMES=${2:-20000000} DIR=${3:-.bench}
shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$DIR"
GEN="$DIR/gen_btsnoop"
[ -x "$GEN" ] && [ "$GEN" -nt scripts/bench/gen_btsnoop.c ] || cc -O2 -o "$GEN" scripts/bench/gen_btsnoop.c
CAP="$DIR/soak-$FRAMES.btsnoop"
[ -s "$CAP" ] || "$GEN" --frames "$FRAMES" --shape writes -o "$CAP"
OUT="$DIR/soak-live.jsonl" RSS="$DIR/soak-rss.txt"
: > "$RSS"
"$BLEANALYZE" live - --jsonl "$@" < "$CAP" > "$OUT" 2>"$DIR/soak-live.err" &
PID=$!
t0=$EPOCHREALTIME
while kill -0 "$PID" 2>/dev/null; do
    kb=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$PID/status" 2>/dev/null || true)
    [ -n "$kb" ] && echo "$kb" >> "$RSS"
    sleep 0.05
done
wait "$PID" || true
t1=$EPOCHREALTIME
python3 - "$OUT" "$RSS" "$t0" "$t1" <<'PYEOF'
import json, sys
out, rss, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
lines = open(out).read().splitlines()
report = json.loads(lines[-1])
events = [json.loads(l) for l in lines[:-1]]
early = sum(1 for e in events if e.get("type") == "finding" and e.get("decided") in ("link-end", "timer"))
told = sum(1 for e in events if e.get("type") == "finding")
closed = sum(1 for e in events if e.get("type") == "connection-closed")
samples = [int(x) for x in open(rss).read().split()]
cap = report["capture"]
span = cap.get("durationSeconds")
def at(f): return samples[min(len(samples) - 1, int(len(samples) * f))] // 1024 if samples else 0
print(f"soak: {cap.get('frames')} frames, {len(report.get('connections', []))} connections ({closed} closed events), "
      f"{told} findings told ({early} at their link's end), wall {t1 - t0:.1f} s"
      + (f", capture time {span / 3600:.2f} h" if span else ""))
print(f"soak: RSS at 10 % {at(0.1)} MB, 50 % {at(0.5)} MB, 90 % {at(0.9)} MB, peak {max(samples) // 1024 if samples else 0} MB over {len(samples)} samples")
def kb(f): return samples[min(len(samples) - 1, int(len(samples) * f))] if samples else 0
n = len(report.get("connections", []))
if n and samples:
    print(f"soak: {(kb(0.9) - kb(0.5)) * 1024 / max(1, n * 0.4):.0f} bytes of RSS per connection between 50 % and 90 %")
PYEOF
