"""0. Before the checklist: is the model worth a GPU."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.findings import PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, pct


@check(
    id="offload.small-model",
    table="ops",
    title="Enough device work per step to pay for a GPU",
    problem="Small model: {compute_ms_per_step:.3f} ms of GPU compute per step against {overhead_ms_per_step:.3f} ms of overhead",
    section="capture",
    order=100,
    needs_gpu=True,
    anchor="#overview",
    measures="""Device compute (kernels, memsets, collectives) per step against copies and kernel launch
wait per step, from the step-time breakdown, averaged over the active GPUs.""",
    thresholds={"max_compute_ms": Threshold(1.0, "ms", "device compute per step below which the model is small")},
    recommendation="""
Each step runs very little device work, while copies and kernel launches take longer than the
computation itself. Offloading such a small model to a GPU may not pay off: try a larger batch so
each step does more work, or run it on the CPU.""",
)
def small_model(ctx: Context) -> Finding:
    b = ctx.m.breakdown_ms()
    step_ms = sum(b.values())
    compute = b["device_compute"] + b["device_collectives"]
    overhead = b["memcpy_h2d"] + b["memcpy_d2h"] + b["memcpy_d2d"] + b["kernel_launch_wait"]
    metrics = [
        Metric("compute_ms_per_step", compute, "ms", "device compute per step"),
        Metric("overhead_ms_per_step", overhead, "ms", "copies and launch wait per step"),
        Metric("overhead_pct", pct(overhead, step_ms), "%", "share of step time"),
    ]
    if compute < ctx.t["max_compute_ms"] and overhead > compute:
        return ctx.finding(
            WARNING,
            f"{compute:.3f} ms of device compute per step against {overhead:.3f} ms of copies and launch "
            f"wait ({fmt_pct(pct(overhead, step_ms))} of the step).",
            metrics,
        )
    return ctx.finding(PASS, f"{compute:.3f} ms of device compute per step.", metrics)
