"""Kernels of one GPU in its steps: matmul/convolution kernels on Tensor Cores or not, 16-bit or not,
small kernels, chains of small element-wise kernels, 16-bit softmax."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from tb_gpu_advisor.measures.names import TENSOR_CORE_ELIGIBLE, NameClasses, sum_by
from tb_gpu_advisor.measures.window import Window, gpu_window
from tb_gpu_advisor.model.arrays import Constant, Unkept, distinct, unique_inverse
from tb_gpu_advisor.model.profile import Column, EventTable, Flag, Kind, Profile
from tb_gpu_advisor.model.steps import Steps

KERNEL_COLUMNS = ("dur_ps", "name", "op", "flags")  # read by most kernel checks: gathered once, kept
RARE_COLUMNS = ("start_ps", "stream", "step")  # read by a few: gathered from the GPU's table when read


@dataclasses.dataclass(frozen=True, slots=True)
class MatmulMasks:
    """Masks over a GPU's kernels."""

    eligible: np.ndarray  # Tensor-Core-eligible (matmul/convolution)
    fp16: np.ndarray  # 16-bit
    tc: np.ndarray  # on Tensor Cores
    fp8: np.ndarray  # 8-bit floats or narrower (FP8, FP4, MX): a precision of its own, never "32-bit"
    unknown: np.ndarray  # nothing in the kernel naming table identifies the kernel (model/kernel_naming.py)


@dataclasses.dataclass(frozen=True, slots=True)
class KernelRow:
    kernel: str
    op: str
    precision: str  # "16-bit", "FP8" (8-bit floats or narrower) or "32-bit"
    ms_per_step: float
    count: int


@dataclasses.dataclass(frozen=True, slots=True)
class ElementwiseChains:
    """Runs of consecutive small element-wise kernels on one stream."""

    ps: float  # their time
    chains: int
    window: Window | None  # the longest run (the first of the longest)


@dataclasses.dataclass(frozen=True, slots=True)
class SmallKernelRow:
    op_type: str  # the op type, or the kernel name when no op claims the kernels
    kernels: int
    per_step: float
    total_ms: float
    mean_us: float


@dataclasses.dataclass(frozen=True, slots=True)
class SmallKernels:
    """Kernel groups (by op type) whose mean kernel is small."""

    count: int  # small kernels
    ps: float  # their time
    per_step: float
    compute_ps: float  # the time of every kernel in the steps
    rows: tuple[SmallKernelRow, ...]  # most kernels first, at most 8
    windows: tuple[Window, ...]  # the first step's run of them


def _one(k: EventTable, key: str, i: int) -> int:
    """Column `key` of kernel i, the column not gathered for every kernel to read one."""
    return int(k.peek_at(key, np.array([i]))[0])


def _end(k: EventTable, i: int) -> int:
    """The end of kernel i: not `k.end_ps[i]`, which keeps an end for every kernel to read one."""
    return _one(k, "start_ps", i) + int(k.dur_ps[i])


def kernels(events: EventTable) -> EventTable:
    """The kernels that start in the steps (collectives excluded). Their start, stream and step are
    gathered from `events` each time they are read, not kept (17 bytes a kernel: 38 MB on the 265 MB
    benchmark file, with every kernel check's measures kept until the checks end)."""

    def rows() -> np.ndarray:
        return np.flatnonzero((events.kind == Kind.KERNEL) & (events.step >= 0))

    at = rows()
    # gathered now, all four (the kernel checks read each): the rows' index is not kept until then
    cols: dict[str, Column] = {c: events.column(c)[at] for c in KERNEL_COLUMNS}
    cols["kind"] = Constant(len(at), Kind.KERNEL, np.int8)
    for c in RARE_COLUMNS:
        cols[c] = Unkept(events, c, rows, np.dtype(np.int64 if c == "start_ps" else np.int32))
    return EventTable(cols, len(at))


def matmul_masks(k: EventTable, names: NameClasses) -> MatmulMasks:
    flags = k.flags
    return MatmulMasks(
        names.eligible(k),
        (flags & Flag.FP16) != 0,
        (flags & Flag.TENSOR_CORE) != 0,
        (flags & Flag.FP8) != 0,
        (flags & Flag.UNIT_UNKNOWN) != 0,
    )


def matmul_time(k: EventTable, mm: MatmulMasks) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Time of matmul/convolution kernels by [16-bit or narrower][unit]: unit 0 a kernel its naming says
    runs without Tensor Cores, 1 one on Tensor Cores, 2 one nothing identifies (kernel_naming.UNKNOWN)."""
    e = mm.eligible
    dur = k.dur_ps[e]
    low = (mm.fp16[e] | mm.fp8[e]).astype(np.int8)
    unit = np.where(mm.unknown[e], 2, mm.tc[e].astype(np.int8))
    code = low * 3 + unit
    t = [[int(dur[code == f * 3 + c].sum()) for c in (0, 1, 2)] for f in (0, 1)]
    return (t[0][0], t[0][1], t[0][2]), (t[1][0], t[1][1], t[1][2])


def kernel_rows(p: Profile, k: EventTable, mask: np.ndarray, n: int, limit: int = 8) -> tuple[KernelRow, ...]:
    """Top kernels of `mask` by time, per kernel name, op and precision (16-bit, FP8 or 32-bit)."""
    flags = k.flags
    prec = np.where((flags & Flag.FP8) != 0, 2, ((flags & Flag.FP16) != 0).astype(np.int64))
    key = (k.name.astype(np.int64) * (len(p.ops) + 1) + (k.op.astype(np.int64) + 1)) * 3 + prec
    keys, inv = unique_inverse(key[mask])
    sums = np.bincount(inv, weights=k.dur_ps[mask].astype(float)) if len(keys) else np.zeros(0)
    counts = np.bincount(inv) if len(keys) else np.zeros(0, np.int64)
    rows = []
    for j in np.argsort(-sums, kind="stable")[:limit].tolist():
        kk = int(keys[j])
        name, rest = divmod(kk // 3, len(p.ops) + 1)
        rows.append(
            KernelRow(
                kernel=p.names[name],
                op=p.op_name(rest - 1),
                precision=("32-bit", "16-bit", "FP8")[kk % 3],
                ms_per_step=float(sums[j]) / 1e9 / n,
                count=int(counts[j]),
            )
        )
    return tuple(rows)


def longest_kernel(p: Profile, device_id: int, k: EventTable, mask: np.ndarray, label: str) -> Window | None:
    if not mask.any():
        return None
    i = int(np.flatnonzero(mask)[np.argmax(k.dur_ps[mask])])
    op = p.op_name(int(k.op[i]))
    return gpu_window(
        p,
        device_id,
        _one(k, "start_ps", i),
        _end(k, i),
        f"{op or 'kernel'} {label}",
        [p.names[k.name[i]]],
        stream=_one(k, "stream", i),
    )


def matmul_ops(k: EventTable, sel: np.ndarray, tc: np.ndarray) -> dict[int, tuple[float, bool]]:
    """Per op of the kernels of `sel`: (time, whether all its kernels use Tensor Cores)."""
    sel = sel & (k.op >= 0)
    ops, time = sum_by(k.op[sel], k.dur_ps[sel])
    off_tc = sum_by(k.op[sel], ~tc[sel])[1]  # kernels of each op not on Tensor Cores
    return {o: (float(t), not c) for o, t, c in zip(ops.tolist(), time.tolist(), off_tc.tolist())}


def softmax16(k: EventTable, names: NameClasses) -> dict[int, float]:
    """16-bit softmax kernels outside the loss: time per op."""
    sel = names.by_op(k.op, names.softmax_outside_loss_op) & ((k.flags & Flag.FP16) != 0)
    ops, time = sum_by(k.op[sel], k.dur_ps[sel])
    return {o: float(t) for o, t in zip(ops.tolist(), time.tolist())}


def elementwise_chains(
    p: Profile, device_id: int, k: EventTable, names: NameClasses, max_ps: float, min_chain: int
) -> ElementwiseChains:
    """Runs of at least `min_chain` consecutive element-wise kernels of at most `max_ps` on one stream."""
    small = names.elementwise(k) & (k.dur_ps <= max_ps)
    total, chains, best = 0, 0, None
    streams = k.stream  # gathered once
    for stream in distinct(streams).tolist():
        on = np.flatnonzero(streams == stream)
        edges = np.diff(np.r_[0, small[on].astype(np.int8), 0])
        begin, end = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)  # runs of small kernels
        long = end - begin >= min_chain
        if not long.any():
            continue
        begin, end = begin[long], end[long]
        cum = np.r_[0, np.cumsum(k.dur_ps[on])]
        total += int((cum[end] - cum[begin]).sum())
        chains += len(begin)
        j = int(np.argmax(end - begin))  # the first of the longest
        if best is None or end[j] - begin[j] > best[0]:
            first, last = on[begin[j]], on[end[j] - 1]
            best = (
                int(end[j] - begin[j]),
                _one(k, "start_ps", first),
                _end(k, last),
                int(stream),
                p.names[k.name[first]],
            )
    window = None
    if best:
        label = f"{best[0]} small element-wise kernels in a row"
        window = gpu_window(p, device_id, best[1], best[2], label, [best[4]], stream=best[3])
    return ElementwiseChains(float(total), chains, window)


def small_kernels(
    p: Profile, device_id: int, k: EventTable, steps: Steps, max_ps: float, untyped: np.ndarray
) -> SmallKernels:
    """Kernels in the steps grouped by op type (or kernel name when no op, or an op without a type,
    claims them: JAX's `XlaModule` holds every kernel of a module); groups whose mean kernel is at
    most `max_ps` are small (`untyped`: the ops without a type, NameClasses.untyped_op)."""
    n = max(len(steps), 1)
    types = np.r_[np.asarray(p.ops.type, np.int64), -1]
    types[untyped] = -1
    op_type = types[k.op]
    key = np.where(op_type >= 0, op_type, -2 - k.name.astype(np.int64))
    uniq, inv = unique_inverse(key)
    counts = np.bincount(inv, minlength=len(uniq))
    sums = np.bincount(inv, weights=k.dur_ps.astype(float), minlength=len(uniq))
    small = (counts > 0) & (sums <= max_ps * counts)
    rows = []
    for j in np.flatnonzero(small)[np.argsort(-counts[small], kind="stable")][:8].tolist():
        u = int(uniq[j])
        rows.append(
            SmallKernelRow(
                op_type=p.names[u] if u >= 0 else p.names[-2 - u],
                kernels=int(counts[j]),
                per_step=int(counts[j]) / n,
                total_ms=float(sums[j]) / 1e9,
                mean_us=float(sums[j]) / counts[j] / 1e6,
            )
        )
    is_small = small[inv] if len(k) else np.zeros(0, bool)
    windows = []
    if is_small.any():
        step = k.step  # gathered once
        first = int(step[is_small].min())
        sel = np.flatnonzero(is_small & (step == first))[:50]
        s, e = _one(k, "start_ps", int(sel[0])), _end(k, int(sel[-1]))
        label = f"{len(sel)} small kernels in step {int(steps.number[first])}"
        windows.append(
            gpu_window(p, device_id, s, e, label, [p.names[k.name[sel[0]]]], stream=_one(k, "stream", int(sel[0])))
        )
    count = int(counts[small].sum())
    return SmallKernels(count, float(sums[small].sum()), count / n, float(k.dur_ps.sum()), tuple(rows), tuple(windows))


# -- matmul and convolution shapes -------------------------------------------------------------------

_TENSOR = re.compile(
    r"(half|bfloat16|bf16|f16|float16|int8|s8|float|f32|double|c10::Half|c10::BFloat16|int32|int64)"
    r"\[([\d,\s]*)\]",
    re.I,
)
SIXTEEN_BIT = ("half", "bfloat16", "bf16", "f16", "float16", "c10::half", "c10::bfloat16")
INT8 = ("int8", "s8")
Shapes = list[tuple[str, list[int]]]


@dataclasses.dataclass(frozen=True, slots=True)
class OddDimRow:
    """A 16-bit matmul/convolution op whose dimensions are not multiples of 8 (16 for int8)."""

    op: str
    type: str
    shape: str
    padded: str  # the shape padded to the multiples
    ms_per_step: float  # per step per GPU
    uses_tensor_cores: bool  # whether all its kernels do


@dataclasses.dataclass(frozen=True, slots=True)
class OddDims:
    with_shape: tuple[int, ...]  # the 16-bit matmul/convolution ops with shapes
    rows: tuple[OddDimRow, ...]  # of them, those with odd dimensions, most time first


def parse_shapes(shape: str) -> Shapes:
    """`(half[4000,1001];half[1001,3999])` -> [("half", [4000, 1001]), ("half", [1001, 3999])]."""
    out = []
    for m in _TENSOR.finditer(shape or ""):
        # a piece that is not one number (a form feed between digits, from a broken file) is no dim
        dims = [int(x) for x in (p.strip() for p in m.group(2).split(",")) if x.isdecimal() and len(x) < 19]
        out.append((m.group(1).lower(), dims))
    return out


# An image's input channels (RGB, RGBA, grey): cuDNN pads a stem convolution's own, so it is no padding
# advice's subject
STEM_CHANNELS = 4


def _bad_dims(op_type: str, shapes: Shapes) -> list[tuple[int, int, int]]:
    """(input index, dim index, size) of GEMM/conv dimensions that are not multiples of 8 (int8: 16):
    a matmul's matrix dimensions; a convolution's channels only (not its spatial dimensions: a 1x1
    convolution's GEMM M is N·H·W, which needs no padding), PyTorch's NCHW input and [out, in, kh, kw]
    filter, TensorFlow's NHWC input and [kh, kw, in, out] filter, and not a stem's 1-4 input channels."""
    bad = []
    conv = "conv" in op_type.lower()
    torch = op_type.startswith("aten::")
    for i, (dtype, dims) in enumerate(shapes[:2]):
        if dtype not in SIXTEEN_BIT + INT8:
            continue
        mult = 16 if dtype in INT8 else 8
        if conv:
            if len(dims) < 3:
                continue
            if i == 0:
                axes = [1] if torch else [len(dims) - 1]  # the input's channels
            else:
                axes = [0, 1] if torch else [len(dims) - 1, len(dims) - 2]  # the filter's out, in
            in_axis = (1 if torch else len(dims) - 1) if i == 0 else (1 if torch else len(dims) - 2)
            axes = [ax for ax in axes if not (ax == in_axis and dims[ax] <= STEM_CHANNELS)]
        else:
            axes = [len(dims) - 2, len(dims) - 1]  # the matrix dimensions
        for ax in axes:
            if 0 <= ax < len(dims) and dims[ax] % mult:
                bad.append((i, ax, dims[ax]))
    return bad


def _padded(shapes: Shapes, bad: list[tuple[int, int, int]]) -> str:
    out = []
    for i, (dtype, dims) in enumerate(shapes):
        dims = list(dims)
        for j, ax, size in bad:
            if j == i:
                mult = 16 if dtype in INT8 else 8
                dims[ax] = -(-size // mult) * mult
        out.append(f"{dtype}[{','.join(map(str, dims))}]")
    return "(" + ";".join(out) + ")"


def elements(shape: str) -> int:
    """Elements of an op's first tensor, 0 when unknown."""
    shapes = parse_shapes(shape)
    return int(np.prod(shapes[0][1], dtype=np.float64)) if shapes and shapes[0][1] else 0


def op_shape(p: Profile, op: int) -> str:
    return p.ops.shape[op] if 0 <= op < len(p.ops) else ""


def odd_dim_ops(p: Profile, per_gpu: list[tuple[dict[int, tuple[float, bool]], int]]) -> OddDims:
    """The 16-bit matmul/convolution ops of some GPUs (each its `matmul_ops(fp16=True)` and its number of
    steps) with shapes, and of them those whose dimensions are not multiples of 8 (16 for int8)."""
    merged: dict[int, list] = {}
    for ops, n in per_gpu:
        for op, (ps, tc) in ops.items():
            cur = merged.setdefault(op, [0.0, True, 0])
            cur[0] += ps / n
            cur[1] = cur[1] and tc
    with_shape = [o for o in merged if op_shape(p, o) and p.op_type(o) in TENSOR_CORE_ELIGIBLE]
    rows = []
    for o in with_shape:
        shapes = parse_shapes(op_shape(p, o))
        bad = _bad_dims(p.op_type(o), shapes)
        if bad:
            rows.append(
                OddDimRow(
                    op=p.op_name(o),
                    type=p.op_type(o),
                    shape=op_shape(p, o),
                    padded=_padded(shapes, bad),
                    ms_per_step=merged[o][0] / 1e9 / len(per_gpu),
                    uses_tensor_cores=merged[o][1],
                )
            )
    rows.sort(key=lambda r: -r.ms_per_step)
    return OddDims(tuple(with_shape), tuple(rows))
