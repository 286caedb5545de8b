"""2. One GPU: utilisation (guide 1.2): gaps between steps, launches, small kernels, eager ops,
op placement, copies."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.common import (
    COMPILE,
    LOSS_SCALE,
    compute_busy,
    copies_mask,
    device_events,
    device_evidence,
    device_work_bounds,
    fmt_pct,
    group_sum,
    host_evidence,
    input_copy_mask,
    is_tf_data_thread,
    ms,
    pct,
    step_gaps,
    step_index,
    stream_of,
)
from tb_gpu_advisor.profile import Flag, Kind
from tb_gpu_advisor.report import INFO, PASS, WARNING, Metric
from tb_gpu_advisor.steps import CATEGORIES, exclusive

GAP_CAUSES = ("input", "thread_contention", "loss_scaling", "compilation", "host_work", "unexplained")
GAP_CHECK = {"input": "input.bound", "thread_contention": "host.thread-contention", "compilation": "xla.recompile",
             "loss_scaling": "precision.dynamic-loss-scale", "host_work": "steps.host-work"}  # fmt: skip
# attribution order of a gap: (cause, host set)
_GAP_SETS = (("input", "input"), ("thread_contention", "tfdata"), ("loss_scaling", "loss"), ("compilation", "compile"),
             ("host_work", "work"))  # fmt: skip


def host_sets(a) -> dict[str, iv.Intervals]:
    """What the host is doing, as interval sets: waiting for input, tf.data work, loss-scaling
    ops, XLA compilation, and other host work (Python, eager ops, framework ops outside tf.data
    threads)."""
    cache = a.cache.get("host_sets")
    if cache is not None:
        return cache
    p = a.profile
    wait_s, wait_e, data_s, data_e, loss_s, loss_e, work_s, work_e, comp_s, comp_e = ([] for _ in range(10))
    compile_names = np.array([bool(COMPILE.search(n)) for n in p.names.strings] + [False], bool)
    loss_ops = np.array([bool(LOSS_SCALE.search(p.op_name(o))) for o in range(len(p.ops))] + [False], bool)
    for t in p.threads:
        ev = t.events
        k = ev.kind
        wait = k == Kind.INPUT_WAIT
        wait_s.append(ev.start_ps[wait]), wait_e.append(ev.end_ps[wait])
        if is_tf_data_thread(t.name):
            data = ~wait
        else:
            data = k == Kind.INPUT_STAGE
        data_s.append(ev.start_ps[data]), data_e.append(ev.end_ps[data])
        loss = loss_ops[np.where(ev.op >= 0, ev.op, len(p.ops))] & (k == Kind.FRAMEWORK_OP)
        loss_s.append(ev.start_ps[loss]), loss_e.append(ev.end_ps[loss])
        comp = compile_names[np.where(ev.name >= 0, ev.name, len(p.names))]
        comp_s.append(ev.start_ps[comp]), comp_e.append(ev.end_ps[comp])
        if not is_tf_data_thread(t.name):
            work = ((k == Kind.FRAMEWORK_OP) | (k == Kind.EAGER)) & ~loss
            if t.name == "python":
                work |= k == Kind.HOST_OTHER
            work_s.append(ev.start_ps[work]), work_e.append(ev.end_ps[work])

    def u(s, e):
        return iv.union(np.concatenate(s), np.concatenate(e)) if s else iv.EMPTY

    cache = {"input": u(wait_s, wait_e), "tfdata": u(data_s, data_e), "loss": u(loss_s, loss_e),
             "compile": u(comp_s, comp_e), "work": u(work_s, work_e)}  # fmt: skip
    cache["tfdata"] = iv.subtract(cache["tfdata"], cache["input"])
    a.cache["host_sets"] = cache
    return cache


def attribute_window(sets: dict[str, iv.Intervals], lo: int, hi: int) -> dict[str, int]:
    """Split [lo, hi) by what the host was doing, in precedence order."""
    out = {}
    claimed = iv.EMPTY
    lo_a, hi_a = np.array([lo]), np.array([hi])
    for cause, key in _GAP_SETS:
        own = iv.subtract(sets[key], claimed)
        out[cause] = int(iv.measure_in(own, lo_a, hi_a)[0])
        claimed = iv.union_all(claimed, own)
    out["unexplained"] = (hi - lo) - sum(out.values())
    return out


def _worst_gpu(a, per_gpu: dict[int, float]) -> int:
    return max(per_gpu, key=lambda d: (per_gpu[d], -d))


@check(
    id="steps.gaps",
    title="No idle gaps between steps",
    section="utilisation",
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    thresholds={"warning": Threshold(10.0, "%", "GPU idle between steps, share of step time")},
    recommendation="""
The GPU sits idle between the end of one step's work and the start of the next. What the host did
in those gaps points at the cause: waiting for input (see input.bound), tf.data threads delaying the
launches (host.thread-contention), Python, callbacks or metrics between steps (steps.host-work), or
loss-scaling conditionals (precision.dynamic-loss-scale). Fix the input pipeline first.""",
)
def gaps(ctx: Context):
    a = ctx.a
    if len(a.steps) < 2:
        return ctx.not_applicable("Needs at least two steps.")
    per_gpu = {g.device_id: step_gaps(a, g.device_id) for g in a.gpus}
    totals = {d: float(sum(e - s for _, s, e in gs)) for d, gs in per_gpu.items()}
    d = _worst_gpu(a, totals)
    gs = per_gpu[d]
    mean = totals[d] / len(a.steps)
    share = pct(mean, ctx.step_ps)
    sets = host_sets(a)
    causes = defaultdict(int)
    per_gap = []
    for i, s, e in gs:
        c = attribute_window(sets, s, e)
        per_gap.append(c)
        for k, v in c.items():
            causes[k] += v
    gap_total = sum(causes.values()) or 1
    metrics = [
        Metric("gap_pct", share, "%", "GPU idle between steps, share of step time"),
        Metric("gap_ms_per_step", ms(mean), "ms", "idle between steps, per step"),
        Metric("gaps", len(gs), "", "gaps found"),
        Metric("device_id", d, "", "GPU"),
    ] + [Metric(f"{c}_pct_of_gaps", 100.0 * causes[c] / gap_total, "%", f"gap time: {c.replace('_', ' ')}") for c in GAP_CAUSES]
    main = max(GAP_CAUSES, key=lambda c: causes[c]) if gs else "unexplained"
    evidence = []
    for j in sorted(range(len(gs)), key=lambda j: -(gs[j][2] - gs[j][1]))[:3]:
        i, s, e = gs[j]
        c = per_gap[j]
        why = max(GAP_CAUSES, key=lambda k: c[k]).replace("_", " ")
        evidence.append(device_evidence(a, d, s, e, f"after step {int(a.steps.number[i])}: GPU idle {ms(e - s):.2f} ms; host: {why}"))
    status = ctx.level(share)
    summary = f"GPU {d} idle {ms(mean):.2f} ms per step between steps ({fmt_pct(share)} of step time)"
    if gs:
        summary += f"; during the gaps the host was mostly on {main.replace('_', ' ')}"
        if main in GAP_CHECK:
            summary += f" (see {GAP_CHECK[main]})"
    return ctx.finding(status, summary + ".", metrics, saving_ps=mean,
                       saving_basis="the idle time between steps, if the next step's work followed at once",
                       evidence=evidence)  # fmt: skip


@check(
    id="host.thread-contention",
    title="Kernel launches not delayed by tf.data threads",
    section="utilisation",
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    thresholds={"warning": Threshold(5.0, "%", "step time the first launches wait while tf.data threads are busy")},
    recommendation="""
The first kernels of each step are launched late while tf.data's background threads are busy, so the
GPU waits. Launch GPU work from dedicated threads with `TF_GPU_THREAD_MODE=gpu_private` so it is not
queued behind tf.data work (and, on several GPUs, raise `TF_GPU_THREAD_COUNT` if needed).""",
    snippet="export TF_GPU_THREAD_MODE=gpu_private",
)
def thread_contention(ctx: Context):
    a = ctx.a
    sets = host_sets(a)
    if not len(sets["tfdata"][0]):
        return ctx.not_applicable("No tf.data activity in the profile.")
    private = any("gpu_private" in t.name for t in a.profile.threads)
    per_gpu, delays = {}, {}
    for g in a.gpus:
        first, _ = device_work_bounds(a, g.device_id)
        has = first >= 0
        lo, hi = a.steps.start_ps[has], first[has]
        per_gpu[g.device_id] = iv.measure_in(sets["tfdata"], lo, hi).astype(float)
        delays[g.device_id] = (hi - lo).astype(float)
    d = _worst_gpu(a, {k: float(v.sum()) for k, v in per_gpu.items()})
    n = max(len(a.steps), 1)
    mean = float(per_gpu[d].sum()) / n
    share = pct(mean, ctx.step_ps)
    metrics = [
        Metric("contention_pct", share, "%", "step time the first launches wait on busy tf.data threads"),
        Metric("contention_ms_per_step", ms(mean), "ms", "per step"),
        Metric("first_kernel_delay_ms", ms(float(delays[d].mean())) if len(delays[d]) else 0.0, "ms",
               "step start to first device work"),  # fmt: skip
        Metric("gpu_private", "on" if private else "off", "", "TF_GPU_THREAD_MODE=gpu_private threads"),
    ]
    evidence = []
    first, _ = device_work_bounds(a, d)
    for i in np.argsort(-per_gpu[d], kind="stable")[:3]:
        idx = np.flatnonzero(first >= 0)[i]
        if per_gpu[d][i] <= 0:
            break
        evidence.append(device_evidence(a, d, int(a.steps.start_ps[idx]), int(first[idx]),
                                        f"step {int(a.steps.number[idx])}: first kernel {ms(first[idx] - a.steps.start_ps[idx]):.2f} ms "
                                        "after the step began, tf.data threads busy"))  # fmt: skip
    status = ctx.level(share)
    summary = (f"The first kernels of a step start {ms(float(delays[d].mean())):.2f} ms after it begins on average; "
               f"{ms(mean):.2f} ms of that ({fmt_pct(share)} of the step) with tf.data threads busy; gpu_private is "
               f"{'on' if private else 'off'}.")  # fmt: skip
    rec = None
    if private and status != PASS:
        rec = ("GPU work is already launched from private threads (TF_GPU_THREAD_MODE=gpu_private). Raise "
               "TF_GPU_THREAD_COUNT (2 by default) or give tf.data fewer threads (`options.threading.private_threadpool_size`).")  # fmt: skip
    return ctx.finding(status, summary, metrics, saving_ps=mean,
                       saving_basis="the part of the launch delay spent while tf.data threads were busy",
                       evidence=evidence, recommendation=rec)  # fmt: skip


@check(
    id="steps.host-work",
    title="No per-step host work between steps",
    section="utilisation",
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    thresholds={"warning": Threshold(5.0, "%", "host work while the GPU is idle between steps, share of step time")},
    recommendation="""
Between steps the host runs Python: ops outside `tf.function`, metrics, Keras callbacks, logging.
Run them every N steps instead of every step: in Keras, `Model.compile(steps_per_execution=N)`; in a
custom loop, put several steps in one `tf.function` with a `tf.while_loop` (or a Python `range` inside
the function) and update metrics and logs less often.""",
    snippet="model.compile(optimizer, loss, steps_per_execution=32)",
)
def host_work(ctx: Context):
    a = ctx.a
    if len(a.steps) < 2:
        return ctx.not_applicable("Needs at least two steps.")
    sets = host_sets(a)
    work = iv.subtract(sets["work"], iv.union_all(sets["input"], sets["loss"], sets["compile"]))
    per_gpu = {}
    for g in a.gpus:
        gs = step_gaps(a, g.device_id)
        per_gpu[g.device_id] = [(i, s, e, int(iv.measure_in(work, np.array([s]), np.array([e]))[0])) for i, s, e in gs]
    d = _worst_gpu(a, {k: float(sum(x[3] for x in v)) for k, v in per_gpu.items()})
    rows = per_gpu[d]
    mean = sum(r[3] for r in rows) / len(a.steps)
    share = pct(mean, ctx.step_ps)
    # which host events fill the gaps: each candidate's overlap with the gap windows, by label
    p = a.profile
    n = len(a.steps)
    gaps_set = iv.union(np.array([r[1] for r in rows], np.int64), np.array([r[2] for r in rows], np.int64))
    labels, times = [], []
    for t in p.threads:
        if is_tf_data_thread(t.name):
            continue
        ev = t.events
        cand = (ev.kind == Kind.FRAMEWORK_OP) | (ev.kind == Kind.EAGER) | ((ev.kind == Kind.HOST_OTHER) & (t.name == "python"))
        ev = ev.take(cand)
        overlap = iv.measure_in(gaps_set, ev.start_ps, ev.end_ps)
        # eager markers are labelled by their op, everything else by its name
        label = np.where((ev.kind == Kind.EAGER) & (ev.op >= 0), -2 - ev.op.astype(np.int64), ev.name.astype(np.int64))
        labels.append(label[overlap > 0])
        times.append(overlap[overlap > 0])
    keys, sums, _ = group_sum(np.concatenate(labels) if labels else np.zeros(0, np.int64),
                              np.concatenate(times) if times else np.zeros(0))  # fmt: skip
    details = [{"event": p.op_name(-2 - k) if k < -1 else p.names[k], "ms_per_step": ms(v) / n}
               for k, v in zip(keys[:8].tolist(), sums[:8].tolist())]  # fmt: skip
    metrics = [
        Metric("host_work_pct", share, "%", "host work while the GPU idles between steps"),
        Metric("host_work_ms_per_step", ms(mean), "ms", "per step"),
    ]
    evidence = []
    for i, s, e, w in sorted(rows, key=lambda r: -r[3])[:3]:
        if w <= 0:
            break
        evidence.append(host_evidence("python", s, e, f"after step {int(a.steps.number[i])}: {ms(w):.2f} ms of host work, GPU idle",
                                      [d_["event"] for d_ in details[:5]]))  # fmt: skip
    summary = f"{ms(mean):.2f} ms per step ({fmt_pct(share)}) of host work while the GPU idles between steps"
    if details:
        summary += f"; most of it in {details[0]['event']}"
    return ctx.finding(ctx.level(share), summary + ".", metrics, saving_ps=mean,
                       saving_basis="the host work between steps, if it ran every N steps", evidence=evidence,
                       details=details)  # fmt: skip


@check(
    id="kernels.launch-bound",
    title="GPU not waiting for kernel launches",
    section="utilisation",
    needs_gpu=True,
    anchor="#1._small_gpu_kernels_and_host_kernel_launch_delays",
    thresholds={
        "warning": Threshold(3.0, "%", "GPU idle waiting for launches, share of step time (moderate)"),
        "critical": Threshold(15.0, "%", "GPU idle waiting for launches, share of step time (high)"),
    },
    recommendation="""
The GPU finishes a kernel before the host has launched the next one (a launch costs about 20-40 µs
of host time). Give each launch more work: concatenate small tensors and vectorise, use a larger
batch, make sure the step runs inside `tf.function`, and let XLA fuse kernels
(`tf.function(jit_compile=True)` or auto-clustering).""",
    snippet="""@tf.function(jit_compile=True)
def train_step(x, y):
    ...""",
)
def launch_bound(ctx: Context):
    a = ctx.a
    j = CATEGORIES.index("kernel_launch_wait")
    per_gpu = {g.device_id: g.breakdown_ps[:, j].astype(float) for g in a.gpus}
    d = _worst_gpu(a, {k: float(v.sum()) for k, v in per_gpu.items()})
    mean = float(per_gpu[d].mean())
    share = pct(mean, ctx.step_ps)
    waits = exclusive(a.activity[d])["kernel_launch_wait"]
    n_waits = len(waits[0])
    metrics = [
        Metric("launch_wait_pct", share, "%", "GPU idle waiting for launches"),
        Metric("launch_wait_ms_per_step", ms(mean), "ms", "per step"),
        Metric("waits_per_step", n_waits / max(len(a.steps), 1), "", "launch waits per step"),
        Metric("device_id", d, "", "GPU"),
    ]
    evidence = []
    ev = device_events(a, d)
    for i in np.argsort(-per_gpu[d], kind="stable")[:3]:
        if per_gpu[d][i] <= 0:
            break
        lo, hi = a.steps.start_ps[i], a.steps.end_ps[i]
        inside = np.flatnonzero((waits[0] >= lo) & (waits[0] < hi))[:20]
        s, e = int(waits[0][inside[0]]), int(waits[1][inside[-1]])
        in_win = (ev.start_ps >= s) & (ev.start_ps <= e)
        names = sorted({a.profile.names[x] for x in ev.name[in_win]})[:5]
        evidence.append(device_evidence(a, d, s, e, f"step {int(a.steps.number[i])}: {len(inside)} waits for launches "
                                        f"({ms(per_gpu[d][i]):.2f} ms in the step)", names))  # fmt: skip
    summary = f"GPU {d} idle {ms(mean):.2f} ms per step ({fmt_pct(share)}) waiting for the host to launch kernels."
    return ctx.finding(ctx.level(share), summary, metrics, saving_ps=mean,
                       saving_basis="the launch wait per step, if launches kept ahead of the GPU", evidence=evidence)  # fmt: skip


@check(
    id="kernels.small",
    title="Kernels large enough to amortise their launch",
    section="utilisation",
    needs_gpu=True,
    anchor="#1._small_gpu_kernels_and_host_kernel_launch_delays",
    thresholds={
        "max_kernel_us": Threshold(40.0, "µs", "mean kernel time of an op type at or below which its kernels are small"),
        "min_per_step": Threshold(200.0, "kernels", "small kernels per step before they matter"),
        "warning": Threshold(20.0, "%", "share of device compute in small kernels"),
    },
    recommendation="""
Many kernels run about as long as it takes to launch them (the guide's example: 126,224 Mul kernels
taking 2.77 s, 21.9 µs each). Concatenate small tensors and use vectorised ops, use a larger batch so
each kernel does more work, run the step in `tf.function`, and let XLA fuse element-wise chains
(`tf.function(jit_compile=True)` or auto-clustering).""",
    snippet="tf.config.optimizer.set_jit(True)  # XLA auto-clustering",
)
def small_kernels(ctx: Context):
    a = ctx.a
    p = a.profile
    groups: dict[str, list] = defaultdict(lambda: [0, 0, set()])
    compute = 0
    for g in a.gpus:
        ev = device_events(a, g.device_id)
        k = ev.take(ev.kind == Kind.KERNEL)
        compute += int(k.dur_ps.sum())
        key = np.where(k.op >= 0, k.op, -2 - k.name)  # op, or the kernel name when no op claims it
        uniq, inv = np.unique(key, return_inverse=True)
        counts = np.bincount(inv)
        sums = np.bincount(inv, weights=k.dur_ps)
        for u, c, s in zip(uniq.tolist(), counts.tolist(), sums.tolist()):
            label = p.op_type(u) if u >= 0 else p.names[-2 - u]
            grp = groups[label]
            grp[0] += c
            grp[1] += s
            grp[2].add(g.device_id)
    n = max(len(a.steps), 1)
    max_ps = ctx.t["max_kernel_us"] * 1e6
    small = {k: v for k, v in groups.items() if v[0] and v[1] / v[0] <= max_ps}
    count = sum(v[0] for v in small.values())
    time = sum(v[1] for v in small.values())
    per_step = count / n
    share = pct(time, compute)
    details = [
        {"op_type": k, "kernels": v[0], "per_step": v[0] / n, "total_ms": ms(v[1]), "mean_us": v[1] / v[0] / 1e6}
        for k, v in sorted(small.items(), key=lambda kv: -kv[1][0])[:8]
    ]
    metrics = [
        Metric("small_kernels_per_step", per_step, "", "small kernels per step"),
        Metric("small_kernel_pct", share, "%", "share of device compute in small kernels"),
        Metric("small_kernel_ms_per_step", ms(time) / n, "ms", "time in small kernels per step"),
        Metric("mean_small_kernel_us", time / count / 1e6 if count else None, "µs", "mean small kernel"),
    ]
    status = PASS
    if per_step >= ctx.t["min_per_step"]:
        status = WARNING if (share or 0) >= ctx.t["warning"] else INFO
    evidence = []
    if details:
        d = a.gpus[0].device_id
        ev = device_events(a, d)
        k = ev.take(ev.kind == Kind.KERNEL)
        small_mask = k.dur_ps <= max_ps
        first_step = step_index(a, k.start_ps)
        sel = np.flatnonzero(small_mask & (first_step == (first_step[small_mask].min() if small_mask.any() else -1)))[:50]
        if len(sel):
            s, e = int(k.start_ps[sel[0]]), int(k.end_ps[sel[-1]])
            evidence.append(device_evidence(a, d, s, e, f"{len(sel)} small kernels in a row", [p.names[k.name[sel[0]]]],
                                            stream_id=stream_of(a, d, s)))  # fmt: skip
    top_ = details[0] if details else None
    summary = f"{per_step:.0f} kernels per step average ≤ {ctx.t['max_kernel_us']:.0f} µs ({fmt_pct(share)} of device compute)"
    if top_:
        summary += f"; most are {top_['op_type']}: {top_['kernels']} kernels, {top_['total_ms']:.2f} ms, {top_['mean_us']:.1f} µs each"
    return ctx.finding(status, summary + ".", metrics, evidence=evidence, details=details)


@check(
    id="ops.eager",
    title="Ops run inside graphs, not eagerly",
    section="utilisation",
    anchor="#1._small_gpu_kernels_and_host_kernel_launch_delays",
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
def eager_ops(ctx: Context):
    a = ctx.a
    p = a.profile
    dev_eager = 0
    for s in p.streams:
        ev = s.events
        dev_eager += int(ev.dur_ps[((ev.flags & Flag.EAGER) != 0) & (ev.op >= 0)].sum())
    h = a.host
    host_eager_mask = (h.kind == Kind.EAGER) & ((h.flags & Flag.FUNCTION) == 0)
    host_eager = int(iv.total(iv.union(h.start_ps[host_eager_mask], h.end_ps[host_eager_mask])))
    device_ops, host_ops = a.op_time_ps()
    total = device_ops + host_ops + host_eager
    if total <= 0:
        return ctx.not_applicable("No framework ops in the profile.")
    share = pct(dev_eager + host_eager, total)
    n = max(len(a.steps), 1)
    label = np.where(h.op >= 0, -2 - h.op.astype(np.int64), h.name.astype(np.int64))[host_eager_mask]
    keys, sums, _ = group_sum(label, h.dur_ps[host_eager_mask])
    details = [{"op_type": p.op_type(-2 - k) if k < -1 else p.names[k], "host_ms_per_step": ms(v) / n}
               for k, v in zip(keys[:8].tolist(), sums[:8].tolist())]  # fmt: skip
    metrics = [
        Metric("eager_pct", share, "%", "share of op time executed eagerly"),
        Metric("eager_host_ms_per_step", ms(host_eager) / n, "ms", "eager dispatch on the host per step"),
        Metric("eager_device_ms_per_step", ms(dev_eager) / n, "ms", "device time of eager ops per step"),
        Metric("eager_ops", int(host_eager_mask.sum()), "", "eager op executions"),
    ]
    evidence = []
    for t in p.threads:
        ev = t.events
        m = (ev.kind == Kind.EAGER) & ((ev.flags & Flag.FUNCTION) == 0)
        if m.sum() >= 1:
            k = step_index(a, ev.start_ps)
            busiest = np.bincount(k[m & (k >= 0)], minlength=len(a.steps)).argmax() if np.any(m & (k >= 0)) else -1
            sel = np.flatnonzero(m & (k == busiest)) if busiest >= 0 else np.flatnonzero(m)[:50]
            evidence.append(host_evidence(t.name, int(ev.start_ps[sel[0]]), int(ev.end_ps[sel[-1]]),
                                          f"{len(sel)} eager ops" + (f" in step {int(a.steps.number[busiest])}" if busiest >= 0 else ""),
                                          [x["op_type"] for x in details[:5]]))  # fmt: skip
            break
    summary = f"{fmt_pct(share)} of op time executed eagerly ({int(host_eager_mask.sum())} eager op executions)"
    status = ctx.level(share)
    dispatch_pct = pct(host_eager / n, ctx.step_ps) or 0.0
    metrics.append(Metric("eager_step_pct", dispatch_pct, "%", "eager dispatch per step, share of step time"))
    if status != PASS and dispatch_pct < ctx.t["min_step_pct"]:
        status = INFO
        summary += f", but eager dispatch is only {dispatch_pct:.1f}% of the step"
    return ctx.finding(status, summary + ".", metrics, evidence=evidence, details=details)


@check(
    id="placement.host-ops",
    title="Compute ops placed on the GPU",
    section="utilisation",
    anchor="#2._tensorflow_op_placement",
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
def host_ops(ctx: Context):
    a = ctx.a
    p = a.profile
    if not a.gpus:
        return ctx.not_applicable("No GPU: every op runs on the host.")
    device_ps, host_ps = a.op_time_ps()
    share = pct(host_ps, device_ps + host_ps)
    h = a.host
    m = (h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0)
    m &= ~p.ops.on_device[np.maximum(h.op, 0)] if len(p.ops) else m
    n = max(len(a.steps), 1)
    keys, sums, counts = group_sum(h.op[m].astype(np.int64), h.dur_ps[m])
    details = [{"op": f"{p.op_name(k)} ({p.op_type(k)})", "ms_per_step": ms(v) / n, "count": int(c)}
               for k, v, c in zip(keys[:8].tolist(), sums[:8].tolist(), counts[:8].tolist())]  # fmt: skip
    busy = iv.union_all(*[a.activity[g.device_id].busy for g in a.gpus])
    host_union = iv.union(h.start_ps[m], h.end_ps[m])
    exposed = iv.measure_in(iv.subtract(host_union, busy), a.steps.start_ps, a.steps.end_ps).astype(float)
    metrics = [
        Metric("host_op_pct", share, "%", "share of op time on the host"),
        Metric("host_op_ms_per_step", ms(host_ps) / n, "ms", "host op time per step"),
        Metric("exposed_ms_per_step", ms(float(exposed.mean())) if len(exposed) else 0.0, "ms",
               "host op time while the GPU is idle, per step"),  # fmt: skip
    ]
    evidence = []
    longest = []  # (duration, thread, start, end, op) of the longest host-placed op events
    for t in p.threads:
        ev = t.events
        mm = (ev.kind == Kind.FRAMEWORK_OP) & (ev.op >= 0)
        if len(p.ops):
            mm &= ~p.ops.on_device[np.maximum(ev.op, 0)]
        for k in np.flatnonzero(mm)[np.argsort(-ev.dur_ps[mm], kind="stable")[:3]]:
            longest.append((int(ev.dur_ps[k]), t.name, int(ev.start_ps[k]), int(ev.end_ps[k]), p.op_name(ev.op[k])))
    for dur, name, start, end, op in sorted(longest, key=lambda x: -x[0])[:3]:
        evidence.append(host_evidence(name, start, end, f"{op} on the host ({ms(dur):.2f} ms)", [op]))
    summary = f"{fmt_pct(share)} of framework op time is on the host"
    if details:
        summary += f"; top: {details[0]['op']} {details[0]['ms_per_step']:.2f} ms/step"
    return ctx.finding(ctx.level(share), summary + ".", metrics, saving_ps=float(exposed.mean()) if len(exposed) else 0.0,
                       saving_basis="host op time while the GPU is idle, if those ops ran on the GPU",
                       evidence=evidence, details=details)  # fmt: skip


def copy_analysis(a, device_id: int) -> dict:
    """Copies beyond the model's input on one GPU: per direction counts, bytes and time per step,
    the time they block compute, mid-step D2H, and per-op rows with neighbouring ops."""
    p = a.profile
    ev = device_events(a, device_id)
    c = ev.take(copies_mask(ev) & ~input_copy_mask(p, ev))
    n = max(len(a.steps), 1)
    blocking_set = iv.subtract(iv.union(c.start_ps, c.end_ps), compute_busy(a, device_id))
    blocking = iv.measure_in(blocking_set, a.steps.start_ps, a.steps.end_ps).astype(float)
    directions = {}
    for kind, label in ((Kind.MEMCPY_H2D, "H2D"), (Kind.MEMCPY_D2H, "D2H"), (Kind.MEMCPY_D2D, "D2D"), (Kind.MEMCPY_P2P, "P2P")):
        m = c.kind == kind
        directions[label] = {"count_per_step": int(m.sum()) / n, "mb_per_step": float(c.bytes[m].sum()) / 1e6 / n,
                             "ms_per_step": ms(float(c.dur_ps[m].sum())) / n}  # fmt: skip
    # D2H copies in the middle of a step: compute of the same step continues after them
    _, last = device_work_bounds(a, device_id)
    k = step_index(a, c.start_ps)
    mid = (c.kind == Kind.MEMCPY_D2H) & (k >= 0) & (c.end_ps < np.where(k >= 0, last[np.maximum(k, 0)], 0) - 1)
    # per copy: time it blocks compute, and the ops of the kernels just before and after it
    blk = iv.measure_in(blocking_set, c.start_ps, c.end_ps)
    kern = ev.take(np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)))
    by_end = np.argsort(kern.end_ps, kind="stable")
    before = np.searchsorted(kern.end_ps[by_end], c.start_ps, side="right") - 1
    prev_op = np.where(before >= 0, kern.op[by_end][np.maximum(before, 0)], -1) if len(kern) else np.full(len(c), -1)
    after = np.searchsorted(kern.start_ps, c.end_ps, side="left")
    next_op = np.where(after < len(kern), kern.op[np.minimum(after, len(kern) - 1)], -1) if len(kern) else np.full(len(c), -1)
    key = c.name.astype(np.int64) * (len(p.ops) + 1) + (c.op.astype(np.int64) + 1)
    keys, inv = np.unique(key, return_inverse=True) if len(c) else (key, key)
    rows = []
    for j, kk in enumerate(keys.tolist()):
        sel = inv == j
        first = int(np.flatnonzero(sel)[0])
        name, op = divmod(kk, len(p.ops) + 1)
        rows.append({"copy": p.names[name], "op": p.op_name(op - 1), "count_per_step": int(sel.sum()) / n,
                     "mb_per_step": float(c.bytes[sel].sum()) / 1e6 / n, "blocking_ms_per_step": ms(float(blk[sel].sum())) / n,
                     "before": p.op_name(int(prev_op[first])), "after": p.op_name(int(next_op[first]))})  # fmt: skip
    rows.sort(key=lambda r: -r["blocking_ms_per_step"])
    order = np.argsort(-blk, kind="stable")[:10]
    items = [(int(blk[j]), int(c.start_ps[j]), int(c.end_ps[j]), p.names[c.name[j]], p.op_name(c.op[j]),
              p.op_name(int(prev_op[j])), p.op_name(int(next_op[j])), int(c.bytes[j])) for j in order]  # fmt: skip
    return {
        "blocking_ps_per_step": float(blocking.mean()) if len(blocking) else 0.0,
        "directions": directions,
        "mid_step_d2h_per_step": int(mid.sum()) / n,
        "rows": rows[:10],
        "items": items,
        "count": len(c),
    }


def copy_evidence(a, device_id: int, items, n: int = 3):
    out = []
    for blk, s, e, name, op, prev_op, next_op, nbytes in items[:n]:
        if blk <= 0:
            break
        out.append(device_evidence(a, device_id, s, e, f"{name} {nbytes / 2**20:.1f} MiB ({op or 'no op'}): compute idle {ms(blk):.3f} ms",
                                   [x for x in (name, op, prev_op, next_op) if x], stream_id=stream_of(a, device_id, s)))  # fmt: skip
    return out


COPY_THRESHOLDS = {
    "warning": Threshold(3.0, "%", "step time in copies (beyond the input) while compute is idle"),
    "critical": Threshold(15.0, "%", "step time in copies (beyond the input) while compute is idle (high)"),
}


@check(
    id="memcpy.excessive",
    title="No excessive host-device copies",
    section="utilisation",
    needs_gpu=True,
    anchor="#2._tensorflow_op_placement",
    thresholds=COPY_THRESHOLDS,
    recommendation="""
Besides the model's inputs and outputs, tensors are copied between host and device during the step,
and the GPU waits for them. Such copies usually come from ops placed on the host (see
placement.host-ops) or from reading values back in Python (`.numpy()`, `float(loss)`, printing) in
the middle of a step. Keep the computation on the GPU and read values back only at the end of a
step, or every N steps. The copy's op and the ops next to it tell where in the model it happens.""",
)
def excessive_copies(ctx: Context):
    a = ctx.a
    per_gpu = {g.device_id: copy_analysis(a, g.device_id) for g in a.gpus}
    d = _worst_gpu(a, {k: v["blocking_ps_per_step"] for k, v in per_gpu.items()})
    r = per_gpu[d]
    share = pct(r["blocking_ps_per_step"], ctx.step_ps)
    metrics = [
        Metric("blocking_copy_pct", share, "%", "copies beyond the input while compute is idle"),
        Metric("blocking_copy_ms_per_step", ms(r["blocking_ps_per_step"]), "ms", "per step"),
        Metric("mid_step_d2h_per_step", r["mid_step_d2h_per_step"], "", "device-to-host copies mid-step"),
    ]
    for dirn, v in r["directions"].items():
        metrics.append(Metric(f"{dirn.lower()}_per_step", v["count_per_step"], "", f"{dirn} copies per step"))
        metrics.append(Metric(f"{dirn.lower()}_mb_per_step", v["mb_per_step"], "MB", f"{dirn} MB per step"))
        metrics.append(Metric(f"{dirn.lower()}_ms_per_step", v["ms_per_step"], "ms", f"{dirn} time per step"))
    status = ctx.level(share)
    if status == PASS and r["mid_step_d2h_per_step"] >= 1:
        status = INFO
    summary = (f"Copies beyond the input block compute {ms(r['blocking_ps_per_step']):.3f} ms per step ({fmt_pct(share)}); "
               f"{r['mid_step_d2h_per_step']:.1f} device-to-host copies per step in mid-step.")  # fmt: skip
    if r["rows"] and r["rows"][0]["blocking_ms_per_step"] > 0:
        top_ = r["rows"][0]
        summary += f" Largest: {top_['copy']} of {top_['op'] or 'no op'} (after {top_['before'] or '-'}, before {top_['after'] or '-'})."
    return ctx.finding(status, summary, metrics, saving_ps=r["blocking_ps_per_step"],
                       saving_basis="the time copies beyond the input leave compute idle",
                       evidence=copy_evidence(a, d, r["items"]), details=r["rows"])  # fmt: skip

