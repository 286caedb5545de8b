"""What the step graph (graph/) measures for the checks: the step without the profiler and what sets
it, the profiler's own cost, the host-device syncs in the steps, what the host's work is made of, and
each fix's predicted step (graph/whatif.py, docs/whatif.md)."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.graph.build import KEPT_ALLOC, KEPT_REPLAY, KEPT_STARTUP, LAUNCH, SYNC, StepGraph
from tb_gpu_advisor.graph.fixes.syncs import REMOVABLE_SYNC_OPS
from tb_gpu_advisor.graph.profiler import ProfilerCost
from tb_gpu_advisor.graph.whatif import Prediction, WhatIf
from tb_gpu_advisor.measures.window import Window, thread_name
from tb_gpu_advisor.model.arrays import distinct
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile

# op names a user knows a sync by
SYNC_CALLS = {
    "": "torch.cuda.synchronize() (or a synchronize call outside any op)",
    "aten::_local_scalar_dense": ".item() (or float(), int(), bool() of a GPU tensor)",
    "aten::item": ".item()",
    "aten::_to_copy": ".cpu() / .to('cpu')",
    "aten::copy_": ".cpu() / .numpy() / a copy to the host",
    "aten::to": ".to('cpu')",
    "aten::cpu": ".cpu()",
    "copy to the GPU": ".to(device) of a tensor in pageable memory (a synchronous copy to the GPU: pin_memory=True and "
    "non_blocking=True make it asynchronous)",
}
H2D_CALL = "copy to the GPU"


@dataclasses.dataclass(frozen=True, slots=True)
class StepModel:
    """The captured step re-timed by its graph: as captured and without the profiler (per step, ps),
    and what sets it (what the critical path's last steps spend most of their time on)."""

    captured_ps: float
    unprofiled_ps: float
    bound: str  # "GPU", "host" or "input"
    profiler_ps: float  # the profiler's own cost per step
    device_ps: float  # the device's work per step (its ops' time, every stream)
    host_ps: float  # the host's own work per step without the profiler (its waits for the GPU left out)
    low_ps: float = 0.0  # the step without the profiler at the ends of its cost's range
    high_ps: float = 0.0
    profiler: ProfilerCost | None = None  # how its cost was taken out

    @property
    def profiler_share(self) -> float:
        return self.profiler_ps / self.captured_ps if self.captured_ps > 0 else 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class SyncRow:
    """Host-device syncs of one kind in the steps."""

    call: str  # what the user wrote, as far as the trace tells
    op: str  # the op the sync ran in ("" for none)
    per_step: float
    wait_ms_per_step: float  # the host's wait in them, as captured
    removable: bool  # a user can drop it (not a sync an op needs, such as nonzero)


@dataclasses.dataclass(frozen=True, slots=True)
class Syncs:
    rows: tuple[SyncRow, ...]
    per_step: float
    wait_ps: float  # per step, as captured
    windows: tuple[Window, ...]  # the longest waits


@dataclasses.dataclass(frozen=True, slots=True)
class HostCause:
    """What the host's own work in the steps is made of: inside ops and dispatch (the framework
    dispatching GPU work op by op) or Python outside them (the user's loop, logging, data made in it)."""

    dispatch_ps: float  # per step, without the profiler's cost
    python_ps: float
    launches_per_step: float

    @property
    def op_by_op(self) -> bool:
        return self.dispatch_ps >= self.python_ps


@dataclasses.dataclass(frozen=True, slots=True)
class KeptRow:
    """One runtime call's time of a kind kept apart (KeptCalls), in the steps as captured."""

    call: str  # its name ("hipFree"); "" for a warm-up step's host work inside ops outside any call
    op: str  # the framework op most of its time ran in ("" for none)
    per_step: float
    ms_per_step: float
    longest_ms: float


@dataclasses.dataclass(frozen=True, slots=True)
class KeptCalls:
    """Host time inside the steps that is not dispatch, of one kind (the allocator's calls, start-up work,
    CUPTI's range replay: graph/build.py's KEPT_*), per step as captured: no compiler, CUDA graph or
    fusion removes it."""

    ms_per_step: float
    calls_per_step: float
    rows: tuple[KeptRow, ...]  # by call, most time first
    windows: tuple[Window, ...]  # the longest calls
    steps: tuple[int, ...]  # the numbers of the steps that hold it

    @property
    def names(self) -> list[str]:
        return [r.call for r in self.rows if r.call]


@dataclasses.dataclass(frozen=True, slots=True)
class HostKept:
    """The host's time inside the steps that is not dispatch, by what it is."""

    alloc: KeptCalls
    startup: KeptCalls
    replay: KeptCalls
    warmup_steps: tuple[int, ...]  # the numbers of the warm-up steps (start-up work 5% of the step or more)
    range_records: int  # CUPTI's range profiler's records in the capture


def host_kept(p: Profile, host: EventTable, g: StepGraph, numbers: np.ndarray) -> HostKept:
    """The graph's kept calls (`build.KEPT_*`) by what they are; `host`: the profile's merged host table
    (the one the graph was built on: the threads' own tables are views of it, left unread); `numbers`:
    the step numbers of the graph's steps."""
    steps = max(g.steps, 1)
    replayed = g.range_records > 0
    launch_kept = g.h_kept_dur > 0
    num = (lambda k: int(numbers[k])) if len(numbers) else int

    def kind(k: int, gap_ps: float) -> KeptCalls:
        rows = np.flatnonzero(g.k_kind == k)
        r = g.k_row[rows]
        start, dur = host.start_ps[r], host.dur_ps[r]
        names, ops = host.name[r], g.k_op[rows]
        out = []
        for name in distinct(names).tolist():
            mine = names == name
            o, t = np.unique(ops[mine], return_inverse=True)
            top = int(o[np.argmax(np.bincount(t.reshape(-1), dur[mine]))])
            out.append(
                KeptRow(
                    p.names[int(name)],
                    p.op_name(top) if top >= 0 else "",
                    float(mine.sum()) / steps,
                    float(dur[mine].sum()) / steps / 1e9,
                    float(dur[mine].max()) / 1e9,
                )
            )
        # a warm-up step's host time inside ops outside every runtime call (first calls' own work)
        rest = gap_ps / steps / 1e9 - sum(x.ms_per_step for x in out)
        if k == KEPT_STARTUP and g.warmup.any() and rest > 0.01 * gap_ps / steps / 1e9:
            out.append(KeptRow("", "", 0.0, rest, 0.0))
        out.sort(key=lambda x: -x.ms_per_step)
        longest = np.argsort(-dur, kind="stable")[:3]
        windows = tuple(
            Window(
                int(start[i]),
                int(start[i] + dur[i]),
                f"step {num(int(g.k_step[rows[i]]))}: {p.names[int(names[i])]} {float(dur[i]) / 1e9:.2f} ms"
                + (f" in {p.op_name(int(ops[i]))}" if ops[i] >= 0 else ""),
                [p.names[int(names[i])]],
                thread=thread_name(p, int(host.thread[r[i]])),
            )
            for i in longest.tolist()
        )
        held = sorted({num(int(x)) for x in g.k_step[rows].tolist()})
        return KeptCalls(gap_ps / steps / 1e9, float(len(rows)) / steps, tuple(out), windows, tuple(held))

    startup_ps = float(g.h_startup.sum()) + (0.0 if replayed else float(g.h_kept_dur[launch_kept].sum()))
    return HostKept(
        kind(KEPT_ALLOC, float(g.h_alloc.sum())),
        kind(KEPT_STARTUP, startup_ps),
        kind(KEPT_REPLAY, float(g.h_kept_dur.sum()) if replayed else 0.0),
        tuple(num(int(k)) for k in np.flatnonzero(g.warmup)),
        g.range_records,
    )


def step_model(w: WhatIf) -> StepModel:
    g, c = w.g, w.no_profiler
    steps = max(g.steps, 1)
    own = np.where(g.h_kind == SYNC, g.h_tail, c.h_dur)
    host = float((np.maximum(c.h_gap, 0) + own).sum()) / steps
    device = float(g.d_dur.sum()) / steps
    low, high = w.step_range_ps()
    return StepModel(
        w.captured.period_ps,
        w.base.period_ps,
        w.base_bound,
        w.profiler_overhead_ps,
        device,
        host,
        low,
        high,
        w.cost,
    )


def syncs(p: Profile, g: StepGraph, w: WhatIf, numbers: np.ndarray) -> Syncs:
    """The blocking calls in the steps, by the op they ran in; `numbers`: the step numbers of the
    graph's steps (its points' `h_step` index them), which the evidence names."""
    sync = np.flatnonzero(g.h_kind == SYNC)
    inside = sync[(g.h_start[sync] >= w.captured.step_start[0]) & (g.h_start[sync] < w.captured.step_end[-1])]
    # the profiler synchronises once as it stops, in the last step: a sync of a kind no other step has
    if g.steps > 1 and len(inside):
        last = g.h_step[inside] == g.h_step[inside].max()
        kinds = [(int(g.h_op[i]), int(g.h_name[i])) for i in inside]
        earlier = {k for k, is_last in zip(kinds, last) if not is_last}
        inside = inside[[not is_last or k in earlier for k, is_last in zip(kinds, last)]]
    steps = max(g.steps, 1)
    rows = []
    wait = g.h_dur[inside] - g.h_tail[inside]
    # a synchronous copy to the GPU (`.to(device)` from pageable memory) is named apart from a read back
    # (a synchronous cudaMemcpy launches it; PyTorch's copy from pageable memory launches it with
    # cudaMemcpyAsync and then synchronises the stream, in the same op)
    launched = np.zeros(g.host_points, bool)
    launched[g.d_launch[g.d_kind == Kind.MEMCPY_H2D]] = True
    before = np.maximum(inside - 1, 0)
    to_gpu = launched[inside] | (launched[before] & (g.h_op[before] == g.h_op[inside]) & (g.h_op[inside] >= 0))
    ops = np.asarray(
        [H2D_CALL if h2d else (p.op_name(int(o)) if o >= 0 else "") for h2d, o in zip(to_gpu, g.h_op[inside])],
        object,
    )
    for op in sorted(set(ops.tolist()), key=lambda o: -float(wait[ops == o].sum())):
        mine = ops == op
        rows.append(
            SyncRow(
                SYNC_CALLS.get(op, f"{op} (an op that reads a result on the host)"),
                op,
                float(mine.sum()) / steps,
                float(wait[mine].sum()) / steps / 1e9,
                op in REMOVABLE_SYNC_OPS or op == H2D_CALL,
            )
        )
    longest = inside[np.argsort(-wait, kind="stable")[:3]]
    windows = tuple(
        Window(
            int(g.h_start[i]),
            int(g.h_start[i] + g.h_dur[i]),
            f"step {int(numbers[g.h_step[i]]) if len(numbers) else int(g.h_step[i])}: the host waits {float(g.h_dur[i] - g.h_tail[i]) / 1e9:.2f} ms for the GPU"
            f" in {p.names[int(g.h_name[i])]}",
            [p.names[int(g.h_name[i])]],
            thread=thread_name(p, int(g.h_thread[i])),
        )
        for i in longest
        if g.h_dur[i] > g.h_tail[i]
    )
    return Syncs(tuple(rows), float(len(inside)) / steps, float(wait.sum()) / steps, windows)


def host_cause(g: StepGraph, w: WhatIf) -> HostCause:
    c = w.no_profiler
    gap = np.maximum(c.h_gap, 0).astype(np.float64)
    free = np.minimum(g.h_free.astype(np.float64), gap)
    steps = max(g.steps, 1)
    python = float(free.sum()) / steps
    # not dispatch: the allocator's calls and start-up work inside ops (HostKept)
    kept = float(np.minimum(c.kept(), gap - free).sum()) / steps
    return HostCause(float(gap.sum()) / steps - python - kept, python, float((g.h_kind == LAUNCH).sum()) / steps)


__all__ = [
    "Prediction",
    "StepModel",
    "SyncRow",
    "Syncs",
    "HostCause",
    "HostKept",
    "KeptCalls",
    "KeptRow",
    "step_model",
    "syncs",
    "host_cause",
    "host_kept",
]
