#!/usr/bin/env bash
# Fuzzes bleanalyze's entry points with libFuzzer (see ../shared/NOTES.md, "Fuzzing Swift code with
# libFuzzer under SwiftPM"): capture readers, HCI decoder, L2CAP reassembly + ATT/SMP/AD decoders,
# and the whole analysis + redaction pipeline.
#
#   scripts/fuzz.sh                 every harness for FUZZ_SECONDS (default 600) each   (make fuzz)
#   scripts/fuzz.sh --short         every harness for FUZZ_SHORT_SECONDS/4 (default 60 s in all; make test)
#   scripts/fuzz.sh hci l2cap       only these harnesses
#   FUZZ_SEED=1 …                   fixed libFuzzer seed (make test uses one, so CI runs repeat)
#
# The sanitizer build lives in its own scratch path (.build-fuzz) so it never invalidates the normal
# build. When this machine cannot build with -sanitize=fuzzer (no libFuzzer runtime, not Linux), the
# script prints a notice and exits 0. A crash or broken invariant exits 1; the input is kept in
# .build-fuzz/artifacts/HARNESS/ — after the fix, copy it to Tests/Fixtures/fuzz-regressions/HARNESS/
# (replayed by `swift test` through the same harness functions: FuzzRegressionTests).
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SCRATCH=.build-fuzz
HARNESSES_ALL=(capture hci l2cap pipeline)
SECONDS_EACH=${FUZZ_SECONDS:-600}
SHORT=0
HARNESSES=()
for arg in "$@"; do
  case "$arg" in
    --short) SHORT=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) HARNESSES+=("$arg") ;;
  esac
done
[ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=("${HARNESSES_ALL[@]}")
for h in "${HARNESSES[@]}"; do
  case " ${HARNESSES_ALL[*]} " in *" $h "*) ;; *) echo "fuzz: unknown harness $h (${HARNESSES_ALL[*]})" >&2; exit 2 ;; esac
done
if [ "$SHORT" = 1 ]; then
  SECONDS_EACH=$(( ${FUZZ_SHORT_SECONDS:-60} / ${#HARNESSES[@]} ))
  [ "$SECONDS_EACH" -lt 1 ] && SECONDS_EACH=1
fi

notice() { echo "fuzz: notice: $*" >&2; }

# 1. Can this toolchain build a libFuzzer binary at all? (Probe with a two-line program.)
if [ "$(uname -s)" != Linux ]; then
  notice "libFuzzer builds are set up for Linux only (uname: $(uname -s)); skipping the fuzz run"; exit 0
fi
SWIFTC=${SWIFTC:-$(dirname "$(command -v "$SWIFT" 2>/dev/null || echo swift)")/swiftc}
if ! command -v "$SWIFTC" >/dev/null 2>&1; then
  notice "no swiftc next to $SWIFT; skipping the fuzz run"; exit 0
fi
PROBE_DIR=$(mktemp -d)
trap 'rm -rf "$PROBE_DIR"' EXIT
cat > "$PROBE_DIR/probe.swift" <<'SWIFT'
@_cdecl("LLVMFuzzerTestOneInput") public func probe(_ d: UnsafePointer<UInt8>?, _ n: Int) -> Int32 { 0 }
SWIFT
if ! (cd "$PROBE_DIR" && "$SWIFTC" -parse-as-library -sanitize=fuzzer,address -Xclang-linker -fuse-ld=lld probe.swift -o probe >probe.log 2>&1); then
  notice "this toolchain cannot build with -sanitize=fuzzer,address (see below); skipping the fuzz run"
  sed -n '1,5p' "$PROBE_DIR/probe.log" >&2
  exit 0
fi

# 2. The fuzz build: every module instrumented, the libFuzzer driver compiled in (FUZZ_DRIVER), dynamic
#    exclusivity checks on (EXCLUSIVITY_CHECKED keeps them on the L2CAP reassembler, whose re-entry would
#    be undefined behaviour in a release build; see SessionModel.reassembler).
echo "fuzz: building the Fuzz product with -sanitize=fuzzer,address in $SCRATCH (first build takes minutes)"
mkdir -p "$SCRATCH"
BUILD_LOG=$SCRATCH/build.log
if ! $SWIFT build -c release --product Fuzz --scratch-path "$SCRATCH" \
      -Xswiftc -sanitize=fuzzer,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld -Xswiftc -DFUZZ_DRIVER -Xswiftc -enforce-exclusivity=checked -Xswiftc -DEXCLUSIVITY_CHECKED \
      > "$BUILD_LOG" 2>&1; then
  tail -40 "$BUILD_LOG" >&2
  echo "fuzz: the sanitizer build of the Fuzz product failed (full log: $BUILD_LOG)" >&2
  exit 1
fi
FUZZ=$($SWIFT build -c release --product Fuzz --scratch-path "$SCRATCH" --show-bin-path \
      -Xswiftc -sanitize=fuzzer,address -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld -Xswiftc -DFUZZ_DRIVER -Xswiftc -enforce-exclusivity=checked -Xswiftc -DEXCLUSIVITY_CHECKED)/Fuzz

# 3. Seeds: every capture (ours and ../shared/captures/real when present) in each harness's
#    encoding, hex vectors from the protocol tests, and the regression vectors.
CAPTURES=()
for f in captures/*.btsnoop captures/*.pcap captures/*.pcapng captures/*.pklg captures/*.gz ../shared/captures/real/*; do
  [ -f "$f" ] && [ "${f%.md}" = "$f" ] && CAPTURES+=("$f")
done
HEX=$SCRATCH/seeds/hex-vectors.txt
mkdir -p "$SCRATCH/seeds"
grep -ohE '"([0-9a-fA-F]{2}[ :]?){2,}"' Tests/BLEProtocolTests/*.swift Tests/BLEProtocolTests/*/*.swift 2>/dev/null \
  | tr -d '"' | sort -u > "$HEX" || true

declare -A MAXLEN=([capture]=32768 [hci]=1100 [l2cap]=4096 [pipeline]=4096)
REPORT=$SCRATCH/fuzz-report.txt
: > "$REPORT"
FAILED=()
for h in "${HARNESSES[@]}"; do
  SEEDS=$SCRATCH/seeds/$h
  CORPUS=$SCRATCH/corpus/$h
  ARTIFACTS=$SCRATCH/artifacts/$h
  REGRESSIONS=Tests/Fixtures/fuzz-regressions/$h
  rm -rf "$SEEDS"; mkdir -p "$SEEDS" "$CORPUS" "$ARTIFACTS" "$REGRESSIONS"
  ASAN_OPTIONS=detect_leaks=0 "$FUZZ" seed "$h" "$SEEDS" "${CAPTURES[@]}" >/dev/null
  ASAN_OPTIONS=detect_leaks=0 "$FUZZ" seed-hex "$h" "$SEEDS" "$HEX" >/dev/null
  if [ "$h" = capture ] && command -v python3 >/dev/null 2>&1; then
    # A field-log container (Android bugreport zip, stored so mutations reach the member).
    python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED)
z.write(sys.argv[2], "FS/data/misc/bluetooth/logs/btsnoop_hci.log")
z.close()' "$SEEDS/bugreport.zip" captures/healthy.btsnoop 2>/dev/null || true
  fi
  LOG=$SCRATCH/fuzz-$h.log
  echo "fuzz: $h for ${SECONDS_EACH}s (corpus $CORPUS, log $LOG)"
  started=$(date +%s)
  # detect_leaks=0: the analysis keeps per-capture state in class graphs; a leak is not a crash.
  # -timeout: an input that takes seconds means non-linear time; -malloc_limit_mb: one allocation
  # bigger than any input can justify (a believed 0xFFFFFFFF length) is a bug.
  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=0 "$FUZZ" "$h" \
      -max_total_time="$SECONDS_EACH" -max_len="${MAXLEN[$h]}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" ${FUZZ_SEED:+-seed=$FUZZ_SEED} \
      "$CORPUS" "$SEEDS" "$REGRESSIONS" > "$LOG" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - started ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$LOG" | tail -1)
  status=ok
  if [ $rc -ne 0 ]; then
    status="FAILED (exit $rc)"
    FAILED+=("$h")
    grep -E 'ERROR:|invariant broken|SUMMARY|Test unit written|Fatal error' "$LOG" | head -20 >&2
  fi
  line="$h: ${execs:-?} executions in ${elapsed}s, ${cov:-cov: ?}, $status"
  echo "fuzz: $line"
  echo "$line" >> "$REPORT"
done

echo "fuzz: summary (also in $REPORT)"
cat "$REPORT"
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "fuzz: crashes in: ${FAILED[*]}. Inputs are in $SCRATCH/artifacts/HARNESS/; reproduce with" >&2
  echo "      .build/debug/Fuzz HARNESS FILE  (or $FUZZ HARNESS FILE), fix, then add the file to Tests/Fixtures/fuzz-regressions/HARNESS/" >&2
  exit 1
fi
