"""`bf16`, `fp16`, `tf32`: each matrix kernel re-timed by a per-op roofline at the new precision; for
16-bit under autocast, the casts it adds, the memory-bound kernels it halves and cuDNN's layout changes
that channels_last removes."""

from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.facts import ATTENTION_NAME, LAYOUT, StepFacts
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.profile import Kind

# Kernels a 16-bit matrix op runs with dimensions not multiples of 8 reach a smaller share of the
# Tensor Cores' peak: 114-118 TFLOP/s for GPT-2's vocabulary of 50,257 on an H200 against 680-715 for
# its aligned GEMMs (tests/data/gpu_pairs/gpt2_bf16), 3.1x slower on an H100 with dims of 2,044
# (tests/data/gpu/torch_fp16_odd_dims)
ODD_DIMS_SLOWDOWN = 3.0
# by precision and alignment (odd: align1 kernels; even: align2/4): bf16 with an odd vocabulary 6.0x
# slower than aligned on an H200 (GPT-2, tests/data/gpu_pairs), fp16 with dims 2,044 and 8,176 3.1x
# on an H100 (tests/data/gpu/torch_fp16_odd_dims), TF32 with the odd vocabulary 2.3x (gpt2_tf32)
SLOWDOWN = {("16", True): 6.0, ("16", False): 3.0, ("tf32", True): 2.3, ("tf32", False): 2.3}
# Autocast runs these ops (and their backward) in fp32 (PyTorch's "CUDA ops that can autocast to
# float32" list): their kernels keep their time under bf16
AUTOCAST_FP32 = re.compile(
    r"layer_norm|group_norm|aten::(linalg_vector_)?norm|softmax|nll_loss|cross_entropy|mse_loss|l1_loss|"
    r"binary_cross_entropy|kl_div|aten::pow|aten::exp|aten::log\b|aten::log_|rsqrt|reciprocal|cumsum|"
    r"cumprod|aten::prod|aten::sum|aten::mean|cosine_similarity|aten::dist|cdist|pdist|renorm|softplus"
)
FOREACH = re.compile(r"multi_tensor_apply|foreach|fused_adam|fused_sgd", re.I)
# a cast's host cost under autocast (aten::to and its copy, without the profiler)
CAST_HOST_PS = 15_000_000
# memory-bound kernels reach about this share of the bandwidth
BANDWIDTH_SHARE = 0.7


def precision_to(f: StepFacts, c: Changes, target: str) -> str | None:
    g, pk = f.g, f.peaks
    if pk is None or pk.rate(target) is None:
        return None
    sixteen = target in ("bf16", "fp16")
    d_dur = c.d_dur.astype(np.float64).copy()
    h_gap = c.h_gap.copy()
    names = f.names
    matrix = f.matrix()
    bw = pk.bandwidth * 1e9 * BANDWIDTH_SHARE  # bytes/s
    retimed = casts = halved = 0
    removed = 0.0
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
        new = r.apply(d_dur[mine])
        if cost is not None and cost.kind == "matmul" and any(d % 8 for d in cost.dims):
            odd = any(d % 2 for d in cost.dims)
            new = np.minimum(new * SLOWDOWN[("16" if sixteen else "tf32", odd)], d_dur[mine])
        if sixteen and cost is not None and cost.weight and g.h_thread[g.d_launch[j]] == g.main_thread:
            # autocast casts the weight to 16-bit in the forward and its gradient back in the
            # backward: 6 bytes an element each way, and two ops on the host
            new = new + 2 * max(6.0 * cost.weight / bw * 1e12, roofline.KERNEL_FLOOR_PS)
            np.add.at(h_gap, g.d_launch[mine], 2 * CAST_HOST_PS)
            casts += 2 * len(mine)
        d_dur[mine] = new
        retimed += len(mine)
        rules.add(r.basis)
    if not retimed:
        return None
    basis = [
        f"{retimed / g.steps:.0f} matrix kernels a step re-timed at {target} on the {pk.name} "
        f"({', '.join(sorted(rules))})"
    ]
    if sixteen:
        # memory-bound kernels of ops autocast leaves in 16-bit move half the bytes; cuDNN's layout
        # changes go with channels_last (convolutions)
        kernels = ~matrix & (g.d_kind == Kind.KERNEL)
        layout = kernels & f.by_name(g.d_name, LAYOUT.search)
        removed = float(d_dur[layout].sum())
        d_dur[layout] = 0
        first_dtype = f.by_name(g.d_shape, lambda s: (ts := roofline.tensors(s)) and ts[0][0] == "float")
        fp32_op = f.by_name(
            f.d_type, lambda o: AUTOCAST_FP32.search(o) or o in ("aten::copy_", "aten::to", "aten::_to_copy")
        )
        foreach = f.by_name(g.d_name, FOREACH.search)
        half = kernels & ~layout & (g.d_op >= 0) & ~g.h_optimizer[g.d_launch] & ~foreach & ~fp32_op & first_dtype
        d_dur[half] *= 0.5
        halved = int(half.sum())
        if halved:
            basis.append(f"{halved / g.steps:.0f} memory-bound kernels a step move half the bytes")
        if casts:
            basis.append(f"{casts / g.steps:.0f} casts a step added")
        if removed:
            # their launch calls go too (cuDNN's, inside the convolution op: the op's dispatch stays),
            # where they launched nothing else
            layout_launch = np.zeros(len(g.h_kind), bool)
            layout_launch[g.d_launch[layout]] = True
            other = np.zeros(len(g.h_kind), bool)
            other[g.d_launch[d_dur > 0]] = True
            gone = layout_launch & ~other
            c.h_dur = np.where(gone, 0, c.h_dur)
            basis.append(f"channels_last: cuDNN's layout changes gone ({gone.sum() / g.steps:.0f} launches a step)")
    c.d_dur = np.round(d_dur).astype(np.int64)
    c.h_gap = h_gap
    return "; ".join(basis)


def bf16(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "bf16")


def fp16(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "fp16")


def tf32(f: StepFacts, c: Changes) -> str | None:
    return precision_to(f, c, "tf32")
