# The user interface of the project. `make test` and `make bench` install and build what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
PORT ?= 8000
TARGET ?= inprocess
# The gate measures answers, not speed (benchmarks do that): generous path timeouts keep a busy
# CI machine from turning a slow call into a different answer.
GATE_TARGET ?= inprocess:sql_timeout_ms=5000,vector_timeout_ms=5000,tool_timeout_ms=10000
export RAGAS_DO_NOT_TRACK := true
export ANONYMIZED_TELEMETRY := False

# make compare A=<target> B=<target>: a configuration name (hybrid, vector, keyword, no-boosts,
# rrf-equal, rrf-k60, openai-embeddings, llm-rerank), inprocess:..., stdio:<command> or an
# http(s)://.../mcp URL. In-process targets get the gate's generous timeouts (answers, not speed).
A ?= hybrid
B ?= keyword
COMPARE_OVERRIDES ?= sql_timeout_ms=5000,vector_timeout_ms=5000,tool_timeout_ms=10000
RUN ?= reports/runs/latest

.PHONY: install index serve test check bench eval gate gate-chroma baseline compare report clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

index: install
	$(PY) -m reference_server.index

serve: index
	$(PY) -m reference_server --transport http --host 127.0.0.1 --port $(PORT)

test: index
	$(PY) -m pytest -q
	$(MAKE) --no-print-directory gate

bench: index
	$(PY) -m pytest -q -m bench --benchmark-enable --benchmark-only tests/bench -p no:randomly
	$(MAKE) --no-print-directory eval

eval: index
	$(PY) -m evals run --target $(TARGET) --golden golden --out reports/runs/latest --ablation
	$(PY) -m evals report --run reports/runs/latest

gate: index
	$(PY) -m evals run --target $(GATE_TARGET) --golden golden --out reports/runs/gate --ablation --concurrency 2
	$(PY) -m evals gate --run reports/runs/gate --config evals/gate.yaml --baseline evals/baseline.json --require-baseline

compare: index
	$(PY) -m evals compare --a '$(A)' --b '$(B)' --golden golden --overrides $(COMPARE_OVERRIDES) --concurrency 2

report: install
	$(PY) -m evals report --run $(RUN)

# The same gate with the vector path served by a Chroma server (`chroma run`, started and stopped here).
gate-chroma: index
	$(PY) -m scale.chroma_gate --target $(GATE_TARGET) --out reports/runs/gate-chroma

baseline: index
	$(PY) -m evals run --target $(GATE_TARGET) --golden golden --out reports/runs/baseline --ablation --concurrency 2
	$(PY) -m evals baseline --run reports/runs/baseline

check: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy reference_server evals scale

clean:
	rm -rf $(VENV) build reports/runs .pytest_cache .mypy_cache .ruff_cache .benchmarks
