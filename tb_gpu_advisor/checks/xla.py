"""4. XLA (guide 1.3)."""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import ms
from tb_gpu_advisor.measures import JAX, PYTORCH


@check(
    id="xla.off",
    title={"default": "XLA compilation considered", "pytorch": "torch.compile considered"},
    problem={"default": "XLA off: no XLA in the profile", "pytorch": "Eager mode: no torch.compile in the trace"},
    section="precision",
    order=270,
    anchor="#2._enable_xla_with_tffunctionjit_compiletrue_or_auto-clustering",
    measures="""XLA modules, HLO ops or XLA-compiled kernels anywhere in the profile (in a PyTorch trace,
torch.compile's Triton kernels, compiled regions or compilations). JAX always compiles with XLA.
Without them, the step re-timed as compiled code would run it (docs/whatif.md, `compile`): a warning
where that saves the threshold's share of the step. A step already replayed as CUDA graphs, or run
under TorchScript, is told so, and what compiling would add to it.""",
    thresholds={"warning": Threshold(10.0, "%", "the simulated saving of compiling, share of the step")},
    links={"pytorch": "https://pytorch.org/docs/stable/torch.compiler.html"},
    recommendation={
        "default": """
No sign of XLA in the profile. XLA fuses operations into fewer, larger kernels and often speeds up
training: compile the step with `tf.function(jit_compile=True)`, or turn on auto-clustering
(`tf.config.optimizer.set_jit(True)` or `TF_XLA_FLAGS=--tf_xla_auto_jit=2`). The global JIT level is
-1 (off), 1 or 2; higher is more aggressive, may reduce parallelism and use more memory: use 1 under
memory pressure.""",
        "pytorch": """
The model runs op by op (eager PyTorch). `torch.compile(model)` captures it into graphs and fuses
element-wise kernels (Triton), and `mode="reduce-overhead"` replays whole steps as GPU graphs; measure
it against the eager step time, one change at a time.""",
    },
    snippet={
        "default": """@tf.function(jit_compile=True)
def train_step(x, y):
    ...""",
        "pytorch": "model = torch.compile(model)",
    },
)
def xla_off(ctx: Context) -> Finding:
    m = ctx.m
    if m.framework == JAX:
        return ctx.not_applicable("JAX compiles every jitted function with XLA.")
    applied = m.applied
    if m.framework == PYTORCH and applied.compiled:
        # Inductor's Triton kernels, or (a CPU build's compiled code has none) its compiled regions and
        # compilations
        return ctx.finding(
            PASS,
            "torch.compile in the trace (its compiled regions or Triton kernels).",
            [Metric("xla", "on", "", "torch.compile")],
        )
    if m.has_xla:
        return ctx.finding(PASS, "XLA-compiled kernels in the profile.", [Metric("xla", "on", "", "XLA")])
    # what compiling would save, simulated (element-wise chains fused, compiled launches, and for
    # torch.compile its matmul padding): a saving that passes the threshold makes it a warning
    pr = m.predict("compile")
    share = 100.0 * pr.saving_ps / pr.step_ps if pr is not None and pr.step_ps > 0 else 0.0
    status = WARNING if share >= ctx.t["warning"] else INFO
    if m.framework == PYTORCH:
        metrics = [
            Metric("xla", "off", "", "torch.compile"),
            Metric("compile_saving_pct", share, "%", "simulated saving"),
        ]
        if applied.graphed:  # its kernels are launched in few calls already: compiling would fuse them
            return ctx.finding(
                status,
                f"No torch.compile in the trace, but {applied.graphs_said()}: compiling would fuse kernels, "
                "not save launches.",
                metrics,
                whatif=pr,
                title="CUDA graphs without torch.compile: kernels not fused",
                recommendation=GRAPHED_COMPILE,
                snippet=GRAPHED_COMPILE_SNIPPET,
            )
        if applied.torchscript:
            return ctx.finding(
                status,
                "No torch.compile in the trace: the model runs under TorchScript (`torch.jit`), whose graph "
                "executor launches its ops one by one.",
                metrics,
                whatif=pr,
                alternatives=("reduce-overhead",),
                title="TorchScript, no torch.compile in the trace",
                recommendation=TORCHSCRIPT_COMPILE,
            )
        # the advice offers `mode="reduce-overhead"` beside compiling, simulated as it runs (graph/fixes/reduce_overhead.py)
        return ctx.finding(
            status,
            "No torch.compile in the trace: the model runs op by op.",
            metrics,
            whatif=pr,
            alternatives=("reduce-overhead",),
        )
    return ctx.finding(
        status,
        "No XLA modules, HLO ops or fused kernels in the profile.",
        [Metric("xla", "off", "", "XLA"), Metric("compile_saving_pct", share, "%", "simulated saving")],
        whatif=pr,
    )


# CUDA graphs without torch.compile (gpt2_b1_graphed: 97% of the kernels replayed from two graphs):
# compiling fuses kernels inside what is replayed, and that is all it can add
GRAPHED_COMPILE = """
The step already replays as CUDA graphs, so launching its kernels costs the host little; what
`torch.compile` would add is fusion: fewer, larger kernels inside the graphs (the what-if says what that
saves). Compile the module before it is graphed, or let `torch.compile(model, mode="reduce-overhead")`
do both, and measure it against the graphed step."""
GRAPHED_COMPILE_SNIPPET = (
    'model = torch.compile(model, mode="reduce-overhead")  # fused kernels, replayed as CUDA graphs'
)
# TorchScript (two_ranks_of_128: `DifferentiableGraphBackward`): torch.compile is its successor
TORCHSCRIPT_COMPILE = """
The model runs under TorchScript (`torch.jit.script` or `trace`), which PyTorch no longer develops; its
graph executor still launches the ops one by one. `torch.compile(model)` captures the model into graphs
and fuses element-wise kernels (Triton), and `mode="reduce-overhead"` replays whole steps as GPU graphs;
compile the eager module (not the scripted one) and measure it against this step."""


@check(
    id="xla.recompile",
    time=OwnTime("compile_ms_per_step"),
    table="ops",
    title={"default": "No repeated XLA compilation", "pytorch": "No repeated torch.compile compilation"},
    problem={
        "default": "Recompiling: XLA compiled {compilations} times during the capture",
        "pytorch": "Recompiling: torch.compile compiled {compilations} times during the capture",
    },
    section="precision",
    order=280,
    anchor="#2._enable_xla_with_tffunctionjit_compiletrue_or_auto-clustering",
    measures="""XLA (or JAX, or torch.compile) compilations during the capture, nested compile events on one
thread counted once, and their time per step. The saving is the GPU's idle time they claim.""",
    thresholds={
        "max_compiles": Threshold(1.0, "compilations", "compilations in the capture before it counts as recompiling")
    },
    links={"pytorch": "https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html"},
    recommendation={
        "default": """
XLA compiled again during the capture. XLA compiles a program for each distinct input shape, so
variable shapes (sequence lengths, a smaller last batch) trigger recompilation. Pad or bucket inputs
to a few fixed shapes (`padded_batch`, `bucket_by_sequence_length`, `drop_remainder=True`).""",
        "jax": """
JAX compiled again during the capture: `jax.jit` compiles once per distinct input shape and static
argument, so variable shapes (sequence lengths, a smaller last batch) trigger recompilation. Pad or
bucket inputs to a few fixed shapes, and mark only truly static arguments with `static_argnums`.""",
        "pytorch": """
torch.compile recompiled during the capture, usually for new input shapes. Pad or bucket shapes, or
compile with `dynamic=True`; `TORCH_LOGS=recompiles` says why each recompilation happened.""",
    },
    snippet={
        "default": """dataset = dataset.padded_batch(batch_size, padded_shapes=([max_len], []), drop_remainder=True)""",
        "jax": """batch = jnp.pad(batch, ((0, 0), (0, max_len - batch.shape[1])))  # one shape, one compilation""",
        "pytorch": "model = torch.compile(model, dynamic=True)",
    },
)
def xla_recompile(ctx: Context) -> Finding:
    m = ctx.m
    rows = m.compilations
    compiler = "torch.compile" if m.framework == PYTORCH else "XLA"
    if not rows and not m.has_xla and not m.applied.compiled:
        return ctx.not_applicable(f"{compiler} is not used.")
    n = max(len(m.host_steps), 1)
    total = sum(w.end_ps - w.start_ps for w in rows)
    metrics = [
        Metric("compilations", len(rows), "", f"{compiler} compilations in the capture"),
        Metric("compile_ms_per_step", ms(total) / n, "ms", "compile time per step"),
    ]
    evidence = [
        dataclasses.replace(w, label=f"{compiler} compilation {i + 1} ({ms(w.end_ps - w.start_ps):.1f} ms)")
        for i, w in enumerate(rows[:5])
    ]
    if len(rows) > ctx.t["max_compiles"]:
        saving, step = None, None
        if m.gpus:
            g = max(m.gpus, key=lambda g: g.idle_cause_mean("compilation"))
            saving, step = g.idle_cause_mean("compilation"), g.step_ps
        return ctx.finding(
            WARNING,
            f"{compiler} compiled {len(rows)} times during the capture ({ms(total):.1f} ms in all).",
            metrics,
            saving_ps=saving if saving is not None else m.compile_in_steps_ps,
            step_ps=step,
            saving_basis="the GPU's idle time claimed by compilation, if shapes stayed fixed",
            evidence=evidence,
        )
    return ctx.finding(PASS, f"{len(rows)} {compiler} compilation(s) in the capture.", metrics, evidence=evidence)
