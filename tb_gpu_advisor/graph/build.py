"""The step graph: what decides when each thing in a captured step happens.

One graph per host file, over the window of its steps (the first step's start to the last one's end):

- the **host lane**: every thread that launches GPU work, its dependency points merged in time order:
  launch calls (each tied to the kernel, copy or memset it put on a stream, by correlation id), blocking
  calls (stream, device and event synchronisation, synchronous copies), input waits (DataLoader
  `__next__`, `IteratorGetNext`), and the step markers' starts and ends. The host's own work between
  two points (Python, the framework's dispatch, the profiler's own cost) is the gap before a point,
  kept as measured;
- the **device ops** launched in the window, per stream in order: each starts when its launch has
  reached the GPU (the launch latency), the op before it on its stream has ended (the stream's gap), and
  any op of another stream it waited on (a cross-stream event wait, inferred where neither its launch
  nor its stream explains its start) has ended.

Each constraint keeps its measured slack where it bound the op, and a typical one where it did not, so
that re-timing the graph as measured replays the capture exactly (`simulate.simulate`), and re-timing
it with a change applied (`whatif`) moves only what the change moves.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional, Sequence

import numpy as np

from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct, first_index, isin, percentile
from tb_gpu_advisor.model.classify import (
    ALLOC_CALL,
    KERNEL_LAUNCH,
    RUNTIME_API,
    STARTUP_CALL,
    STARTUP_CALL_PS,
    STEP_CONTAINERS,
)
from tb_gpu_advisor.model.profile import DEVICE_KINDS, EventTable, Flag, Kind, Profile
from tb_gpu_advisor.model.steps import Steps

# points of the host lane
LAUNCH, SYNC, INPUT, MARK_START, MARK_END = 1, 2, 3, 4, 5
# Blocking calls: the host waits for device work to finish (CUDA runtime and driver, HIP)
SYNC_NAME = re.compile(
    r"^(cuda|hip)(DeviceSynchronize|StreamSynchronize|EventSynchronize|ThreadSynchronize)"
    r"|^cu(CtxSynchronize|StreamSynchronize|EventSynchronize)"
)
# The optimizer's annotations (PyTorch's `Optimizer.step#AdamW.step`, `Optimizer.zero_grad#...`): work
# a captured graph of the forward and backward leaves outside it
OPTIMIZER = re.compile(r"^Optimizer\.(step|zero_grad)#")
PYTHON_FUNCTION = re.compile(r"\$")  # XLA's Python tracer names a function `$file:line name`
# Synchronous copies (not `...Async`): launch a copy and wait for all prior work and the copy; HIP's
# `hipMemcpyWithStream` too, which PyTorch on ROCm makes its blocking copies with (`memcpy_and_sync`: a
# 493 ms one holds the host in AMD-AGI/TraceLens's SGLang MI300X trace, docs/corpus.md)
SYNC_COPY = re.compile(
    r"^(cuda|hip)Memcpy(2D|3D)?(ToSymbol|FromSymbol)?$|^cuMemcpy(DtoH|HtoD|DtoD)?(_v2)?$|^hipMemcpyWithStream$"
)
# Host time inside ops that no compiler, graph or fusion removes (classify.ALLOC_CALL, STARTUP_CALL;
# docs/whatif.md), by what it is: the allocator's calls, the driver's start-up, CUPTI's range profiler
# replaying a kernel inside its launch call
KEPT_ALLOC, KEPT_STARTUP, KEPT_REPLAY = 1, 2, 3
# A step whose start-up work takes this share of it is a warm-up step: its host time inside ops is first
# calls, and its allocator calls the caching allocator filling its cache: start-up too (HTA's A100 AlexNet
# capture: 78% of its one step; the steady steps of the public corpus hold no call over 5 ms,
# classify.STARTUP_CALL_PS)
WARMUP_SHARE = 0.05
# A kernel whose launch reached the GPU within this much of its stream becoming free waited for its
# stream, not for something else (typical launch latency is 2-10 µs, the gap between queued kernels 1-2)
TOLERANCE_PS = 20_000_000
DEFAULT_LATENCY_PS = 5_000_000
DEFAULT_GAP_PS = 1_000_000
MAX_LATENCY_PS = 50_000_000
MAX_QUEUE_GAP_PS = 5_000_000


@dataclasses.dataclass
class StepGraph:
    """Arrays over the host lane's points (`h_*`) and the device ops launched in the window (`d_*`),
    times in ps from the profile's start. See the module's doc."""

    steps: int  # steps in the window
    window: tuple[int, int]  # observed (start, end) of the steps' window
    lane_start: int  # where the host lane starts: the first step's marker
    # host lane, in time order
    h_kind: np.ndarray  # int8: LAUNCH, SYNC, INPUT, MARK_START, MARK_END
    h_start: np.ndarray  # int64, observed
    h_dur: np.ndarray  # int64, observed
    h_gap: np.ndarray  # int64: the host's own work before the point (start - the running end before)
    h_tail: np.ndarray  # int64: a sync's time after the work it waited for had ended (else its duration)
    h_step: np.ndarray  # int32: the step the point is in (by its start)
    h_events: np.ndarray  # int32: host events recorded in the gap before the point (for the profiler's cost)
    h_py_events: np.ndarray  # int32: of which Python calls (PyTorch's with_stack, JAX's Python tracer)
    h_free: np.ndarray  # int64: of the gap, the time outside every op, runtime call and dispatch
    # of the gap, the time inside runtime calls that are not dispatch (no compiler removes them): the
    # allocator's calls (cudaMalloc, hipFree, ...) in steady steps, and start-up work (context, stream and
    # module creation, long calls, a warm-up step's allocations)
    h_alloc: np.ndarray  # int64
    h_startup: np.ndarray  # int64
    # int64: of a point's duration, what no fix removes: a kernel's first launch loading its module while
    # the GPU idles (start-up), every launch of a capture under CUPTI's range profiler (its replay)
    h_kept_dur: np.ndarray
    h_name: np.ndarray  # int32: name id (-1 for markers)
    h_op: np.ndarray  # int32: the innermost framework op around the point (-1 none)
    h_call: np.ndarray  # int64: that op call's row in the host table (-1 none): one id per call
    h_optimizer: np.ndarray  # bool: the point runs in the optimizer's step or zero_grad
    h_thread: np.ndarray  # int32: index into Profile.threads (-1 for markers)
    main_thread: int  # the thread that marks the steps (the training loop's), -1 if none
    # device ops launched in the window, per stream in start order (streams one after the other)
    d_stream: np.ndarray  # int32, index into Profile.streams
    d_device: np.ndarray  # int32, GPU id
    d_start: np.ndarray  # int64, observed
    d_dur: np.ndarray  # int64
    d_launch: np.ndarray  # int32: host point that launched it
    d_lat: np.ndarray  # int64: from its launch's start to its start, where that bound it (else typical)
    d_gap: np.ndarray  # int64: from the previous op on its stream ending, where that bound it (else typical)
    d_dep: np.ndarray  # int32: device op of another stream it waited for (-1 none)
    d_dep_gap: np.ndarray  # int64
    d_kind: np.ndarray  # int8 Kind
    d_name: np.ndarray  # int32
    d_op: np.ndarray  # int32, the framework op that launched it (-1 unknown)
    d_shape: np.ndarray  # int32, name id of that op call's input shapes (-1 unknown)
    d_flags: np.ndarray  # uint16 Flag
    d_row: np.ndarray  # int64: the op's row in its stream's table
    stream_ready: np.ndarray  # int64 per stream: when work queued before the window frees it
    latency_ps: int  # typical launch latency
    queue_gap_ps: int  # typical gap between queued ops on a stream
    # the host's calls kept apart (h_alloc, h_startup, h_kept_dur): their rows in the host table, what
    # each is (KEPT_ALLOC, KEPT_STARTUP, KEPT_REPLAY) and its step
    k_row: np.ndarray  # int64
    k_kind: np.ndarray  # int8
    k_step: np.ndarray  # int32
    k_op: np.ndarray  # int32: the innermost framework op it ran in (-1 none)
    warmup: np.ndarray  # bool per step: its start-up work is WARMUP_SHARE of it or more
    range_records: int  # CUPTI's range profiler's records in the capture (0: not a range-profiled capture)

    @property
    def host_points(self) -> int:
        return len(self.h_kind)

    @property
    def device_ops(self) -> int:
        return len(self.d_kind)

    @property
    def observed_step_ps(self) -> float:
        return (self.window[1] - self.window[0]) / self.steps if self.steps else 0.0

    def nbytes(self) -> int:
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))


# a device table and, for a table of one stream, its index (None: the table has a `stream` column)
DeviceTable = tuple[EventTable, Optional[int]]


def build(
    p: Profile, steps: Steps, host: EventTable | None = None, device_tables: Sequence[DeviceTable] | None = None
) -> StepGraph | None:
    """The step graph of a profile in its steps' window (a CPU-only capture's has no device ops); None
    with no steps."""
    if not len(steps):
        return None
    w0, w1 = int(steps.start_ps[0]), int(steps.end_ps[-1])
    # the analysis's merged tables where given (the per-line tables are views of them: reading those
    # would make them whole), else the profile's own
    host = p.host_events() if host is None else host
    names = p.names.strings
    is_sync_name = _name_mask(names, SYNC_NAME) | _name_mask(names, SYNC_COPY)
    is_copy_name = _name_mask(names, SYNC_COPY)
    kind = host.kind
    tables: list[DeviceTable] = (
        list(device_tables) if device_tables is not None else [(s.events, i) for i, s in enumerate(p.streams)]
    )
    # device work that ends a window's width before the steps matters to none of them: a capture of
    # thousands of steps has its graph built over its last ones (measures.capture.GRAPH_STEPS)
    near_ps = w0 - (w1 - w0)
    is_launch = _launches(host, tables, near_ps)
    # the threads that launch, wait for the GPU or for input, or mark the steps
    lane_kind = is_launch | (kind == Kind.INPUT_WAIT) | (kind == Kind.STEP) | is_sync_name[host.name]
    lane_threads = np.zeros(len(p.threads) + 1, bool)
    lane_threads[host.thread[lane_kind]] = True
    on_lane = lane_threads[host.thread]
    start, end = host.start_ps, host.end_ps
    mk_start, mk_end = _markers(host, steps, on_lane)
    # the lane from the first step's marker (its launches can precede the step's start, which waits
    # for work queued before it), a wait begun before it included
    lane0 = int(min(mk_start[0], w0))
    in_window = on_lane & (end > lane0) & (start < w1)

    is_sync = is_sync_name[host.name]
    is_input = kind == Kind.INPUT_WAIT
    pt = in_window & (is_sync | is_launch | is_input)
    rows = np.flatnonzero(pt)
    p_kind = np.where(is_sync[rows], SYNC, np.where(is_input[rows], INPUT, LAUNCH)).astype(np.int8)
    p_start, p_dur = start[rows], host.dur_ps[rows]
    p_name = host.name[rows]
    p_corr = np.where(is_launch[rows], host.corr[rows], -1)
    p_copy = is_copy_name[p_name]
    p_corr = np.where(p_copy, host.corr[rows], p_corr)  # a synchronous copy launches and waits

    # step markers' starts and ends, as points (zero duration); without markers a step's host part
    # ends with the last point in it
    if mk_end is None:
        step = np.clip(np.searchsorted(mk_start, p_start, side="right") - 1, 0, len(mk_start) - 1)
        mk_end = mk_start.copy()
        np.maximum.at(mk_end, step, p_start + p_dur)
        mk_end = np.minimum(mk_end, np.asarray(steps.end_ps, np.int64))
    m_kind = np.r_[np.full(len(mk_start), MARK_START, np.int8), np.full(len(mk_end), MARK_END, np.int8)]
    m_time = np.r_[mk_start, mk_end]
    all_kind = np.r_[p_kind, m_kind]
    all_start = np.r_[p_start, m_time]
    all_dur = np.r_[p_dur, np.zeros(len(m_time), np.int64)]
    all_name = np.r_[p_name, np.full(len(m_time), -1, np.int32)]
    all_corr = np.r_[p_corr, np.full(len(m_time), -1, np.int64)]
    all_row = np.r_[rows, np.full(len(m_time), -1, np.int64)]
    # markers sort before points at the same time (starts) and after them (ends)
    tie = np.r_[np.ones(len(rows), np.int8), np.zeros(len(mk_start), np.int8), np.full(len(mk_end), 2, np.int8)]
    order = np.lexsort((tie, all_start))
    h_kind, h_start, h_dur = all_kind[order], all_start[order], all_dur[order]
    h_name, h_corr, h_row = all_name[order], all_corr[order], all_row[order]
    h_end = h_start + h_dur
    run_end = np.maximum.accumulate(np.r_[lane0, h_end[:-1]]) if len(h_end) else h_end
    h_gap = h_start - run_end
    h_step = np.clip(np.searchsorted(mk_start, h_start, side="right") - 1, 0, len(mk_start) - 1).astype(np.int32)
    # host events recorded in each gap (what the profiler adds its cost to): events of the lane's
    # threads starting after the running end before the point and before the point
    python = _python_calls(p, host)
    recorded = in_window & ~pt & (kind != Kind.STEP)
    h_events = _count_in(start[recorded & ~python], run_end, h_start)
    h_py_events = _count_in(start[recorded & python], run_end, h_start)
    # the host's own work outside every framework op, runtime call and dispatch (Python between them:
    # the user's loop, logging, data preparation)
    containers = _name_mask(names, STEP_CONTAINERS)[host.name]
    dispatch = in_window & ~python & ~containers & (kind != Kind.STEP) & (kind != Kind.INPUT_WAIT)
    covered = iv.union(start[dispatch], end[dispatch])
    h_free = np.maximum(h_gap, 0) - iv.measure_in(covered, run_end, np.maximum(h_start, run_end))
    h_free = np.clip(h_free, 0, np.maximum(h_gap, 0))
    # the host's calls that are not dispatch (KEPT_*), and each gap's time inside them
    dur = host.dur_ps
    runtime = in_window & ~pt & _name_mask(names, RUNTIME_API)[host.name] & ~is_sync
    alloc_ev = runtime & _name_mask(names, ALLOC_CALL)[host.name]
    startup_ev = runtime & ~alloc_ev & (_name_mask(names, STARTUP_CALL)[host.name] | (dur >= STARTUP_CALL_PS))
    gap_end = np.maximum(h_start, run_end)
    inside = np.maximum(h_gap, 0) - h_free  # the gap's time inside ops, runtime calls and dispatch
    h_alloc = np.minimum(iv.measure_in(iv.union(start[alloc_ev], end[alloc_ev]), run_end, gap_end), inside)
    h_startup = iv.measure_in(iv.union(start[startup_ev], end[startup_ev]), run_end, gap_end)
    h_startup = np.clip(h_startup, 0, inside - h_alloc)
    h_thread = column_at(host.thread, h_row)
    marker_threads = host.thread[kind == Kind.STEP]
    main_thread = int(np.bincount(marker_threads).argmax()) if len(marker_threads) else -1
    op_row = _enclosing_ops(host, h_row, on_lane)
    h_op = column_at(host.op, op_row)
    h_shape = column_at(
        host.peek_at("shape", np.maximum(op_row, 0)) if len(host) else np.zeros(0, np.int32), op_row, full=False
    )

    h_optimizer = _inside(host, np.flatnonzero(on_lane & _name_mask(names, OPTIMIZER)[host.name]), h_start)
    # device ops launched by the lane's points
    d = _device(p, tables, h_corr, h_start, near_ps) or _no_device(len(p.streams))
    # the op that launched each device op: the call its launch ran in (the reader's attribution where
    # the launch ran in none)
    from_launch = h_op[d["launch"]]
    d["shape"] = np.where(from_launch >= 0, h_shape[d["launch"]], d["shape"]).astype(np.int32)
    d["op"] = np.where(from_launch >= 0, from_launch, d["op"]).astype(np.int32)
    # a sync's tail: its time after the device work launched before it had ended
    h_tail = h_dur.copy()
    syncs = np.flatnonzero(h_kind == SYNC)
    if len(syncs):
        done = _done_before(d["launch"], d["start"] + d["dur"], syncs, len(h_kind))
        waited_until = np.maximum(h_start[syncs], done)
        h_tail[syncs] = np.clip(h_end[syncs] - waited_until, 0, h_dur[syncs])
    # launches whose time no fix removes: under CUPTI's range profiler every launch call replays its
    # kernel; else a long kernel launch while the GPU had nothing queued (the work launched before it had
    # ended before its last STARTUP_CALL_PS) loads its module. A launch held by a full queue has work
    # queued; graph/profiler.py takes it for a typical one.
    range_records = int(((host.flags & Flag.PROFILER_RANGE) > 0).sum()) if len(host) else 0
    h_kept_dur = np.zeros(len(h_kind), np.int64)
    launches = np.flatnonzero((h_kind == LAUNCH) & _name_mask(names, KERNEL_LAUNCH)[h_name])
    if range_records:
        h_kept_dur[launches] = h_dur[launches]
    elif len(launches):
        long = launches[h_dur[launches] >= STARTUP_CALL_PS]
        if len(long):
            done = _done_before(d["launch"], d["start"] + d["dur"], long, len(h_kind))
            idle = done < h_end[long] - STARTUP_CALL_PS
            h_kept_dur[long[idle]] = h_dur[long[idle]]
    # the calls kept apart, with their steps; a warm-up step's allocations are start-up
    kept_launch = np.flatnonzero(h_kept_dur > 0)
    k_row = np.r_[np.flatnonzero(alloc_ev), np.flatnonzero(startup_ev), h_row[kept_launch]].astype(np.int64)
    k_kind = np.r_[
        np.full(int(alloc_ev.sum()), KEPT_ALLOC, np.int8),
        np.full(int(startup_ev.sum()), KEPT_STARTUP, np.int8),
        np.full(len(kept_launch), KEPT_REPLAY if range_records else KEPT_STARTUP, np.int8),
    ]
    k_step = np.clip(np.searchsorted(mk_start, start[k_row], side="right") - 1, 0, len(mk_start) - 1).astype(np.int32)
    k_op = column_at(host.op, _enclosing_ops(host, k_row, on_lane))
    n_steps = len(mk_start)
    startup_step = np.bincount(h_step, h_startup, n_steps) + (
        np.bincount(h_step, h_kept_dur, n_steps) if not range_records else 0.0
    )
    span = np.maximum(np.asarray(steps.end_ps, np.int64) - np.asarray(steps.start_ps, np.int64), 1)[:n_steps]
    warmup = startup_step >= WARMUP_SHARE * span
    if warmup.any():
        # a warm-up step's host time inside ops is its first calls' (cuDNN's plans, the framework's lazy
        # initialisation: 439 ms in the AlexNet trace's first `aten::cudnn_convolution` before its launch,
        # outside any runtime call), and its allocator calls are the cache filling: start-up, all of it
        moved = warmup[h_step]
        h_startup = np.where(moved, inside, h_startup)
        h_alloc = np.where(moved, 0, h_alloc)
        k_kind = np.where((k_kind == KEPT_ALLOC) & warmup[k_step], KEPT_STARTUP, k_kind).astype(np.int8)
    return StepGraph(
        steps=len(mk_start),
        window=(w0, w1),
        lane_start=lane0,
        h_kind=h_kind,
        h_start=h_start,
        h_dur=h_dur,
        h_gap=h_gap,
        h_tail=h_tail,
        h_step=h_step,
        h_events=h_events,
        h_py_events=h_py_events,
        h_free=h_free,
        h_alloc=h_alloc.astype(np.int64),
        h_startup=h_startup.astype(np.int64),
        h_kept_dur=h_kept_dur,
        h_name=h_name.astype(np.int32),
        h_op=h_op,
        h_call=op_row.astype(np.int64),
        h_optimizer=h_optimizer,
        h_thread=h_thread,
        main_thread=main_thread,
        d_stream=d["stream"],
        d_device=d["device"],
        d_start=d["start"],
        d_dur=d["dur"],
        d_launch=d["launch"],
        d_lat=d["lat"],
        d_gap=d["gap"],
        d_dep=d["dep"],
        d_dep_gap=d["dep_gap"],
        d_kind=d["kind"],
        d_name=d["name"],
        d_op=d["op"],
        d_shape=d["shape"],
        d_flags=d["flags"],
        d_row=d["row"],
        stream_ready=d["ready"],
        latency_ps=d["latency"],
        queue_gap_ps=d["queue_gap"],
        k_row=k_row,
        k_kind=k_kind,
        k_step=k_step,
        k_op=k_op,
        warmup=warmup,
        range_records=range_records,
    )


def column_at(col: np.ndarray, rows: np.ndarray, full: bool = True) -> np.ndarray:
    """`col` at `rows` (int32), -1 where a row is -1; `full`: `col` is the whole column (else it is
    already taken at max(rows, 0))."""
    if not len(col):
        return np.full(len(rows), -1, np.int32)
    vals = col[np.maximum(rows, 0)] if full else col
    return np.where(rows >= 0, vals, -1).astype(np.int32)


def _name_mask(names: list[str], pattern: re.Pattern[str]) -> np.ndarray:
    """Which interned names `pattern` matches at their start (`pattern.match`), by id; the extra last
    entry (-1, no name) is False. One scan of the names joined, then each hit confirmed: no call per
    name (a capture can hold tens of thousands of distinct names)."""
    out = np.zeros(len(names) + 1, bool)
    if not names:
        return out
    lengths = np.fromiter(map(len, names), np.int64, len(names))
    starts = np.r_[0, np.cumsum(lengths + 1)[:-1]]
    lines = re.compile("(?m)^(?:" + pattern.pattern + ")", pattern.flags & ~re.UNICODE)
    for m in lines.finditer("\n".join(names)):
        i = int(np.searchsorted(starts, m.start(), side="right")) - 1
        if starts[i] == m.start() and pattern.match(names[i]):  # not inside a name holding a newline
            out[i] = True
    return out


def _count_in(starts: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How many of `starts` fall in each [lo, hi)."""
    s = np.sort(starts)
    return np.maximum(np.searchsorted(s, hi) - np.searchsorted(s, lo), 0).astype(np.int32)


def _python_calls(p: Profile, host: EventTable) -> np.ndarray:
    """Host events that are Python calls: PyTorch's `python_function`s, JAX's Python tracer's (`$file:line
    name`)."""
    py = (host.flags & Flag.PYTHON) > 0
    return py | _name_mask(p.names.strings, PYTHON_FUNCTION)[host.name]


def _launches(host: EventTable, tables: list[DeviceTable], near_ps: int) -> np.ndarray:
    """Host events that put work on a GPU: launch calls, and any host event whose correlation id a
    device event ending after `near_ps` carries (XLA's thunks); of several sharing an id, the one
    that started last (the innermost). (The host can run far ahead of the GPU: only device times
    are windowed.)"""
    corr = host.corr
    dev = [t.corr[t.start_ps + t.dur_ps > near_ps] for t, _ in tables if len(t)]
    on_device = np.zeros(len(host), bool)
    if dev:
        has = np.flatnonzero(corr >= 0)
        on_device[has] = first_index(np.concatenate(dev), corr[has]) >= 0
    cand = np.flatnonzero(((host.kind == Kind.LAUNCH) & (corr >= 0)) | on_device)
    if not len(cand):
        return on_device
    order = cand[np.lexsort((host.start_ps[cand], corr[cand]))]
    last = np.r_[corr[order][1:] != corr[order][:-1], True]
    out = np.zeros(len(host), bool)
    out[order[last]] = True
    return out


def _markers(host: EventTable, steps: Steps, on_lane: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Each step's marker start and end on the host: the step marker (`ProfilerStep#N`, `train`) of the
    step's number (a host that runs ahead marks a step long before its work runs), else the one that
    started last at or before the step's start; without markers, the steps' starts and no ends."""
    n = len(steps)
    s0 = np.asarray(steps.start_ps, np.int64)
    marks = np.flatnonzero(on_lane & (host.kind == Kind.STEP))
    if len(marks) >= n:
        m_start = host.start_ps[marks]
        order = np.argsort(m_start, kind="stable")
        marks, m_start = marks[order], m_start[order]
        m_end, m_num = host.end_ps[marks], host.step_num[marks]
        k = first_index(m_num, np.asarray(steps.number, np.int64))
        if (k < 0).any() or len(distinct(m_num)) != len(m_num):
            k = np.searchsorted(m_start, s0, side="right") - 1
        if (k >= 0).all():
            return m_start[k].copy(), np.maximum(m_end[k], m_start[k])
    return s0.copy(), None


def _inside(host: EventTable, spans: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Whether each time falls inside one of the host events `spans` (rows; they do not nest)."""
    if not len(spans):
        return np.zeros(len(t), bool)
    s = host.start_ps[spans]
    order = np.argsort(s, kind="stable")
    s, e = s[order], host.end_ps[spans][order]
    k = np.searchsorted(s, t, side="right") - 1
    return (k >= 0) & (t < e[np.maximum(k, 0)])


def _enclosing_ops(host: EventTable, rows: np.ndarray, on_lane: np.ndarray) -> np.ndarray:
    """The framework op call each point ran in (its row in `host`): the latest-starting framework op
    on its thread that contains it (-1 for markers and points outside every op)."""
    out = np.full(len(rows), -1, np.int64)
    ops = np.flatnonzero(on_lane & (host.kind == Kind.FRAMEWORK_OP))
    real = rows >= 0
    if not len(ops) or not real.any():
        return out
    thread, start, end = host.thread, host.start_ps, host.end_ps
    for t in distinct(thread[rows[real]]):
        mine = ops[thread[ops] == t]
        if not len(mine):
            continue
        o_start, o_end = start[mine], end[mine]
        sel = np.flatnonzero(real)
        sel = sel[thread[rows[sel]] == t]
        s = start[rows[sel]]
        # candidates: ops started at or before the point; walk back over the few latest ones for one
        # that still runs (ops nest, so the innermost running op is the latest-starting running one)
        k = np.searchsorted(o_start, s, side="right") - 1
        found = np.full(len(sel), -1, np.int64)
        left = np.ones(len(sel), bool)
        for back in range(8):
            kk = k - back
            ok = left & (kk >= 0)
            if not ok.any():
                break
            hit = ok & (o_end[np.maximum(kk, 0)] >= s)
            found[hit] = mine[kk[hit]]
            left &= ~hit
        out[sel] = found
    return out


def _device(
    p: Profile, tables: Sequence[DeviceTable], h_corr: np.ndarray, h_start: np.ndarray, near_ps: int
) -> dict[str, Any] | None:
    """The device ops the lane's points launched, per stream in start order, with each one's launch
    latency, stream gap and cross-stream wait (see the module's doc); of the ops ending after
    `near_ps`."""
    parts = []
    for ev, fixed in tables:
        if not len(ev):
            continue
        dev = isin(ev.kind, np.asarray(DEVICE_KINDS, np.int8)) & (ev.start_ps + ev.dur_ps > near_ps)
        stream = ev.column("stream") if fixed is None else None
        indices: list[int] = distinct(stream[dev]).tolist() if stream is not None else [int(fixed or 0)]
        for si in indices:
            rows = np.flatnonzero(dev & (stream == si)) if stream is not None else np.flatnonzero(dev)
            if len(rows) and 0 <= si < len(p.streams):
                parts.append((si, p.streams[si].device_id, ev, rows))
    if not parts:
        return None
    launched = np.flatnonzero(h_corr >= 0)
    corr_sorted = h_corr[launched]
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("stream", "device", "start", "dur", "launch", "kind")}
    cols.update({k: [] for k in ("name", "op", "shape", "flags", "row", "prev_end")})
    ready = np.zeros(len(p.streams), np.int64)
    for si, device_id, ev, rows in parts:
        corr = ev.corr[rows]
        pos = first_index(corr_sorted, corr) if len(corr_sorted) else np.full(len(corr), -1)
        has = (corr >= 0) & (pos >= 0)
        st, en = ev.start_ps[rows], ev.start_ps[rows] + ev.dur_ps[rows]
        # work queued before the window (launched earlier, or by no point of the lane) that still runs
        # when the window's own work starts: the stream is free only after it
        mine = rows[has]
        if not len(mine):
            continue
        first = int(ev.start_ps[mine].min())
        before = ~has & (st <= first)
        ready[si] = max(int(en[before].max()) if before.any() else 0, 0)
        prev_end = np.r_[ready[si], en[:-1]]  # the previous op on the stream, any op
        keep = np.flatnonzero(has)
        cols["stream"].append(np.full(len(keep), si, np.int32))
        cols["device"].append(np.full(len(keep), device_id, np.int32))
        cols["start"].append(st[keep])
        cols["dur"].append(ev.dur_ps[rows][keep])
        cols["launch"].append(launched[pos[keep]].astype(np.int32))
        cols["kind"].append(ev.kind[rows][keep])
        cols["name"].append(ev.name[rows][keep])
        cols["op"].append(ev.op[rows][keep] if "op" in ev else np.full(len(keep), -1, np.int32))
        cols["shape"].append(ev.peek_at("shape", rows[keep]) if "shape" in ev else np.full(len(keep), -1, np.int32))
        cols["flags"].append(ev.flags[rows][keep])
        cols["row"].append(rows[keep].astype(np.int64))
        cols["prev_end"].append(prev_end[keep])
    if not cols["start"]:
        return None
    d = {k: np.concatenate(v) for k, v in cols.items()}
    lat_obs = d["start"] - h_start[d["launch"]]
    gap_obs = d["start"] - d["prev_end"]
    # typical launch latency: on ops whose stream was idle (their launch bound them); typical gap
    # between queued ops: the short end of the gaps seen (a stream-bound op follows its predecessor
    # within a few µs)
    idle = gap_obs > TOLERANCE_PS
    latency = int(percentile(lat_obs[idle], 25)) if idle.sum() >= 5 else DEFAULT_LATENCY_PS
    latency = int(np.clip(latency, 1_000_000, MAX_LATENCY_PS))
    ok = gap_obs >= 0
    queue_gap = int(percentile(gap_obs[ok], 10)) if ok.sum() >= 5 else DEFAULT_GAP_PS
    queue_gap = int(np.clip(queue_gap, 0, MAX_QUEUE_GAP_PS))
    ex_lat = lat_obs - latency
    ex_gap = gap_obs - queue_gap
    launch_bound = ex_lat <= ex_gap
    lat = np.where(launch_bound, lat_obs, np.minimum(latency, lat_obs))
    gap = np.where(launch_bound, np.minimum(queue_gap, gap_obs), gap_obs)
    dep = np.full(len(lat), -1, np.int32)
    dep_gap = np.zeros(len(lat), np.int64)
    # neither bound it: it waited for another stream (an event), where one ended just before it
    other = np.flatnonzero((np.minimum(ex_lat, ex_gap) > TOLERANCE_PS))
    if len(other) and len(distinct(d["stream"])) > 1:
        end = d["start"] + d["dur"]
        order = np.argsort(end, kind="stable")
        e_sorted = end[order]
        for j in other:
            k = np.searchsorted(e_sorted, d["start"][j], side="right") - 1
            while k >= 0 and d["stream"][order[k]] == d["stream"][j]:
                k -= 1
            if k >= 0 and d["start"][j] - e_sorted[k] <= TOLERANCE_PS:
                dep[j] = order[k]
                dep_gap[j] = d["start"][j] - e_sorted[k]
                lat[j] = min(latency, lat_obs[j])
                gap[j] = min(queue_gap, gap_obs[j])
    out: dict[str, Any] = dict(d)
    out.update(lat=lat, gap=gap, dep=dep, dep_gap=dep_gap, ready=ready, latency=latency, queue_gap=queue_gap)
    return out


def _no_device(streams: int) -> dict:
    """The device part of a graph with nothing launched (a CPU-only capture)."""
    i32, i64 = np.zeros(0, np.int32), np.zeros(0, np.int64)
    d: dict[str, Any] = {k: i32 for k in ("stream", "device", "launch", "name", "op", "shape", "dep")}
    d.update({k: i64 for k in ("start", "dur", "row", "lat", "gap", "dep_gap")})
    d.update(kind=np.zeros(0, np.int8), flags=np.zeros(0, np.uint16), ready=np.zeros(streams, np.int64))
    d.update(latency=DEFAULT_LATENCY_PS, queue_gap=DEFAULT_GAP_PS)
    return d


def _done_before(d_launch: np.ndarray, d_end: np.ndarray, points: np.ndarray, n: int) -> np.ndarray:
    """For each point, the latest end of the device ops launched by earlier points."""
    last = np.full(n + 1, np.iinfo(np.int64).min, np.int64)
    np.maximum.at(last, d_launch + 1, d_end)
    run = np.maximum.accumulate(last)
    return run[points]
