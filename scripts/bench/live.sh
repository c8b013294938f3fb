#!/usr/bin/env bash
# make bench, step 7: `bleanalyze live` throughput and the proxy's cost (docs/PERFORMANCE.md, "live").
#   bash scripts/bench/live.sh BLEANALYZE CAPTURE DIR
# - stdin:  cat CAPTURE | bleanalyze live - --jsonl          frames/s (goal >= 1 M frames/s on one core)
# - follow: bleanalyze live --follow CAPTURE --duration 0.01 (reads to the end of what is written, then ends)
# - proxy:  scripts/bench/proxy_load.py as controller and host, directly and through
#           live --proxy: round trips (median, p99) and packets/s; added latency = proxy - direct.
set -euo pipefail
BLEANALYZE=$1 CAP=$2 DIR=$3
say() { printf '== %s\n' "$*" >&2; }
frames=$("$BLEANALYZE" info "$CAP" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames"])')
timed() {   # timed NAME CMD...: prints NAME wall user rss
    local name=$1; shift
    local tv="$DIR/time-live-$name.txt" t0 t1
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$tv" "$@" >/dev/null 2>"$DIR/stderr-live-$name.txt" || true
    t1=$EPOCHREALTIME
    local wall user rss
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    user=$(sed -n 's/.*User time (seconds): //p' "$tv")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tv")
    awk -v n="$name" -v w="$wall" -v u="$user" -v r="$rss" -v f="$frames" \
        'BEGIN { printf "live %-8s %10d frames  wall %7.3f s  user %7.3f s  %6.2f M frames/s (wall)  maxrss %d kB\n", n, f, w, u, f / w / 1e6, r }'
}
cat "$CAP" >/dev/null
say "live: $CAP ($frames frames)"
timed report "$BLEANALYZE" "$CAP" --json
timed stdin bash -c "cat '$CAP' | '$BLEANALYZE' live - --jsonl"
timed follow "$BLEANALYZE" live --follow "$CAP" --duration 0.01 --jsonl

PY=${PYTHON:-python3}
port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CPORT=$(port)
"$PY" scripts/bench/proxy_load.py controller "$CPORT" > "$DIR/proxy-controller.log" 2>&1 &
CPID=$!
trap 'kill $CPID 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q READY "$DIR/proxy-controller.log" && break; sleep 0.05; done
direct=$("$PY" scripts/bench/proxy_load.py host "$CPORT" --packets 200000 --pings 2000)
say "direct: $direct"
PPORT=$(port)
"$BLEANALYZE" live --proxy "tcp:127.0.0.1:$PPORT" --to "tcp:127.0.0.1:$CPORT" --jsonl > "$DIR/proxy-live.jsonl" 2>"$DIR/proxy-live.err" &
LPID=$!
for _ in $(seq 200); do grep -q '"started"' "$DIR/proxy-live.jsonl" 2>/dev/null && break; sleep 0.05; done
proxied=$("$PY" scripts/bench/proxy_load.py host "$PPORT" --packets 200000 --pings 2000)
say "through live --proxy: $proxied"
wait "$LPID" || true
"$PY" - "$direct" "$proxied" <<'PYEOF'
import json, sys
d, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"proxy    round trip median {p['rttMedianMicros']:.0f} us (direct {d['rttMedianMicros']:.0f} us): added {p['rttMedianMicros'] - d['rttMedianMicros']:.0f} us per round trip (two passes)")
print(f"proxy    round trip p99    {p['rttP99Micros']:.0f} us (direct {d['rttP99Micros']:.0f} us): added {p['rttP99Micros'] - d['rttP99Micros']:.0f} us")
print(f"proxy    {p['packetsPerSecond']} packets/s through the proxy (direct {d['packetsPerSecond']}), {p['packets']} ACL packets of 27 bytes")
PYEOF
