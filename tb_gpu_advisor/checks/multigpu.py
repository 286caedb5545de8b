"""5. Several GPUs on one host (guide 2). Debug one GPU first; most of these need two active GPUs."""
from __future__ import annotations

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.common import active_gpus, device_events, device_evidence, fmt_pct, ms, pct, per_step_sum
from tb_gpu_advisor.checks.input import INPUT_RECOMMENDATION, INPUT_SNIPPET, INPUT_THRESHOLDS, input_finding
from tb_gpu_advisor.checks.utilisation import COPY_THRESHOLDS, copy_analysis, copy_evidence
from tb_gpu_advisor.profile import Kind
from tb_gpu_advisor.report import INFO, PASS, WARNING, Metric

GUIDE_MULTI = "#2._optimize_the_performance_on_the_multi-gpu_single_host"


def _need_two(ctx: Context):
    gpus = active_gpus(ctx.a)
    if len(gpus) < 2:
        return ctx.not_applicable(f"Needs two or more active GPUs on the host ({len(gpus)} found).")
    return None


@check(
    id="multigpu.batch",
    title="Batch large enough for the GPU memory",
    section="multigpu",
    anchor=GUIDE_MULTI,
    thresholds={"low_pct": Threshold(50.0, "%", "peak memory use, share of GPU memory, below which the batch could grow")},
    recommendation="""
Peak GPU memory use is well below capacity. A larger batch raises device utilisation and amortises
communication between GPUs (check convergence; the performance gain is usually worth it). The
Profile tab's memory profile shows how close to the peak the program runs.""",
)
def batch(ctx: Context):
    a = ctx.a
    p = a.profile
    h = a.host
    mem = h.take(((h.kind == Kind.MEMORY_ALLOC) | (h.kind == Kind.MEMORY_FREE)) & (h.peak_bytes >= 0))
    rows = []
    for d in p.devices:
        if not d.memory_bytes:
            continue
        alloc = p.names.get(f"GPU_{d.id}_bfc")
        m = mem.allocator == alloc if alloc >= 0 else np.zeros(len(mem), bool)
        if np.any(m):
            peak = int(mem.peak_bytes[m].max())
            rows.append({"device_id": d.id, "peak_gib": peak / 2**30, "memory_gib": d.memory_bytes / 2**30,
                         "peak_pct": 100.0 * peak / d.memory_bytes})  # fmt: skip
    if not rows:
        return ctx.not_applicable("No GPU memory events (MemoryAllocation with a GPU allocator) in the profile.")
    worst = max(r["peak_pct"] for r in rows)
    metrics = [Metric("peak_memory_pct", worst, "%", "highest peak memory use, share of GPU memory")]
    metrics += [Metric(f"peak_memory_pct_gpu{r['device_id']}", r["peak_pct"], "%", f"GPU {r['device_id']}") for r in rows]
    if worst < ctx.t["low_pct"]:
        return ctx.finding(INFO, f"Peak GPU memory use is {worst:.0f}% of capacity: room for a larger batch.", metrics, details=rows)
    return ctx.finding(PASS, f"Peak GPU memory use is {worst:.0f}% of capacity.", metrics, details=rows)


@check(
    id="multigpu.input",
    title="Input pipeline keeps up with all GPUs",
    section="multigpu",
    anchor=GUIDE_MULTI,
    thresholds=INPUT_THRESHOLDS,
    recommendation="More GPUs consume more input: the same host now feeds all of them.\n\n" + INPUT_RECOMMENDATION,
    snippet=INPUT_SNIPPET,
)
def multi_input(ctx: Context):
    return _need_two(ctx) or input_finding(ctx, per_gpu=True)


def _allreduces(a, d: int):
    ev = device_events(a, d)
    names = np.array(["allreduce" in s.lower().replace("_", "") for s in a.profile.names.strings] + [False], bool)
    return ev.take((ev.kind == Kind.COLLECTIVE) & names[np.where(ev.name >= 0, ev.name, len(names) - 1)])


@check(
    id="allreduce.count",
    title="One gradient all-reduce per step",
    section="multigpu",
    anchor="#1._optimize_gradient_allreduce",
    thresholds={"expected_per_step": Threshold(1.0, "calls", "all-reduce calls per GPU per step expected")},
    recommendation="""
More NCCL all-reduce calls run per GPU per step than expected; each one synchronises all devices.
Ideally there is one call per GPU per step, for the gradients. Look for metrics or other values
reduced across replicas every step (for example `strategy.reduce` or a synced metric inside the step)
and reduce them less often or locally; let the optimizer pack gradients into one all-reduce.""",
)
def allreduce_count(ctx: Context):
    na = _need_two(ctx)
    if na:
        return na
    a = ctx.a
    n = max(len(a.steps), 1)
    per_gpu = {}
    extra_ps = []
    for d in active_gpus(a):
        ar = _allreduces(a, d)
        per_gpu[d] = float(per_step_sum(a, ar, np.ones(len(ar))).sum()) / n
        k = np.searchsorted(a.steps.start_ps, ar.start_ps, side="right") - 1
        for i in range(len(a.steps)):
            durs = np.sort(ar.dur_ps[k == i])
            extra_ps.append(float(durs[:-1].sum()) if len(durs) > 1 else 0.0)
    if not any(per_gpu.values()):
        return ctx.not_applicable("No NCCL all-reduce kernels in the profile.")
    mean = float(np.mean(list(per_gpu.values())))
    metrics = [Metric("allreduce_per_gpu_per_step", mean, "calls", "all-reduce calls per GPU per step")]
    metrics += [Metric(f"allreduce_per_step_gpu{d}", v, "calls", f"GPU {d}") for d, v in per_gpu.items()]
    saving = float(np.sum(extra_ps)) / n / len(per_gpu)
    if mean > ctx.t["expected_per_step"] + 1e-9:
        return ctx.finding(WARNING, f"{mean:.1f} all-reduce calls per GPU per step (expected {ctx.t['expected_per_step']:.0f}).",
                           metrics, saving_ps=saving, saving_basis="the time of all but the longest all-reduce of each step")  # fmt: skip
    return ctx.finding(PASS, f"{mean:.1f} all-reduce call(s) per GPU per step.", metrics)


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


def all_reduce_times(a, gpus: list[int]) -> tuple[float | None, float]:
    """(transfer, waiting) per step, ps. NCCL kernels start when their GPU arrives and end together,
    so a GPU that arrives early spends the difference waiting inside the kernel: each call's transfer
    time is its shortest duration across GPUs (the last to arrive), the rest is waiting. Calls are
    matched by their order within a step; with unequal counts, the mean duration is used."""
    steps = range(len(a.steps))
    per_gpu = []  # per GPU, per step: the all-reduce durations in start order (events are sorted)
    for d in gpus:
        ar = _allreduces(a, d)
        k = np.searchsorted(a.steps.start_ps, ar.start_ps, side="right") - 1
        per_gpu.append([ar.dur_ps[k == i].astype(float) for i in steps])
    if not any(len(x) for g in per_gpu for x in g):
        return None, 0.0
    transfer = waiting = 0.0
    for i in steps:
        durs = [g[i] for g in per_gpu]
        if len({len(x) for x in durs}) == 1 and len(durs[0]):
            stack = np.vstack(durs)
            t = float(stack.min(axis=0).sum())
            transfer += t
            waiting += float(stack.sum(axis=1).mean()) - t
        else:
            transfer += float(np.mean([x.sum() for x in durs]))
    n = max(len(a.steps), 1)
    return transfer / n, waiting / n


def params_from_profile(a) -> int | None:
    """Elements all-reduced per step, from the shapes of the all-reduce ops (the gradients, when one
    all-reduce per step carries them all): on the first GPU, in the step with the most."""
    from tb_gpu_advisor.checks.kernels import parse_shapes

    gpus = active_gpus(a)
    if not gpus:
        return None
    ar = _allreduces(a, gpus[0])
    k = np.searchsorted(a.steps.start_ps, ar.start_ps, side="right") - 1
    best = 0
    for i in np.unique(k[k >= 0]).tolist():
        total = 0
        for op in ar.op[k == i].tolist():
            shapes = parse_shapes(a.profile.ops.shape[op]) if op >= 0 else []
            total += int(np.prod(shapes[0][1])) if shapes and shapes[0][1] else 0
        best = max(best, total)
    return best or None


@check(
    id="allreduce.cost",
    title="All-reduce small against the step",
    section="multigpu",
    anchor="#1._optimize_gradient_allreduce",
    thresholds={
        "warning": Threshold(15.0, "%", "step time in all-reduce transfers"),
        "slower_than_estimate": Threshold(2.0, "x", "measured all-reduce time over the estimate"),
    },
    recommendation="""
The all-reduce takes a large share of the step. It should take about (parameters × 4 bytes) /
bandwidth (gradients are communicated in fp32 even under fp16; a ring all-reduce moves 2(n-1)/n times
that). To scale, the step time must be much larger than this overhead: a larger batch raises the
step time without raising it. If the measured time is far above the estimate, check the
interconnect (NVLink vs PCIe) and whether GPUs wait for each other inside the all-reduce (see
multigpu.imbalance).""",
)
def allreduce_cost(ctx: Context):
    na = _need_two(ctx)
    if na:
        return na
    a = ctx.a
    gpus = active_gpus(a)
    transfer, waiting = all_reduce_times(a, gpus)
    if transfer is None:
        return ctx.not_applicable("No NCCL all-reduce kernels in the profile.")
    share = pct(transfer, ctx.step_ps)
    n = len(gpus)
    label, bw = interconnect(a.profile.devices[0].name)
    if ctx.options.bandwidth_gbps:
        label, bw = "given", float(ctx.options.bandwidth_gbps)
    measured = transfer
    metrics = [
        Metric("allreduce_pct", share, "%", "step time in all-reduce transfers"),
        Metric("allreduce_ms_per_step", ms(transfer), "ms", "all-reduce transfer per step (the last GPU to arrive)"),
        Metric("waiting_ms_per_step", ms(waiting), "ms", "time GPUs wait inside the all-reduce for the others, per GPU"),
        Metric("bandwidth_gbps", bw, "GB/s", f"bandwidth ({label})"),
    ]
    status = WARNING if (share or 0) >= ctx.t["warning"] else PASS
    summary = f"All-reduce transfers take {ms(transfer):.2f} ms per step ({fmt_pct(share)})"
    if waiting > 0.1 * max(transfer, 1):
        summary += f"; GPUs also wait {ms(waiting):.2f} ms per step inside it for the others (see multigpu.imbalance, multigpu.serialized, multigpu.launch-skew)"
    params, source = ctx.options.params, "given"
    if not params:
        params, source = params_from_profile(a), "from the all-reduce shapes"
    if params:
        # gradients travel in fp32 (4 bytes); a ring all-reduce moves 2(n-1)/n times their size
        est_ps = params * 4 * 2 * (n - 1) / n / (bw * 1e9) * 1e12
        metrics += [Metric("params", params, "", f"parameters ({source})"),
                    Metric("estimate_ms", ms(est_ps), "ms", "estimated all-reduce time"),
                    Metric("measured_over_estimate", measured / est_ps if est_ps else None, "x", "measured / estimate")]  # fmt: skip
        summary += f"; the estimate for {params:,} parameters ({source}) over {label} ({bw:.0f} GB/s) is {ms(est_ps):.2f} ms"
        if est_ps and measured / est_ps >= ctx.t["slower_than_estimate"]:
            status = WARNING
    else:
        summary += "; give --params (and --bandwidth) for the expected time"
    return ctx.finding(status, summary + ".", metrics, saving_ps=measured if status != PASS else None,
                       saving_basis="the all-reduce time outside compute, if it overlapped with compute")  # fmt: skip


@check(
    id="multigpu.copies",
    title="No unnecessary copies on any GPU",
    section="multigpu",
    anchor=GUIDE_MULTI,
    thresholds=COPY_THRESHOLDS,
    recommendation="""
Device-to-host, host-to-device or device-to-device copies beyond the input block compute on some
GPUs. Look for ops placed on the host or on another device, and values read back every step.""",
)
def multi_copies(ctx: Context):
    na = _need_two(ctx)
    if na:
        return na
    a = ctx.a
    rows = {d: copy_analysis(a, d) for d in active_gpus(a)}
    d = max(rows, key=lambda k: rows[k]["blocking_ps_per_step"])
    share = pct(rows[d]["blocking_ps_per_step"], ctx.step_ps)
    metrics = [Metric("blocking_copy_pct", share, "%", "worst GPU: copies beyond the input while compute is idle")]
    metrics += [Metric(f"blocking_copy_ms_per_step_gpu{k}", ms(v["blocking_ps_per_step"]), "ms", f"GPU {k}") for k, v in rows.items()]
    details = [{"device_id": k, **{f"{dirn}_per_step": v["directions"][dirn]["count_per_step"] for dirn in v["directions"]},
                "blocking_ms_per_step": ms(v["blocking_ps_per_step"])} for k, v in rows.items()]  # fmt: skip
    return ctx.finding(ctx.level(share), f"On GPU {d}, copies beyond the input block compute {ms(rows[d]['blocking_ps_per_step']):.3f} ms "
                       f"per step ({fmt_pct(share)}).", metrics, saving_ps=rows[d]["blocking_ps_per_step"],
                       saving_basis="the worst GPU's blocking copy time", evidence=copy_evidence(a, d, rows[d]["items"]),
                       details=details)  # fmt: skip


def compute_per_step(a) -> dict[int, np.ndarray]:
    """Per GPU, per step compute busy time (kernels and memsets, collectives excluded), ps."""
    return {d: iv.measure_in(a.activity[d].by_category["device_compute"], a.steps.start_ps, a.steps.end_ps).astype(float)
            for d in active_gpus(a)}  # fmt: skip


@check(
    id="multigpu.imbalance",
    title="Replicas do the same work",
    section="multigpu",
    anchor=GUIDE_MULTI,
    thresholds={"warning": Threshold(10.0, "%", "spread of per-GPU compute time per step, (max - min) / max")},
    recommendation="""
The GPUs do different amounts of work per step, so the others wait for the slowest one (often GPU0,
when the host passes it extra work by mistake, such as metrics, summaries or a larger shard). Check
that each replica gets the same batch and that nothing runs only on one device.""",
)
def imbalance(ctx: Context):
    na = _need_two(ctx)
    if na:
        return na
    a = ctx.a
    per = {d: float(v.mean()) for d, v in compute_per_step(a).items()}
    hi, lo = max(per.values()), min(per.values())
    spread = pct(hi - lo, hi)
    slow = max(per, key=lambda d: per[d])
    metrics = [Metric("spread_pct", spread, "%", "(max - min) / max of compute per step")]
    metrics += [Metric(f"compute_ms_per_step_gpu{d}", ms(v), "ms", f"GPU {d}") for d, v in per.items()]
    mean = float(np.mean(list(per.values())))
    evidence = []
    busy = a.activity[slow].by_category["device_compute"]
    for i in range(min(3, len(a.steps))):
        seg = iv.clip(busy, int(a.steps.start_ps[i]), int(a.steps.end_ps[i]))
        if len(seg[0]):
            evidence.append(device_evidence(a, slow, int(seg[0][0]), int(seg[1][-1]),
                                            f"step {int(a.steps.number[i])}: GPU {slow} computes {ms(iv.total(seg)):.2f} ms"))  # fmt: skip
    summary = f"GPU {slow} computes {ms(hi):.2f} ms per step, GPU {min(per, key=lambda d: per[d])} {ms(lo):.2f} ms: a {fmt_pct(spread)} spread."
    return ctx.finding(ctx.level(spread), summary, metrics, saving_ps=hi - mean,
                       saving_basis="the slowest replica's compute down to the mean", evidence=evidence)  # fmt: skip


SERIALIZED_INDEX = Threshold(0.5, "", "serialisation index: 0 all GPUs at once, 1 one after another")


def serialization(a) -> tuple[float, np.ndarray, np.ndarray]:
    """(index 0..1, per step union, per step max): 0 when the GPUs compute at the same time, 1 when
    they compute one after another."""
    per = compute_per_step(a)
    sets = [a.activity[d].by_category["device_compute"] for d in per]
    union = iv.measure_in(iv.union_all(*sets), a.steps.start_ps, a.steps.end_ps).astype(float)
    stack = np.array(list(per.values()))
    total, most = stack.sum(axis=0), stack.max(axis=0)
    denom = float((total - most).sum())
    return (float((union - most).sum()) / denom if denom > 0 else 0.0), union, most


@check(
    id="multigpu.serialized",
    title="GPUs compute concurrently",
    section="multigpu",
    anchor=GUIDE_MULTI,
    thresholds={"warning": SERIALIZED_INDEX},
    recommendation="""
The GPUs run one after another within a step instead of at the same time, usually because of
control dependencies from one GPU to another. Look in the trace viewer for what each GPU waits on
before it starts, and remove cross-device dependencies (for example a value computed on GPU0 that
every replica reads). If you cannot find the cause, open a TensorFlow issue with the trace.""",
)
def serialized(ctx: Context):
    na = _need_two(ctx)
    if na:
        return na
    a = ctx.a
    index, union, most = serialization(a)
    saving = float((union - most).mean()) if len(union) else 0.0
    metrics = [Metric("serialization_index", index, "", "0 concurrent, 1 serialized"),
               Metric("serialized_ms_per_step", ms(saving), "ms", "step time beyond the busiest GPU's compute")]  # fmt: skip
    evidence = []
    if len(a.steps):
        i = int(np.argmax(union - most))
        evidence.append(device_evidence(a, active_gpus(a)[0], int(a.steps.start_ps[i]), int(a.steps.end_ps[i]),
                                        f"step {int(a.steps.number[i])}: GPUs busy {ms(union[i]):.2f} ms together, "
                                        f"the busiest alone {ms(most[i]):.2f} ms"))  # fmt: skip
    status = WARNING if index >= ctx.t["warning"] else PASS
    return ctx.finding(status, f"Serialisation index {index:.2f}: compute on the GPUs overlaps "
                       f"{'little' if index >= 0.5 else 'well'} within a step.", metrics, saving_ps=saving if status != PASS else None,
                       saving_basis="step time beyond the busiest GPU's compute, if the GPUs ran together", evidence=evidence)  # fmt: skip


@check(
    id="multigpu.launch-skew",
    title="Kernels launched on all GPUs evenly",
    section="multigpu",
    anchor="#2._gpu_host_thread_contention",
    thresholds={"warning": Threshold(5.0, "%", "mean spread of the GPUs' first kernel of a step, share of step time")},
    recommendation="""
The host starts work on one GPU while another sits idle, in an uneven order: host threads contend for
launching kernels. Set `TF_GPU_THREAD_MODE=gpu_private` to give each GPU its own launch threads, and
raise `TF_GPU_THREAD_COUNT` (2 by default under gpu_private) if needed.""",
    snippet="""export TF_GPU_THREAD_MODE=gpu_private
export TF_GPU_THREAD_COUNT=2""",
)
def launch_skew(ctx: Context):
    na = _need_two(ctx)
    if na:
        return na
    a = ctx.a
    gpus = active_gpus(a)
    firsts = np.full((len(gpus), len(a.steps)), np.nan)
    for r, d in enumerate(gpus):
        s, _ = a.activity[d].by_category["device_compute"]
        k = np.searchsorted(s, a.steps.start_ps, side="left")
        ok = k < len(s)
        firsts[r, ok] = np.where(s[np.minimum(k, len(s) - 1)][ok] < a.steps.end_ps[ok], s[np.minimum(k, len(s) - 1)][ok], np.nan)
    valid = ~np.isnan(firsts).any(axis=0)
    skew = (np.nanmax(firsts, axis=0) - np.nanmin(firsts, axis=0))[valid] if valid.any() else np.zeros(0)
    mean = float(skew.mean()) if len(skew) else 0.0
    share = pct(mean, ctx.step_ps)
    orders = {tuple(np.argsort(firsts[:, i]).tolist()) for i in np.flatnonzero(valid)}
    metrics = [Metric("skew_pct", share, "%", "spread of the GPUs' first kernel, share of step time"),
               Metric("skew_ms_per_step", ms(mean), "ms", "per step"),
               Metric("start_orders", len(orders), "", "distinct GPU start orders across steps")]  # fmt: skip
    evidence = []
    if len(skew):
        i = np.flatnonzero(valid)[int(np.argmax(skew))]
        late = gpus[int(np.nanargmax(firsts[:, i]))]
        evidence.append(device_evidence(a, late, int(np.nanmin(firsts[:, i])), int(np.nanmax(firsts[:, i])),
                                        f"step {int(a.steps.number[i])}: GPU {late} idle {ms(skew.max()):.2f} ms while others run"))  # fmt: skip
    status = ctx.level(share)
    summary = f"The GPUs' first kernels of a step start {ms(mean):.2f} ms apart on average ({fmt_pct(share)} of the step)"
    index, _, _ = serialization(a)
    serial_warn = float(ctx.options.overrides.get("multigpu.serialized.warning", SERIALIZED_INDEX.default))
    if status != PASS and index >= serial_warn:
        return ctx.finding(INFO, summary + ", because they run one after another (see multigpu.serialized).", metrics, evidence=evidence)
    return ctx.finding(status, summary + ".", metrics, saving_ps=mean if status != PASS else None,
                       saving_basis="the mean start skew, if all GPUs started together", evidence=evidence)  # fmt: skip
