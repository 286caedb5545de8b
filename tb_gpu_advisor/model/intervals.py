"""Interval arithmetic on NumPy arrays. An interval set is a pair (starts, ends) of int64 arrays,
sorted, disjoint and non-touching after `union`. `union` sorts only input that is not sorted already
(event tables are); the operations on sets are linear in their sizes plus a binary search each."""

from __future__ import annotations

import types
from typing import Iterable, Sequence

import numpy as np

from tb_gpu_advisor.common.settings import settings

_native: types.ModuleType | None
try:  # the one-pass union in C, when it was built (TB_GPU_ADVISOR_PURE_PYTHON=1 turns it off)
    from tb_gpu_advisor.model import _intervals

    _native = None if settings().pure_python else _intervals
except ImportError:
    _native = None

Intervals = tuple[np.ndarray, np.ndarray]

EMPTY: Intervals = (np.zeros(0, np.int64), np.zeros(0, np.int64))


def union(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """Merge possibly overlapping intervals into a sorted disjoint set (empty ones dropped)."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    if _native is not None and starts.shape == ends.shape and starts.ndim == 1:
        merged = _native.union_sorted(np.ascontiguousarray(starts), np.ascontiguousarray(ends))
        if merged is None:  # not sorted by start (sets put together): sorted, then merged
            order = np.argsort(starts, kind="stable")
            merged = _native.union_sorted(starts[order], ends[order])
        elif len(merged[0]) == starts.nbytes:
            return _as_given(starts, ends)
        assert merged is not None
        return _as_set(merged)
    return _union_numpy(starts, ends)


def _as_given(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """Sorted intervals that neither overlap, touch nor are empty: the set is the input itself, read
    only (an event table's start and end columns: a GPU's busy set takes no memory of its own)."""
    if not len(starts):
        return EMPTY
    s, e = starts.view(), ends.view()
    s.flags.writeable = e.flags.writeable = False
    return s, e


def _as_set(merged: tuple[bytearray, bytearray]) -> Intervals:
    """The native union's buffers as an interval set."""
    if not len(merged[0]):
        return EMPTY
    return np.frombuffer(merged[0], np.int64), np.frombuffer(merged[1], np.int64)


def _union_numpy(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    keep = ends > starts
    given, kept = (starts, ends), bool(keep.all())
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return EMPTY
    ordered = True
    if len(starts) > 1 and bool((starts[1:] < starts[:-1]).any()):
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        ordered = False
    reach = np.maximum.accumulate(ends)
    # a new merged interval begins where the start is past everything before it
    new = np.empty(len(starts), bool)
    new[0] = True
    new[1:] = starts[1:] > reach[:-1]
    first = np.flatnonzero(new)
    if kept and ordered and len(first) == len(starts):
        return _as_given(*given)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = len(starts) - 1
    return starts[first], reach[last]


def search(a: np.ndarray, v: np.ndarray, side: str = "left") -> np.ndarray:
    """np.searchsorted(a, v, side) for int64 `a` sorted; linear rather than a binary search per value
    when `v` is sorted too (event times), with the native module."""
    v = np.asarray(v)
    if _native is not None and v.ndim == 1 and v.dtype.kind in "iu" and (v.dtype.kind == "i" or v.dtype.itemsize < 8):
        a = np.ascontiguousarray(a, np.int64)
        found = _native.search_sorted(a, np.ascontiguousarray(v, np.int64), side == "right")
        return np.frombuffer(found, np.intp)
    return np.searchsorted(a, v, side=side)  # type: ignore[call-overload]


def union_all(*sets: Intervals) -> Intervals:
    if not sets:
        return EMPTY
    starts = np.concatenate([s for s, _ in sets]).astype(np.int64, copy=False)
    ends = np.concatenate([e for _, e in sets]).astype(np.int64, copy=False)
    if _native is not None and len(sets) > 1 and len(starts):
        # each set is sorted: merged as they are read, not sorted together
        bounds = np.cumsum([0] + [len(s) for s, _ in sets], dtype=np.int64)
        merged = _native.union_runs(starts, ends, bounds)
        if merged is not None:
            return _as_set(merged)
    return union(starts, ends)


def measure_union_in(sets: Sequence[Intervals], lo: np.ndarray, hi: np.ndarray, chunk: int = 1 << 18) -> np.ndarray:
    """measure_in(union_all(*sets), lo, hi), the union made for a run of windows at a time, from the
    intervals of each set that reach into those windows: the same answers, and the whole union (with
    its input, put together) is never held at once (the compute of four GPUs on the 265 MB benchmark
    file: 72 MB)."""
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    runs = -(-sum(len(s) for s, _ in sets) // chunk)
    if runs < 2 or len(lo) < 2:
        return measure_in(union_all(*sets), lo, hi)
    out = np.empty(len(lo), np.int64)
    cuts = np.linspace(0, len(lo), min(runs, len(lo)) + 1).astype(np.int64).tolist()
    for a, b in zip(cuts[:-1], cuts[1:]):
        wl, wh = lo[a:b], hi[a:b]
        t0, t1 = min(int(wl.min()), int(wh.min())), max(int(wl.max()), int(wh.max()))
        # a set's intervals wholly before t0 count the same before each window's lo and hi, those
        # after t1 before neither: what they add to measure_in is nothing
        out[a:b] = measure_in(union_all(*(_reaching(x, t0, t1) for x in sets)), wl, wh)
    return out


def _reaching(a: Intervals, t0: int, t1: int) -> Intervals:
    """The intervals of set a that reach into [t0, t1] (touching it included)."""
    s, e = a
    first = int(np.searchsorted(e, t0, side="left"))
    stop = int(np.searchsorted(s, t1, side="right"))
    return s[first:stop], e[first:stop]


def subtract(a: Intervals, b: Intervals) -> Intervals:
    """a minus b, both disjoint sets: a and the gaps of b."""
    b = _within(b, a)
    if len(a[0]) == 0 or len(b[0]) == 0:
        return a
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    gaps = (np.concatenate([[lo], b[1]]), np.concatenate([b[0], [hi]]))
    return intersect(a, gaps)


def subtract_each(a: Intervals, sets: Iterable[Intervals]) -> Intervals:
    """a minus the union of `sets`, each taken away in turn (their union is not made: a small set
    against large ones costs what the small one does)."""
    for b in sets:
        a = subtract(a, b)
    return a


def _within(b: Intervals, a: Intervals) -> Intervals:
    """The intervals of set b that overlap the span of set a (a small set against a large one, say
    the input copies against every kernel, costs what the small one does)."""
    if len(a[0]) == 0 or len(b[0]) == 0:
        return b
    b_s, b_e = b
    first = int(np.searchsorted(b_e, a[0][0], side="right"))  # the first b ending after a starts
    stop = int(np.searchsorted(b_s, a[1][-1], side="left"))  # the first b starting at or after a's end
    return b if first == 0 and stop == len(b_s) else (b_s[first:stop], b_e[first:stop])


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """a and b, both disjoint sets: each interval of a cut by the intervals of b it overlaps."""
    a, b = _within(a, b), _within(b, a)
    if len(a[0]) == 0 or len(b[0]) == 0:
        return EMPTY
    (a_s, a_e), (b_s, b_e) = a, b
    first = search(b_e, a_s, side="right")  # the first b ending after a starts
    stop = search(b_s, a_e, side="left")  # the first b starting at or after a's end
    count = np.maximum(stop - first, 0)
    total_n = int(count.sum())
    if not total_n:
        return EMPTY
    ia = np.repeat(np.arange(len(a_s)), count)
    offsets = np.cumsum(count) - count
    ib = first[ia] + (np.arange(total_n) - offsets[ia])
    starts = np.maximum(a_s[ia], b_s[ib])
    ends = np.minimum(a_e[ia], b_e[ib])
    keep = ends > starts
    return starts[keep], ends[keep]


def total(a: Intervals) -> int:
    return int(np.sum(a[1] - a[0]))


def measure_before(a: Intervals, t: np.ndarray) -> np.ndarray:
    """For each time in `t`, the length of `a` that lies before it."""
    return Indexed(a).measure_before(t)


def measure_in(a: Intervals, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Length of `a` inside each window [lo[i], hi[i])."""
    return measure_before(a, hi) - measure_before(a, lo)


def clip(a: Intervals, lo: int, hi: int) -> Intervals:
    s, e = a
    keep = (e > lo) & (s < hi)
    return np.maximum(s[keep], lo), np.minimum(e[keep], hi)


class Indexed:
    """An interval set with its running total, for many `measure_in` questions: each answer costs
    a binary search, not a pass over the set."""

    __slots__ = ("starts", "ends", "_cum")

    def __init__(self, a: Intervals):
        self.starts, self.ends = a
        self._cum = np.zeros(len(self.starts) + 1, np.int64)
        np.cumsum(self.ends - self.starts, out=self._cum[1:])

    def __len__(self) -> int:
        return len(self.starts)

    def measure_before(self, t: np.ndarray) -> np.ndarray:
        s, e = self.starts, self.ends
        t = np.asarray(t, np.int64)
        if len(s) == 0:
            return np.zeros(t.shape, np.int64)
        k = search(e, t, side="right")  # intervals wholly before t
        # the interval after those may have begun before t
        partial = np.maximum(t - s[np.minimum(k, len(s) - 1)], 0)
        partial[k >= len(s)] = 0
        return self._cum[k] + partial

    def measure_in(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return self.measure_before(hi) - self.measure_before(lo)


def boundaries(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted times, order) of the intervals' starts then ends: what integral_in sorts, for callers
    that integrate several values over the same intervals."""
    t = np.concatenate([start, end]).astype(np.int64)
    order = np.argsort(t, kind="stable")
    return t[order], order


def integral_in(
    start: np.ndarray,
    end: np.ndarray,
    values: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    cap: float | None = None,
    sorted_bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """For each window [lo, hi) and each column of `values` (one row per interval), the integral
    over time of the summed values of the intervals running (capped at `cap` at each instant when
    given), in value x ps: shape (windows, columns). `sorted_bounds`: `boundaries(start, end)`."""
    values = np.asarray(values, np.float64)
    if values.ndim == 1:
        values = values[:, None]
    if not len(start):
        return np.zeros((len(lo), values.shape[1]))
    t, order = sorted_bounds if sorted_bounds is not None else boundaries(start, end)
    # a sum back at zero may keep a rounding residue: below any one interval's value, it is zero
    # column by column: NumPy reduces a narrow (n, 2) array along its rows one row at a time (3 ms)
    floor = 1e-9 * np.maximum([np.abs(values[:, j]).max() for j in range(values.shape[1])], 1.0)
    hi, lo = np.asarray(hi), np.asarray(lo)
    j_hi, j_lo = np.searchsorted(t, hi, side="right") - 1, np.searchsorted(t, lo, side="right") - 1
    if _native is not None and values.shape[1] <= 8 and hasattr(_native, "level_area_at"):
        # the sums kept at the boundaries the windows' ends fall after, not at all 2n of them
        rows, inv = np.unique(np.maximum(np.concatenate([j_hi, j_lo]), 0), return_inverse=True)
        lv, ar = _native.level_area_at(
            order, np.ascontiguousarray(values), values.shape[1], t, floor, cap is not None, cap or 0.0, rows
        )
        level = np.frombuffer(lv, np.float64).reshape(len(rows), values.shape[1])[inv]
        area = np.frombuffer(ar, np.float64).reshape(len(rows), values.shape[1])[inv]
        at_hi, at_lo = (level[: len(hi)], area[: len(hi)]), (level[len(hi) :], area[len(hi) :])
    else:
        if _native is not None and values.shape[1] <= 8:  # a module built before level_area_at
            lv, ar = _native.level_area(
                order, np.ascontiguousarray(values), values.shape[1], t, floor, cap is not None, cap or 0.0
            )
            level = np.frombuffer(lv, np.float64).reshape(len(t), -1)
            area = np.frombuffer(ar, np.float64).reshape(len(t), -1)
        else:
            level, area = _level_area_numpy(order, values, t, floor, cap)
        at_hi = level[np.maximum(j_hi, 0)], area[np.maximum(j_hi, 0)]
        at_lo = level[np.maximum(j_lo, 0)], area[np.maximum(j_lo, 0)]

    def before(x: np.ndarray, j: np.ndarray, level_area: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        level, area = level_area
        return np.where((j >= 0)[:, None], area + level * (x - t[np.maximum(j, 0)])[:, None], 0.0)

    return before(hi, j_hi, at_hi) - before(lo, j_lo, at_lo)


def _level_area_numpy(
    order: np.ndarray, values: np.ndarray, t: np.ndarray, floor: np.ndarray, cap: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The running sums at the sorted boundaries (floored, capped) and their integral up to each."""
    level = np.cumsum(np.concatenate([values, -values])[order], axis=0)  # the sums from t[j] to t[j + 1]
    level[level < floor] = 0.0
    if cap is not None:
        np.minimum(level, cap, out=level)
    area = np.zeros_like(level)
    np.cumsum(level[:-1] * np.diff(t)[:, None], axis=0, out=area[1:])
    return level, area
