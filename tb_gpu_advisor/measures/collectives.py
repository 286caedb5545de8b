"""Collectives and several GPUs: all-reduce calls, their transfer and waiting time, and how much the
GPUs' compute overlaps."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.measures.kernels import elements, op_shape, parse_shapes
from tb_gpu_advisor.measures.names import NameClasses
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import unique_inverse
from tb_gpu_advisor.model.classify import ELEMENT_BYTES
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile
from tb_gpu_advisor.model.steps import Steps

Ranked = tuple[np.ndarray, np.ndarray, np.ndarray]  # (step, rank within the step, duration) of each call


@dataclasses.dataclass(frozen=True, slots=True)
class AllReduce:
    """All-reduce calls of the active GPUs (see `allreduce`)."""

    per_gpu: dict[int, float]  # calls per step, by GPU id
    extra_ps: float  # per step, the time of all but the longest call, mean over GPUs
    transfer_ps: float  # per step
    waiting_ps: float  # per step
    any_calls: bool  # whether any GPU makes one


@dataclasses.dataclass(frozen=True, slots=True)
class Serialization:
    """How much the active GPUs' compute overlaps, over windows (see `serialization`)."""

    index: float  # 0 when they compute at the same time, 1 when one after another
    union: np.ndarray  # per window, the union of their compute
    most: np.ndarray  # per window, the busiest GPU's compute
    lo: np.ndarray  # the windows' starts
    hi: np.ndarray  # and ends


@dataclasses.dataclass(frozen=True, slots=True)
class HostCalls:
    """The host's collective calls in its steps, per step with work (see `host_calls`)."""

    calls: float
    allreduces: float  # of them, the all-reduces (names.ALLREDUCE, the rule the GPU's kernels are named by)
    # the bytes they all-reduce, from the tensors their spans record (`gloo:all_reduce` with `Input Dims`
    # [[68362]] and `Input type` ["float"]); None when a call does not say
    allreduce_bytes: float | None = None


def shape_bytes(shape: str) -> int | None:
    """The bytes of the tensors a shape annotation names (`float[68362]`), None when it names a type
    of unknown size or none at all (c10d's `tensorlist[]`)."""
    tensors = parse_shapes(shape)
    if not tensors:
        return None
    total = 0
    for dtype, dims in tensors:
        size = ELEMENT_BYTES.get(dtype)
        if size is None:
            return None
        total += size * int(np.prod(dims, dtype=np.float64))
    return total


def host_calls(host: EventTable, n: int, names: NameClasses) -> HostCalls | None:
    """The host's collective calls per step (`n`: the steps with work): one span per call (names.CALL_HOST:
    the backends' annotations, TensorFlow's collective ops), else c10d's ops; None when the host has no
    such span."""
    h = host
    for mask in (names.collective_call_name, names.c10d_call_name):
        m = names.by_name(h.name, mask) & (h.step >= 0) if len(h) else np.zeros(0, bool)
        if m.any():
            ar = m & names.by_name(h.name, names.allreduce_name)
            return HostCalls(float(m.sum()) / n, float(ar.sum()) / n, allreduce_bytes(names.p, h.shape[ar], n))
    return None


def allreduce_bytes(p: Profile, shapes: np.ndarray, n: int) -> float | None:
    """Bytes all-reduced per step (`n` steps) by calls whose recorded shapes are `shapes` (name ids);
    None without calls, or when one does not say its tensor."""
    if not len(shapes) or (shapes < 0).any():
        return None
    ids, inv = unique_inverse(shapes)
    sizes = [shape_bytes(p.names[int(i)]) for i in ids.tolist()]
    if any(b is None for b in sizes):
        return None
    return float(np.bincount(inv, minlength=len(ids)) @ np.asarray(sizes, np.float64)) / n


def allreduces(events: EventTable, allreduce_name: np.ndarray) -> EventTable:
    """A GPU's all-reduce calls (`allreduce_name`: a mask over name ids, with a final entry for -1)."""
    ev, mask = events, allreduce_name
    sel = (ev.kind == Kind.COLLECTIVE) & mask[np.where(ev.name >= 0, ev.name, len(mask) - 1)]
    return ev.take(sel, ("start_ps", "dur_ps", "step", "op", "name"))


def allreduce_ranked(ar: EventTable) -> Ranked:
    """(step, rank within the step, duration) of each all-reduce in the steps, by step then start."""
    inside = ar.step >= 0
    steps, durs = ar.step[inside].astype(np.intp), ar.dur_ps[inside].astype(float)
    order = np.argsort(steps, kind="stable")  # events are sorted by start, so each step stays in order
    steps, durs = steps[order], durs[order]
    rank = np.arange(len(steps)) - np.searchsorted(steps, steps, side="left")
    return steps, rank, durs


def allreduce(
    ids: list[int],
    steps: list[Steps],
    ranked: list[Ranked],
    collectives: list[iv.Intervals],
    shared_steps: bool,
    any_calls: bool,
) -> AllReduce:
    """All-reduce calls of the active GPUs (their ids, steps, ranked calls and collective busy time;
    `any_calls`: whether any GPU makes one, in its steps or not): calls per GPU per step; per step, the
    time of all but the longest call (extra calls), mean over GPUs; transfer and waiting time per step. NCCL kernels start when their GPU arrives and end
    together, so a GPU that arrives early waits inside the kernel: each call's transfer is its shortest
    duration across GPUs, the rest is waiting. With shared steps calls are matched by their order in
    the step; otherwise each GPU's own time is transfer."""
    ns = [max(len(s), 1) for s in steps]
    per_gpu = {d: len(r[0]) / n for d, r, n in zip(ids, ranked, ns)}
    extra = []
    for st, (k, _, durs), n in zip(steps, ranked, ns):
        most = np.zeros(len(st))
        np.maximum.at(most, k, durs)
        extra.append((float(durs.sum()) - float(most.sum())) / n)
    transfer = waiting = 0.0
    if shared_steps and ids:
        n_steps = len(steps[0])
        counts = np.array([np.bincount(r[0], minlength=n_steps) for r in ranked])
        equal = (counts == counts[0]).all(axis=0) & (counts[0] > 0)
        width = int(counts.max()) if counts.size else 0
        mins = np.full(n_steps * width, np.inf)
        sums = np.zeros(len(ids))
        for j, (k, rank, durs) in enumerate(ranked):
            matched = equal[k]
            row = np.full(n_steps * width, np.inf)
            row[k[matched] * width + rank[matched]] = durs[matched]
            mins = np.minimum(mins, row)
            sums[j] = float(durs[matched].sum())
        t = float(mins[np.isfinite(mins)].sum())
        unequal = float(np.mean([r[2][~equal[r[0]]].sum() for r in ranked]))
        n = ns[0]
        transfer = (t + unequal) / n
        waiting = (float(sums.mean()) - t) / n
    elif ids:
        transfer = float(np.mean([float(r[2].sum()) / n for r, n in zip(ranked, ns)]))
    # a call that starts at a step's end runs on past it: count no more than the steps hold
    held = [float(iv.measure_in(c, s.start_ps, s.end_ps).sum()) / n for c, s, n in zip(collectives, steps, ns)]
    cap = float(np.mean(held)) if held else 0.0
    transfer = min(transfer, cap)
    return AllReduce(
        per_gpu=per_gpu,
        extra_ps=min(float(np.mean(extra)) if extra else 0.0, transfer),
        transfer_ps=transfer,
        waiting_ps=min(waiting, max(cap - transfer, 0.0)),
        any_calls=any_calls,
    )


def allreduce_params(p: Profile, ar: EventTable) -> int | None:
    """Elements all-reduced per step, from the shapes of the all-reduce ops `ar` (the gradients, when
    one all-reduce per step carries them all), in the step with the most."""
    inside = ar.step >= 0
    ops, inv = unique_inverse(ar.op[inside])
    counts = np.array([elements(op_shape(p, int(o))) for o in ops.tolist()], np.float64)
    per_step = np.bincount(ar.step[inside], weights=counts[inv]) if len(ops) else np.zeros(0)
    best = int(per_step.max()) if len(per_step) else 0
    return best or None


def serialization(
    compute: list[iv.Intervals], steps: list[Steps], step_windows: list[iv.Intervals], shared_steps: bool
) -> Serialization:
    """How much the active GPUs' compute (`compute`, each GPU's) overlaps: index 0 when they compute at
    the same time, 1 when one after another: sum over windows of (union - busiest) / (sum - busiest).
    Windows are the shared steps, or, when the GPUs have steps of their own, the span of all their
    work."""
    if shared_steps:
        lo, hi = steps[0].start_ps, steps[0].end_ps
    else:
        windows = iv.union_all(*step_windows)
        lo, hi = windows[0][:1], windows[1][-1:]
    per = np.array([iv.measure_in(s, lo, hi) for s in compute], float)
    union = iv.measure_union_in(compute, lo, hi).astype(float)
    total, most = per.sum(axis=0), per.max(axis=0)
    denom = float((total - most).sum())
    index = float((union - most).sum()) / denom if denom > 0 else 0.0
    return Serialization(index, union, most, lo, hi)


def first_compute(compute: list[iv.Intervals], steps: Steps) -> np.ndarray:
    """With shared `steps`: (GPU, step) start of each GPU's first compute in the step (NaN if none)."""
    firsts = np.full((len(compute), len(steps)), np.nan)
    for r, (s, _) in enumerate(compute):
        if not len(s):
            continue
        k = np.minimum(np.searchsorted(s, steps.start_ps, side="left"), len(s) - 1)
        firsts[r] = np.where((s[k] >= steps.start_ps) & (s[k] < steps.end_ps), s[k], np.nan)
    return firsts
