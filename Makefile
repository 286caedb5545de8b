# `make test` and `make demo` set everything up on a fresh machine (a virtual environment in .venv).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: test demo proto benchmark clean

$(STAMP): setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests

demo: $(STAMP)
	$(VENV)/bin/tb-gpu-advisor summary demo_logs

# Regenerate the XSpace schema code; protoc 25 keeps the generated code usable on protobuf 4.25+.
proto:
	$(PYTHON) -m venv /tmp/tbga-protoc && /tmp/tbga-protoc/bin/pip install -q 'grpcio-tools==1.62.3'
	cd tb_gpu_advisor/xplane && /tmp/tbga-protoc/bin/python -m grpc_tools.protoc -I. --python_out=. xplane.proto

benchmark: $(STAMP)
	$(PY) benchmarks/read_benchmark.py

clean:
	rm -rf $(VENV) build *.egg-info
