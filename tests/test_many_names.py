"""The checks' work does not grow with the number of distinct op names (issue 42): on a real Keras
transformer capture (7,482 distinct host event names, 5,492 ops) the checks spent most of their time
in 57,564 regex searches, every name rule over every name, and in rows, strings and calls made for
every op. A regression guard that does not depend on the machine's speed: it counts the calls the
interpreter makes (Python functions, and builtins such as a compiled pattern's `search`) while the
checks run, their findings are linked to the tables and the report is made, on one file and on the
same file with four times the distinct op names, host and device."""

from __future__ import annotations

import re
import sys
from collections import Counter

import pytest
from support.sim import Sim

from tb_gpu_advisor import tables
from tb_gpu_advisor.checks import run_checks, tables_of
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import Analysis
from tb_gpu_advisor.report import report_json

TYPES = ("MatMul", "AddV2", "Relu", "Mul", "Softmax", "BiasAdd")


def with_ops(n: int, ops: int = 1200) -> Analysis:
    """One GPU, three steps; each step runs `ops` TensorFlow ops on the host and `ops` kernels, of `n`
    distinct names (as a Keras model's: `model/block_7/dense/MatMul:MatMul`), each kernel launched by
    an op. The events are as many whatever `n`: only the names differ, so work per event (the step
    graph's critical path walks the last steps' events) is not counted as work per name."""
    s = Sim(gpus=1)

    def step(i: int, t: float) -> None:
        for j in range(ops):
            k = j % n
            s.tfc.op(f"model/block_{k}/dense_{k % 7}/{TYPES[k % 6]}:{TYPES[k % 6]}", t + j * 0.5, 0.4)
            s.kernel(t + j * 0.5, 0.3, f"kernel_{k % 40}_sgemm", op=f"model/block_{k}/dense/BiasAdd:BiasAdd")

    s.steps(3, ops * 0.5 + 100.0, step)
    return s.analysis()


def calls(a: Analysis) -> tuple[Counter[str], int]:
    """(calls by kind while the checks run, are linked and reported: Python functions, builtins, and
    of those the regex calls; the file's distinct names)."""
    m = Measures(a)
    seen: Counter[str] = Counter()

    def count(frame: object, event: str, arg: object) -> None:
        if event == "call":
            seen["python"] += 1
        elif event == "c_call":
            seen["builtin"] += 1
            if isinstance(getattr(arg, "__self__", None), re.Pattern):
                seen["regex"] += 1

    sys.setprofile(count)
    try:
        findings, errors = run_checks(m)
        tables.link(m, findings, tables_of())
        report_json("run", "host", m.analysis.summary(), findings, errors)
    finally:
        sys.setprofile(None)
    return seen, len(m.name_strings)


def test_the_checks_do_no_work_per_distinct_op_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TB_GPU_ADVISOR_THREADS", "1")  # the profile hook is per thread: all on this one
    few, names_few = calls(with_ops(300))
    many, names_many = calls(with_ops(1200))
    added = names_many - names_few  # 3,600 more distinct names: 1,800 host ops, 900 device ops, their names
    assert added > 3000
    # at issue 42, before: 2 Python calls and 1.5 builtin calls for each added op; 5 regex searches a name
    for kind in ("python", "builtin"):
        assert many[kind] - few[kind] <= 0.02 * added, (kind, few[kind], many[kind])
    assert many["regex"] <= few["regex"] + 5, (few["regex"], many["regex"])
