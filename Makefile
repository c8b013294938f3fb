# bleanalyze — the two commands: `make run` (analyze a bundled capture) and `make test`.
# Both install what is missing on a fresh Debian machine (apt packages, the Python venv with
# Bumble, the Swift build). On macOS the apt step is skipped (libpcap and zlib ship with Xcode).

SWIFT        ?= swift
PYTHON       ?= python3
VENV         := .venv
BUMBLE       := bumble==0.0.236
# RootCanal 1.11+ needs glibc 2.38; 1.10.0 runs on Debian 12 (see ../shared/NOTES.md).
ROOTCANAL    := rootcanal==1.10.0
APT_PACKAGES := libpcap-dev libbluetooth-dev zlib1g-dev libarchive-dev libssl-dev pkg-config tshark bluez python3-venv chromium
RUN_CAPTURE  ?= captures/healthy.btsnoop
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test build release deps venv captures assigned-numbers clean bench reports fuzz

run: deps release
	.build/release/bleanalyze $(RUN_CAPTURE)

# A short libFuzzer run over every harness first (60 s in all, fixed seed; skips with a notice where
# the sanitizer build is impossible; `make fuzz` runs them for FUZZ_SECONDS each), then every test,
# so the test runner's summary is the last thing printed.
test: deps venv
	FUZZ_SEED=1 bash scripts/fuzz.sh --short
	$(SWIFT) build
	BLEANALYZE_VENV=$(CURDIR)/$(VENV) $(SWIFT) test

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# System packages: installed only when missing (dpkg -s), so repeated runs are quick.
deps:
	@if command -v apt-get >/dev/null 2>&1; then \
	  missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "Installing:$$missing"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	  fi; \
	else echo "apt-get not found: install libpcap (and tshark for the cross-checks) yourself"; fi

# The Python venv with Bumble: the real virtual controller and capture source used by tests.
venv: $(VENV)/.installed
$(VENV)/.installed: Makefile
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q $(BUMBLE) $(ROOTCANAL) jsonschema
	touch $@

# Regenerates captures/ with two Bumble devices over a virtual link (see captures/README.md).
captures: venv
	$(VENV)/bin/python scripts/make_captures.py --out captures/

# Regenerates the assigned-numbers tables (needs PyPI bluetooth-numbers; see the script).
assigned-numbers: venv
	$(VENV)/bin/pip install -q bluetooth-numbers==1.1.2
	$(VENV)/bin/python scripts/gen_assigned_numbers.py

clean:
	rm -rf .build

# Performance: bleanalyze vs btmon -r / btmon -a / tshark on one generated capture of BENCH_FRAMES
# frames (default 10,000,000, cached in .bench/); prints wall time, frames/s, MB/s, peak RSS, ratios
# and PASS/MISS per target. `make bench BENCH_FRAMES=40000000` for the linearity check. Settings:
# scripts/bench.sh.
bench: deps
	bash scripts/bench.sh

# The report for every capture in captures/: Reports/<capture>.html (self-contained page) and
# Reports/<capture>.txt (terminal text), plus screenshots of the problem reports taken with headless
# Chromium in Reports/screenshots/. Committed; a test fails when they are stale. See docs/REPORT.md.
reports: build
	bash scripts/reports/render.sh

# libFuzzer on every entry point that reads hostile bytes (capture readers, HCI decoder, L2CAP
# reassembly + ATT/SMP/AD decoders, the whole analysis + redaction): FUZZ_SECONDS per harness
# (default 600), sanitizer build in .build-fuzz, crashes kept in .build-fuzz/artifacts/. Skips with a
# notice where -sanitize=fuzzer cannot build. See scripts/fuzz.sh and ../shared/NOTES.md.
FUZZ_SECONDS ?= 600
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh
