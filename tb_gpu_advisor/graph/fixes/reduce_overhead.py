"""`reduce-overhead`: `torch.compile(model, mode="reduce-overhead")`: the model compiled (`compile`) and
its forward and backward replayed as CUDA graphs (`graph`, by cudagraph trees), with the host work the
compiled model still does each step: Dynamo's guards and AOTAutograd's runtime wrappers around each
graph, which check and unpack every parameter, and what runs outside the model (the optimizer, the
loss, the loop's Python), as `graph` keeps it."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes.compile import compile
from tb_gpu_advisor.graph.fixes.graph import graph, replays
from tb_gpu_advisor.graph.simulate import Changes

# The compiled model's wrappers' own host time, per parameter a step: in tests/data/gpu_pairs/
# gpt2_bf16_compile (GPT-2 under torch.compile on an H200's host, 148 parameters), the forward's
# "Torch-Compiled Region" outside its "## Call CompiledFxGraph" took 0.93 ms a call (6.3 µs a
# parameter) and the backward's "CompiledFunctionBackward" outside its call 0.51 ms (3.5 µs), with two
# and one profiler events in them (`python benchmarks/whatif_pairs.py --wrappers`). No pair grades it:
# no capture we hold runs mode="reduce-overhead".
FORWARD_WRAPPER_PS = 6_300_000
BACKWARD_WRAPPER_PS = 3_500_000
# no reduce-overhead pair grades it: the larger of `graph`'s and `compile`'s errors stands for it
ERROR = 0.45


def reduce_overhead(f: StepFacts, c: Changes) -> str | None:
    if f.framework != "pytorch":
        return None
    compiled = compile(f, c)
    replayed = graph(f, c)
    if replayed is None:
        return None
    g = f.g
    params = f.parameters_per_step()
    idx, first = replays(f)
    at = idx[first]
    backward = g.h_thread[at] != g.main_thread
    gap = c.h_gap.copy()
    np.add.at(gap, at, np.where(backward, BACKWARD_WRAPPER_PS, FORWARD_WRAPPER_PS) * int(round(params)))
    c.h_gap = gap
    parts = [p for p in (compiled, replayed) if p]
    parts.append(
        f"the compiled model's guards and wrappers kept: {params:.0f} parameters, "
        f"{params * (FORWARD_WRAPPER_PS + BACKWARD_WRAPPER_PS) / 1e9:.2f} ms a step on the host"
    )
    return "; ".join(parts)
