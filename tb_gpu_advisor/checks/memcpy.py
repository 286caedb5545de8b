"""2. One GPU: utilisation (guide 1.2): copies beyond the model's input and output."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import Context, OwnTime, check, table
from tb_gpu_advisor.checks.findings import INFO, PASS, Finding, Metric
from tb_gpu_advisor.checks.texts import COPY_THRESHOLDS
from tb_gpu_advisor.common.units import fmt_pct, ms, pct


@check(
    id="memcpy.excessive",
    time=OwnTime("blocking_copy_ms_per_step"),
    title="No excessive host-device copies",
    problem="Excessive copies: {blocking_copy_pct:.1f}% of each step waits on copies",
    section="utilisation",
    order=190,
    needs_gpu=True,
    anchor="#2._tensorflow_op_placement",
    measures="""Copies other than the input's host-to-device copies (classified by name or their details,
never as compute), per direction: count, bytes and time per step, and the time they run while compute
is idle, as a share of the step, averaged over the active GPUs; device-to-host copies in the middle of
a step; each copy's op and the ops of the kernels before and after it.""",
    thresholds=COPY_THRESHOLDS,
    recommendation={
        "default": """
Besides the model's inputs and outputs, tensors are copied between host and device during the step,
and the GPU waits for them. Such copies usually come from ops placed on the host (see
placement.host-ops) or from reading values back in Python (`.numpy()`, `float(loss)`, printing) in
the middle of a step. Keep the computation on the GPU and read values back only at the end of a
step, or every N steps. The copy's op and the ops next to it tell where in the model it happens.""",
        "pytorch": """
Besides the model's inputs, tensors are copied between host and device during the step, and the GPU
waits for them: `.item()`, `.cpu()`, `.numpy()` or `print(tensor)` in the step, tensors created on the
CPU and moved every step, or `.to(device)` without `non_blocking=True` from unpinned memory. Create
tensors on the device (`torch.zeros(..., device="cuda")`), keep metrics on the GPU, and read values
back every N steps.""",
    },
)
def excessive_copies(ctx: Context) -> Finding:
    m = ctx.m
    per = {g.id: g.copies for g in m.gpus}
    shares = {d: pct(v.blocking_ps_per_step, m.gpu(d).step_ps) or 0.0 for d, v in per.items()}
    share = float(np.mean(list(shares.values())))
    g = ctx.worst({d: v.blocking_ps_per_step for d, v in per.items()})
    r = per[g.id]
    mean = float(np.mean([v.blocking_ps_per_step for v in per.values()]))
    step = float(np.mean([m.gpu(d).step_ps for d in per]))
    metrics = [
        Metric("blocking_copy_pct", share, "%", "copies beyond the input while compute is idle"),
        Metric("blocking_copy_ms_per_step", ms(mean), "ms", "per step"),
        Metric("mid_step_d2h_per_step", r.mid_step_d2h_per_step, "", "device-to-host copies mid-step"),
    ]
    for c in r.directions:
        dirn = c.direction
        metrics.append(Metric(f"{dirn.lower()}_per_step", c.count_per_step, "", f"{dirn} copies per step"))
        metrics.append(Metric(f"{dirn.lower()}_mb_per_step", c.mb_per_step, "MB", f"{dirn} MB per step"))
        metrics.append(Metric(f"{dirn.lower()}_ms_per_step", c.ms_per_step, "ms", f"{dirn} time per step"))
    status = ctx.level(share)
    title = None
    if status == PASS and r.mid_step_d2h_per_step >= 1:
        # copies that block almost nothing yet: the note is the sync points, not "excessive copies: 0.0%"
        status = INFO
        title = (
            f"Device-to-host copies mid-step: {r.mid_step_d2h_per_step:.1f} per step on GPU {g.id} "
            f"({fmt_pct(share)} of the step waits on copies)"
        )
    summary = (
        f"Copies beyond the input block compute {ms(mean):.3f} ms per step ({fmt_pct(share)}); "
        f"{r.mid_step_d2h_per_step:.1f} device-to-host copies per step in mid-step on GPU {g.id}."
    )
    if r.rows and r.rows[0].blocking_ms_per_step > 0:
        top = r.rows[0]
        summary += (
            f" Largest: {top.copy} of {top.op or 'no op'} (after {top.before or '-'}, before {top.after or '-'})."
        )
    return ctx.finding(
        status,
        summary,
        metrics,
        saving_ps=mean,
        step_ps=step,
        saving_basis="the time copies beyond the input leave compute idle",
        evidence=r.windows,
        details=table(r.rows),
        device_id=g.id,
        title=title,
    )
