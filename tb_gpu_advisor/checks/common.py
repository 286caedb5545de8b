"""Measurements several checks share. Time is integer picoseconds until it is presented."""
from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.profile import DEVICE_KINDS, MEMCPY_KINDS, EventTable, Kind, Profile
from tb_gpu_advisor.report import Evidence
from tb_gpu_advisor.units import PS_PER_MS, fmt_pct, ms, pct  # noqa: F401  (re-exported for the checks)


# Ops whose GEMM/convolution kernels can use Tensor Cores (compute capability >= 7.0).
TENSOR_CORE_ELIGIBLE = frozenset({
    "MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum",
    "Conv2D", "_FusedConv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "Conv3D",
    "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", "CudnnRNN", "CudnnRNNV2", "CudnnRNNV3",
    "CudnnRNNBackprop", "CudnnRNNBackpropV2", "CudnnRNNBackpropV3", "dot", "dot_general", "convolution",
})  # fmt: skip
# Kernel names of GEMMs and convolutions, for kernels no op claims (XLA custom calls, cuBLAS direct).
_GEMM_CONV_NAME = re.compile(r"gemm|conv|scudnn|hmma|xmma|cutlass", re.I)

ELEMENTWISE_OPS = frozenset({
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "DivNoNan", "Maximum", "Minimum", "Relu", "Relu6", "Elu", "Selu",
    "Sigmoid", "Tanh", "Cast", "BiasAdd", "Square", "Sqrt", "Rsqrt", "Exp", "Log", "Neg", "Pow", "SquaredDifference",
    "AddN", "Select", "SelectV2", "Softplus", "Erf", "Gelu", "LeakyRelu", "ReluGrad", "SigmoidGrad", "TanhGrad",
    "BiasAddGrad", "Identity", "ZerosLike", "OnesLike", "Fill", "Less", "Greater", "Equal", "LogicalAnd",
})  # fmt: skip
_ELEMENTWISE_NAME = re.compile(r"EigenMetaKernel|elementwise|scalar_.*_op|BiasNHWCKernel|vectorized_", re.I)

LOSS_SCALE = re.compile(r"loss_?scale", re.I)
# Host events of an XLA (or JAX) compilation.
COMPILE = re.compile(r"(:_XlaCompile$|^XlaCompilationCache::Compile|BackendCompile|^pjit.*[Cc]ompile|^jit_compile)")



def active_gpus(a: Analysis) -> list[int]:
    """GPUs with at least one device event."""
    return [d.id for d in a.profile.devices if any(len(s.events) for s in a.profile.device_streams(d.id))]


def device_events(a: Analysis, device_id: int) -> EventTable:
    """All events of one GPU, merged and sorted (built once, by `analyse`)."""
    return a.device_tables[device_id]


def step_index(a: Analysis, t_ps: np.ndarray) -> np.ndarray:
    """Step of each time (-1 outside every step)."""
    s = a.steps
    k = np.searchsorted(s.start_ps, t_ps, side="right") - 1
    inside = (k >= 0) & (t_ps < s.end_ps[np.maximum(k, 0)])
    return np.where(inside, k, -1)


def per_step_sum(a: Analysis, ev: EventTable, values: np.ndarray | None = None) -> np.ndarray:
    """Per step sum of `values` (default durations) of events, assigned by start time."""
    k = step_index(a, ev.start_ps)
    v = ev.dur_ps if values is None else values
    out = np.zeros(len(a.steps), np.float64)
    ok = k >= 0
    np.add.at(out, k[ok], v[ok])
    return out


def stream_label(a: Analysis, device_id: int, stream_id: int | None) -> str:
    if stream_id is None:
        return f"GPU {device_id} · all streams"
    for s in a.profile.device_streams(device_id):
        if s.stream_id == stream_id:
            return f"GPU {device_id} · {s.name}"
    return f"GPU {device_id} · Stream #{stream_id}"


def device_evidence(a: Analysis, device_id: int, start_ps: float, end_ps: float, label: str,
                    events: list[str] | None = None, stream_id: int | None = None) -> Evidence:  # fmt: skip
    return Evidence(stream_label(a, device_id, stream_id), ms(start_ps), ms(end_ps), label, events or [],
                    device_id=device_id, stream_id=stream_id)  # fmt: skip


def host_evidence(thread: str, start_ps: float, end_ps: float, label: str, events: list[str] | None = None) -> Evidence:
    return Evidence(f"host · {thread}", ms(start_ps), ms(end_ps), label, events or [], thread=thread)


def stream_of(a: Analysis, device_id: int, t_ps: int) -> int | None:
    """The stream of a device event starting at t_ps (first match)."""
    for s in a.profile.device_streams(device_id):
        hit = np.flatnonzero(s.events.start_ps == t_ps)
        if len(hit):
            return s.stream_id
    return None


def is_tf_data_thread(name: str) -> bool:
    return name.startswith("tf_data")


def device_work_bounds(a: Analysis, device_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Per step, the first start and last end of the GPU's work (kernels, copies) starting in it;
    -1 where a step has none."""
    cache = a.cache.setdefault("work_bounds", {})
    if device_id in cache:
        return cache[device_id]
    ev = device_events(a, device_id)  # sorted by start, so step indices are sorted too
    ev = ev.take(np.isin(ev.kind, np.asarray(DEVICE_KINDS, np.int8)))
    k = step_index(a, ev.start_ps)
    n = len(a.steps)
    first = np.full(n, -1, np.int64)
    last = np.full(n, -1, np.int64)
    valid = k >= 0
    if np.any(valid):
        kk, s, e = k[valid], ev.start_ps[valid], ev.end_ps[valid]
        steps, at = np.unique(kk, return_index=True)
        first[steps] = s[at]
        last[steps] = np.maximum.reduceat(e, at)
    cache[device_id] = (first, last)
    return first, last


def group_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys, sum of values, count) of each key, largest sum first."""
    if not len(keys):
        return keys, np.zeros(0), np.zeros(0, np.int64)
    uniq, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv, weights=values.astype(np.float64))
    counts = np.bincount(inv)
    order = np.argsort(-sums, kind="stable")
    return uniq[order], sums[order], counts[order]


def name_mask(p: Profile, ev: EventTable, pattern) -> np.ndarray:
    """Events whose name matches a regex, testing each distinct name once."""
    hit = np.array([bool(pattern.search(s)) for s in p.names.strings] + [False], bool)
    return hit[np.where(ev.name >= 0, ev.name, len(p.names))]


def step_gaps(a: Analysis, device_id: int) -> list[tuple[int, int, int]]:
    """Idle windows between the end of one step's device work and the start of the next's:
    (index of the earlier step, start ps, end ps), only where the window is positive."""
    first, last = device_work_bounds(a, device_id)
    out = []
    for i in range(len(a.steps) - 1):
        if last[i] >= 0 and first[i + 1] >= 0 and first[i + 1] > last[i]:
            out.append((i, int(last[i]), int(first[i + 1])))
    return out


def eligible_mask(p: Profile, ev: EventTable) -> np.ndarray:
    """Kernels of Tensor-Core-eligible ops (by op type, or by kernel name when no op claims it)."""
    types = np.array([p.ops.type[o] if o >= 0 else -1 for o in range(len(p.ops))] + [-1], np.int64)
    eligible_type_ids = {p.names.get(t) for t in TENSOR_CORE_ELIGIBLE} - {-1}
    type_eligible = np.isin(types, list(eligible_type_ids)) if eligible_type_ids else np.zeros(len(types), bool)
    op = np.where(ev.op >= 0, ev.op, len(p.ops))
    by_op = type_eligible[op]
    name_ok = np.array([bool(_GEMM_CONV_NAME.search(s)) for s in p.names.strings] + [False], bool)
    by_name = (ev.op < 0) & name_ok[np.where(ev.name >= 0, ev.name, len(p.names))]
    return (ev.kind == Kind.KERNEL) & (by_op | by_name)


def elementwise_mask(p: Profile, ev: EventTable) -> np.ndarray:
    ew_type_ids = [p.names.get(t) for t in ELEMENTWISE_OPS]
    ew_type_ids = [i for i in ew_type_ids if i >= 0]
    types = np.array([p.ops.type[o] for o in range(len(p.ops))] + [-1], np.int64)
    by_op = np.isin(types, ew_type_ids)[np.where(ev.op >= 0, ev.op, len(p.ops))]
    name_ok = np.array([bool(_ELEMENTWISE_NAME.search(s)) for s in p.names.strings] + [False], bool)
    by_name = name_ok[np.where(ev.name >= 0, ev.name, len(p.names))]
    return (ev.kind == Kind.KERNEL) & (by_op | by_name)


def is_input_op(p: Profile, op: int) -> bool:
    if op < 0:
        return False
    t = p.op_type(op)
    return t.startswith(("IteratorGetNext", "MultiDeviceIteratorGetNextFromShard")) or "IteratorGetNext" in p.op_name(op)


def input_copy_mask(p: Profile, ev: EventTable) -> np.ndarray:
    """Host-to-device copies of the model's input (attributed to the iterator's get-next)."""
    input_ops = np.array([is_input_op(p, o) for o in range(len(p.ops))] + [False], bool)
    return (ev.kind == Kind.MEMCPY_H2D) & input_ops[np.where(ev.op >= 0, ev.op, len(p.ops))]


def copies_mask(ev: EventTable) -> np.ndarray:
    return np.isin(ev.kind, np.asarray(MEMCPY_KINDS, np.int8))


def compute_busy(a: Analysis, device_id: int) -> iv.Intervals:
    act = a.activity[device_id]
    return iv.union_all(act.by_category["device_compute"], act.by_category["device_collectives"])


def top(items: dict[str, float], n: int = 5) -> list[tuple[str, float]]:
    return sorted(items.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
