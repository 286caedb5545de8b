"""`padding`: 16-bit and TF32 matrix ops with a dimension not a multiple of 8 padded, at the share of the
peak the trace's own aligned ones reach."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.facts import StepFacts, weighted_median
from tb_gpu_advisor.graph.simulate import Changes

# the share of its peak an aligned matrix kernel reaches where the trace has none to measure: 0.69-0.72
# for fp32 and bf16 GEMMs of GPT-2 on an H200 (tests/data/gpu_pairs)
TYPICAL_SHARE = 0.7
# the model's relative error on its held-out pairs (`python benchmarks/whatif_pairs.py`): gpt2_bf16 ->
# gpt2_bf16_pad +5%, at least MIN_ERROR
ERROR = 0.10


def padding(f: StepFacts, c: Changes) -> str | None:
    g, pk = f.g, f.peaks
    if pk is None:
        return None
    d_dur = c.d_dur.astype(np.float64).copy()
    ops = np.flatnonzero(f.matrix())
    firsts, inv = f.groups(ops)
    # each group's ideal time at its precision, and whether its dimensions are multiples of 8
    ideal = np.zeros(len(firsts))
    prec: list[str] = []
    odd = np.zeros(len(firsts), bool)
    ok = np.zeros(len(firsts), bool)
    for k, j in enumerate(firsts):
        cost = f.cost(j)
        p = f.precision_of(j, cost)
        prec.append(p)
        rate = pk.rate(p)
        if cost is None or cost.kind != "matmul" or not rate:
            continue
        ok[k] = True
        ideal[k] = cost.flops / (rate * 1e12) * 1e12
        odd[k] = any(d % 8 for d in cost.dims)
    group_of = inv
    dur = g.d_dur[ops].astype(np.float64)
    share = np.minimum(np.divide(ideal[group_of], dur, out=np.zeros(len(dur)), where=dur > 0), 1.0)
    changed = 0
    for p in set(prec):
        if p == "fp32":
            continue  # CUDA-core kernels do not care
        in_p = np.asarray([x == p for x in prec], bool)[group_of] & ok[group_of]
        aligned = in_p & ~odd[group_of]
        ref = (
            weighted_median(list(zip(share[aligned].tolist(), dur[aligned].tolist())))
            if aligned.sum() >= 3
            else TYPICAL_SHARE
        )
        fix = in_p & odd[group_of]
        if not fix.any():
            continue
        sel = ops[fix]
        d_dur[sel] = np.minimum(d_dur[sel], np.maximum(ideal[group_of][fix] / ref, roofline.KERNEL_FLOOR_PS))
        changed += int(fix.sum())
    if not changed:
        return None
    c.d_dur = np.round(d_dur).astype(np.int64)
    return "matrix ops with dimensions padded to multiples of 8 run at the share of the peak the trace's aligned ones reach"
