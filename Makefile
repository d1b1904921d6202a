# aqmlab: `make demo` runs the embedded default scenario; `make test` runs every check.
# Both create the virtualenv, install the pinned Python dependencies and build the Rust extension.

PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: demo test setup build lint rust-test py-test bench clean docs chromium netdeps dist dist-check

$(STAMP): pyproject.toml constraints.txt Cargo.toml $(wildcard crates/*/Cargo.toml)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Rebuilds the extension (release) after Rust changes.
build: $(STAMP)
	$(BIN)/maturin develop --release --quiet --skip-install
	@# Byte-compile the package as pip does when it installs a wheel: where PYTHONDONTWRITEBYTECODE
	@# is set (it is on some CI images), every `aqmlab` start would otherwise recompile ~20 modules.
	$(BIN)/python -m compileall -q python/aqmlab

demo: build
	$(BIN)/aqmlab demo --out runs/demo

lint: $(STAMP)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests benches scripts
	$(BIN)/ruff format --check python tests benches scripts

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

py-test: build chromium netdeps
	$(BIN)/pytest

test: lint rust-test py-test

bench: build
	cargo bench -p aqmlab-aqm --bench aqm_decision
	cargo run --release -p aqmlab-sim --bin sim_bench
	$(BIN)/python benches/sim_speed.py

docs: build
	$(BIN)/python scripts/algorithms_doc.py

# A wheel for pip (abi3: one wheel for CPython >= 3.11), installable without Rust: dist/*.whl.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/maturin build --release --strip --quiet --out dist

# Installs that wheel into a fresh venv with no cargo on PATH and runs `aqmlab run` from it.
dist-check: dist
	AQMLAB_WHEEL_TEST=1 $(BIN)/pytest tests/test_wheel.py

clean:
	rm -rf target $(VENV) runs dist
