"""What issue 26's memory work changed gives the answers it gave before: a union of intervals that
merges nothing is its input (read only), the union of several sets measured a run of windows at a
time, the kernel figures' integral kept at the windows' boundaries only, and a merged table's column
read at some rows without being made whole."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import Constant
from tb_gpu_advisor.model.profile import DEVICE_SPEC, EventTable

pairs = st.lists(st.tuples(st.integers(0, 400), st.integers(-3, 25)), max_size=50)


def _set(raw):
    s = np.array([a for a, _ in raw], np.int64)
    return iv.union(s, s + np.array([d for _, d in raw], np.int64))


def test_a_union_that_merges_nothing_is_its_input_read_only():
    s, e = np.array([0, 5, 9], np.int64), np.array([3, 8, 12], np.int64)
    for native in (iv._native, None):
        keep, iv._native = iv._native, native
        try:
            got = iv.union(s, e)
        finally:
            iv._native = keep
        assert np.shares_memory(got[0], s) and np.shares_memory(got[1], e)
        assert not got[0].flags.writeable and not got[1].flags.writeable
        assert got[0].tolist() == [0, 5, 9] and got[1].tolist() == [3, 8, 12]
    touching = iv.union(s, np.array([5, 8, 12], np.int64))  # [0, 5) and [5, 8) merge: a set of its own
    assert touching[0].tolist() == [0, 9] and not np.shares_memory(touching[0], s)
    assert s.flags.writeable  # the input itself is left as it was


@settings(max_examples=200, deadline=None)
@given(
    st.lists(pairs, min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(-20, 450), st.integers(-5, 80)), min_size=1, max_size=12),
    st.integers(1, 8),
)
def test_union_measured_a_run_of_windows_at_a_time_is_the_whole_unions(sets, windows, chunk):
    sets = [_set(raw) for raw in sets]
    lo = np.array([a for a, _ in windows], np.int64)
    hi = lo + np.array([d for _, d in windows], np.int64)
    want = iv.measure_in(iv.union_all(*sets), lo, hi)
    got = iv.measure_union_in(sets, lo, hi, chunk=chunk)
    assert got.tolist() == want.tolist()


@pytest.mark.skipif(iv._native is None, reason="the native module is not built")
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 200), st.floats(0, 100)), min_size=1, max_size=60),
    st.lists(st.tuples(st.integers(-100, 1300), st.integers(0, 500)), min_size=1, max_size=8),
    st.booleans(),
)
def test_sums_kept_at_the_windows_only_are_the_full_rows(raw, windows, capped):
    """level_area_at's rows are level_area's at those indices, to the bit; and integral_in on a module
    built before level_area_at (the full rows) answers the same."""
    s = np.array([a for a, *_ in raw], np.int64)
    e = s + np.array([d for _, d, _ in raw], np.int64)
    v = np.ascontiguousarray(np.array([[1.0, x] for *_, x in raw], np.float64))
    t, order = iv.boundaries(s, e)
    floor = np.array([1e-9, 1e-9])
    full = [
        np.frombuffer(b, np.float64).reshape(len(t), 2)
        for b in iv._native.level_area(order, v, 2, t, floor, capped, 1.0)
    ]
    rows = np.unique(np.random.default_rng(len(raw)).integers(0, len(t), 5))
    at = [
        np.frombuffer(b, np.float64).reshape(len(rows), 2)
        for b in iv._native.level_area_at(order, v, 2, t, floor, capped, 1.0, rows)
    ]
    assert at[0].tobytes() == full[0][rows].tobytes() and at[1].tobytes() == full[1][rows].tobytes()
    lo = np.array([a for a, _ in windows], np.int64)
    hi = lo + np.array([d for _, d in windows], np.int64)
    cap = 1.0 if capped else None
    got = iv.integral_in(s, e, v, lo, hi, cap)

    class Before:  # the module as built before level_area_at
        level_area = staticmethod(iv._native.level_area)

    keep, iv._native = iv._native, Before
    try:
        old = iv.integral_in(s, e, v, lo, hi, cap)
    finally:
        iv._native = keep
    assert got.tobytes() == old.tobytes()


def test_level_area_at_refuses_rows_out_of_order_or_range():
    if iv._native is None:
        pytest.skip("the native module is not built")
    s, e = np.array([0, 5], np.int64), np.array([10, 20], np.int64)
    t, order = iv.boundaries(s, e)
    v, floor = np.ones((2, 1)), np.array([1e-9])
    for rows in ([2, 1], [0, 4], [-1]):
        with pytest.raises(ValueError):
            iv._native.level_area_at(order, v, 1, t, floor, False, 0.0, np.array(rows, np.int64))


def test_a_merged_column_read_at_some_rows_is_not_made_whole():
    a = EventTable({"start_ps": np.array([0, 4, 8], np.int64), "bytes": np.array([1, 2, 3], np.int64)})
    b = EventTable({"start_ps": np.array([2, 6], np.int64), "bytes": Constant(2, 7, np.int64)})
    c = EventTable({"start_ps": np.array([5], np.int64)})  # no bytes: the spec's missing value
    merged = EventTable.concat([a, b, c], DEVICE_SPEC)
    rows = np.array([4, 0, 1, 5, 3], np.int64)
    got = merged.peek_at("bytes", rows)
    assert "bytes" not in merged._cols  # not made, not kept
    assert got.dtype == np.int64 and got.tolist() == merged.column("bytes")[rows].tolist() == [7, 1, 7, 3, 0]
    assert merged.peek_at("bytes", rows).tolist() == got.tolist()  # and read from the column once it is made
    assert merged.peek_at("grid_x", np.array([1, 2])).tolist() == [0, 0]  # a constant column


def test_a_merged_column_at_a_few_rows_is_gathered_from_its_parts():
    """Few rows against the table: each part read where the rows come from it (many rows: the column
    made and dropped); both the column's values."""
    rng = np.random.default_rng(3)
    parts = [
        EventTable({"start_ps": np.sort(rng.integers(0, 10_000, 60)), "bytes": rng.integers(0, 99, 60)}),
        EventTable({"start_ps": np.sort(rng.integers(0, 10_000, 50)), "bytes": Constant(50, 5, np.int64)}),
        EventTable({"start_ps": np.sort(rng.integers(0, 10_000, 40))}),
    ]
    merged = EventTable.concat(parts, DEVICE_SPEC)
    whole = EventTable.concat(parts, DEVICE_SPEC).column("bytes")
    for rows in (np.array([149, 0, 77, 12]), rng.permutation(150)[:100]):
        assert merged.peek_at("bytes", rows).tolist() == whole[rows].tolist()
    assert "bytes" not in merged._cols


def test_take_in_runs_is_indexing():
    from tb_gpu_advisor.model.arrays import take_in_runs

    a = np.arange(100, 137, dtype=np.int64)
    index = np.random.default_rng(1).permutation(37)
    for idx in (index, index.astype(np.int32)):
        got = take_in_runs(a, idx, run=5)
        assert got.dtype == a.dtype and got.tolist() == a[index].tolist()


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.integers(0, n - 1), unique=True, max_size=n).map(sorted),
            st.integers(-5, 5),
            st.permutations(range(n)),
            st.lists(st.booleans(), min_size=n, max_size=n),
        )
    )
)
def test_a_sparse_column_is_its_whole_column(case):
    """Sparse (a stat few events carry) read whole, at rows, selected by a mask or a permutation, and
    mapped: the same values as the whole column."""
    from tb_gpu_advisor.model.arrays import Sparse

    n, rows, fill, perm, mask = case
    rows = np.array(rows, np.int64)
    col = Sparse(n, rows, rows * 3 - 7, fill, np.int64)
    whole = np.full(n, fill, np.int64)
    whole[rows] = rows * 3 - 7
    assert col().tolist() == whole.tolist()
    at = np.array(perm[: max(1, n // 2)], np.int64)
    assert col.at(at).tolist() == whole[at].tolist()
    perm, mask = np.array(perm, np.int64), np.array(mask, bool)
    assert col.select(perm)().tolist() == whole[perm].tolist()
    assert col.select(mask)().tolist() == whole[mask].tolist()
    assert col.map(lambda v: np.maximum(v, 0), np.int32)().tolist() == np.maximum(whole, 0).tolist()


def _read_peak(read):
    """What `read()` returns, and its traced peak per event (after a first read: imports, caches)."""
    import tracemalloc

    read()
    tracemalloc.start()
    try:
        p = read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return p, peak / p.event_count


def test_the_kineto_read_keeps_what_the_trace_does_not_give_as_one_value():
    """The real V100 trace (44,665 events kept): the read's traced peak was 654 bytes an event while
    it filled every host column a PyTorch trace never gives (group, bytes, peak_bytes, ...) and kept
    the tokenizer's columns through the tables' assembly; 418 since (the Python reader: 1,000+). On
    a real 402 MB H200 trace, peak RSS 506 -> 307 MB (docs/performance.md)."""
    import os

    from tb_gpu_advisor.report import engine

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "pytorch", "resnet50_num_workers_0",
                        "worker0.1623143089861.pt.trace.json.gz")  # fmt: skip
    p, per_event = _read_peak(lambda: engine.read_path(path))
    assert per_event < 520
    for t in p.threads:
        assert t.events.constant("peak_bytes") is not None and t.events.constant("thread") is not None
    for s in p.streams:
        assert s.events.constant("group") is not None and s.events.constant("stream") is not None


def test_a_host_line_of_many_calls_and_a_few_memory_events_is_read_in_little_memory():
    """A JAX capture with the Python tracer on puts millions of calls and a few allocator events on one
    host line; every allocator stat was a full column while the line was read (246 bytes an event at
    the peak), then one value where no event carried it (192); the few events' values are kept
    alone now (119; a real 77 MB H200 capture: 635 -> 363 MB). The values are the same."""
    from support.xplane_writer import ProfileWriter

    from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
    from tb_gpu_advisor.model.arrays import Sparse

    w = ProfileWriter("h")
    t = w.thread("python3")
    for s in range(4):
        t.step(s, s * 1e5, 1e5 - 1)
    for i in range(200_000):
        t.op("f:Func", i * 2.0, 1.0)
    for i in range(5):
        t.memory(i * 10.0 + 0.5, 100 + i, 200 + i, reserved=7, available=9, fragmentation=0.25)
    data = w.to_bytes()
    p, per_event = _read_peak(lambda: read_profile_bytes(data, "x.xplane.pb", "h"))
    assert per_event < 160
    events = p.threads[0].events
    assert isinstance(events.source("peak_bytes"), Sparse)
    mem = np.flatnonzero(events.column("peak_bytes") >= 0)
    assert len(mem) == 5 and events.column("bytes")[mem].tolist() == [100, 101, 102, 103, 104]
    assert events.column("fragmentation")[mem].tolist() == [0.25] * 5
    assert np.isnan(events.column("fragmentation")).sum() == len(events) - 5
    from tb_gpu_advisor.model.profile import Kind

    steps = events.column("step_num")
    assert sorted(steps[steps >= 0].tolist()) == [0, 1, 2, 3]
    assert (events.column("kind")[steps >= 0] == Kind.STEP).all() and (events.column("kind") == Kind.STEP).sum() == 4


def test_a_sparse_column_is_read_at_rows_without_being_made_whole():
    """A thread's sparse column read through `take` (its steps), a merged table and a one-table concat:
    the right values, and the thread's column is never made whole and kept."""
    from tb_gpu_advisor.model.arrays import Sparse
    from tb_gpu_advisor.model.profile import HOST_SPEC

    n = 1000
    rows = np.array([3, 500, 999])
    t = EventTable(
        {
            "start_ps": np.arange(n, dtype=np.int64) * 10,
            "peak_bytes": Sparse(n, rows, np.array([7, 8, 9]), -1, np.int64),
        }
    )
    whole = t.peek("peak_bytes")
    assert t.take(np.array([0, 3, 999])).column("peak_bytes").tolist() == [-1, 7, 9]
    other = EventTable({"start_ps": np.arange(5, dtype=np.int64) * 10 + 5})
    merged = EventTable.concat([t, other], HOST_SPEC)
    at = np.array([6, 0, 1004, 505])  # t3, t0, t999, t500 (the other table interleaves its first 10)
    assert merged.peek_at("peak_bytes", at).tolist() == merged.column("peak_bytes")[at].tolist() == [7, -1, 9, 8]
    one = EventTable.concat([t], HOST_SPEC)
    assert one.peek_at("peak_bytes", rows).tolist() == [7, 8, 9] and whole[rows].tolist() == [7, 8, 9]
    assert "peak_bytes" not in t._cols
    # an index that is not a permutation (a row twice, one left out) is the whole column's
    s = Sparse(4, np.array([1]), np.array([5]), 0, np.int64)
    assert np.asarray(s.select(np.array([1, 1, 2, 3]))).tolist() == [5, 5, 0, 0]
