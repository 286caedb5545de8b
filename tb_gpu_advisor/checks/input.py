"""1. Input pipeline (guide 1.1)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.common import compute_busy, device_events, host_evidence, input_copy_mask, ms, pct, top
from tb_gpu_advisor.profile import Kind
from tb_gpu_advisor.report import Metric

INPUT_RECOMMENDATION = """
The step waits for its input. Check the pipeline with the tf.data performance guide: `prefetch` at
the end of the pipeline, `map(..., num_parallel_calls=tf.data.AUTOTUNE)`, `cache` after expensive
work that does not change between epochs, and `interleave` to read files in parallel. To confirm,
run the synthetic-data experiment: replace the dataset with random in-memory data of the same shape
(`tf.data.Dataset.from_tensors(batch).repeat()`); if the step time drops to match, the pipeline is
the bottleneck, and a well-built pipeline gives about the same step time with real and synthetic
data."""
INPUT_SNIPPET = """dataset = (tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
           .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
           .batch(batch_size)
           .prefetch(tf.data.AUTOTUNE))
# synthetic-data experiment: same shapes, no input work
synthetic = tf.data.Dataset.from_tensors(next(iter(dataset))).repeat()"""
INPUT_THRESHOLDS = {
    "warning": Threshold(5.0, "%", "share of step time waiting for input (moderate)"),
    "critical": Threshold(20.0, "%", "share of step time waiting for input (high)"),
}


def input_wait_per_step(a, device_id: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(host input wait, input H2D copies) per step, ps, counted only while the device has nothing
    else to do (the breakdown's precedence), for one GPU or, with no GPU, the host."""
    from tb_gpu_advisor.steps import CATEGORIES

    j = CATEGORIES.index("host_input_wait")
    if device_id is None:
        return a.host_breakdown_ps[:, j].astype(np.float64), np.zeros(len(a.steps))
    g = next(g for g in a.gpus if g.device_id == device_id)
    wait = g.breakdown_ps[:, j].astype(np.float64)
    ev = device_events(a, device_id)
    sel = input_copy_mask(a.profile, ev)
    copies = iv.subtract(iv.union(ev.start_ps[sel], ev.end_ps[sel]), compute_busy(a, device_id))
    return wait, iv.measure_in(copies, a.steps.start_ps, a.steps.end_ps).astype(np.float64)


def stage_self_time(a) -> dict[str, float]:
    """Self time (ps) of each tf.data stage (`Iterator::...`) over the capture: a stage nested in
    another on the same thread is subtracted from its parent."""
    out: dict[str, float] = defaultdict(float)
    names = a.profile.names
    for t in a.profile.threads:
        ev = t.events.take(t.events.kind == Kind.INPUT_STAGE)
        stack: list[tuple[int, int]] = []  # (end, name id) of the enclosing stages
        for s, e, n in zip(ev.start_ps.tolist(), ev.end_ps.tolist(), ev.name.tolist()):
            while stack and stack[-1][0] <= s:
                stack.pop()
            out[names[n]] += e - s
            if stack:
                out[names[stack[-1][1]]] -= e - s
            stack.append((e, n))
    return {k: v for k, v in out.items() if v > 0}


def input_finding(ctx: Context, per_gpu: bool):
    a = ctx.a
    devices = [g.device_id for g in a.gpus] or [None]
    results = {}
    for d in devices:
        wait, copies = input_wait_per_step(a, d)
        results[d] = (wait, copies)
    # the GPU that waits the most (input.bound on one GPU is the same as on all)
    worst = max(devices, key=lambda d: float(results[d][0].sum() + results[d][1].sum()))
    wait, copies = results[worst]
    total = wait + copies
    step = ctx.step_ps
    mean = float(total.mean()) if len(total) else 0.0
    share = pct(mean, step)
    status = ctx.level(share)
    metrics = [
        Metric("input_pct", share, "%", "share of step time waiting for input"),
        Metric("input_ms_per_step", ms(mean), "ms", "input wait per step"),
        Metric("host_wait_ms_per_step", ms(float(wait.mean())), "ms", "host waiting on the iterator per step"),
        Metric("input_copy_ms_per_step", ms(float(copies.mean())), "ms", "input H2D copies the step waits on"),
        Metric("step_ms", ms(step), "ms", "mean step time"),
    ]
    if per_gpu:
        per = {d: pct(float((results[d][0] + results[d][1]).mean()), step) for d in devices}
        metrics.append(Metric("worst_gpu", worst, "", "GPU waiting the most"))
        for d in devices:
            metrics.append(Metric(f"input_pct_gpu{d}", per[d], "%", f"GPU {d}"))
    # evidence: the steps with the longest input wait, at their longest get-next call
    evidence = []
    waits = [(t.name, t.events.take(t.events.kind == Kind.INPUT_WAIT)) for t in a.profile.threads]
    for i in np.argsort(-total, kind="stable")[:3]:
        if total[i] <= 0:
            break
        lo, hi = a.steps.start_ps[i], a.steps.end_ps[i]
        best = None
        for name, ev in waits:
            inside = (ev.start_ps >= lo) & (ev.start_ps < hi)
            if np.any(inside):
                k = np.flatnonzero(inside)[np.argmax(ev.dur_ps[inside])]
                if best is None or ev.dur_ps[k] > best[3]:
                    best = (name, int(ev.start_ps[k]), int(ev.end_ps[k]), int(ev.dur_ps[k]), a.profile.names[ev.name[k]])
        if best:
            evidence.append(host_evidence(best[0], best[1], best[2],
                                          f"step {int(a.steps.number[i])}: {ms(total[i]):.2f} ms waiting for input",
                                          [best[4]]))  # fmt: skip
    stages = stage_self_time(a)
    n = max(len(a.steps), 1)
    # thread time: stages running on several threads at once add up beyond the step time
    details = [{"stage": k, "thread_ms_per_step": ms(v) / n} for k, v in top(stages, 8)]
    where = f" on GPU {worst}" if worst is not None and len(devices) > 1 else ""
    summary = f"{share or 0:.1f}% of step time{where} waiting for input ({ms(mean):.2f} ms of {ms(step):.2f} ms per step)."
    if details:
        summary += (f" Busiest tf.data stage: {details[0]['stage']} ({details[0]['thread_ms_per_step']:.2f} ms of "
                    "thread time per step).")
    return ctx.finding(status, summary, metrics, saving_ps=mean,
                       saving_basis="the input wait per step, if the pipeline kept up with the device",
                       evidence=evidence, details=details)  # fmt: skip


@check(
    id="input.bound",
    title="Input pipeline keeps up",
    section="input",
    anchor="#1._debug_the_input_pipeline",
    thresholds=INPUT_THRESHOLDS,
    recommendation=INPUT_RECOMMENDATION,
    snippet=INPUT_SNIPPET,
)
def input_bound(ctx: Context):
    if not len(ctx.a.steps):
        return ctx.not_applicable("No steps.")
    return input_finding(ctx, per_gpu=False)
