#!/usr/bin/env bash
# Where bleanalyze spends its time: samples `bleanalyze FILE --json` and `bleanalyze packets FILE` on
# the bench capture (PROFILE_FRAMES, default 1,000,000 frames, no Read By Type) and prints the top
# functions by self and by inclusive time, demangled.
#
# Uses `perf record -e cpu-clock -g` (software clock: works in VMs where hardware counters are not
# exposed; call graphs from frame pointers). Without perf, falls back to valgrind --tool=callgrind
# (about 50x slower: keep PROFILE_FRAMES small).
#
#   scripts/bench/profile.sh                     # builds release, profiles both commands
#   BLEANALYZE=path PROFILE_FRAMES=200000 scripts/bench/profile.sh
# Output: .bench/profile-*.txt (top lists) and the raw perf.data / callgrind.out files.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
FRAMES=${PROFILE_FRAMES:-1000000}
DIR=${BENCH_DIR:-.bench}
TOP=${PROFILE_TOP:-25}
SWIFT=${SWIFT:-swift}
mkdir -p "$DIR"

if [ -z "${BLEANALYZE:-}" ]; then
    SCRATCH_ARGS=()
    [ -n "${BENCH_SCRATCH:-}" ] && SCRATCH_ARGS=(--scratch-path "$BENCH_SCRATCH")
    "$SWIFT" build -c release "${SCRATCH_ARGS[@]}" >&2
    BLEANALYZE="$("$SWIFT" build -c release "${SCRATCH_ARGS[@]}" --show-bin-path)/bleanalyze"
fi
DEMANGLE=$(command -v swift-demangle || echo "$(dirname "$(command -v "$SWIFT")")/swift-demangle")
demangle() { if [ -x "$DEMANGLE" ]; then "$DEMANGLE" --simplified; else cat; fi; }

GEN_SRC=scripts/bench/gen_btsnoop.c
GEN_HASH=$(sha256sum "$GEN_SRC" | cut -c1-10)
GEN="$DIR/gen_btsnoop-$GEN_HASH"
[ -x "$GEN" ] || ${CC:-cc} -O2 -Wall -o "$GEN" "$GEN_SRC"
CAP="$DIR/bench-$FRAMES-$GEN_HASH-s1-norbt.btsnoop"
if [ ! -s "$CAP" ] || [ ! -s "$CAP.log" ]; then   # same cache as scripts/bench.sh
    "$GEN" --frames "$FRAMES" --no-read-by-type -o "$CAP.tmp" 2>"$CAP.log"
    mv "$CAP.tmp" "$CAP"
    cat "$CAP.log" >&2
fi

profile() {   # profile NAME ARGS...
    local name=$1; shift
    set +o pipefail   # `head` closes the pipes early
    local out="$DIR/profile-$name.txt"
    if command -v perf >/dev/null 2>&1 && perf record -q -e cpu-clock -o /dev/null true 2>/dev/null; then
        local data="$DIR/perf-$name.data"
        perf record -q -e cpu-clock -F 2999 -g -o "$data" "$BLEANALYZE" "$@" >/dev/null 2>/dev/null
        {
            echo "# $name: bleanalyze $* ($FRAMES frames), perf cpu-clock"
            echo "## self time (top $TOP)"
            perf report -i "$data" --no-children --stdio -g none -F overhead,sym --percent-limit 0.3 2>/dev/null \
                | grep -v '^#' | grep -v '^$' | sed 's/ *$//' | head -"$TOP"
            echo "## inclusive time (top $((TOP * 2)))"
            perf report -i "$data" --children --stdio -g none --sort symbol --percent-limit 1 2>/dev/null \
                | grep -v '^#' | grep -v '^$' | sed 's/ *$//' | head -$((TOP * 2))
        } | demangle >"$out"
    else
        local data="$DIR/callgrind-$name.out"
        # Valgrind 3.19 gives up on the DWARF 5 of a Swift 6.3 release binary ("unhandled dwarf2
        # abbrev form code 0x25"): profile a copy without debug info (the symbol table stays).
        local bin="$DIR/bleanalyze-nodebug"
        objcopy --strip-debug "$BLEANALYZE" "$bin"
        valgrind --tool=callgrind --callgrind-out-file="$data" "$bin" "$@" >/dev/null 2>/dev/null
        {
            echo "# $name: bleanalyze $* ($FRAMES frames), callgrind (Ir)"
            echo "## inclusive"
            callgrind_annotate --inclusive=yes "$data" 2>/dev/null | head -$((TOP + 25))
            echo "## self"
            callgrind_annotate "$data" 2>/dev/null | head -$((TOP + 25))
        } | demangle >"$out"
    fi
    set -o pipefail
    echo "== $out" >&2
    cat "$out"
}
profile json "$CAP" --json
profile packets packets "$CAP"
