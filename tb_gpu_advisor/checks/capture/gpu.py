"""0. Before the checklist, the GPU's trace: is there one, with the runtime calls that launched its
kernels, and did the profiler keep every GPU event."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric

CPU_ONLY = "CPU-only capture: no GPU in this profile"
TRACE_MISSING = "GPU trace missing: the job used a GPU but the profile has none"
NO_KERNELS = "GPU planes but no kernels"
TPU = "TPU capture: not covered by the GPU Advisor"
CUPTI = """
The job used a GPU (its host threads, allocators or CUDA calls show it), but the profile has no GPU
activity: the profiler could not load CUPTI. Make sure the CUDA toolkit's `extras/CUPTI/lib64` is on
`LD_LIBRARY_PATH`, that `tf.config.list_physical_devices('GPU')` lists the GPU, and capture again (for
example with Keras' `TensorBoard(profile_batch=(10, 15))` callback)."""

RANGE_PROFILER = """
The GPU's activity was not recorded because the profiler counted instead: with CUPTI's range profiler
(`profiler_metrics` in `torch.profiler`'s `experimental_config`) the trace holds each kernel's counters,
not its run. Capture again without `experimental_config`'s metrics to record the kernels."""


@check(
    id="capture.no-gpu",
    title="GPU activity captured",
    problem="{what}",
    variants=(CPU_ONLY, TRACE_MISSING, NO_KERNELS, TPU),
    section="capture",
    order=10,
    anchor="#overview",
    measures="""GPU planes in the profile, and the active ones among them (with kernels). Without any, the
host is checked for signs of GPU work (GPU threads, GPU allocators, CUDA API calls) to tell a CPU-only
run from a GPU job whose GPU trace was lost.""",
    recommendation={
        "default": CUPTI,
        "jax": """
This JAX program ran on the CPU backend, so only the host-side checks apply. To analyse GPU work,
install a CUDA build of jaxlib (`pip install -U "jax[cuda12]"`), check that `jax.devices()` lists the
GPUs, and capture again with `jax.profiler.trace(logdir)`.""",
        "pytorch": """
The trace has no GPU kernels. If the model ran on a GPU, profile with GPU activities on (PyTorch
names them `ProfilerActivity.CUDA` in ROCm builds too):
`torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], ...)`.""",
    },
    snippet={
        "default": """export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$LD_LIBRARY_PATH
python -c "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"""",
        "jax": """python -c "import jax; print(jax.devices())\"""",
        "pytorch": """with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    train_step()""",
    },
)
def no_gpu(ctx: Context) -> Finding:
    m = ctx.m
    active, copy_only = m.gpu_ids, m.copy_only_gpus
    metrics = [
        Metric("gpus", len(m.devices), "", "GPU planes"),
        Metric("active_gpus", len(active), "", "GPUs with kernels"),
    ]
    if active:
        return ctx.finding(PASS, f"{len(active)} GPU(s) with kernels.", metrics)
    p_tpu = m.tpu_planes
    if p_tpu and not m.devices:
        metrics.append(Metric("what", TPU, "", ""))
        return ctx.finding(
            INFO,
            f"This is a TPU capture ({p_tpu} TPU device planes). The GPU Advisor checks GPU "
            "programs; open the Profile tab's overview and TPU tools for it.",
            metrics,
            recommendation="Open the Profile tab: its overview page, trace viewer and TPU tools cover TPU captures.",
        )
    if m.devices:
        what = f"{len(m.devices)} GPU plane(s), but no kernel on any of them" + (
            f" (GPU {', '.join(map(str, copy_only))} only copy)" if copy_only else ""
        )
        metrics.append(Metric("what", NO_KERNELS, "", ""))
        if m.range_records:  # CUPTI loaded, counting: its range profiler records counters, not kernels
            return ctx.finding(
                WARNING,
                f"{what}: the trace was captured with CUPTI's range profiler, whose {m.range_records} records hold "
                "the kernels' counters, not the kernels (capture.range-profiler).",
                metrics,
                recommendation=RANGE_PROFILER,
                snippet="",
            )
        return ctx.finding(WARNING, what + ".", metrics, recommendation=CUPTI if ctx.framework != "jax" else None)
    if m.gpu_signs:
        metrics.append(Metric("what", TRACE_MISSING, "", ""))
        return ctx.finding(
            WARNING,
            "No GPU plane, but the host shows GPU work (GPU threads, allocators or CUDA "
            "calls): the GPU trace was not captured.",
            metrics,
            recommendation=CUPTI,
        )
    metrics.append(Metric("what", CPU_ONLY, "", ""))
    rec = None
    if ctx.framework not in ("jax", "pytorch"):
        rec = (
            "This run used no GPU, so only the host-side checks apply. To analyse a GPU job, capture it on the "
            "machine with the GPU (the same Keras callback or `tf.profiler.experimental.start(logdir)`)."
        )
    return ctx.finding(
        INFO, "No GPU in this profile: a CPU-only run. The host-side checks still apply.", metrics, recommendation=rec
    )


@check(
    id="capture.no-runtime",
    title="Runtime launch events captured",
    problem="No runtime launch events: kernel launches not seen",
    section="capture",
    order=50,
    anchor="#overview",
    measures="""The host's kernel launch calls (`cudaLaunchKernel` and the like, with the correlation id that
pairs them with their kernels) in a profile with GPU kernels. Without them nothing shows when a kernel
was launched, so the launch checks (kernels.launch-bound, host.thread-contention) cannot tell
(multigpu.launch-skew compares the GPUs' first kernels and still can). HIP's launch calls
(`hipLaunchKernel`, `hipExtModuleLaunchKernel`, ...) are paired as CUDA's are.""",
    recommendation={
        "default": """
The profile has GPU kernels but none of the CUDA calls that launched them. Capture with the profiler's
default options (its GPU tracer records the CUDA runtime calls with the kernels), and analyse the
capture as written, not an export filtered to the GPU's events.""",
        "pytorch": """
The trace has GPU kernels but no `cuda_runtime` launch events. Profile the CPU and the GPU together,
`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`, and analyse the trace as
`tensorboard_trace_handler` wrote it, not a copy filtered to the GPU's events.""",
    },
    snippet={
        "default": """tf.profiler.experimental.start("logs")  # default options: host and GPU tracers on
train(steps=5)
tf.profiler.experimental.stop()""",
        "pytorch": """with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA],
                            on_trace_ready=torch.profiler.tensorboard_trace_handler("logs")) as prof:
    train_step()""",
    },
    needs_gpu=True,
)
def no_runtime(ctx: Context) -> Finding:
    launches = len(ctx.m.launch_corr)
    metrics = [Metric("launches", launches, "", "kernel launch calls with a correlation id")]
    if not launches:
        # XLA's thunks (JAX run op by op, with the profiler's default options) carry the correlation id
        # of the kernel they launch though no launch call is recorded: its step graph ties them
        g = ctx.m.step_graph
        if g is not None and g.device_ops:
            return ctx.finding(
                PASS,
                f"{g.device_ops} kernels of the steps tied by correlation id to the host events that launched them.",
                metrics,
            )
        return ctx.finding(
            WARNING,
            "The GPUs ran kernels, but the host shows no launch call: launch delays cannot be measured.",
            metrics,
        )
    return ctx.finding(PASS, f"{launches} kernel launch calls captured.", metrics)


@check(
    id="capture.lost-events",
    title="Every launched kernel is in the trace",
    problem="GPU events lost: {missing_pct:.1f}% of launches have no GPU work in the trace",
    section="capture",
    order=60,
    anchor="#overview",
    measures="""The host's launch calls whose correlation id no GPU event carries, among those started before the
last GPU event started (work launched at the very end may run after the capture stopped) and not
memsets (one of no bytes puts no work on the GPU), and the
profiler's own messages about lost events (XSpace errors and warnings: CUPTI's activity buffer full,
records dropped). When the profiler's buffer fills, it drops GPU events: the GPU then looks idle where
it worked, and the idle-time checks overstate what they find.""",
    thresholds={
        "warning": Threshold(1.0, "%", "launches without their GPU work, share of launches"),
        "critical": Threshold(10.0, "%", "launches without their GPU work, share of launches (most of the trace)"),
    },
    recommendation={
        "default": """
The profiler lost GPU events: its activity buffer filled during the capture. Profile fewer steps at a
time (`profile_batch=(10, 12)` in Keras' TensorBoard callback, or a shorter
`tf.profiler.experimental.start`/`stop` window) so the buffer holds them; the idle time the other checks
report is overstated until then.""",
        "pytorch": """
The profiler lost GPU events: its activity buffer filled during the capture. Profile fewer steps per
cycle (`schedule(wait=1, warmup=1, active=2)`) so the buffer holds them; the idle time the other checks
report is overstated until then.""",
        "jax": """
The profiler lost GPU events: its activity buffer filled during the capture. Trace fewer steps at a
time (a shorter `jax.profiler.trace` block, or `jax.profiler.start_trace`/`stop_trace` around two or
three steps) so the buffer holds them; the idle time the other checks report is overstated until
then.""",
    },
    snippet={
        "default": """callbacks = [tf.keras.callbacks.TensorBoard(log_dir="logs", profile_batch=(10, 12))]""",
        "pytorch": """with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA],
                            schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
                            on_trace_ready=torch.profiler.tensorboard_trace_handler("logs")) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()""",
        "jax": """with jax.profiler.trace("logs"):
    for step in range(3):
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            state = train_step(state, next(batches))
    jax.block_until_ready(state)""",
    },
    needs_gpu=True,
)
def lost_events(ctx: Context) -> Finding:
    lost = ctx.m.lost_gpu_events
    metrics = [
        Metric("missing_pct", round(lost.missing_pct, 3), "%", "launches without their GPU work"),
        Metric("missing", lost.missing, "", "launch calls whose GPU work is not in the trace"),
        Metric("launches", lost.launches, "", "launch calls with a correlation id"),
    ]
    said = f' The profiler says: "{lost.profiler_says[0][:200]}".' if lost.profiler_says else ""
    if not lost.launches and not lost.profiler_says:
        return ctx.not_applicable("No launch calls with a correlation id to pair with GPU events.")
    status = ctx.level(lost.missing_pct)
    if status == PASS and lost.profiler_says:
        status = WARNING
    if status == PASS:
        return ctx.finding(PASS, f"All {lost.launches} launch calls have their GPU work in the trace.", metrics)
    return ctx.finding(
        status,
        f"{lost.missing} of {lost.launches} launch calls ({lost.missing_pct:.1f}%) have no GPU work in the "
        f"trace: the profiler lost GPU events, and the GPU looks idle where it worked.{said}",
        metrics,
        evidence=[lost.first_missing] if lost.first_missing else None,
    )
