# Two commands set everything up on a fresh machine (see README.md):
#   make demo   install tclint into .venv and lint the bundled examples/
#   make test   install the test dependencies (torch pinned to 2.13.0, CPU) and run the whole suite
#   make dist   build the wheel and the VS Code extension (which carries the wheel) into dist/
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.PHONY: demo test test-fast lint docs dist bench clean

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

# The inner loop: in-process tests only (no Dynamo, no editors, no server / probe / CLI processes,
# no fuzz volumes): ~1,150 tests, ~20 s of CPU (a minute on a loaded 2-core machine).
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -p no:randomly -m "not slow and not editor and not dynamo and not integration"

# mypy reads the package as ``tclint.*``: the repository root is that package (package-dir in
# pyproject.toml), so a link named tclint to it, in the venv, is mypy's search path.
lint: $(VENV)/.installed-test
	$(BIN)/ruff check rules runtime_probe server tests bench
	$(BIN)/ruff format --check rules runtime_probe server tests bench
	mkdir -p $(VENV)/mypy-path && ln -sfn $(CURDIR) $(VENV)/mypy-path/tclint
	MYPYPATH=$(VENV)/mypy-path $(BIN)/mypy -p tclint.rules -p tclint.server -p tclint.runtime_probe
	$(BIN)/tclint examples/ --exit-zero --quiet > /dev/null

docs: $(VENV)/.installed
	$(BIN)/python -m tclint.rules.ruledoc

# Offline once editors/vscode/node_modules exists (editors/scripts/ensure-vscode-node-modules.sh
# runs `npm ci` when package-lock.json changed).  The wheel goes into the .vsix too (wheel/), so
# the extension's Install prompt works without PyPI.
dist: $(VENV)/.installed
	rm -rf dist build editors/vscode/wheel
	$(PIP) "setuptools>=64"
	$(BIN)/python -m pip wheel --no-deps --no-build-isolation --quiet --disable-pip-version-check -w dist .
	editors/scripts/ensure-vscode-node-modules.sh > /dev/null
	mkdir -p editors/vscode/wheel && cp dist/tclint_torch-*.whl editors/vscode/wheel/
	cd editors/vscode && npm run --silent package
	cp editors/vscode/dist/tclint.vsix dist/tclint.vsix
	rm -rf build
	@ls -1 dist/*

bench: $(VENV)/.installed-test
	$(BIN)/python bench/run.py
	$(BIN)/python bench/server_latency.py
	$(BIN)/python bench/probe_latency.py

clean:
	rm -rf $(VENV) .tclint_cache build dist *.egg-info
