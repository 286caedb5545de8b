"""3. One GPU: kernel efficiency: convolutions in the memory layout cuDNN's Tensor Core kernels want."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, amd_not_judged, check, table
from tb_gpu_advisor.checks.findings import PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct


@check(
    id="layout.channels-last",
    title="Convolutions in NHWC",
    problem="Layout changes: {layout_pct:.1f}% of device compute converting NCHW <-> NHWC around convolutions",
    section="kernels",
    order=212,
    needs_gpu=True,
    anchor="#1._utilize_tensor_cores",
    measures="""cuDNN's NCHW/NHWC layout kernels' share of device compute.""",
    links={"pytorch": "https://pytorch.org/tutorials/intermediate/memory_format_tutorial.html"},
    thresholds={"warning": Threshold(3.0, "%", "device compute in layout changes")},
    recommendation={
        "default": """Keep convolutions' tensors in NHWC.""",
        "pytorch": """
cuDNN's Tensor Core convolutions run in NHWC (channels last) and convert the model's NCHW tensors
around each one: put the model and its inputs in `torch.channels_last` memory format. A change of its
own, apart from mixed precision.""",
    },
    snippet={
        "pytorch": "model = model.to(memory_format=torch.channels_last)\nx = x.to(memory_format=torch.channels_last)",
    },
)
def channels_last(ctx: Context) -> Finding:
    m = ctx.m
    if m.gpus and all(g.device.is_amd for g in m.gpus):
        return ctx.not_applicable(amd_not_judged(m.gpus[0].device))
    gpus = [g for g in m.gpus if g.matmul.eligible.any()]
    if not gpus:
        return ctx.not_applicable("No matmul or convolution kernels in the profile.")
    if not any(g.layout_changes.any() for g in gpus):
        return ctx.not_applicable("No cuDNN layout changes.")
    layout = sum(float(g.kernels.dur_ps[g.layout_changes].sum()) / g.n for g in gpus) / len(gpus)
    compute = sum(g.compute_ps / g.n for g in gpus) / len(gpus)
    share = pct(layout, compute)
    kernels = sum(int(g.layout_changes.sum()) / g.n for g in gpus) / len(gpus)
    metrics = [
        Metric("layout_pct", share, "%", "device compute in cuDNN's layout changes"),
        Metric("layout_ms_per_step", ms(layout), "ms", "per step, per GPU"),
        Metric("layout_kernels_per_step", kernels, "", "layout-change kernels a step"),
    ]
    summary = f"{fmt_pct(share)} of device compute ({ms(layout):.2f} ms a step) in {kernels:.0f} layout changes a step"
    if (share or 0.0) < ctx.t["warning"]:
        return ctx.finding(PASS, summary + ".", metrics)
    g = max(gpus, key=lambda g: float(g.kernels.dur_ps[g.layout_changes].sum()))
    w = g.longest_kernel(g.layout_changes, "a layout change")
    return ctx.finding(
        WARNING,
        summary + ": cuDNN converts NCHW tensors to NHWC and back around the convolutions.",
        metrics,
        saving_ps=layout,
        step_ps=g.step_ps,
        saving_basis="the layout changes' time, if the tensors stayed in NHWC",
        whatif=lambda: m.predict("channels_last"),
        evidence=[w] if w else [],
        details=table(g.kernel_rows(g.layout_changes)),
    )
