"""`input`: every wait for the next batch cut to what a batch the pipeline has ready costs."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.build import INPUT
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.fixes.host import host
from tb_gpu_advisor.graph.simulate import Changes

# A batch the input pipeline has ready: the DataLoader's `__next__` with workers that keep up took 38
# and 52 µs on an H100's host (tests/data/gpu/torch_input_workers4: its H100 pair then grades no input
# model), as 41-49 µs did on an H200's (loader_w4)
INPUT_READY_PS = 50_000_000

# the model's relative error on its held-out pairs (`python benchmarks/whatif_pairs.py`): loader_w0 ->
# loader_w4 -12%, jax_slow_input -> jax_jit +2%
ERROR = 0.15


def input(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    inp = g.h_kind == INPUT
    if not inp.any():
        if f.framework == "jax":  # JAX marks no input waits: the Python between dispatches
            return host(f, c)
        return None
    c.h_dur = np.where(inp, np.minimum(c.h_dur, INPUT_READY_PS), c.h_dur)
    return "input waits cut to a ready batch's 50 µs"
