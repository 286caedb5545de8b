"""4. Mixed precision (guide 1.3)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tb_gpu_advisor.checks.base import UNKNOWN_MATMUL, Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric
from tb_gpu_advisor.checks.texts import MIXED_ON, TENSOR_CORE_SPEEDUP, mixed_precision_advice, oldest
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import JAX, TENSORFLOW, UNKNOWN, GpuMeasures


def matmul_16bit_pct(gpus: Sequence[GpuMeasures]) -> float | None:
    """16-bit (or narrower: FP8, FP4) share of matmul/convolution kernel time."""
    return pct(sum(g.matmul_ps(fp16=True) for g in gpus), sum(g.matmul_ps() for g in gpus))


@check(
    id="precision.mixed-off",
    time=OwnTime("fp32_eligible_ms_per_step"),
    table="kernels",
    headline="fp16_compute_pct",
    title="Mixed precision on a GPU with Tensor Cores or matrix cores",
    problem="Mixed precision off: {fp16_pct:.1f}% of matmul/conv time in 16-bit",
    section="precision",
    order=230,
    needs_gpu=True,
    anchor="#1._enable_mixed_precision",
    measures="""On GPUs with Tensor Cores (NVIDIA, compute capability 7.0 or newer) or matrix cores (AMD
CDNA), the 16-bit share of matmul/convolution kernel time (FP8 and narrower count with it: reduced
precision, never advised back to 16-bit). A kernel is 16-bit by the profile plugin's rule: its op's
(first) input is half or bfloat16; the kernel's name decides only when the op has no shape. Not
applicable without matmul/convolution kernels. The advice follows the architecture it reads:
fp16 with loss scaling below compute capability 8.0 (no bf16 Tensor Cores), bf16 from 8.0 and on AMD
CDNA.""",
    thresholds={"warning": MIXED_ON},
    recommendation={
        "default": """
Almost all matmul and convolution time runs in 32-bit on a GPU with Tensor Cores. Turn on Keras mixed
precision (`mixed_float16`; the Keras optimizer then scales the loss automatically): on Volta and newer
GPUs it gives up to about 3x over fp32. Enable mixed precision and XLA one at a time and measure each.""",
        "pytorch": """
Almost all matmul and convolution time runs in 32-bit on a GPU with Tensor Cores. Run the forward pass
and loss under `torch.autocast`: with `dtype=torch.bfloat16` on Ampere (compute capability 8.0) and
newer, with `dtype=torch.float16` and a `torch.amp.GradScaler` on Volta and Turing, which have no bf16
Tensor Cores. The finding says which GPU it read.""",
        "jax": """
Almost all matmul and convolution time runs in 32-bit on a GPU with Tensor Cores. Keep parameters in
float32 and compute in bfloat16 on Ampere (compute capability 8.0) and newer (cast inputs and parameters
with `jnp.bfloat16`, or set `dtype=jnp.bfloat16` on Flax layers), in float16 with loss scaling on Volta
and Turing. The finding says which GPU it read.""",
    },
    snippet={
        "default": """tf.keras.mixed_precision.set_global_policy("mixed_float16")""",
        "pytorch": """with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = loss_fn(model(x), y)""",
        "jax": """logits = model.apply(params, x.astype(jnp.bfloat16))""",
    },
)
def mixed_off(ctx: Context) -> Finding:
    amd = [g for g in ctx.m.gpus if g.device.matrix_cores]
    if amd and not ctx.m.tensor_core_gpus:
        gpus = amd  # AMD's matrix cores run fp16 and bf16 as Tensor Cores do
        if not any(g.matmul.eligible.any() for g in gpus):
            return ctx.not_applicable("No matmul or convolution kernels in the profile.")
    else:
        gpus, na = ctx.tensor_core_gpus()
        if na:
            return na
    device = oldest([g.device for g in gpus])
    units = "matrix cores" if device.is_amd else "Tensor Cores"
    share = matmul_16bit_pct(gpus) or 0.0
    fp32 = float(np.mean([g.matmul_ps(fp16=False) / g.n for g in gpus]))
    step = float(np.mean([g.step_ps for g in gpus]))
    metrics = [
        Metric("fp16_pct", share, "%", "16-bit share of matmul/convolution time"),
        Metric("fp32_eligible_ms_per_step", ms(fp32), "ms", "32-bit matmul/conv time per step"),
        Metric("architecture", device.architecture or "unknown", "", "GPU architecture the advice reads"),
        Metric("bf16", "yes" if device.bf16_tensor_cores or device.matrix_cores else "no", "", f"bf16 on {units}"),
    ]
    applied = ctx.m.applied
    recommendation, snippet = mixed_precision_advice(ctx.framework, device, tf32_on=applied.tf32)
    if share < ctx.t["warning"]:
        bf16 = device.bf16_tensor_cores or device.matrix_cores
        summary = (
            f"Only {fmt_pct(share)} of matmul/convolution time is 16-bit on a GPU with {units} "
            f"({device.architecture or device.name})"
        )
        if applied.tf32:
            summary += (
                f"; its 32-bit matmuls already run in TF32 ({fmt_pct(100 * (applied.tf32_share or 0))} of their time)"
            )
        # TF32, advised beside bf16 for the fp32 matmuls, shows its own saving where it applies
        tf32 = ("tf32",) if bf16 and not device.is_amd and not applied.tf32 and ctx.framework != TENSORFLOW else ()
        return ctx.finding(
            WARNING,
            summary + ".",
            metrics,
            saving_ps=fp32 * (1 - 1 / TENSOR_CORE_SPEEDUP),
            step_ps=step,
            saving_basis=f"32-bit matmul/conv kernels running {TENSOR_CORE_SPEEDUP:.0f}x faster in 16-bit on {units}",
            # bf16 where the GPU runs it on its Tensor Cores (Ampere on) or matrix cores, else fp16
            whatif=lambda: ctx.m.predict("bf16" if bf16 else "fp16"),
            alternatives=tf32,
            recommendation=recommendation,
            snippet=snippet,
        )
    return ctx.finding(
        PASS,
        f"{fmt_pct(share)} of matmul/convolution time is 16-bit.",
        metrics,
        recommendation=recommendation,
        snippet=snippet,
    )


@check(
    id="precision.fp16-no-tensorcore",
    time=OwnTime("no_tensor_core_ms_per_step"),
    table="kernels",
    title="16-bit matmul/conv kernels use Tensor Cores",
    problem="16-bit without Tensor Cores: {no_tensor_core_pct:.1f}% of 16-bit matmul/conv time",
    section="precision",
    order=240,
    needs_gpu=True,
    anchor="#1._use_optimal_fp16_kernels",
    measures="""With mixed precision on, the time of 16-bit (or narrower) matmul/convolution kernels whose
library's naming says they run without Tensor Cores, as a share of 16-bit matmul/convolution time; ops
with dimensions that are not multiples of 8 are left to tensorcore.dims. A kernel the naming table
does not identify counts neither way; above `unknown` of the matmul/conv time the check gives no
verdict.""",
    thresholds={
        "warning": Threshold(10.0, "%", "16-bit matmul/conv time in kernels without Tensor Cores"),
        "unknown": UNKNOWN_MATMUL,
    },
    recommendation="""
Mixed precision is on, but 16-bit GEMM or convolution kernels still do not use Tensor Cores: an
inefficient implementation was chosen. Look the kernels up in the Profile tab's kernel stats, and
check the dimension rules (multiples of 8, see tensorcore.dims). Memory-bound kernels also gain from
16-bit (half the bytes) even without Tensor Cores.""",
)
def fp16_no_tc(ctx: Context) -> Finding:
    gpus, na = ctx.tensor_core_gpus()
    if na:
        return na
    share = matmul_16bit_pct(gpus)
    if share is None or share < ctx.options.threshold("precision.mixed-off.warning", MIXED_ON.default):
        return ctx.not_applicable("Mixed precision is off (see precision.mixed-off).")
    withheld = ctx.unidentified_matmul(gpus, "precision.fp16-no-tensorcore")
    if withheld:
        return withheld
    odd = ctx.m.odd_dim_ops.rows
    odd_ops = {r.op for r in odd}
    t16 = sum(g.matmul_ps(fp16=True) / g.n for g in gpus)
    no_tc = sum(g.matmul_ps(fp16=True, tc=False) / g.n for g in gpus)
    odd_no_tc = sum(r.ms_per_step * 1e9 for r in odd if not r.uses_tensor_cores) * len(gpus)
    own = max(no_tc - odd_no_tc, 0.0)
    frac = pct(no_tc, t16)
    metrics = [
        Metric("no_tensor_core_pct", frac, "%", "16-bit matmul/conv time without Tensor Cores"),
        Metric("no_tensor_core_ms_per_step", ms(no_tc) / len(gpus), "ms", "per step, per GPU"),
    ]
    g = max(gpus, key=lambda g: g.matmul_ps(fp16=True, tc=False))
    every = g.kernel_rows(g.matmul_mask(fp16=True, tc=False))
    rows = [r for r in every if r.op not in odd_ops] or list(every)
    details = [{"kernel": r.kernel, "op": r.op, "ms_per_step": r.ms_per_step} for r in rows]
    status = ctx.level(frac)
    summary = f"{fmt_pct(frac)} of 16-bit matmul/conv time runs in kernels without Tensor Cores"
    if rows:
        summary += f" (e.g. {rows[0].kernel[:80]})"
    return ctx.finding(
        status,
        summary + ".",
        metrics,
        saving_ps=own / len(gpus) * (1 - 1 / TENSOR_CORE_SPEEDUP),
        step_ps=float(np.mean([x.step_ps for x in gpus])),
        saving_basis=f"those kernels (odd-dimension ops aside) running {TENSOR_CORE_SPEEDUP:.0f}x faster on Tensor Cores",
        details=details,
        device_id=g.id,
    )


@check(
    id="precision.dynamic-loss-scale",
    time=OwnTime("loss_scale_ms_per_step"),
    table="ops",
    title="Loss scaling does not stall the GPU",
    problem="Dynamic loss scaling: GPU idle {loss_scale_pct:.1f}% of each step on loss-scaling ops",
    section="precision",
    order=250,
    needs_gpu=True,
    frameworks=(TENSORFLOW, UNKNOWN),
    anchor="#2._dynamic_vs_static_loss_scaling",
    measures="""Per GPU, the time of loss-scaling ops (op names with `loss_scale`) on the host while the GPU
runs nothing, as a share of the step.""",
    thresholds={"warning": Threshold(3.0, "%", "step time in loss-scaling ops on the host while the GPU idles")},
    recommendation="""
Dynamic loss scaling runs conditional ops on the host (finiteness checks, `cond` to update the
scale), which show as gaps between steps. A static loss scale has no such overhead but needs the
right value; in Keras, `LossScaleOptimizer(opt, dynamic=False, initial_scale=...)`. bfloat16 needs no
loss scaling.""",
    snippet="""opt = tf.keras.mixed_precision.LossScaleOptimizer(opt, dynamic=False, initial_scale=2**15)""",
)
def dynamic_loss_scale(ctx: Context) -> Finding:
    m = ctx.m
    ops = m.loss_scale_ops
    tc = m.tensor_core_gpus or m.gpus
    share16 = matmul_16bit_pct(tc) if any(g.matmul.eligible.any() for g in tc) else None
    if not len(ops):
        if share16 is None or share16 < ctx.options.threshold("precision.mixed-off.warning", MIXED_ON.default):
            return ctx.not_applicable("Mixed precision is off: no loss scaling expected.")
        return ctx.finding(
            PASS, "No loss-scaling ops on the host.", [Metric("loss_scale_ops", 0, "", "loss-scaling op executions")]
        )
    loss = m.host_sets.loss_scaling
    per = {g.id: g.exposed_per_step(loss) for g in m.gpus}
    g = ctx.worst({d: float(v.sum()) / m.gpu(d).n for d, v in per.items()})
    mean = float(per[g.id].sum()) / g.n
    share = pct(mean, g.step_ps)
    metrics = [
        Metric("loss_scale_pct", share, "%", "step time in loss-scaling ops while the GPU idles"),
        Metric("loss_scale_ms_per_step", ms(mean), "ms", "per step"),
        Metric(
            "loss_scale_ops_per_step", len(ops) / max(len(m.host_steps), 1), "", "loss-scaling op executions per step"
        ),
    ]
    evidence = []
    for i, s, e in g.gaps[:3]:
        w = m.host_window(ops, s, e, f"after step {int(g.steps.number[i])}: loss-scaling ops, GPU idle")
        if w:
            evidence.append(w)
    status = ctx.level(share)
    if status == PASS:
        status = INFO
    return ctx.finding(
        status,
        f"Loss-scaling ops on the host leave GPU {g.id} idle {ms(mean):.2f} ms per step ({fmt_pct(share)}).",
        metrics,
        saving_ps=g.idle_cause_mean("loss_scaling"),
        step_ps=g.step_ps,
        saving_basis="the GPU's idle time claimed by loss scaling (a static scale has none)",
        evidence=evidence,
        device_id=g.id,
    )


@check(
    id="precision.fp16-softmax",
    time=OwnTime("fp16_softmax_ms_per_step"),
    table="ops",
    title="Softmax outside the loss runs in fp32",
    problem="16-bit softmax: {fp16_softmax_ops} softmax op(s) outside the loss run in 16-bit",
    section="precision",
    order=260,
    needs_gpu=True,
    frameworks=(TENSORFLOW, JAX, UNKNOWN),
    anchor="#1._enable_mixed_precision",
    measures="Softmax ops outside a loss (op names without `loss` or `cross_entropy`) whose kernels are 16-bit.",
    recommendation={
        "default": """
A standalone softmax (not inside a Keras loss) runs in 16-bit, which can hurt numerics and
convergence. Compute it in float32: give the final activation layer `dtype="float32"`, or cast its
input with `tf.cast(logits, tf.float32)`.""",
        "jax": """
A softmax outside the loss runs in 16-bit, which can hurt numerics and convergence. Compute it in
float32: cast its input first (`jax.nn.softmax(logits.astype(jnp.float32))`), or use
`optax.softmax_cross_entropy` on float32 logits for the loss.""",
    },
    snippet={
        "default": """outputs = tf.keras.layers.Activation("softmax", dtype="float32")(logits)""",
        "jax": """probs = jax.nn.softmax(logits.astype(jnp.float32))""",
    },
)
def fp16_softmax(ctx: Context) -> Finding:
    m = ctx.m
    if not any(g.has_16bit for g in m.gpus):
        return ctx.not_applicable("No 16-bit compute.")
    ops: dict[int, float] = {}
    for g in m.gpus:
        for o, ps in g.softmax16.items():
            ops[o] = ops.get(o, 0.0) + ps / g.n
    names = sorted({m.op_name(o) for o in ops})
    metrics = [Metric("fp16_softmax_ops", len(names), "", "16-bit softmax ops outside the loss")]
    if not names:
        return ctx.finding(PASS, "No 16-bit softmax outside the loss.", metrics)
    metrics.append(Metric("fp16_softmax_ms_per_step", ms(sum(ops.values())) / len(m.gpus), "ms", "per step"))
    return ctx.finding(
        WARNING,
        f"{len(names)} softmax op(s) run in 16-bit outside the loss, e.g. {names[0]}.",
        metrics,
        details=[{"op": o} for o in names[:10]],
    )
