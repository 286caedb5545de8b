"""2. One GPU: utilisation (guide 1.2): gaps between steps, and host work in them."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import Context, OwnTime, Threshold, check, on_rocm, table
from tb_gpu_advisor.checks.findings import INFO, PASS, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import GAP_CAUSES, JAX, PYTORCH

# ATen ops that copy or convert tensors: on the host they launch a copy and, when blocking, wait for it
COPY_OPS = frozenset({"aten::to", "aten::_to_copy", "aten::copy_"})
# the check that reports each cause of a gap
GAP_CHECK = {
    "input": "input.bound",
    "launch": "kernels.launch-bound",
    "tf_data": "host.thread-contention",
    "compilation": "xla.recompile",
    "loss_scaling": "precision.dynamic-loss-scale",
    "host_work": "steps.host-work",
    "host_ops": "placement.host-ops",
}


@check(
    id="steps.gaps",
    time=OwnTime("gap_ms_per_step", wait=True),
    table="idle",
    title="No idle gaps between steps",
    problem="Gaps between steps: GPU {device_id} idle {gap_pct:.1f}% of each step",
    section="utilisation",
    order=120,
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    measures="""Per GPU, the idle time from the end of one step's device work to the start of the next
step's, as a share of the step; each gap split by what the host did in it (input wait, a launch in
flight, loss scaling,
compilation, host-placed ops, Python work, tf.data threads, unexplained). The saving counts only the
unexplained part: the other parts are the savings of the checks named for them.""",
    thresholds={"warning": Threshold(10.0, "%", "GPU idle between steps, share of step time")},
    recommendation={
        "default": """
The GPU sits idle between the end of one step's work and the start of the next. What the host did
in those gaps points at the cause: waiting for input (see input.bound), tf.data threads delaying the
launches (host.thread-contention), Python, callbacks or metrics between steps (steps.host-work), or
loss-scaling conditionals (precision.dynamic-loss-scale). Fix the input pipeline first.""",
        "pytorch": """
The GPU sits idle between the end of one step's work and the start of the next. What the host did
in those gaps points at the cause: waiting for the DataLoader (see input.bound), or Python work between
steps such as logging, metrics or `.item()` calls (steps.host-work). Fix the input pipeline first.""",
        "jax": """
The GPU sits idle between the end of one step's work and the start of the next. What the host did
in those gaps points at the cause: making the next batch in Python (see input.bound), or waiting on
the step's results, `jax.block_until_ready`, `float(loss)` or logging, before dispatching the next
step (steps.host-work). JAX dispatches asynchronously: let the next step be queued while this one
runs.""",
    },
)
def gaps(ctx: Context) -> Finding:
    m = ctx.m
    if all(len(g.steps) < 2 for g in m.gpus):
        return ctx.not_applicable("Needs at least two steps.")
    totals = {g.id: float(int(g.gap_ps.sum())) / g.n for g in m.gpus}
    g = ctx.worst(totals)
    mean = totals[g.id]
    share = pct(mean, g.step_ps)
    causes = {c: float(g.gap_causes.of(c).sum()) for c in GAP_CAUSES}
    gap_total = sum(causes.values()) or 1
    metrics = [
        Metric("gap_pct", share, "%", "GPU idle between steps, share of step time"),
        Metric("gap_ms_per_step", ms(mean), "ms", "idle between steps, per step"),
        Metric("gaps", len(g.gaps), "", "gaps found"),
        Metric("device_id", g.id, "", "GPU"),
    ] + [
        Metric(f"{c}_pct_of_gaps", 100.0 * causes[c] / gap_total, "%", f"gap time: {c.replace('_', ' ')}")
        for c in GAP_CAUSES
    ]
    main = max(GAP_CAUSES, key=lambda c: causes[c]) if g.gaps else "unexplained"
    evidence = []
    for j in np.argsort(-g.gap_ps, kind="stable")[:3].tolist():  # the longest three, the first of equals first
        i, s, e = g.gaps[j]
        why = max(GAP_CAUSES, key=lambda k: g.gap_causes.of(k)[j]).replace("_", " ")
        evidence.append(
            g.window(
                s,
                e,
                f"after step {int(g.steps.number[i])}: GPU idle {ms(e - s):.2f} ms; host: {why}",
                g.names_in(s - 1, e + 1),
            )
        )
    summary = f"GPU {g.id} idle {ms(mean):.2f} ms per step between steps ({fmt_pct(share)} of step time)"
    if g.gaps:
        summary += f"; during the gaps the host was mostly on {main.replace('_', ' ')}"
        if main in GAP_CHECK:
            summary += f" (see {GAP_CHECK[main]})"
    unexplained = causes["unexplained"] / g.n
    return ctx.finding(
        ctx.level(share),
        summary + ".",
        metrics,
        saving_ps=unexplained,
        step_ps=g.step_ps,
        saving_basis="the unexplained part of the gaps (the other parts are other checks' savings)",
        evidence=evidence,
        device_id=g.id,
    )


@check(
    id="steps.host-work",
    time=OwnTime("host_work_ms_per_step", wait=True),
    table="idle",
    title="No per-step host work while the GPU waits",
    problem={
        "default": "Host work: GPU idle {host_work_pct:.1f}% of each step while Python works",
        "pytorch": "Host work: GPU idle {host_work_pct:.1f}% of each step while the host works",
    },
    section="utilisation",
    order=140,
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    measures="""Per GPU, the time in each step during which the main (Python) thread does work of its own
(eager ops, callbacks, metrics, logging: not the calls that only wait for a graph or a step to run;
not its wait for input, which is input.bound's) while the GPU runs nothing, as a share of the step. In
a PyTorch trace the work is named for what it is: ATen ops dispatching GPU work, or tensor copies
(`aten::to`, `aten::copy_`) the host waits on, not Python.""",
    thresholds={"warning": Threshold(5.0, "%", "host work while the GPU is idle, share of step time")},
    recommendation={
        "default": """
Between steps the host runs Python: ops outside `tf.function`, metrics, Keras callbacks, logging.
Run them every N steps instead of every step: in Keras, `Model.compile(steps_per_execution=N)`; in a
custom loop, put several steps in one `tf.function` with a `tf.while_loop` (or a Python `range` inside
the function) and update metrics and logs less often.""",
        "pytorch": """
Between steps the host runs Python: logging, metrics, `.item()` or `.cpu()` calls that wait for the
GPU, callbacks. Do them every N steps, keep metrics on the GPU (accumulate tensors, read them back
rarely), and capture the step as a graph (`torch.compile(mode="reduce-overhead")`) so the host
launches it in one call.""",
        "jax": """
Between steps the host runs Python while the GPU waits: reading results back (`jax.block_until_ready`,
`float(loss)`, `np.asarray`, printing), metrics, logging. JAX dispatches asynchronously, so a step
needs no wait before the next is dispatched: read results every N steps, and run several steps in one
jitted call (`jax.lax.scan` or `jax.lax.fori_loop` over the step) so the host dispatches them at once.""",
    },
    snippet={
        "default": "model.compile(optimizer, loss, steps_per_execution=32)",
        "pytorch": "if step % 50 == 0:\n    print(loss.item())  # read back every 50 steps, not every step",
        "jax": "state = train_step(state, batch)  # no block_until_ready here: the next step queues behind it\n"
        "if step % 50 == 0:\n    print(float(state.loss))  # read back every 50 steps, not every step",
    },
)
def host_work(ctx: Context) -> Finding:
    m = ctx.m
    g = ctx.worst({g.id: float(g.host_work.per_step.sum()) / g.n for g in m.gpus})
    hw = g.host_work
    mean = float(hw.per_step.sum()) / g.n
    share = pct(mean, g.step_ps)
    metrics = [
        Metric("host_work_pct", share, "%", "host work while the GPU idles"),
        Metric("host_work_ms_per_step", ms(mean), "ms", "per step"),
        Metric("device_id", g.id, "", "GPU"),
    ]
    summary = f"{ms(mean):.2f} ms per step ({fmt_pct(share)}) of host work while GPU {g.id} idles"
    if hw.rows:
        top = hw.rows[0].event
        summary += f"; most of it in {top}"
        if ctx.framework == PYTORCH and top in COPY_OPS:
            summary += (
                " (a tensor copy, not Python: `.to(device)` or `.cpu()` without `non_blocking=True` makes the "
                "host wait for the copy)"
            )
        elif ctx.framework == PYTORCH and top.startswith("aten::"):
            summary += " (an ATen op: the host dispatching GPU work op by op)"
    # the advice and the fix follow what the host's work is: dispatching GPU work op by op (capture the
    # step as a graph, compile it), or Python outside the ops (do it every N steps); and what the run
    # already does (a jitted JAX step, a compiled or graphed PyTorch one): the next step from there
    cause, applied = m.host_cause, m.applied
    dispatch = cause is not None and cause.op_by_op  # the host's work is mostly inside ops and dispatch
    if ctx.framework == JAX:
        op_by_op = cause is not None and not applied.jitted
    else:
        op_by_op = dispatch and not applied.graphed
    rec = snip = None
    alternatives: tuple[str, ...] = ()
    if op_by_op and cause is not None:
        summary += (
            f". The host dispatches {cause.launches_per_step:.0f} launches a step one by one: "
            f"{ms(cause.dispatch_ps):.2f} ms a step inside ops and dispatch against {ms(cause.python_ps):.2f} ms "
            "of Python outside them"
        )
        if ctx.framework == PYTORCH and applied.compiled:
            summary += ", though the model already runs under torch.compile"
            rec, snip = COMPILED_OP_BY_OP
        else:
            rec, snip = OP_BY_OP.get(ctx.framework, OP_BY_OP["default"])
            if ctx.framework == PYTORCH:
                alternatives = ("compile",)  # compiling alone, beside graphing the step
                if applied.torchscript:
                    summary += " (TorchScript runs in the trace, and launches its kernels one by one too)"
    elif cause is not None and ctx.framework == JAX and applied.jitted and dispatch:
        summary += (
            f". {capital(applied.jit_said())}: the host's work is its dispatch, {ms(cause.dispatch_ps):.2f} ms a "
            f"step, against {ms(cause.python_ps):.2f} ms of Python outside it"
        )
        rec, snip = ALREADY_ONE_CALL["jax"]
    elif cause is not None and ctx.framework != JAX and applied.graphed:
        summary += (
            f". {capital(applied.graphs_said())}: the host's work is their launches and the work outside the "
            f"graphs, {ms(cause.dispatch_ps):.2f} ms a step inside ops and launches against "
            f"{ms(cause.python_ps):.2f} ms of Python outside them"
        )
        rec, snip = ALREADY_ONE_CALL.get(ctx.framework, ALREADY_ONE_CALL["default"])
    return ctx.finding(
        ctx.level(share),
        summary + ".",
        metrics,
        saving_ps=g.idle_cause_mean("host_work"),
        step_ps=g.step_ps,
        saving_basis="the GPU's idle time claimed by host work, if it ran every N steps",
        # what the advice recommends, simulated: jax.jit; torch.compile(mode="reduce-overhead")
        whatif=lambda: m.predict(
            ("graph+compile" if ctx.framework == JAX else "reduce-overhead" if ctx.framework == PYTORCH else "graph")
            if op_by_op
            else "host"
        ),
        alternatives=alternatives,
        evidence=hw.windows,
        details=table(hw.rows),
        device_id=g.id,
        recommendation=rec,
        snippet=snip,
    )


# what to change when the host dispatches GPU work op by op, per framework (recommendation, snippet)
OP_BY_OP = {
    "default": (
        """The host dispatches GPU work op by op and the GPU waits for it. Run the step as one graph:
        wrap it in `tf.function(jit_compile=True)` (XLA fuses the ops and launches few kernels), and
        use larger batches so each launch does more work.""",
        "@tf.function(jit_compile=True)\ndef train_step(x, y):\n    ...",
    ),
    "pytorch": (
        """The host dispatches GPU work op by op (ATen's dispatch and a launch per op) and the GPU waits
        for it. Launch the step in fewer calls: compile it (`torch.compile`, which fuses element-wise
        ops), and capture it as a CUDA graph (`torch.compile(mode="reduce-overhead")`, or
        `torch.cuda.make_graphed_callables` for the forward and backward), which replays every kernel
        in one launch; larger batches give each launch more work.""",
        'model = torch.compile(model, mode="reduce-overhead")  # fused kernels, replayed as a CUDA graph',
    ),
    "jax": (
        """The step runs op by op: each JAX operation is dispatched from Python on its own, and the GPU
        waits for the host. Compile the whole training step with `jax.jit`: XLA fuses its operations and
        the host dispatches it in one call.""",
        "@jax.jit\ndef train_step(params, batch):\n    grads = jax.grad(loss)(params, batch)\n    return update(params, grads)",
    ),
}


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# already compiled, still launched op by op: graph the compiled code (gpt2_bf16_compile: 731 launches a
# step under `Torch-Compiled Region`)
COMPILED_OP_BY_OP = (
    """The model already runs under `torch.compile` (its compiled regions and Triton kernels are in the
    trace), but the host still launches the compiled code's kernels one by one and the GPU waits for it.
    Replay them as CUDA graphs: `torch.compile(model, mode="reduce-overhead")` captures the compiled code
    and launches it in one call; larger batches give each launch more work.""",
    'model = torch.compile(model, mode="reduce-overhead")  # the compiled kernels replayed as CUDA graphs',
)
# the step already launches in one call (one jitted program, or CUDA graphs) and the host's time is that
# call's dispatch: the next step is more work per call, not jit or graphs again (jax_jit: a 0.3 ms step,
# 0.23 ms of it the host dispatching `jit_train_step`)
ALREADY_ONE_CALL = {
    "default": (
        """The step already launches its work in few calls (the summary says how), and the GPU waits for the
        host to dispatch them. Give each call more work: a larger batch, several steps in one call
        (`steps_per_execution`, or a loop inside one `tf.function`), and no wait for results between
        steps.""",
        "model.compile(optimizer, loss, steps_per_execution=32)",
    ),
    "pytorch": (
        """The step already replays as CUDA graphs (the summary says how much), and the GPU waits for the
        host between the replays: their own launches and the work outside the graphs (the optimizer step,
        Python, logging). Give each replay more work with a larger batch, capture the rest of the step
        (the optimizer's update too) in the graph, and read results back every N steps rather than each
        step.""",
        "if step % 50 == 0:\n    print(loss.item())  # read back every 50 steps, not every step",
    ),
    "jax": (
        """The step already runs as one jitted program (the summary names it), and the GPU waits for the
        host to dispatch it: the step's GPU work is shorter than its dispatch. Give each call more work:
        run several steps in one jitted call (`jax.lax.scan` or `jax.lax.fori_loop` over a batch of
        steps), use a larger batch, and let the next call be dispatched while this one runs (no
        `jax.block_until_ready` or `float(loss)` each step).""",
        "@jax.jit\ndef train_steps(state, batches):  # several steps per call\n"
        "    return jax.lax.scan(train_step, state, batches)",
    ),
}


@check(
    id="steps.syncs",
    time=OwnTime("sync_wait_ms", wait=True),
    title="No host-device syncs in the steps",
    problem="Host-device syncs: {syncs_per_step:.0f} a step; dropping them saves {saving_pct:.1f}% of the step",
    section="utilisation",
    order=145,
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    measures="""The blocking calls inside the steps (stream, device and event synchronisation, synchronous
copies: in PyTorch `.item()`, `.cpu()`, `torch.cuda.synchronize()`), by the op they ran in, and the host's
wait in them as captured; the saving is the step re-timed without those a user can drop, the host
running ahead of the GPU (docs/whatif.md, `syncs`), not the syncs' own time: a sync where the GPU had
nothing queued costs nothing, one that stops the host from keeping the GPU fed costs the GPU's idle
time after it. Not the profiler's own sync as it stops.""",
    thresholds={
        "warning": Threshold(2.0, "%", "simulated saving of dropping the syncs, share of the step"),
        "critical": Threshold(20.0, "%", "simulated saving of dropping the syncs, share of the step"),
    },
    recommendation={
        "default": """The host waits for the GPU inside the step (reading a result back, a synchronize
call), so it cannot queue the next work ahead of the GPU. Read results back every N steps, keep
running values on the GPU, and drop explicit synchronisation from the training loop.""",
        "pytorch": """The host waits for the GPU inside the step: `.item()`, `.cpu()`, `print(tensor)` or
`torch.cuda.synchronize()` make it wait for every kernel queued so far, so it cannot launch the next
step's work while the GPU runs. Accumulate metrics on the GPU and read them every N steps
(`loss.detach()` into a running tensor), and drop synchronize calls from the loop (time it with
`torch.cuda.Event`s, read at the end).""",
        "jax": """The host waits for the GPU inside the step (`jax.block_until_ready`, `float(x)`,
`np.asarray(x)`, printing a value), so it cannot dispatch the next step while the GPU runs: read results
every N steps.""",
    },
    snippet={
        "default": "if step % 100 == 0:\n    print(float(loss))",
        "pytorch": "running += loss.detach()  # stays on the GPU\nif step % 100 == 0:\n"
        "    print((running / 100).item()); running.zero_()",
        "jax": "if step % 100 == 0:\n    print(float(state.loss))",
    },
)
def syncs(ctx: Context) -> Finding:
    m = ctx.m
    s = m.syncs
    if s is None:
        return ctx.not_applicable("The capture has no steps to find syncs in.")
    pr = m.predict("syncs")
    saving = pr.saving_ps if pr is not None else 0.0
    step = pr.step_ps if pr is not None else m.host_steps.mean_ps
    share = pct(saving, step) if step > 0 else 0.0
    metrics = [
        Metric("saving_pct", share, "%", "simulated saving of dropping the syncs, share of the step"),
        Metric("syncs_per_step", s.per_step, "", "blocking calls a step"),
        Metric("sync_wait_ms", ms(s.wait_ps), "ms", "the host's wait in them a step, as captured"),
    ]
    if not s.rows:
        return ctx.finding(PASS, "No blocking call in the steps.", metrics)
    parts = [f"{r.per_step:.0f} × {r.call}" for r in s.rows]
    summary = (
        f"{s.per_step:.0f} blocking call(s) a step: {', '.join(parts)}; the host waits {ms(s.wait_ps):.2f} ms a step "
        "in them as captured"
    )
    if not any(r.removable for r in s.rows):
        summary += "; each runs in an op that needs its result on the host"
    return ctx.finding(
        ctx.level(share) if any(r.removable for r in s.rows) else INFO,
        summary + ".",
        metrics,
        whatif=pr,
        evidence=list(s.windows),
        details=table(s.rows),
    )


@check(
    id="steps.allocator",
    time=OwnTime("alloc_ms_per_step", wait=True),
    title="The device allocator stays out of the steps",
    problem="Allocator calls in the steps: {alloc_pct:.1f}% of each step in {calls}",
    section="utilisation",
    order=147,
    needs_gpu=True,
    anchor="#1._analyze_gaps_between_steps",
    measures="""The device allocator's calls inside the steady steps' host time (`cudaMalloc`, `cudaFree`,
`cuMemAlloc`, `hipMalloc`, `hipFree`, pinned host memory's too; not in a warm-up step, where they are the
caching allocator filling its cache: capture.warmup), per step as captured, as a share of the step. With
PyTorch's caching allocator on they are rare after the first steps; every tensor makes them when it is off
(`PYTORCH_NO_CUDA_MEMORY_CACHING=1`), and `torch.cuda.empty_cache()` each step makes the next step allocate
again. The saving is the step re-timed without them (docs/whatif.md, `allocator`); no compiler, CUDA graph
or fusion removes them.""",
    thresholds={"warning": Threshold(5.0, "%", "the allocator's calls, share of the captured step")},
    recommendation={
        "default": """
The host calls the driver's allocator inside the steps: allocating and freeing device memory costs far
more than reusing it, and a free waits for the GPU. Allocate once and reuse: let the framework's
allocator keep its memory, and do not release it between steps.""",
        "pytorch": """
Every allocation and free goes to the driver (`cudaMalloc`/`cudaFree`): PyTorch's caching allocator is off
(`PYTORCH_NO_CUDA_MEMORY_CACHING=1` in the environment) or emptied every step
(`torch.cuda.empty_cache()` in the loop), and `cudaFree` waits for the GPU besides. Keep the caching
allocator on (unset the variable) and call `empty_cache()` outside the loop if at all; for fragmentation,
`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` keeps memory without returning it each step.""",
    },
    snippet={
        "default": "",
        "pytorch": "unset PYTORCH_NO_CUDA_MEMORY_CACHING  # the caching allocator back on\n"
        "# and no torch.cuda.empty_cache() inside the training loop",
    },
)
def allocator(ctx: Context) -> Finding:
    m = ctx.m
    k = m.host_kept
    if k is None:
        return ctx.not_applicable("No steps to read the allocator's calls in.")
    a = k.alloc
    share = m.step_share(a.ms_per_step) or 0.0
    calls = "/".join(a.names[:2]) or "no call"
    metrics = [
        Metric("alloc_pct", share, "%", "the allocator's calls, share of the captured step"),
        Metric("alloc_ms_per_step", a.ms_per_step, "ms", "the allocator's calls per step, as captured"),
        Metric("alloc_calls_per_step", a.calls_per_step, "", "allocator calls per step"),
        Metric("calls", calls, "", "the allocator's calls"),
    ]
    rocm = ctx.framework == PYTORCH and on_rocm(m, a.names)
    rec, snip = (ALLOCATOR_ROCM, ALLOCATOR_ROCM_SNIPPET) if rocm else (None, None)
    if not a.rows:
        warm = " (those of the warm-up steps are the cache filling: capture.warmup)" if k.warmup_steps else ""
        return ctx.finding(
            PASS, f"No allocator call in the steady steps{warm}.", metrics, recommendation=rec, snippet=snip
        )
    parts = [
        f"{r.per_step:.0f} `{r.call}` ({r.ms_per_step:.2f} ms" + (f", most in {r.op}" if r.op else "") + ")"
        for r in a.rows[:3]
    ]
    summary = (
        f"The host spends {a.ms_per_step:.2f} ms a step ({fmt_pct(share)} of the captured step) in the device "
        f"allocator's calls inside ops: {', '.join(parts)}."
    )
    status = ctx.level(share)
    return ctx.finding(
        status,
        summary,
        metrics,
        whatif=(lambda: m.predict("allocator")) if status != PASS else None,
        evidence=list(a.windows),
        details=table(a.rows),
        recommendation=rec,
        snippet=snip,
    )


# the same advice in ROCm's words (AMD-AGI/TraceLens ddp_resnet18_no_pool: 1,360 hipFree, 3,346 ms)
ALLOCATOR_ROCM = """Every allocation and free goes to HIP (`hipMalloc`/`hipFree`): PyTorch's caching
allocator is off (`PYTORCH_NO_HIP_MEMORY_CACHING=1` in the environment) or emptied
every step (`torch.cuda.empty_cache()` in the loop), and `hipFree` waits for the GPU besides. Keep the
caching allocator on (unset the variable) and call `empty_cache()` outside the loop if at all; for
fragmentation, `PYTORCH_HIP_ALLOC_CONF=expandable_segments:True` keeps memory without returning it each
step."""
ALLOCATOR_ROCM_SNIPPET = (
    "unset PYTORCH_NO_HIP_MEMORY_CACHING  # the caching allocator back on\n"
    "# and no torch.cuda.empty_cache() inside the training loop"
)
