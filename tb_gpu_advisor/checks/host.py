"""2. One GPU: utilisation (guide 1.2): host threads delaying the launches."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import PASS, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import TENSORFLOW, UNKNOWN


@check(
    id="host.thread-contention",
    time=OwnTime("contention_ms_per_step", wait=True),
    table="idle",
    title="Kernel launches not delayed by tf.data threads",
    problem="Thread contention: first launches wait {contention_pct:.1f}% of each step on busy tf.data threads",
    section="utilisation",
    order=130,
    needs_gpu=True,
    frameworks=(TENSORFLOW, UNKNOWN),
    anchor="#1._analyze_gaps_between_steps",
    measures="""Per GPU, from each step's start to its first device work, the time tf.data's threads are
busy (input waits excluded), as a share of the step. The saving is the part of the GPU's idle time not
claimed first by loss scaling, compilation, host ops or Python work.""",
    thresholds={"warning": Threshold(5.0, "%", "step time the first launches wait while tf.data threads are busy")},
    recommendation="""
The first kernels of each step are launched late while tf.data's background threads are busy, so the
GPU waits. Launch GPU work from dedicated threads with `TF_GPU_THREAD_MODE=gpu_private` so it is not
queued behind tf.data work (and, on several GPUs, raise `TF_GPU_THREAD_COUNT` if needed).""",
    snippet="export TF_GPU_THREAD_MODE=gpu_private",
)
def thread_contention(ctx: Context) -> Finding:
    m = ctx.m
    tf_data = m.host_sets.tf_data
    if not len(tf_data[0]):
        return ctx.not_applicable("No tf.data activity in the profile.")
    per = {g.id: g.tf_data_before_first_launch for g in m.gpus}
    g = ctx.worst({d: float(v.sum()) / m.gpu(d).n for d, v in per.items()})
    lo, hi = g.first_work_delay
    busy = per[g.id]
    mean = float(busy.sum()) / g.n
    share = pct(mean, g.step_ps)
    delays = (hi - lo).astype(float)
    metrics = [
        Metric("contention_pct", share, "%", "step time the first launches wait on busy tf.data threads"),
        Metric("contention_ms_per_step", ms(mean), "ms", "per step"),
        Metric(
            "first_kernel_delay_ms",
            ms(float(delays.mean())) if len(delays) else 0.0,
            "ms",
            "step start to first device work",
        ),
        Metric("gpu_private", "on" if m.gpu_private else "off", "", "TF_GPU_THREAD_MODE=gpu_private threads"),
        Metric("device_id", g.id, "", "GPU"),
    ]
    evidence = []
    for i in np.argsort(-busy, kind="stable")[:3].tolist():
        if busy[i] <= 0:
            break
        evidence.append(
            g.window(
                int(lo[i]),
                int(hi[i]),
                f"first kernel {ms(hi[i] - lo[i]):.2f} ms after the step began, tf.data threads busy",
                g.names_in(int(hi[i]), int(hi[i]) + 1),
            )
        )
    status = ctx.level(share)
    summary = (
        f"The first kernels of a step start {ms(float(delays.mean())) if len(delays) else 0:.2f} ms after it "
        f"begins on average; {ms(mean):.2f} ms of that ({fmt_pct(share)} of the step) with tf.data threads busy; "
        f"gpu_private is {'on' if m.gpu_private else 'off'}."
    )
    rec = None
    if m.gpu_private and status != PASS:
        rec = (
            "GPU work is already launched from private threads (TF_GPU_THREAD_MODE=gpu_private). Raise "
            "TF_GPU_THREAD_COUNT (2 by default) or give tf.data fewer threads (`options.threading.private_threadpool_size`)."
        )
    return ctx.finding(
        status,
        summary,
        metrics,
        saving_ps=float(g.tf_data_before_first_work.sum()) / g.n,
        step_ps=g.step_ps,
        saving_basis="the GPU's idle time before each step's first launch claimed by busy tf.data threads",
        evidence=evidence,
        recommendation=rec,
        device_id=g.id,
    )
