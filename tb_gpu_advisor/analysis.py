"""Derived data computed once per profile: steps, per-GPU activity and breakdowns, headline numbers.

Checks and presenters read an `Analysis`; nothing here formats text.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.profile import EventTable, Flag, Kind, Profile
from tb_gpu_advisor.units import pct
from tb_gpu_advisor.steps import CATEGORIES, DeviceActivity, Steps, breakdown, device_activity, find_steps


MAX_STEPS_LISTED = 500  # steps listed one by one in a report (evenly spaced beyond that)


@dataclasses.dataclass
class GpuNumbers:
    device_id: int
    busy_ps: int  # union of all streams' activity within the steps
    compute_ps: int  # kernel and memset time (NCCL and copies excluded), summed per event
    fp16_ps: int
    kernels: int
    fp16_kernels: int
    breakdown_ps: np.ndarray  # (steps, categories)


@dataclasses.dataclass
class Analysis:
    profile: Profile
    steps: Steps
    host: EventTable
    activity: dict[int | None, DeviceActivity]
    gpus: list[GpuNumbers]
    host_breakdown_ps: np.ndarray  # mean of the GPUs' breakdowns; with no GPU, the host's own
    device_tables: dict[int, EventTable] = dataclasses.field(default_factory=dict)  # each GPU's streams merged
    cache: dict = dataclasses.field(default_factory=dict)  # measurements several checks share

    @property
    def step_ps(self) -> int:
        return int(self.steps.dur_ps.sum())

    # -- headline numbers (CHECKLIST.md "Headline numbers") ---------------------------------

    def op_time_ps(self) -> tuple[int, int]:
        """(device op time, host op time): device events attributed to a framework op, and host
        framework ops placed on the host. Input-pipeline and runtime events are not ops."""
        p = self.profile
        device = 0
        for s in p.streams:
            ev = s.events
            device += int(ev.dur_ps[ev.op >= 0].sum())
        h = self.host
        host_ops = (h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0)
        if np.any(host_ops):
            host_ops &= ~p.ops.on_device[np.maximum(h.op, 0)]
        host = int(h.dur_ps[host_ops].sum())
        return device, host

    def headline(self) -> dict:
        step_ps = self.step_ps
        per_gpu = []
        for g in self.gpus:
            per_gpu.append(
                {
                    "device_id": g.device_id,
                    "device_busy_pct": pct(g.busy_ps, step_ps),
                    "fp16_compute_pct": pct(g.fp16_ps, g.compute_ps),
                    "fp16_kernels": g.fp16_kernels,
                    "kernels": g.kernels,
                    "compute_ms": g.compute_ps / 1e9,
                }
            )
        device_ps, host_ps = self.op_time_ps()
        busy = sum(g.busy_ps for g in self.gpus)
        compute = sum(g.compute_ps for g in self.gpus)
        fp16 = sum(g.fp16_ps for g in self.gpus)
        return {
            # mean over the host's GPUs of the busy share of step time
            "device_busy_pct": pct(busy, step_ps * len(self.gpus)) if self.gpus else None,
            "device_op_time_pct": pct(device_ps, device_ps + host_ps),
            "fp16_compute_pct": pct(fp16, compute),
            "fp16_kernels": sum(g.fp16_kernels for g in self.gpus),
            "kernels": sum(g.kernels for g in self.gpus),
            "device_op_ms": device_ps / 1e9,
            "host_op_ms": host_ps / 1e9,
            "per_gpu": per_gpu,
        }

    def breakdown_ms(self, device_id: int | None = None) -> dict[str, float]:
        """Per step average of each category, ms; for one GPU, or averaged over the host's GPUs."""
        if device_id is None:
            b = self.host_breakdown_ps
        else:
            b = next(g.breakdown_ps for g in self.gpus if g.device_id == device_id)
        n = max(len(self.steps), 1)
        return {c: float(b[:, j].sum()) / n / 1e9 for j, c in enumerate(CATEGORIES)}

    def step_breakdown(self, limit: int = MAX_STEPS_LISTED) -> list[dict]:
        """Each step's window and breakdown (ms, averaged over the host's GPUs), for charts; at most
        `limit` steps, evenly spaced, so the size does not grow with the capture."""
        n = len(self.steps)
        idx = np.unique(np.linspace(0, n - 1, num=min(n, limit)).round().astype(int)) if n else []
        b = self.host_breakdown_ps
        return [
            {"step": int(self.steps.number[i]), "start_ms": float(self.steps.start_ps[i]) / 1e9,
             "end_ms": float(self.steps.end_ps[i]) / 1e9,
             "breakdown_ms": {c: float(b[i, j]) / 1e9 for j, c in enumerate(CATEGORIES)}}
            for i in idx
        ]  # fmt: skip

    def summary(self) -> dict:
        """The JSON fields shared with the report: devices, steps, headline, breakdown_ms."""
        return {
            "devices": [d.to_json() for d in self.profile.devices],
            "steps": self.steps.summary(),
            "headline": self.headline(),
            "breakdown_ms": self.breakdown_ms(),
            "breakdown_ms_per_gpu": {str(g.device_id): self.breakdown_ms(g.device_id) for g in self.gpus},
            "step_breakdown": self.step_breakdown(),
            "extent_ms": self.profile.end_ps / 1e9,
        }


def analyse(profile: Profile) -> Analysis:
    steps = find_steps(profile)
    host = profile.host_events()
    activity: dict[int | None, DeviceActivity] = {}
    gpus: list[GpuNumbers] = []
    tables: dict[int, EventTable] = {}
    for d in profile.devices:
        ev = tables[d.id] = profile.device_events(d.id)  # merged and sorted once, here
        act = device_activity(ev, d.id, host)
        activity[d.id] = act
        kernels = ev.kind == Kind.KERNEL
        # Device compute is kernels and memsets, as in the breakdown's device_compute.
        compute = kernels | (ev.kind == Kind.MEMSET)
        fp16 = kernels & ((ev.flags & Flag.FP16) != 0)
        gpus.append(
            GpuNumbers(
                device_id=d.id,
                busy_ps=int(iv.measure_in(act.busy, steps.start_ps, steps.end_ps).sum()),
                compute_ps=int(ev.dur_ps[compute].sum()),
                fp16_ps=int(ev.dur_ps[fp16].sum()),
                kernels=int(kernels.sum()),
                fp16_kernels=int(fp16.sum()),
                breakdown_ps=breakdown(steps, act),
            )
        )
    if gpus:
        host_b = np.mean([g.breakdown_ps for g in gpus], axis=0)
    else:
        act = device_activity(EventTable.empty(), None, host)
        activity[None] = act
        host_b = breakdown(steps, act)
    return Analysis(profile, steps, host, activity, gpus, host_b, tables)
