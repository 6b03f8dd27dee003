# mlirfuse: `make demo` runs the main job, `make test` runs every test.
# Both set up .venv first (Python 3.11; torch 2.13 CPU comes from the local
# wheel through pip's configuration here, anything else from PyPI).

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test lint pytest lit bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: setup
	$(BIN)/mlirfuse demo --out demo-out

test: lint pytest lit

lint: setup
	$(BIN)/ruff check mlirfuse tests bench examples

pytest: setup
	$(BIN)/python -m pytest -q tests

lit: setup
	$(BIN)/lit -sv test/lit

bench: setup
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	$(BIN)/python bench/reductions.py
	$(BIN)/python bench/compile_time.py

clean:
	rm -rf $(VENV) demo-out test/lit/Output .pytest_cache
