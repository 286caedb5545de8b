"""The step without the profiler, the base of every what-if: the host's own work less the profiler's
cost of the events recorded in it (docs/whatif.md, "The profiler's own cost").

The cost per event is not one number: the host's pace differs between machines and from minute to
minute, and nothing in a capture tells how fast the same host runs without the profiler (the same
MLP's events cost 1.12x the constants below on one lent H200 and 0.64x on another; neither the
trace's shortest op calls, its nested-op gaps nor its launch calls' durations follow it:
`python benchmarks/whatif_pairs.py --profiler`). So each capture's step without the profiler comes
with a range, the constants scaled by the spread fitted over the timed captures, and where the logdir
holds the step time the user logged for the run (a TensorBoard scalar), the constants are scaled to
meet it (`ProfilerCost`).
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Callable, Sequence

import numpy as np

from tb_gpu_advisor.graph.build import INPUT, LAUNCH, SYNC, StepGraph
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.arrays import median

# The profiler's own cost per host event it records (an op, a runtime call, a marker), with
# record_shapes: on real host-bound steps timed without the profiler, 2.9 µs (ResNet-50 at batch 64 on
# an H200's host), 3.3 (the same in bf16), 3.4 (a 12-layer MLP), 2.0 (the MLP in CUDA graphs), 2.3
# (GPT-2 with its vocabulary padded) (tests/data/gpu_pairs), and 2.0-2.4 on this project's CPU
# (scripts/capture_overhead_cpu.py): their median. Fitted on rn50_b64_fp32, rn50_b64_bf16, mlp_eager,
# mlp_graphed and gpt2_bf16_pad: the pairs those captures make do not grade a model whose base they set.
PROFILER_EVENT_PS = 2_600_000
# ... and inside each runtime call it traces (CUPTI's callbacks around a launch), fitted with the
# per-event cost on the same captures
RUNTIME_CALL_PS = 2_000_000
# ... per Python call it records with with_stack (`python_function` events): 2.1 µs on this project's
# CPU capture (scripts/capture_overhead_cpu.py --with-stack, tests/graph/test_graph.py)
PYTORCH_PYTHON_EVENT_PS = 2_100_000
# ... and per event of an XSpace capture (TensorFlow's and JAX's TraceMe events, JAX's Python tracer,
# on by default): JAX run op by op on an H200 recorded 104,000 events a step and ran 45.7 ms a step
# slower under the profiler (tests/data/gpu_pairs/jax_eager, fitted there), 0.44 µs an event
XSPACE_EVENT_PS = 440_000
# a launch this much longer than a typical one waited for a slot in the launch queue (1,024 entries)
BLOCKED_LAUNCH_PS = 100_000_000
# The multiple of the constants above that brings each timed capture's step without the profiler onto
# the step timed without it spans 0.64-1.26 over the 10 timed captures where the profiler costs a fifth
# of the step or more (tests/data/gpu_pairs, tests/data/gpu_validation; printed by
# `python benchmarks/whatif_pairs.py --profiler`): a capture's step without the profiler is stated
# with the range these give.
COST_SPREAD = (0.64, 1.26)
# The host's own pace moves too, profiler or not: the same step's host work (forward, backward and
# optimizer, a sync after each step), timed without the profiler before a capture and again after it in
# one process, took 0.67-1.27x as long the second time over 7 runs on two lent H200s
# (tests/data/gpu_validation/host_phases_1.json and _2.json; printed by `python
# benchmarks/whatif_pairs.py --pace`). Nothing in a capture tells the pace its steps will run at
# without the profiler, so where the constants are the basis, the host's work is scaled by this range
# at the range's ends (a capture whose profiler costs 1% of a host-bound step still moves with it).
HOST_PACE = (0.67, 1.27)
# Inductor's generated code, under the profiler, wraps each Triton launch in a `_RecordFunctionFast` that
# records the launch's tensor arguments and a dict of its config with a formatted string
# (`CachingAutotuner._pre_launch`, torch/_inductor/runtime/triton_heuristics.py), Python work the launch
# does not do without the profiler and that the events' count does not measure: a torch.compile'd
# GPT-2 spent 20 µs in each launch's span and 43 µs between them (median) under the profiler. So a
# capture's compiled launches (their spans named `triton_*`) bound the step without the profiler from
# below at the compiled code's own cost, as `compile` models it (fixes/fusion.py's `compiled_gaps`).
TRITON_LAUNCH_PREFIX = "triton_"
# the largest multiple a logged step time may call for before the advisor says it does not fit
MAX_SCALE = 4.0
# the share of the step the profiler must cost for its range to matter (else one simulation does)
NEGLIGIBLE = 0.01


def no_profiler(g: StepGraph, framework: str, scale: float = 1.0) -> Changes:
    """The host's own work less the profiler's cost (its constants times `scale`) of the events recorded
    in it; launches that waited for a slot in the launch queue (a host far ahead of the GPU) at a
    typical launch's time."""
    recorded = g.h_events.astype(np.int64) + ((g.h_kind == LAUNCH) | (g.h_kind == SYNC) | (g.h_kind == INPUT))
    gap = np.maximum(g.h_gap, 0)
    # PyTorch's ops cost their record_function callbacks; XSpace's TraceMe events (TensorFlow, JAX)
    # cost about what a Python call does
    torch = framework == "pytorch"
    per_event = (PROFILER_EVENT_PS if torch else XSPACE_EVENT_PS) * scale
    per_call = (PYTORCH_PYTHON_EVENT_PS if torch else XSPACE_EVENT_PS) * scale
    # not out of the allocator's calls or start-up work in the gap: their time is the driver's, as measured
    room = np.maximum(gap - g.h_alloc - g.h_startup, 0)
    cut = np.minimum((recorded * per_event + g.h_py_events.astype(np.int64) * per_call).astype(np.int64), room)
    dur = g.h_dur.copy()
    launch = g.h_kind == LAUNCH
    traced = launch | (g.h_kind == SYNC)
    if torch:
        call = int(RUNTIME_CALL_PS * scale)
        dur = np.where(traced, np.maximum(dur - call, np.minimum(dur, call)), dur)
    if launch.any():
        typical = int(median(dur[launch]))
        # (not a launch whose time is start-up work or CUPTI's replay: graph/build.py's h_kept_dur)
        blocked = launch & (dur > max(20 * typical, BLOCKED_LAUNCH_PS)) & (g.h_kept_dur == 0)
        dur[blocked] = typical
    c = Changes.of(g)
    c.h_gap, c.h_dur = g.h_gap - cut, dur
    return c


def at_pace(g: StepGraph, c: Changes, pace: float) -> Changes:
    """`c` with the host's own work (its gaps, its launch calls) taking `pace` times as long; its waits
    (for input, for the GPU) are other workers' time and stay."""
    if pace == 1.0:
        return c
    out = dataclasses.replace(c)
    out.h_gap = np.where(c.h_gap > 0, (c.h_gap * pace).astype(np.int64), c.h_gap)
    launch = g.h_kind == LAUNCH
    out.h_dur = np.where(launch, (c.h_dur * pace).astype(np.int64), c.h_dur)
    for name in ("h_alloc", "h_startup", "h_kept_dur"):
        setattr(out, name, (getattr(c, name) * pace).astype(np.int64))
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class ProfilerCost:
    """How the profiler's cost is taken out of a capture: the constants' multiple, the multiples that
    bound it, and on what basis ("capture": the constants, with the spread seen over the timed
    captures; "logged": scaled to meet the step time the user logged as a scalar)."""

    scale: float
    low: float
    high: float
    basis: str
    sentence: str
    logged_ms: float | None = None  # the logged step time it met (the median), where there is one

    def to_json(self) -> dict:
        return {
            "basis": self.basis,
            "logged_step_ms": None if self.logged_ms is None else round(self.logged_ms, 4),
            "sentence": self.sentence,
        }


CAPTURE_SENTENCE = "{per:.1f} µs an event ({lo:.2f}-{hi:.2f}x), the host's pace {pace_lo:.2f}-{pace_hi:.2f}x"


def from_capture(framework: str) -> ProfilerCost:
    per = (PROFILER_EVENT_PS if framework == "pytorch" else XSPACE_EVENT_PS) / 1e6
    lo, hi = COST_SPREAD
    pace_lo, pace_hi = HOST_PACE
    sentence = CAPTURE_SENTENCE.format(per=per, lo=lo, hi=hi, pace_lo=pace_lo, pace_hi=pace_hi)
    return ProfilerCost(1.0, lo, hi, "capture", sentence)


def from_logged(
    framework: str, logged_ms: Sequence[float], tag: str, step_at: Callable[[float], float]
) -> ProfilerCost:
    """The profiler's cost scaled so that the step without it is the step the user logged (the median
    of the logged values, ms; the quartiles bound it). `step_at(scale)`: the step simulated without the
    profiler at that multiple of the constants (ps), which falls as the multiple grows."""
    values = sorted(float(v) for v in logged_ms)
    mid = statistics.median(values)
    q1, q3 = (values[len(values) // 4], values[(3 * len(values)) // 4]) if len(values) >= 4 else (mid, mid)

    def solve(target_ms: float) -> tuple[float, str]:
        target = target_ms * 1e9
        if step_at(0.0) <= target:
            return 0.0, "below"
        if step_at(MAX_SCALE) > target:
            return MAX_SCALE, "above"
        lo, hi = 0.0, MAX_SCALE
        for _ in range(16):
            m = (lo + hi) / 2
            if step_at(m) > target:
                lo = m
            else:
                hi = m
        return (lo + hi) / 2, ""

    n = len(values)
    said = f"the step time logged as `{tag}` ({n} value{'s' if n != 1 else ''}, median {mid:.2f} ms)"
    if step_at(0.0) - step_at(MAX_SCALE) < NEGLIGIBLE * step_at(0.0):
        # no multiple moves the step (the GPU, or work the profiler does not record, sets it): scaling to
        # the logged step would take out MAX_SCALE times the cost for a difference that is not the profiler's
        sentence = (
            f"{said}; the profiler's cost moves this step by under {100 * NEGLIGIBLE:.0f}% even at "
            f"{MAX_SCALE:.0f}x its constants: they are kept"
        )
        return ProfilerCost(1.0, 1.0, 1.0, "logged", sentence, mid)
    scale, off = solve(mid)
    a, _ = solve(q3)  # a slower logged step: less of the profiler to take out
    b, _ = solve(q1)
    if off == "below":
        sentence = f"{said} is no faster than the captured step: the profiler's cost taken as none"
    elif off == "above":
        sentence = (
            f"{said} is faster than the captured step with {MAX_SCALE:.0f}x the profiler's modelled cost taken "
            "out: the capture and the logged steps differ by more than the profiler"
        )
    else:
        per = (PROFILER_EVENT_PS if framework == "pytorch" else XSPACE_EVENT_PS) * scale / 1e6
        sentence = f"the profiler's cost taken out at {per:.1f} µs an event recorded, to meet {said}"
    return ProfilerCost(scale, min(a, b, scale), max(a, b, scale), "logged", sentence, mid)
