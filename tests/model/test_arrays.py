"""The integer-column helpers agree with NumPy's own unique on any input: dense ids, wide values,
one value, empty, and rows of several columns."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tb_gpu_advisor.model.arrays import distinct, first_index, isin, median, percentile, unique_inverse, unique_rows

ints = st.lists(st.integers(-(2**63), 2**63 - 1), max_size=200)
small = st.lists(st.integers(-3, 40), max_size=200)


@settings(max_examples=200, deadline=None)
@given(st.one_of(ints, small), st.sampled_from([np.int64, np.int32, np.int8, np.uint16, np.uint64]))
def test_unique_inverse_is_numpys(values, dtype):
    x = np.array(values, np.int64)
    if dtype is np.uint64:
        x = x.view(np.uint64)
    elif dtype is not np.int64:
        x = np.clip(x, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
    u, inv = unique_inverse(x)
    want_u, want_inv = np.unique(x, return_inverse=True)
    assert u.tolist() == want_u.tolist()
    assert inv.tolist() == want_inv.reshape(-1).tolist()
    assert len(x) == 0 or u.dtype == x.dtype


def test_unique_inverse_and_distinct_on_unsigned_values_beyond_int64():
    x = np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], np.uint64)
    u, inv = unique_inverse(x)
    assert u.tolist() == [2**64 - 3, 2**64 - 1] and inv.tolist() == [1, 0, 1]
    assert distinct(x).tolist() == [2**64 - 3, 2**64 - 1]


def test_unique_inverse_on_one_value_and_on_floats():
    u, inv = unique_inverse(np.full(1000, -1, np.int32))
    assert u.tolist() == [-1] and u.dtype == np.int32 and not inv.any() and len(inv) == 1000
    u, inv = unique_inverse(np.array([1.2, 1.7, 1.2]))  # not integers: NumPy's sort
    assert u.tolist() == [1.2, 1.7] and inv.tolist() == [0, 1, 0]


wide = st.integers(-(2**63), 2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(-1, -1), st.integers(0, 2**40), wide, wide, st.integers(0, 300)),
        max_size=100,
    ),
    st.sampled_from([np.int64, np.int8, np.uint16]),
)
def test_unique_rows_are_numpys(rows, first_dtype):
    cols = [np.array([r[j] for r in rows], np.int64) for j in range(6)]
    cols[0] = cols[0].astype(first_dtype)
    got, inv = unique_rows(cols)
    if not rows:
        assert got == [] and len(inv) == 0
        return
    want = sorted(set(rows))
    assert got == want  # lexicographic: the reader interns names in this order
    assert [got[i] for i in inv.tolist()] == rows


def test_unique_rows_on_unsigned_values_beyond_int64_and_one_value():
    big = np.array([2**64 - 1, 2**64 - 3, 2**64 - 1, 2**64 - 3], np.uint64)
    same = np.full(4, 7, np.int32)
    got, inv = unique_rows([big, same, np.array([1, 0, 1, 0], np.int8)])
    assert got == [(2**64 - 3, 7, 0), (2**64 - 1, 7, 1)] and inv.tolist() == [1, 0, 1, 0]
    got, inv = unique_rows([same, same])
    assert got == [(7, 7)] and inv.tolist() == [0, 0, 0, 0]


@settings(max_examples=200, deadline=None)
@given(st.one_of(ints, small), st.sampled_from([np.int64, np.int32, np.uint64, np.float64]))
def test_distinct_is_numpys_unique(values, dtype):
    x = np.array(values, np.int64)
    x = x.view(np.uint64) if dtype is np.uint64 else x.astype(dtype)
    got, want = distinct(x), np.unique(x)
    assert got.tolist() == want.tolist() and (len(x) == 0 or got.dtype == want.dtype)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.lists(st.integers(0, 30), max_size=60), st.lists(st.integers(0, 2**62), max_size=20)),
       st.lists(st.one_of(st.integers(-3, 33), st.integers(-(2**63), 2**63 - 1)), max_size=60))  # fmt: skip
def test_first_index_is_the_first_occurrence(keys, queries):
    got = first_index(np.array(keys, np.int64), np.array(queries, np.int64))
    assert got.tolist() == [keys.index(q) if q in keys else -1 for q in queries] and got.dtype == np.intp


@settings(max_examples=200, deadline=None)
@given(st.one_of(ints, small), st.one_of(ints, small), st.sampled_from([np.int64, np.int32, np.uint64]))
def test_isin_is_numpys(values, tests, dtype):
    """Correlation ids span widely: np.isin sorts them with np.unique, which imports numpy.ma."""

    def arr(v):
        x = np.array(v, np.int64)
        return x.view(np.uint64) if dtype is np.uint64 else x.astype(dtype)

    a, b = arr(values), arr(tests)
    assert isin(a, b).tolist() == np.isin(a, b).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**40), 2**40)), max_size=40))
def test_median_is_numpys(values):
    x = np.array(values, np.float64)
    want = float(np.median(x)) if len(x) else float("nan")
    got = median(x)
    assert got == want or (np.isnan(got) and np.isnan(want))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=40),
    st.sampled_from([0.0, 10.0, 25.0, 50.0, 90.0, 100.0]),
)
def test_percentile_is_numpys(values, q):
    """The step graph's typical launch latency and queue gap (graph/build.py): np.percentile's
    linear interpolation, without importing numpy.ma."""
    x = np.array(values, np.int64)
    assert percentile(x, q) == pytest.approx(float(np.percentile(x, q)), rel=1e-12, abs=1e-6)
