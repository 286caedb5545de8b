"""Re-timing a step graph: each host point starts after the host's own work before it, each device op
when its launch has reached the GPU, its stream is free and any op it waits for on another stream has
ended; a blocking call ends when the work launched before it has.

The host lane runs as a running sum between blocking calls, and each stream as a max-plus scan
(end_j = max(ready_j + dur_j, end_(j-1) + gap_j + dur_j), solved with a running maximum), so that a
segment between two blocking calls costs a few array operations, not a loop over its events. With the
graph as measured it replays the capture (tests/test_graph.py checks it on real captures); a what-if
passes changed durations, gaps and flags.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.graph.build import INPUT, MARK_END, MARK_START, SYNC, StepGraph
from tb_gpu_advisor.model.arrays import distinct, median

NEVER = np.iinfo(np.int64).min // 4


@dataclasses.dataclass
class Timing:
    """A graph's simulated times (ps) and its steps."""

    h_start: np.ndarray
    h_end: np.ndarray
    d_start: np.ndarray
    d_end: np.ndarray
    step_start: np.ndarray  # per step, the kineto rule (torch-tb-profiler's) on simulated times
    step_end: np.ndarray
    window_ps: int  # the first step's start to the last one's end

    @property
    def step_ps(self) -> float:
        """Mean step, ps."""
        n = len(self.step_start)
        return self.window_ps / n if n else 0.0

    @property
    def period_ps(self) -> float:
        """The steady state's step, ps: the median step (a first step that waits for work queued before
        the capture, or a last one that holds the profiler's own stop, left out by it); the mean step
        with fewer than three steps."""
        n = len(self.step_end)
        return median(self.step_end - self.step_start) if n >= 3 else self.step_ps


@dataclasses.dataclass
class Changes:
    """The values of a graph a what-if can change (`of` gives the graph's own)."""

    h_gap: np.ndarray  # the host's own work before each point
    h_dur: np.ndarray  # each point's duration (launches, input waits)
    sync_waits: np.ndarray  # bool per point: a blocking call still waits for the GPU
    d_dur: np.ndarray
    d_lat: np.ndarray
    d_gap: np.ndarray
    d_dep: np.ndarray  # -1 drops a cross-stream wait
    # of each gap and point, the host time that is not dispatch, as the changes have left it (the graph's
    # h_alloc, h_startup, h_kept_dur): what no compiler, graph or fusion removes
    h_alloc: np.ndarray
    h_startup: np.ndarray
    h_kept_dur: np.ndarray

    @classmethod
    def of(cls, g: StepGraph) -> Changes:
        return cls(
            g.h_gap.copy(),
            g.h_dur.copy(),
            g.h_kind == SYNC,
            g.d_dur.copy(),
            g.d_lat.copy(),
            g.d_gap.copy(),
            g.d_dep.copy(),
            g.h_alloc.copy(),
            g.h_startup.copy(),
            g.h_kept_dur.copy(),
        )

    def kept(self) -> np.ndarray:
        """Each gap's host time no compiler, graph or fusion removes (the allocator's calls, start-up
        work), at most the gap as the changes have left it."""
        return np.clip(self.h_alloc + self.h_startup, 0, np.maximum(self.h_gap, 0))


def simulate(g: StepGraph, c: Changes | None = None) -> Timing:
    c = c or Changes.of(g)
    n = g.host_points
    gap = c.h_gap
    waits = c.sync_waits & (g.h_kind == SYNC)
    # a sync that waits: its duration is its tail after the wait; one that does not: its tail alone
    dur = np.where(g.h_kind == SYNC, g.h_tail, c.h_dur)
    d_dur, d_lat, d_gap, d_dep = c.d_dur, c.d_lat, c.d_gap, c.d_dep

    h_start = np.zeros(n, np.int64)
    h_end = np.zeros(n, np.int64)
    d_start = np.zeros(g.device_ops, np.int64)
    d_end = np.zeros(g.device_ops, np.int64)
    streams = distinct(g.d_stream)
    # per stream: its ops (in order) and the points that launched them
    ops_of = {s: np.flatnonzero(g.d_stream == s) for s in streams}
    launch_of = {s: g.d_launch[ops_of[s]] for s in streams}
    stream_end = {s: int(g.stream_ready[s]) for s in streams}
    done_so_far = NEVER  # the latest end of device work launched so far
    has_deps = bool((d_dep >= 0).any())

    cuts = np.flatnonzero(waits)
    ends_at = distinct(np.concatenate([[0], cuts + 1, [n]]).astype(np.int64)) if len(cuts) else np.array([0, n])
    # each stream's ops launched in each segment: [lo, hi) into the stream's ops
    seg = {s: np.searchsorted(launch_of[s], ends_at) for s in streams}
    run_end = g.lane_start
    for x in range(len(ends_at) - 1):
        a, b = int(ends_at[x]), int(ends_at[x + 1])
        if a >= b:
            continue
        # the segment's points run as a sum, a waiting sync at its end starting after them
        last_waits = bool(waits[b - 1])
        step = np.maximum(gap[a:b] + dur[a:b], 0)
        ends = run_end + np.cumsum(step)
        starts = ends - step + gap[a:b]
        h_start[a:b] = starts
        h_end[a:b] = starts + dur[a:b]
        before = run_end
        run_end = int(ends[-1])
        # the device ops these points launched (a synchronous copy's too), per stream, continuing
        # each stream's scan
        active = [(s, int(seg[s][x]), int(seg[s][x + 1])) for s in streams if seg[s][x] < seg[s][x + 1]]
        for _ in range(3 if has_deps else 1):
            for s, lo, hi in active:
                ops = ops_of[s][lo:hi]
                ready = h_start[g.d_launch[ops]] + d_lat[ops]
                if has_deps:
                    dep = d_dep[ops]
                    has = dep >= 0
                    if has.any():
                        ready[has] = np.maximum(ready[has], d_end[dep[has]] + g.d_dep_gap[ops][has])
                u = ready + d_dur[ops]
                w = np.cumsum(d_gap[ops] + d_dur[ops])
                e = w + np.maximum.accumulate(np.maximum(u - w, stream_end[s]))
                d_end[ops] = e
                d_start[ops] = e - d_dur[ops]
        for s, lo, hi in active:
            ops = ops_of[s]
            stream_end[s] = int(d_end[ops[hi - 1]])
            done_so_far = max(done_so_far, int(d_end[ops[lo:hi]].max()))
        if last_waits:
            i = b - 1
            h_end[i] = max(int(h_start[i]), done_so_far) + dur[i]
            run_end = max(int(ends[-2]) if b - 1 > a else before, int(h_end[i]))
    return _steps(g, h_start, h_end, d_start, d_end)


def _steps(g: StepGraph, h_start: np.ndarray, h_end: np.ndarray, d_start: np.ndarray, d_end: np.ndarray) -> Timing:
    """Steps on simulated times, by the rule of the profile's steps (torch-tb-profiler's): step k runs
    from the later of step k-1's end and its marker's start to the later of its marker's end and the
    end of the device work launched in it."""
    ms = h_start[g.h_kind == MARK_START]
    me = h_start[g.h_kind == MARK_END]
    n = min(len(ms), len(me))
    ms, me = ms[:n], me[:n]
    dev_last = np.full(n, NEVER, np.int64)
    if g.device_ops and n:
        step_of = g.h_step[g.d_launch]
        np.maximum.at(dev_last, np.clip(step_of, 0, n - 1), d_end)
    end = np.maximum.accumulate(np.maximum(me, dev_last)) if n else me
    # the first step starts once work queued before it has run (torch-tb-profiler's rule)
    queued = int(g.stream_ready.max()) if len(g.stream_ready) else NEVER
    start = np.maximum(ms, np.r_[max(int(ms[0]), queued), end[:-1]]) if n else ms
    window = int(end[-1] - start[0]) if n else 0
    return Timing(h_start, h_end, d_start, d_end, start, end, window)


def input_points(g: StepGraph) -> np.ndarray:
    return np.flatnonzero(g.h_kind == INPUT)
