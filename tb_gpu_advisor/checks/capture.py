"""0. Before the checklist: is there a GPU trace, are there steps, enough of them, with CUDA
runtime events and op shapes, and did the profiler keep every GPU event; and
`BLINDS`, the checks each capture problem makes unable to tell."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric
from tb_gpu_advisor.measures import SOURCE_DEVICE, SOURCE_FUNCTIONS, SOURCE_GROUPS, SOURCE_HOST, TAIL_SHARE

CPU_ONLY = "CPU-only capture: no GPU in this profile"
TRACE_MISSING = "GPU trace missing: the job used a GPU but the profile has none"
NO_KERNELS = "GPU planes but no kernels"
TPU = "TPU capture: not covered by the GPU Advisor"
WHOLE_CAPTURE = "No step markers: the whole capture is one step"
CUPTI = """
The job used a GPU (its host threads, allocators or CUDA calls show it), but the profile has no GPU
activity: the profiler could not load CUPTI. Make sure the CUDA toolkit's `extras/CUPTI/lib64` is on
`LD_LIBRARY_PATH`, that `tf.config.list_physical_devices('GPU')` lists the GPU, and capture again (for
example with Keras' `TensorBoard(profile_batch=(10, 15))` callback)."""


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
    id="capture.no-steps",
    title="Training steps marked",
    problem="{what}",
    variants=(
        WHOLE_CAPTURE,
        "No host step markers: steps from the GPUs",
        "No step markers: N steps from Keras's step-function calls",
    ),
    section="capture",
    order=20,
    anchor="#overview",
    measures="""Where the steps come from: host step markers (events with a `step_num`), each GPU's saved
`Steps` line, the device events' step groups, Keras's step-function calls, or, failing all of them, the
whole capture as one step.""",
    recommendation={
        "default": """
No step markers were found, so the whole capture is analysed as one step and per-step numbers are
approximate. Keras `Model.fit` marks steps itself when profiled with the TensorBoard callback's
`profile_batch`; in a custom loop, wrap each step in `tf.profiler.experimental.Trace`.""",
        "jax": """
No step markers were found, so the whole capture is analysed as one step. Wrap each step in
`jax.profiler.StepTraceAnnotation("train", step_num=step)`.""",
        "pytorch": """
No `ProfilerStep#N` events were found, so the whole trace is analysed as one step. Call `prof.step()`
at the end of every training step inside the `torch.profiler.profile(schedule=...)` context.""",
    },
    snippet={
        "default": """for step, batch in enumerate(dataset):
    with tf.profiler.experimental.Trace('train', step_num=step, _r=1):
        train_step(batch)""",
        "jax": """for step, batch in enumerate(batches):
    with jax.profiler.StepTraceAnnotation("train", step_num=step):
        state = train_step(state, batch)""",
        "pytorch": """with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=5),
                            on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()""",
    },
)
def no_steps(ctx: Context) -> Finding:
    m = ctx.m
    s = m.steps
    metrics = [Metric("steps", len(s), "", "steps found"), Metric("source", s.source, "", "step source")]
    if s.source == SOURCE_HOST:
        return ctx.finding(PASS, f"{len(s)} steps from host step markers ({s.marker!r}).", metrics)
    if s.source in (SOURCE_DEVICE, SOURCE_GROUPS):
        per = ", ".join(f"GPU {g.id}: {len(g.steps)}" for g in m.gpus)
        where = "each GPU's saved Steps line" if s.source == SOURCE_DEVICE else "the device events' step groups"
        metrics.append(Metric("what", "No host step markers: steps from the GPUs", "", ""))
        return ctx.finding(
            INFO, f"No host step markers; steps from {where} ({per}), each GPU measured in its own.", metrics
        )
    if s.source == SOURCE_FUNCTIONS:
        metrics.append(Metric("what", f"No step markers: {len(s)} steps from Keras's step-function calls", "", ""))
        return ctx.finding(
            INFO,
            f"No step markers: {len(s)} steps taken from the calls of Keras's {s.marker!r} "
            "(one per execution; with steps_per_execution > 1 each holds several steps).",
            metrics,
        )
    metrics.append(Metric("what", WHOLE_CAPTURE, "", ""))
    return ctx.finding(WARNING, "No step markers: the whole capture is analysed as one step.", metrics)


@check(
    id="capture.short",
    title="At least two steps captured",
    problem="Only {steps:.0f} step captured",
    section="capture",
    order=30,
    anchor="#overview",
    measures="""The steps found from step markers (or the GPUs' step lines, or Keras's step-function calls).
With fewer than two there is no step-to-step variation to measure: no gaps between steps, no spread,
and a comparison of two runs cannot tell a change from noise. Not applicable without step markers
(capture.no-steps).""",
    recommendation={
        "default": """
Capture several steps, after the first few: with Keras' TensorBoard callback give a range,
`profile_batch=(10, 15)`; with `tf.profiler.experimental.start(logdir)` run more steps before
`stop()`.""",
        "jax": """
Capture several steps: keep `jax.profiler.trace(logdir)` open over five or more calls of the training
step, each in `jax.profiler.StepTraceAnnotation`.""",
        "pytorch": """
Capture several steps: `torch.profiler.schedule(wait=1, warmup=1, active=5)` profiles five, with
`prof.step()` called at the end of every step.""",
    },
    snippet={
        "default": """tf.keras.callbacks.TensorBoard(log_dir="logs", profile_batch=(10, 15))""",
        "jax": """with jax.profiler.trace("logs"):
    for step in range(5):
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            state = train_step(state, next(batches))""",
        "pytorch": """with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=5),
                            on_trace_ready=torch.profiler.tensorboard_trace_handler("logs")) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()""",
    },
)
def short(ctx: Context) -> Finding:
    s = ctx.m.steps
    if s.source not in (SOURCE_HOST, SOURCE_DEVICE, SOURCE_GROUPS, SOURCE_FUNCTIONS):
        return ctx.not_applicable("No step markers (see capture.no-steps).")
    metrics = [Metric("steps", len(s), "", "steps captured")]
    if len(s) < 2:
        return ctx.finding(
            WARNING,
            f"Only {len(s)} step in the capture: the gaps between steps and the steps' spread cannot be "
            "measured, and a comparison cannot tell a change from noise.",
            metrics,
        )
    return ctx.finding(PASS, f"{len(s)} steps captured.", metrics)


@check(
    id="capture.shapes",
    title="Op input shapes recorded",
    problem="record_shapes off: no op has its input shapes",
    section="capture",
    order=70,
    anchor="#overview",
    measures="""The framework ops of a PyTorch trace that carry their input shapes (`Input Dims`, written only
with `record_shapes=True`). Without them the 16-bit matmul dimension check and the all-reduce size
from the ops' shapes cannot tell.""",
    recommendation="""
Profile with `record_shapes=True`: the trace then carries each op's input shapes, which the matmul
dimension check (tensorcore.dims) and the all-reduce estimate read.""",
    snippet="""with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA],
                            record_shapes=True) as prof:
    train_step()""",
    frameworks=("pytorch",),
)
def shapes(ctx: Context) -> Finding:
    n, with_shape = ctx.m.ops_with_shapes
    if not n:
        return ctx.not_applicable("No framework ops in the trace.")
    metrics = [
        Metric("ops", n, "", "framework ops"),
        Metric("ops_with_shapes", with_shape, "", "ops with input shapes"),
    ]
    if not with_shape:
        return ctx.finding(
            WARNING,
            f"None of the {n} ops has its input shapes: the trace was captured with record_shapes=False.",
            metrics,
        )
    return ctx.finding(PASS, f"{with_shape} of {n} ops carry their input shapes.", metrics)


CUT_END = "Capture cut mid-step: the last step dropped"
CUT_BEFORE = "Capture began mid-step: GPU work before the first step"
CUT_AFTER = "Capture ended mid-step: GPU work after the last step"


@check(
    id="capture.cut",
    title="Whole steps at both ends of the capture",
    problem="{what}",
    variants=(CUT_END, CUT_BEFORE, CUT_AFTER),
    section="capture",
    order=40,
    anchor="#overview",
    measures="""Each active GPU's busy time before its first step and after its last one (work of a step that
began before the capture, or whose marker the capture's end cut off), against the mean step; before
the first step, only work launched inside the capture counts: work whose launch call is not in the
trace is a step from before the capture that the GPU, running behind the host, is still finishing,
and leaves the measured steps whole; and, in
PyTorch traces, marked steps left out at the end because the capture stopped while their GPU work ran
(as torch-tb-profiler drops them). Not applicable without step markers (capture.no-steps).""",
    thresholds={"edge": Threshold(10.0, "%", "GPU work before the first step or after the last, share of a step")},
    recommendation={
        "default": """
The capture started or stopped inside a step: that step is not measured, and its GPU work is left out of
every per-step number. Start and stop the profiler between steps, after the step before has finished:
Keras' TensorBoard callback does with `profile_batch=(10, 15)`; with `tf.profiler.experimental.start`
and `stop`, call them between steps.""",
        "jax": """
The capture started or stopped inside a step: that step is not measured. Open `jax.profiler.trace`
between steps, and wait for the last step's work, `jax.block_until_ready(state)`, before leaving it.""",
        "pytorch": """
The capture started or stopped inside a step: that step is not measured. Let the schedule start and stop
the profiler on step boundaries, `schedule(wait=1, warmup=1, active=5)` with `prof.step()` at the end of
every step, and let the active window end at `prof.step()` rather than by leaving the `with` block or the
loop in the middle of a step.""",
    },
    snippet={
        "default": """tf.keras.callbacks.TensorBoard(log_dir="logs", profile_batch=(10, 15))""",
        "jax": """with jax.profiler.trace("logs"):
    for step in range(5):
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            state = train_step(state, next(batches))
    jax.block_until_ready(state)""",
        "pytorch": """with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=5),
                            on_trace_ready=torch.profiler.tensorboard_trace_handler("logs")) as prof:
    for batch in loader:
        train_step(batch)
        prof.step()""",
    },
    needs_gpu=True,
)
def cut(ctx: Context) -> Finding:
    m = ctx.m
    if m.steps.source not in (SOURCE_HOST, SOURCE_DEVICE, SOURCE_GROUPS, SOURCE_FUNCTIONS):
        return ctx.not_applicable("No step markers (see capture.no-steps).")
    c = m.cut_steps
    step = m.steps.mean_ps
    before = c.before_in_capture_ps  # work launched before the capture is a step before it, still running
    edge_pct = 100.0 * max(before, c.after_ps) / step if step > 0 else 0.0
    metrics = [
        Metric("dropped_steps", len(c.dropped), "", "marked steps left out at the end"),
        Metric(
            "before_ms", before / 1e9, "ms", "GPU work launched in the capture before the first step (the busiest GPU)"
        ),
        Metric(
            "early_ms",
            (c.before_ps - before) / 1e9,
            "ms",
            "GPU work launched before the capture, run before the first step",
        ),
        Metric("after_ms", c.after_ps / 1e9, "ms", "GPU work after the last step (the busiest GPU)"),
        Metric("edge_pct", edge_pct, "%", "the larger of them, share of the mean step"),
    ]
    first, last = int(m.steps.number[0]), int(m.steps.number[-1])
    said = []
    if c.dropped:
        what = CUT_END
        n = ", ".join(map(str, c.dropped))
        said.append(
            f"Step {n} is left out: the capture stopped while its GPU work ran (it launched under "
            f"{TAIL_SHARE:.0%} of the GPU work of the step before)."
        )
    if before * 100.0 >= ctx.t["edge"] * step:
        said.append(
            f"{before / 1e9:.2f} ms of GPU work runs before step {first}, outside every step: the end of "
            "a step that began before the capture (or work before the loop), not measured."
        )
    if c.after_ps * 100.0 >= ctx.t["edge"] * step and not c.dropped:
        said.append(
            f"{c.after_ps / 1e9:.2f} ms of GPU work runs after step {last}, outside every step: a step whose "
            "end the capture cut off (or work after the loop), not measured."
        )
    if not said:
        early = c.before_ps - before
        ahead = (
            f" Before step {first} the GPU still ran {early / 1e9:.2f} ms of work launched before the capture: "
            "a step before it, as the GPU runs behind the host."
            if early * 100.0 >= ctx.t["edge"] * step
            else ""
        )
        return ctx.finding(
            PASS,
            f"The GPUs' work lies within the {len(m.steps)} measured step{'s' if len(m.steps) != 1 else ''} "
            f"({before / 1e9:.2f} ms before "
            f"the first, {c.after_ps / 1e9:.2f} ms after the last).{ahead}",
            metrics,
        )
    if not c.dropped:
        what = CUT_BEFORE if before * 100.0 >= ctx.t["edge"] * step else CUT_AFTER
    metrics.append(Metric("what", what, "", ""))
    return ctx.finding(WARNING, " ".join(said), metrics, evidence=list(c.windows))


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
(multigpu.launch-skew compares the GPUs' first kernels and still can). Not applicable on AMD GPUs: HIP's launch calls are not paired with
their kernels yet.""",
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
    if not launches and any(g.device.is_amd for g in ctx.m.gpus):
        return ctx.not_applicable(
            "An AMD GPU: the advisor does not pair HIP launch calls with their kernels yet, so it cannot "
            "tell whether they were captured."
        )
    if not launches:
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


@check(
    id="capture.memory",
    title="Memory records captured",
    problem="profile_memory off: no memory records",
    section="capture",
    order=80,
    anchor="#overview",
    measures="""The allocator's `[memory]` records of a PyTorch trace (one per allocation and free, written only
with `profile_memory=True`), on the GPUs when the trace has GPU work. Without them the memory table is
empty and the batch-size advice (multigpu.batch) cannot tell.""",
    recommendation="""
Profile with `profile_memory=True`: the trace then records every allocation and free with the
allocator's totals, which the memory table (peak, headroom, the allocations before the peak) and the
batch-size advice (multigpu.batch) read.""",
    snippet="""with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA],
                            profile_memory=True) as prof:
    train_step()""",
    frameworks=("pytorch",),
)
def memory(ctx: Context) -> Finding:
    r = ctx.m.memory_records
    metrics = [
        Metric("records", r.records, "", "memory records"),
        Metric("gpu_records", r.gpu_records, "", "memory records on a GPU"),
    ]
    if not r.records:
        return ctx.finding(
            INFO,
            "No memory records: the trace was captured with profile_memory=False, so the memory table is empty "
            "and the batch-size advice (multigpu.batch) cannot tell.",
            metrics,
        )
    if ctx.m.gpu_ids and not r.gpu_records:
        return ctx.finding(
            INFO,
            f"{r.records} memory records, none on a GPU: the GPU memory table is empty and the batch-size "
            "advice (multigpu.batch) cannot tell.",
            metrics,
        )
    on = f", {r.gpu_records} on a GPU" if ctx.m.gpu_ids else ""
    return ctx.finding(PASS, f"{r.records} memory records{on}.", metrics)


@check(
    id="capture.stacks",
    title="Python call stacks recorded",
    problem="with_stack off: no Python call stacks",
    section="capture",
    order=90,
    anchor="#overview",
    measures="""The Python tracer's events in a PyTorch trace (`python_function`, written with `with_stack=True`:
the source line, built-in or module each op was called from). No check of the advisor reads them, so
none is blind without them: the finding says what they would show. The ops table shows each op's Python
frames from them (its `stack` column), as it shows older PyTorch's ops' `Call stack` argument: traces known
to be from PyTorch before 1.10 (memory records without totals) are not applicable; an older trace without
memory records is told what a new one would be.""",
    recommendation="""
Nothing the advisor checks needs call stacks. To see which line of your code issued each op, profile
with `with_stack=True`: the trace viewer then shows the Python calls above every op, the ops table
its Python frames (the Call stack column), and torch-tb-profiler's Module view groups the ops by the
`nn.Module` that ran them.""",
    snippet="""with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA],
                            with_stack=True) as prof:
    train_step()""",
    frameworks=("pytorch",),
)
def stacks(ctx: Context) -> Finding:
    st = ctx.m.python_stacks
    metrics = [Metric("python_events", st.events, "", "Python function events")]
    if st.events:
        return ctx.finding(
            PASS,
            f"{st.events} Python function events: each op's Python caller is in the trace "
            "(the ops table's Call stack column).",
            metrics,
        )
    if st.old_trace:
        return ctx.not_applicable(
            "A trace of PyTorch before 1.10: its call stacks, if recorded, are its ops' `Call stack` argument, "
            "which the ops table shows for each op's longest call."
        )
    return ctx.finding(
        INFO,
        "No Python function events: the trace was captured with with_stack=False (or by a PyTorch old enough "
        "to keep stacks in its ops' `Call stack` argument; the ops table shows those where the trace has them). No check reads "
        "call stacks; the trace viewer cannot show which line of code issued each op.",
        metrics,
    )


# The checks a capture.* problem makes blind: with that problem, a pass from them is "cannot tell"
# (checks.blind). Each of them also says not-applicable by itself when it finds nothing to measure.
BLINDS = {
    "capture.no-runtime": ("kernels.launch-bound", "host.thread-contention"),
    "capture.short": ("steps.gaps",),
    "capture.shapes": ("tensorcore.dims",),
    "capture.memory": ("multigpu.batch",),
}
