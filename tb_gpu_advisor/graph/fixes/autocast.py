"""What autocast (`torch.autocast` to bf16 or fp16) does to the ops around the matrix ops, read from the
ops' recorded dtypes and their order in the forward, per PyTorch's automatic mixed precision rules
(https://pytorch.org/docs/stable/amp.html, "Autocast op reference"):

- matmuls, convolutions and attention run in 16-bit: their inputs are cast to it where they are fp32
  (an activation an fp32 op made; each weight once a forward, its gradient back in the backward);
- the ops of the "autocast to float32" list (norms, softmax, losses, pow, exp, sum, ...) run in fp32:
  a 16-bit input is cast up (and its gradient back);
- any other op runs in the type of its inputs, and an op of two inputs of different types in the
  wider: so an element-wise op after a 16-bit matmul runs in 16-bit (half the bytes), but the residual
  add of a transformer, whose other input is the fp32 stream a layer norm keeps, runs in fp32 (and
  the gradient of its 16-bit input is cast back in the backward);
- a backward kernel runs in its forward op's type (`gelu_backward` in gelu's).

Each cast is a kernel that reads and writes the tensor (4 + 2 bytes an element): down to 16-bit at the
bandwidth the trace's own element-wise kernels reach (`achieved_bandwidth`), up to fp32 at UPCAST_SHARE
of it; and an op the host dispatches at what the trace's own single-kernel element-wise ops cost it
(`cast_host_ps`)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from tb_gpu_advisor.graph import roofline
from tb_gpu_advisor.graph.build import LAUNCH
from tb_gpu_advisor.graph.facts import StepFacts
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.profile import Kind

# Autocast runs these ops (and their backward) in fp32 (PyTorch's "CUDA ops that can autocast to
# float32" list)
AUTOCAST_FP32 = re.compile(
    r"layer_norm|group_norm|aten::(linalg_vector_)?norm|softmax|nll_loss|cross_entropy|mse_loss|l1_loss|"
    r"binary_cross_entropy|kl_div|aten::pow|aten::exp|aten::log\b|aten::log_|rsqrt|reciprocal|cumsum|"
    r"cumprod|aten::prod|aten::sum|aten::mean|cosine_similarity|aten::dist|cdist|pdist|renorm|softplus"
)
# element-wise ops of two tensors: they run in the wider of their inputs' types
BINARY = re.compile(r"^aten::(add|sub|mul|div|where|addcmul|addcdiv|maximum|minimum|rsub)_?$")
CASTS = ("aten::copy_", "aten::to", "aten::_to_copy")
# matrix ops whose first input is a bias, their activation the second
WITH_BIAS_FIRST = ("aten::addmm", "aten::_addmm_activation", "aten::baddbmm")
FOREACH = re.compile(r"multi_tensor_apply|foreach|fused_adam|fused_sgd", re.I)
# backward ops named for another forward op than theirs (ReLU's backward is ATen's threshold_backward)
BACKWARD_OF = {"aten::threshold_backward": ("aten::relu", "aten::relu_", "aten::clamp_min", "aten::clamp_min_")}
# A cast moves 4 bytes and 2 bytes an element (read and write)
CAST_BYTES = 6
# Casts up to fp32 run in ATen's unrolled element-wise kernel, casts down to 16-bit in its vectorized
# one: on an H100 (tests/data/gpu/torch_bf16, which grades no held-out pair) the up-casts moved 1.94
# TB/s and the down-casts 3.15, 0.6 of it
UPCAST_SHARE = 0.6
# element-wise kernels shorter than this are launch-bound: they do not tell the bandwidth
MEASURED_KERNEL_PS = 20_000_000
# without element-wise kernels to measure, memory-bound kernels are taken at this share of the data
# sheet's bandwidth: STREAM-like copies reach 0.8-0.9 of HBM's on data-centre GPUs (NVIDIA's CUDA
# best-practices guide, "Effective bandwidth"), element-wise kernels with launch tails somewhat less
BANDWIDTH_SHARE = 0.7


@dataclasses.dataclass
class Autocast:
    """Per device op: runs in 16-bit under autocast (half its bytes), runs in fp32 with one 16-bit input
    (`mixed`: 10 bytes of 12), and the cast bytes autocast adds for it (forward and backward), and the
    casts the host dispatches for it."""

    half: np.ndarray
    mixed: np.ndarray  # an fp32 op with a 16-bit input: ATen's unrolled kernel, at UPCAST_SHARE
    cast_ps: np.ndarray  # the casts' kernel time autocast adds for each device op (forward and backward)
    host_casts: np.ndarray
    activations: int  # activation casts in the window (forward and backward)
    weights: int  # weight casts in the window (forward and backward)


def _numel(shape: str, k: int = 0) -> int:
    ts = roofline.tensors(shape)
    if len(ts) <= k:
        return 0
    n = 1
    for d in ts[k][1]:
        n *= d
    return n


def achieved_bandwidth(f: StepFacts) -> tuple[float, str]:
    """The share of the data sheet's bandwidth the trace's own element-wise kernels reach (their
    duration-weighted median: each reads its tensor inputs and writes one of the first's size), and
    how it was found."""
    pk = f.peaks
    if pk is None:
        return BANDWIDTH_SHARE, "no peaks"
    if "bandwidth" in f.cache:
        share = float(f.cache["bandwidth"][0])
        return share, "measured on the trace's element-wise kernels" if share != BANDWIDTH_SHARE else "typical"
    g, names = f.g, f.names
    kernel = (g.d_kind == Kind.KERNEL) & ~f.matrix() & (g.d_dur >= MEASURED_KERNEL_PS) & (g.d_shape >= 0)
    ew = np.flatnonzero(kernel & f.by_name(g.d_name, lambda n: "elementwise" in n))
    # the bytes each distinct call's shapes move (its tensor inputs read, one of the first's size written)
    shapes, inv = np.unique(g.d_shape[ew], return_inverse=True)
    moved = np.zeros(len(shapes))
    for k, sid in enumerate(shapes.tolist()):
        sizes = [
            int(np.prod(d)) * roofline.ELEMENT_BYTES.get(t, 4)
            for t, d in roofline.tensors(names[sid])
            if len(d) >= 1 and t != "scalar"
        ]
        moved[k] = sum(sizes) + sizes[0] if sizes else 0.0
    by = moved[inv.reshape(-1)]
    has = by > 0
    share = BANDWIDTH_SHARE
    if has.sum() >= 5:
        dur = g.d_dur[ew][has].astype(np.float64)
        v = by[has] / (dur / 1e12) / (pk.bandwidth * 1e9)
        o = np.argsort(v)
        cw = np.cumsum(dur[o])
        share = float(min(max(v[o][np.searchsorted(cw, cw[-1] / 2)], 0.1), 1.0))
    f.cache["bandwidth"] = np.asarray([share])
    return share, "measured on the trace's element-wise kernels" if share != BANDWIDTH_SHARE else "typical"


def cast_host_ps(f: StepFacts, c: Changes) -> float:
    """What dispatching a cast costs the host: the median host time before the launch of the trace's
    element-wise kernels on the training loop's thread, the profiler's cost taken out (a cast is one
    such op)."""
    g = f.g
    ew = (g.d_kind == Kind.KERNEL) & ~f.matrix() & f.by_name(g.d_name, lambda n: "elementwise" in n)
    at = g.d_launch[ew]
    at = at[(g.h_kind[at] == LAUNCH) & (g.h_thread[at] == g.main_thread)]
    if not len(at):
        return 0.0
    return float(np.median(np.maximum(c.h_gap[at], 0) + c.h_dur[at]))


def autocast(f: StepFacts, bandwidth: float) -> Autocast:
    """Which kernels autocast runs in 16-bit and the casts it adds, from the forward's ops in order;
    `bandwidth`: what the trace's element-wise kernels reach (bytes/s). Found once per trace (every
    16-bit what-if, at each end of the profiler's range, asks for the same)."""
    key = f"autocast|{bandwidth}"
    if key not in f.memo:
        f.memo[key] = _autocast(f, bandwidth)
    found = f.memo[key]
    assert isinstance(found, Autocast)
    return found


def _autocast(f: StepFacts, bandwidth: float) -> Autocast:
    g, names = f.g, f.names
    n = g.device_ops
    half = np.zeros(n, bool)
    mixed = np.zeros(n, bool)
    cast_ps = np.zeros(n, np.float64)

    def cast(j: int, elements: int, up: bool) -> None:
        t = CAST_BYTES * elements / (bandwidth * (UPCAST_SHARE if up else 1.0)) * 1e12
        cast_ps[j] += max(t, roofline.KERNEL_FLOOR_PS)

    host_casts = np.zeros(n, np.int64)
    kernel = ((g.d_kind == Kind.KERNEL) | (g.d_kind == Kind.MEMCPY_D2D)) & (g.d_op >= 0)
    matrix = f.matrix()
    optimizer = g.h_optimizer[g.d_launch]
    foreach = f.by_name(g.d_name, FOREACH.search)
    fp32_op = f.by_name(f.d_type, AUTOCAST_FP32.search)
    binary = f.by_name(f.d_type, BINARY.search)
    cast_op = f.by_name(f.d_type, CASTS.__contains__)
    forward = kernel & (g.h_thread[g.d_launch] == g.main_thread) & ~optimizer & ~foreach
    # the shapes an fp32-list op takes in the forward: the stream autocast keeps in fp32 (a
    # transformer's residual stream between its layer norms)
    # the op calls with a matrix kernel (cuDNN's layout changes and bias kernels run inside them)
    call = g.h_call[g.d_launch]
    first_matrix: dict[int, int] = {}
    for i in np.flatnonzero(matrix & (call >= 0)).tolist():
        first_matrix.setdefault(int(call[i]), i)
    fp32_shapes = {
        roofline.tensors(names[int(s)])[0][1]
        for s in set(g.d_shape[forward & fp32_op].tolist())
        if s >= 0 and roofline.tensors(names[int(s)])
    }
    # the forward's kernels in launch order, each op call decided once (its first kernel)
    fw = np.flatnonzero(forward)
    fw = fw[np.argsort(g.d_launch[fw], kind="stable")]
    decided: dict[int, bool] = {}
    dtype_of_type: dict[int, list[bool]] = {}
    state16, step, activations, weights = False, -1, 0, 0
    for j in fw.tolist():
        k = int(call[j])
        if k >= 0 and k in decided:
            half[j] = decided[k]
            continue
        if int(g.h_step[g.d_launch[j]]) != step:
            state16, step = False, int(g.h_step[g.d_launch[j]])  # a step's forward starts from its fp32 batch
        shape = names[int(g.d_shape[j])] if g.d_shape[j] >= 0 else ""
        ts = roofline.tensors(shape)
        if matrix[j] or k in first_matrix:
            cost = f.cost(j if matrix[j] else first_matrix[k])
            if not state16 and cost is not None and cost.kind in ("matmul", "conv"):
                # its activation input cast to 16-bit, and the gradient to it back in the backward
                x = _numel(shape, 1 if f.names[int(f.d_type[j])] in WITH_BIAS_FIRST else 0)
                cast(j, x, up=False)
                cast(j, x, up=True)
                host_casts[j] += 1
                activations += 2
            if cost is not None and cost.weight:
                # its weight (and bias) cast to 16-bit (once a forward: autocast caches them) and their
                # gradients back to fp32 in the backward
                params = [cost.weight]
                op = f.names[int(f.d_type[j])]
                if op in WITH_BIAS_FIRST and len(ts) >= 3 and len(ts[0][1]) == 1:
                    params.append(_numel(shape, 0))
                for elements in params:
                    cast(j, elements, up=False)
                    cast(j, elements, up=True)
                    host_casts[j] += 1
                    weights += 2
            state16 = True
            half[j] = not matrix[j]  # a layout change or bias kernel of a 16-bit call
        elif fp32_op[j]:
            if state16:  # its 16-bit input cast up, the gradient back down in the backward
                cast(j, _numel(shape), up=True)
                cast(j, _numel(shape), up=False)
                host_casts[j] += 1
                activations += 2
            state16 = False
        elif cast_op[j]:
            pass  # the program's own copies keep their types
        elif binary[j] and len(ts) >= 2 and ts[0][1] in fp32_shapes:
            if state16:  # one 16-bit input to the fp32 stream: 10 bytes of 12, its gradient cast back
                mixed[j] = True
                cast(j, _numel(shape), up=False)
                activations += 1
            state16 = False
        else:
            half[j] = state16
        if k >= 0:
            decided[k] = bool(half[j])
        dtype_of_type.setdefault(int(f.d_type[j]), []).append(bool(half[j]))
    # the backward's kernels run in their forward op's type
    type_names = {int(t): names[int(t)] for t in dtype_of_type}
    by_name = {type_names[t]: sum(v) * 2 > len(v) for t, v in dtype_of_type.items()}
    backward = kernel & ~forward & ~optimizer & ~foreach & ~matrix & ~cast_op & ~fp32_op
    for t in set(f.d_type[backward].tolist()):
        op = names[int(t)]
        fwd_ops = BACKWARD_OF.get(op) or (op.replace("_backward", ""),)
        if any(by_name.get(o) or by_name.get(o.replace("aten::", "aten::native_")) for o in fwd_ops):
            half[backward & (f.d_type == t)] = True
    # the other kernels of a 16-bit matrix op's call (cuDNN's layout changes, a bias), forward and
    # backward, move 16-bit tensors
    in_matrix_call = np.zeros(n, bool)
    if first_matrix:
        in_matrix_call = np.isin(call, np.fromiter(first_matrix, np.int64)) & (call >= 0)
    half |= in_matrix_call & kernel & ~optimizer & ~foreach
    return Autocast(half & ~matrix, mixed, cast_ps, host_casts, activations, weights)
