"""5. Several GPUs on one host (guide 2): the gradient all-reduce."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct

EXPECTED_CALLS = Threshold(1.0, "calls", "all-reduce calls per GPU per step expected")

# Default bus bandwidth per interconnect (GB/s), used when the user gives none.
INTERCONNECTS = (
    ("H100", "NVLink 4", 450.0),
    ("A100", "NVLink 3", 300.0),
    ("V100", "NVLink 2", 150.0),
)
PCIE = ("PCIe 3.0 x16", 12.0)


def interconnect(name: str) -> tuple[str, float]:
    if "PCIE" in name.upper():
        return ("PCIe 4.0 x16", 25.0) if any(g in name for g in ("A100", "H100")) else PCIE
    for key, label, bw in INTERCONNECTS:
        if key in name:
            return label, bw
    return PCIE


@check(
    id="allreduce.count",
    table="kernels",
    title="One gradient all-reduce per step",
    problem="Extra all-reduces: {allreduce_per_gpu_per_step:.1f} calls per GPU per step",
    section="multigpu",
    order=320,
    anchor="#1._optimize_gradient_allreduce",
    measures="NCCL all-reduce kernels per active GPU per step; the time of all but the longest in each step.",
    thresholds={"expected_per_step": EXPECTED_CALLS},
    recommendation={
        "default": """
More NCCL all-reduce calls run per GPU per step than expected; each one synchronises all devices.
Ideally there is one call per GPU per step, for the gradients. Look for metrics or other values
reduced across replicas every step (for example `strategy.reduce` or a synced metric inside the step)
and reduce them less often or locally; let the optimizer pack gradients into one all-reduce.""",
        "pytorch": """
More NCCL all-reduce calls run per GPU per step than expected; each one synchronises all devices.
DistributedDataParallel packs gradients into buckets (`bucket_cap_mb`, 25 MB by default): larger
buckets mean fewer calls. Avoid `all_reduce` of metrics every step, and with gradient accumulation skip
the synchronisation on the accumulation steps with `model.no_sync()`.""",
    },
    snippet={"pytorch": "model = DistributedDataParallel(model, bucket_cap_mb=100)"},
)
def allreduce_count(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    ar = m.allreduce
    if not ar.any_calls:
        return ctx.not_applicable("No NCCL all-reduce kernels in the profile.")
    per = ar.per_gpu
    mean = float(np.mean(list(per.values())))
    metrics = [Metric("allreduce_per_gpu_per_step", mean, "calls", "all-reduce calls per GPU per step")]
    metrics += [Metric(f"allreduce_per_step_gpu{d}", v, "calls", f"GPU {d}") for d, v in per.items()]
    step = float(np.mean([g.step_ps for g in m.gpus]))
    if mean > ctx.t["expected_per_step"] + 1e-9:
        return ctx.finding(
            WARNING,
            f"{mean:.1f} all-reduce calls per GPU per step (expected {ctx.t['expected_per_step']:.0f}).",
            metrics,
            saving_ps=ar.extra_ps,
            step_ps=step,
            saving_basis="the time of all but the longest all-reduce of each step",
        )
    return ctx.finding(PASS, f"{mean:.1f} all-reduce call(s) per GPU per step.", metrics)


@check(
    id="allreduce.cost",
    time=OwnTime("allreduce_ms_per_step"),
    table="kernels",
    collective_time=True,
    title="All-reduce small against the step",
    problem="All-reduce: {allreduce_pct:.1f}% of the step in gradient transfers",
    section="multigpu",
    order=330,
    anchor="#1._optimize_gradient_allreduce",
    measures="""All-reduce transfer time per step (each call's shortest duration across GPUs; the rest is
waiting inside NCCL for the others, reported apart), against the estimate (parameters × 4 bytes ×
2(n-1)/n) / bandwidth. Parameters from --params or the all-reduce ops' shapes; bandwidth from
--bandwidth or a default per interconnect.""",
    thresholds={
        "warning": Threshold(15.0, "%", "step time in all-reduce transfers"),
        "slower_than_estimate": Threshold(2.0, "x", "measured all-reduce time over the estimate"),
    },
    recommendation={
        "default": """
The all-reduce takes a large share of the step. It should take about (parameters × 4 bytes) /
bandwidth (gradients are communicated in fp32 even under fp16; a ring all-reduce moves 2(n-1)/n times
that). To scale, the step time must be much larger than this overhead: a larger batch raises the
step time without raising it. If the measured time is far above the estimate, check the
interconnect (NVLink vs PCIe) and whether GPUs wait for each other inside the all-reduce (see
multigpu.imbalance).""",
        "pytorch": """
The all-reduce takes a large share of the step. It should take about (parameters × 4 bytes) /
bandwidth, times 2(n-1)/n for a ring. DistributedDataParallel overlaps it with the backward pass when
gradients are bucketed (`bucket_cap_mb`); a larger batch or gradient accumulation (with
`model.no_sync()` on the accumulation steps) raises the step time without raising it. Far above the
estimate, check the interconnect (NVLink vs PCIe) and stragglers (multigpu.imbalance).""",
    },
)
def allreduce_cost(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    ar = m.allreduce
    if not ar.any_calls:
        return ctx.not_applicable("No NCCL all-reduce kernels in the profile.")
    transfer, waiting = ar.transfer_ps, ar.waiting_ps
    step = float(np.mean([g.step_ps for g in m.gpus]))
    share = pct(transfer, step)
    n = len(m.gpu_ids)
    label, bw = interconnect(m.devices[0].name if m.devices else "")
    if ctx.options.bandwidth_gbps:
        label, bw = "given", float(ctx.options.bandwidth_gbps)
    metrics = [
        Metric("allreduce_pct", share, "%", "step time in all-reduce transfers"),
        Metric("allreduce_ms_per_step", ms(transfer), "ms", "all-reduce transfer per step (the last GPU to arrive)"),
        Metric(
            "waiting_ms_per_step", ms(waiting), "ms", "time GPUs wait inside the all-reduce for the others, per GPU"
        ),
        Metric("bandwidth_gbps", bw, "GB/s", f"bandwidth ({label})"),
    ]
    status = WARNING if (share or 0) >= ctx.t["warning"] else PASS
    summary = f"All-reduce transfers take {ms(transfer):.2f} ms per step ({fmt_pct(share)})"
    if waiting > 0.1 * max(transfer, 1):
        summary += (
            f"; GPUs also wait {ms(waiting):.2f} ms per step inside it for the others (see multigpu.imbalance, "
            "multigpu.serialized, multigpu.launch-skew)"
        )
    params, source = ctx.options.params, "given"
    if not params:
        params, source = m.allreduce_params, "from the all-reduce shapes"
    if params:
        # gradients travel in fp32 (4 bytes); a ring all-reduce moves 2(n-1)/n times their size
        est_ps = params * 4 * 2 * (n - 1) / n / (bw * 1e9) * 1e12
        metrics += [
            Metric("params", params, "", f"parameters ({source})"),
            Metric("estimate_ms", ms(est_ps), "ms", "estimated all-reduce time"),
            Metric("measured_over_estimate", transfer / est_ps if est_ps else None, "x", "measured / estimate"),
        ]
        summary += (
            f"; the estimate for {params:,} parameters ({source}) over {label} ({bw:.0f} GB/s) is {ms(est_ps):.2f} ms"
        )
        if est_ps and transfer / est_ps >= ctx.t["slower_than_estimate"]:
            status = WARNING
    else:
        summary += "; give --params (and --bandwidth) for the expected time"
    # the extra calls' time is allreduce.count's saving when that check fires
    counted = (
        ar.extra_ps
        if np.mean(list(ar.per_gpu.values()))
        > ctx.options.threshold("allreduce.count.expected_per_step", EXPECTED_CALLS.default) + 1e-9
        else 0.0
    )
    return ctx.finding(
        status,
        summary + ".",
        metrics,
        saving_ps=max(transfer - counted, 0.0) if status != PASS else None,
        step_ps=step,
        saving_basis="the all-reduce transfer time (extra calls aside), if it overlapped with compute",
    )
