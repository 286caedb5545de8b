# `make test` and `make demo` set everything up on a fresh machine: a virtual environment in .venv
# with the package (and, for tests, its test and dev extras), the panel's npm packages, and Debian's
# chromium for the browser tests (installed with apt-get when missing; needs root, as on the CI machine).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP := $(VENV)/.test-stamp
NPM_STAMP := frontend/node_modules/.installed-stamp
PACKAGING := pyproject.toml setup.py constraints.txt tb_gpu_advisor/formats/xplane/_xdecode.c tb_gpu_advisor/model/_intervals.c tb_gpu_advisor/formats/kineto/_kineto.c
# Every install is pinned by constraints.txt (what decides a test's result); `make constraints` moves it.
PIP_INSTALL := $(PY) -m pip install -q -c constraints.txt
PORT ?= 6006
LOGS := artifacts
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: test lint test-python test-frontend demo panel chromium proto benchmark screenshots clean constraints fuzz

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The demo needs TensorBoard, the plugin and the profile plugin (the links to the Profile tab).
$(DEMO_STAMP): $(PACKAGING) | $(VENV)/bin/python
	$(PIP_INSTALL) -e '.[demo]'
	touch $(DEMO_STAMP)

$(STAMP): $(PACKAGING) | $(VENV)/bin/python
	$(PIP_INSTALL) -e '.[demo,test,dev]'
	touch $(STAMP) $(DEMO_STAMP)

$(NPM_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

# Rebuild the panel into tb_gpu_advisor/static/index.js (committed, so pip installs need no Node).
panel: $(NPM_STAMP)
	cd frontend && node build.mjs

# Every suite runs, whatever the others did, and writes its log under artifacts/; the last line sums
# them all, and the exit status is non-zero when any suite failed.
test: $(STAMP) $(NPM_STAMP) chromium
	@mkdir -p $(LOGS); rm -f $(LOGS)/test-*.log $(LOGS)/test-*.status; \
	for suite in lint test-python test-frontend; do \
		$(MAKE) --no-print-directory $$suite; echo $$? > $(LOGS)/$$suite.status; \
	done; \
	$(PY) scripts/test_summary.py $(LOGS)

lint: $(STAMP) $(NPM_STAMP)
	@mkdir -p $(LOGS)
	{ $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy \
		&& (cd frontend && npm run --silent lint); } 2>&1 | tee $(LOGS)/test-lint.log

test-python: $(STAMP) $(NPM_STAMP)
	@mkdir -p $(LOGS)
	$(PY) -m pytest -q tests 2>&1 | tee $(LOGS)/test-python.log

test-frontend: $(STAMP) $(NPM_STAMP) chromium
	@mkdir -p $(LOGS)
	rc=0; \
	(cd frontend && npm run --silent test:unit) 2>&1 | tee $(LOGS)/test-unit.log || rc=1; \
	(cd frontend && PYTHON=$(abspath $(PY)) npm run --silent test:browser) 2>&1 | tee $(LOGS)/test-browser.log || rc=1; \
	exit $$rc

# The README's pictures: the browser tests, writing their screenshots into docs/screenshots.
screenshots: $(STAMP) $(NPM_STAMP) chromium
	mkdir -p docs/screenshots
	cd frontend && SCREENSHOTS=$(abspath docs/screenshots) PYTHON=$(abspath $(PY)) npm run --silent test:browser

# TensorBoard serves a copy of demo_logs/ outside the work tree (refreshed when demo_logs/ changes): the
# Profile tab writes its caches into the logdir it serves, and those must not reach the repo.
demo: $(DEMO_STAMP)
	$(PY) scripts/serve_demo.py --port $(PORT)

# Pins for the next versions: a fresh environment with the extras unpinned, frozen into constraints.txt.
constraints:
	rm -rf /tmp/tbga-constraints && $(PYTHON) -m venv /tmp/tbga-constraints
	/tmp/tbga-constraints/bin/pip install -q --upgrade pip && /tmp/tbga-constraints/bin/pip install -q '.[demo,test,dev]'
	/tmp/tbga-constraints/bin/python scripts/write_constraints.py /tmp/tbga-constraints/bin/python > constraints.txt

# Regenerate the XSpace schema code; protoc 25 keeps the generated code usable on protobuf 4.25+.
proto:
	$(PYTHON) -m venv /tmp/tbga-protoc && /tmp/tbga-protoc/bin/pip install -q 'grpcio-tools==1.62.3'
	cd tb_gpu_advisor/formats/xplane && /tmp/tbga-protoc/bin/python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. xplane.proto

benchmark: $(STAMP)
	$(PY) benchmarks/read_benchmark.py

# Coverage-guided fuzzing (atheris) of the whole pipeline from the seeds in tests/corpus/, for
# FUZZ_SECONDS; new inputs go to artifacts/fuzz-corpus, crashes to artifacts/fuzz-crashes (a crash
# found becomes a seed in tests/corpus/ once fixed). `make test` runs it for 10 s.
FUZZ_SECONDS ?= 600
fuzz: $(STAMP)
	mkdir -p $(LOGS)/fuzz-corpus $(LOGS)/fuzz-crashes
	$(PY) tests/fuzz_atheris.py $(LOGS)/fuzz-corpus tests/corpus -max_total_time=$(FUZZ_SECONDS) \
		-artifact_prefix=$(LOGS)/fuzz-crashes/ -rss_limit_mb=4096

clean:
	rm -rf $(VENV) build *.egg-info frontend/node_modules frontend/build artifacts
