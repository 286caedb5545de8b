"""The capture's extent, and events held to it: no number the advisor reports can come from an event
outside the capture, or from a duration running past it.

The extent is the span the file states (XSpace: the Task Environment's `profile_start_time` and
`profile_stop_time`; Kineto: the profiler's own `PyTorch Profiler (0)` span), widened by
`MARGIN_PS` for device work the profiler flushed just after it stopped. A stated span that does not
hold most events is itself broken and not used. Without one, the extent is found from the events:
those starting more than `FAR_PS` from the median start are outside (a timestamp of 0 among epoch
timestamps, a wrapped one), and the rest run at most as long again past the last start (at least
`MIN_TAIL_PS`).

An event starting outside the extent is dropped and counted in the report's `capture_errors`; an event
running past its end is cut there. All arithmetic is in float64 with bounds before any int64 cast,
so nothing wraps.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.model.profile import EventTable

MARGIN_PS = 100 * 10**9  # 0.1 s either side of a stated span
FAR_PS = 10**18  # about 11.6 days from the median start: not part of this capture
MIN_TAIL_PS = 10**12  # 1 s: how far past the last start an event may run when no span is stated
INT64_SAFE = float(2**62)  # extents are kept within this, so start + duration cannot wrap


def _bounded(x: float) -> float:
    return float(min(max(x, -INT64_SAFE), INT64_SAFE))


def find(starts: np.ndarray, stated: tuple[float, float] | None = None) -> tuple[float, float, bool]:
    """(lo, hi, whether the stated span was used) of the capture, in the unit of `starts` (float64
    ps, any origin): the stated span when it is sound, else found from the starts."""
    starts = np.asarray(starts, np.float64)
    finite = np.isfinite(starts)
    if not finite.all():  # a copy only when some are not (int64 times never are)
        starts = starts[finite]
    if stated is not None:
        lo, hi = float(stated[0]) - MARGIN_PS, float(stated[1]) + MARGIN_PS
        inside = int(np.count_nonzero((starts >= lo) & (starts <= hi)))
        if np.isfinite(lo) and np.isfinite(hi) and hi > lo and inside * 2 >= len(starts):
            return lo, hi, True
    if not len(starts):
        return 0.0, 0.0, False
    mid = _median(starts)
    near_mid = np.abs(starts - mid) <= FAR_PS
    near = starts if near_mid.all() else starts[near_mid]
    lo, last = float(near.min()), float(near.max())
    return lo, last + max(last - lo, MIN_TAIL_PS), False


def _median(x: np.ndarray) -> float:
    """np.median of finite values, without np.median's NaN check, which imports numpy.ma (10 ms)."""
    k = len(x) // 2
    if len(x) % 2:
        return float(np.partition(x, k)[k])
    part = np.partition(x, [k - 1, k])
    return (float(part[k - 1]) + float(part[k])) / 2


def outside(starts: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Which starts (float64, the unit of lo and hi) lie outside the extent."""
    s = np.asarray(starts, np.float64)
    return ~((s >= lo) & (s <= hi))


def clip(table: EventTable, hi_ps: float) -> tuple[EventTable, int]:
    """The table with every duration cut at the capture's end (`hi_ps`, same origin as start_ps), and
    how many were cut. Events already dropped if they start past `hi_ps`."""
    if not len(table):
        return table, 0
    room = np.maximum(np.float64(_bounded(hi_ps)) - table.start_ps.astype(np.float64), 0.0)
    dur = table.dur_ps
    over = dur.astype(np.float64) > room
    n = int(np.count_nonzero(over))
    if not n:
        return table, 0
    return table.with_column("dur_ps", np.where(over, room.astype(np.int64), dur).astype(dur.dtype)), n


def dropped_message(n: int, first: str, lo_text: str, hi_text: str) -> str:
    """The `capture_errors` line for events outside the capture, in the file's terms."""
    return (
        f"{n} event(s) outside the capture were dropped: {first} is outside the capture (from {lo_text} to {hi_text})"
    )


def cut_message(n: int) -> str:
    return f"{n} event(s) running past the end of the capture were cut at its end"
