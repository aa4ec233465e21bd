# Two commands set everything up on a fresh machine (see README.md):
#   make demo   install tclint into .venv and lint the bundled examples/
#   make test   install the test dependencies (torch pinned to 2.13.0, CPU) and run the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.PHONY: demo test test-fast lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) -e ".[test]"
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/tclint examples/ --output-format full --exit-zero
	$(BIN)/tclint regions examples/

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m "not slow and not editor"

lint: $(VENV)/.installed-test
	$(BIN)/ruff check rules runtime_probe server tests bench
	$(BIN)/tclint examples/ --exit-zero --quiet > /dev/null

docs: $(VENV)/.installed
	$(BIN)/python -m tclint.rules.docs

bench: $(VENV)/.installed-test
	$(BIN)/python bench/run.py
	$(BIN)/python bench/server_latency.py
	$(BIN)/python bench/probe_latency.py

clean:
	rm -rf $(VENV) .tclint_cache build *.egg-info
