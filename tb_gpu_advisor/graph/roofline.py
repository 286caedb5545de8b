"""FLOPs and bytes of a matrix op from its recorded input shapes (PyTorch's `record_shapes`), and the
time a kernel of it would take at another precision or with aligned dimensions.

An op's kernels keep the fraction of the roofline they reach: a kernel that ran at a share `e` of its
precision's peak (or of the memory bandwidth, where the op is memory-bound) runs at the same share of
the new precision's peak, and never faster than the op's memory bound. Where the trace has no shapes,
the rule falls back to the ratio of the two peaks, bounded by the bandwidth only through that share,
and says so (`Retime.basis`).
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache

import numpy as np

from tb_gpu_advisor.graph.hardware import Peaks
from tb_gpu_advisor.model.classify import ELEMENT_BYTES

_TENSOR = re.compile(r"([A-Za-z_][\w:]*)\[([\d,\s]*)\]")
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_addmm_activation", "aten::matmul")
LINEAR_OPS = ("aten::linear",)
CONV_FWD = ("aten::cudnn_convolution", "aten::convolution", "aten::_convolution", "aten::conv2d", "aten::conv1d")
CONV_BWD = ("aten::convolution_backward", "aten::cudnn_convolution_backward")
ATTENTION = re.compile(r"^aten::_(scaled_dot_product_)?(efficient|flash|cudnn)_attention(_backward)?")
# a kernel takes at least this long, whatever its FLOPs (launch, one wave)
KERNEL_FLOOR_PS = 2_000_000
# The largest share of a precision's peak a GEMM reaches: large aligned GEMMs (an MLP 2,048 <-> 8,192
# wide, 8,192 rows) on an H100 reached 0.77 of the fp32 peak, 0.65 of TF32's and 0.82 of bf16's
# (tests/data/gpu/torch_fp32, _tf32, _bf16)
CEILING = {"fp32": 0.77, "tf32": 0.65, "bf16": 0.82, "fp16": 0.82}


@lru_cache(maxsize=65536)
def tensors(shape: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """`float[8192,768];float[768]` -> (("float", (8192, 768)), ("float", (768,)))."""
    out = []
    for dtype, dims in _TENSOR.findall(shape or ""):
        d = tuple(int(x) for x in dims.split(",") if x.strip())
        out.append((dtype.lower().removeprefix("c10::"), d))
    return tuple(out)


def _prod(d: tuple[int, ...]) -> int:
    n = 1
    for x in d:
        n *= x
    return n


@dataclasses.dataclass(frozen=True)
class OpCost:
    flops: float
    bytes: float  # at the recorded dtype
    dtype: str
    dims: tuple[int, ...]  # the dimensions that must be multiples of 8 for Tensor Cores (M, K, N: a
    # transposed operand's leading dimension can be any of them; a convolution's channels, not the stem's)
    kind: str  # "matmul", "conv", "attention"
    weight: int = 0  # elements of its weight (the second matrix, the filter): what autocast casts
    causal: bool = True  # attention: a causal mask (half the scores)


@lru_cache(maxsize=65536)
def op_cost(op: str, shape: str, out: tuple[int, ...] | None = None) -> OpCost | None:
    """The FLOPs and bytes of one call of a matrix op, from its input shapes; None for another op or
    shapes that do not fit it. `out`: a convolution's output shape, which its forward call does not
    record (its backward call's grad_output has it)."""
    ts = tensors(shape)
    mats = [t for t in ts if len(t[1]) >= 1]
    if not mats:
        return None
    dtype = mats[0][0]
    size = ELEMENT_BYTES.get(dtype, 4)
    try:
        if op in MATMUL_OPS:
            two = [t for t in ts if len(t[1]) >= 2]
            if op in ("aten::addmm", "aten::_addmm_activation", "aten::baddbmm") and len(ts) >= 3:
                two = [ts[1], ts[2]]
            if len(two) < 2:
                return None
            (_, a), (_, b) = two[0], two[1]
            batch = _prod(a[:-2]) if len(a) > 2 else 1
            m, k = (a[-2] if len(a) >= 2 else 1), a[-1]
            n = b[-1]
            if b[-2] != k:
                return None
            flops = 2.0 * batch * m * k * n
            by = size * (batch * m * k + _prod(b) + batch * m * n)
            return OpCost(flops, by, dtype, (m, k, n), "matmul", _prod(b))
        if op in LINEAR_OPS and len(ts) >= 2:
            (_, x), (_, w) = ts[0], ts[1]
            rows, k, n = _prod(x[:-1]), x[-1], w[0]
            return OpCost(
                2.0 * rows * k * n, size * (rows * k + n * k + rows * n), dtype, (rows, k, n), "matmul", n * k
            )
        if op in CONV_BWD and len(ts) >= 3:
            (_, go), (_, x), (_, w) = ts[0], ts[1], ts[2]
            if len(go) < 3 or len(w) < 3:
                return None
            # dgrad and wgrad, each as many FLOPs as the forward (grad_output carries the output size)
            fwd = 2.0 * _prod(go) * _prod(w[1:])
            by = size * (2 * _prod(go) + 2 * _prod(x) + 2 * _prod(w))
            return OpCost(2 * fwd, by, dtype, _channels(w), "conv", _prod(w))
        if op in CONV_FWD and len(ts) >= 2:
            (_, x), (_, w) = ts[0], ts[1]
            if len(x) < 3 or len(w) < 3:
                return None
            # without its output's shape, its spatial size is taken as the input's (stride 1): an upper bound
            n_out = _prod(out) if out else x[0] * w[0] * _prod(x[2:])
            fwd = 2.0 * n_out * _prod(w[1:])
            return OpCost(fwd, size * (_prod(x) + _prod(w) + n_out), dtype, _channels(w), "conv", _prod(w))
        att = ATTENTION.match(op)
        if att and len(ts) >= 3:
            (_, q), (_, k_), (_, v) = ts[0], ts[1], ts[2]
            if len(q) != 4:
                return None
            # [batch, heads, tokens, dim] (cuDNN's) or [batch, tokens, heads, dim] (flash, efficient):
            # the sequence is taken as the longer of the two middle dimensions
            n_batch, mid1, mid2, dim = q
            seq = max(mid1, mid2)
            # causal: half the scores; the op's recorded argument says (formats/kineto/rules.py's
            # `is_causal=`), else it is taken as causal (GPT-style training)
            causal = "is_causal=False" not in shape
            fwd = 4.0 * n_batch * mid1 * mid2 * dim * seq / (2 if causal else 1)
            backward = att.group(3) is not None
            flops = fwd * (2.5 if backward else 1.0)
            by = size * (_prod(q) + _prod(k_) + _prod(v) + _prod(q)) * (2 if backward else 1)
            return OpCost(flops, by, dtype, (dim,), "attention", causal=causal)
    except (IndexError, ValueError):
        return None
    return None


def _channels(w: tuple[int, ...]) -> tuple[int, ...]:
    """A convolution's channels that Tensor Cores want in multiples of 8: its output and input channels,
    but not an image's 1 to 4 input channels (the stem), which cuDNN pads itself."""
    return (w[0],) if w[1] <= 4 else (w[0], w[1])


@dataclasses.dataclass(frozen=True)
class Retime:
    """How an op's kernels re-time at another precision: from its ideal times at the old and the new
    precision (the roofline: the slower of its FLOPs at the peak and its bytes at the bandwidth) and the
    share of the new peak a GEMM reaches at most, or, without shapes, the ratio of the peaks."""

    ideal_old_ps: float  # 0 without shapes
    ideal_new_ps: float
    ceiling: float  # the new share's cap (1 where the op is memory-bound at the new precision)
    ratio: float  # without shapes: new/old peak
    basis: str

    def apply(self, dur_ps: np.ndarray) -> np.ndarray:
        """The kernels' new times: each keeps the share of the roofline it reached (capped at 1: a FLOP
        count that overestimates; and at the new precision's ceiling), never slower than before, nor
        under the kernel floor."""
        dur = np.asarray(dur_ps, np.float64)
        if self.ideal_old_ps <= 0:
            new = dur * self.ratio
        else:
            share = np.minimum(np.divide(self.ideal_old_ps, dur, out=np.ones_like(dur), where=dur > 0), 1.0)
            share = np.minimum(share, self.ceiling)
            new = self.ideal_new_ps / share
        return np.maximum(np.minimum(new, dur), np.minimum(dur, KERNEL_FLOOR_PS))


def retime(cost: OpCost | None, old: str, new: str, peaks: Peaks, new_size: int | None = None) -> Retime | None:
    """How kernels of an op (`cost`, the op's own; None without shapes) at precision `old` re-time at
    `new` ("tf32", "bf16", "fp16"); None where the GPU has no such precision."""
    p_old, p_new = peaks.rate(old), peaks.rate(new)
    if not p_old or not p_new:
        return None
    bw = peaks.bandwidth * 1e9  # bytes/s
    if cost is None:
        return Retime(0.0, 0.0, 1.0, p_old / p_new, "peak ratio (no shapes in the trace)")
    old_size = ELEMENT_BYTES.get(cost.dtype, 4)
    by_new = cost.bytes * (new_size or old_size) / old_size
    ideal_old = max(cost.flops / (p_old * 1e12), cost.bytes / bw) * 1e12  # ps
    ideal_new = max(cost.flops / (p_new * 1e12), by_new / bw) * 1e12
    compute_bound = cost.flops / (p_new * 1e12) >= by_new / bw
    ceiling = CEILING.get(new, 1.0) if compute_bound else 1.0
    return Retime(ideal_old, ideal_new, ceiling, 1.0, "roofline from the recorded shapes")


def is_matrix_op(op: str) -> bool:
    """A matmul, convolution or attention op (PyTorch's ATen names)."""
    return op in MATMUL_OPS or op in LINEAR_OPS or op in CONV_FWD or op in CONV_BWD or bool(ATTENTION.match(op))
