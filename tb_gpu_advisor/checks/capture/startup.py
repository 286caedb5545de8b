"""0. Before the checklist, what the captured steps hold that is not the program's steady steps: its
start-up (a warm-up step inside the capture), and CUPTI's range profiler replaying every kernel."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check, on_rocm, table
from tb_gpu_advisor.checks.findings import PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct
from tb_gpu_advisor.measures import KeptCalls

# what each start-up call does, as far as its name tells (model/classify.py's STARTUP_CALL)
DOES = (
    ("StreamCreate", "a library's handle creating its streams"),
    ("ModuleLoad", "a module loaded"),
    ("LibraryLoad", "a library loaded"),
    ("GraphInstantiate", "a graph instantiated"),
    ("Launch", "a kernel's first launch loading its module"),
    ("Malloc", "the allocator filling its cache"),
    ("Free", "the allocator filling its cache"),
    ("HostAlloc", "pinned memory allocated"),
)


def said(calls: KeptCalls, n: int = 4) -> str:
    """ "`cudaDeviceGetStreamPriorityRange` 29927.4 ms in aten::empty_strided (the driver's one-time
    work: ...), ...": the costliest rows."""
    parts = []
    for r in calls.rows[:n]:
        if not r.call:
            parts.append(f"{r.ms_per_step:.1f} ms of the ops' own first calls (outside any runtime call)")
            continue
        what = next((d for k, d in DOES if k in r.call), "")
        if not what and r.longest_ms >= 100:
            what = "the driver's one-time work: the process's first call creates its context"
        where = f" in {r.op}" if r.op else ""
        parts.append(f"`{r.call}` {r.ms_per_step:.1f} ms{where}" + (f" ({what})" if what else ""))
    return ", ".join(parts)


@check(
    id="capture.warmup",
    time=OwnTime("startup_ms_per_step"),
    title="The captured steps hold no start-up work",
    problem="Warm-up in the capture: {startup_pct:.0f}% of the captured step is the program's start-up",
    section="capture",
    order=96,
    anchor="#overview",
    measures="""The host's start-up work inside the steps the step graph holds: the driver's context, stream
and module creation (`cudaStreamCreate*`, `cuModuleLoad*`, ...), any other runtime call that neither
launches, copies, waits nor allocates and takes 5 ms or more (the process's first call creates the context
in it), a kernel launch of 5 ms or more while the GPU has nothing queued (its module loaded), and in a
warm-up step (one whose start-up work is 5% of it or more) all its host time inside ops (first calls) and
its allocator calls (the caching allocator filling its cache). A process does this once: the saving is the
step re-timed without it (docs/whatif.md, `warmup`), the step a capture after the warm-up measures, not a
faster program; no compiler, CUDA graph or fusion removes it.""",
    thresholds={"warning": Threshold(5.0, "%", "start-up work, share of the captured step")},
    recommendation={
        "default": """
The capture holds the program's start-up: the driver creating its context and streams, loading
modules as kernels first launch, the allocators filling their caches. A process does this once, so
these steps are not the program's steady steps, and nothing else in this report can be read from
them. Capture steps after the first few (`profile_batch=(10, 15)` in Keras' TensorBoard callback, or
`tf.profiler.experimental.start` after some steps have run).""",
        "pytorch": """
The capture holds the program's start-up: the CUDA context created in its first call, cuDNN's
and cuBLAS's handles creating their streams, modules loaded as kernels first launch, the caching
allocator filling its cache. A process does this once, so these steps are not the program's steady
steps, and no other saving can be read from them. Profile steps after the warm-up: skip the first
steps with the profiler's schedule (`skip_first`, `wait`, `warmup`), or, in a benchmark that profiles
one call, run it a few times before the profiler starts.""",
        "jax": """
The capture holds the program's start-up: the driver's context and streams, modules loaded as kernels
first launch. A process does this once (and JAX compiles each function on its first call). Trace steps
after the first few: start `jax.profiler.trace` once a few steps have run.""",
    },
    snippet={
        "default": """callbacks = [tf.keras.callbacks.TensorBoard(log_dir="logs", profile_batch=(10, 15))]""",
        "pytorch": """with torch.profiler.profile(
        schedule=torch.profiler.schedule(skip_first=10, wait=1, warmup=1, active=3),
        on_trace_ready=torch.profiler.tensorboard_trace_handler("logs")) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()""",
        "jax": """for step in range(5):  # warm up: compile, start up
    state = train_step(state, next(batches))
with jax.profiler.trace("logs"):
    for step in range(3):
        state = train_step(state, next(batches))
    jax.block_until_ready(state)""",
    },
)
def warmup(ctx: Context) -> Finding:
    m = ctx.m
    k = m.host_kept
    if k is None:
        return ctx.not_applicable("No steps to read start-up work in.")
    s = k.startup
    share = m.step_share(s.ms_per_step) or 0.0
    metrics = [
        Metric("startup_pct", share, "%", "start-up work, share of the captured step"),
        Metric("startup_ms_per_step", s.ms_per_step, "ms", "start-up work per step, as captured"),
        Metric("warmup_steps", len(k.warmup_steps), "", "warm-up steps"),
    ]
    rec = ROCM if on_rocm(m, s.names) and ctx.framework == "pytorch" else None
    if not s.rows:
        return ctx.finding(PASS, "No start-up work in the steps.", metrics, recommendation=rec)
    steps = ", ".join(map(str, k.warmup_steps[:5])) if k.warmup_steps else ""
    summary = (
        f"Start-up work takes {s.ms_per_step:.2f} ms a step ({fmt_pct(share)} of the captured step"
        + (f"; step{'s' if len(k.warmup_steps) > 1 else ''} {steps} warm-up" if steps else "")
        + f"): {said(s)}."
    )
    status = ctx.level(share)
    return ctx.finding(
        status,
        summary,
        metrics,
        whatif=(lambda: m.predict("warmup")) if status != PASS else None,
        evidence=list(s.windows),
        details=table(s.rows),
        recommendation=rec,
    )


# the same advice in ROCm's words (AMD-AGI/TraceLens's MI250 toy: `hipLaunchKernel` 6.5 ms loading a module)
ROCM = """The capture holds the program's start-up: the HIP context created in its first call, MIOpen's and
rocBLAS's handles creating their streams, code objects loaded as kernels first launch, the caching
allocator filling its cache. A process does this once, so these steps are not the program's steady
steps, and no other saving can be read from them. Profile steps after the warm-up: skip the first
steps with the profiler's schedule (`skip_first`, `wait`, `warmup`), or, in a benchmark that profiles
one call, run it a few times before the profiler starts."""


@check(
    id="capture.range-profiler",
    time=OwnTime("replay_ms_per_step"),
    title="A timing capture, not CUPTI's range profiler",
    problem="CUPTI's range profiler in the capture: {records} kernels replayed for their counters",
    section="capture",
    order=97,
    anchor="#overview",
    measures="""PyTorch's `cuda_profiler_range` records: a capture made with CUPTI's range profiler
(`torch.profiler`'s `experimental_config` with `profiler_metrics`), which replays each kernel inside its
launch call to count its metrics and records the counters, not the kernels. Its launch calls' time is the
replay's; the report's times are the profiler's, so every saving is withheld (docs/whatif.md).""",
    recommendation={
        "pytorch": """
This trace was captured with CUPTI's range profiler (`profiler_metrics` in `torch.profiler`'s
`experimental_config`): each kernel ran several times inside its launch call to read its counters, and
the trace records the counters, not the kernels. It tells what the kernels count (FLOPs, instructions),
not how long anything takes. Capture again without `experimental_config`'s metrics to time the steps,
and keep the range profiler for a separate capture of the counters.""",
        "default": """
This trace was captured with CUPTI's range profiler, which replays each kernel to read its counters:
its times are the profiler's. Capture again with the profiler's default options to time the steps.""",
    },
    snippet={
        "pytorch": """with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:  # no experimental_config
    train_step()""",
    },
    frameworks=("pytorch",),
)
def range_profiler(ctx: Context) -> Finding:
    m = ctx.m
    records = m.range_records
    k = m.host_kept
    replay = k.replay if k is not None else None
    metrics = [
        Metric("records", records, "", "the range profiler's records (one a kernel)"),
        Metric("replay_ms_per_step", replay.ms_per_step if replay else 0.0, "ms", "launch calls' time a step"),
    ]
    if not records:
        if on_rocm(m):
            return ctx.not_applicable(
                "An AMD GPU: PyTorch's traces of ROCm hold no range profiler's records (rocprof counts apart)."
            )
        return ctx.finding(PASS, "No record of CUPTI's range profiler: a timing capture.", metrics)
    summary = f"{records} records of CUPTI's range profiler: the kernels' counters, not the kernels."
    if replay is not None and replay.rows:
        r = replay.rows[0]
        summary += (
            f" Its {replay.calls_per_step:.0f} launch calls a step take {replay.ms_per_step:.2f} ms "
            f"({fmt_pct(m.step_share(replay.ms_per_step))} of the step; {r.longest_ms:.1f} ms the longest), each "
            "replaying its kernel: the trace's times are the profiler's, so no saving is stated."
        )
    return ctx.finding(
        WARNING,
        summary,
        metrics,
        evidence=list(replay.windows) if replay is not None else None,
    )
