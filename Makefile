# Every target works from a fresh clone: the venv is created on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: help run test test-slow test-gpu fuzz bench bench-quick bench-frameworks bench-large zoo zoo-baseline lint format fixtures fixtures-jax fixtures-torch fixtures-tf docs coverage clean

# A bare `make` lists the targets; every target that needs the venv still creates it.
.DEFAULT_GOAL := help

## help: list these targets, from their `## target: what it does` lines
help:
	@awk '/^## [a-z-]+: / { sub(/^## /, ""); i = index($$0, ": "); \
		printf "  make %-15s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,cpu,openvino]'
	touch $(STAMP)

## run: install, then rewrite a shipped fixture and validate it against the reference
run: $(STAMP)
	mkdir -p out
	$(BIN)/onnx-decomplex fixtures/rope_freqs_initializer.onnx out/rope_freqs_initializer.onnx

WORKERS ?= auto

## test: the default suite (slow cases excluded), over WORKERS processes (one a core)
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(WORKERS)

## test-slow: only the cases marked slow, over WORKERS processes
test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow -n $(WORKERS)

## test-gpu: only the GPU cases (engine build and run need TensorRT); each says why it skips
test-gpu: $(STAMP)
	$(BIN)/python -m pytest -q -m gpu -rs

FUZZ_EXAMPLES ?= 3000

## fuzz: thousands of random complex graphs against the reference, each minimal failing model and its inputs in out/fuzz/; then every mutant of every whole model against default validation
fuzz: $(STAMP)
	rm -rf out/fuzz
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_OUT=out/fuzz \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz.py::test_fuzz
	MUTANTS=all $(BIN)/python -m pytest -q -s -p no:cacheprovider \
		tests/test_mutation.py::test_default_validation_catches_the_bar_of_every_models_mutants

$(BENCH_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,cpu,openvino,bench]'
	touch $(BENCH_STAMP)

## bench: time rewritten models against hand-written real graphs (ratios), with a plot; one thread, then all; the rewrite of a large graph and a large model against graphsurgeon and onnx.load + onnx.save
bench: $(BENCH_STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/run.py --threads 0 --no-large --out bench/results-all-threads

## bench-quick: the same at small sizes, to check that the harness runs
bench-quick: $(BENCH_STAMP)
	$(BIN)/python bench/run.py --quick --out out/bench-quick

LARGE_GRAPH ?= 4500 9000 18000 37000
LARGE_MODELS ?= 1.8 2.1 3.2

## bench-frameworks: each whole model of fixtures/models/ in its own framework (jax.jit, tf.function, torch.compile; one thread) against its rewrite in onnxruntime, both targets, and three against graphs written by hand (bench/floors.py); runs in the exporters' environments that fixtures-jax, fixtures-tf and fixtures-torch make
bench-frameworks:
	for e in jax:jax2onnx tf:tf2onnx torch:torch; do \
		venv=.venv-$${e%%:*}; \
		$$venv/bin/pip install -q -e '.[cpu]' && \
		$$venv/bin/python bench/frameworks.py --exporter $${e#*:} --profile --out out/bench-frameworks || exit 1; \
	done

## bench-large: the rewrite's cost per node at several graph sizes, and models past 2 GB under a 6 GiB cap (minutes)
bench-large: $(BENCH_STAMP)
	$(BIN)/python bench/run.py --no-cases --no-large --large-graph $(LARGE_GRAPH) \
		$(foreach s,$(LARGE_MODELS),--large-model $(s)) --out out/bench-large

## zoo: the model-zoo regression: every fixture, against the committed baseline
zoo: $(STAMP)
	$(BIN)/onnx-decomplex fixtures out/zoo --report out/zoo.json --junit out/zoo.xml \
		--baseline fixtures/baseline.json

## zoo-baseline: accept the current results as the new baseline
zoo-baseline: $(STAMP)
	$(BIN)/onnx-decomplex fixtures out/zoo --baseline fixtures/baseline.json --update-baseline

## lint: ruff check and ruff's format check, as CI runs them
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## format: apply ruff's fixes and formatting
format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## fixtures: regenerate the committed fixture models
fixtures: $(STAMP)
	$(BIN)/python fixtures/make_fixtures.py

## docs: regenerate docs/ops.md, the op coverage table, from the rule registry
docs: $(STAMP)
	$(BIN)/python -m onnx_decomplex.coverage docs/ops.md

## coverage: the same as docs
coverage: docs

## clean: remove the venv, out/ and the test caches
clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis *.egg-info

## fixtures-jax: regenerate fixtures/jax2onnx/ and fixtures/models/jax2onnx/ with the real exporter, in its own environment
fixtures-jax:
	python3 -m venv .venv-jax
	.venv-jax/bin/pip install -q -r fixtures/jax2onnx/requirements.txt
	cd fixtures/jax2onnx && ../../.venv-jax/bin/python make_jax2onnx.py
	cd fixtures/models/jax2onnx && ../../../.venv-jax/bin/python make_models.py

## fixtures-torch: regenerate fixtures/torch/ and fixtures/models/torch/ with torch.onnx (dynamo), in its own environment
fixtures-torch:
	python3 -m venv .venv-torch
	.venv-torch/bin/pip install -q -r fixtures/torch/requirements.txt
	.venv-torch/bin/python fixtures/torch/make_torch.py
	.venv-torch/bin/python fixtures/models/torch/make_models.py

## fixtures-tf: regenerate fixtures/tf2onnx/, fixtures/models/tf2onnx/ and fixtures/peers/ with tf2onnx, and TensorFlow's FFT errors (fixtures/transforms/), in its own environment
fixtures-tf:
	python3 -m venv .venv-tf
	.venv-tf/bin/pip install -q -r fixtures/tf2onnx/requirements.txt
	cd fixtures/tf2onnx && ../../.venv-tf/bin/python make_tf2onnx.py
	cd fixtures/models/tf2onnx && ../../../.venv-tf/bin/python make_models.py
	cd fixtures/peers && ../../.venv-tf/bin/python make_peers.py
	cd fixtures/transforms && ../../.venv-tf/bin/python make_errors.py
