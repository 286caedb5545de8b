"""`bf16`, `fp16`, `tf32`: each matrix kernel re-timed by a per-op roofline at the new precision; for
16-bit under autocast, what autocast does to the other ops (fixes/autocast.py: which run in 16-bit,
which stay fp32, the casts it adds). cuDNN's layout changes stay: dropping them is `channels_last`."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.facts import ATTENTION_NAME, StepFacts
from tb_gpu_advisor.graph.fixes.autocast import CAST_BYTES, achieved_bandwidth, autocast, cast_host_ps
from tb_gpu_advisor.graph.simulate import Changes

# Kernels a matrix op runs with dimensions not multiples of 8 reach a smaller share of the Tensor
# Cores' peak, by precision and alignment (odd: cuBLAS's align1 kernels; even: align2/4). 16-bit,
# even: 3.1x slower than aligned for dims 2,044 and 8,176 on an H100 (tests/data/gpu/
# torch_fp16_odd_dims: it grades no pair). 16-bit, odd: 6.0x for GPT-2's vocabulary of 50,257 on an
# H200 (114-118 TFLOP/s against 680-715 for its aligned GEMMs), and TF32 2.3x (tests/data/gpu_pairs/
# gpt2_bf16 and gpt2_tf32: fitted there, so the GPT-2 precision pairs do not grade the model; left out,
# the H100's 3.0 stands for them: `python benchmarks/whatif_pairs.py --loo`)
SLOWDOWN = {("16", True): 6.0, ("16", False): 3.0, ("tf32", True): 2.3, ("tf32", False): 2.3}
# what the slowdowns are without the pairs they were fitted on (the leave-one-out's model)
UNFITTED_SLOWDOWN = {("16", True): 3.0, ("16", False): 3.0, ("tf32", True): 3.0, ("tf32", False): 3.0}
# 16-bit attention kernels (FlashAttention-2 and cuDNN's fused attention, head dimension 64) reach
# about 35% of the Tensor Cores' dense peak on an H100 on full tiles (Shah et al., "FlashAttention-3",
# 2024: "FlashAttention-2 achieves only 35% utilization on the H100 GPU"), whatever share the fp32
# kernel reached; short or causal sequences fill their 128 x 128 tiles less (`tile_share`)
ATTENTION_SHARE = 0.35
ATTENTION_TILE = 128


def tile_share(seq: int, causal: bool) -> float:
    """The share of an attention kernel's 128 x 128 tiles of scores that is useful work: a sequence not
    a multiple of the tile pads its last tile; a causal mask leaves the tiles above the diagonal out
    and half of those on it."""
    n = -(-seq // ATTENTION_TILE)
    tiles = n * (n + 1) / 2 if causal else n * n
    useful = seq * seq / 2 if causal else seq * seq
    return useful / (tiles * ATTENTION_TILE * ATTENTION_TILE)


def attention_16(cost: roofline.OpCost, shape: str, rate: float) -> float | None:
    """A 16-bit attention kernel's time (ps), from its op's FLOPs at ATTENTION_SHARE of the peak on the
    tiles it fills; None without its sequence."""
    ts = roofline.tensors(shape)
    if not ts or len(ts[0][1]) != 4:
        return None
    _, mid1, mid2, _ = ts[0][1]
    seq = max(mid1, mid2)
    return cost.flops / (rate * 1e12 * ATTENTION_SHARE * tile_share(seq, cost.causal)) * 1e12


def precision_to(f: StepFacts, c: Changes, target: str, slowdown: dict | None = None) -> str | None:
    g, pk = f.g, f.peaks
    if pk is None or pk.rate(target) is None:
        return None
    slow = slowdown or SLOWDOWN
    sixteen = target in ("bf16", "fp16")
    d_dur = c.d_dur.astype(np.float64).copy()
    h_gap = c.h_gap.copy()
    names = f.names
    matrix = f.matrix()
    share, how = achieved_bandwidth(f)
    bw = pk.bandwidth * 1e9 * share  # bytes/s
    cast_host = cast_host_ps(f, c) if sixteen else 0.0
    retimed = casts = 0
    blind = seen = 0.0  # matrix time re-timed without shapes, and all of it
    rules = set()
    ops = np.flatnonzero(matrix)
    firsts, inv = f.groups(ops)
    for k, j in enumerate(firsts):
        cost = f.cost(j)
        old = f.precision_of(j, cost)
        if old in ("bf16", "fp16") or old == target:
            continue
        attention = (
            cost.kind == "attention" if cost is not None else bool(ATTENTION_NAME.search(names[int(g.d_name[j])]))
        )
        if target == "tf32" and attention:
            continue  # PyTorch's fp32 attention kernels do not use TF32
        r = roofline.retime(cost, old, target, pk, new_size=2 if sixteen else None)
        if r is None:
            continue
        mine = ops[inv == k]
        seen += float(d_dur[mine].sum())
        if r.ideal_old_ps <= 0:
            blind += float(d_dur[mine].sum())
        new = r.apply(d_dur[mine])
        if sixteen and attention and cost is not None:
            t = attention_16(cost, names[int(g.d_shape[j])] if g.d_shape[j] >= 0 else "", pk.rate(target) or 0.0)
            if t is not None:
                new = np.minimum(np.full(len(mine), max(t, roofline.KERNEL_FLOOR_PS)), d_dur[mine])
                rules.add("attention at its 16-bit kernels' share of the peak")
        if cost is not None and cost.kind == "matmul" and any(d % 8 for d in cost.dims):
            odd = any(d % 2 for d in cost.dims)
            new = np.minimum(new * slow[("16" if sixteen else "tf32", odd)], d_dur[mine])
        if sixteen and cost is not None and cost.weight and g.h_thread[g.d_launch[j]] == g.main_thread:
            # autocast casts the weight to 16-bit once a forward and its gradient back in the
            # backward: 6 bytes an element each way, and an op on the host for the forward's
            new = new + 2 * CAST_BYTES * cost.weight / bw * 1e12
            np.add.at(h_gap, g.d_launch[mine], int(cast_host))
            casts += 2 * len(mine)
        d_dur[mine] = new
        retimed += len(mine)
        rules.add(r.basis)
    if not retimed:
        return None
    if seen > 0 and blind >= 0.4 * seen:
        f.withheld.append(
            f"{100 * blind / seen:.0f}% of the matrix kernels' time it would re-time has no recorded shapes "
            "(the ratio of the peaks alone would guess it; `record_shapes=True` records them)"
        )
    basis = [
        f"{retimed / g.steps:.0f} matrix kernels a step re-timed at {target} on the {pk.name} "
        f"({', '.join(sorted(rules))})"
    ]
    if sixteen:
        ac = autocast(f)
        d_dur[ac.half] *= 0.5
        d_dur[ac.mixed] *= 10 / 12
        d_dur += ac.cast_bytes / bw * 1e12
        at = np.flatnonzero(ac.host_casts)
        np.add.at(h_gap, g.d_launch[at], (ac.host_casts[at] * cast_host).astype(np.int64))
        casts += ac.activations
        basis.append(
            f"autocast: {int(ac.half.sum()) / g.steps:.0f} kernels a step in 16-bit, "
            f"{int(ac.mixed.sum()) / g.steps:.0f} fp32 ops with a 16-bit input, "
            f"{casts / g.steps:.0f} casts a step added (at {100 * share:.0f}% of the bandwidth, {how})"
        )
    c.d_dur = np.round(d_dur).astype(np.int64)
    c.h_gap = h_gap
    return "; ".join(basis)


def bf16(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "bf16")


def fp16(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "fp16")


def tf32(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "tf32")
