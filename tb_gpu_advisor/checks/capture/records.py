"""0. Before the checklist, what the profiler recorded beside the events: op shapes, memory, call stacks."""

from __future__ import annotations

from tb_gpu_advisor.checks.base import Context, check
from tb_gpu_advisor.checks.findings import INFO, PASS, WARNING, Finding, Metric


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


MEMORY_OFF = "profile_memory off: no memory records"
# profile_memory on, no GPU allocation recorded: PyTorch reports them from its caching allocator
HOST_ONLY_ADVICE = """
The trace holds the allocator's records (the capture had `profile_memory=True`), but only of host memory:
no GPU allocation was recorded. PyTorch records them from its caching allocator; a run with the allocator
off (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`, whose calls steps.allocator counts in the steps) allocates
outside it. With the caching allocator on, the same capture records the GPU's memory."""
HOST_MEMORY = "No GPU memory records: {records} memory records, all of the host's"


@check(
    id="capture.memory",
    title="Memory records captured",
    problem="{what}",
    variants=(MEMORY_OFF, HOST_MEMORY.replace("{records}", "N")),
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
            [*metrics, Metric("what", MEMORY_OFF, "", "")],
        )
    if ctx.m.gpu_ids and not r.gpu_records:
        # profile_memory was on (AMD-AGI/TraceLens ddp_resnet18_no_pool: 210 records, all of the host's)
        return ctx.finding(
            INFO,
            f"{r.records} memory records, none on a GPU: the GPU memory table is empty and the batch-size "
            "advice (multigpu.batch) cannot tell.",
            [*metrics, Metric("what", HOST_MEMORY.format(records=r.records), "", "")],
            recommendation=HOST_ONLY_ADVICE,
            snippet="",
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
