"""Columns of one value (`Constant`) read, take and merge exactly as the same values stored in full,
and the XSpace reader keeps a line's one-value columns that way (what issue 26's memory target needs)."""

import os

import numpy as np
from hypothesis import given, settings, strategies as st

from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.model.arrays import Constant
from tb_gpu_advisor.model.profile import HOST_SPEC, EventTable

SPEC = {k: HOST_SPEC[k] for k in ("start_ps", "dur_ps", "corr", "thread", "peak_bytes")}
DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "demo_logs", "12_multi_gpu_imbalance")


def _tables(parts: list[tuple[list[int], int | None, int]]) -> tuple[list[EventTable], list[EventTable]]:
    """The same tables twice: one-value columns as Constants, and stored in full."""
    lazy, full = [], []
    for starts, corr, thread in parts:
        n = len(starts)
        start = np.array(sorted(starts), np.int64)
        corr_col = np.arange(n, dtype=np.int64) if corr is None else Constant(n, corr, np.int64)
        cols = {
            "start_ps": start,
            "dur_ps": np.ones(n, np.int64),
            "corr": corr_col,
            "thread": Constant(n, thread, np.int32),
        }
        lazy.append(EventTable(cols, n))
        full.append(EventTable({k: v() if isinstance(v, Constant) else v for k, v in cols.items()}, n))
    return lazy, full


part = st.tuples(
    st.lists(st.integers(0, 50), max_size=20), st.one_of(st.none(), st.integers(-1, 3)), st.integers(-1, 2)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(part, max_size=4), st.lists(st.booleans(), max_size=80))
def test_constants_merge_and_take_as_full_columns(parts, mask):
    lazy, full = _tables(parts)
    a, b = EventTable.concat(lazy, SPEC), EventTable.concat(full, SPEC)
    keep = np.array((mask + [True] * len(a))[: len(a)], bool)
    for x, y in (
        (a, b),
        (a.take(keep), b.take(keep)),
        (a.take(np.flatnonzero(keep)[::-1]), b.take(np.flatnonzero(keep)[::-1])),
    ):
        assert len(x) == len(y)
        for k, (dt, _) in SPEC.items():
            assert x.column(k).dtype == dt
            assert x.column(k).tolist() == y.column(k).tolist(), k
    # merging reads the parts without keeping what it computed there
    assert all(t.constant("thread") is not None for t in lazy)


def test_one_value_columns_merge_to_one_value_and_missing_ones_too():
    lazy, _ = _tables([([1, 5], 7, 0), ([2, 3, 9], 7, 0)])
    merged = EventTable.concat(lazy, SPEC)
    assert merged.constant("corr") is not None and merged.constant("thread") is not None
    assert merged.constant("peak_bytes") is not None  # in no part: the spec's missing value
    assert merged.peak_bytes.tolist() == [-1] * 5 and merged.corr.tolist() == [7] * 5


def test_the_xspace_reader_keeps_one_value_columns_as_constants():
    path = next(os.path.join(d, f) for d, _, fs in os.walk(DEMO) for f in fs if f.endswith(".xplane.pb"))
    p = read_profile_bytes(open(path, "rb").read(), path, "h")
    for s in p.streams:
        assert s.events.constant("stream") is not None and s.events.constant("shape") is not None
    for i, t in enumerate(p.threads):
        c = t.events.constant("thread")
        assert c is not None and c.value == i and t.events.thread.tolist() == [i] * len(t.events)
        assert t.events.constant("stack") is not None
