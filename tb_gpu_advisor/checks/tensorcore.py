"""3. One GPU: kernel efficiency (guide 1.2.3): Tensor Cores and matmul dimensions."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import (
    TABLE_ROWS,
    UNKNOWN_MATMUL,
    Context,
    OwnTime,
    Threshold,
    amd_not_judged,
    check,
    table,
)
from tb_gpu_advisor.checks.findings import PASS, Finding, Metric
from tb_gpu_advisor.checks.texts import MIXED_ON, TENSOR_CORE_SPEEDUP, oldest, tensor_core_advice
from tb_gpu_advisor.common.units import fmt_pct, ms, pct


@check(
    id="tensorcore.unused",
    time=OwnTime("no_tensor_core_ms_per_step"),
    table="kernels",
    title="Tensor Cores used by matmul and convolution kernels",
    problem="Tensor Cores unused: {no_tensor_core_pct:.1f}% of device compute in matmul/conv kernels without them",
    section="kernels",
    order=200,
    needs_gpu=True,
    anchor="#1._utilize_tensor_cores",
    measures="""On GPUs with Tensor Cores, the time of kernels of Tensor-Core-eligible ops (matmul,
convolution, batch matmul, einsum, cuDNN RNN; kernels no op claims count by their GEMM/conv name, and
the GEMM, convolution and attention kernels the kernel naming table knows) whose library's naming says
they run without Tensor Cores, as a share of device compute. A kernel the naming table does not
identify counts neither way; when such kernels hold more than `unknown` of the matmul/conv time, the
check gives no verdict. FP8 kernels are a precision of their own, never 32-bit. Each saving is counted
once: 16-bit kernels are tensorcore.dims' and precision.fp16-no-tensorcore's, 32-bit ones
precision.mixed-off's when it fires (mixed precision off) and this check's otherwise.""",
    thresholds={
        "warning": Threshold(10.0, "%", "device compute in eligible kernels not using Tensor Cores"),
        "unknown": UNKNOWN_MATMUL,
    },
    recommendation={
        "default": """
Matmul and convolution kernels that could run on Tensor Cores do not. Tensor Cores need 16-bit
inputs (turn on mixed precision, see precision.mixed-off) and dimensions that are multiples of 8 (16
for int8), such as batch size, units and channels. cuDNN 7.6.3 and later pads convolution dimensions
by itself; GEMM dimensions you must pad yourself.""",
        "pytorch": """
Matmul and convolution kernels that could run on Tensor Cores do not. Run them in 16-bit with
`torch.autocast("cuda", dtype=torch.bfloat16)` (see precision.mixed-off), keep dimensions multiples of
8, and for fp32 matmuls allow TF32 on Ampere and newer (`torch.backends.cuda.matmul.allow_tf32 = True`,
`torch.backends.cudnn.allow_tf32 = True`). For convolutions, `channels_last` memory format helps cuDNN
pick Tensor Core kernels.""",
    },
)
def tensorcore_unused(ctx: Context) -> Finding:
    gpus, na = ctx.tensor_core_gpus()
    if na:
        return na
    withheld = ctx.unidentified_matmul(gpus, "tensorcore.unused")
    if withheld:
        return withheld
    no_tc = sum(g.matmul_ps(tc=False) / g.n for g in gpus)
    no_tc32 = sum(g.matmul_ps(fp16=False, tc=False) / g.n for g in gpus)
    eligible = sum(g.matmul_ps() / g.n for g in gpus)
    on_tc = sum(g.matmul_ps(tc=True) / g.n for g in gpus)
    unknown = sum(g.matmul_unknown_ps() / g.n for g in gpus)
    compute = sum(g.compute_ps / g.n for g in gpus)
    share = pct(no_tc, compute)
    metrics = [
        Metric("no_tensor_core_pct", share, "%", "device compute in eligible kernels without Tensor Cores"),
        Metric("no_tensor_core_ms_per_step", ms(no_tc) / len(gpus), "ms", "per step, per GPU"),
        Metric("eligible_tc_pct", pct(on_tc, eligible), "%", "eligible kernel time on Tensor Cores"),
        Metric(
            "unidentified_pct", pct(unknown, eligible), "%", "eligible kernel time the naming table does not identify"
        ),
    ]
    g = max(gpus, key=lambda g: g.matmul_ps(tc=False))
    details = g.kernel_rows(g.matmul_mask(tc=False))
    w = g.longest_kernel(g.matmul_mask(tc=False), "without Tensor Cores")
    recommendation = tensor_core_advice(ctx.framework, oldest([x.device for x in gpus]), ctx.m.applied.channels_last)
    if no_tc <= 0:
        return ctx.finding(PASS, "Every matmul/convolution kernel uses Tensor Cores.", metrics)
    summary = f"{fmt_pct(share)} of device compute is matmul/convolution kernels that do not use Tensor Cores"
    if details:
        summary += f"; largest: {details[0].kernel[:80]} ({details[0].precision}, {details[0].ms_per_step:.2f} ms/step)"
    summary += f"; {fmt_pct(pct(no_tc32, no_tc))} of it is 32-bit"
    mixed_on = pct(sum(x.matmul_ps(fp16=True) for x in gpus), sum(x.matmul_ps() for x in gpus)) or 0.0
    if mixed_on < ctx.options.threshold("precision.mixed-off.warning", MIXED_ON.default):
        return ctx.finding(
            ctx.level(share),
            summary + " (the saving is precision.mixed-off's).",
            metrics,
            evidence=[w] if w else [],
            details=table(details),
            device_id=g.id,
            recommendation=recommendation,
        )
    step = sum(x.step_ps for x in gpus) / len(gpus)
    return ctx.finding(
        ctx.level(share),
        summary + ".",
        metrics,
        saving_ps=no_tc32 / len(gpus) * (1 - 1 / TENSOR_CORE_SPEEDUP),
        step_ps=step,
        saving_basis=f"32-bit matmul/conv kernels running {TENSOR_CORE_SPEEDUP:.0f}x faster "
        "on Tensor Cores (16-bit ones are tensorcore.dims' and precision.fp16-no-tensorcore's)",
        whatif=(lambda: ctx.m.predict("tf32")) if all(x.device.bf16_tensor_cores for x in gpus) else None,
        evidence=[w] if w else [],
        details=table(details),
        device_id=g.id,
        recommendation=recommendation,
    )


# On an H100 (tests/data/gpu) an fp16 MLP 4 short of aligned fell back from cuBLAS's Hopper GEMMs to
# Ampere-style `cutlass_80_tensorop_..._align2` ones: 259 TFLOP/s against 809 aligned (3.1x); the
# saving takes 2x, a floor for shapes and libraries not measured
HOPPER_ALIGNED_SPEEDUP = 2.0


@check(
    id="tensorcore.dims",
    time=TABLE_ROWS,
    table="ops",
    title="16-bit matmul dimensions are multiples of 8",
    problem="Odd dimensions: {ops_not_multiple_of_8} 16-bit matmul/conv op(s) not multiples of 8",
    section="kernels",
    order=210,
    needs_gpu=True,
    anchor="#1._utilize_tensor_cores",
    measures="""The shapes of 16-bit matmul and convolution ops (from the ops' shape annotations): matrix
dimensions, and convolution channels, that are not multiples of 8 (16 for int8), with the time of their
kernels as a share of device compute and the padded shape.""",
    thresholds={"warning": Threshold(1.0, "%", "device compute in 16-bit ops with dimensions not multiples of 8")},
    recommendation="""
These 16-bit matmul or convolution ops have dimensions that are not multiples of 8 (16 for int8), so
their kernels cannot use the fast Tensor Core paths: older GPUs and libraries fall back to kernels
without Tensor Cores, newer ones to Tensor Core kernels that read narrowly aligned data. Pad the
dimensions (units, features, vocabulary, batch) up to the next multiple of 8. cuDNN 7.6.3 and later
pads convolution channels by itself.""",
    snippet="units = -(-units // 8) * 8  # round up to a multiple of 8",
)
def tensorcore_dims(ctx: Context) -> Finding:
    m = ctx.m
    if m.gpus and all(g.device.is_amd for g in m.gpus):
        return ctx.not_applicable(amd_not_judged(m.gpus[0].device))
    if not any(g.matmul_mask(fp16=True).any() for g in m.gpus):
        return ctx.not_applicable("No 16-bit matmul or convolution ops.")
    with_shape, rows = m.odd_dim_ops.with_shape, m.odd_dim_ops.rows
    if not with_shape:
        return ctx.not_applicable("The profile has no shape annotations on the 16-bit matmul/convolution ops.")
    compute = sum(g.compute_ps / g.n for g in m.gpus) / len(m.gpus)
    bad_ms = sum(r.ms_per_step for r in rows)
    share = pct(bad_ms * 1e9, compute)
    metrics = [
        Metric("ops_checked", len(with_shape), "", "16-bit matmul/conv ops with shapes"),
        Metric("ops_not_multiple_of_8", len(rows), "", "ops with dimensions not multiples of 8"),
        Metric("affected_pct", share, "%", "device compute in those ops"),
    ]
    if not rows:
        return ctx.finding(
            PASS, f"All {len(with_shape)} 16-bit matmul/conv ops have dimensions in multiples of 8.", metrics
        )
    not_tc = sum(r.ms_per_step for r in rows if not r.uses_tensor_cores)
    tc = bad_ms - not_tc
    summary = (
        f"{len(rows)} 16-bit op(s) have dimensions not divisible by 8 ({fmt_pct(share)} of device compute); "
        f"e.g. {rows[0].op} {rows[0].shape} -> pad to {rows[0].padded}."
    )
    hopper = all(g.device.compute_capability is not None and g.device.compute_capability >= (9, 0) for g in m.gpus)
    basis = f"those ops' kernels running {TENSOR_CORE_SPEEDUP:.0f}x faster on Tensor Cores once padded"
    saving = not_tc * (1 - 1 / TENSOR_CORE_SPEEDUP)
    if tc > 0:
        summary += (
            f" Their kernels use Tensor Cores ({fmt_pct(pct(tc, bad_ms))} of their time), but the ones for "
            "narrowly aligned data: the fastest need each dimension a multiple of 8."
        )
        if hopper:  # measured on Hopper only: elsewhere the gap is not known here
            saving += tc * (1 - 1 / HOPPER_ALIGNED_SPEEDUP)
            basis += (
                f", and Tensor Core kernels {HOPPER_ALIGNED_SPEEDUP:.0f}x faster on aligned data "
                "(3.1x measured on an H100)"
            )
    return ctx.finding(
        ctx.level(share),
        summary,
        metrics,
        saving_ps=saving * 1e9,
        step_ps=float(sum(g.step_ps for g in m.gpus) / len(m.gpus)),
        saving_basis=basis,
        whatif=lambda: m.predict("padding"),
        details=table(rows[:10]),
    )
