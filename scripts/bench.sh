#!/usr/bin/env bash
# make bench — bleanalyze against btmon and tshark on one large synthetic btsnoop capture.
#
# Generates (once, cached in .bench/) a deterministic, protocol-valid BLE capture of BENCH_FRAMES
# frames with scripts/bench/gen_btsnoop.c, checks a small one against tshark and bleanalyze, then
# times on the same file, one after the other:
#   bleanalyze packets FILE  > /dev/null   vs  btmon -r FILE > /dev/null  and  tshark -r FILE > /dev/null
#   bleanalyze FILE --json   > /dev/null   vs  btmon -a FILE > /dev/null
# with /usr/bin/time -v (wall, CPU, peak RSS) and a time limit per peer, and prints the table, the
# ratios and PASS/MISS against the performance targets (never fails on a MISS).
#
# Settings (environment or make variables):
#   BENCH_FRAMES=10000000   frames in the big capture (40000000 for the linearity check)
#   BENCH_REPEAT2=3         runs of each command on the second shape (the fastest is kept)
#   BENCH_FRAMES2=1000000   frames in the second shape (gen_btsnoop --shape writes: short connections,
#                           discovery- and write-heavy, Write/Read Requests with responses); 0 skips it
#   BENCH_SEED=1            generator seed
#   BENCH_TIMEOUT=300       seconds each command may run before it is stopped ("did not finish")
#   BENCH_PEERS="btmon-r tshark btmon-a"   peers to run (empty: bleanalyze only); tshark is skipped
#                           when it would need more than half of MemAvailable (~330 B/frame) unless
#                           BENCH_FORCE_TSHARK=1
#   BENCH_DIR=.bench        cache and results (gitignored)
#   BLEANALYZE=path         use this binary instead of building with `swift build -c release`
#   BENCH_SCRATCH=dir       build with --scratch-path dir (e.g. .build-bench)
#   BENCH_SMALL_FILES=1000  captures of BENCH_SMALL_FRAMES=300 frames for the check --jsonl files/s step
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
FRAMES=${BENCH_FRAMES:-10000000}
SEED=${BENCH_SEED:-1}
TIMEOUT=${BENCH_TIMEOUT:-300}
PEERS=${BENCH_PEERS-btmon-r tshark btmon-a}
DIR=${BENCH_DIR:-.bench}
SWIFT=${SWIFT:-swift}
mkdir -p "$DIR"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 2; }

# ---- tools ---------------------------------------------------------------------------------------
need_apt() {   # need_apt COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    if [ "$1" = /usr/bin/time ] && [ -x /usr/bin/time ]; then return 0; fi
    command -v apt-get >/dev/null 2>&1 || die "$1 is missing (install $2)"
    say "installing $2"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$2" >/dev/null
}
need_apt /usr/bin/time time
need_apt timeout coreutils
need_apt python3 python3
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { need_apt gcc gcc; CC=gcc; }
for p in $PEERS; do
    case $p in
        btmon-r|btmon-a) need_apt btmon bluez ;;
        tshark) need_apt tshark tshark ;;
        *) die "unknown peer '$p' (btmon-r, tshark, btmon-a)" ;;
    esac
done

# ---- bleanalyze ----------------------------------------------------------------------------------
if [ -z "${BLEANALYZE:-}" ]; then
    SCRATCH_ARGS=()
    [ -n "${BENCH_SCRATCH:-}" ] && SCRATCH_ARGS=(--scratch-path "$BENCH_SCRATCH")
    say "swift build -c release ${SCRATCH_ARGS[*]}"
    "$SWIFT" build -c release "${SCRATCH_ARGS[@]}" >&2
    BLEANALYZE="$("$SWIFT" build -c release "${SCRATCH_ARGS[@]}" --show-bin-path)/bleanalyze"
fi
[ -x "$BLEANALYZE" ] || die "no bleanalyze binary at $BLEANALYZE"

# ---- generator -----------------------------------------------------------------------------------
GEN_SRC=scripts/bench/gen_btsnoop.c
GEN_HASH=$(sha256sum "$GEN_SRC" | cut -c1-10)
GEN="$DIR/gen_btsnoop-$GEN_HASH"
if [ ! -x "$GEN" ]; then
    say "compiling $GEN_SRC"
    "$CC" -O2 -Wall -o "$GEN.tmp" "$GEN_SRC" && mv "$GEN.tmp" "$GEN"
fi
# captures made by another version of the generator are stale: remove them (they are large)
for f in "$DIR"/bench-*.btsnoop "$DIR"/small-*.btsnoop; do
    [ -e "$f" ] || continue
    case $f in *"-$GEN_HASH-"*) ;; *) say "removing stale $f"; rm -f "$f" "$f.log" ;; esac
done
for f in "$DIR"/gen_btsnoop-*; do [ "$f" = "$GEN" ] || rm -f "$f"; done
generate() {   # generate FRAMES FILE [generator flags]: cached by generator hash, frames, seed, flags (in the name)
    local n=$1 out=$2; shift 2
    [ -s "$out" ] && [ -s "$out.log" ] && return 0
    "$GEN" --frames "$n" --seed "$SEED" "$@" -o "$out.tmp" 2>"$out.log" || { cat "$out.log" >&2; die "generator failed"; }
    mv "$out.tmp" "$out"
    cat "$out.log" >&2
}
json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1]))' "$1"; }
frames_in() { sed -n 's/^gen_btsnoop: \([0-9]*\) frames.*/\1/p' "$1.log"; }

# ---- 1. the generator's output is valid: tshark and bleanalyze on a 10k-frame file ----------------
SMALL="$DIR/small-$GEN_HASH-s$SEED.btsnoop"            # with Read By Type
SMALL_NORBT="$DIR/small-$GEN_HASH-s$SEED-norbt.btsnoop" # without (what btmon survives)
generate 10000 "$SMALL"
generate 10000 "$SMALL_NORBT" --no-read-by-type
for f in "$SMALL" "$SMALL_NORBT"; do
    want=$(frames_in "$f")
    info=$("$BLEANALYZE" info "$f" --json) || die "bleanalyze info failed on $f"
    got=$(json_field frames <<<"$info"); bad=$(json_field malformed <<<"$info")
    [ "$got" = "$want" ] && [ "$bad" = 0 ] || die "$f: bleanalyze info says frames=$got malformed=$bad, generator wrote $want frames"
    if command -v tshark >/dev/null 2>&1; then
        tf=$(tshark -r "$f" -T fields -e frame.number 2>/dev/null | wc -l)
        tm=$(tshark -r "$f" -Y _ws.malformed -T fields -e frame.number 2>/dev/null | wc -l)
        [ "$tf" = "$want" ] && [ "$tm" = 0 ] || die "$f: tshark reads $tf frames, $tm malformed (want $want, 0)"
        say "verified $(basename "$f"): $want frames; bleanalyze and tshark: 0 malformed"
    else
        say "verified $(basename "$f"): $want frames; bleanalyze: 0 malformed (no tshark here)"
    fi
done

# ---- 2. the btmon crash on ATT Read By Type requests (recorded as a fact) ------------------------
BTMON_FACT="btmon not run"
if command -v btmon >/dev/null 2>&1; then
    ver=$(btmon --version 2>/dev/null | head -1 || true)
    # in a child shell, so that its "Segmentation fault" message does not clutter the output
    rc=$(bash -c 'btmon -r "$1" >/dev/null 2>&1; echo $?' _ "$SMALL" 2>/dev/null)
    rc2=$(bash -c 'btmon -r "$1" >/dev/null 2>&1; echo $?' _ "$SMALL_NORBT" 2>/dev/null)
    sig=""; [ $rc -gt 128 ] && sig=" = signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null || echo ?))"
    BTMON_FACT="btmon $ver -r on the 10k-frame capture WITH ATT Read By Type requests: exit $rc$sig; without them: exit $rc2"
    say "$BTMON_FACT"
fi

# ---- 3. the big capture ----------------------------------------------------------------------------
BIG="$DIR/bench-$FRAMES-$GEN_HASH-s$SEED-norbt.btsnoop"
if [ ! -s "$BIG" ]; then
    say "generating $BIG ($FRAMES frames, no Read By Type so that btmon survives)"
    generate "$FRAMES" "$BIG" --no-read-by-type
fi
NFRAMES=$(frames_in "$BIG")
BYTES=$(stat -c %s "$BIG")
say "capture: $BIG, $NFRAMES frames, $BYTES bytes"
cat "$BIG" >/dev/null   # warm page cache: every command reads the file from memory

# ---- 4. runs -----------------------------------------------------------------------------------------
RESULTS="$DIR/results-$FRAMES.tsv"
printf 'name\tcommand\twall\tuser\tsys\trss_kb\tstatus\ttimeout\n' >"$RESULTS"
run() {   # run NAME CMD...   (stdout to /dev/null, time limit TIMEOUT)
    local name=$1; shift
    local tv="$DIR/time-$name.txt"
    say "$name: $* > /dev/null  (limit ${TIMEOUT}s)"
    local t0 t1 rc wall user sys rss
    set +e
    t0=$EPOCHREALTIME
    /usr/bin/time -v -o "$tv" timeout -k 10 "$TIMEOUT" "$@" >/dev/null 2>"$DIR/stderr-$name.txt"
    rc=$?
    t1=$EPOCHREALTIME
    set -e
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    user=$(sed -n 's/.*User time (seconds): //p' "$tv"); sys=$(sed -n 's/.*System time (seconds): //p' "$tv")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tv")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$*" "$wall" "$user" "$sys" "$rss" "$rc" "$TIMEOUT" >>"$RESULTS"
    say "   wall ${wall}s user ${user}s sys ${sys}s maxrss ${rss} kB exit $rc"
}
run "bleanalyze-info" "$BLEANALYZE" info "$BIG" --json
run "bleanalyze-packets" "$BLEANALYZE" packets "$BIG"
run "bleanalyze-json" "$BLEANALYZE" "$BIG" --json
for p in $PEERS; do
    case $p in
        btmon-r) run btmon-r btmon -r "$BIG" ;;
        tshark)
            # tshark keeps every frame's state: ~330 bytes of RSS per frame (3.3 GB at 10M, 12.6 GB at 40M).
            # Skip it when that would take more than half of the available memory.
            avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
            need_kb=$((NFRAMES * 340 / 1024))
            if [ "${avail_kb:-0}" -gt 0 ] && [ $((need_kb * 2)) -gt "$avail_kb" ] && [ -z "${BENCH_FORCE_TSHARK:-}" ]; then
                say "tshark: skipped, it would need ~$((need_kb / 1048576)) GB of the $((avail_kb / 1048576)) GB available (BENCH_FORCE_TSHARK=1 runs it)"
                printf '%s\t%s\t\t\t\t\t%s\t%s\n' tshark "skipped: would need ~$((need_kb / 1048576)) GB RSS, $((avail_kb / 1048576)) GB available" -2 "$TIMEOUT" >>"$RESULTS"
            else
                run tshark tshark -r "$BIG"
            fi ;;
        btmon-a) run btmon-a btmon -a "$BIG" ;;
    esac
done

# ---- 4b. the second shape: full analysis vs btmon -r on a write- and discovery-heavy capture -------
FRAMES2=${BENCH_FRAMES2:-1000000}
SHAPE2_ARGS=()
if [ "$FRAMES2" -gt 0 ]; then
    BIG2="$DIR/bench-$FRAMES2-$GEN_HASH-s$SEED-norbt-writes.btsnoop"
    generate "$FRAMES2" "$BIG2" --no-read-by-type --shape writes
    NFRAMES2=$(frames_in "$BIG2")
    info=$("$BLEANALYZE" info "$BIG2" --json) || die "bleanalyze info failed on $BIG2"
    [ "$(json_field malformed <<<"$info")" = 0 ] || die "$BIG2: bleanalyze finds malformed frames"
    cat "$BIG2" >/dev/null
    RESULTS_MAIN=$RESULTS
    # Runs of a second or less are at the mercy of the machine's load: each command runs REPEAT2
    # times, bleanalyze and btmon taking turns, and the fastest run of each is kept.
    REPEAT2=${BENCH_REPEAT2:-3}
    ALL2="$DIR/results-$FRAMES2-writes-all.tsv"
    RESULTS=$ALL2
    : >"$ALL2"
    for _ in $(seq "$REPEAT2"); do
        run "bleanalyze-json" "$BLEANALYZE" "$BIG2" --json
        case " $PEERS " in *" btmon-r "*) run btmon-r btmon -r "$BIG2" ;; esac
    done
    RESULTS="$DIR/results-$FRAMES2-writes.tsv"
    printf 'name\tcommand\twall\tuser\tsys\trss_kb\tstatus\ttimeout\n' >"$RESULTS"
    sort -t$'\t' -k1,1 -k3,3g "$ALL2" | awk -F'\t' '!seen[$1]++' >>"$RESULTS"
    SHAPE2_ARGS=(--shape2-results "$RESULTS" --shape2-frames "$NFRAMES2" --shape2-capture "$BIG2")
    RESULTS=$RESULTS_MAIN
fi

# ---- 5. report -------------------------------------------------------------------------------------
python3 scripts/bench/report.py --results "$RESULTS" --frames "$NFRAMES" --bytes "$BYTES" \
    --capture "$BIG" --btmon-fact "$BTMON_FACT" --dir "$DIR" "${SHAPE2_ARGS[@]}"

# ---- 6. many small captures: check --jsonl files/s (the fleet job's unit of work) ----------------
say "check --jsonl over ${BENCH_SMALL_FILES:-1000} small captures"
bash scripts/bench/small_files.sh "$BLEANALYZE" "$GEN" "$DIR"

# ---- 7. live: stdin and --follow frames/s, the proxy's packets/s and added latency -----------------
say "live: stdin, --follow and --proxy"
bash scripts/bench/live.sh "$BLEANALYZE" "$BIG" "$DIR"
