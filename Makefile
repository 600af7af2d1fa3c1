# The two sacred commands: `make demo` and `make test`. Both create the environment on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Real data lives beside the checkout; AUTOREPARAM_DATA overrides it.
AUTOREPARAM_DATA ?= $(abspath $(CURDIR)/../shared/data)
export AUTOREPARAM_DATA

.PHONY: install peers demo test test-slow test-peers bench report clean

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.lock
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Optional benchmark peers (nutpie on PyMC ports of the zoo models); `make test` never needs them.
PEERS_STAMP := $(VENV)/.peers-stamp
$(PEERS_STAMP): $(STAMP) requirements-peers.lock
	$(PY) -m pip install -q -r requirements-peers.lock
	touch $(PEERS_STAMP)

peers: $(PEERS_STAMP)

demo: install
	$(VENV)/bin/autoreparam compare eight_schools

# One worker per core (at most four), each test file on one worker so that its shared runs
# (module fixtures) are computed once. About three quarters of the time is XLA compilation, so the
# workers share one fresh persistent compilation cache (tests/conftest.py; AUTOREPARAM_TEST_SHARED_CACHE=0
# switches it off): a clean clone on 2026-12-03 took 785 s of tests (841 s with the install) against
# 890 s without it. Three workers on two cores gain nothing (158 s against 155 s on eight files).
test: install
	JAX_PLATFORMS=cpu $(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadfile

test-slow: install
	JAX_PLATFORMS=cpu $(PY) -m pytest -q -m slow

test-peers: peers
	JAX_PLATFORMS=cpu $(PY) -m pytest -q tests/benchmark/test_pymc_ports.py

bench: install
	$(VENV)/bin/autoreparam bench --out results/bench

GPU_RUN := benchmarks/results/gpu_h200_german_credit
report: install
	$(VENV)/bin/autoreparam report --results results/bench --out . \
	  --extra "German credit at the paper's scale on one H200 GPU=$(GPU_RUN)" \
	  --notes benchmarks/notes.md

clean:
	rm -rf $(VENV) .pytest_cache build dist src/*.egg-info
