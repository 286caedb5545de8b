"""Derived data computed once per profile: active GPUs, steps per GPU, step columns, activity and
breakdowns, headline numbers.

Active GPUs are the GPU planes with kernels; every host-level figure (busy share, compute per step,
breakdown) is over them only. Each GPU is measured in its own step windows (`steps.gpu_steps`).
Measurements built on this live in `measures/`; nothing here formats text.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable, Sequence

import numpy as np

from tb_gpu_advisor.common.parallel import map_ordered
from tb_gpu_advisor.common.units import pct
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.arrays import distinct
from tb_gpu_advisor.model.profile import (
    DEVICE_SPEC,
    HOST_SPEC,
    MEMCPY_KINDS,
    PYTORCH,
    Column,
    ColumnSpec,
    Device,
    EventTable,
    Flag,
    HostThread,
    Kind,
    Profile,
    Stream,
)
from tb_gpu_advisor.model.steps import (
    CATEGORIES,
    SOURCE_FUNCTIONS,
    SOURCE_HOST,
    DeviceActivity,
    Steps,
    breakdown,
    device_activity,
    exclusive,
    gpu_steps,
    host_steps,
    launch_calls,
)

# How the panel colours the headline numbers: (good at or above, moderate at or above), in percent,
# from the thresholds of the checks that judge the same time: a GPU idle or waiting over 10% of a
# step (steps.gaps) is moderate, over 20% (input.bound's critical) bad; host op time over 10% / 30%
# (placement.host-ops); under 10% of compute in 16-bit on a Tensor Core GPU (precision.mixed-off).
HEADLINE_BANDS = {
    "device_busy_pct": (90.0, 80.0),
    "device_op_time_pct": (90.0, 70.0),
    "fp16_compute_pct": (10.0, 10.0),
}
# What each headline number measures: shown on hover in the panel, and in docs/checks.md's "How the numbers
# are defined" (tests/test_readme.py checks it holds these).
HEADLINE_DEFINITIONS = {
    "device_busy_pct": "Share of step time with anything running on the GPU: the union of all its streams "
    "(kernels, collectives, copies), each GPU in its own steps; for the host, the mean over its active GPUs. "
    "The PyTorch profiler plugin's GPU utilization counts kernels only, so it is lower by the copy time.",
    "device_op_time_pct": "Of the time framework ops run, the share on the GPU: device work attributed to an "
    "op against compute ops placed on the host (input-pipeline and runtime events are not ops); n/a without a GPU, "
    "and for PyTorch, whose ops all run on the host and launch kernels.",
    "fp16_compute_pct": "Share of kernel and memset time in 16-bit kernels: the kernel's op takes a half or "
    "bfloat16 first input (the profile plugin's rule), or, without an op, its name says so.",
    "compute_ms_per_step": "Kernel and memset time per step on the GPU (collectives and copies not counted).",
    "step_ms": "Mean step time of the GPU, in its own steps.",
    "gpu_utilization_pct": "Kernels running: the time any kernel runs (copies and memsets not counted), over "
    "the span from the first step's start to the last step's end; PyTorch's TensorBoard plugin calls it GPU "
    "utilization.",
    "sm_efficiency_pct": "Estimated SM efficiency (the formula of PyTorch's TensorBoard plugin): at each instant, the running "
    "kernels' blocks per SM (the trace's `blocks per SM`, else the grid's blocks over the GPU's SMs) summed and "
    "capped at 1, averaged over the span of the steps (or of one step), idle time counting 0; n/a when neither "
    "is known.",
    "comm_overlap_pct": "Share of the time collectives (NCCL kernels) run that compute kernels run too, within "
    "the steps (Holistic Trace Analysis's communication/computation overlap); n/a without collectives.",
    "achieved_occupancy_pct": "Estimated achieved occupancy (the formula of PyTorch's TensorBoard plugin): the kernels' "
    "`est. achieved occupancy %` averaged weighted by their time within the steps (or one step); n/a when the "
    "trace has none.",
}
KERNEL_FIGURES = ("gpu_utilization_pct", "sm_efficiency_pct", "achieved_occupancy_pct")
MAX_STEPS_LISTED = 500
MAX_STEPS_PER_GPU = 100  # steps listed one by one in a report (evenly spaced beyond that)


def blocks_per_sm(ev: EventTable, k: np.ndarray, sm_count: int | None) -> np.ndarray:
    """Blocks per SM of the events `k` selects: the trace's own (PyTorch's `blocks per SM`, what its
    TensorBoard plugin reads), else the grid's blocks over the GPU's SMs; NaN where neither is known."""
    recorded = ev.peek("blocks_per_sm")[k].astype(np.float64)
    if sm_count and not np.isfinite(recorded).all():
        blocks = ev.peek("grid_x")[k].astype(np.float64) * ev.peek("grid_y")[k] * ev.peek("grid_z")[k]
        recorded = np.where(np.isfinite(recorded), recorded, np.where(blocks > 0, blocks / sm_count, np.nan))
    return recorded


def kernel_efficiency(ev: EventTable, sm_count: int | None, lo: np.ndarray, hi: np.ndarray) -> dict[str, np.ndarray]:
    """PyTorch's TensorBoard plugin's kernel figures for one GPU (torch-tb-profiler 0.4.3,
    `gpu_metrics_parser.py`) in each window [lo, hi), percent, NaN where undefined:
    `gpu_utilization_pct` (union of kernel time / window), `sm_efficiency_pct` (blocks per SM of the
    running kernels, summed and capped at 1, over the window: idle time counts 0), and
    `achieved_occupancy_pct` (kernel time-weighted `est. achieved occupancy %`). Kernels are every
    kernel, NCCL's included; copies and memsets are not."""
    k = np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8))
    s, e = ev.start_ps[k], ev.end_ps[k]
    span = np.maximum(hi - lo, 1).astype(np.float64)
    util = iv.measure_in(iv.union(s, e), lo, hi) / span * 100
    sm = np.full(len(lo), np.nan)
    # the launch columns are read for these figures only: not kept on the table (peek)
    per_sm = blocks_per_sm(ev, k, sm_count)
    pos = per_sm > 0
    occ = ev.peek("occupancy")[k].astype(np.float64)
    has = np.isfinite(occ) & (occ >= 0)
    # both integrals over every kernel, as usual: their boundaries sorted once
    shared = iv.boundaries(s, e) if len(s) and pos.all() and has.all() else None
    if pos.any():
        sm = iv.integral_in(s[pos], e[pos], per_sm[pos], lo, hi, 1.0, shared)[:, 0] / span * 100
    both = iv.integral_in(s[has], e[has], np.stack([np.ones(int(has.sum())), occ[has]], axis=1), lo, hi, None, shared)
    weight, total = both[:, 0], both[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        occupancy = np.where(weight > 0, total / np.where(weight > 0, weight, 1), np.nan)
    return {"gpu_utilization_pct": util, "sm_efficiency_pct": sm, "achieved_occupancy_pct": occupancy}


def _gpu_headline(g: GpuAnalysis) -> dict:
    """One GPU's headline numbers (and its 16-bit and compute time, `_`-prefixed, for the host's)."""
    ev = g.events
    k = ev.kind == Kind.KERNEL
    compute = k | (ev.kind == Kind.MEMSET)
    fp16 = k & ((ev.flags & Flag.FP16) != 0)
    in_steps = ev.step >= 0
    n = max(len(g.steps), 1)
    return {
        "device_id": g.id,
        "device_busy_pct": pct(g.busy_ps, g.step_ps),
        "compute_ms_per_step": float(ev.dur_ps[compute & in_steps].sum()) / n / 1e9,
        "fp16_compute_pct": pct(float(ev.dur_ps[fp16].sum()), float(ev.dur_ps[compute].sum())),
        "fp16_kernels": int(fp16.sum()),
        "kernels": int(k.sum()),
        "steps": len(g.steps),
        "step_ms": g.steps.mean_ps / 1e9,
        **g.kernel_figures(),
        "comm_overlap_pct": g.comm_overlap_pct(),
        "_fp16_ps": float(ev.dur_ps[fp16].sum()),
        "_compute_ps": float(ev.dur_ps[compute].sum()),
    }


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


@dataclasses.dataclass
class GpuAnalysis:
    """One active GPU in its own steps."""

    device: Device
    steps: Steps
    events: EventTable  # every stream merged and sorted, with a `step` column (-1 outside the steps)
    activity: DeviceActivity
    exclusive: dict[str, iv.Intervals]  # the breakdown's categories, each with the ones before it removed
    breakdown_ps: np.ndarray  # (steps, categories)

    @property
    def id(self) -> int:
        return self.device.id

    @property
    def busy_ps(self) -> int:
        """Union of all streams' activity within the steps."""
        return int(iv.measure_in(self.activity.busy, self.steps.start_ps, self.steps.end_ps).sum())

    @property
    def step_ps(self) -> int:
        return int(self.steps.dur_ps.sum())

    def kernel_figures(self) -> dict[str, float | None]:
        """`kernel_efficiency` over the span of the steps, as the PyTorch plugin reports them."""
        if not len(self.steps):
            return dict.fromkeys(KERNEL_FIGURES)
        return {k: _num(v[-1]) for k, v in self._kernel_figures.items()}

    def comm_overlap_pct(self) -> float | None:
        """Of the collectives' time within the steps, the share with a compute kernel running too
        (memsets and copies are not compute, as in HTA's `get_comm_comp_overlap`)."""
        ev, lo, hi = self.events, self.steps.start_ps, self.steps.end_ps
        k = ev.kind == Kind.KERNEL
        comm = self.activity.by_category["device_collectives"]  # the union of the collectives
        total = int(iv.measure_in(comm, lo, hi).sum())
        if not total:
            return None
        alone = iv.subtract(comm, iv.union(ev.start_ps[k], ev.end_ps[k]))
        return pct(total - int(iv.measure_in(alone, lo, hi).sum()), total)

    @property
    def kernel_figures_per_step(self) -> dict[str, np.ndarray]:
        """`kernel_efficiency` in each of the GPU's steps."""
        return {k: v[:-1] for k, v in self._kernel_figures.items()}

    @functools.cached_property
    def _kernel_figures(self) -> dict[str, np.ndarray]:
        """`kernel_efficiency` in each step and, last, over the span of the steps: computed once."""
        st = self.steps
        lo = np.r_[st.start_ps, st.start_ps[:1]] if len(st) else st.start_ps
        hi = np.r_[st.end_ps, st.end_ps[-1:]] if len(st) else st.end_ps
        return kernel_efficiency(self.events, self.device.sm_count, lo, hi)


@dataclasses.dataclass
class Analysis:
    profile: Profile
    host_steps: Steps
    host: EventTable  # every host thread merged, with `thread` and `step` (host steps) columns
    gpus: dict[int, GpuAnalysis]  # the active GPUs, by id
    copy_only: list[int]  # GPUs with copies but no kernel
    idle: list[int]  # GPUs with no event at all
    host_activity: DeviceActivity  # the host's own view (input wait, launches) without a GPU
    host_breakdown_ps: np.ndarray  # the host's breakdown in its steps, used when no GPU is active

    @property
    def steps(self) -> Steps:
        """The steps reported first: the host's when it marks them, else the first active GPU's."""
        if self.host_steps.source in (SOURCE_HOST, SOURCE_FUNCTIONS) or not self.gpus:
            return self.host_steps
        return next(iter(self.gpus.values())).steps

    def steps_of(self, device_id: int | None) -> Steps:
        return self.gpus[device_id].steps if device_id in self.gpus else self.host_steps

    @property
    def shared_steps(self) -> bool:
        """Whether every active GPU is measured in the same steps."""
        return len({id(g.steps) for g in self.gpus.values()}) <= 1

    # -- headline numbers (CHECKLIST.md "Headline numbers") ---------------------------------

    def op_time_ps(self) -> tuple[int, int]:
        """(device op time, host op time): device events attributed to a framework op, and host
        compute ops placed on the host, nested events counted once. Input-pipeline and runtime
        events are not ops."""
        device = 0
        for ev in self.device_tables():
            device += int(ev.dur_ps[ev.op >= 0].sum())
        return device, host_op_union_ps(self)

    def device_tables(self) -> list[EventTable]:
        """Every device event once: each active GPU's merged table, then the streams of the others (the
        streams of an active GPU are views of its table: `share_parts`)."""
        rest = [s.events for s in self.profile.streams if s.device_id not in self.gpus]
        return [g.events for g in self.gpus.values()] + rest

    def headline(self) -> dict:
        per_gpu = map_ordered(_gpu_headline, list(self.gpus.values()))  # the kernel figures: 10 ms a GPU
        device_ps, host_ps = self.op_time_ps()
        fp16 = sum(g.pop("_fp16_ps") for g in per_gpu)
        compute = sum(g.pop("_compute_ps") for g in per_gpu)
        return {
            # means over the active GPUs, each in its own steps
            "device_busy_pct": _mean([g["device_busy_pct"] for g in per_gpu]),
            "compute_ms_per_step": _mean([g["compute_ms_per_step"] for g in per_gpu]),
            # PyTorch ops all run on the host and launch kernels: there is no placement to measure
            "device_op_time_pct": pct(device_ps, device_ps + host_ps)
            if self.gpus and self.profile.framework != PYTORCH
            else None,
            "fp16_compute_pct": pct(fp16, compute),
            "fp16_kernels": sum(g["fp16_kernels"] for g in per_gpu),
            "kernels": sum(g["kernels"] for g in per_gpu),
            "device_op_ms": device_ps / 1e9,
            "host_op_ms": host_ps / 1e9,
            "active_gpus": list(self.gpus),
            "copy_only_gpus": self.copy_only,
            "idle_gpus": self.idle,
            "per_gpu": per_gpu,
        }

    def judged_headline(self, h: dict) -> dict[str, str | None]:
        """Each headline number judged "good", "moderate" or "bad" by HEADLINE_BANDS (None where
        there is nothing to judge: no GPU, or 16-bit share on GPUs without Tensor Cores or AMD matrix
        cores; `engine.analyse_file` also leaves it unjudged where precision.mixed-off does not apply)."""
        tensor_cores = any(d.has_tensor_cores or d.matrix_cores for d in self.profile.devices if d.id in self.gpus)
        out: dict[str, str | None] = {}
        for key, (good, moderate) in HEADLINE_BANDS.items():
            v = h.get(key)
            if v is None or (key == "fp16_compute_pct" and not tensor_cores):
                out[key] = None
            else:
                out[key] = "good" if v >= good else "moderate" if v >= moderate else "bad"
        return out

    def breakdown_ms(self, device_id: int | None = None) -> dict[str, float]:
        """Per step average of each category, ms; for one GPU, or the mean over the active GPUs (the
        host's own breakdown when none is active)."""
        if device_id is not None:
            g = self.gpus[device_id]
            return _per_step_ms(g.breakdown_ps, len(g.steps))
        if not self.gpus:
            return _per_step_ms(self.host_breakdown_ps, len(self.host_steps))
        each = [_per_step_ms(g.breakdown_ps, len(g.steps)) for g in self.gpus.values()]
        return {c: float(np.mean([b[c] for b in each])) for c in CATEGORIES}

    def step_breakdown(self, limit: int = MAX_STEPS_LISTED, device_id: int | None = None) -> list[dict]:
        """Each step's window and breakdown (ms; averaged over the active GPUs measured in these steps,
        or of one GPU in its own steps), for charts; at most `limit` steps, evenly spaced, so the size
        does not grow with the capture."""
        if device_id is not None:
            steps, b = self.gpus[device_id].steps, self.gpus[device_id].breakdown_ps
            gpus = [self.gpus[device_id]]
        else:
            steps = self.steps
            gpus = [g for g in self.gpus.values() if g.steps is steps]
            b = np.mean([g.breakdown_ps for g in gpus], axis=0) if gpus else self.host_breakdown_ps
        n = len(steps)
        idx: list[int] = distinct(np.linspace(0, n - 1, num=min(n, limit)).round().astype(int)).tolist() if n else []
        # whole columns to lists first: reading NumPy scalars one at a time costs more than the rest
        rows = (np.asarray(b, np.float64)[idx] / 1e9).tolist() if idx else []
        number = steps.number[idx].tolist()
        start = (steps.start_ps[idx].astype(np.float64) / 1e9).tolist()
        end = (steps.end_ps[idx].astype(np.float64) / 1e9).tolist()
        # the kernel figures of each step: the GPU's, or the mean over the GPUs measured in these steps
        figures: dict[str, list] = {}
        each = [g.kernel_figures_per_step for g in gpus]
        for key in KERNEL_FIGURES:
            col = np.full(len(idx), np.nan)
            if each and idx:
                stack = np.array([f[key][idx] for f in each])
                finite = np.isfinite(stack)
                counts = finite.sum(axis=0)
                # the mean of the GPUs with a figure in each step; NaN where none has one (np.nanmean
                # would warn "Mean of empty slice" on the user's stderr: the fuzzer found it)
                sums = np.where(finite, stack, 0.0).sum(axis=0)
                col = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
            figures[key] = [_num(v) for v in col.tolist()]
        return [
            {
                "step": int(number[k]),
                "start_ms": start[k],
                "end_ms": end[k],
                "breakdown_ms": dict(zip(CATEGORIES, row)),
                **{key: figures[key][k] for key in KERNEL_FIGURES},
            }
            for k, row in enumerate(rows)
        ]

    def summary(self) -> dict:
        """The JSON fields shared with the report: devices, steps, headline, breakdown_ms."""
        p = self.profile
        headline = self.headline()
        headline["judged"] = self.judged_headline(headline)
        steps = self.steps.summary()
        steps["per_gpu"] = [{"device_id": g.id, **g.steps.summary()} for g in self.gpus.values()]
        return {
            "framework": p.framework,
            "devices": [d.to_json() for d in p.devices],
            "steps": steps,
            "headline": headline,
            "breakdown_ms": self.breakdown_ms(),
            "breakdown_ms_per_gpu": {str(g.id): self.breakdown_ms(g.id) for g in self.gpus.values()},
            "step_breakdown": self.step_breakdown(),
            # per GPU on multi-GPU hosts, fewer steps each (the chart shows one GPU at a time)
            "step_breakdown_per_gpu": {
                str(g): self.step_breakdown(MAX_STEPS_PER_GPU, g) for g in self.gpus if len(self.gpus) > 1
            },
            "extent_ms": p.end_ps / 1e9,
            "time_base": p.time_base,
            "warnings": list(p.warnings),
            "capture_errors": list(p.capture_errors)[:20],
        }


def _mean(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _per_step_ms(b: np.ndarray, n: int) -> dict[str, float]:
    return {c: float(b[:, j].sum()) / max(n, 1) / 1e9 for j, c in enumerate(CATEGORIES)}


def host_op_union_ps(a: Analysis) -> int:
    """Time of host compute ops placed on the host, nested ones counted once per thread."""
    p = a.profile
    h = a.host
    m = (h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0)
    if m.any() and len(p.ops):
        m &= ~p.ops.on_device[np.maximum(h.op, 0)]
    total = 0
    for t in distinct(h.thread[m]).tolist():
        sel = m & (h.thread == t)
        total += iv.total(iv.union(h.start_ps[sel], h.end_ps[sel]))
    return total


def share_parts(
    parts: Sequence[tuple[int, Stream | HostThread]], merged: EventTable, spec: ColumnSpec, line: str
) -> None:
    """The tables of `parts` (the streams or threads merged into `merged`, each with its index in the
    profile's list) replaced by views of the merged table, whose column `line` ("stream", "thread")
    holds each row's index: a column of a part is gathered from the merged table when read, and the
    copies the parts held are freed. The measures read the merged tables; the per-line ones are read
    again only by what draws or exports lines."""
    if sum(1 for _, h in parts if len(h.events)) < 2:
        return  # one table or none: the merged table's columns are the part's own
    for i, h in parts:
        t = h.events
        if not len(t) or not _is_line(t, line, i):
            continue  # a part whose rows do not give its index (no reader makes one) is kept
        rows = _rows(merged, line, i)
        cols: dict[str, Column] = {}
        for k in t.keys():
            src = t.source(k)
            # a constant or a column computed when read stays as it is (they hold little)
            if isinstance(src, np.ndarray) and k in merged and k in spec and spec[k][0] == src.dtype:
                cols[k] = _Gathered(merged, k, rows, src.dtype)
            else:
                cols[k] = src
        h.events = EventTable(cols, len(t))


def _is_line(t: EventTable, line: str, i: int) -> bool:
    """Whether every row of `t` says it is line `i`."""
    c = t.constant(line)
    if c is not None:
        return bool(c.value == i)
    return line in t and bool((t.peek(line) == i).all())


def _rows(merged: EventTable, line: str, i: int) -> Callable[[], np.ndarray]:
    """Where line i's rows are in the merged table: found when first needed, then kept."""
    found: list[np.ndarray] = []

    def rows() -> np.ndarray:
        if not found:
            found.append(np.flatnonzero(merged.column(line) == i))
        return found[0]

    return rows


class _Gathered:
    """A view's column: gathered from the merged table when read (`dtype` tells its size unread)."""

    __slots__ = ("merged", "key", "rows", "dtype")

    def __init__(self, merged: EventTable, key: str, rows: Callable[[], np.ndarray], dtype: np.dtype):
        self.merged, self.key, self.rows, self.dtype = merged, key, rows, dtype

    def __call__(self) -> np.ndarray:
        return self.merged.column(self.key)[self.rows()]


def analyse(profile: Profile) -> Analysis:
    hsteps = host_steps(profile)
    host = profile.host_events()
    host = host.with_column("step", hsteps.index(host.start_ps).astype(np.int32))
    for key in ("kind", "corr", "start_ps", "end_ps"):  # read by every GPU: computed once, first
        getattr(host, key)
    share_parts(list(enumerate(profile.threads)), host, HOST_SPEC, "thread")  # now: the copies freed sooner
    launches = launch_calls(host)

    def one(d: Device) -> GpuAnalysis | str:
        ev = profile.device_events(d.id)
        compute = np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE, Kind.MEMSET], np.int8))
        if not compute.any():
            return "copy_only" if np.isin(ev.kind, np.asarray(MEMCPY_KINDS, np.int8)).any() else "idle"
        steps = gpu_steps(profile, hsteps, d.id, ev)
        ev = ev.with_column("step", steps.index(ev.start_ps).astype(np.int32))
        streams = [(i, s) for i, s in enumerate(profile.streams) if s.device_id == d.id]
        share_parts(streams, ev, DEVICE_SPEC, "stream")
        act = device_activity(ev, d.id, host, launches)
        excl = exclusive(act)
        return GpuAnalysis(d, steps, ev, act, excl, breakdown(steps, excl))

    gpus: dict[int, GpuAnalysis] = {}
    copy_only: list[int] = []
    idle: list[int] = []
    for d, result in zip(profile.devices, map_ordered(one, profile.devices)):
        if isinstance(result, GpuAnalysis):
            gpus[d.id] = result
        else:
            (copy_only if result == "copy_only" else idle).append(d.id)
    host_act = device_activity(EventTable.empty(DEVICE_SPEC), None, host)
    host_b = breakdown(hsteps, exclusive(host_act))
    return Analysis(profile, hsteps, host, gpus, copy_only, idle, host_act, host_b)
