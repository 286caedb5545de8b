# `make test` and `make demo` set everything up on a fresh machine: a virtual environment in .venv
# with the package (and, for tests, its test and dev extras), the panel's npm packages, and Debian's
# chromium for the browser tests (installed with apt-get when missing; needs root, as on the CI machine).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP := $(VENV)/.test-stamp
NPM_STAMP := frontend/node_modules/.installed-stamp
PACKAGING := pyproject.toml setup.py tb_gpu_advisor/xplane/_xdecode.c
PORT ?= 6006

.PHONY: test lint test-python test-frontend demo panel chromium proto benchmark clean

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

test: lint test-python test-frontend
	@echo "make test: lint, Python and panel tests all passed"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test-python: $(STAMP) $(NPM_STAMP)
	$(PY) -m pytest -q tests

test-frontend: $(STAMP) $(NPM_STAMP) chromium
	cd frontend && PYTHON=$(abspath $(PY)) npm test

demo: $(DEMO_STAMP)
	@echo "GPU Advisor on demo_logs/: open http://localhost:$(PORT)/#gpu_advisor"
	$(VENV)/bin/tensorboard --logdir demo_logs --port $(PORT)

# Regenerate the XSpace schema code; protoc 25 keeps the generated code usable on protobuf 4.25+.
proto:
	$(PYTHON) -m venv /tmp/tbga-protoc && /tmp/tbga-protoc/bin/pip install -q 'grpcio-tools==1.62.3'
	cd tb_gpu_advisor/xplane && /tmp/tbga-protoc/bin/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. xplane.proto

benchmark: $(STAMP)
	$(PY) benchmarks/read_benchmark.py

clean:
	rm -rf $(VENV) build *.egg-info frontend/node_modules frontend/build artifacts
