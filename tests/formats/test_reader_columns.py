"""The reader's short cuts for stat columns (every value a plain integer, every value a string) give
what its general path gives: the same values, the same warnings, the same interning order."""

import numpy as np
from hypothesis import given, settings, strategies as st

from tb_gpu_advisor.formats.xplane.lines import LineReader
from tb_gpu_advisor.formats.xplane.raw import (
    K_DOUBLE,
    K_INT,
    K_NONE,
    K_STR,
    K_UINT,
    RawLine,
    RawPlane,
    RawSpace,
    RawStat,
)
from tb_gpu_advisor.formats.xplane.values import Values

STRINGS = ["MatMul", "dense/MatMul:MatMul", "", "x" * 300, "é", "conv2d"]


def _setup(kind, val):
    space = RawSpace([], [], [], [], STRINGS)
    plane = RawPlane(1, "/host:CPU", {}, {}, {}, [])
    line = RawLine(1, "l", "l", 0, np.zeros(len(kind), np.int64), np.zeros(len(kind), np.int64),
                   np.zeros(len(kind), np.int64), {"s": RawStat(np.asarray(kind, np.int8), np.asarray(val, np.int64))})  # fmt: skip
    builder = LineReader(space, "f", "h")
    return builder, Values(space, plane, builder.warn), line


def _general_int(kind, val, meta):
    builder, values, _ = _setup(kind, val)
    v = values.ints(np.asarray(kind, np.int8), np.asarray(val, np.int64), "s")
    return np.where(np.asarray(kind) != K_NONE, v, meta), builder.warnings


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([K_NONE, K_INT, K_UINT, K_DOUBLE]), st.integers(-(2**63), 2**63 - 1)),
                min_size=1, max_size=40))  # fmt: skip
def test_int_column_short_cut_is_the_general_path(cells):
    kind = [k for k, _ in cells]
    val = [v for _, v in cells]
    meta = np.arange(len(cells), dtype=np.int64) - 7
    builder, values, line = _setup(kind, val)
    got = builder._int_column(values, line, "s", meta)
    want, warnings = _general_int(kind, val, meta)
    assert got.tolist() == want.tolist() and got.dtype == want.dtype
    assert builder.warnings == warnings


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([K_NONE, K_STR, K_STR, K_STR]), st.integers(0, len(STRINGS) - 1)),
                min_size=1, max_size=40))  # fmt: skip
def test_text_column_short_cut_is_the_general_path(cells):
    kind = [k for k, _ in cells]
    val = [v for _, v in cells]
    meta = np.full(len(cells), -1, np.int32)
    builder, values, line = _setup(kind, val)
    got = builder._text_column(values, line, "s", meta)
    general = LineReader(RawSpace([], [], [], [], STRINGS), "f", "h")
    ids = values.text_ids(np.asarray(kind, np.int8), np.asarray(val, np.int64), general.names)
    want = np.where(ids >= 0, ids, meta)
    assert got.tolist() == want.tolist() and got.dtype == want.dtype
    assert builder.names.strings == general.names.strings  # the same names, interned in the same order
