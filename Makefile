# aqmlab: `make demo` runs the embedded default scenario; `make test` runs every check.
# Both create the virtualenv, install the pinned Python dependencies and build the Rust extension.

SHELL   := /bin/bash
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: demo test setup build lint rust-test py-test bench clean docs chromium netdeps tshark ns2 dist dist-check

$(STAMP): pyproject.toml constraints.txt Cargo.toml $(wildcard crates/*/Cargo.toml)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# The testbed's programs (crates/fwd): the forwarder and the traffic tool.
FWD_BINS := aqmlab-fwd aqmlab-traffic

# Rebuilds the extension (release) and the testbed's programs after Rust changes.
build: $(STAMP)
	$(BIN)/maturin develop --release --quiet --skip-install
	cargo build --release --quiet -p aqmlab-fwd $(addprefix --bin ,$(FWD_BINS))
	@# Byte-compile the package as pip does when it installs a wheel: where PYTHONDONTWRITEBYTECODE
	@# is set (it is on some CI images), every `aqmlab` start would otherwise recompile ~20 modules.
	$(BIN)/python -m compileall -q python/aqmlab

demo: build
	$(BIN)/aqmlab demo --out runs/demo

lint: $(STAMP)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
	$(BIN)/ruff check python tests benches scripts examples
	$(BIN)/ruff format --check python tests benches scripts examples

rust-test:
	cargo test --workspace --release --quiet

# The HTML-report test renders pages in Debian's chromium: installed here when running as root
# (as CI does); elsewhere that test is skipped with the reason.
chromium:
	@if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium (Debian) for the report rendering test"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# The testbed test (real TCP through aqmlab-fwd in namespaces) needs ip and ethtool: installed here
# when running as root (as CI does); elsewhere that test is skipped with the reason.
netdeps:
	@if { ! command -v ethtool >/dev/null 2>&1 || ! command -v ip >/dev/null 2>&1; } && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing iproute2 and ethtool (Debian) for the testbed test"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 ethtool >/dev/null; \
	fi

# The packet-trace tests read the simulator's pcap files with tshark and mergecap: installed here
# when running as root (as CI does); elsewhere those tests are skipped with the reason.
# ns-2.35 (Debian's ns2) runs the RED auto-configuration check against the ns binary
# (tests/test_ns2_defaults.py): installed here when running as root (as CI does); elsewhere those
# tests are skipped with the reason.
ns2:
	@if ! command -v ns >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing ns2 (Debian) for the ns-2 cross-check tests"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >/dev/null; \
	fi

tshark:
	@if { ! command -v tshark >/dev/null 2>&1 || ! command -v mergecap >/dev/null 2>&1; } && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing tshark (Debian) for the packet-trace tests"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; \
	fi

py-test: build chromium netdeps tshark ns2
	$(BIN)/pytest

test: lint rust-test py-test

# Every benchmark in benches/ (figures and how each is reproduced: docs/benchmarks.md), its output
# also in runs/bench/<name>.txt. `make bench QUICK=1`: the same programs with short settings (a
# check that they run, minutes instead of the full run's figures). fwd_bench, fwd_vs_sim and
# hold_latency need root (namespaces, raw sockets): skipped with the reason otherwise.
BENCH_LOG := runs/bench
ifdef QUICK
CRIT_ARGS := --warm-up-time 0.2 --measurement-time 0.5
OVERHEAD_ARGS := --repeat 1
SWEEP_ARGS := --runs 20 --jobs 2
MEMORY_ARGS := 1 10000
FWD_BENCH_ARGS := --quick
FWD_VS_SIM_ARGS := --duration 5s --warmup 1s --out $(BENCH_LOG)/fwd_vs_sim
HOLD_ARGS := --secs 8
else
CRIT_ARGS := --warm-up-time 1 --measurement-time 3
OVERHEAD_ARGS := --repeat 3
SWEEP_ARGS := --runs 1000 --jobs 2
MEMORY_ARGS := 1 10000 100000
FWD_BENCH_ARGS := --repeat 3 --secs 3
FWD_VS_SIM_ARGS := --out $(BENCH_LOG)/fwd_vs_sim
HOLD_ARGS := --secs 15
endif

bench: build
	cargo build --release --quiet -p aqmlab-fwd  # aqmlab-fwd-gen too, for fwd_bench.py
	mkdir -p $(BENCH_LOG)
	set -o pipefail; cargo bench -p aqmlab-aqm --bench aqm_decision -- $(CRIT_ARGS) 2>&1 | tee $(BENCH_LOG)/aqm_decision.txt
	set -o pipefail; cargo bench -p aqmlab-sim --bench sim_dumbbell 2>&1 | tee $(BENCH_LOG)/sim_dumbbell.txt
	set -o pipefail; cargo bench -p aqmlab-sim --bench sim_web 2>&1 | tee $(BENCH_LOG)/sim_web.txt
	set -o pipefail; $(BIN)/python benches/run_overhead.py $(OVERHEAD_ARGS) 2>&1 | tee $(BENCH_LOG)/run_overhead.txt
	set -o pipefail; $(BIN)/python benches/sweep_scale.py $(SWEEP_ARGS) 2>&1 | tee $(BENCH_LOG)/sweep_scale.txt
	set -o pipefail; $(BIN)/python benches/memory_per_flow.py $(MEMORY_ARGS) 2>&1 | tee $(BENCH_LOG)/memory_per_flow.txt
	@if [ "$$(id -u)" = 0 ]; then \
		set -o pipefail; \
		$(BIN)/python benches/fwd_bench.py $(FWD_BENCH_ARGS) 2>&1 | tee $(BENCH_LOG)/fwd_bench.txt && \
		$(BIN)/python benches/fwd_vs_sim.py $(FWD_VS_SIM_ARGS) 2>&1 | tee $(BENCH_LOG)/fwd_vs_sim.txt && \
		$(BIN)/python benches/hold_latency.py $(HOLD_ARGS) 2>&1 | tee $(BENCH_LOG)/hold_latency.txt; \
	else \
		echo "skipped benches/fwd_bench.py, fwd_vs_sim.py, hold_latency.py: they need root (network namespaces, raw sockets)"; \
	fi

docs: build
	$(BIN)/python scripts/algorithms_doc.py

# A wheel for pip (abi3: one wheel for CPython >= 3.11), installable without Rust: dist/*.whl.
# It carries the testbed's programs for its platform as package data (aqmlab/_bin/, where
# `aqmlab testbed` looks first): built and stripped here, copied in for `maturin build` only, so a
# checkout never runs a stale copy instead of target/release.
dist: $(STAMP)
	rm -rf dist python/aqmlab/_bin
	cargo build --release --quiet -p aqmlab-fwd $(addprefix --bin ,$(FWD_BINS))
	mkdir -p python/aqmlab/_bin
	for b in $(FWD_BINS); do strip -o python/aqmlab/_bin/$$b target/release/$$b; done
	$(BIN)/maturin build --release --strip --quiet --out dist; rc=$$?; rm -rf python/aqmlab/_bin; exit $$rc

# Installs that wheel into a fresh venv with no cargo on PATH and runs `aqmlab run` from it, and
# as root a short `aqmlab testbed` scenario on the wheel's own aqmlab-fwd and aqmlab-traffic.
dist-check: dist
	AQMLAB_WHEEL_TEST=1 $(BIN)/pytest tests/test_wheel.py

clean:
	rm -rf target $(VENV) runs dist
