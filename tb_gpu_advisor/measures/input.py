"""The input pipeline: the host waiting for input, the copies of the model's input, tf.data's stages."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import numpy as np

from tb_gpu_advisor.measures.names import MULTI_WORKER_LOADER, PINNED_COPY, NameClasses
from tb_gpu_advisor.measures.window import Window, thread_name
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct, isin, unique_inverse
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile
from tb_gpu_advisor.model.steps import Steps


def input_copies(events: EventTable, names: NameClasses) -> np.ndarray:
    """Mask of a GPU's host-to-device copies of the model's input (attributed to the iterator's get-next)."""
    return (events.kind == Kind.MEMCPY_H2D) & names.by_op(events.op, names.input_op)


def input_copy_per_step(
    events: EventTable, copies: np.ndarray, compute_busy: tuple[iv.Intervals, ...], steps: Steps
) -> np.ndarray:
    """Input copies the step waits on (not under compute: `compute_busy`, sets of it), per step."""
    ev = events
    waited = iv.subtract_each(iv.union(ev.start_ps[copies], ev.end_ps[copies]), compute_busy)
    return iv.measure_in(waited, steps.start_ps, steps.end_ps).astype(float)


def stage_self_time(p: Profile, host: EventTable) -> dict[str, float]:
    """Self time (ps) of each tf.data stage (`Iterator::...`) over the capture, by stage name: a stage
    nested in another on the same thread is subtracted from its parent."""
    out: dict[str, float] = defaultdict(float)
    names = p.names
    sel = np.flatnonzero(host.kind == Kind.INPUT_STAGE)
    sel = sel[np.argsort(host.thread[sel], kind="stable")]  # thread by thread, each by start
    stack: list[tuple[int, int]] = []  # (end, name id) of the enclosing stages
    thread = None
    for th, s, e, nm in zip(*(c[sel].tolist() for c in (host.thread, host.start_ps, host.end_ps, host.name))):
        if th != thread:
            stack, thread = [], th
        while stack and stack[-1][0] <= s:
            stack.pop()
        out[names[nm]] += e - s
        if stack:
            out[names[stack[-1][1]]] -= e - s
        stack.append((e, nm))
    return {k: v for k, v in out.items() if v > 0}


def input_stage_names(p: Profile, host: EventTable) -> list[str]:
    """The names of the tf.data stages in the capture (`Iterator::Root::Prefetch::ParallelMapV2`)."""
    return sorted({p.names[i] for i in distinct(host.name[host.kind == Kind.INPUT_STAGE]).tolist()})


def longest_input_wait(p: Profile, host: EventTable, start: int, end: int) -> Window | None:
    """The longest wait for input that starts in [start, end)."""
    h = host
    sel = np.flatnonzero((h.kind == Kind.INPUT_WAIT) & (h.start_ps >= start) & (h.start_ps < end))
    if not len(sel):
        return None
    i = int(sel[np.argmax(h.dur_ps[sel])])
    return Window(
        int(h.start_ps[i]),
        int(h.end_ps[i]),
        "",
        [p.names[h.name[i]]],
        thread=thread_name(p, int(h.thread[i])),
    )


def input_source(p: Profile, host: EventTable) -> str:
    """The input wait event that takes the most time (the iterator's get-next, the DataLoader's
    `__next__`), or "" when there is none."""
    h = host
    sel = h.kind == Kind.INPUT_WAIT
    if not sel.any():
        return ""
    u, inv = unique_inverse(h.name[sel])
    return p.names[int(u[np.argmax(np.bincount(inv, weights=h.dur_ps[sel].astype(float)))])]


# -- a PyTorch DataLoader's way to the step: its waits, the batch's copies, its pin-memory thread ---


@dataclasses.dataclass(frozen=True, slots=True)
class LoaderPart:
    """One part of the way a batch takes from a DataLoader to the step, over the capture."""

    name: str  # the event's name (`enumerate(DataLoader)#..._DataLoaderIter.__next__`, `Memcpy HtoD ...`)
    what: str  # "wait", "copy" or "pin thread"
    calls: int
    total_ps: int
    per_step_ps: np.ndarray  # the time of its events that start in each of the host's steps
    waited_ps: float | None  # of its time in the steps, what the step waits on; None: not measured
    longest: tuple[int, int]  # (start, end) of its longest event
    device: int | None  # the GPU of a copy


@dataclasses.dataclass(frozen=True, slots=True)
class LoaderInput:
    """What a PyTorch trace shows of its DataLoader."""

    workers: bool | None  # it loads in worker processes (`_MultiProcessingDataLoaderIter`); None: no DataLoader
    pinned: bool | None  # the batch's copies come from pinned memory; None: no copy of the batch
    pin_thread: bool  # a thread that only pins host memory (the pin-memory thread) runs in the capture
    parts: tuple[LoaderPart, ...]


def batch_copies(host: EventTable, events: EventTable) -> np.ndarray:
    """Mask over a GPU's events: the host-to-device copies of the batch, those the thread that waited
    for it launches right after the DataLoader's `__next__` returns, before it launches any other work
    for this GPU (`x.to(device)` first in the step)."""
    h, ev = host, events
    out = np.zeros(len(ev), bool)
    waits = np.flatnonzero(h.kind == Kind.INPUT_WAIT)
    if not len(waits) or not len(ev):
        return out
    h2d = distinct(ev.corr[(ev.kind == Kind.MEMCPY_H2D) & (ev.corr >= 0)])
    here = distinct(ev.corr[ev.corr >= 0])
    launch = np.flatnonzero((h.kind == Kind.LAUNCH) & (h.corr >= 0))
    launch = launch[isin(h.corr[launch], here)]  # the launches of this GPU's work
    picked: list[int] = []
    for t in distinct(h.thread[waits]).tolist():
        lt = launch[h.thread[launch] == t]
        lt = lt[np.argsort(h.start_ps[lt], kind="stable")]
        starts, is_copy = h.start_ps[lt], isin(h.corr[lt], h2d)
        for e in h.end_ps[waits[h.thread[waits] == t]].tolist():
            k = int(np.searchsorted(starts, e, side="left"))
            while k < len(lt) and is_copy[k]:
                picked.append(int(h.corr[lt[k]]))
                k += 1
    if picked:
        out = (ev.kind == Kind.MEMCPY_H2D) & isin(ev.corr, np.unique(np.asarray(picked, np.int64)))
    return out


def pin_threads(host: EventTable, names: NameClasses) -> np.ndarray:
    """The host threads that run only runtime calls, some of which pin host memory: a DataLoader's
    pin-memory thread (its ops are not recorded, its CUDA calls are)."""
    h = host
    if not len(h):
        return np.zeros(0, np.int64)
    runtime = names.by_name(h.name, names.runtime_call_name)
    pin = names.by_name(h.name, names.pin_call_name)
    threads = distinct(h.thread)
    other = distinct(h.thread[~runtime])
    pinning = distinct(h.thread[pin])
    return threads[isin(threads, pinning) & ~isin(threads, other)]


def part(
    name: str,
    what: str,
    start: np.ndarray,
    end: np.ndarray,
    steps: Steps,
    waited_ps: float | None,
    device: int | None = None,
    marks: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> LoaderPart:
    """One part from its events' times: per host step, the time of its events that start in the step,
    or with `marks` (start, end, step index of each step marker) in the step's marker: a wait, a copy
    is the step's that asks for it."""
    k = steps.index(start)
    inside = k >= 0
    if marks is not None:  # by the step markers themselves (the steps run on to their device work's end)
        m_start, m_end, at = marks
        j = iv.search(m_start, start, side="right") - 1
        inside = (j >= 0) & (start < m_end[np.maximum(j, 0)]) & (at[np.maximum(j, 0)] >= 0)
        k = at[np.maximum(j, 0)]
    per_step = np.bincount(k[inside], weights=(end - start)[inside].astype(np.float64), minlength=len(steps))
    i = int(np.argmax(end - start))
    return LoaderPart(
        name, what, len(start), int((end - start).sum()), per_step, waited_ps, (int(start[i]), int(end[i])), device
    )


@dataclasses.dataclass(frozen=True, slots=True)
class GpuInput:
    """What `loader_input` reads of one active GPU."""

    id: int
    events: EventTable
    waiting: iv.Intervals  # the breakdown's input wait: the host waiting for input, the GPU with nothing to do
    compute_busy: tuple[iv.Intervals, ...]
    steps: Steps


def step_marks(p: Profile, host: EventTable, steps: Steps) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The host's step markers (`ProfilerStep#N`) of the steps: start, end and the index of the step
    each marks (-1: not one of `steps`), by start; None when the steps are not the markers'."""
    if not steps.marker or not len(steps):
        return None
    h = host
    sel = np.flatnonzero((h.kind == Kind.STEP) & (h.name == p.names.get(steps.marker)))
    if not len(sel):
        return None
    sel = sel[np.argsort(h.start_ps[sel], kind="stable")]
    index = {int(n): i for i, n in enumerate(steps.number.tolist())}
    at = np.asarray([index.get(int(n), -1) for n in h.step_num[sel].tolist()], np.int64)
    return h.start_ps[sel], h.end_ps[sel], at


def loader_input(p: Profile, host: EventTable, steps: Steps, names: NameClasses, gpus: list[GpuInput]) -> LoaderInput:
    """The DataLoader's waits (one part per `__next__` name), the batch's copies (one per copy name and
    GPU) and the pin-memory thread, each in the host's steps; what the step waits on: of a wait, the
    part when the GPUs have nothing else to do (the mean over them; without a GPU, all of it in the
    steps), of a copy, the part not under the GPU's compute (`input_copy_per_step`)."""
    h = host
    parts: list[LoaderPart] = []
    marks = step_marks(p, host, steps)
    waits = np.flatnonzero(h.kind == Kind.INPUT_WAIT)
    wait_names = [p.names[i] for i in distinct(h.name[waits]).tolist()]
    for n in wait_names:
        sel = waits[h.name[waits] == p.names.get(n)]
        s, e = h.start_ps[sel], h.end_ps[sel]
        u = iv.union(s, e)
        if gpus:
            waited = sum(iv.total(iv.intersect(g.waiting, u)) for g in gpus) / len(gpus)
        else:
            waited = float(iv.measure_in(u, steps.start_ps, steps.end_ps).sum()) if len(steps) else 0.0
        parts.append(part(n, "wait", s, e, steps, waited, marks=marks))
    pinned: bool | None = None
    for g in gpus:
        ev = g.events
        copies = batch_copies(h, ev)
        for nid in distinct(ev.name[copies]).tolist():
            sel = copies & (ev.name == nid)
            n = p.names[nid]
            pinned = pinned or PINNED_COPY in n
            waited = float(input_copy_per_step(ev, sel, g.compute_busy, g.steps).sum())
            parts.append(part(n, "copy", ev.start_ps[sel], ev.end_ps[sel], steps, waited, g.id, marks))
    threads = pin_threads(h, names)
    if len(threads):
        sel = isin(h.thread, threads)
        parts.append(part("pin-memory thread", "pin thread", h.start_ps[sel], h.end_ps[sel], steps, None, None, marks))
    workers = any(MULTI_WORKER_LOADER in n for n in wait_names) if wait_names else None
    return LoaderInput(workers, pinned, bool(len(threads)), tuple(parts))
