"""`host`: the host's Python between ops and dispatches gone (logging, metrics, data made in the loop)."""

from __future__ import annotations

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.simulate import Changes

# no pair grades it: DESIGN.md's tolerance stands for its error
ERROR = 0.25


def host(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    free = f.free(c)
    if free.sum() < 0.01 * max(f.window_ps, 1):
        return None
    c.h_gap = c.h_gap - free
    return f"the host's {free.sum() / g.steps / 1e9:.2f} ms a step of Python outside ops and dispatch gone"
