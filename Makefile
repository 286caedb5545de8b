# `make test` and `make demo` set everything up on a fresh machine: a virtual environment in .venv
# with the package and its test extras, the panel's npm packages, and Debian's chromium for the
# browser tests (installed with apt-get when missing; needs root, as on the CI machine).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
NPM_STAMP := frontend/node_modules/.installed-stamp
PORT ?= 6006

.PHONY: test test-python test-frontend demo panel chromium proto benchmark clean

$(STAMP): setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

$(NPM_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

# Rebuild the panel into tb_gpu_advisor/static/index.js (committed, so pip installs need no Node).
panel: $(NPM_STAMP)
	cd frontend && node build.mjs

test: test-python test-frontend

test-python: $(STAMP) $(NPM_STAMP)
	$(PY) -m pytest -q tests

test-frontend: $(STAMP) $(NPM_STAMP) chromium
	cd frontend && PYTHON=$(abspath $(PY)) npm test

demo: $(STAMP)
	@echo "GPU Advisor on demo_logs/: open http://localhost:$(PORT)/#gpu_advisor"
	$(VENV)/bin/tensorboard --logdir demo_logs --port $(PORT)

# Regenerate the XSpace schema code; protoc 25 keeps the generated code usable on protobuf 4.25+.
proto:
	$(PYTHON) -m venv /tmp/tbga-protoc && /tmp/tbga-protoc/bin/pip install -q 'grpcio-tools==1.62.3'
	cd tb_gpu_advisor/xplane && /tmp/tbga-protoc/bin/python -m grpc_tools.protoc -I. --python_out=. xplane.proto

benchmark: $(STAMP)
	$(PY) benchmarks/read_benchmark.py

clean:
	rm -rf $(VENV) build *.egg-info frontend/node_modules frontend/build artifacts
