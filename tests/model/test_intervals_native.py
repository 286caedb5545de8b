"""The one-pass union in C gives the NumPy union's sets on any input: sorted or not, empty and
negative intervals, touching and nested ones, and values at the ends of int64. The galloping search
gives np.searchsorted's positions, whether the values are sorted or not. The kernel figures' integral
is NumPy's to the bit."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tb_gpu_advisor.model import intervals as iv

pytestmark = pytest.mark.skipif(iv._native is None, reason="the native union is not built")

edges = st.integers(-(2**63), 2**63 - 1)
pairs = st.lists(st.tuples(st.integers(-50, 50), st.integers(-5, 30)), max_size=60)


def _both(s, e):
    got = iv.union(s, e)
    want = iv._union_numpy(np.asarray(s, np.int64), np.asarray(e, np.int64))
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert got[0].dtype == got[1].dtype == np.int64
    return got


@settings(max_examples=300, deadline=None)
@given(pairs, st.booleans())
def test_native_union_is_numpys(raw, sort):
    s = np.array([a for a, _ in raw], np.int64)
    e = np.array([a + d for a, d in raw], np.int64)
    if sort:
        order = np.argsort(s, kind="stable")
        s, e = s[order], e[order]
    _both(s, e)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(edges, edges), max_size=20))
def test_native_union_at_the_ends_of_int64(raw):
    raw = sorted(raw)
    _both(np.array([a for a, _ in raw], np.int64), np.array([b for _, b in raw], np.int64))


def test_native_union_cases():
    s, e = _both([0, 5, 10], [5, 10, 12])  # touching: one interval
    assert (s.tolist(), e.tolist()) == ([0], [12])
    s, e = _both([0, 1, 2, 20], [10, 3, 2, 25])  # nested, empty, apart
    assert (s.tolist(), e.tolist()) == ([0, 20], [10, 25])
    assert iv.union(np.zeros(0, np.int64), np.zeros(0, np.int64)) is iv.EMPTY
    assert iv.union([3], [3]) is iv.EMPTY
    s, e = _both(np.arange(10)[::-1], np.arange(10)[::-1] + 1)  # not sorted: sorted here, then merged
    assert (s.tolist(), e.tolist()) == ([0], [10])


small = st.lists(st.integers(-20, 20), max_size=80)


@settings(max_examples=400, deadline=None)
@given(small, st.one_of(small, st.lists(edges, max_size=30)), st.booleans(), st.sampled_from(["left", "right"]))
def test_native_search_is_numpys(a, v, sort_v, side):
    a = np.sort(np.array(a, np.int64))
    v = np.array(sorted(v) if sort_v else v, np.int64)
    got = iv.search(a, v, side)
    assert got.tolist() == np.searchsorted(a, v, side=side).tolist() and got.dtype == np.intp


def test_native_search_on_long_runs_and_other_types():
    a = np.repeat(np.arange(0, 1000, 10, dtype=np.int64), 3)
    v = np.arange(-5, 1005, dtype=np.int64)
    for side in ("left", "right"):
        assert iv.search(a, v, side).tolist() == np.searchsorted(a, v, side=side).tolist()
        assert iv.search(a, v[::-1], side).tolist() == np.searchsorted(a, v[::-1], side=side).tolist()
        assert iv.search(a, v.astype(np.int32), side).tolist() == np.searchsorted(a, v, side=side).tolist()
    big = np.array([2**64 - 1], np.uint64)  # beyond int64: NumPy's search
    assert iv.search(np.array([0, 5], np.int64), big).tolist() == [2]
    assert iv.search(np.zeros(0, np.int64), v[:3]).tolist() == [0, 0, 0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(pairs, st.booleans()), min_size=1, max_size=6))
def test_native_union_of_sets_is_numpys(sets):
    """Sets put together (union_all), each sorted by start or not, empty and negative intervals in them."""
    arrays = []
    for raw, sort in sets:
        s = np.array([a for a, _ in raw], np.int64)
        e = np.array([a + d for a, d in raw], np.int64)
        if sort:
            order = np.argsort(s, kind="stable")
            s, e = s[order], e[order]
        arrays.append((s, e))
    got = iv.union_all(*arrays)
    want = iv._union_numpy(np.concatenate([s for s, _ in arrays]), np.concatenate([e for _, e in arrays]))
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


def test_native_union_of_sets_at_the_ends_of_int64():
    top, bottom = 2**63 - 1, -(2**63)
    got = iv.union_all((np.array([5, top - 1]), np.array([10, top])), (np.array([bottom, 7]), np.array([0, 12])))
    assert got[0].tolist() == [bottom, 5, top - 1] and got[1].tolist() == [0, 12, top]
    runs = [(np.array([k]), np.array([k + 1])) for k in range(100)]  # over 64 sets: sorted together instead
    assert iv.union_all(*runs)[0].tolist() == [0] and iv.union_all(*runs)[1].tolist() == [100]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 200), st.floats(0, 100), st.floats(0, 3)), max_size=60),
    st.lists(st.tuples(st.integers(-100, 1300), st.integers(0, 500)), min_size=1, max_size=8),
    st.booleans(),
)
def test_native_integral_is_numpys_to_the_bit(raw, windows, capped):
    """The kernel figures' integral (SM efficiency capped at 1, occupancy weighted by time) in C adds
    the same numbers in the same order as NumPy: equal to the bit, so reports do not move with it."""
    s = np.array([a for a, *_ in raw], np.int64)
    e = s + np.array([d for _, d, *_ in raw], np.int64)
    v = np.array([[1.0, x, y] for *_, x, y in raw], np.float64).reshape(-1, 3)
    lo = np.array([a for a, _ in windows], np.int64)
    hi = lo + np.array([d for _, d in windows], np.int64)
    cap = 1.0 if capped else None
    native = iv.integral_in(s, e, v, lo, hi, cap)
    numpy_only = iv._native
    try:
        iv._native = None
        want = iv.integral_in(s, e, v, lo, hi, cap)
    finally:
        iv._native = numpy_only
    assert native.shape == want.shape == (len(lo), 3)
    assert native.tobytes() == want.tobytes()


def test_native_integral_by_hand():
    """Intervals [0, 10) worth 0.5 and [5, 20) worth 0.75: capped at 1, the sum is 0.5 on [0, 5),
    1 (1.25 capped) on [5, 10) and 0.75 on [10, 20): 2.5 + 5 + 7.5 = 15 over [0, 20), and over [4, 12)
    0.5 + 5 + 1.5 = 7."""
    s, e = np.array([0, 5], np.int64), np.array([10, 20], np.int64)
    got = iv.integral_in(s, e, np.array([0.5, 0.75]), np.array([0, 4]), np.array([20, 12]), cap=1.0)
    assert got[:, 0].tolist() == [15.0, 7.0]
