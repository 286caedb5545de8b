# `make test` and `make demo` set everything up on a fresh machine: a virtual environment in .venv
# with the package (and, for tests, its test and dev extras), the panel's npm packages, and Debian's
# chromium for the browser tests (installed with apt-get when missing; needs root, as on the CI machine).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP := $(VENV)/.test-stamp
NPM_STAMP := frontend/node_modules/.installed-stamp
PACKAGING := pyproject.toml setup.py tb_gpu_advisor/xplane/_xdecode.c tb_gpu_advisor/_intervals.c
PORT ?= 6006
LOGS := artifacts
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: test lint test-python test-frontend demo panel chromium proto benchmark screenshots clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The demo needs TensorBoard, the plugin and the profile plugin (the links to the Profile tab).
$(DEMO_STAMP): $(PACKAGING) | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): $(PACKAGING) | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[demo,test,dev]'
	touch $(STAMP) $(DEMO_STAMP)

$(NPM_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

# Rebuild the panel into tb_gpu_advisor/static/index.js (committed, so pip installs need no Node).
panel: $(NPM_STAMP)
	cd frontend && node build.mjs

# Every suite writes its log under artifacts/; the last line is one summary of them all.
test: lint test-python test-frontend
	@$(PY) scripts/test_summary.py $(LOGS)/test-lint.log $(LOGS)/test-python.log $(LOGS)/test-unit.log $(LOGS)/test-browser.log

lint: $(STAMP)
	@mkdir -p $(LOGS)
	{ $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy; } 2>&1 | tee $(LOGS)/test-lint.log

test-python: $(STAMP) $(NPM_STAMP)
	@mkdir -p $(LOGS)
	$(PY) -m pytest -q tests 2>&1 | tee $(LOGS)/test-python.log

test-frontend: $(STAMP) $(NPM_STAMP) chromium
	@mkdir -p $(LOGS)
	cd frontend && npm run --silent lint
	cd frontend && npm run --silent test:unit 2>&1 | tee ../$(LOGS)/test-unit.log
	cd frontend && PYTHON=$(abspath $(PY)) npm run --silent test:browser 2>&1 | tee ../$(LOGS)/test-browser.log

# The README's pictures: the browser tests, writing their screenshots into docs/screenshots.
screenshots: $(STAMP) $(NPM_STAMP) chromium
	mkdir -p docs/screenshots
	cd frontend && SCREENSHOTS=$(abspath docs/screenshots) PYTHON=$(abspath $(PY)) npm run --silent test:browser

demo: $(DEMO_STAMP)
	$(PY) scripts/serve_demo.py --port $(PORT)

# Regenerate the XSpace schema code; protoc 25 keeps the generated code usable on protobuf 4.25+.
proto:
	$(PYTHON) -m venv /tmp/tbga-protoc && /tmp/tbga-protoc/bin/pip install -q 'grpcio-tools==1.62.3'
	cd tb_gpu_advisor/xplane && /tmp/tbga-protoc/bin/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. xplane.proto

benchmark: $(STAMP)
	$(PY) benchmarks/read_benchmark.py

clean:
	rm -rf $(VENV) build *.egg-info frontend/node_modules frontend/build artifacts
