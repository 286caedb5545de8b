"""`bf16`, `fp16`, `tf32`: each matrix kernel re-timed by a per-op roofline at the new precision; for
16-bit under autocast, what autocast does to the other ops (fixes/autocast.py: which run in 16-bit,
which stay fp32, the casts it adds). cuDNN's layout changes stay: dropping them is `channels_last`."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.facts import ATTENTION_NAME, StepFacts
from tb_gpu_advisor.graph.fixes.autocast import UPCAST_SHARE, achieved_bandwidth, autocast, cast_host_ps
from tb_gpu_advisor.graph.simulate import Changes

# Kernels a matrix op runs with dimensions not multiples of 8 reach a smaller share of the Tensor
# Cores' peak: 3.1x slower than aligned for fp16 dims of 2,044 and 8,176 on an H100 (cuBLAS's align2
# kernels; tests/data/gpu/torch_fp16_odd_dims, which grades no pair), taken for every precision and
# alignment. GPT-2's own odd vocabulary of 50,257 ran 6.0x slower in bf16 and 2.3x in TF32 on an H200
# (tests/data/gpu_pairs/gpt2_bf16, gpt2_tf32); set from those, the GPT-2 pairs would not grade the
# model (with them its bf16 saving lands at +2% instead of +8%, its TF32 one at +6% instead of +1%)
SLOWDOWN = {("16", True): 3.0, ("16", False): 3.0, ("tf32", True): 3.0, ("tf32", False): 3.0}
# the model's relative error on its held-out pairs (`python benchmarks/whatif_pairs.py`: GPT-2 +8%,
# ViT +3%, ResNet-18 +1% with channels_last, ResNet-50 -0%; TF32: GPT-2 +1%, ViT +3%), at least MIN_ERROR
ERROR_16 = 0.10
ERROR_TF32 = 0.10
# 16-bit attention kernels (FlashAttention-2 and cuDNN's fused attention, head dimension 64) reach
# about 35% of the Tensor Cores' dense peak on an H100 on full tiles (Shah et al., "FlashAttention-3",
# 2024: "FlashAttention-2 achieves only 35% utilization on the H100 GPU"), whatever share the fp32
# kernel reached; short or causal sequences fill their 128 x 128 tiles less (`tile_share`)
ATTENTION_SHARE = 0.35
ATTENTION_TILE = 128
# FlashAttention-2's backward (Dao, 2023, Algorithm 2; cuDNN's fused attention does the same) makes two
# memory-bound passes besides its matmuls: D = rowsum(dO * O) (reads dO and O, 2 bytes an element
# each) and dQ, accumulated in fp32, written back in 16-bit (4 bytes read, 2 written): 10 bytes an
# element of Q
ATTENTION_BACKWARD_BYTES = 10


def tile_share(seq: int, causal: bool) -> float:
    """The share of an attention kernel's 128 x 128 tiles of scores that is useful work: a sequence not
    a multiple of the tile pads its last tile; a causal mask leaves the tiles above the diagonal out
    and half of those on it."""
    n = -(-seq // ATTENTION_TILE)
    tiles = n * (n + 1) / 2 if causal else n * n
    useful = seq * seq / 2 if causal else seq * seq
    return useful / (tiles * ATTENTION_TILE * ATTENTION_TILE)


def attention_16(cost: roofline.OpCost, shape: str, rate: float, bandwidth: float, backward: bool) -> float | None:
    """A 16-bit attention op's time (ps), from its FLOPs at ATTENTION_SHARE of the peak on the tiles it
    fills, and a backward's memory-bound passes at `bandwidth` (bytes/s); None without its sequence."""
    ts = roofline.tensors(shape)
    if not ts or len(ts[0][1]) != 4:
        return None
    n, mid1, mid2, dim = ts[0][1]
    seq = max(mid1, mid2)
    t = cost.flops / (rate * 1e12 * ATTENTION_SHARE * tile_share(seq, cost.causal)) * 1e12
    if backward:
        t += ATTENTION_BACKWARD_BYTES * n * mid1 * mid2 * dim / bandwidth * 1e12
    return t


def precision_to(f: StepFacts, c: Changes, target: str, slowdown: dict | None = None) -> str | None:
    g, pk = f.g, f.peaks
    if pk is None or pk.rate(target) is None:
        return None
    slow = slowdown or SLOWDOWN
    sixteen = target in ("bf16", "fp16")
    d_dur = c.d_dur.astype(np.float64).copy()
    h_gap = c.h_gap.copy()
    matrix = f.matrix()
    share, how = achieved_bandwidth(f)
    bw = pk.bandwidth * 1e9 * share  # bytes/s
    cast_host = cast_host_ps(f, c) if sixteen else 0.0
    ops = np.flatnonzero(matrix)
    # the matrix ops' re-timing depends only on their durations: found once for each (the what-if asks
    # again at each end of the profiler's range, and in each combination of fixes)
    key = f"retime|{target}|{sorted(slow.items())}|{hash(d_dur[ops].tobytes())}"
    if key not in f.memo:
        f.memo[key] = _retime(f, d_dur[ops], ops, target, slow, bw)
    found = f.memo[key]
    assert isinstance(found, tuple)
    new_ops, retimed, blind, seen, rules = found
    d_dur[ops] = new_ops
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
        ac = autocast(f, bw)
        d_dur[ac.half] *= 0.5
        # an fp32 op of one 16-bit input moves 10 bytes of 12, in ATen's unrolled kernel (as up-casts)
        d_dur[ac.mixed] *= 10 / 12 / UPCAST_SHARE
        d_dur += ac.cast_ps
        at = np.flatnonzero(ac.host_casts)
        np.add.at(h_gap, g.d_launch[at], (ac.host_casts[at] * cast_host).astype(np.int64))
        casts = ac.activations + ac.weights
        basis.append(
            f"autocast: {int(ac.half.sum()) / g.steps:.0f} kernels a step in 16-bit, "
            f"{int(ac.mixed.sum()) / g.steps:.0f} fp32 ops with a 16-bit input, "
            f"{casts / g.steps:.0f} casts a step added (at {100 * share:.0f}% of the bandwidth, {how})"
        )
    c.d_dur = np.round(d_dur).astype(np.int64)
    c.h_gap = h_gap
    return "; ".join(basis)


def _retime(
    f: StepFacts, dur: np.ndarray, ops: np.ndarray, target: str, slow: dict, bw: float
) -> tuple[np.ndarray, int, float, float, set[str]]:
    """The matrix ops `ops` (of durations `dur`) re-timed at `target`: (their new durations, how many
    were re-timed, the time of those re-timed without shapes, the time of all re-timed, the rules)."""
    g, pk, names = f.g, f.peaks, f.names
    assert pk is not None
    sixteen = target in ("bf16", "fp16")
    out = dur.copy()
    retimed = 0
    blind = seen = 0.0
    rules: set[str] = set()
    firsts, inv = f.groups(ops)
    for k, j in enumerate(firsts):
        cost = f.cost(j)
        old = f.precision_of(j, cost)
        if old not in ("fp32", "tf32") or old == target:  # 16-bit, FP8 or of unknown units: left as they are
            continue
        attention = (
            cost.kind == "attention" if cost is not None else bool(ATTENTION_NAME.search(names[int(g.d_name[j])]))
        )
        if target == "tf32" and attention:
            continue  # PyTorch's fp32 attention kernels do not use TF32
        r = roofline.retime(cost, old, target, pk, new_size=2 if sixteen else None)
        if r is None:
            continue
        mine = np.flatnonzero(inv == k)
        seen += float(out[mine].sum())
        if r.ideal_old_ps <= 0:
            blind += float(out[mine].sum())
        new = r.apply(out[mine])
        if sixteen and attention and cost is not None:
            op = names[int(f.d_type[j])] if f.d_type[j] >= 0 else ""
            shape = names[int(g.d_shape[j])] if g.d_shape[j] >= 0 else ""
            t = attention_16(cost, shape, pk.rate(target) or 0.0, bw, op.endswith("_backward"))
            if t is not None:  # a group is one kernel of its op's calls (fp32 attention runs one)
                new = np.minimum(np.full(len(mine), max(t, roofline.KERNEL_FLOOR_PS)), out[mine])
                rules.add("attention at its 16-bit kernels' share of the peak")
        if cost is not None and cost.kind == "matmul" and any(d % 8 for d in cost.dims):
            odd = any(d % 2 for d in cost.dims)
            new = np.minimum(new * slow[("16" if sixteen else "tf32", odd)], out[mine])
        out[mine] = new
        retimed += len(mine)
        rules.add(r.basis)
    return out, retimed, blind, seen, rules


def bf16(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "bf16")


def fp16(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "fp16")


def tf32(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "tf32")
