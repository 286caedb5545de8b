"""The step without the profiler, the base of every what-if: the host's own work less the profiler's
cost of the events recorded in it (docs/whatif.md)."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.build import INPUT, LAUNCH, SYNC, StepGraph
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.arrays import median

# The profiler's own cost per host event it records (an op, a runtime call, a marker), with
# record_shapes: on real host-bound steps timed without the profiler, 2.9 µs (ResNet-50 at batch 64 on
# an H200's host), 3.3 (the same in bf16), 3.4 (a 12-layer MLP), 2.0 (the MLP in CUDA graphs), 2.3
# (GPT-2 with its vocabulary padded) (tests/data/gpu_pairs), and 2.0-2.4 on this project's CPU
# (scripts/capture_overhead_cpu.py): their median
PROFILER_EVENT_PS = 2_600_000
# ... and inside each runtime call it traces (CUPTI's callbacks around a launch), fitted with the
# per-event cost on the same captures: it brings their four host-bound steps within 5-11% of the steps
# timed without the profiler (tests/test_graph.py)
RUNTIME_CALL_PS = 2_000_000
# ... per Python call it records with with_stack (`python_function` events): 2.1 µs on this project's
# CPU capture (scripts/capture_overhead_cpu.py --with-stack, tests/test_graph.py)
PYTORCH_PYTHON_EVENT_PS = 2_100_000
# ... and per event of an XSpace capture (TensorFlow's and JAX's TraceMe events, JAX's Python tracer,
# on by default): JAX run op by op on an H200 recorded 104,000 events a step and ran 45.7 ms a step
# slower under the profiler (tests/data/gpu_pairs/jax_eager), 0.44 µs an event
XSPACE_EVENT_PS = 440_000
# a launch this much longer than a typical one waited for a slot in the launch queue (1,024 entries)
BLOCKED_LAUNCH_PS = 100_000_000


def no_profiler(g: StepGraph, framework: str) -> Changes:
    """The host's own work less the profiler's cost of the events recorded in it; launches that
    waited for a slot in the launch queue (a host far ahead of the GPU) at a typical launch's time."""
    recorded = g.h_events.astype(np.int64) + ((g.h_kind == LAUNCH) | (g.h_kind == SYNC) | (g.h_kind == INPUT))
    gap = np.maximum(g.h_gap, 0)
    # PyTorch's ops cost their record_function callbacks; XSpace's TraceMe events (TensorFlow, JAX)
    # cost about what a Python call does
    torch = framework == "pytorch"
    per_event = PROFILER_EVENT_PS if torch else XSPACE_EVENT_PS
    per_call = PYTORCH_PYTHON_EVENT_PS if torch else XSPACE_EVENT_PS
    cut = np.minimum(recorded * per_event + g.h_py_events.astype(np.int64) * per_call, gap)
    dur = g.h_dur.copy()
    launch = g.h_kind == LAUNCH
    traced = launch | (g.h_kind == SYNC)
    if torch:
        dur = np.where(traced, np.maximum(dur - RUNTIME_CALL_PS, np.minimum(dur, RUNTIME_CALL_PS)), dur)
    if launch.any():
        typical = int(median(dur[launch]))
        blocked = launch & (dur > max(20 * typical, BLOCKED_LAUNCH_PS))
        dur[blocked] = typical
    c = Changes.of(g)
    c.h_gap, c.h_dur = g.h_gap - cut, dur
    return c
