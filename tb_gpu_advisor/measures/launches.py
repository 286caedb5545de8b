"""Kernel launches: the host's launch calls, the GPU work paired with them, and launches whose GPU work
the trace lost."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from tb_gpu_advisor.measures.names import NameClasses
from tb_gpu_advisor.measures.window import Window, thread_name
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct, isin, median
from tb_gpu_advisor.model.classify import STARTUP_CALL_PS
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile
from tb_gpu_advisor.model.steps import Steps

# The profiler's own word for events it lost (CUPTI's activity buffer full, records dropped); not the
# reader's note on events outside the capture (extent.dropped_message).
PROFILER_LOST = re.compile(r"\b(dropp(ed|ing)|overflow(ed)?|buffer (is |was )?full|lost)\b", re.I)


@dataclasses.dataclass(frozen=True, slots=True)
class LaunchCalls:
    """The launch calls of the capture as the trace measures them."""

    count: int
    median_us: float | None  # their median duration
    per_step: float  # launch calls in the host's steps, per step
    # the host's time per launched kernel in the steps (mean step time over launches per step: the pace
    # of the host loop, of which the call itself is a part)
    host_us_per_launch: float | None
    graph: int = 0  # of the launch calls, those that launch a whole CUDA graph
    graph_median_us: float | None = None  # their median duration
    syncs_per_step: float = 0.0  # calls in the host's steps that wait for the GPU to finish


@dataclasses.dataclass(frozen=True, slots=True)
class LostGpuEvents:
    """Launch calls whose GPU work is missing from the trace, and what the profiler said of lost events."""

    launches: int  # launch calls with a correlation id, started before the last GPU event started
    missing: int  # of them, those no GPU event carries the correlation id of
    profiler_says: tuple[str, ...]  # the profiler's messages about events it lost
    first_missing: Window | None  # the first launch without its work

    @property
    def missing_pct(self) -> float:
        return 100.0 * self.missing / self.launches if self.launches else 0.0


def launch_corr(host: EventTable) -> np.ndarray:
    """Correlation ids of the host's launch calls (sorted)."""
    return distinct(host.corr[(host.kind == Kind.LAUNCH) & (host.corr >= 0)])


def launches_paired(events: EventTable, corr: np.ndarray) -> int:
    """A GPU's events paired with a host launch call (`corr`: their correlation ids) by correlation id."""
    ev = events
    return int(isin(ev.corr[ev.corr >= 0], corr).sum()) if len(corr) else 0


def launch_calls(host: EventTable, host_steps: Steps, names: NameClasses) -> LaunchCalls:
    h = host
    sel = h.kind == Kind.LAUNCH
    durs = h.dur_ps[sel]
    steps = host_steps
    in_steps = int(np.count_nonzero(sel & (h.step >= 0))) if "step" in h else 0
    per_step = in_steps / len(steps) if len(steps) else 0.0
    graph = sel & names.by_name(h.name, names.graph_launch_name)
    syncs = int(np.count_nonzero(names.by_name(h.name, names.host_sync_name) & (h.step >= 0))) if "step" in h else 0
    return LaunchCalls(
        count=int(sel.sum()),
        # durs is this function's copy: the median may reorder it rather than copy it again
        median_us=median(durs) / 1e6 if len(durs) else None,
        per_step=per_step,
        host_us_per_launch=steps.mean_ps / per_step / 1e6 if per_step > 0 and len(steps) else None,
        graph=int(graph.sum()),
        graph_median_us=median(h.dur_ps[graph]) / 1e6 if graph.any() else None,
        syncs_per_step=syncs / len(steps) if len(steps) else 0.0,
    )


def lost_gpu_events(p: Profile, host: EventTable, device_tables: list[EventTable], names: NameClasses) -> LostGpuEvents:
    """Launches without their GPU work: a launch call's correlation id appears on no GPU event
    (`device_tables`: every GPU event once). Only launches started before the last GPU event started
    count (work launched at the very end of the capture may run after it stopped)."""
    h = host
    said = tuple(m for m in p.capture_errors if PROFILER_LOST.search(m) and "outside the capture" not in m)
    device = [t for t in device_tables if len(t)]
    if not device:
        return LostGpuEvents(0, 0, said, None)
    last = max(int(t.start_ps.max()) for t in device)
    corr = distinct(np.concatenate([t.corr[t.corr >= 0] for t in device]))
    sel = (h.kind == Kind.LAUNCH) & (h.corr >= 0) & (h.start_ps < last)
    # a memset of no bytes puts no work on the GPU: a float16 step with a GradScaler on an H100 made
    # four a step whose work is in no trace, while every kernel's was (tests/data/gpu)
    sel &= ~names.by_name(h.name, names.memset_call_name)
    missing = np.flatnonzero(sel & ~isin(h.corr, corr))
    first = None
    if len(missing):
        i = int(missing[0])
        name = p.names[int(h.name[i])]
        first = Window(
            int(h.start_ps[i]),
            int(h.end_ps[i]),
            f"{name}: its GPU work is not in the trace",
            [name],
            thread=thread_name(p, int(h.thread[i])),
        )
    return LostGpuEvents(int(sel.sum()), len(missing), said, first)


@dataclasses.dataclass(frozen=True, slots=True)
class AllocCalls:
    """The host's memory allocation calls (pinned or device memory) in the trace."""

    spans: iv.Intervals  # the union of their spans
    count: int
    median_us: float | None
    name: str  # the most frequent one's name
    thread: str  # the thread that made most of them


def alloc_calls(p: Profile, host: EventTable, names: NameClasses) -> AllocCalls:
    sel = names.by_name(host.name, names.alloc_call_name)
    if not sel.any():
        return AllocCalls(iv.EMPTY, 0, None, "", "")
    a = host.take(sel, ("start_ps", "dur_ps", "name", "thread"))
    spans = iv.union(a.start_ps, a.end_ps)  # it sorts them
    called, counts = np.unique(a.name, return_counts=True)
    threads, tcounts = np.unique(a.thread, return_counts=True)
    return AllocCalls(
        spans,
        len(a),
        median(a.dur_ps) / 1e6,
        p.names[int(called[np.argmax(counts)])],
        thread_name(p, int(threads[np.argmax(tcounts)])),
    )


def startup_spans(host: EventTable, names: NameClasses) -> iv.Intervals:
    """The host's start-up calls (model/classify.py's STARTUP_CALL by name, and runtime calls of
    STARTUP_CALL_PS or more that neither copy, wait nor allocate: a kernel launch among them, which where
    the GPU idles meanwhile loads its module), as an interval set: the launch wait in them is start-up,
    not launching (capture.warmup's, not kernels.launch-bound's)."""
    n = host.name
    runtime = names.by_name(n, names.runtime_call_name)
    if not runtime.any():
        return iv.EMPTY
    launch = host.kind == Kind.LAUNCH
    long = (host.dur_ps >= STARTUP_CALL_PS) & (~launch | names.by_name(n, names.kernel_launch_name))
    sel = (
        runtime
        & ~names.by_name(n, names.host_sync_name)
        & ~names.by_name(n, names.alloc_call_name)
        & (long | names.by_name(n, names.startup_call_name))
    )
    return iv.union(host.start_ps[sel], host.end_ps[sel]) if sel.any() else iv.EMPTY
