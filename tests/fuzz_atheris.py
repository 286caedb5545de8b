"""Coverage-guided fuzzing of the whole pipeline with atheris (libFuzzer): bytes in, a report or the
documented ProfileReadError out. A crash is anything else: another exception, a warning (numpy's
RuntimeWarning on an overflow), a NaN in the JSON, a check that failed, or a message with Python's
words in it (an exception's name, a traceback).

Bytes that start like a PyTorch trace ('{', blank, or gzip) are read as one, the others as XSpace.
The seeds are tests/corpus/; libFuzzer writes new inputs into the FIRST folder it is given, so give
it a scratch folder first:

    python tests/fuzz_atheris.py NEW_DIR tests/corpus -max_total_time=60 -artifact_prefix=CRASH_DIR/

`make fuzz` runs it for FUZZ_SECONDS (600 by default); tests/formats/test_hostile_inputs.py runs it for a
few seconds in every `make test`. A crash found becomes a seed: copy it into tests/corpus/ with a
name saying what it is, fix the advisor, and test_corpus keeps it a test.

It reads under a size limit of 16 MB (TB_GPU_ADVISOR_MAX_PROFILE_MB, unless set): the memory a read
may take is then 48 MB, so that a mutant of the dense seed (issue 38: one event repeated) is refused
from what it projects, as the 1.9 GB one is under the default limit, and the fuzzer stays within its
RSS limit.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings

import atheris

os.environ.setdefault("TB_GPU_ADVISOR_MAX_PROFILE_MB", "16")  # test_hostile_inputs.FUZZ_LIMIT_MB
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

with atheris.instrument_imports(include=["tb_gpu_advisor"]):
    from tb_gpu_advisor.checks import run_checks
    from tb_gpu_advisor.common.errors import ProfileReadError
    from tb_gpu_advisor.formats.kineto.native import read_pytorch_trace_bytes
    from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import analyse
    from tb_gpu_advisor.report import report_json

INTERNALS = re.compile(r"\b\w+(Error|Exception)\b|Traceback|unhashable|\bint64\b|\bnumpy\b|site-packages")
TRACE_START = re.compile(rb"\A(\x1f\x8b|[ \t\r\n]*\{)")


def one_input(data: bytes) -> None:
    trace = TRACE_START.match(data) is not None
    name = "f.pt.trace.json" if trace else "f.xplane.pb"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning is a finding: it reaches the user's stderr
        try:
            read = read_pytorch_trace_bytes if trace else read_profile_bytes
            profile = read(data, name, "h")
        except ProfileReadError as e:
            if INTERNALS.search(e.message):
                raise AssertionError(f"a message with Python's words: {e.message}") from None
            return
        a = analyse(profile)
        findings, errors = run_checks(Measures(a))
        rep = report_json("r", "h", a.summary(), findings, errors)
    json.dumps(rep, allow_nan=False)  # raises on NaN or infinity
    if errors:
        raise AssertionError(f"a check failed: {errors}")
    for m in rep["warnings"] + rep["capture_errors"]:
        if INTERNALS.search(m):
            raise AssertionError(f"a message with Python's words: {m}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
