# aqmlab: `make demo` runs the embedded default scenario; `make test` runs every check.
# Both create the virtualenv, install the pinned Python dependencies and build the Rust extension.

PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: demo test setup build lint rust-test py-test bench clean docs

$(STAMP): pyproject.toml Cargo.toml $(wildcard crates/*/Cargo.toml)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Rebuilds the extension (release) after Rust changes.
build: $(STAMP)
	$(BIN)/maturin develop --release --quiet --skip-install

demo: build
	$(BIN)/aqmlab demo --out runs/demo

lint: $(STAMP)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests benches scripts
	$(BIN)/ruff format --check python tests benches scripts/algorithms_doc.py

rust-test:
	cargo test --workspace --release --quiet

py-test: build
	$(BIN)/pytest

test: lint rust-test py-test

bench: build
	cargo bench -p aqmlab-aqm --bench aqm_decision
	cargo run --release -p aqmlab-sim --bin sim_bench
	$(BIN)/python benches/sim_speed.py

docs: build
	$(BIN)/python scripts/gen_algorithms_doc.py

clean:
	rm -rf target $(VENV) runs
