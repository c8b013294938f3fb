#!/usr/bin/env bash
# Throughput of `bleanalyze check --jsonl` over a directory of many small captures (what a fleet job
# hands each executor): files/s, wall per file, and CPU/wall (the files are analysed on every core).
# Called by scripts/bench.sh; standalone: scripts/bench/small_files.sh BLEANALYZE GENERATOR DIR
#   BENCH_SMALL_FILES=1000   number of captures
#   BENCH_SMALL_FRAMES=300   frames in each (a short field log: one connection, discovery, a few values)
set -euo pipefail
BIN=$1 GEN=$2 DIR=$3
FILES=${BENCH_SMALL_FILES:-1000}
FRAMES=${BENCH_SMALL_FRAMES:-300}
SET="$DIR/small-files-$FILES-$FRAMES-$(basename "$GEN")"
if [ ! -s "$SET/.done" ]; then
    rm -rf "$SET"; mkdir -p "$SET"
    for i in $(seq 1 "$FILES"); do "$GEN" --frames "$FRAMES" --seed "$i" -o "$SET/c$i.btsnoop" 2>/dev/null; done
    echo "$FILES" >"$SET/.done"
fi
cat "$SET"/*.btsnoop >/dev/null   # page cache warm
TV="$DIR/time-check-jsonl.txt"
t0=$EPOCHREALTIME
/usr/bin/time -v -o "$TV" "$BIN" check --jsonl "$SET" >"$DIR/check-jsonl.out" 2>/dev/null || true
t1=$EPOCHREALTIME
lines=$(wc -l <"$DIR/check-jsonl.out")
user=$(sed -n 's/.*User time (seconds): //p' "$TV"); sys=$(sed -n 's/.*System time (seconds): //p' "$TV")
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TV")
awk -v a="$t0" -v b="$t1" -v n="$lines" -v files="$FILES" -v u="$user" -v s="$sys" -v rss="$rss" -v cores="$(nproc)" -v frames="$FRAMES" 'BEGIN {
    wall = b - a
    printf "check --jsonl over %d captures of %d frames: %d lines, wall %.2f s = %.0f files/s, %.2f ms wall per file, CPU %.2f s = %.2f x wall (%d cores), peak RSS %d MB\n",
        files, frames, n, wall, n / wall, 1000 * wall / n, u + s, (u + s) / wall, cores, rss / 1024
}'
[ "$lines" = "$FILES" ] || { echo "small_files: $lines lines for $FILES files" >&2; exit 1; }
