"""The critical path of a re-timed step graph: walking back from the end of the steps' window, at each
node the constraint that set its start (its launch, its stream, another stream, the work a sync waited
for, the host's previous point), so that each instant of the path is the host's or the GPU's.

HTA's `critical_path_analysis` is the oracle (tests/test_graph.py compares which of the two bounds
each step); this walk is over our graph, whose nodes are the host lane's dependency points and the
device ops, not every op.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.graph.build import INPUT, SYNC, StepGraph
from tb_gpu_advisor.graph.simulate import Changes, Timing
from tb_gpu_advisor.model.arrays import distinct

# a walk covers at most the last this many steps (their bounds are what a report shows), and stops
# after this many nodes
MAX_STEPS = 4
MAX_NODES = 400_000


@dataclasses.dataclass(frozen=True)
class CriticalPath:
    """Per step, the time its critical path spends on the host (its own work, launches, input waits)
    and on the GPU (kernels, copies, the gaps between them), ps; the last MAX_STEPS steps (`first`, the
    index of the first of them)."""

    host_ps: np.ndarray
    gpu_ps: np.ndarray
    input_ps: np.ndarray  # of host_ps, waiting for input
    first: int = 0

    def bound(self, k: int) -> str:
        """What bounds step k: "GPU" or "host" (the larger share of its critical path)."""
        return "GPU" if self.gpu_ps[k] >= self.host_ps[k] else "host"

    @property
    def bounds(self) -> list[str]:
        return [self.bound(k) for k in range(len(self.host_ps))]


def critical_path(g: StepGraph, t: Timing, c: Changes | None = None) -> CriticalPath:
    """The critical path of timing `t` (simulate(g, c))."""
    c = c or Changes.of(g)
    n_steps = len(t.step_start)
    host = np.zeros(n_steps, np.float64)
    gpu = np.zeros(n_steps, np.float64)
    inp = np.zeros(n_steps, np.float64)
    if not n_steps:
        return CriticalPath(host, gpu, inp)
    d_lat, d_gap, d_dep = c.d_lat, c.d_gap, c.d_dep
    waits = c.sync_waits & (g.h_kind == SYNC)
    first = max(n_steps - MAX_STEPS, 0)
    lo = int(t.step_start[first])
    bounds = np.r_[t.step_start, t.step_end[-1]]

    # the path's segments, credited to the steps they overlap at the end, at once
    segments: dict[int, tuple[list[int], list[int]]] = {id(host): ([], []), id(gpu): ([], []), id(inp): ([], [])}

    def add(arr: np.ndarray, a: int, b: int) -> None:
        if b > a:
            lo_, hi_ = segments[id(arr)]
            lo_.append(a)
            hi_.append(b)

    # per stream, each op's predecessor on it; the host's running end and which point set it
    prev_on_stream = np.full(g.device_ops, -1, np.int64)
    for s in distinct(g.d_stream):
        ops = np.flatnonzero(g.d_stream == s)
        prev_on_stream[ops[1:]] = ops[:-1]
    h_end = t.h_end
    setter = np.full(g.host_points, -1, np.int64)
    if g.host_points:
        run = np.maximum.accumulate(h_end)
        best = np.maximum.accumulate(np.where(h_end == run, np.arange(g.host_points), -1))
        setter[1:] = best[:-1]
    # for each point, the device op launched before it that ended last (what a sync waited for)
    last_done = np.full(g.host_points + 1, -1, np.int64)
    if g.device_ops:
        order = np.argsort(g.d_launch, kind="stable")
        ends = t.d_end[order]
        run_end = np.maximum.accumulate(ends)
        arg = order[np.maximum.accumulate(np.where(ends == run_end, np.arange(len(order)), 0))]
        k = np.searchsorted(g.d_launch[order], np.arange(g.host_points + 1), side="left") - 1
        last_done = np.where(k >= 0, arg[np.maximum(k, 0)], -1)
    # start at the window's end: the device op that ended last, or the host's last point
    node: tuple[str, int]
    dev_last = int(np.argmax(t.d_end)) if g.device_ops else -1
    host_last = g.host_points - 1
    if dev_last >= 0 and (host_last < 0 or t.d_end[dev_last] >= h_end[host_last]):
        node = ("dev", dev_last)
    else:
        node = ("host", host_last)
    for _ in range(MAX_NODES):
        kind, i = node[0], int(node[1])
        if i < 0:
            break
        if kind == "dev":
            s, e = int(t.d_start[i]), int(t.d_end[i])
            add(gpu, s, e)
            if s <= lo:
                break
            L: int = int(g.d_launch[i])
            launch_ready = int(t.h_start[L]) + int(d_lat[i])
            p = int(prev_on_stream[i])
            stream_ready = int(t.d_end[p]) + int(d_gap[i]) if p >= 0 else -(1 << 62)
            dep = int(d_dep[i])
            dep_ready = int(t.d_end[dep]) + int(g.d_dep_gap[i]) if dep >= 0 else -(1 << 62)
            if stream_ready >= launch_ready and stream_ready >= dep_ready and p >= 0:
                add(gpu, int(t.d_end[p]), s)
                node = ("dev", p)
            elif dep_ready >= launch_ready and dep >= 0:
                add(gpu, int(t.d_end[dep]), s)
                node = ("dev", dep)
            else:
                add(host, int(t.h_start[L]), s)  # the launch and its latency
                node = ("hstart", int(L))
        elif kind == "host":
            s, e = int(t.h_start[i]), int(h_end[i])
            if waits[i] and last_done[i] >= 0 and t.d_end[last_done[i]] > s:
                waited = int(last_done[i])
                add(host, int(t.d_end[waited]), e)  # the sync's own tail
                node = ("dev", waited)
                continue
            add(inp if g.h_kind[i] == INPUT else host, s, e)
            if g.h_kind[i] == INPUT:
                add(host, s, e)
            node = ("hstart", i)
        else:  # at a host point's start: the host's own work before it, back to the point that set it
            s = int(t.h_start[i])
            if s <= lo:
                break
            before = int(setter[i]) if i > 0 else -1
            end_before = int(h_end[before]) if before >= 0 else int(g.lane_start)
            add(host, end_before, s)
            node = ("host", before)
    for arr in (host, gpu, inp):
        a_, b_ = (np.asarray(x, np.int64) for x in segments[id(arr)])
        if len(a_):
            # each segment's overlap with each step: a (segments x steps) clip, the steps few
            s_ = np.maximum(a_[:, None], bounds[None, :-1])
            e_ = np.minimum(b_[:, None], bounds[None, 1:])
            arr += np.maximum(e_ - s_, 0).sum(axis=0)
    return CriticalPath(host[first:], gpu[first:], inp[first:], first)
