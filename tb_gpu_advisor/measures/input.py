"""The input pipeline: the host waiting for input, the copies of the model's input, tf.data's stages."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from tb_gpu_advisor.measures.names import NameClasses
from tb_gpu_advisor.measures.window import Window, thread_name
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct, unique_inverse
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
