"""0. Before the checklist, the steps: are there step markers, enough steps, and whole ones."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, Threshold, check
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric
from tb_gpu_advisor.measures import SOURCE_DEVICE, SOURCE_FUNCTIONS, SOURCE_GROUPS, SOURCE_HOST, TAIL_SHARE

WHOLE_CAPTURE = "No step markers: the whole capture is one step"


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
