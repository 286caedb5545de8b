"""0. Before the checklist: the capture itself, an aspect a module (its GPU trace, its steps, what it
recorded, the profiler's own cost, the start-up and range profiling it holds); and `BLINDS`, the checks each capture problem makes unable to tell."""

from __future__ import annotations

from tb_gpu_advisor.checks.capture import gpu, overhead, records, startup, steps  # noqa: F401  (registration)

# The checks a capture.* problem makes blind: with that problem, a pass from them is "cannot tell"
# (checks.blind). Each of them also says not-applicable by itself when it finds nothing to measure.
BLINDS = {
    "capture.no-runtime": ("kernels.launch-bound", "host.thread-contention"),
    "capture.short": ("steps.gaps",),
    "capture.shapes": ("tensorcore.dims",),
    "capture.memory": ("multigpu.batch",),
}
