"""2. One GPU: utilisation (guide 1.2): kernels waiting for their launch, and small kernels."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.checks.base import Context, NoiseMeasure, OwnTime, Threshold, check, table
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric
from tb_gpu_advisor.common.units import fmt_pct, ms, pct
from tb_gpu_advisor.measures import JAX, PYTORCH, LaunchCalls, Measures


def launch_wait_per_step(m: Measures, gpus: list[int]) -> np.ndarray:
    """kernels.launch-bound's measure in each step: the GPU waiting for a launch (averaged over `gpus`;
    none without a GPU)."""
    if not gpus:
        return np.zeros(len(m.host_steps))
    return np.mean([m.gpu(g).category_per_step("kernel_launch_wait") for g in gpus], axis=0)


FUSE = {
    "default": """@tf.function(jit_compile=True)
def train_step(x, y):
    ...""",
    "pytorch": """model = torch.compile(model, mode="reduce-overhead")  # fuses kernels and replays the step as one graph""",
    "jax": """train_step = jax.jit(train_step)  # one compiled program per step""",
}


# When the step already runs as a CUDA graph, fusing or graph capture is done: what is left is the
# graph's own launch, which overlaps the GPU's work only if the host launches the next replay while
# the last one runs (tests/data/gpu: a synchronised replay waited 0.44 ms a step, an unsynchronised
# one none).
GRAPH_ADVICE = {
    "default": """
The step already runs as a CUDA graph launched in one call; what the GPU waits for is that call. A
graph launch takes longer than a kernel launch (the summary quotes it), and it is hidden only while
the GPU still has the step before to run: do not wait for each step to finish (a synchronise or a read
of a result) before launching the next, read results every N steps, and give each graph more work
(several steps in one graph, a larger batch).""",
    "pytorch": """
The step already replays as a CUDA graph launched in one call; what the GPU waits for is that call. A
graph launch takes longer than a kernel launch (the summary quotes it), and it is hidden only while
the GPU still has the step before to run: drop the per-step `torch.cuda.synchronize()` and read-backs
(`.item()`, `.cpu()`, printing a tensor) so the next `replay()` is launched while this one runs, and
read results every N steps.""",
    "jax": """
The step already runs as one XLA command buffer (a CUDA graph) launched in one call; what the GPU waits
for is that call. It is hidden only while the GPU still has the step before to run: do not
`jax.block_until_ready` or read results (`float(loss)`) every step, so that JAX's asynchronous dispatch
launches the next step while this one runs, and scan over several steps (`jax.lax.scan`).""",
}
GRAPH_SNIPPET = {
    "pytorch": """for step in range(steps):
    graph.replay()  # no torch.cuda.synchronize() here: the next replay queues behind this one
    if step % 50 == 0:
        print(loss.item())""",
    "jax": """state = train_step(state, batch)  # no block_until_ready: the next step queues behind it""",
}


# Already compiled (torch.compile) but launched kernel by kernel: the next step is to replay the
# compiled kernels as CUDA graphs, not to compile
COMPILED_LAUNCH_ADVICE = """
The model already runs under `torch.compile` (its Triton kernels and compiled regions are in the trace),
but the host still launches its kernels one by one and the GPU waits for the launches. Replay them as
CUDA graphs: compile with `mode="reduce-overhead"` (the compiled code is captured and replayed in one
launch), and give each launch more work with a larger batch."""
COMPILED_SNIPPET = (
    'model = torch.compile(model, mode="reduce-overhead")  # the compiled kernels replayed as CUDA graphs'
)

# The small kernels of a step that already runs without a launch per kernel (CUDA graphs, one jitted
# program): their launch costs nothing, their size is the work each does (gpt2_b1_graphed: 541 small
# kernels a step at batch 1, 97% of them replayed from two graphs)
SMALL_GRAPHED_ADVICE = {
    "default": """
Many kernels are short, but the step already runs as CUDA graphs (the summary says how much), so the host
does not launch them one by one: they are short because each does little work. Give each kernel more
work: a larger batch, or several steps in one call. What fusing the element-wise chains would still save
is the what-if above.""",
    "pytorch": """
Many kernels are short, but the step already replays as CUDA graphs (the summary says how much), so the
host does not launch them one by one: they are short because each does little work. Give each kernel
more work with a larger batch (the graphs are captured again at the new shapes); fusing element-wise
chains (`torch.compile` on the module before it is graphed) saves what the what-if above says.""",
    "jax": """
Many kernels are short, but the step already runs as one jitted program (the summary says how), so the
host does not dispatch them one by one and XLA has fused what it can: they are short because each does
little work. Give each kernel more work: a larger batch, or more examples per call with `jax.vmap`.""",
}
SMALL_COMPILED_ADVICE = """
Many kernels run about as long as it takes to launch them, though the model already runs under
`torch.compile` (its fused Triton kernels are in the trace): what is left is their launches, one by one.
Replay them as CUDA graphs with `torch.compile(model, mode="reduce-overhead")`, and give each kernel more
work with a larger batch."""


def optimizer_words(optimizer: str) -> str:
    """The optimizer advice kernels.small gives, from what the trace shows of the optimizer."""
    if optimizer == "fused":
        return ""  # already one kernel a group of parameters
    if optimizer == "foreach":
        return (
            " The optimizer already updates its parameters in `foreach` kernels; `fused=True` "
            "(`torch.optim.AdamW(..., fused=True)`) does the whole update in fewer."
        )
    return (
        " Use vectorised ops over concatenated tensors (for example `torch._foreach_*`) and a fused optimizer "
        "(`torch.optim.AdamW(..., fused=True)`)."
    )


ALLOC_ADVICE = {
    "default": """
The launch calls themselves are held up: while another thread allocates memory (the summary names the
call), the driver holds every launch. Allocate up front and reuse: let the framework's allocators warm
up before the steps you profile, and avoid allocating pinned host memory in the training loop.""",
    "pytorch": """
The launch calls themselves are held up: while another thread allocates memory (the summary names the
call), the driver holds every launch. `cudaHostAlloc` comes from pinned memory: the DataLoader's
pin-memory thread allocates pinned buffers while the batches in flight grow towards `num_workers` x
`prefetch_factor`, and reuses them once they are freed. Profile after that warm-up
(`schedule(skip_first=...)`), and keep no more batches in flight than the step needs (a lower
`prefetch_factor` or fewer workers). `cudaMalloc`/`cudaFree` mean PyTorch's caching allocator grows or
gives memory back: avoid `torch.cuda.empty_cache()` in the loop and shapes that change every step.""",
}


def fmt_us(us: float) -> str:
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.0f} µs"


@check(
    id="kernels.launch-bound",
    time=OwnTime("launch_wait_ms_per_step", wait=True),
    table="kernels",
    noise=NoiseMeasure("kernel launch wait", launch_wait_per_step),
    title="GPU not waiting for kernel launches",
    problem="Launch-bound: GPU {device_id} waits {launch_wait_pct:.1f}% of each step for kernel launches",
    section="utilisation",
    order=150,
    needs_gpu=True,
    anchor="#1._small_gpu_kernels_and_host_kernel_launch_delays",
    measures="""Per GPU, the idle time before device work whose launch call (a runtime API event paired by
correlation id) was still running when the GPU went idle, up to the call's end plus a 40 µs launch
latency; as a share of the step. Needs launch events in the profile. The summary quotes the launch
calls' median time and the host's time per launch as the trace measures them.""",
    thresholds={
        "warning": Threshold(3.0, "%", "GPU idle waiting for launches, share of step time (moderate)"),
        "critical": Threshold(15.0, "%", "GPU idle waiting for launches, share of step time (high)"),
    },
    recommendation={
        "default": """
The GPU finishes a kernel before the host has launched the next one. The launch call itself takes a
few µs; what the GPU waits for is the host's whole loop around it (op dispatch, Python, allocation),
which the summary quotes as the trace measures it. Give each launch more work: concatenate small
tensors and vectorise, use a larger batch, make sure the step runs inside `tf.function`, and let XLA
fuse kernels (`tf.function(jit_compile=True)` or auto-clustering).""",
        "pytorch": """
The GPU finishes a kernel before the host has launched the next one. The launch call itself takes a
few µs; what the GPU waits for is the host's loop around it (Python, the dispatcher, the op's own
checks and allocations), which the summary quotes as the trace measures it. Give each launch more work
(a larger batch, fused or vectorised ops), fuse kernels with `torch.compile`, and replay the whole step
as a graph (`torch.compile(mode="reduce-overhead")`), which launches it in one call.""",
        "jax": """
The GPU finishes a kernel before the host has launched the next one. Put the whole step under one
`jax.jit` (not several small jitted functions called from Python), use a larger batch, and scan over
several steps (`jax.lax.scan`) so one dispatch runs them.""",
    },
    snippet=FUSE,
)
def launch_bound(ctx: Context) -> Finding:
    m = ctx.m
    if not any(g.launches_paired for g in m.gpus):
        return ctx.not_applicable(
            "No launch events paired with kernels by correlation id in the profile, so launch delays cannot be measured."
        )
    # the wait while the host starts up (a kernel's first launch loading its module) is capture.warmup's
    per = {g.id: np.maximum(g.category_per_step("kernel_launch_wait") - g.launch_wait_in_startup, 0.0) for g in m.gpus}
    g = ctx.worst({d: float(v.sum()) / m.gpu(d).n for d, v in per.items()})
    mean = float(per[g.id].sum()) / g.n
    share = pct(mean, g.step_ps)
    ws, we = g.launch_waits_past_startup
    startup_ms = float(g.launch_wait_in_startup.sum()) / g.n / 1e9
    in_steps = g.steps.index(ws) >= 0
    metrics = [
        Metric("launch_wait_pct", share, "%", "GPU idle waiting for launches"),
        Metric("launch_wait_ms_per_step", ms(mean), "ms", "per step"),
        Metric("waits_per_step", int(in_steps.sum()) / g.n, "", "launch waits per step"),
        Metric("device_id", g.id, "", "GPU"),
    ]
    evidence = []
    for i in np.argsort(-per[g.id], kind="stable")[:3].tolist():
        if per[g.id][i] <= 0:
            break
        lo, hi = g.steps.start_ps[i], g.steps.end_ps[i]
        inside = np.flatnonzero((we > lo) & (ws < hi))[:20]
        if not len(inside):
            continue
        s, e = max(int(ws[inside[0]]), int(lo)), min(int(we[inside[-1]]), int(hi))
        evidence.append(
            g.window(
                s,
                e,
                f"step {int(g.steps.number[i])}: {len(inside)} waits for launches "
                f"({ms(per[g.id][i]):.2f} ms in the step)",
                g.names_in(s, e + 1),
                stream=g.busiest_stream(s, e + 1),
            )
        )
    summary = f"GPU {g.id} idle {ms(mean):.2f} ms per step ({fmt_pct(share)}) waiting for the host to launch kernels."
    if startup_ms > 0:
        metrics.append(Metric("startup_wait_ms_per_step", startup_ms, "ms", "launch wait in start-up, left out"))
        summary += f" ({startup_ms:.2f} ms a step more falls in start-up work, capture.warmup's: left out.)"
    calls = m.launch_calls
    applied = m.applied
    # most launches run a whole graph, or most of the steps' kernels replay from graphs
    graphs = calls.graph * 2 >= calls.count > 0 or applied.graphed
    compiled = ctx.framework == PYTORCH and applied.compiled and not graphs
    alloc = m.alloc_calls
    held = g.launch_wait_in_alloc_ps
    by_alloc = mean > 0 and held * 2 >= mean  # most of the wait falls while memory is allocated
    metrics.append(Metric("graph_launches", calls.graph, "", "launch calls that run a whole CUDA graph"))
    metrics.append(
        Metric("alloc_held_pct", pct(held, mean) if mean > 0 else 0.0, "%", "of the wait, while memory is allocated")
    )
    if by_alloc:
        summary += (
            f" {fmt_pct(pct(held, mean))} of that wait falls while memory is allocated: {alloc.count} allocation "
            f"calls, most of them `{alloc.name}` on thread {alloc.thread}, taking {fmt_us(alloc.median_us or 0.0)} "
            "each (median), hold up the launches made meanwhile on other threads."
        )
    elif graphs and calls.graph_median_us is not None:
        summary += (
            f" The step already runs as a CUDA graph: {calls.graph} of {calls.count} launch calls launch a "
            f"whole graph, taking {calls.graph_median_us:.1f} µs each (median)"
        )
        if calls.graph * 2 < calls.count:  # most calls launch single kernels, most kernels replay
            summary += f" ({applied.graphs_said()})"
        summary += (
            f", and the host waits for the GPU to finish "
            f"{'once' if round(calls.syncs_per_step) == 1 else f'{calls.syncs_per_step:.0f} times'} a step, "
            "so no launch overlaps the work before it."
            if calls.syncs_per_step >= 0.5
            else "."
        )
    else:
        summary += launch_pace(calls)
        if compiled:
            summary += " The model already runs under torch.compile."
    rec: str | None
    snip: str | None
    if by_alloc:
        rec, snip = ctx.text(ALLOC_ADVICE), ""
    elif graphs:
        rec, snip = ctx.text(GRAPH_ADVICE), ctx.text(GRAPH_SNIPPET)
    elif compiled:
        rec, snip = COMPILED_LAUNCH_ADVICE, COMPILED_SNIPPET
    else:
        rec = snip = None
    return ctx.finding(
        ctx.level(share),
        summary,
        metrics,
        saving_ps=mean,
        step_ps=g.step_ps,
        saving_basis="the launch wait per step, if launches kept ahead of the GPU",
        # a graph replayed with a wait after it: drop the wait; memory allocations holding launches up:
        # no fix the graph can simulate; else launch the step as a graph
        # the advice's fix: torch.compile(mode="reduce-overhead") in PyTorch, a graph elsewhere
        whatif=None
        if by_alloc
        else lambda: m.predict("syncs" if graphs else "reduce-overhead" if ctx.framework == PYTORCH else "graph"),
        # eager PyTorch: the advice offers compiling beside it, with its saving
        alternatives=("compile",) if ctx.framework == PYTORCH and not (by_alloc or graphs or compiled) else (),
        evidence=evidence,
        device_id=g.id,
        recommendation=rec,
        snippet=snip,
    )


@check(
    id="kernels.small",
    time=OwnTime("small_kernel_ms_per_step"),
    table="kernels",
    title="Kernels large enough to amortise their launch",
    problem="Small kernels: {small_kernels_per_step:.0f} per step on GPU {device_id}, {small_kernel_pct:.1f}% of compute",
    section="utilisation",
    order=160,
    needs_gpu=True,
    anchor="#1._small_gpu_kernels_and_host_kernel_launch_delays",
    measures="""Per GPU, the kernels in its steps grouped by op type (or kernel name when no op claims
them); a group whose mean kernel is at most `max_kernel_us` is small. Counted per GPU per step, with
their share of the GPU's kernel time.""",
    thresholds={
        "max_kernel_us": Threshold(
            40.0, "µs", "mean kernel time of an op type at or below which its kernels are small"
        ),
        "min_per_step": Threshold(200.0, "kernels", "small kernels per step before they matter"),
        "warning": Threshold(20.0, "%", "share of device compute in small kernels"),
    },
    recommendation={
        "default": """
Many kernels run about as long as it takes to launch them (the guide's example: 126,224 Mul kernels
taking 2.77 s, 21.9 µs each). Concatenate small tensors and use vectorised ops, use a larger batch so
each kernel does more work, run the step in `tf.function`, and let XLA fuse element-wise chains
(`tf.function(jit_compile=True)` or auto-clustering).""",
        "pytorch": """
Many kernels run about as long as it takes to launch them. Use vectorised ops over concatenated tensors
(for example `torch._foreach_*` or fused optimizers: `torch.optim.AdamW(..., fused=True)`), a larger
batch, and `torch.compile` to fuse element-wise chains.""",
        "jax": """
Many kernels run about as long as it takes to launch them. Use a larger batch, vectorise with `jax.vmap`
instead of Python loops, and keep the whole step in one `jax.jit` so XLA can fuse it.""",
    },
    snippet={
        "default": "tf.config.optimizer.set_jit(True)  # XLA auto-clustering",
        "pytorch": "optimizer = torch.optim.AdamW(model.parameters(), fused=True)",
        "jax": "train_step = jax.jit(train_step)",
    },
)
def small_kernels(ctx: Context) -> Finding:
    m = ctx.m
    max_ps = ctx.t["max_kernel_us"] * 1e6
    per = {g.id: g.small_kernels(max_ps) for g in m.gpus}
    g = ctx.worst({d: v.per_step for d, v in per.items()})
    r = per[g.id]
    share = pct(r.ps, r.compute_ps)
    metrics = [
        Metric("small_kernels_per_step", r.per_step, "", "small kernels per step"),
        Metric("small_kernel_pct", share, "%", "share of device compute in small kernels"),
        Metric("small_kernel_ms_per_step", ms(r.ps) / g.n, "ms", "time in small kernels per step"),
        Metric("mean_small_kernel_us", r.ps / r.count / 1e6 if r.count else None, "µs", "mean small kernel"),
        Metric("device_id", g.id, "", "GPU"),
    ]
    if len(per) > 1:
        metrics += [Metric(f"small_kernels_per_step_gpu{d}", v.per_step, "", f"GPU {d}") for d, v in per.items()]
    status = PASS
    if r.per_step >= ctx.t["min_per_step"]:
        status = WARNING if (share or 0) >= ctx.t["warning"] else INFO
    details = r.rows
    applied = m.applied
    # launched without a launch each: CUDA graphs, or one jitted JAX program
    graphed = applied.graphed or applied.jitted
    if graphed and status == WARNING:
        status = INFO  # no launch to amortise: their size is the work each does
    summary = (
        f"{r.per_step:.0f} kernels per step on GPU {g.id} average ≤ {ctx.t['max_kernel_us']:.0f} µs "
        f"({fmt_pct(share)} of its device compute)"
    )
    if details:
        top = details[0]
        per_step_ms = top.total_ms * top.per_step / top.kernels  # the row's time per step
        summary += (
            f"; most are {top.op_type}: {top.per_step:.0f} a step, {per_step_ms:.2f} ms a step, "
            f"{top.mean_us:.1f} µs each"
        )
    rec: str | None = None
    snip: str | None = None
    if graphed:
        said = applied.jit_said() if applied.jitted and not applied.graphed else applied.graphs_said()
        summary += f"; {said}, so no kernel waits for a launch of its own."
        rec, snip = ctx.text(SMALL_GRAPHED_ADVICE), ""
    else:
        summary += "." + launch_pace(m.launch_calls)
        if ctx.framework == PYTORCH and applied.compiled:
            rec, snip = SMALL_COMPILED_ADVICE, COMPILED_SNIPPET
        elif ctx.framework == PYTORCH:
            rec = (
                "Many kernels run about as long as it takes to launch them."
                + optimizer_words(applied.optimizer)
                + " Use a larger batch, and `torch.compile` to fuse element-wise chains."
            )
            snip = "model = torch.compile(model)" if applied.optimizer == "fused" else None
        elif ctx.framework == JAX and applied.jitted:
            rec, snip = ctx.text(SMALL_GRAPHED_ADVICE), ""
    return ctx.finding(
        status,
        summary,
        metrics,
        whatif=lambda: m.predict("fusion"),  # their chains fused, their launches gone
        evidence=r.windows,
        details=table(details),
        device_id=g.id,
        recommendation=rec,
        snippet=snip,
    )


def launch_pace(calls: LaunchCalls) -> str:
    """What the trace measures of launching: the calls' median time and the host's time per launch."""
    if not calls.count or calls.median_us is None:
        return ""
    out = f" A launch call takes {calls.median_us:.1f} µs (median of {calls.count})"
    if calls.host_us_per_launch is not None:
        out += (
            f"; the host launches {calls.per_step:.0f} per step, one every "
            f"{calls.host_us_per_launch:.1f} µs of step time"
        )
    return out + "."
