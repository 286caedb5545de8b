"""Interval arithmetic on NumPy arrays. An interval set is a pair (starts, ends) of int64 arrays,
sorted, disjoint and non-touching after `union`. All operations are O(n log n) or better."""
from __future__ import annotations

import numpy as np

Intervals = tuple[np.ndarray, np.ndarray]

EMPTY: Intervals = (np.zeros(0, np.int64), np.zeros(0, np.int64))


def union(starts: np.ndarray, ends: np.ndarray) -> Intervals:
    """Merge possibly overlapping intervals into a sorted disjoint set (empty ones dropped)."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if len(starts) == 0:
        return EMPTY
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    # a new merged interval begins where the start is past everything before it
    new = np.empty(len(starts), bool)
    new[0] = True
    new[1:] = starts[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(starts) - 1]
    return starts[first], reach[last]


def union_all(*sets: Intervals) -> Intervals:
    if not sets:
        return EMPTY
    return union(np.concatenate([s for s, _ in sets]), np.concatenate([e for _, e in sets]))


def subtract(a: Intervals, b: Intervals) -> Intervals:
    """a minus b, both disjoint sets."""
    if len(a[0]) == 0 or len(b[0]) == 0:
        return a
    pos = np.concatenate([a[0], a[1], b[0], b[1]])
    da = np.concatenate([np.ones(len(a[0]), np.int64), -np.ones(len(a[1]), np.int64),
                         np.zeros(len(b[0]) * 2, np.int64)])  # fmt: skip
    db = np.concatenate([np.zeros(len(a[0]) * 2, np.int64), np.ones(len(b[0]), np.int64),
                         -np.ones(len(b[1]), np.int64)])  # fmt: skip
    order = np.argsort(pos, kind="stable")
    pos, ca, cb = pos[order], np.cumsum(da[order]), np.cumsum(db[order])
    # the state after the last change at a position holds until the next position
    last = np.r_[pos[1:] != pos[:-1], True]
    pos, ca, cb = pos[last], ca[last], cb[last]
    keep = (ca[:-1] > 0) & (cb[:-1] == 0)
    return union(pos[:-1][keep], pos[1:][keep])


def total(a: Intervals) -> int:
    return int(np.sum(a[1] - a[0]))


def measure_before(a: Intervals, t: np.ndarray) -> np.ndarray:
    """For each time in `t`, the length of `a` that lies before it."""
    s, e = a
    t = np.asarray(t, np.int64)
    if len(s) == 0:
        return np.zeros(t.shape, np.int64)
    cum = np.r_[0, np.cumsum(e - s)]
    k = np.searchsorted(e, t, side="right")  # intervals wholly before t
    partial = np.zeros(t.shape, np.int64)
    inside = k < len(s)
    kk = k[inside]
    partial[inside] = np.clip(t[inside] - s[kk], 0, None)
    return cum[k] + partial


def measure_in(a: Intervals, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Length of `a` inside each window [lo[i], hi[i])."""
    return measure_before(a, hi) - measure_before(a, lo)


def clip(a: Intervals, lo: int, hi: int) -> Intervals:
    s, e = a
    keep = (e > lo) & (s < hi)
    return np.maximum(s[keep], lo), np.minimum(e[keep], hi)


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """a and b, both disjoint sets."""
    if len(a[0]) == 0 or len(b[0]) == 0:
        return EMPTY
    return subtract(a, subtract(a, b))
