"""`warmup`: the capture's steps without the program's start-up: the driver's context, stream and module
creation, a kernel's first launch loading its module, and a warm-up step's allocations (the caching
allocator filling its cache). A process does them once, before its steady steps: this is the step a
capture after the warm-up measures (`torch.profiler.schedule(wait=, warmup=)`), not a faster program."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.build import LAUNCH
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.arrays import median

# no pair grades it: the host model's tolerance stands for its error
ERROR = 0.25


def warmup(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    startup = np.clip(c.h_startup, 0, np.maximum(c.h_gap, 0))
    # a kernel's first launch loading its module (not CUPTI's replay, which capturing without the range
    # profiler removes) at a typical launch's time
    loads = (c.h_kept_dur > 0) & (g.range_records == 0)
    if not startup.any() and not loads.any():
        return None
    c.h_gap = c.h_gap - startup
    c.h_startup = c.h_startup - startup
    if loads.any():
        launch = (g.h_kind == LAUNCH) & ~loads
        typical = int(median(c.h_dur[launch])) if launch.any() else 0
        c.h_dur = np.where(loads, np.minimum(c.h_dur, typical), c.h_dur)
        c.h_kept_dur = np.where(loads, 0, c.h_kept_dur)
        # their kernels reach the GPU a typical launch latency after the call, not after the load
        loaded = loads[g.d_launch]
        c.d_lat = np.where(loaded, np.minimum(c.d_lat, g.latency_ps), c.d_lat)
    gone = float(startup.sum()) + float(g.h_kept_dur[loads].sum())
    return f"the start-up work gone ({gone / max(g.steps, 1) / 1e9:.2f} ms a step): the steps after the warm-up"
