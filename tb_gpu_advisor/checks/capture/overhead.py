"""0. Before the checklist, the profiler's own cost in the captured step."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms


@check(
    id="capture.overhead",
    title="The profiler's own cost is a small part of the step",
    problem="Profiler overhead: {overhead_pct:.0f}% of each captured step is the profiler's own cost",
    section="capture",
    order=95,
    anchor="#overview",
    measures="""The step as captured against the same step re-timed by its graph without the profiler's
cost (each op, runtime call and Python call it records costs the host some µs: docs/whatif.md, "The
profiler's own cost"). Every saving in the report is predicted for the step without the profiler,
which is what a fix changes in training.""",
    thresholds={"info": Threshold(10.0, "%", "the profiler's cost, share of the captured step")},
    recommendation={
        "default": """The profiler slows this step: the savings above are for the step without it, and
a before/after comparison of two captures sets each one's host apart from its device. To make it
cheaper, record fewer events: no Python tracer (`python_tracer_level=0`), fewer host events
(`host_tracer_level=1`). To pin the step without it, log the step time as a scalar `step_time_ms` (ms
a step, `tf.summary.scalar`) in the run's folder: the advisor then takes it from there, not from its
per-event constants and the host's pace (docs/whatif.md).""",
        "pytorch": """The profiler slows this step (`record_shapes`, `with_stack` and each op's callback
add to the host's time): the savings above are for the step without it, and `diff` sets each
capture's host apart from its device. Log the step time without the profiler as a scalar
`step_time_ms` (ms a step, `SummaryWriter.add_scalar` in the run's folder): the advisor then takes the
step without the profiler from it, not from its per-event constants and the host's pace (docs/whatif.md).
Capture with `with_stack=False` when the stacks are not needed.""",
    },
)
def overhead(ctx: Context) -> Finding:
    sm = ctx.m.step_model
    if sm is None or sm.captured_ps <= 0:
        return ctx.not_applicable("No steps to re-time.")
    share = 100.0 * sm.profiler_share
    metrics = [
        Metric("overhead_pct", share, "%", "the profiler's cost, share of the captured step"),
        Metric("overhead_ms", ms(sm.profiler_ps), "ms", "the profiler's cost per step"),
        Metric("unprofiled_step_ms", ms(sm.unprofiled_ps), "ms", "the step without the profiler (simulated)"),
        Metric("captured_step_ms", ms(sm.captured_ps), "ms", "the step as captured"),
    ]
    what = {"GPU": "the GPU sets it", "host": "the host sets it", "input": "waiting for input sets it"}
    summary = (
        f"The profiler adds {ms(sm.profiler_ps):.2f} ms to each step ({fmt_pct(share)}): {ms(sm.captured_ps):.2f} ms "
        f"captured, {ms(sm.unprofiled_ps):.2f} ms without it, and without it {what.get(sm.bound, sm.bound)}."
    )
    return ctx.finding(INFO if share >= ctx.t["info"] else PASS, summary, metrics)
