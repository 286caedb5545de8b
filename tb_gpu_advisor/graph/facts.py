"""What the fix models ask of one profile's step graph, found once and shared: each device op's op type,
the matrix ops, the launches a captured graph or compiled model would hold, each gap's Python outside
ops, the matrix ops grouped by what decides their re-timing, and their FLOPs and bytes."""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from tb_gpu_advisor.graph import profiler, roofline
from tb_gpu_advisor.graph.build import LAUNCH, StepGraph, column_at
from tb_gpu_advisor.graph.hardware import Peaks, peaks
from tb_gpu_advisor.graph.simulate import Changes
from tb_gpu_advisor.model.profile import EventTable, Flag, Kind, Profile

# cuDNN's layout changes for fp32 NCHW tensors, which channels_last removes: its standalone transform
# kernels (`cudnn::engines_precompiled::nchwToNhwcKernel`, `nhwcToNchwKernel`); not the convolutions
# whose own names carry their layouts (`volta_fp16_s884cudnn_..._nhwc2nchw_tn_v1` is a convolution)
LAYOUT = re.compile(r"nchwToNhwc|nhwcToNchw")
# matrix ops, by name where the op is unknown (cuBLAS, cuDNN, CUTLASS, XLA's Triton GEMMs)
GEMM_NAME = re.compile(r"gemm|conv(?!ert)|scudnn|hmma|xmma|cutlass|wgrad|dgrad|fprop|nvjet|fmha|flash|attention", re.I)
ATTENTION_NAME = re.compile(r"fmha|flash|attention", re.I)


class StepFacts:
    """The facts of one profile's step graph the fix models read (graph/fixes/), each found once."""

    def __init__(self, p: Profile, g: StepGraph, framework: str, host: EventTable | None = None) -> None:
        self.p, self.g, self.framework = p, g, framework
        # the host's merged table where the caller has it: concatenating the threads' tables again
        # fills every thread's view, which the analysis leaves empty (tests/model/test_shared_tables.py)
        self.host = host
        self.names = p.names.strings
        # each device op's and host point's op type ("aten::mm", "MatMul"), as a name id: what its
        # re-timing depends on, decided once per type (an op's own name is per layer in XSpace)
        types = np.asarray(p.ops.type, np.int32)
        self.d_type, self.h_type = column_at(types, g.d_op), column_at(types, g.h_op)
        dev = next((d for d in p.devices if d.id == int(g.d_device[0])), None) if g.device_ops else None
        self.peaks: Peaks | None = peaks(dev) if dev is not None else None
        self.device = dev
        # the step window simulated without the profiler (set by the what-if once it has simulated it)
        self.window_ps = 0.0
        self._matrix_mask: np.ndarray | None = None
        self._region_mask: np.ndarray | None = None
        self._convs: dict[tuple, tuple] | None = None
        self._grouped: tuple[bytes, list[int], np.ndarray] | None = None  # groups of the matrix ops
        self._costs: dict[tuple[int, int], roofline.OpCost | None] = {}
        self.cache: dict[str, np.ndarray] = {}  # a fix model's own masks, found once (its name its key)
        self.memo: dict[str, object] = {}  # a fix model's own findings that are not arrays, found once
        # why the evidence cannot support the saving of the change being applied (a fix model adds
        # its reason; the what-if clears it before each change)
        self.withheld: list[str] = []

    def by_name(self, ids: np.ndarray, test: Callable[[str], object]) -> np.ndarray:
        return by_name(ids, self.names, test)

    def compiled_launches(self) -> np.ndarray:
        """Host points that launch an Inductor kernel (torch.compile's generated code): launches inside
        an op named `triton_*`, the span the generated code records around each launch."""
        if "compiled_launches" not in self.cache:
            g = self.g
            prefix = profiler.TRITON_LAUNCH_PREFIX
            named = self.by_name(
                column_at(np.asarray(self.p.ops.name, np.int32), g.h_op), lambda s: s.startswith(prefix)
            )
            self.cache["compiled_launches"] = named & (g.h_kind == LAUNCH)
        return self.cache["compiled_launches"]

    def free(self, c: Changes) -> np.ndarray:
        """Each gap's time outside every op and dispatch, as the changes have left the gap (the
        profiler's cost taken from it pro rata)."""
        g = self.g
        gap0 = np.maximum(g.h_gap, 0)
        scale = np.divide(np.maximum(c.h_gap, 0), gap0, out=np.zeros(len(gap0)), where=gap0 > 0)
        return (g.h_free * np.minimum(scale, 1.0)).astype(np.int64)

    def matrix(self) -> np.ndarray:
        """Device ops of matrix ops (by op, else by kernel name), not cuDNN's layout changes."""
        if self._matrix_mask is None:
            g = self.g
            layout = self.by_name(g.d_name, LAYOUT.search)
            gemm = self.by_name(g.d_name, GEMM_NAME.search)
            matrix_op = self.by_name(self.d_type, roofline.is_matrix_op)
            self._matrix_mask = ~layout & (gemm | matrix_op) & (g.d_kind == Kind.KERNEL)
        return self._matrix_mask

    def region(self) -> np.ndarray:
        """Launches a captured graph or a compiled model would hold: every launch of the step for JAX and
        TensorFlow (they compile the whole step); for PyTorch the forward and backward, not the
        optimizer, nor the loss between them (the main thread's launches after the forward's last
        matrix op and before the backward's first launch)."""
        if self._region_mask is not None:
            return self._region_mask
        g = self.g
        launch = g.h_kind == LAUNCH
        if self.framework != "pytorch":
            self._region_mask = launch
            return launch
        region = launch & ~g.h_optimizer
        main = g.h_thread == g.main_thread
        backward = launch & ~main & (g.h_thread >= 0)
        if backward.any() and g.main_thread >= 0:
            matrix_launch = np.zeros(len(launch), bool)
            matrix_launch[g.d_launch[self.matrix()]] = True
            idx = np.arange(len(launch))
            n = max(g.steps, 1)
            first_bw = np.full(n, len(launch), np.int64)
            np.minimum.at(first_bw, g.h_step[backward], idx[backward])
            fw = main & matrix_launch
            last_fw = np.full(n, -1, np.int64)
            np.maximum.at(last_fw, g.h_step[fw], idx[fw])
            # the loss: the main thread's launches after the forward's last matrix op, before the backward
            lo, hi = last_fw[g.h_step], first_bw[g.h_step]
            loss = main & launch & (idx > lo) & (idx < hi) & (lo >= 0) & (hi < len(launch))
            region &= ~loss
        self._region_mask = region
        return region

    def parameters_per_step(self) -> float:
        """The model's parameters that get a gradient: PyTorch's autograd accumulates each one's in a
        `torch::autograd::AccumulateGrad` call a step (0 where the trace has none)."""
        if "parameters" not in self.cache:
            host = self.host if self.host is not None else self.p.host_events()
            ids = [i for i, n in enumerate(self.names) if n == "torch::autograd::AccumulateGrad"]
            w0, w1 = self.g.window
            n = 0
            if ids:
                s = host.start_ps
                n = int((np.isin(host.name, ids) & (s >= w0) & (s < w1)).sum())
            self.cache["parameters"] = np.asarray([n / max(self.g.steps, 1)])
        return float(self.cache["parameters"][0])

    def conv_outputs(self) -> dict[tuple, tuple]:
        """(input dims, weight dims) -> output dims of the trace's convolutions, from their backward
        calls (whose grad_output is the forward's output)."""
        out: dict[tuple, tuple] = {}
        g, names = self.g, self.names
        for o, s in set(zip(self.d_type.tolist(), g.d_shape.tolist())):
            if o >= 0 and s >= 0 and names[o] in roofline.CONV_BWD:
                ts = roofline.tensors(names[s])
                if len(ts) >= 3:
                    out[(ts[1][1], ts[2][1])] = ts[0][1]
        return out

    def cost(self, j: int) -> roofline.OpCost | None:
        """Device op j's FLOPs and bytes from its op's shapes; kept per (op, shapes): the precision
        changes and padding each ask for every group's."""
        g = self.g
        o = int(self.d_type[j])
        if o < 0:
            return None
        key = (o, int(g.d_shape[j]))
        if key in self._costs:
            return self._costs[key]
        op = self.names[o]
        shape = self.names[int(g.d_shape[j])] if g.d_shape[j] >= 0 else ""
        out = None
        if op in roofline.CONV_FWD:
            if self._convs is None:
                self._convs = self.conv_outputs()
            ts = roofline.tensors(shape)
            out = self._convs.get((ts[0][1], ts[1][1])) if len(ts) >= 2 else None
        self._costs[key] = cost = roofline.op_cost(op, shape, out)
        return cost

    def groups(self, ops: np.ndarray) -> tuple[list[int], np.ndarray]:
        """Device ops `ops` grouped by what decides their re-timing (op, shapes, kernel name, flags,
        thread): (an op of each group, each op's group), groups in the order of their keys. Kept for
        the matrix ops, which the precision changes and padding all group."""
        key = ops.tobytes()
        if self._grouped is not None and self._grouped[0] == key:
            return self._grouped[1], self._grouped[2]
        g = self.g
        main = (g.h_thread[g.d_launch[ops]] == g.main_thread).astype(np.int64)
        cols = [self.d_type[ops], g.d_shape[ops], g.d_name[ops], g.d_flags[ops].astype(np.int64), main]
        if not len(ops):
            return [], np.zeros(0, np.int64)
        # one key per op, column by column, kept dense: np.unique of rows (axis=0) sorts them as
        # structured records, 10x slower on an 80 MB capture's 475,000 ops
        code = np.zeros(len(ops), np.int64)
        for col in cols:
            values, inv = np.unique(col, return_inverse=True)
            _, code = np.unique(code * len(values) + inv.reshape(-1), return_inverse=True)
            code = code.reshape(-1)
        _, first_at, inv = np.unique(code, return_index=True, return_inverse=True)
        out = (ops[first_at].tolist(), inv.reshape(-1))
        self._grouped = (key, *out)
        return out

    def precision_of(self, j: int, cost: roofline.OpCost | None) -> str:
        """A matrix kernel's precision: "fp8" (8-bit floats or narrower, by the kernel naming table or its
        op's inputs), 16-bit by its flag or its op's dtype, TF32 by its Tensor Core flag or name, "unknown"
        where the kernel naming table does not know the kernel (whether it ran on Tensor Cores is not
        known), else fp32. The precision what-ifs re-time only fp32 and TF32 kernels: an FP8 trainer is
        never told bf16, and a kernel of unknown units is not guessed at (issue 50)."""
        flags = int(self.g.d_flags[j])
        if flags & Flag.FP8:
            return "fp8"
        if flags & Flag.FP16 or (cost is not None and cost.dtype in ("half", "bfloat16")):
            return "bf16" if (cost is not None and cost.dtype == "bfloat16") else "fp16"
        if flags & Flag.TENSOR_CORE or "tf32" in self.names[int(self.g.d_name[j])]:
            return "tf32"
        return "unknown" if flags & Flag.UNIT_UNKNOWN else "fp32"


def by_name(ids: np.ndarray, strings: list[str], test: Callable[[str], object]) -> np.ndarray:
    """`test` of each id's string, decided once per distinct id (-1: False). The distinct ids are
    marked in a table over the strings, not sorted out: np.unique's sort was a tenth of the what-ifs'
    cost on the 325 MB benchmark trace."""
    if not len(ids):
        return np.zeros(0, bool)
    ids = np.asarray(ids, np.int64)
    named = ids >= 0
    if not named.any():  # (a table of no strings has no row 0 to index)
        return named
    table = np.zeros(len(strings), bool)
    table[ids[named]] = True
    for i in np.flatnonzero(table).tolist():
        table[i] = bool(test(strings[i]))
    return named & table[np.maximum(ids, 0)]


def weighted_median(pairs: list[tuple[float, float]]) -> float:
    v = np.asarray([x for x, _ in pairs])
    w = np.asarray([y for _, y in pairs])
    o = np.argsort(v)
    cw = np.cumsum(w[o])
    return float(v[o][np.searchsorted(cw, cw[-1] / 2)])
