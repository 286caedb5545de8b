"""`fusion`: chains of element-wise and reduction kernels fused into one, each kernel launched by compiled
code in a few µs instead of an op's dispatch."""

from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.arrays import isin
from tb_gpu_advisor.model.profile import Kind

# graded within `compile` (its held-out pairs: vit_bf16_compile +43%, gpt2_bf16_compile -4%)
ERROR = 0.45

# torch.compile's generated code launches a kernel in a few µs of Python, not an op's dispatch
COMPILED_LAUNCH_PS = 6_000_000
# ATen's generic element-wise and reduction kernels, which Inductor (torch.compile) and XLA fuse
POINTWISE = re.compile(
    r"elementwise_kernel|vectorized_elementwise|unrolled_elementwise|reduce_kernel|direct_copy|_copy_kernel|"
    r"fill_kernel|CatArrayBatchedCopy|index_elementwise|Memset|^loop_|^input_|^fusion",
    re.I,
)


def fusable(f: StepFacts) -> np.ndarray:
    """The device ops a compiler fuses: ATen's generic element-wise and reduction kernels (not the
    optimizer's); the same for every change, so found once."""
    if "fusable" not in f.cache:
        g = f.g
        f.cache["fusable"] = (
            f.by_name(g.d_name, POINTWISE.search)
            & ~f.matrix()
            & ~g.h_optimizer[g.d_launch]
            & isin(g.d_kind, np.asarray([Kind.KERNEL, Kind.MEMSET], np.int8))
        )
    return f.cache["fusable"]


def fusion(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    can = fusable(f)
    d_dur = c.d_dur.astype(np.int64).copy()
    # runs of fusable ops on one stream, between other kernels, within a step: one kernel each, as
    # long as the longest (it reads the run's inputs and writes its outputs once)
    step = g.h_step[g.d_launch].astype(np.int64)
    cut = np.r_[True, (~can[1:]) | (~can[:-1]) | (g.d_stream[1:] != g.d_stream[:-1]) | (step[1:] != step[:-1])]
    run = np.cumsum(cut)
    merged = 0
    if can.any():
        at = np.flatnonzero(can)
        r = run[at]
        counts = np.bincount(r)
        longest = np.zeros(len(counts), np.int64)
        np.maximum.at(longest, r, d_dur[at])
        many = counts[r] >= 2
        # keep one op of each run (its first) with the run's longest time
        first_of = np.r_[True, r[1:] != r[:-1]]
        gone = at[many & ~first_of]
        keep = at[many & first_of]
        d_dur[keep] = longest[run[keep]]
        d_dur[gone] = 0
        merged = len(gone)
    basis = []
    if merged:
        c.d_dur = d_dur
        gone_mask = np.zeros(g.device_ops, bool)
        gone_mask[gone] = True
        d_gap = c.d_gap
        c.d_gap = np.where(gone_mask, 0, d_gap)
        basis.append(f"element-wise and reduction chains fused ({merged / g.steps:.0f} kernels a step merged)")
    else:
        gone = np.zeros(0, np.int64)
    # the host: the fused ops' dispatch gone, the others launched by compiled code
    region = f.region()
    launches_gone = np.zeros(len(g.h_kind), bool)
    launches_gone[g.d_launch[gone]] = True
    launches_gone &= region
    # the host's dispatch inside ops is what compiled code replaces; Python outside the ops stays, and so
    # do the allocator's calls and start-up work inside them (compiled code allocates its buffers through
    # the same allocator, and starts up as eager code does), and a launch's start-up or CUPTI's replay
    free = f.free(c)
    kept, compiled = compiled_gaps(c, free)
    c.h_gap = np.where(launches_gone, free + kept, np.where(region, np.minimum(c.h_gap, compiled), c.h_gap))
    c.h_dur = np.where(launches_gone, c.h_kept_dur, c.h_dur)
    basis.append("the compiled code launches each kernel in a few µs (the Python outside ops stays)")
    if kept[region].sum() > 0:
        basis.append(f"{kept_said(f, kept[region].sum())} kept")
    return "; ".join(basis)


def compiled_gaps(c: Changes, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each gap's allocator's and start-up work inside ops (what no compiler removes, beside its Python
    outside ops, `free`), and the gap as compiled code would leave it: those, and at most
    COMPILED_LAUNCH_PS of the ops' dispatch."""
    kept = np.minimum(c.kept(), np.maximum(c.h_gap - free, 0))
    dispatch = np.maximum(c.h_gap - free - kept, 0)
    return kept, free + kept + np.minimum(dispatch, COMPILED_LAUNCH_PS)


def kept_said(f: StepFacts, ps: float) -> str:
    """ "the allocator's calls and start-up work inside ops (12.3 ms a step)": what a fix keeps."""
    g = f.g
    what = []
    if g.h_alloc.sum():
        what.append("the allocator's calls")
    if g.h_startup.sum() or (g.h_kept_dur.sum() and not g.range_records):
        what.append("start-up work")
    if g.range_records:
        what.append("CUPTI's replay")
    return f"{' and '.join(what) or 'host time'} inside ops ({ps / max(g.steps, 1) / 1e9:.2f} ms a step)"
