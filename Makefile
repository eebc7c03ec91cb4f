# The two things a newcomer runs: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: demo test lint bench browser clean

# The runtime alone: what `make demo` (and `make bench`) need.
$(BIN)/fmbench: pyproject.toml
	@echo "installing fmbench and its runtime dependencies into $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet .
	touch $@

# The test extras on top (pytest, moto, Playwright, atheris, build, twine, zizmor, ...): only `make test` and `make lint`.
$(BIN)/pytest: $(BIN)/fmbench pyproject.toml
	@echo "installing the test extras into $(VENV)"
	$(BIN)/pip install --quiet '.[test]'
	touch $@

## Ingest the bundled fixtures into a fresh database, build the static site, serve it.
demo: $(BIN)/fmbench
	$(BIN)/fmbench demo --port $(PORT)

## Install the project into the venv (as a user would) with its test extras, a headless Chromium, and run every test.
test: $(BIN)/pytest browser
	$(BIN)/pip install --quiet --force-reinstall --no-deps .
	$(BIN)/ruff check .
	$(BIN)/pytest

## Debian's Chromium for the browser tests (Playwright drives it; browsers are never downloaded).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

lint: $(BIN)/pytest
	$(BIN)/ruff check .

## The performance harness (benchmarks/README.md has the latest figures).
bench: $(BIN)/fmbench
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/site_size.py

clean:
	rm -rf $(VENV) _site fmbench.duckdb build *.egg-info
