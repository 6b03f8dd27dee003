# mlirfuse: `make demo` runs the main job, `make test` runs every test.
# Both set up .venv first (Python 3.11; torch 2.13 CPU comes from the local
# wheel through pip's configuration here, anything else from PyPI).

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The JavaScript `mlirfuse viz` pages inline (Graphviz as WebAssembly), pinned in mlirfuse/viz/package-lock.json.
VIZ_JS := mlirfuse/viz/node_modules/.installed

.PHONY: setup demo test lint pytest lit bench clean

setup: $(STAMP) $(VIZ_JS)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

$(VIZ_JS): mlirfuse/viz/package.json mlirfuse/viz/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix mlirfuse/viz --no-audit --no-fund --loglevel=error && touch $(VIZ_JS); \
	else echo "warning: npm not found: 'mlirfuse viz' cannot write HTML pages (dot/svg still work)"; fi

demo: setup
	$(BIN)/mlirfuse demo --out demo-out

test: lint pytest lit

lint: setup
	$(BIN)/ruff check mlirfuse tests bench examples

pytest: setup
	$(BIN)/python -m pytest -q -n auto tests

lit: setup
	$(BIN)/lit -sv test/lit

bench: setup
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	$(BIN)/python bench/reductions.py
	$(BIN)/python bench/compile_time.py

clean:
	rm -rf $(VENV) demo-out test/lit/Output .pytest_cache mlirfuse/viz/node_modules
