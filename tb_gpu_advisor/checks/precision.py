"""4. Mixed precision and XLA (guide 1.3)."""
from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.common import COMPILE, LOSS_SCALE, fmt_pct, group_sum, host_evidence, ms, name_mask, pct, step_gaps
from tb_gpu_advisor.checks.kernels import TENSOR_CORE_SPEEDUP, kernel_table, tensor_core_devices
from tb_gpu_advisor.profile import Flag, Kind
from tb_gpu_advisor.report import INFO, PASS, WARNING, Metric


def _fp16_share(a, devs) -> tuple[float | None, object, np.ndarray, float]:
    ev, elig, compute = kernel_table(a, devs)
    fp16 = float(ev.dur_ps[(ev.flags & Flag.FP16) != 0].sum())
    return pct(fp16, compute), ev, elig, compute


MIXED_ON_PCT = Threshold(10.0, "%", "16-bit share of device compute below which mixed precision is off")


def mixed_on_pct(ctx: Context) -> float:
    """The 16-bit share at which mixed precision counts as on: precision.mixed-off's threshold."""
    return float(ctx.options.overrides.get("precision.mixed-off.warning", MIXED_ON_PCT.default))


@check(
    id="precision.mixed-off",
    title="Mixed precision on a Tensor Core GPU",
    section="precision",
    needs_gpu=True,
    anchor="#1._enable_mixed_precision",
    thresholds={"warning": MIXED_ON_PCT},
    recommendation="""
Almost all device compute runs in 32-bit on a GPU with Tensor Cores. Turn on Keras mixed precision
(`mixed_float16`; the Keras optimizer then scales the loss automatically): on Volta and newer GPUs it
gives up to about 3x over fp32. Enable mixed precision and XLA one at a time and measure each.""",
    snippet="""tf.keras.mixed_precision.set_global_policy("mixed_float16")""",
)
def mixed_off(ctx: Context):
    a = ctx.a
    devs, na = tensor_core_devices(ctx)
    if na:
        return na
    share, ev, elig, compute = _fp16_share(a, devs)
    n = max(len(a.steps), 1)
    fp32_elig = float(ev.dur_ps[elig & ((ev.flags & Flag.FP16) == 0)].sum())
    metrics = [
        Metric("fp16_pct", share, "%", "16-bit share of device compute"),
        Metric("fp32_eligible_ms_per_step", ms(fp32_elig) / n, "ms", "32-bit matmul/conv time per step"),
    ]
    if share is None:
        return ctx.not_applicable("No kernels on the Tensor Core GPUs.")
    if share < ctx.t["warning"]:
        return ctx.finding(WARNING, f"Only {fmt_pct(share)} of device compute is 16-bit on a Tensor Core GPU.", metrics,
                           saving_ps=fp32_elig / n * (1 - 1 / TENSOR_CORE_SPEEDUP),
                           saving_basis=f"32-bit matmul/conv kernels running {TENSOR_CORE_SPEEDUP:.0f}x faster in 16-bit on Tensor Cores")  # fmt: skip
    return ctx.finding(PASS, f"{fmt_pct(share)} of device compute is 16-bit.", metrics)


@check(
    id="precision.fp16-no-tensorcore",
    title="16-bit matmul/conv kernels use Tensor Cores",
    section="precision",
    needs_gpu=True,
    anchor="#1._use_optimal_fp16_kernels",
    thresholds={"warning": Threshold(10.0, "%", "16-bit matmul/conv time in kernels without Tensor Cores")},
    recommendation="""
Mixed precision is on, but 16-bit GEMM or convolution kernels still do not use Tensor Cores: an
inefficient implementation was chosen. Look the kernels up in the Profile tab's kernel stats, and
check the dimension rules (multiples of 8, see tensorcore.dims). Memory-bound kernels also gain from
16-bit (half the bytes) even without Tensor Cores.""",
)
def fp16_no_tc(ctx: Context):
    a = ctx.a
    devs, na = tensor_core_devices(ctx)
    if na:
        return na
    share, ev, elig, compute = _fp16_share(a, devs)
    if share is None or share < mixed_on_pct(ctx):
        return ctx.not_applicable("Mixed precision is off (see precision.mixed-off).")
    fp16_elig = elig & ((ev.flags & Flag.FP16) != 0)
    no_tc = fp16_elig & ((ev.flags & Flag.TENSOR_CORE) == 0)
    t_elig, t_no = float(ev.dur_ps[fp16_elig].sum()), float(ev.dur_ps[no_tc].sum())
    frac = pct(t_no, t_elig)
    n = max(len(a.steps), 1)
    metrics = [
        Metric("no_tensor_core_pct", frac, "%", "16-bit matmul/conv time without Tensor Cores"),
        Metric("no_tensor_core_ms_per_step", ms(t_no) / n, "ms", "per step"),
    ]
    if not np.any(fp16_elig):
        return ctx.finding(PASS, "No 16-bit matmul/convolution kernels.", metrics)
    keys, sums, _ = group_sum(ev.name[no_tc], ev.dur_ps[no_tc])
    details = [{"kernel": a.profile.names[k], "ms_per_step": ms(v) / n} for k, v in zip(keys[:8].tolist(), sums[:8].tolist())]
    status = ctx.level(frac)
    summary = f"{fmt_pct(frac)} of 16-bit matmul/conv time runs in kernels without Tensor Cores"
    if details:
        summary += f" (e.g. {details[0]['kernel'][:80]})"
    return ctx.finding(status, summary + ".", metrics, saving_ps=t_no / n * (1 - 1 / TENSOR_CORE_SPEEDUP),
                       saving_basis=f"those kernels running {TENSOR_CORE_SPEEDUP:.0f}x faster on Tensor Cores",
                       details=details)  # fmt: skip


@check(
    id="precision.dynamic-loss-scale",
    title="Loss scaling does not stall the GPU",
    section="precision",
    needs_gpu=True,
    anchor="#2._dynamic_vs_static_loss_scaling",
    thresholds={"warning": Threshold(3.0, "%", "step time in loss-scaling ops on the host while the GPU idles")},
    recommendation="""
Dynamic loss scaling runs conditional ops on the host (finiteness checks, `cond` to update the
scale), which show as gaps between steps. A static loss scale has no such overhead but needs the
right value; in Keras, `LossScaleOptimizer(opt, dynamic=False, initial_scale=...)`. bfloat16 needs no
loss scaling.""",
    snippet="""opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=2**15)""",
)
def dynamic_loss_scale(ctx: Context):
    a = ctx.a
    p = a.profile
    h = a.host
    names = np.array([bool(LOSS_SCALE.search(p.op_name(o))) for o in range(len(p.ops))] + [False], bool)
    m = (h.kind == Kind.FRAMEWORK_OP) & names[np.where(h.op >= 0, h.op, len(p.ops))]
    share16, *_ = _fp16_share(a, [g.device_id for g in a.gpus])
    if not np.any(m):
        if share16 is None or share16 < mixed_on_pct(ctx):
            return ctx.not_applicable("Mixed precision is off: no loss scaling expected.")
        return ctx.finding(PASS, "No loss-scaling ops on the host.", [Metric("loss_scale_ops", 0, "", "loss-scaling op executions")])
    ops = iv.union(h.start_ps[m], h.end_ps[m])
    busy = iv.union_all(*[a.activity[g.device_id].busy for g in a.gpus])
    exposed = iv.measure_in(iv.subtract(ops, busy), a.steps.start_ps, a.steps.end_ps).astype(float)
    mean = float(exposed.mean()) if len(exposed) else 0.0
    share = pct(mean, ctx.step_ps)
    n = max(len(a.steps), 1)
    metrics = [
        Metric("loss_scale_pct", share, "%", "step time in loss-scaling ops while the GPU idles"),
        Metric("loss_scale_ms_per_step", ms(mean), "ms", "per step"),
        Metric("loss_scale_ops_per_step", int(m.sum()) / n, "", "loss-scaling op executions per step"),
    ]
    evidence = []
    for name, ev in [(t.name, t.events) for t in p.threads]:
        mm = (ev.kind == Kind.FRAMEWORK_OP) & names[np.where(ev.op >= 0, ev.op, len(p.ops))]
        if np.any(mm):
            idx = np.flatnonzero(mm)
            gaps = step_gaps(a, a.gpus[0].device_id)
            for i, s, e in gaps[:3]:
                inside = idx[(ev.start_ps[idx] >= s) & (ev.start_ps[idx] < e)]
                if len(inside):
                    evidence.append(host_evidence(name, int(ev.start_ps[inside[0]]), int(ev.end_ps[inside[-1]]),
                                                  f"after step {int(a.steps.number[i])}: loss-scaling ops, GPU idle",
                                                  sorted({p.op_name(ev.op[k]) for k in inside})[:5]))  # fmt: skip
            break
    status = ctx.level(share)
    if status == PASS:
        status = INFO
    return ctx.finding(status, f"Loss-scaling ops on the host leave the GPU idle {ms(mean):.2f} ms per step ({fmt_pct(share)}).",
                       metrics, saving_ps=mean, saving_basis="the loss-scaling time while the GPU idles (a static scale has none)",
                       evidence=evidence)  # fmt: skip


@check(
    id="precision.fp16-softmax",
    title="Softmax outside the loss runs in fp32",
    section="precision",
    needs_gpu=True,
    anchor="#1._enable_mixed_precision",
    recommendation="""
A standalone softmax (not inside a Keras loss) runs in 16-bit, which can hurt numerics and
convergence. Compute it in float32: give the final activation layer `dtype="float32"`, or cast its
input with `tf.cast(logits, tf.float32)`.""",
    snippet="""outputs = tf.keras.layers.Activation("softmax", dtype="float32")(logits)""",
)
def fp16_softmax(ctx: Context):
    a = ctx.a
    p = a.profile
    ev, _, _ = kernel_table(a, [g.device_id for g in a.gpus])
    if not np.any(ev.flags & Flag.FP16):
        return ctx.not_applicable("No 16-bit compute.")
    is_soft = np.array([p.op_type(o) in ("Softmax", "LogSoftmax") and not re.search(r"loss|cross_?entropy", p.op_name(o), re.I)
                        for o in range(len(p.ops))] + [False], bool)  # fmt: skip
    m = is_soft[np.where(ev.op >= 0, ev.op, len(p.ops))] & ((ev.flags & Flag.FP16) != 0)
    ops = sorted({p.op_name(o) for o in ev.op[m]})
    metrics = [Metric("fp16_softmax_ops", len(ops), "", "16-bit softmax ops outside the loss")]
    if not ops:
        return ctx.finding(PASS, "No 16-bit softmax outside the loss.", metrics)
    n = max(len(a.steps), 1)
    metrics.append(Metric("fp16_softmax_ms_per_step", ms(float(ev.dur_ps[m].sum())) / n, "ms", "per step"))
    return ctx.finding(WARNING, f"{len(ops)} softmax op(s) run in 16-bit outside the loss, e.g. {ops[0]}.", metrics,
                       details=[{"op": o} for o in ops[:10]])  # fmt: skip


@check(
    id="xla.off",
    title="XLA compilation considered",
    section="precision",
    anchor="#2._enable_xla_with_tffunctionjit_compiletrue_or_auto-clustering",
    recommendation="""
No sign of XLA in the profile. XLA fuses operations into fewer, larger kernels and often speeds up
training: compile the step with `tf.function(jit_compile=True)`, or turn on auto-clustering
(`tf.config.optimizer.set_jit(True)` or `TF_XLA_FLAGS=--tf_xla_auto_jit=2`). The global JIT level is
-1 (off), 1 or 2; higher is more aggressive, may reduce parallelism and use more memory: use 1 under
memory pressure.""",
    snippet="""@tf.function(jit_compile=True)
def train_step(x, y):
    ...""",
)
def xla_off(ctx: Context):
    p = ctx.a.profile
    if p.has_xla:
        return ctx.finding(PASS, "XLA-compiled kernels in the profile.", [Metric("xla", "on", "", "XLA")])
    return ctx.finding(INFO, "No XLA modules, HLO ops or fused kernels in the profile.", [Metric("xla", "off", "", "XLA")])


@check(
    id="xla.recompile",
    title="No repeated XLA compilation",
    section="precision",
    anchor="#2._enable_xla_with_tffunctionjit_compiletrue_or_auto-clustering",
    thresholds={"max_compiles": Threshold(1.0, "compilations", "compilations in the capture before it counts as recompiling")},
    recommendation="""
XLA compiled again during the capture. XLA compiles a program for each distinct input shape, so
variable shapes (sequence lengths, a smaller last batch) trigger recompilation. Pad or bucket inputs
to a few fixed shapes (`padded_batch`, `bucket_by_sequence_length`, `drop_remainder=True`).""",
    snippet="""dataset = dataset.padded_batch(batch_size, padded_shapes=([max_len], []), drop_remainder=True)""",
)
def xla_recompile(ctx: Context):
    a = ctx.a
    p = a.profile
    rows = []
    for t in p.threads:
        ev = t.events
        m = name_mask(p, ev, COMPILE)
        if not np.any(m):
            continue
        # nested compile events (the op and its cache call) count once
        u = iv.union(ev.start_ps[m], ev.end_ps[m])
        for s, e in zip(u[0].tolist(), u[1].tolist()):
            rows.append((t.name, s, e))
    if not rows and not p.has_xla:
        return ctx.not_applicable("XLA is not used.")
    n = max(len(a.steps), 1)
    total = sum(e - s for _, s, e in rows)
    metrics = [
        Metric("compilations", len(rows), "", "XLA compilations in the capture"),
        Metric("compile_ms_per_step", ms(total) / n, "ms", "compile time per step"),
    ]
    evidence = [host_evidence(name, s, e, f"XLA compilation {i + 1} ({ms(e - s):.1f} ms)") for i, (name, s, e) in enumerate(rows[:5])]
    if len(rows) > ctx.t["max_compiles"]:
        return ctx.finding(WARNING, f"XLA compiled {len(rows)} times during the capture ({ms(total):.1f} ms in all).", metrics,
                           saving_ps=total / n, saving_basis="compile time per step, if shapes stayed fixed", evidence=evidence)  # fmt: skip
    return ctx.finding(PASS, f"{len(rows)} XLA compilation(s) in the capture.", metrics, evidence=evidence)
