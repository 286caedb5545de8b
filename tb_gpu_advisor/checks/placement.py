"""2. One GPU: utilisation (guide 1.2): ops placed on the host."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import TENSORFLOW, UNKNOWN

PY_FUNCTION = """
`tf.py_function` / `tf.numpy_function` runs Python inside the step on the host, holding the GIL, while
the GPU waits for its result. Replace it with TensorFlow ops so it runs in the graph (on the GPU), or
move it into the input pipeline (`dataset.map`) where it overlaps with training."""


@check(
    id="placement.host-ops",
    time=OwnTime("host_op_ms_per_step"),
    table="ops",
    title="Compute ops placed on the GPU",
    problem="Host ops: {host_op_pct:.1f}% of op time runs on the host",
    section="utilisation",
    order=180,
    frameworks=(TENSORFLOW, UNKNOWN),
    anchor="#2._tensorflow_op_placement",
    measures="""Framework op time placed on the host (ops with no device work, on threads other than
tf.data's; the runtime's plumbing such as `_Arg`, `_Recv`, `_Send`, `RemoteCall` and kernel-less ops such
as `ReadVariableOp` are not ops), nested op events counted once, against op time on the device. The
saving is the part of the GPU's idle time those ops claim.""",
    thresholds={
        "warning": Threshold(10.0, "%", "share of framework op time placed on the host"),
        "critical": Threshold(30.0, "%", "share of framework op time placed on the host (high)"),
    },
    recommendation="""
Some compute ops run on the host. Find out where ops are placed with
`tf.debugging.set_log_device_placement(True)` as the first statement of the program. Some ops
override a requested placement (for example `tf.unique`, string ops): replace them or move them into
the input pipeline. Even on one GPU, a distribution strategy such as
`tf.distribute.OneDeviceStrategy("/gpu:0")` makes placement more deterministic.""",
    snippet="""tf.debugging.set_log_device_placement(True)  # first statement of the program
strategy = tf.distribute.OneDeviceStrategy("/gpu:0")""",
)
def host_ops(ctx: Context) -> Finding:
    m = ctx.m
    if not m.gpu_ids:
        return _python_in_the_graph(ctx) or ctx.not_applicable("No GPU: every op runs on the host.")
    device_ps, host_ps = m.op_time_ps
    if not device_ps + host_ps:
        return ctx.not_applicable("No framework op in the capture: the GPU work is not attributed to any op.")
    share = pct(host_ps, device_ps + host_ps)
    rows = m.host_op_rows
    host_set = m.host_sets.host_ops
    per = {g.id: g.exposed_per_step(host_set) for g in m.gpus}
    g = ctx.worst({d: float(v.sum()) / m.gpu(d).n for d, v in per.items()})
    n = g.n
    exposed = float(per[g.id].sum()) / n
    details = [{"op": f"{r.name} ({r.type_label})", "ms_per_step": ms(r.ps) / n, "count": r.count} for r in rows[:8]]
    metrics = [
        Metric("host_op_pct", share, "%", "share of op time on the host"),
        Metric("host_op_ms_per_step", ms(host_ps) / n, "ms", "host op time per step"),
        Metric("exposed_ms_per_step", ms(exposed), "ms", "host op time while the GPU is idle, per step"),
    ]
    summary = f"{fmt_pct(share)} of framework op time is on the host"
    rec = None
    if details:
        summary += f"; top: {details[0]['op']} {details[0]['ms_per_step']:.2f} ms/step"
        py = next((r for r in rows[:3] if r.py_function), None)
        if py is not None:
            summary += (
                f". {py.name} is a tf.py_function running Python in the step "
                f"({ms(py.ps) / n:.2f} ms/step, {fmt_pct(pct(py.ps / n, g.step_ps))} of the step)"
            )
            rec = PY_FUNCTION + "\n\n" + (ctx.text(ctx.spec.recommendation) or "")
    return ctx.finding(
        ctx.level(share),
        summary + ".",
        metrics,
        saving_ps=g.idle_cause_mean("host_ops"),
        step_ps=g.step_ps,
        saving_basis="the GPU's idle time claimed by host ops, if they ran on the GPU",
        evidence=m.longest_host_ops,
        details=details,
        recommendation=rec,
    )


def _python_in_the_graph(ctx: Context) -> Finding | None:
    """Without a GPU every op is on the host, but a tf.py_function in the step still holds it up: name it."""
    m = ctx.m
    py = [r for r in m.host_op_rows if r.py_function]
    steps = m.host_steps
    if not py or not len(steps):
        return None
    n = len(steps)
    ps = sum(r.ps for r in py) / n
    share = pct(ps, steps.mean_ps) or 0.0
    names = ", ".join(f"{r.name} ({r.type_label})" for r in py[:3])
    metrics = [
        Metric("host_op_pct", None, "%", "share of op time on the host (no GPU)"),
        Metric("py_function_ms_per_step", ms(ps), "ms", "tf.py_function time per step"),
        Metric("py_function_step_pct", share, "%", "share of the step"),
    ]
    return ctx.finding(
        INFO,
        f"No GPU, so every op runs on the host; {names} runs Python inside the step for "
        f"{ms(ps):.2f} ms per step ({share:.1f}% of the step).",
        metrics,
        recommendation=PY_FUNCTION,
        details=[{"op": f"{r.name} ({r.type_label})", "ms_per_step": ms(r.ps) / n, "count": r.count} for r in py],
        title=f"tf.py_function in the step: {share:.1f}% of each step runs Python",
    )
