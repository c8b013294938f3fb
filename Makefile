# bleanalyze — the two commands: `make run` (analyze a bundled capture) and `make test`.
# Both install what is missing on a fresh Debian machine (apt packages, the Python venv with
# Bumble, the Swift build). On macOS the apt step is skipped (libpcap and zlib ship with Xcode).

SWIFT        ?= swift
PYTHON       ?= python3
VENV         := .venv
BUMBLE       := bumble==0.0.236
# RootCanal 1.11+ needs glibc 2.38; 1.10.0 runs on Debian 12 (see ../shared/NOTES.md).
ROOTCANAL    := rootcanal==1.10.0
# openjdk-17-jre-headless: Apache Spark 4 for the fleet job (scripts/fleet, docs/FLEET.md). ieee-data: the
# IEEE registry the OUI tests check the committed vendor table against (skipped without it).
APT_PACKAGES := libpcap-dev libbluetooth-dev libssl-dev zlib1g-dev libarchive-dev pkg-config tshark bluez python3-venv chromium strace ieee-data \
                openjdk-17-jre-headless
# The fleet job's Python side (~690 MB in the venv, about a minute to install).
FLEET_PIP    := pyspark==4.3.0 pyarrow
FLEET_INPUT  ?= captures
FLEET_OUTPUT ?= .fleet-out
FLEET_MASTER ?= local[2]
RUN_CAPTURE  ?= captures/healthy.btsnoop
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test build release static install uninstall install-check deps venv venv-fleet fleet fleet-test captures assigned-numbers oui clean bench reports fuzz

run: deps release
	.build/release/bleanalyze $(RUN_CAPTURE)

# A short libFuzzer run over every harness first (60 s in all, fixed seed; skips with a notice where
# the sanitizer build is impossible; `make fuzz` runs them for FUZZ_SECONDS each), then every test,
# so the test runner's summary is the last thing printed (with CI=true, scripts/check_ci_skips.py then fails
# the run, silently otherwise, when a suite listed in Tests/ci-must-run.txt was skipped).
# The static release binary (`make static`, Swift runtime linked in) is built first: the fleet test (a
# Spark standalone master and two workers; CLITests/FleetSparkTests) ships it to the executors as a
# real job does, and InstallTests installs it into a temporary prefix and runs it without Swift.
test: deps venv venv-fleet static
	FUZZ_SEED=1 bash scripts/fuzz.sh --short
	$(SWIFT) build
	BLEANALYZE_VENV=$(CURDIR)/$(VENV) BLEANALYZE_FLEET_BIN=$(CURDIR)/$(STATIC_BIN) $(SWIFT) test --xunit-output .build/test-results.xml
	@$(PYTHON) scripts/check_ci_skips.py .build/test-results-swift-testing.xml Tests/ci-must-run.txt

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Install like a tool: a release binary with the Swift runtime (stdlib, Foundation) linked in, so it
# runs on a machine without Swift (installed stripped: 63 MB instead of 88); libpcap, libarchive,
# zlib, libbluetooth and libcrypto stay shared (Debian: libpcap0.8 libarchive13 zlib1g libbluetooth3 libssl3). Built in
# its own directory so it never trades places with `make release`. `make static && sudo make install` builds as you and copies as root;
# `make install PREFIX=$$HOME/.local` needs no root. DESTDIR stages a package.
PREFIX       ?= /usr/local
BINDIR        = $(DESTDIR)$(PREFIX)/bin
STATIC_BUILD := .build-static
STATIC_BIN   := $(STATIC_BUILD)/release/bleanalyze
static: $(STATIC_BIN)
$(STATIC_BIN): Package.swift $(shell find Sources -type f 2>/dev/null)
	@$(MAKE) --no-print-directory deps
	$(SWIFT) build -c release --static-swift-stdlib --scratch-path $(STATIC_BUILD) --product bleanalyze
	@touch $@

install: $(STATIC_BIN)
	install -d $(BINDIR)
	install -s -m 755 $(STATIC_BIN) $(BINDIR)/bleanalyze

uninstall:
	rm -f $(BINDIR)/bleanalyze

# Installs into a temporary prefix and runs the installed binary with Swift out of reach
# (scripts/install-check.sh: empty environment, no /opt/swift on PATH or LD_LIBRARY_PATH, ldd shows
# no Swift library). The release build takes minutes the first time.
install-check: $(STATIC_BIN)
	bash scripts/install-check.sh

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

# PySpark and pyarrow for the fleet job, installed once into the same venv.
venv-fleet: $(VENV)/.fleet-installed
$(VENV)/.fleet-installed: $(VENV)/.installed
	$(VENV)/bin/pip install -q $(FLEET_PIP)
	touch $@

# Fleets of field logs on Apache Spark (docs/FLEET.md): `make fleet FLEET_INPUT=DIR FLEET_OUTPUT=DIR
# FLEET_MASTER=spark://HOST:7077` analyses every capture under DIR and writes Parquet. The job ships
# the static binary of `make static` to the executors (they need no Swift).
fleet: deps venv-fleet $(STATIC_BIN)
	$(VENV)/bin/python scripts/fleet/spark_fleet.py $(FLEET_INPUT) $(FLEET_OUTPUT) --master '$(FLEET_MASTER)' --binary $(STATIC_BIN)

# The fleet test with the binary the job ships: a standalone master and two workers on 127.0.0.1.
fleet-test: deps venv-fleet $(STATIC_BIN)
	$(VENV)/bin/python scripts/fleet/test_spark_fleet.py --binary $(STATIC_BIN)

# Regenerates captures/ with two Bumble devices over a virtual link (see captures/README.md).
captures: venv
	$(VENV)/bin/python scripts/make_captures.py --out captures/

# Regenerates the assigned-numbers tables (needs PyPI bluetooth-numbers; see the script).
assigned-numbers: venv
	$(VENV)/bin/pip install -q bluetooth-numbers==1.1.2
	$(VENV)/bin/python scripts/gen_assigned_numbers.py

# Regenerates the OUI vendor table (Sources/BLEProtocol/AssignedNumbers/OUITable.swift) from the IEEE
# registry in Debian's ieee-data package (`make deps` installs it for the OUI tests): the generated table
# is committed.
oui:
	@dpkg -s ieee-data >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq ieee-data >/dev/null; }
	$(PYTHON) scripts/gen_oui.py

clean:
	rm -rf .build $(STATIC_BUILD)

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
