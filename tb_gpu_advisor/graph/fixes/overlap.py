"""`overlap`: compute no longer waits for collectives before the optimizer (DDP's buckets overlapped)."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.profile import Kind

# no pair grades it: DESIGN.md's tolerance stands for its error
ERROR = 0.25


def overlap(f: StepFacts, c: Changes) -> str | None:
    g = f.g
    dep = c.d_dep
    has = dep >= 0
    if not has.any():
        return None
    on_coll = np.zeros(len(dep), bool)
    on_coll[has] = g.d_kind[dep[has]] == Kind.COLLECTIVE
    drop = on_coll & ~g.h_optimizer[g.d_launch]
    if not drop.any():
        return None
    c.d_dep = np.where(drop, -1, dep)
    return "compute no longer waits for collectives before the optimizer"
