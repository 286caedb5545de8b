"""1. Input pipeline (guide 1.1)."""

from __future__ import annotations

import dataclasses

import numpy as np

from tb_gpu_advisor.checks.base import Context, NoiseMeasure, OwnTime, check
from tb_gpu_advisor.checks.findings import Finding, Metric
from tb_gpu_advisor.checks.texts import INPUT_RECOMMENDATION, INPUT_SNIPPET, INPUT_THRESHOLDS, input_advice
from tb_gpu_advisor.common.units import ms, pct
from tb_gpu_advisor.measures import Measures


def input_per_step(m: Measures, gpus: list[int]) -> np.ndarray:
    """input.bound's measure in each step: the input wait and the input copies the step waits on
    (averaged over `gpus`; the host's input wait without one)."""
    if not gpus:
        return m.host_input_wait_per_step
    return np.mean([m.gpu(g).input_per_step for g in gpus], axis=0)


@check(
    id="input.bound",
    time=OwnTime("input_ms_per_step", wait=True),
    table="input",
    noise=NoiseMeasure("input wait", input_per_step),
    title="Input pipeline keeps up",
    problem="Input-bound: {input_pct:.1f}% of each step waits for input",
    section="input",
    order=110,
    anchor="#1._debug_the_input_pipeline",
    measures="""Per step, the time the host waits on the input iterator (`IteratorGetNext`, the DataLoader's
`__next__`) while the GPU has nothing else to do, plus input host-to-device copies the step waits on (not
hidden under compute); as a share of the step, averaged over the active GPUs, each in its own steps.
With no GPU, the host's wait in its steps. The advice starts from what the trace shows in place: a
DataLoader with worker processes (`_MultiProcessingDataLoaderIter`), or tf.data stages that already
prefetch, map in parallel, interleave or cache.""",
    thresholds=INPUT_THRESHOLDS,
    recommendation=INPUT_RECOMMENDATION,
    snippet=INPUT_SNIPPET,
)
def input_bound(ctx: Context) -> Finding:
    m = ctx.m
    per: dict[int | None, tuple]
    if m.gpus:
        per = {g.id: (g.input_per_step, g.input_wait_per_step, g.input_copy_per_step, g.steps) for g in m.gpus}
    else:
        wait = m.host_input_wait_per_step
        per = {None: (wait, wait, np.zeros(len(wait)), m.host_steps)}
    if not any(len(v[3]) for v in per.values()):
        return ctx.not_applicable("No steps.")
    shares = {d: pct(float(v[0].mean()), v[3].mean_ps) or 0.0 for d, v in per.items()}
    share = float(np.mean(list(shares.values())))
    mean = float(np.mean([v[0].mean() for v in per.values()]))
    step = float(np.mean([v[3].mean_ps for v in per.values()]))
    metrics = [
        Metric("input_pct", share, "%", "share of step time waiting for input"),
        Metric("input_ms_per_step", ms(mean), "ms", "input wait per step"),
        Metric(
            "host_wait_ms_per_step",
            ms(float(np.mean([v[1].mean() for v in per.values()]))),
            "ms",
            "host waiting on the iterator per step",
        ),
        Metric(
            "input_copy_ms_per_step",
            ms(float(np.mean([v[2].mean() for v in per.values()]))),
            "ms",
            "input H2D copies the step waits on",
        ),
        Metric("step_ms", ms(step), "ms", "mean step time"),
    ]
    # evidence: the steps with the longest input wait (on the GPU that waits most), at their longest wait
    worst = max(per, key=lambda d: (shares[d], -(d or 0)))
    total, steps = per[worst][0], per[worst][3]
    evidence = []
    for i in np.argsort(-total, kind="stable")[:3].tolist():
        if total[i] <= 0:
            break
        w = m.longest_input_wait(int(steps.start_ps[i]), int(steps.end_ps[i]))
        if w is not None:
            evidence.append(
                dataclasses.replace(w, label=f"step {int(steps.number[i])}: {ms(total[i]):.2f} ms waiting for input")
            )
    stages = m.stage_self_time
    n = max(len(steps), 1)
    # thread time: stages running on several threads at once add up beyond the step time
    details = [
        {"stage": k, "thread_ms_per_step": ms(v) / n}
        for k, v in sorted(stages.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
    ]
    summary = f"{share:.1f}% of step time waiting for input ({ms(mean):.2f} ms of {ms(step):.2f} ms per step)"
    if len(per) > 1:
        summary += f", averaged over {len(per)} GPUs"
        if not m.shared_steps:  # each GPU in its own steps: name each one's step, as the report does
            summary += (
                " (each in its own steps: "
                + ", ".join(f"GPU {d} {ms(v[3].mean_ps):.2f} ms" for d, v in per.items())
                + ")"
            )
    summary += "."
    if details:
        summary += (
            f" Busiest tf.data stage: {details[0]['stage']} ({details[0]['thread_ms_per_step']:.2f} ms of "
            "thread time per step)."
        )
    loader = m.input_source
    if loader:
        summary += f" The step waits in {loader}."
    status = ctx.level(share)
    # advice that starts from what the pipeline already does (workers, prefetch, a parallel map)
    own = input_advice(ctx.framework, loader, m.input_stage_names)
    return ctx.finding(
        status,
        summary,
        metrics,
        saving_ps=mean,
        step_ps=step,
        saving_basis="the input wait per step, if the pipeline kept up with the device",
        whatif=lambda: m.predict("input"),
        evidence=evidence,
        details=details,
        recommendation=own[0] if own else None,
        snippet=own[1] if own else None,
    )
