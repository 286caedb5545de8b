"""2. One GPU: utilisation (guide 1.2): ops run eagerly."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import TENSORFLOW, UNKNOWN


@check(
    id="ops.eager",
    time=OwnTime("eager_host_ms_per_step"),
    table="ops",
    title="Ops run inside graphs, not eagerly",
    problem="Eager ops: {eager_pct:.1f}% of op time runs eagerly",
    section="utilisation",
    order=170,
    frameworks=(TENSORFLOW, UNKNOWN),
    anchor="#1._small_gpu_kernels_and_host_kernel_launch_delays",
    measures="""Inside the steps: eager executions (`EagerExecute` and the `EagerLocalExecute` inside it are
one execution; calls of whole functions and the iterator's `next()` are not eager ops) and their host
dispatch time, plus the device time of kernels flagged eager; as a share of all op time. Info only when
the dispatch is under `min_step_pct` of the step.""",
    thresholds={
        "warning": Threshold(10.0, "%", "share of op time executed eagerly"),
        "critical": Threshold(50.0, "%", "share of op time executed eagerly (most of the program)"),
        "min_step_pct": Threshold(2.0, "%", "eager dispatch per step, share of step time, below which it is only info"),
    },
    recommendation="""
Ops run eagerly, one Python dispatch at a time. Wrap the training step in `tf.function` so it runs as
a graph; Keras `Model.fit` does this by itself. Keep metric updates and logging out of the per-step
Python path.""",
    snippet="""@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss""",
)
def eager_ops(ctx: Context) -> Finding:
    m = ctx.m
    e = m.eager
    device_ops, host_ops = m.op_time_ps
    total = device_ops + host_ops + e.host_ps
    if total <= 0:
        return ctx.not_applicable("No framework ops in the profile.")
    share = pct(e.device_ps + e.host_ps, total)
    steps = m.host_steps
    n = max(len(steps), 1)
    dispatch_pct = pct(e.host_ps / n, steps.mean_ps) or 0.0
    details = [
        {"op_type": r.op_type, "count": r.count, "host_ms_per_step": ms(r.ps) / n}
        | ({"ran_as": r.executed} if r.executed != r.op_type else {})
        for r in e.rows[:8]
    ]
    metrics = [
        Metric("eager_pct", share, "%", "share of op time executed eagerly"),
        Metric("eager_host_ms_per_step", ms(e.host_ps) / n, "ms", "eager dispatch on the host per step"),
        Metric("eager_device_ms_per_step", ms(e.device_ps) / n, "ms", "device time of eager ops per step"),
        Metric("eager_ops", e.executions, "", "eager op executions in the steps"),
        Metric("eager_step_pct", dispatch_pct, "%", "eager dispatch per step, share of step time"),
    ]
    summary = f"{fmt_pct(share)} of op time executed eagerly ({e.executions} eager op executions in the steps)"
    status = ctx.level(share)
    if status != PASS and dispatch_pct < ctx.t["min_step_pct"]:
        status = INFO
        summary += f", but eager dispatch is only {dispatch_pct:.1f}% of the step"
    return ctx.finding(status, summary + ".", metrics, evidence=[e.window] if e.window else [], details=details)
