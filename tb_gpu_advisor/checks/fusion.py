"""3. One GPU: kernel efficiency (guide 1.2.3): element-wise chains XLA would fuse."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import JAX, PYTORCH


@check(
    id="fusion.xla-candidates",
    time=OwnTime("chain_ms_per_step"),
    table="kernels",
    title="No long chains of small element-wise kernels",
    problem="Fusion candidates: {chain_pct:.1f}% of device compute in chains of small element-wise kernels",
    section="kernels",
    order=220,
    needs_gpu=True,
    anchor="#2._fuse_operations",
    measures="""Runs of at least `min_chain` consecutive element-wise kernels (by op type or kernel name) of
at most `max_kernel_us` each on one stream, their time as a share of device compute; and whether the
profile shows XLA (in a PyTorch trace, torch.compile).""",
    links={"pytorch": "https://pytorch.org/docs/stable/torch.compiler.html"},
    thresholds={
        "max_kernel_us": Threshold(40.0, "µs", "an element-wise kernel at or below this is small"),
        "min_chain": Threshold(3.0, "kernels", "consecutive small element-wise kernels that make a chain"),
        "warning": Threshold(20.0, "%", "device compute in chains"),
    },
    recommendation={
        "default": """
Much device time goes to chains of small element-wise kernels, each reading and writing memory and
each launched separately. XLA fuses such chains into single kernels: compile the step with
`tf.function(jit_compile=True)` or turn on auto-clustering.""",
        "pytorch": """
Much device time goes to chains of small element-wise kernels, each reading and writing memory and
each launched separately. `torch.compile` fuses such chains into single Triton kernels.""",
        "jax": """
Much device time goes to chains of small element-wise kernels, each reading and writing memory and
each launched separately. XLA fuses what one `jax.jit` sees: jit the whole step rather than pieces of
it called from Python, and keep element-wise work inside it.""",
    },
    snippet={
        "default": """@tf.function(jit_compile=True)
def train_step(x, y):
    ...""",
        "pytorch": "model = torch.compile(model)",
        "jax": "train_step = jax.jit(train_step)  # the whole step, so XLA fuses across it",
    },
)
def xla_candidates(ctx: Context) -> Finding:
    m = ctx.m
    max_ps = ctx.t["max_kernel_us"] * 1e6
    min_chain = int(ctx.t["min_chain"])
    per = {g.id: g.elementwise_chains(max_ps, min_chain) for g in m.gpus}
    chain = sum(v.ps / m.gpu(d).n for d, v in per.items())
    chains = sum(v.chains / m.gpu(d).n for d, v in per.items()) / len(per)
    compute = sum(g.compute_ps / g.n for g in m.gpus)
    share = pct(chain, compute)
    fused = m.has_xla or m.applied.compiled or m.framework == JAX
    compiler = "torch.compile" if m.framework == PYTORCH else "XLA"
    metrics = [
        Metric("chain_pct", share, "%", "device compute in chains of small element-wise kernels"),
        Metric("chains_per_step", chains, "", "chains per step, per GPU"),
        Metric("chain_ms_per_step", ms(chain) / len(per), "ms", "per step, per GPU"),
        Metric("xla", "on" if fused else "off", "", f"{compiler} seen in the profile"),
    ]
    best = max(per.values(), key=lambda v: v.ps)
    evidence = [best.window] if best.window else []
    summary = f"{fmt_pct(share)} of device compute in {chains:.1f} chains per step of small element-wise kernels"
    if fused:
        return ctx.finding(PASS, summary + f"; {compiler} is already on.", metrics, evidence=evidence)
    status = WARNING if (share or 0) >= ctx.t["warning"] else PASS
    return ctx.finding(status, summary + f"; no sign of {compiler}.", metrics, evidence=evidence)
