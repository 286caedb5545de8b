"""`graph`: the forward and backward (PyTorch) or the step (JAX, TensorFlow) replayed as captured graphs."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes.fusion import kept_said
from tb_gpu_advisor.graph.simulate import Changes

# A captured graph: one launch per graph (the forward's and the backward's in PyTorch, the step's in
# JAX), cudaGraphLaunch and the graphed callable's Python: 122 and 146 µs in mlp_graphed's trace
GRAPH_REPLAY_PS = 150_000_000
GRAPH_NODE_GAP_PS = 1_000_000
# the model's relative error on its held-out pairs (`python benchmarks/whatif_pairs.py`): gpt2_b1_eager
# -> gpt2_b1_graphed +3% (mlp_graphed set GRAPH_REPLAY_PS: its pair does not grade it), at least MIN_ERROR
ERROR = 0.10


def replays(f: StepFacts) -> tuple[np.ndarray, np.ndarray]:
    """The launches a captured graph would hold (`StepFacts.region`) and, of them, each graph's first
    (the forward's, and the backward's on its own thread, each step), where its replay is launched."""
    g = f.g
    idx = np.flatnonzero(f.region())
    part = g.h_step[idx] * 2
    if f.framework == "pytorch":  # the backward's graph launched from its own thread
        part = part + (g.h_thread[idx] != g.main_thread)
    first = np.r_[True, part[1:] != part[:-1]] if len(idx) else np.zeros(0, bool)
    return idx, first


def graph(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    region = f.region()
    if region.sum() < 2 * max(g.steps, 1):
        return None
    gap = c.h_gap.copy()
    dur = c.h_dur.copy()
    # a graph's replay at its first launch (the forward's, and the backward's on its own thread);
    # the rest of its launches cost nothing on the host, but what no graph removes: the allocator's calls
    # and start-up work in the host's time before them, a launch's start-up or CUPTI's replay
    idx, first = replays(f)
    kept = c.kept()
    gap[idx[~first]] = kept[idx[~first]]
    dur[idx] = c.h_kept_dur[idx]
    dur[idx[first]] += GRAPH_REPLAY_PS
    c.h_gap, c.h_dur = gap, dur
    in_region = region[g.d_launch]
    d_gap = c.d_gap
    c.d_gap = np.where(in_region, np.minimum(d_gap, GRAPH_NODE_GAP_PS), d_gap)
    what = "the forward and backward" if f.framework == "pytorch" else "the step"
    graphs = int(first.sum()) / g.steps
    said = (
        f"{what} replayed as {graphs:.0f} captured graph{'s' if graphs > 1.5 else ''} "
        f"({region.sum() / g.steps:.0f} launches a step become {graphs:.0f})"
    )
    held = float(kept[idx[~first]].sum())
    return said + (f"; {kept_said(f, held)} kept" if held > 0 else "")
