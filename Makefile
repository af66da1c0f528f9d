# The user interface of the project. `make test` and `make bench` install and build what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The one program (`ocm`, ocm_cli/program.py), run as a module so a checkout's own code is the
# one run (a seeded-defect worktree shares this venv, whose `ocm` script imports the main tree)
OCM := $(PY) -m ocm_cli
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)
PORT ?= 8000
TARGET ?= inprocess
# The target the release gate runs (pinned date, generous path timeouts: answers, not speed) is
# written once, as `target:` in evals/gate.yaml; GATE_DATE is its pinned date.
ifeq ($(origin GATE_TARGET),undefined)
GATE_TARGET := $(shell sed -n 's/^target: *//p' evals/gate.yaml)
endif
ifeq ($(origin GATE_DATE),undefined)
GATE_DATE := $(shell sed -nE 's/^target: .*as_of_date=([0-9-]+).*/\1/p' evals/gate.yaml)
endif
export RAGAS_DO_NOT_TRACK := true
export ANONYMIZED_TELEMETRY := False

# Property-based contract tests: the large profile (>= 1,000 invalid and >= 200 valid examples per
# tool) against FUZZ_TARGET (any target spec: inprocess[:k=v], stdio:<cmd>, http(s)://.../mcp).
# FUZZ_ARGS passes more options (--house-rules on, --examples FILE, --allow-writes, --seed N).
FUZZ_TARGET ?= inprocess
FUZZ_PROFILE ?= large
FUZZ_ARGS ?=

PROFILE ?= latency
USERS ?=
RATE ?=
TIME ?=
WORKERS ?= 0
URL ?=
# MIX: golden (default), examples:<file> or schema (generated from another server's schemas)
MIX ?=
# make compare A=<target> B=<target>: a configuration name (hybrid, vector, keyword, no-boosts,
# rrf-equal, rrf-k60, openai-embeddings, llm-rerank), inprocess:..., stdio:<command> or an
# http(s)://.../mcp URL. In-process targets get the gate's generous timeouts (answers, not speed).
A ?= hybrid
B ?= keyword
COMPARE_OVERRIDES ?= sql_timeout_ms=5000,vector_timeout_ms=5000,tool_timeout_ms=10000
# make report RUN=<folder>: any run record there (run, gate, bench, fuzz, security, ...), by kind
RUN ?= reports/runs/latest

.PHONY: install index serve test derived-sample test-load check bench bench-cpu distinct-mix load eval eval-derived questions calibrate gate gate-chroma bench-scale rehearsal baseline fixture compare report fuzz security contract sensitivity routing routing-floors clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[harness,load,scale,tool-search,dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

index: install
	$(OCM) index

serve: index
	$(OCM) serve --transport http --host 127.0.0.1 --port $(PORT)

# The suite on TEST_WORKERS pytest-xdist processes (one per core, at most 4: each loads the model
# and the index); tests sharing a costly fixture stay on one worker (tests/conftest.py). Then the
# golden gate and the derived sample side by side. TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 4 ? n : 4 )))
test: index
	$(PY) -m pytest -q $(if $(filter-out 0 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadgroup)
	$(MAKE) --no-print-directory -j2 --output-sync=target gate derived-sample

derived-sample: index
	$(MAKE) --no-print-directory eval-derived PER_FAMILY=32 DERIVED=reports/derived-sample

# The load tests that start extra server configurations (150 ms on SQL, seeded defects; the
# nginx rehearsal with two replicas and a Chroma server).
test-load: index
	$(PY) -m pytest -q -m load tests/load tests/test_scale_rehearsal.py -p no:randomly

# The distinct-query task mix (load/distinct_mix.py): MIX_CALLS distinct calls over the twelve
# tools from every derived case (evals derive), the golden calls and the index's ids; made again
# when its inputs change. Use it with `make load MIX=examples:$(DISTINCT_MIX)`.
MIX_CALLS ?= 30000
MIX_SEED ?= 0
DISTINCT_MIX := build/mix/distinct-$(MIX_CALLS)-$(MIX_SEED).json
MIX_INPUTS := $(shell find evals/derive golden reference_server/corpus -type f 2>/dev/null) load/distinct_mix.py build/index/manifest.json
# Server with all workers -> every load profile (load/profiles.yaml) -> in-process steps -> golden
# eval + gate -> reports/bench/<timestamp>/ and reports/latest/ (load/bench.py). Non-zero on any miss;
# the tight bars are scaled to this machine by a reference workload (load/calibration.py).
# BASE=<git rev>: instead, the working tree against that revision, calls interleaved on both
# servers -> per-tool ratios; exit 1 when a tool is slower beyond the margin (load/against_base.py).
# With BASE: BASE_MIX=examples:$(DISTINCT_MIX) sends each distinct-query call once to both
# servers instead of the golden mix (whose repeated calls both caches answer); the record names the
# mix and each server's cache hit rate. BASE_SATURATION=1 adds the saturation profile on that mix,
# one side at a time in ABBA order (SATURATION_PAIRS pairs, default 2), 2 workers per side:
# calls/s per run and working/base per pair, reported, not judged (load/saturation_pair.py).
# QUICK=1: every profile with its `quick` settings (load/profiles.yaml), shorter: checks the bench
# runs end to end, judging only the absolute bars. BENCH_PROFILES=<file>: another profiles file.
BASE ?=
ROUNDS ?=
QUICK ?=
BENCH_PROFILES ?=
BASE_MIX ?=
BASE_SATURATION ?=
SATURATION_PAIRS ?=
bench: index $(DISTINCT_MIX)
	OCM_DISTINCT_MIX='$(DISTINCT_MIX)' GATE_TARGET='$(GATE_TARGET)' LOAD_PROFILES='$(BENCH_PROFILES)' LOAD_QUICK='$(QUICK)' $(OCM) bench $(if $(BASE),--base '$(BASE)') $(if $(ROUNDS),--rounds $(ROUNDS)) \
		$(if $(BASE_MIX),--mix '$(BASE_MIX)') $(if $(BASE_SATURATION),--saturation) $(if $(SATURATION_PAIRS),--saturation-pairs $(SATURATION_PAIRS))
	@if [ -n "$(SCALE)" ]; then $(MAKE) --no-print-directory bench-scale SCALE=$(SCALE) SCALE_SUMMARY=reports/latest; fi

distinct-mix: index $(DISTINCT_MIX)

$(DISTINCT_MIX): $(MIX_INPUTS) | index
	$(OCM) derive --out build/mix/cases
	$(OCM) mix --cases build/mix/cases --out $@ --calls $(MIX_CALLS) --seed $(MIX_SEED)

# The bench's in-process steps on their own (tests/bench calls load/inprocess_latency.py and
# load/cpu_per_call.py, the functions `make bench` calls): per-tool latency, and CPU per distinct
# call per tool and kind beside the reference workload of the same run. CPU_CALLS per tool.
CPU_CALLS ?= 60
bench-cpu: distinct-mix
	OPENBLAS_NUM_THREADS=1 OCM_DISTINCT_MIX=$(DISTINCT_MIX) OCM_CPU_CALLS=$(CPU_CALLS) $(PY) -m pytest -q -s -m bench \
		tests/bench -p no:randomly

# One load profile (latency | paced | saturation | parallel) against a fresh reference server,
# or URL=http://127.0.0.1:PORT/mcp, or LOAD_TARGET='stdio:<command>' (served to locust through a
# loopback proxy); WORKERS=N uses locust's master/worker mode. CALL_TIMEOUT: seconds before a
# call counts as failed (30). The reference index is built only for the reference server.
LOAD_TARGET ?=
CALL_TIMEOUT ?=
load: $(if $(or $(URL),$(LOAD_TARGET)),install,index)
	$(OCM) load run --profile $(PROFILE) --workers $(WORKERS) \
		$(if $(USERS),--users $(USERS)) $(if $(RATE),--rate $(RATE)) \
		$(if $(TIME),--time $(TIME)) $(if $(URL),--url $(URL)) $(if $(MIX),--mix '$(MIX)') \
		$(if $(LOAD_TARGET),--target '$(LOAD_TARGET)') $(if $(CALL_TIMEOUT),--call-timeout $(CALL_TIMEOUT))

# Corpus growth: synthetic SCALE-x index (and 1x, same run) -> per-tool p50/p95, calls/s, size.
SCALE ?=
bench-scale: index
	$(OCM) scale --factors $(or $(SCALE),10) --out reports/scale/latest $(if $(SCALE_SUMMARY),--summary $(SCALE_SUMMARY))

eval: index
	$(OCM) run --target '$(TARGET)' --golden golden --out reports/runs/latest --ablation
	$(OCM) report --run reports/runs/latest

gate: index
	$(OCM) run --target $(GATE_TARGET) --golden golden --out reports/runs/gate --ablation --concurrency 2
	$(OCM) gate --run reports/runs/gate --config evals/gate.yaml --baseline evals/baseline.json --require-baseline

# Evaluation cases derived from every corpus fact (evals/derive): derive -> run -> per-family
# report (accuracy, answers about another product, misses) -> gate on the per-family floors of
# evals/gate.yaml. PER_FAMILY=N runs a seeded sample of N cases per family instead of all.
# The clinician questions the calibration is fitted on are asked too (every one: families
# opa.clinician_policy and opa.clinician_search), and those it was never fitted on (families
# opa.clinician_policy_unfitted and opa.clinician_search_unfitted), so the gate judges the
# confidence on clinicians' wording as well as on the corpus's.
PER_FAMILY ?=
DERIVED ?= reports/derived
CLINICIAN_QUESTIONS ?= reference_server/scoring/clinician_questions.yaml
UNFITTED_QUESTIONS ?= evals/unfitted_clinician_questions.yaml
eval-derived: index
	$(OCM) derive --out $(DERIVED)/cases $(if $(PER_FAMILY),--per-family $(PER_FAMILY)) --questions $(CLINICIAN_QUESTIONS) --unfitted-questions $(UNFITTED_QUESTIONS)
	$(OCM) run --target $(GATE_TARGET) --golden $(DERIVED)/cases --out $(DERIVED)/run --no-ragas --quiet
	$(OCM) report --run $(DERIVED)/run > $(DERIVED)/report.txt
	@awk '/^## Per case family/{f=1} /^## Per source/{f=0} f' $(DERIVED)/run/report.md
	$(OCM) gate --run $(DERIVED)/run --config evals/gate.yaml --no-baseline

# New clinician questions, kept out of the repository (ocm_common/clinician_questions.py has the
# format): asked of QUESTIONS_TARGET (default: the gate's target), then judged by evals/questions.gate.yaml:
# no answer stated at >= 0.8 may be wrong. Accuracy and calibration are in the report.
QUESTIONS_OUT ?= reports/questions
QUESTIONS_TARGET ?= $(GATE_TARGET)
questions: index
	@test -n "$(QUESTIONS)" || { echo "usage: make questions QUESTIONS=<question file> [QUESTIONS_TARGET=<backend>]"; exit 2; }
	$(OCM) derive --questions $(QUESTIONS) --family opa.clinician_policy --family opa.clinician_search --out $(QUESTIONS_OUT)/cases
	$(OCM) run --target '$(QUESTIONS_TARGET)' --golden $(QUESTIONS_OUT)/cases --out $(QUESTIONS_OUT)/run --no-ragas --quiet
	$(OCM) report --run $(QUESTIONS_OUT)/run > $(QUESTIONS_OUT)/report.txt
	$(OCM) gate --run $(QUESTIONS_OUT)/run --config evals/questions.gate.yaml --no-baseline

# The calibrated confidence (reference_server/scoring/fit.py): every derived case, a seeded
# sample of CAL_PER_FAMILY per family, split by a seeded hash; the fit half run with both paths
# and with each path alone (features recorded in every answer), the models fitted and written to
# reference_server/scoring/calibration.yaml; the held-out half run and judged (its calibration
# table in the report: ECE, AUROC, accuracy at >= 0.9).
CALIBRATION ?= build/calibration
CAL_PER_FAMILY ?= 400
calibrate: index
	$(OCM) derive --out $(CALIBRATION)/all
	$(OCM) confidence split --cases $(CALIBRATION)/all --out $(CALIBRATION)/cases --per-family $(CAL_PER_FAMILY)
	for m in hybrid vector keyword; do \
	  $(OCM) run --golden $(CALIBRATION)/cases/fit --out $(CALIBRATION)/run-$$m --no-ragas --quiet \
	    --target inprocess:confidence_model=spec,mode=$$m,as_of_date=$(GATE_DATE),$(COMPARE_OVERRIDES) || exit 1; \
	done
	$(OCM) confidence fit --run $(CALIBRATION)/run-hybrid --run $(CALIBRATION)/run-vector --run $(CALIBRATION)/run-keyword
	$(OCM) run --golden $(CALIBRATION)/cases/held_out --out $(CALIBRATION)/held-out --no-ragas --quiet --target $(GATE_TARGET)
	$(OCM) report --run $(CALIBRATION)/held-out > $(CALIBRATION)/held-out/report.txt
	$(OCM) confidence judge --run $(CALIBRATION)/held-out

# RUN_A=<folder> RUN_B=<folder>: compare two run records instead (run logs: paired tests; any
# other kind, e.g. two benches: their figures side by side).
RUN_A ?=
RUN_B ?=
compare: $(if $(RUN_A),install,index)
	$(OCM) compare $(if $(RUN_A),--run-a '$(RUN_A)' --run-b '$(RUN_B)',--a '$(A)' --b '$(B)' --golden golden --overrides $(COMPARE_OVERRIDES) --concurrency 2)

report: install
	$(OCM) report --run $(RUN)

# The same gate with the vector path served by a Chroma server (`chroma run`, started and stopped here).
gate-chroma: index
	$(OCM) gate-chroma --target $(GATE_TARGET) --out reports/runs/gate-chroma

# Two replicas sharing one Chroma server behind nginx (Debian's package, run as our own process);
# one replica is stopped mid-run; exits 1 if the client saw a failed call.
rehearsal: index
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || { echo "nginx missing: apt-get install -y nginx"; exit 2; }
	$(OCM) rehearsal --clients $(or $(USERS),8) --seconds $(or $(TIME),30) --out reports/rehearsal/latest

baseline: index
	$(OCM) run --target $(GATE_TARGET) --golden golden --out reports/runs/baseline --ablation --concurrency 2
	$(OCM) baseline --run reports/runs/baseline

# Re-record the reproducibility fixture (query vectors and top-10 ids that tests/test_reproducibility.py
# compares on every machine) after a deliberate change of corpus, model or ranking; review its diff.
fixture: index
	$(OCM) fixture --write

# The reference index is built only when the target is the in-process server.
fuzz: $(if $(filter inprocess%,$(FUZZ_TARGET)),index,install)
	$(OCM) fuzz --target '$(FUZZ_TARGET)' --profile $(FUZZ_PROFILE) --out reports/runs/fuzz $(FUZZ_ARGS)

# Security checks against any target (TARGET=inprocess | stdio:<cmd> | http://127.0.0.1:PORT/mcp):
# tool poisoning, rug pull, secret leaks, path escapes, unbounded work, HTTP transport rules.
# Only read-only tools are called unless SECURITY_FLAGS=--allow-writes; exit 1 on findings.
# The reference server's index is built only when the target is the in-process server.
SECURITY_FLAGS ?=
security: $(if $(filter inprocess%,$(TARGET)),index,install)
	$(OCM) security --target '$(TARGET)' --out reports/security/latest $(SECURITY_FLAGS)

# Contract diff of two live targets' tool surfaces (A=<spec> B=<spec>); exit 1 on breaking changes.
# The reference index is built only when A or B is the in-process server (a configuration name
# such as hybrid, or inprocess...), not for two stdio: or http(s): targets.
contract: $(if $(filter-out stdio:% http:% https:%,$(firstword $(A)) $(firstword $(B))),index,install)
	$(OCM) contract --a '$(A)' --b '$(B)' --out reports/contract/latest

check: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy reference_server evals scale load ocm_common tool_search ocm_cli examples
	$(VENV)/bin/lint-imports

# Seeded defects (evals/sensitivity/defects.yaml), each applied alone in a scratch worktree of HEAD:
# the verdict commands run on clean HEAD (must be green), then on each defect cheapest first
# (gate, derived sample, routing, pytest, bench BASE=HEAD, fuzz) -> which command caught it, or MISSED.
# Not part of CI (hours). SENSITIVITY_ARGS: --defect ID, --commands a,b, --all, --rev REV.
SENSITIVITY_ARGS ?=
sensitivity: index
	$(OCM) sensitivity $(SENSITIVITY_ARGS)

# Tool discovery: the routing evaluation over the reference's 12 tools, seed 003's 17, five
# public servers' tools and 1,000 generated distractors, judged by evals/routing/floors.yaml.
ROUTING_CATALOGUES := inprocess tool_search/catalogues/clinical_trials_assistant.json $(foreach s,filesystem git fetch time memory,tool_search/catalogues/public_$(s).json)
ROUTING_RUN = $(OCM) routing $(foreach c,$(ROUTING_CATALOGUES),--catalogue $(c)) --distractors 1000 --cases build/routing/cases.jsonl --mode hybrid --out reports/routing
routing: index
	$(OCM) routing-cases --out build/routing/cases.jsonl
	$(ROUTING_RUN) --gate

# Floors measured again (one point under today's values) when the cases change on purpose.
routing-floors: index
	$(OCM) routing-cases --out build/routing/cases.jsonl
	$(ROUTING_RUN) --write-floors evals/routing/floors.yaml

clean:
	rm -rf $(VENV) build reports/runs reports/bench reports/load reports/latest .pytest_cache .mypy_cache .ruff_cache
