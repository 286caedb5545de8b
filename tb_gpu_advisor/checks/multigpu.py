"""5. Several GPUs on one host (guide 2). Debug one GPU first; most of these need two active GPUs."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check, table
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric
from tb_gpu_advisor.checks.texts import (
    COPY_THRESHOLDS,
    INPUT_RECOMMENDATION,
    INPUT_SNIPPET,
    INPUT_THRESHOLDS,
    SERIALIZED_INDEX,
)
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import PYTORCH, Window

GUIDE_MULTI = "#2._optimize_the_performance_on_the_multi-gpu_single_host"


@check(
    id="multigpu.idle-gpus",
    title="Every GPU of the host computes",
    problem="Idle GPUs: {no_compute} of {gpus} GPUs do no compute",
    section="multigpu",
    order=290,
    anchor=GUIDE_MULTI,
    measures="""On a host with two or more GPU planes, the GPUs with no kernel: those with no event at all and
those that only copy. A PyTorch trace is one process's: the GPUs its `deviceProperties` list without
events are the machine's, not the job's, and are not counted; the GPUs with events are.""",
    recommendation={
        "default": """
Some GPUs of this host run no kernels: the hardware is under-used, or the capture is partial. Check
that the distribution strategy covers every GPU (`tf.distribute.MirroredStrategy()` uses all visible
GPUs; `CUDA_VISIBLE_DEVICES` limits them), and that the profile was captured while every replica was
working.""",
        "pytorch": """
Some GPUs of this host run no kernels: the hardware is under-used, or the trace covers only some
ranks. Launch one process per GPU (`torchrun --nproc_per_node=<GPUs>` with
`DistributedDataParallel`), check `CUDA_VISIBLE_DEVICES` (`HIP_VISIBLE_DEVICES` on ROCm), and collect
every rank's trace.""",
        "jax": """
Some GPUs of this host run no kernels: the hardware is under-used, or the capture is partial. Shard
the batch over every device (`jax.sharding` with a mesh over `jax.devices()`, or `pmap`).""",
    },
)
def idle_gpus(ctx: Context) -> Finding:
    m = ctx.m
    idle, copy = m.idle_gpus, m.copy_only_gpus
    n = len(m.devices)
    if m.framework == PYTORCH:
        # one process's trace: deviceProperties lists every GPU of the machine, not the job's
        used = len(m.gpu_ids) + len(copy)
        if used < 2:
            return ctx.not_applicable(
                f"A PyTorch trace is one process's view: its device list names every GPU of the machine "
                f"({n}), and this process used {used}. Each rank of a multi-GPU job writes its own trace."
            )
        idle, n = [], used
    if n < 2:
        return ctx.not_applicable(f"Needs two or more GPU planes on the host ({n} found).")
    metrics = [
        Metric("gpus", n, "", "GPU planes"),
        Metric("active_gpus", len(m.gpu_ids), "", "GPUs with kernels"),
        Metric("no_compute", len(idle) + len(copy), "", "GPUs with no kernel"),
        Metric("copy_only_gpus", len(copy), "", "GPUs that only copy"),
    ]
    if not idle and not copy:
        return ctx.finding(PASS, f"All {n} GPUs run kernels.", metrics)
    parts = []
    if copy:
        parts.append(f"GPU {copy[0]} only copies" if len(copy) == 1 else f"GPUs {', '.join(map(str, copy))} only copy")
    if idle:
        parts.append(
            f"GPU {idle[0]} has no events" if len(idle) == 1 else f"GPUs {', '.join(map(str, idle))} have no events"
        )
    summary = (
        f"{len(idle) + len(copy)} of {n} GPUs do no compute ({'; '.join(parts)}): under-used hardware or a "
        "partial capture. The host's figures are over the GPUs that compute."
    )
    return ctx.finding(
        WARNING,
        summary,
        metrics,
        details=[{"device_id": d, "role": "copies only"} for d in copy]
        + [{"device_id": d, "role": "no events"} for d in idle],
    )


@check(
    id="multigpu.batch",
    table="memory",
    title="Batch large enough for the GPU memory",
    problem="Small batch: peak memory {peak_memory_pct:.0f}% of GPU memory",
    section="multigpu",
    order=300,
    anchor=GUIDE_MULTI,
    measures="""Peak bytes in use of each GPU's allocator against the GPU's memory size: XSpace's allocator
events (`peak_bytes_in_use`), PyTorch's `[memory]` records (`profile_memory=True`: the largest `Total
Allocated`, or, in traces before PyTorch 1.10 that record no totals, the largest running sum of the
bytes allocated during the capture, a lower bound).""",
    thresholds={
        "low_pct": Threshold(50.0, "%", "peak memory use, share of GPU memory, below which the batch could grow")
    },
    recommendation={
        "default": """
Peak GPU memory use is well below capacity. A larger batch raises device utilisation and amortises
communication between GPUs (check convergence; the performance gain is usually worth it). The
Profile tab's memory profile shows how close to the peak the program runs.""",
        "pytorch": """
Peak GPU memory use is well below capacity. A larger batch raises device utilisation and amortises
communication between GPUs (check convergence, and scale the learning rate with it). Check the headroom
with `torch.cuda.max_memory_allocated()` after a few steps at the new batch size.""",
    },
)
def batch(ctx: Context) -> Finding:
    rows = ctx.m.memory_peaks
    if not rows:
        if ctx.m.is_pytorch and not ctx.m.memory_records.records:
            return ctx.not_applicable(
                "Cannot tell: no memory records, the trace was captured without profile_memory=True (capture.memory)."
            )
        if ctx.m.is_pytorch and not ctx.m.memory_records.gpu_records:
            return ctx.not_applicable("No GPU memory records: the trace's memory records are all of host memory.")
        return ctx.not_applicable("No GPU memory events (MemoryAllocation with a GPU allocator) in the profile.")
    worst = max(r.peak_pct for r in rows)
    at_least = "at least " if any(r.from_capture for r in rows) else ""
    metrics = [Metric("peak_memory_pct", worst, "%", "highest peak memory use, share of GPU memory")]
    metrics += [Metric(f"peak_memory_pct_gpu{r.device_id}", r.peak_pct, "%", f"GPU {r.device_id}") for r in rows]
    if worst < ctx.t["low_pct"]:
        return ctx.finding(
            INFO,
            f"Peak GPU memory use is {at_least}{worst:.0f}% of capacity: room for a larger batch.",
            metrics,
            details=table(rows),
        )
    return ctx.finding(
        PASS, f"Peak GPU memory use is {at_least}{worst:.0f}% of capacity.", metrics, details=table(rows)
    )


@check(
    id="multigpu.input",
    table="input",
    title="Input pipeline keeps up with every GPU",
    problem="Uneven input: GPU {worst_gpu} waits {excess_pct:.1f}% of the step more than the mean",
    section="multigpu",
    order=310,
    anchor=GUIDE_MULTI,
    measures="""The input wait of input.bound on each active GPU; the worst GPU's share above the mean
share (which input.bound reports), so the same wait is not reported twice.""",
    thresholds=INPUT_THRESHOLDS,
    recommendation={
        k: "More GPUs consume more input, and one of them waits for it more than the others.\n\n" + v
        for k, v in INPUT_RECOMMENDATION.items()
    },
    snippet=INPUT_SNIPPET,
)
def multi_input(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    shares = {g.id: pct(float(g.input_per_step.sum()) / g.n, g.step_ps) or 0.0 for g in m.gpus}
    mean = float(np.mean(list(shares.values())))
    g = ctx.worst(shares)
    excess = shares[g.id] - mean
    metrics = [
        Metric("excess_pct", excess, "%", "worst GPU's input share above the mean"),
        Metric("worst_gpu", g.id, "", "GPU waiting the most"),
        Metric("mean_input_pct", mean, "%", "mean over GPUs"),
    ]
    metrics += [Metric(f"input_pct_gpu{d}", v, "%", f"GPU {d}") for d, v in shares.items()]
    status = ctx.level(excess)
    summary = (
        f"Input wait ranges from {min(shares.values()):.1f}% to {max(shares.values()):.1f}% of the step across GPUs"
    )
    if status == PASS:
        return ctx.finding(PASS, summary + " (the mean is input.bound's).", metrics)
    return ctx.finding(
        status,
        summary + f"; GPU {g.id} waits {excess:.1f}% of the step more than the mean.",
        metrics,
        saving_ps=excess / 100 * g.step_ps,
        step_ps=g.step_ps,
        saving_basis="the worst GPU's input wait above the mean (input.bound counts the mean)",
        device_id=g.id,
    )


@check(
    id="multigpu.copies",
    title="No GPU copies more than the others",
    problem="Uneven copies: GPU {worst_gpu} waits {excess_pct:.1f}% of the step more than the mean on copies",
    section="multigpu",
    order=340,
    anchor=GUIDE_MULTI,
    measures="""The blocking copies of memcpy.excessive on each active GPU; the worst GPU's share above the
mean share (which memcpy.excessive reports).""",
    thresholds=COPY_THRESHOLDS,
    recommendation="""
Device-to-host, host-to-device or device-to-device copies beyond the input block compute on some
GPUs more than on the others. Look for ops placed on the host or on another device, and values read
back every step on one replica (often GPU0: metrics, summaries).""",
)
def multi_copies(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    shares = {g.id: pct(g.copies.blocking_ps_per_step, g.step_ps) or 0.0 for g in m.gpus}
    mean = float(np.mean(list(shares.values())))
    g = ctx.worst(shares)
    excess = shares[g.id] - mean
    metrics = [
        Metric("excess_pct", excess, "%", "worst GPU's blocking copy share above the mean"),
        Metric("worst_gpu", g.id, "", "GPU waiting the most on copies"),
        Metric("blocking_copy_pct", shares[g.id], "%", "worst GPU: copies beyond the input while compute is idle"),
    ]
    metrics += [
        Metric(f"blocking_copy_ms_per_step_gpu{x.id}", ms(x.copies.blocking_ps_per_step), "ms", f"GPU {x.id}")
        for x in m.gpus
    ]
    details = [
        {
            "device_id": x.id,
            **{f"{d.direction}_per_step": d.count_per_step for d in x.copies.directions},
            "blocking_ms_per_step": ms(x.copies.blocking_ps_per_step),
        }
        for x in m.gpus
    ]
    status = ctx.level(excess)
    summary = (
        f"Blocking copies range from {min(shares.values()):.1f}% to {max(shares.values()):.1f}% of the step across GPUs"
    )
    if status == PASS:
        return ctx.finding(PASS, summary + " (the mean is memcpy.excessive's).", metrics, details=details)
    return ctx.finding(
        status,
        summary + f"; GPU {g.id} is {excess:.1f}% above the mean.",
        metrics,
        saving_ps=excess / 100 * g.step_ps,
        step_ps=g.step_ps,
        saving_basis="the worst GPU's blocking copy time above the mean (memcpy.excessive counts the mean)",
        evidence=g.copies.windows,
        details=details,
        device_id=g.id,
    )


@check(
    id="multigpu.imbalance",
    table="kernels",
    title="Replicas do the same work",
    problem="Imbalance: a {spread_pct:.1f}% spread of compute per step across GPUs (GPU {slowest_gpu} the most)",
    section="multigpu",
    order=350,
    anchor=GUIDE_MULTI,
    measures="""Compute (kernels and memsets, collectives excluded) per step of each active GPU, in its own
steps; the spread (max - min) / max.""",
    thresholds={"warning": Threshold(10.0, "%", "spread of per-GPU compute time per step, (max - min) / max")},
    recommendation="""
The GPUs do different amounts of work per step, so the others wait for the slowest one (often GPU0,
when the host passes it extra work by mistake, such as metrics, summaries or a larger shard). Check
that each replica gets the same batch and that nothing runs only on one device.""",
)
def imbalance(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    per = {g.id: float(g.compute_per_step.sum()) / g.n for g in m.gpus}
    hi, lo = max(per.values()), min(per.values())
    spread = pct(hi - lo, hi) or 0.0
    slow = ctx.worst(per)
    fast = min(per, key=lambda d: (per[d], d))
    metrics = [
        Metric("spread_pct", spread, "%", "(max - min) / max of compute per step"),
        Metric("slowest_gpu", slow.id, "", "GPU computing the most"),
        Metric("fastest_gpu", fast, "", "GPU computing the least"),
    ]
    metrics += [Metric(f"compute_ms_per_step_gpu{d}", ms(v), "ms", f"GPU {d}") for d, v in per.items()]
    mean = float(np.mean(list(per.values())))
    evidence = []
    for i in range(min(3, len(slow.steps))):
        lo_i, hi_i = int(slow.steps.start_ps[i]), int(slow.steps.end_ps[i])
        c = slow.compute_per_step[i]
        if c > 0:
            evidence.append(
                slow.window(lo_i, hi_i, f"step {int(slow.steps.number[i])}: GPU {slow.id} computes {ms(c):.2f} ms")
            )
    summary = (
        f"GPU {slow.id} computes {ms(hi):.2f} ms per step, GPU {fast} {ms(lo):.2f} ms: a {fmt_pct(spread)} spread."
    )
    return ctx.finding(
        ctx.level(spread),
        summary,
        metrics,
        saving_ps=hi - mean,
        step_ps=slow.step_ps,
        saving_basis="the slowest replica's compute down to the mean",
        evidence=evidence,
        device_id=slow.id,
    )


@check(
    id="multigpu.serialized",
    time=OwnTime("serialized_ms_per_step", wait=True),
    table="idle",
    title="GPUs compute concurrently",
    problem="Serialized GPUs: index {serialization_index:.2f} (1 = one after another)",
    section="multigpu",
    order=360,
    anchor=GUIDE_MULTI,
    measures="""Within each shared step (or, when the GPUs have steps of their own, over the span of all
their work), the union of the GPUs' compute against the sum and the busiest GPU's:
(union - busiest) / (sum - busiest), 0 when they compute at the same time, 1 when one after another.""",
    thresholds={"warning": SERIALIZED_INDEX},
    recommendation="""
The GPUs run one after another instead of at the same time, usually because of control dependencies
from one GPU to another. Look in the trace viewer for what each GPU waits on before it starts, and
remove cross-device dependencies (for example a value computed on GPU0 that every replica reads). If
you cannot find the cause, open a TensorFlow issue with the trace.""",
)
def serialized(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    s = m.serialization
    index, union, most = s.index, s.union, s.most
    status = WARNING if index >= ctx.t["warning"] else PASS
    metrics = [Metric("serialization_index", index, "", "0 concurrent, 1 serialized")]
    evidence: list[Window] = []
    g0 = m.gpus[0]
    if m.shared_steps:
        saving = float((union - most).mean()) if len(union) else 0.0
        metrics.append(Metric("serialized_ms_per_step", ms(saving), "ms", "step time beyond the busiest GPU's compute"))
        if len(union):
            i = int(np.argmax(union - most))
            evidence.append(
                g0.window(
                    int(s.lo[i]),
                    int(s.hi[i]),
                    f"step {int(g0.steps.number[i])}: GPUs busy "
                    f"{ms(union[i]):.2f} ms together, the busiest alone {ms(most[i]):.2f} ms",
                )
            )
        summary = (
            f"Serialisation index {index:.2f}: compute on the GPUs overlaps {'little' if index >= 0.5 else 'well'} "
            "within a step."
        )
        return ctx.finding(
            status,
            summary,
            metrics,
            saving_ps=saving if status != PASS else None,
            step_ps=g0.step_ps,
            saving_basis="step time beyond the busiest GPU's compute, if the GPUs ran together",
            evidence=evidence,
        )
    starts = {g.id: int(g.steps.start_ps[0]) for g in m.gpus if len(g.steps)}
    apart = (max(starts.values()) - min(starts.values())) if starts else 0
    metrics.append(Metric("start_spread_ms", ms(apart), "ms", "spread of the GPUs' first step starts"))
    for g in m.gpus[:4]:
        if len(g.steps):
            evidence.append(
                g.window(int(g.steps.start_ps[0]), int(g.steps.end_ps[0]), f"GPU {g.id}: step {int(g.steps.number[0])}")
            )
    summary = (
        f"Serialisation index {index:.2f}: each GPU runs its steps in its own window "
        f"({', '.join(f'GPU {d} from {ms(t):.1f} ms' for d, t in starts.items())}; {ms(apart):.1f} ms apart), "
        f"{'one after another' if index >= 0.5 else 'overlapping'}."
    )
    return ctx.finding(status, summary, metrics, evidence=evidence)


@check(
    id="multigpu.launch-skew",
    time=OwnTime("skew_ms_per_step", wait=True),
    table="idle",
    title="Kernels launched on all GPUs evenly",
    problem="Launch skew: the GPUs' first kernels start {skew_pct:.1f}% of a step apart",
    section="multigpu",
    order=370,
    anchor="#2._gpu_host_thread_contention",
    measures="""With shared steps, the spread of the GPUs' first compute in each step, as a share of the
step, and how many different GPU start orders the steps show.""",
    thresholds={"warning": Threshold(5.0, "%", "mean spread of the GPUs' first kernel of a step, share of step time")},
    recommendation="""
The host starts work on one GPU while another sits idle, in an uneven order: host threads contend for
launching kernels. Set `TF_GPU_THREAD_MODE=gpu_private` to give each GPU its own launch threads, and
raise `TF_GPU_THREAD_COUNT` (2 by default under gpu_private) if needed.""",
    snippet="""export TF_GPU_THREAD_MODE=gpu_private
export TF_GPU_THREAD_COUNT=2""",
)
def launch_skew(ctx: Context) -> Finding:
    na = ctx.need_two_gpus()
    if na:
        return na
    m = ctx.m
    if not m.shared_steps:
        return ctx.not_applicable(
            "The GPUs run their steps in different windows, so their starts cannot be compared "
            "step by step (see multigpu.serialized)."
        )
    firsts = m.first_compute
    g0 = m.gpus[0]
    valid = ~np.isnan(firsts).any(axis=0) if firsts.size else np.zeros(0, bool)
    skew = (np.nanmax(firsts[:, valid], axis=0) - np.nanmin(firsts[:, valid], axis=0)) if valid.any() else np.zeros(0)
    mean = float(skew.mean()) if len(skew) else 0.0
    share = pct(mean, g0.step_ps)
    # return_index: np.unique without it imports numpy.ma on first use
    orders = (
        np.unique(np.argsort(firsts[:, valid], axis=0).T, axis=0, return_index=True)[0]
        if valid.any()
        else np.zeros((0, 0))
    )
    metrics = [
        Metric("skew_pct", share, "%", "spread of the GPUs' first kernel, share of step time"),
        Metric("skew_ms_per_step", ms(mean), "ms", "per step"),
        Metric("start_orders", len(orders), "", "distinct GPU start orders across steps"),
    ]
    evidence = []
    if len(skew):
        i = int(np.flatnonzero(valid)[int(np.argmax(skew))])
        late = m.gpus[int(np.nanargmax(firsts[:, i]))]
        evidence.append(
            late.window(
                int(np.nanmin(firsts[:, i])),
                int(np.nanmax(firsts[:, i])),
                f"step {int(g0.steps.number[i])}: GPU {late.id} idle {ms(skew.max()):.2f} ms while others run",
            )
        )
    status = ctx.level(share)
    summary = (
        f"The GPUs' first kernels of a step start {ms(mean):.2f} ms apart on average ({fmt_pct(share)} of the step)"
    )
    serial = ctx.options.threshold("multigpu.serialized.warning", SERIALIZED_INDEX.default)
    if status != PASS and m.serialization.index >= serial:
        return ctx.finding(
            INFO,
            summary + ", because they run one after another (see multigpu.serialized).",
            metrics,
            evidence=evidence,
        )
    return ctx.finding(
        status,
        summary + ".",
        metrics,
        saving_ps=mean if status != PASS else None,
        step_ps=g0.step_ps,
        saving_basis="the mean start skew, if all GPUs started together",
        evidence=evidence,
    )
