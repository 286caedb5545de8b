"""Named measurements the checks read, each computed once per analysis.

`Measures` wraps an `Analysis`; every measurement is a documented cached property (host-level) or a
property of `GpuMeasures` (one active GPU, in its own steps). Checks read measurements and their own
thresholds and nothing else: they never touch the profile's tables. Times are integer picoseconds
(floats where averaged); "per step" means averaged over the GPU's own steps.

How idle time is attributed (one problem is counted once): each GPU's step time is split into the
breakdown's categories (compute, collectives, copies, input wait, launch wait, idle). The idle part
is then split by what the host was doing, in this order: loss-scaling ops, XLA compilation,
host-placed compute ops, Python work on the main thread, busy tf.data threads; the rest is
unexplained. Each check's saving is its own part, so savings never overlap and never exceed a step.
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from collections import defaultdict
from typing import Any

import numpy as np

from tb_gpu_advisor import intervals as iv
from tb_gpu_advisor.analysis import Analysis, GpuAnalysis
from tb_gpu_advisor.arrays import distinct, unique_inverse
from tb_gpu_advisor.classify import PY_FUNCTION_OPS, op_type_label
from tb_gpu_advisor.parallel import cached

# JAX, TENSORFLOW, UNKNOWN and SOURCE_* are re-exported (`X as X`): checks import nothing below this layer.
from tb_gpu_advisor.profile import (
    DEVICE_KINDS,
    JAX as JAX,
    MEMCPY_KINDS,
    PYTORCH,
    TENSORFLOW as TENSORFLOW,
    UNKNOWN as UNKNOWN,
    EventTable,
    Flag,
    Kind,
    Profile,
)
from tb_gpu_advisor.steps import (
    CATEGORIES,
    SOURCE_DEVICE as SOURCE_DEVICE,
    SOURCE_FUNCTIONS as SOURCE_FUNCTIONS,
    SOURCE_GROUPS as SOURCE_GROUPS,
    SOURCE_HOST as SOURCE_HOST,
    Steps,
)

# Ops whose GEMM/convolution kernels can use Tensor Cores (compute capability >= 7.0).
TENSOR_CORE_ELIGIBLE = frozenset(
    {
        "MatMul",
        "_FusedMatMul",
        "BatchMatMul",
        "BatchMatMulV2",
        "BatchMatMulV3",
        "Einsum",
        "Conv2D",
        "_FusedConv2D",
        "Conv2DBackpropInput",
        "Conv2DBackpropFilter",
        "Conv3D",
        "Conv3DBackpropInputV2",
        "Conv3DBackpropFilterV2",
        "CudnnRNN",
        "CudnnRNNV2",
        "CudnnRNNV3",
        "CudnnRNNBackprop",
        "CudnnRNNBackpropV2",
        "CudnnRNNBackpropV3",
        "dot",
        "dot_general",
        "convolution",
        # PyTorch (ATen) ops
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::matmul",
        "aten::linear",
        "aten::baddbmm",
        "aten::conv2d",
        "aten::convolution",
        "aten::_convolution",
        "aten::cudnn_convolution",
        "aten::convolution_backward",
        "aten::conv1d",
        "aten::conv3d",
        "aten::einsum",
        "aten::_scaled_dot_product_flash_attention",
    }
)
# Kernel names of GEMMs and convolutions, for kernels no op claims (XLA custom calls, cuBLAS direct).
GEMM_CONV_NAME = re.compile(r"gemm|conv|scudnn|hmma|xmma|cutlass|wgrad|dgrad|fprop", re.I)

ELEMENTWISE_OPS = frozenset(
    {
        "Add",
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "DivNoNan",
        "Maximum",
        "Minimum",
        "Relu",
        "Relu6",
        "Elu",
        "Selu",
        "Sigmoid",
        "Tanh",
        "Cast",
        "BiasAdd",
        "Square",
        "Sqrt",
        "Rsqrt",
        "Exp",
        "Log",
        "Neg",
        "Pow",
        "SquaredDifference",
        "AddN",
        "Select",
        "SelectV2",
        "Softplus",
        "Erf",
        "Gelu",
        "LeakyRelu",
        "ReluGrad",
        "SigmoidGrad",
        "TanhGrad",
        "BiasAddGrad",
        "Identity",
        "ZerosLike",
        "OnesLike",
        "Fill",
        "Less",
        "Greater",
        "Equal",
        "LogicalAnd",
        "aten::add",
        "aten::add_",
        "aten::mul",
        "aten::mul_",
        "aten::relu",
        "aten::relu_",
        "aten::sigmoid",
        "aten::tanh",
        "aten::sub",
        "aten::div",
        "aten::gelu",
        "aten::copy_",
        "aten::fill_",
        "aten::zero_",
        "aten::threshold_backward",
    }
)
ELEMENTWISE_NAME = re.compile(r"EigenMetaKernel|elementwise|scalar_.*_op|BiasNHWCKernel|vectorized_", re.I)
LOSS_SCALE = re.compile(r"loss_?scale", re.I)
LOSS = re.compile(r"loss|cross_?entropy", re.I)
SOFTMAX_OPS = frozenset({"Softmax", "LogSoftmax", "aten::softmax", "aten::_softmax", "aten::log_softmax"})
# Host events of an XLA (or JAX) compilation.
COMPILE = re.compile(
    r"(:_XlaCompile$|^XlaCompilationCache::Compile|BackendCompile|^pjit.*[Cc]ompile|^jit_compile"
    r"|^PjitFunction.*[Cc]ompile|TorchDynamo|CompileFunction)"
)
# Long host events that only wait for a graph or a step to run: not Python work.
CONTAINERS = re.compile(
    r"^(FunctionRun|KernelAndDeviceFunc::Run|EagerKernelExecute|TFE_Py_Execute\w*|ExecutorState::\w+|"
    r"ExecutorDoneCallback|__inference\w*|multi_step_on_iterator|one_step_on_iterator|multi_step_on_data|"
    r"one_step_on_data|train_function|train_step|ProfilerStep#\d+|Profiled batch|PjitFunction.*|"
    r"ThreadpoolListener::\w+|Optimizer\.step#.*|cudaDeviceSynchronize|cudaStreamSynchronize|"
    r"block_until_ready|Synchronize)$"
)
MAIN_THREADS = ("python", "python3", "MainThread", "main")
KERNEL_COLUMNS = ("start_ps", "dur_ps", "name", "kind", "op", "flags", "stream", "step")
COPY_COLUMNS = ("start_ps", "dur_ps", "name", "kind", "op", "stream", "step", "bytes")
IDLE_CAUSES = ("loss_scaling", "compilation", "host_ops", "host_work", "tf_data", "unexplained")
GAP_CAUSES = ("input", "launch") + IDLE_CAUSES


_TENSOR = re.compile(
    r"(half|bfloat16|bf16|f16|float16|int8|s8|float|f32|double|c10::Half|c10::BFloat16|int32|int64)"
    r"\[([\d,\s]*)\]",
    re.I,
)


def parse_shapes(shape: str) -> list[tuple[str, list[int]]]:
    """`(half[4000,1001];half[1001,3999])` -> [("half", [4000, 1001]), ("half", [1001, 3999])]."""
    out = []
    for m in _TENSOR.finditer(shape or ""):
        dims = [int(x) for x in m.group(2).replace(" ", "").split(",") if x and len(x) < 19]
        out.append((m.group(1).lower(), dims))
    return out


SIXTEEN_BIT = ("half", "bfloat16", "bf16", "f16", "float16", "c10::half", "c10::bfloat16")
INT8 = ("int8", "s8")


def _bad_dims(op_type: str, shapes) -> list[tuple[int, int, int]]:
    """(input index, dim index, size) of GEMM/conv dimensions that are not multiples of 8 (int8: 16)."""
    bad = []
    for i, (dtype, dims) in enumerate(shapes[:2]):
        if dtype not in SIXTEEN_BIT + INT8:
            continue
        mult = 16 if dtype in INT8 else 8
        if "conv" in op_type.lower():
            axes = [len(dims) - 1] if i == 0 else [len(dims) - 2, len(dims) - 1]  # channels; filter in/out
        else:
            axes = [len(dims) - 2, len(dims) - 1]  # the matrix dimensions
        for ax in axes:
            if 0 <= ax < len(dims) and dims[ax] % mult:
                bad.append((i, ax, dims[ax]))
    return bad


def _padded(shapes, bad) -> str:
    out = []
    for i, (dtype, dims) in enumerate(shapes):
        dims = list(dims)
        for j, ax, size in bad:
            if j == i:
                mult = 16 if dtype in INT8 else 8
                dims[ax] = -(-size // mult) * mult
        out.append(f"{dtype}[{','.join(map(str, dims))}]")
    return "(" + ";".join(out) + ")"


def _odd_dim_ops(m: Measures) -> tuple[list[int], list[dict]]:
    """(16-bit matmul/conv ops with shapes, rows of those whose dimensions are not multiples of 8)."""
    merged: dict[int, list] = {}
    gpus = m.tensor_core_gpus or m.gpus
    for g in gpus:
        for op, (ps, tc) in g.matmul_ops(fp16=True).items():
            cur = merged.setdefault(op, [0.0, True, 0])
            cur[0] += ps / g.n
            cur[1] = cur[1] and tc
    with_shape = [o for o in merged if m.op_shape(o) and m.op_type(o) in TENSOR_CORE_ELIGIBLE]
    rows = []
    for o in with_shape:
        shapes = parse_shapes(m.op_shape(o))
        bad = _bad_dims(m.op_type(o), shapes)
        if bad:
            rows.append(
                {
                    "op": m.op_name(o),
                    "type": m.op_type(o),
                    "shape": m.op_shape(o),
                    "padded": _padded(shapes, bad),
                    "ms_per_step": merged[o][0] / 1e9 / len(gpus),
                    "uses_tensor_cores": merged[o][1],
                }
            )
    rows.sort(key=lambda r: -r["ms_per_step"])
    return with_shape, rows


def _elements(shape: str) -> int:
    """Elements of an op's first tensor, 0 when unknown."""
    shapes = parse_shapes(shape)
    return int(np.prod(shapes[0][1], dtype=np.float64)) if shapes and shapes[0][1] else 0


def _sum_by(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, the int64 sum of the values of each): exact, unlike a float bincount."""
    u, inv = unique_inverse(keys)
    sums = np.zeros(len(u), np.int64)
    np.add.at(sums, inv, values.astype(np.int64, copy=False))
    return u, sums


def _mask_of(strings: list[str], test) -> np.ndarray:
    """A decision per distinct string, with a final False for index -1."""
    return np.array([bool(test(s)) for s in strings] + [False], bool)


class NameClasses:
    """Decisions made once per distinct name or op, looked up through the name-id and op-id columns."""

    def __init__(self, p: Profile):
        self.p = p

    def by_name(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask[np.maximum(ids, -1)]  # id -1 (none): the mask's last entry, as NumPy indexes from the end

    def by_op(self, ops: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask[np.maximum(ops, -1)]  # op -1 (none): the last entry, as above

    @cached
    def compile_name(self) -> np.ndarray:
        return _mask_of(self.p.names.strings, COMPILE.search)

    @cached
    def container_name(self) -> np.ndarray:
        return _mask_of(self.p.names.strings, CONTAINERS.match)

    @cached
    def gemm_conv_name(self) -> np.ndarray:
        return _mask_of(self.p.names.strings, GEMM_CONV_NAME.search)

    @cached
    def elementwise_name(self) -> np.ndarray:
        return _mask_of(self.p.names.strings, ELEMENTWISE_NAME.search)

    def _op_mask(self, test) -> np.ndarray:
        p = self.p
        return np.array([bool(test(p.op_name(o), p.op_type(o))) for o in range(len(p.ops))] + [False], bool)

    @cached
    def loss_scale_op(self) -> np.ndarray:
        return self._op_mask(lambda name, _t: LOSS_SCALE.search(name))

    @cached
    def tensor_core_op(self) -> np.ndarray:
        return self._op_mask(lambda _n, t: t in TENSOR_CORE_ELIGIBLE)

    @cached
    def elementwise_op(self) -> np.ndarray:
        return self._op_mask(lambda _n, t: t in ELEMENTWISE_OPS)

    @cached
    def softmax_outside_loss_op(self) -> np.ndarray:
        return self._op_mask(lambda n, t: t in SOFTMAX_OPS and not LOSS.search(n))

    @cached
    def input_op(self) -> np.ndarray:
        return self._op_mask(
            lambda n, t: (
                t.startswith(("IteratorGetNext", "MultiDeviceIteratorGetNextFromShard")) or "IteratorGetNext" in n
            )
        )

    @cached
    def py_function_op(self) -> np.ndarray:
        return self._op_mask(lambda _n, t: t in PY_FUNCTION_OPS)

    @cached
    def on_device_op(self) -> np.ndarray:
        return np.r_[self.p.ops.on_device, False]

    def eligible(self, ev: EventTable) -> np.ndarray:
        """Kernels of Tensor-Core-eligible ops (by op type, or by kernel name when no op claims it)."""
        by_op = self.by_op(ev.op, self.tensor_core_op)
        by_name = (ev.op < 0) & self.by_name(ev.name, self.gemm_conv_name)
        return (ev.kind == Kind.KERNEL) & (by_op | by_name)

    def elementwise(self, ev: EventTable) -> np.ndarray:
        return (ev.kind == Kind.KERNEL) & (
            self.by_op(ev.op, self.elementwise_op) | self.by_name(ev.name, self.elementwise_name)
        )


# The profiler's own word for events it lost (CUPTI's activity buffer full, records dropped); not the
# reader's note on events outside the capture (extent.dropped_message).
PROFILER_LOST = re.compile(r"\b(dropp(ed|ing)|overflow(ed)?|buffer (is |was )?full|lost)\b", re.I)


@dataclasses.dataclass(frozen=True)
class LostGpuEvents:
    """Launch calls whose GPU work is missing from the trace, and what the profiler said of lost events."""

    launches: int  # launch calls with a correlation id, started before the last GPU event started
    missing: int  # of them, those no GPU event carries the correlation id of
    profiler_says: tuple[str, ...]  # the profiler's messages about events it lost
    first_missing: Window | None  # the first launch without its work

    @property
    def missing_pct(self) -> float:
        return 100.0 * self.missing / self.launches if self.launches else 0.0


@dataclasses.dataclass
class Window:
    """A time range on one GPU stream or host thread, and the events it is about."""

    start_ps: int
    end_ps: int
    label: str
    events: list[str]
    device_id: int | None = None
    stream_id: int | None = None
    stream: str | None = None
    thread: str | None = None


class GpuMeasures:
    """Measurements of one active GPU, in its own steps."""

    def __init__(self, m: Measures, g: GpuAnalysis):
        # a proxy, not a reference: Measures holds its GpuMeasures, and a cycle would keep a whole
        # analysis in memory until the garbage collector's next full pass
        self.m: Measures = weakref.proxy(m)
        self._g = g
        self.id = g.id
        self.device = g.device
        self.steps: Steps = g.steps
        self._events = g.events

    # -- steps and the breakdown ---------------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of steps (at least 1 for per-step averages)."""
        return max(len(self.steps), 1)

    @property
    def step_ps(self) -> float:
        """Mean step time."""
        return self.steps.mean_ps

    @cached
    def breakdown_ps(self) -> np.ndarray:
        """(steps, categories) as in `steps.breakdown`."""
        return self._g.breakdown_ps

    def category_per_step(self, category: str) -> np.ndarray:
        return self.breakdown_ps[:, CATEGORIES.index(category)].astype(np.float64)

    def category_mean(self, category: str) -> float:
        return float(self.category_per_step(category).sum()) / self.n

    @cached
    def busy_ps(self) -> int:
        return self._g.busy_ps

    @property
    def busy(self) -> iv.Intervals:
        """When anything runs on any of the GPU's streams."""
        return self._g.activity.busy

    @cached
    def step_windows(self) -> iv.Intervals:
        return iv.union(self.steps.start_ps, self.steps.end_ps)

    @cached
    def compute_busy(self) -> iv.Intervals:
        """When compute or collectives run."""
        c = self._g.activity.by_category
        return iv.union_all(c["device_compute"], c["device_collectives"])

    @cached
    def compute_per_step(self) -> np.ndarray:
        """Kernel and memset busy time (collectives excluded) in each step."""
        return iv.measure_in(
            self._g.activity.by_category["device_compute"], self.steps.start_ps, self.steps.end_ps
        ).astype(float)

    @cached
    def compute_ps(self) -> float:
        """Kernel and memset time of the events that start in the steps."""
        ev = self._events
        return float(ev.dur_ps[((ev.kind == Kind.KERNEL) | (ev.kind == Kind.MEMSET)) & (ev.step >= 0)].sum())

    @cached
    def kernels(self) -> EventTable:
        """The kernels that start in the steps (collectives excluded)."""
        return self._events.take((self._events.kind == Kind.KERNEL) & (self._events.step >= 0), KERNEL_COLUMNS)

    @cached
    def has_16bit(self) -> bool:
        return bool(((self.kernels.flags & Flag.FP16) != 0).any())

    @cached
    def work_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per step, the first start and last end of the GPU's work (kernels, copies) starting in it;
        -1 where a step has none."""
        ev = self._events
        sel = np.isin(ev.kind, np.asarray(DEVICE_KINDS, np.int8)) & (ev.step >= 0)
        k, s, e = ev.step[sel], ev.start_ps[sel], ev.end_ps[sel]
        n = len(self.steps)
        first = np.full(n, -1, np.int64)
        last = np.full(n, -1, np.int64)
        if len(k):
            order = np.argsort(k, kind="stable")
            k, s, e = k[order], s[order], e[order]
            steps, at = np.unique(k, return_index=True)
            first[steps] = np.minimum.reduceat(s, at)
            last[steps] = np.maximum.reduceat(e, at)
        return first, last

    @cached
    def device_span_per_step(self) -> np.ndarray:
        """Last end minus first start of each step's device work (what the profile plugin calls a GPU
        step); 0 for steps without device work."""
        first, last = self.work_bounds
        return np.where(first >= 0, last - first, 0).astype(float)

    @cached
    def gaps(self) -> list[tuple[int, int, int]]:
        """Idle windows between the end of one step's device work and the start of the next's:
        (index of the earlier step, start, end), only where positive."""
        first, last = self.work_bounds
        i = np.flatnonzero((last[:-1] >= 0) & (first[1:] >= 0) & (first[1:] > last[:-1]))
        return list(zip(i.tolist(), last[i].tolist(), first[i + 1].tolist()))

    @cached
    def idle(self) -> iv.Intervals:
        """The breakdown's idle/other time: in a step, nothing on the GPU, no input wait, no launch."""
        steps = iv.union(self.steps.start_ps, self.steps.end_ps)
        claimed = iv.union_all(*self._g.exclusive.values())
        return iv.subtract(steps, claimed)

    @cached
    def idle_causes(self) -> dict[str, iv.Intervals]:
        """The idle time split by what the host was doing (IDLE_CAUSES, in that order)."""
        out = {}
        left = self.idle
        for cause in IDLE_CAUSES[:-1]:
            own = iv.intersect(left, self.m.host_sets[cause])
            out[cause] = own
            left = iv.subtract(left, own)
        out["unexplained"] = left
        return out

    def idle_cause_per_step(self, cause: str) -> np.ndarray:
        return iv.measure_in(self.idle_causes[cause], self.steps.start_ps, self.steps.end_ps).astype(float)

    def idle_cause_mean(self, cause: str) -> float:
        return float(self.idle_cause_per_step(cause).sum()) / self.n

    def exposed_per_step(self, host_set: iv.Intervals) -> np.ndarray:
        """Per step, the part of a host activity during which this GPU runs nothing (the guide's
        measure of the activity's cost; several activities can overlap, unlike `idle_causes`)."""
        exposed = iv.subtract(host_set, self._g.activity.busy)
        return iv.measure_in(exposed, self.steps.start_ps, self.steps.end_ps).astype(float)

    @cached
    def host_work(self) -> dict:
        """Python work on the main thread while this GPU runs nothing: per step time, the events that
        fill it (by label, ms per step) and the windows of the steps with the most."""
        m = self.m
        work = m.host_sets["host_work"]
        exposed = self.exposed_per_step(work)
        idle = iv.intersect(iv.subtract(work, self.busy), self.step_windows)
        start, end, label, thread_of = m.host_work_events
        overlap = iv.measure_in(idle, start, end).astype(float)
        hit = overlap > 0
        keys, inv = unique_inverse(label[hit])
        sums = np.bincount(inv, weights=overlap[hit]) if len(keys) else np.zeros(0)
        rows: list[dict[str, Any]] = [
            {"event": m.label_text(int(keys[j])), "ms_per_step": float(sums[j]) / 1e9 / self.n}
            for j in np.argsort(-sums, kind="stable")[:8].tolist()
        ]
        threads = distinct(thread_of[hit]).tolist()
        thread = m.thread_name(int(threads[0])) if threads else "python"
        windows = []
        for i in np.argsort(-exposed, kind="stable")[:3].tolist():
            if exposed[i] <= 0:
                break
            seg = iv.clip(idle, int(self.steps.start_ps[i]), int(self.steps.end_ps[i]))
            windows.append(
                Window(
                    int(seg[0][0]),
                    int(seg[1][-1]),
                    f"step {int(self.steps.number[i])}: {exposed[i] / 1e9:.2f} ms of host work, GPU idle",
                    [r["event"] for r in rows[:5]],
                    thread=thread,
                )
            )
        return {"per_step": exposed, "rows": rows, "windows": windows}

    @cached
    def gap_causes(self) -> dict[str, np.ndarray]:
        """Each gap's time split by cause (GAP_CAUSES: input wait, a launch in flight, then the idle
        causes): cause -> time of each gap, in the order of `gaps`."""
        lo = np.array([g[1] for g in self.gaps], np.int64)
        hi = np.array([g[2] for g in self.gaps], np.int64)
        parts = {
            "input": iv.measure_in(self._g.exclusive["host_input_wait"], lo, hi),
            "launch": iv.measure_in(self._g.exclusive["kernel_launch_wait"], lo, hi),
        }
        for cause in IDLE_CAUSES:
            parts[cause] = iv.measure_in(self.idle_causes[cause], lo, hi)
        rest = (hi - lo) - sum(parts.values())  # what else the breakdown counts in a gap (copies of other work)
        parts["unexplained"] = parts["unexplained"] + np.maximum(rest, 0)
        return parts

    # -- input -----------------------------------------------------------------------------------

    @cached
    def input_copies(self) -> np.ndarray:
        """Mask of host-to-device copies of the model's input (attributed to the iterator's get-next)."""
        ev = self._events
        return (ev.kind == Kind.MEMCPY_H2D) & self.m.names.by_op(ev.op, self.m.names.input_op)

    @cached
    def input_wait_per_step(self) -> np.ndarray:
        """The host waiting for input while the GPU has nothing else to do, per step."""
        return self.category_per_step("host_input_wait")

    @cached
    def input_copy_per_step(self) -> np.ndarray:
        """Input copies the step waits on (not under compute), per step."""
        ev = self._events
        sel = self.input_copies
        copies = iv.subtract(iv.union(ev.start_ps[sel], ev.end_ps[sel]), self.compute_busy)
        return iv.measure_in(copies, self.steps.start_ps, self.steps.end_ps).astype(float)

    @property
    def input_per_step(self) -> np.ndarray:
        return self.input_wait_per_step + self.input_copy_per_step

    # -- launches --------------------------------------------------------------------------------

    @cached
    def launches_paired(self) -> int:
        """Device events paired with a host launch call by correlation id."""
        launch = self.m.launch_corr
        ev = self._events
        return int(np.isin(ev.corr[ev.corr >= 0], launch).sum()) if len(launch) else 0

    @cached
    def launch_waits(self) -> iv.Intervals:
        return self._g.exclusive["kernel_launch_wait"]

    @cached
    def first_work_delay(self) -> tuple[np.ndarray, np.ndarray]:
        """(step start, first device work) of each step with device work."""
        first, _ = self.work_bounds
        has = first >= 0
        return self.steps.start_ps[has], first[has]

    @cached
    def tf_data_before_first_launch(self) -> np.ndarray:
        """Per step with device work: time from the step's start to its first device work with
        tf.data's threads busy (the guide's measure; input waits excluded)."""
        lo, hi = self.first_work_delay
        return iv.measure_in(self.m.host_sets["tf_data"], lo, hi).astype(float)

    @cached
    def tf_data_before_first_work(self) -> np.ndarray:
        """Per step with device work: time from the step's start to its first device work during which
        the GPU idles while tf.data threads are busy (and nothing before them in `IDLE_CAUSES` claims it)."""
        lo, hi = self.first_work_delay
        return iv.measure_in(self.idle_causes["tf_data"], lo, hi).astype(float)

    # -- copies ----------------------------------------------------------------------------------

    @cached
    def copies(self) -> dict:
        """Copies beyond the model's input: per direction counts, bytes and time per step; the time they
        leave compute idle; mid-step device-to-host copies; per copy and op, the ops next to it."""
        p = self.m.p
        ev = self._events
        c = ev.take(np.isin(ev.kind, np.asarray(MEMCPY_KINDS, np.int8)) & ~self.input_copies, COPY_COLUMNS)
        n = self.n
        blocking_set = iv.subtract(iv.union(c.start_ps, c.end_ps), self.compute_busy)
        blocking = iv.measure_in(blocking_set, self.steps.start_ps, self.steps.end_ps).astype(float)
        directions = {}
        for kind, label in (
            (Kind.MEMCPY_H2D, "H2D"),
            (Kind.MEMCPY_D2H, "D2H"),
            (Kind.MEMCPY_D2D, "D2D"),
            (Kind.MEMCPY_P2P, "P2P"),
        ):
            sel = (c.kind == kind) & (c.step >= 0)
            directions[label] = {
                "count_per_step": int(sel.sum()) / n,
                "mb_per_step": float(c.bytes[sel].sum()) / 1e6 / n,
                "ms_per_step": float(c.dur_ps[sel].sum()) / 1e9 / n,
            }
        _, last = self.work_bounds
        k = c.step
        mid = (c.kind == Kind.MEMCPY_D2H) & (k >= 0) & (c.end_ps < np.where(k >= 0, last[np.maximum(k, 0)], 0) - 1)
        blk = iv.measure_in(blocking_set, c.start_ps, c.end_ps)
        kern = ev.take(
            np.isin(ev.kind, np.array([Kind.KERNEL, Kind.COLLECTIVE], np.int8)), ("start_ps", "dur_ps", "op")
        )
        prev_op = np.full(len(c), -1, np.int64)
        next_op = np.full(len(c), -1, np.int64)
        if len(kern) and len(c):
            by_end = np.argsort(kern.end_ps, kind="stable")
            before = np.searchsorted(kern.end_ps[by_end], c.start_ps, side="right") - 1
            prev_op = np.where(before >= 0, kern.op[by_end][np.maximum(before, 0)], -1)
            after = np.searchsorted(kern.start_ps, c.end_ps, side="left")
            next_op = np.where(after < len(kern), kern.op[np.minimum(after, len(kern) - 1)], -1)
        rows: list[dict[str, Any]] = []
        if len(c):
            key = c.name.astype(np.int64) * (len(p.ops) + 1) + (c.op.astype(np.int64) + 1)
            keys, first_at, inv = np.unique(key, return_index=True, return_inverse=True)
            counts = np.bincount(inv, minlength=len(keys))
            mbytes = np.bincount(inv, weights=c.bytes.astype(float), minlength=len(keys))
            blocks = np.bincount(inv, weights=blk.astype(float), minlength=len(keys))
            for j, kk in enumerate(keys.tolist()):
                name, op = divmod(kk, len(p.ops) + 1)
                f = int(first_at[j])
                rows.append(
                    {
                        "copy": p.names[name],
                        "op": p.op_name(op - 1),
                        "count_per_step": int(counts[j]) / n,
                        "mb_per_step": float(mbytes[j]) / 1e6 / n,
                        "blocking_ms_per_step": float(blocks[j]) / 1e9 / n,
                        "before": p.op_name(int(prev_op[f])),
                        "after": p.op_name(int(next_op[f])),
                    }
                )
        rows.sort(key=lambda r: -r["blocking_ms_per_step"])
        windows = []
        for j in np.argsort(-blk, kind="stable")[:3].tolist():
            if blk[j] <= 0:
                break
            name, op = p.names[c.name[j]], p.op_name(c.op[j])
            windows.append(
                self.window(
                    int(c.start_ps[j]),
                    int(c.end_ps[j]),
                    f"{name} {c.bytes[j] / 2**20:.1f} MiB ({op or 'no op'}): compute idle {blk[j] / 1e9:.3f} ms",
                    [x for x in (name, op, p.op_name(int(prev_op[j])), p.op_name(int(next_op[j]))) if x],
                    stream=int(c.stream[j]),
                )
            )
        return {
            "blocking_ps_per_step": float(blocking.sum()) / n,
            "directions": directions,
            "mid_step_d2h_per_step": int(mid.sum()) / n,
            "rows": rows[:10],
            "windows": windows,
        }

    def small_kernels(self, max_ps: float) -> dict:
        """Kernels in the steps grouped by op type (or kernel name when no op claims them); groups whose
        mean kernel is at most `max_ps` are small: their count, time, count per step, rows and the
        window of the first run of them."""
        p = self.m.p
        k = self.kernels
        key = np.where(
            k.op >= 0,
            np.array([p.ops.type[o] for o in range(len(p.ops))] + [-1], np.int64)[k.op],
            -2 - k.name.astype(np.int64),
        )
        uniq, inv = unique_inverse(key)
        counts = np.bincount(inv, minlength=len(uniq))
        sums = np.bincount(inv, weights=k.dur_ps.astype(float), minlength=len(uniq))
        small = (counts > 0) & (sums <= max_ps * counts)
        rows = []
        for j in np.flatnonzero(small)[np.argsort(-counts[small], kind="stable")][:8].tolist():
            u = int(uniq[j])
            rows.append(
                {
                    "op_type": p.names[u] if u >= 0 else p.names[-2 - u],
                    "kernels": int(counts[j]),
                    "per_step": int(counts[j]) / self.n,
                    "total_ms": float(sums[j]) / 1e9,
                    "mean_us": float(sums[j]) / counts[j] / 1e6,
                }
            )
        is_small = small[inv] if len(k) else np.zeros(0, bool)
        windows = []
        if is_small.any():
            first = int(k.step[is_small].min())
            sel = np.flatnonzero(is_small & (k.step == first))[:50]
            s, e = int(k.start_ps[sel[0]]), int(k.end_ps[sel[-1]])
            windows.append(
                self.window(
                    s,
                    e,
                    f"{len(sel)} small kernels in step {int(self.steps.number[first])}",
                    [p.names[k.name[sel[0]]]],
                    stream=int(k.stream[sel[0]]),
                )
            )
        count = int(counts[small].sum())
        return {
            "count": count,
            "ps": float(sums[small].sum()),
            "per_step": count / self.n,
            "compute_ps": float(k.dur_ps.sum()),
            "rows": rows,
            "windows": windows,
        }

    # -- matmul / convolution kernels --------------------------------------------------------------

    @cached
    def matmul(self) -> dict[str, np.ndarray]:
        """Masks over `kernels`: Tensor-Core-eligible (matmul/convolution), 16-bit, on Tensor Cores."""
        k = self.kernels
        return {
            "eligible": self.m.names.eligible(k),
            "fp16": (k.flags & Flag.FP16) != 0,
            "tc": (k.flags & Flag.TENSOR_CORE) != 0,
        }

    def matmul_mask(self, fp16: bool | None = None, tc: bool | None = None) -> np.ndarray:
        mm = self.matmul
        sel = mm["eligible"].copy()
        if fp16 is not None:
            sel &= mm["fp16"] == fp16
        if tc is not None:
            sel &= mm["tc"] == tc
        return sel

    @cached
    def _matmul_time(self) -> list[list[int]]:
        """Time of matmul/convolution kernels by [16-bit][on Tensor Cores], summed once (the checks
        ask for many combinations)."""
        mm = self.matmul
        e = mm["eligible"]
        dur = self.kernels.dur_ps[e]
        code = mm["fp16"][e].astype(np.int8) * 2 + mm["tc"][e]
        return [[int(dur[code == f * 2 + t].sum()) for t in (0, 1)] for f in (0, 1)]

    def matmul_ps(self, fp16: bool | None = None, tc: bool | None = None) -> float:
        """Time of matmul/convolution kernels, optionally only 16-bit (or not) and on Tensor Cores (or not)."""
        time = self._matmul_time
        fs = (0, 1) if fp16 is None else (int(fp16),)
        ts = (0, 1) if tc is None else (int(tc),)
        return float(sum(time[f][t] for f in fs for t in ts))

    def kernel_rows(self, mask: np.ndarray, limit: int = 8) -> list[dict]:
        """Top kernels of `mask` by time: kernel, op, precision, ms per step, count."""
        p = self.m.p
        k = self.kernels
        fp16 = ((k.flags & Flag.FP16) != 0).astype(np.int64)
        key = (k.name.astype(np.int64) * (len(p.ops) + 1) + (k.op.astype(np.int64) + 1)) * 2 + fp16
        keys, inv = unique_inverse(key[mask])
        sums = np.bincount(inv, weights=k.dur_ps[mask].astype(float)) if len(keys) else np.zeros(0)
        counts = np.bincount(inv) if len(keys) else np.zeros(0, np.int64)
        rows = []
        for j in np.argsort(-sums, kind="stable")[:limit].tolist():
            kk = int(keys[j])
            name, rest = divmod(kk // 2, len(p.ops) + 1)
            rows.append(
                {
                    "kernel": p.names[name],
                    "op": p.op_name(rest - 1),
                    "precision": "16-bit" if kk % 2 else "32-bit",
                    "ms_per_step": float(sums[j]) / 1e9 / self.n,
                    "count": int(counts[j]),
                }
            )
        return rows

    def longest_kernel(self, mask: np.ndarray, label: str) -> Window | None:
        k = self.kernels
        if not mask.any():
            return None
        i = int(np.flatnonzero(mask)[np.argmax(k.dur_ps[mask])])
        op = self.m.p.op_name(int(k.op[i]))
        return self.window(
            int(k.start_ps[i]),
            int(k.end_ps[i]),
            f"{op or 'kernel'} {label}",
            [self.m.p.names[k.name[i]]],
            stream=int(k.stream[i]),
        )

    def matmul_ops(self, fp16: bool = True) -> dict[int, tuple[float, bool]]:
        """Per op of the matmul/convolution kernels (16-bit or not): (time, whether all its kernels use
        Tensor Cores)."""
        k = self.kernels
        sel = self.matmul_mask(fp16) & (k.op >= 0)
        ops, time = _sum_by(k.op[sel], k.dur_ps[sel])
        off_tc = _sum_by(k.op[sel], ~self.matmul["tc"][sel])[1]  # kernels of each op not on Tensor Cores
        return {o: (float(t), not c) for o, t, c in zip(ops.tolist(), time.tolist(), off_tc.tolist())}

    @cached
    def softmax16(self) -> dict[int, float]:
        """16-bit softmax kernels outside the loss: time per op."""
        k = self.kernels
        names = self.m.names
        sel = names.by_op(k.op, names.softmax_outside_loss_op) & ((k.flags & Flag.FP16) != 0)
        ops, time = _sum_by(k.op[sel], k.dur_ps[sel])
        return {o: float(t) for o, t in zip(ops.tolist(), time.tolist())}

    def elementwise_chains(self, max_ps: float, min_chain: int) -> dict:
        """Runs of at least `min_chain` consecutive small element-wise kernels on one stream: their
        time, count, and the longest run's window."""
        k = self.kernels
        small = self.m.names.elementwise(k) & (k.dur_ps <= max_ps)
        total, chains, best = 0, 0, None
        for stream in distinct(k.stream).tolist():
            on = np.flatnonzero(k.stream == stream)
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
                    int(k.start_ps[first]),
                    int(k.end_ps[last]),
                    int(stream),
                    self.m.p.names[k.name[first]],
                )
        window = None
        if best:
            window = self.window(
                best[1], best[2], f"{best[0]} small element-wise kernels in a row", [best[4]], stream=best[3]
            )
        return {"ps": float(total), "chains": chains, "window": window}

    # -- collectives -----------------------------------------------------------------------------

    @cached
    def allreduces(self) -> EventTable:
        ev = self._events
        mask = self.m.allreduce_name
        sel = (ev.kind == Kind.COLLECTIVE) & mask[np.where(ev.name >= 0, ev.name, len(mask) - 1)]
        return ev.take(sel, ("start_ps", "dur_ps", "step", "op", "name"))

    @cached
    def allreduce_ranked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(step, rank within the step, duration) of each all-reduce in the steps, by step then start."""
        ar = self.allreduces
        inside = ar.step >= 0
        steps, durs = ar.step[inside].astype(np.intp), ar.dur_ps[inside].astype(float)
        order = np.argsort(steps, kind="stable")  # events are sorted by start, so each step stays in order
        steps, durs = steps[order], durs[order]
        rank = np.arange(len(steps)) - np.searchsorted(steps, steps, side="left")
        return steps, rank, durs

    # -- helpers -----------------------------------------------------------------------------------

    def stream_label(self, index: int | None) -> tuple[int | None, str]:
        """(stream id, stream name) of a stream index, or (None, 'all streams')."""
        if index is None or not 0 <= index < len(self.m.p.streams):
            return None, "all streams"
        s = self.m.p.streams[index]
        return s.stream_id, s.name

    def window(
        self, start: int, end: int, label: str, events: list[str] | None = None, stream: int | None = None
    ) -> Window:
        sid, sname = self.stream_label(stream)
        return Window(int(start), int(end), label, events or [], device_id=self.id, stream_id=sid, stream=sname)

    def busiest_stream(self, start: int, end: int) -> int | None:
        """The stream index with the most device time in [start, end)."""
        ev = self._events
        sel = (ev.end_ps > start) & (ev.start_ps < end)
        if not sel.any():
            return None
        d = np.minimum(ev.end_ps[sel], end) - np.maximum(ev.start_ps[sel], start)
        streams = ev.stream[sel]
        u, inv = unique_inverse(streams)
        return int(u[np.argmax(np.bincount(inv, weights=d.astype(float)))])

    def names_in(self, start: int, end: int, limit: int = 5) -> list[str]:
        ev = self._events
        sel = (ev.end_ps > start) & (ev.start_ps < end)
        ids = ev.name[sel]
        u, counts = np.unique(ids, return_counts=True)
        return [self.m.p.names[int(i)] for i in u[np.argsort(-counts, kind="stable")][:limit].tolist()]


class Measures:
    """Every measurement of one analysed profile (see the module's doc)."""

    def __init__(self, a: Analysis):
        self._a = a
        self.p = a.profile
        self.names = NameClasses(a.profile)
        self._gpus = {d: GpuMeasures(self, g) for d, g in a.gpus.items()}

    # -- the capture -----------------------------------------------------------------------------

    @property
    def framework(self) -> str:
        return self.p.framework

    @property
    def is_pytorch(self) -> bool:
        return self.p.framework == PYTORCH

    @property
    def devices(self):
        return self.p.devices

    @property
    def gpu_ids(self) -> list[int]:
        """The active GPUs (with kernels)."""
        return list(self._gpus)

    def gpu(self, device_id: int) -> GpuMeasures:
        return self._gpus[device_id]

    @property
    def gpus(self) -> list[GpuMeasures]:
        return list(self._gpus.values())

    @property
    def tensor_core_gpus(self) -> list[GpuMeasures]:
        """The active GPUs with Tensor Cores (compute capability 7.0 or newer)."""
        return [g for g in self.gpus if g.device.has_tensor_cores]

    def capabilities(self) -> str:
        return (
            ", ".join(
                f"{d.compute_capability[0]}.{d.compute_capability[1]}" if d.compute_capability else "unknown"
                for d in self.p.devices
            )
            or "unknown"
        )

    @property
    def copy_only_gpus(self) -> list[int]:
        return self._a.copy_only

    @property
    def idle_gpus(self) -> list[int]:
        return self._a.idle

    @property
    def has_xla(self) -> bool:
        return self.p.has_xla

    @property
    def host_steps(self) -> Steps:
        return self._a.host_steps

    @property
    def steps(self) -> Steps:
        """The steps reported first (the host's, or the first active GPU's)."""
        return self._a.steps

    @property
    def shared_steps(self) -> bool:
        return self._a.shared_steps

    def steps_of(self, device_id: int | None) -> Steps:
        return self._a.steps_of(device_id)

    def breakdown_ms(self) -> dict[str, float]:
        return self._a.breakdown_ms()

    @cached
    def allreduce_name(self) -> np.ndarray:
        return _mask_of(self.p.names.strings, lambda s: "allreduce" in s.lower().replace("_", ""))

    # -- several GPUs ------------------------------------------------------------------------------

    @cached
    def serialization(self) -> dict:
        """How much the active GPUs' compute overlaps: index 0 when they compute at the same time, 1
        when one after another: sum over windows of (union - busiest) / (sum - busiest). Windows are
        the shared steps, or, when the GPUs have steps of their own, the span of all their work."""
        gpus = self.gpus
        sets = [g._g.activity.by_category["device_compute"] for g in gpus]
        if self.shared_steps:
            lo, hi = gpus[0].steps.start_ps, gpus[0].steps.end_ps
        else:
            windows = iv.union_all(*(g.step_windows for g in gpus))
            lo, hi = windows[0][:1], windows[1][-1:]
        per = np.array([iv.measure_in(s, lo, hi) for s in sets], float)
        union = iv.measure_in(iv.union_all(*sets), lo, hi).astype(float)
        total, most = per.sum(axis=0), per.max(axis=0)
        denom = float((total - most).sum())
        index = float((union - most).sum()) / denom if denom > 0 else 0.0
        return {"index": index, "union": union, "most": most, "lo": lo, "hi": hi}

    @cached
    def first_compute(self) -> np.ndarray:
        """With shared steps: (GPU, step) start of each GPU's first compute in the step (NaN if none)."""
        gpus = self.gpus
        steps = gpus[0].steps
        firsts = np.full((len(gpus), len(steps)), np.nan)
        for r, g in enumerate(gpus):
            s, _ = g._g.activity.by_category["device_compute"]
            if not len(s):
                continue
            k = np.minimum(np.searchsorted(s, steps.start_ps, side="left"), len(s) - 1)
            firsts[r] = np.where((s[k] >= steps.start_ps) & (s[k] < steps.end_ps), s[k], np.nan)
        return firsts

    @cached
    def allreduce(self) -> dict:
        """All-reduce calls of the active GPUs: calls per GPU per step; per step, the time of all but
        the longest call (extra calls), mean over GPUs; transfer and waiting time per step. NCCL kernels
        start when their GPU arrives and end together, so a GPU that arrives early waits inside the
        kernel: each call's transfer is its shortest duration across GPUs, the rest is waiting. With
        shared steps calls are matched by their order in the step; otherwise each GPU's own time is
        transfer."""
        gpus = self.gpus
        per_gpu = {g.id: len(g.allreduce_ranked[0]) / g.n for g in gpus}
        extra = []
        for g in gpus:
            steps, _, durs = g.allreduce_ranked
            most = np.zeros(len(g.steps))
            np.maximum.at(most, steps, durs)
            extra.append((float(durs.sum()) - float(most.sum())) / g.n)
        transfer = waiting = 0.0
        if self.shared_steps and gpus:
            n_steps = len(gpus[0].steps)
            counts = np.array([np.bincount(g.allreduce_ranked[0], minlength=n_steps) for g in gpus])
            equal = (counts == counts[0]).all(axis=0) & (counts[0] > 0)
            width = int(counts.max()) if counts.size else 0
            mins = np.full(n_steps * width, np.inf)
            sums = np.zeros(len(gpus))
            for j, g in enumerate(gpus):
                steps, rank, durs = g.allreduce_ranked
                matched = equal[steps]
                row = np.full(n_steps * width, np.inf)
                row[steps[matched] * width + rank[matched]] = durs[matched]
                mins = np.minimum(mins, row)
                sums[j] = float(durs[matched].sum())
            t = float(mins[np.isfinite(mins)].sum())
            unequal = float(np.mean([g.allreduce_ranked[2][~equal[g.allreduce_ranked[0]]].sum() for g in gpus]))
            n = gpus[0].n
            transfer = (t + unequal) / n
            waiting = (float(sums.mean()) - t) / n
        elif gpus:
            transfer = float(np.mean([float(g.allreduce_ranked[2].sum()) / g.n for g in gpus]))
        # a call that starts at a step's end runs on past it: count no more than the steps hold
        held = [
            float(
                iv.measure_in(g._g.activity.by_category["device_collectives"], g.steps.start_ps, g.steps.end_ps).sum()
            )
            / g.n
            for g in gpus
        ]
        cap = float(np.mean(held)) if held else 0.0
        transfer = min(transfer, cap)
        return {
            "per_gpu": per_gpu,
            "extra_ps": min(float(np.mean(extra)) if extra else 0.0, transfer),
            "transfer_ps": transfer,
            "waiting_ps": min(waiting, max(cap - transfer, 0.0)),
            "any": any(len(g.allreduces) for g in gpus),
        }

    @cached
    def allreduce_params(self) -> int | None:
        """Elements all-reduced per step, from the shapes of the all-reduce ops (the gradients, when one
        all-reduce per step carries them all): on the first GPU, in the step with the most."""
        if not self.gpus:
            return None
        ar = self.gpus[0].allreduces
        inside = ar.step >= 0
        ops, inv = unique_inverse(ar.op[inside])
        elements = np.array([_elements(self.op_shape(int(o))) for o in ops.tolist()], np.float64)
        per_step = np.bincount(ar.step[inside], weights=elements[inv]) if len(ops) else np.zeros(0)
        best = int(per_step.max()) if len(per_step) else 0
        return best or None

    # -- the host --------------------------------------------------------------------------------

    @property
    def host(self) -> EventTable:
        """Every host event, with `thread` and `step` (host steps) columns."""
        return self._a.host

    def thread_name(self, index: int) -> str:
        return self.p.threads[index].name if 0 <= index < len(self.p.threads) else ""

    @cached
    def tf_data_threads(self) -> np.ndarray:
        """Mask over thread indices: tf.data's own threads."""
        return np.array([t.name.startswith("tf_data") for t in self.p.threads] + [False], bool)

    @cached
    def main_threads(self) -> np.ndarray:
        """Mask over thread indices: the thread(s) running the Python training loop (named so, or
        holding the step markers)."""
        h = self.host
        marked = set(distinct(h.thread[h.kind == Kind.STEP]).tolist())
        return np.array(
            [t.name.split("/")[0] in MAIN_THREADS or i in marked for i, t in enumerate(self.p.threads)] + [False], bool
        )

    def _on(self, threads: np.ndarray) -> np.ndarray:
        t = self.host.thread
        return threads[np.where(t >= 0, t, len(threads) - 1)]

    @cached
    def launch_corr(self) -> np.ndarray:
        """Correlation ids of the host's launch calls (sorted)."""
        h = self.host
        return distinct(h.corr[(h.kind == Kind.LAUNCH) & (h.corr >= 0)])

    @cached
    def lost_gpu_events(self) -> LostGpuEvents:
        """Launches without their GPU work: a launch call's correlation id appears on no GPU event. Only
        launches started before the last GPU event started count (work launched at the very end of the
        capture may run after it stopped)."""
        h = self.host
        said = tuple(m for m in self.p.capture_errors if PROFILER_LOST.search(m) and "outside the capture" not in m)
        device = [s.events for s in self.p.streams if len(s.events)]
        if not device:
            return LostGpuEvents(0, 0, said, None)
        last = max(int(t.start_ps.max()) for t in device)
        corr = distinct(np.concatenate([t.corr[t.corr >= 0] for t in device]))
        sel = (h.kind == Kind.LAUNCH) & (h.corr >= 0) & (h.start_ps < last)
        missing = np.flatnonzero(sel & ~np.isin(h.corr, corr))
        first = None
        if len(missing):
            i = int(missing[0])
            name = self.p.names[int(h.name[i])]
            first = Window(
                int(h.start_ps[i]),
                int(h.end_ps[i]),
                f"{name}: its GPU work is not in the trace",
                [name],
                thread=self.thread_name(int(h.thread[i])),
            )
        return LostGpuEvents(int(sel.sum()), len(missing), said, first)

    @cached
    def host_compute_ops(self) -> np.ndarray:
        """Mask of host events that are compute ops placed on the host (not on a tf.data thread, not
        loss scaling, not the runtime's plumbing, which the reader does not count as ops)."""
        h = self.host
        n = self.names
        m = (h.kind == Kind.FRAMEWORK_OP) & (h.op >= 0) & ~self._on(self.tf_data_threads)
        return m & ~n.by_op(h.op, n.on_device_op) & ~n.by_op(h.op, n.loss_scale_op)

    @cached
    def host_sets(self) -> dict[str, iv.Intervals]:
        """What the host is doing, as interval sets: waiting for input, loss-scaling ops, XLA
        compilation, host-placed compute ops, Python work on the main thread (eager ops, callbacks,
        metrics; not the calls that only wait for a graph to run), busy tf.data threads."""
        h = self.host
        n = self.names
        k = h.kind

        def u(mask):
            return iv.union(h.start_ps[mask], h.end_ps[mask])

        wait = k == Kind.INPUT_WAIT
        sets = {"input": u(wait)}
        sets["loss_scaling"] = u((k == Kind.FRAMEWORK_OP) & n.by_op(h.op, n.loss_scale_op))
        sets["compilation"] = u(n.by_name(h.name, n.compile_name))
        sets["host_ops"] = u(self.host_compute_ops)
        main = self._on(self.main_threads)
        eager = (k == Kind.EAGER) & ((h.flags & Flag.FUNCTION) == 0)
        python_work = (k == Kind.HOST_OTHER) & ~n.by_name(h.name, n.container_name)
        work = main & (eager | python_work | (k == Kind.FRAMEWORK_OP))
        # the host's work inside its wait for input (a DataLoader without workers decodes in the training
        # process) is input.bound's: not counted again as host work
        sets["host_work"] = iv.subtract(u(work), sets["input"])
        data = (self._on(self.tf_data_threads) & ~wait) | (k == Kind.INPUT_STAGE)
        sets["tf_data"] = iv.subtract(u(data), sets["input"])
        return sets

    @cached
    def host_work_events(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(start, end, label, thread) of the main thread's work events: eager markers labelled by
        their op (as -2 - op), everything else by its name id."""
        h = self.host
        n = self.names
        main = self._on(self.main_threads)
        k = h.kind
        eager = (k == Kind.EAGER) & ((h.flags & Flag.FUNCTION) == 0)
        cand = np.flatnonzero(
            main & (eager | ((k == Kind.HOST_OTHER) & ~n.by_name(h.name, n.container_name)) | (k == Kind.FRAMEWORK_OP))
        )
        op = h.op[cand]
        label = np.where(eager[cand] & (op >= 0), -2 - op.astype(np.int64), h.name[cand].astype(np.int64))
        return h.start_ps[cand], h.end_ps[cand], label, h.thread[cand]

    def label_text(self, label: int) -> str:
        return self.p.op_type(-2 - label) if label < -1 else self.p.names[label]

    # -- ops -------------------------------------------------------------------------------------

    @cached
    def op_time_ps(self) -> tuple[int, int]:
        """(device op time, host op time) over the capture (see `Analysis.op_time_ps`)."""
        return self._a.op_time_ps()

    @cached
    def host_op_rows(self) -> list[dict]:
        """Host-placed compute ops by time: op, type, total ps, count, and whether it runs Python."""
        h = self.host
        m = self.host_compute_ops
        ops, inv = unique_inverse(h.op[m])
        sums = np.bincount(inv, weights=h.dur_ps[m].astype(float)) if len(ops) else np.zeros(0)
        counts = np.bincount(inv) if len(ops) else np.zeros(0, np.int64)
        rows: list[dict[str, Any]] = [
            {
                "op": int(o),
                "name": self.p.op_name(o),
                "type": self.p.op_type(o),
                "type_label": op_type_label(self.p.op_type(o), self.p.op_executed(o)),
                "ps": float(s),
                "count": int(c),
                "py_function": bool(self.names.py_function_op[o]),
            }
            for o, s, c in zip(ops.tolist(), sums.tolist(), counts.tolist())
        ]
        rows.sort(key=lambda r: (-r["ps"], r["name"]))
        return rows

    @cached
    def longest_host_ops(self) -> list[Window]:
        h = self.host
        m = np.flatnonzero(self.host_compute_ops)
        out = []
        for i in m[np.argsort(-h.dur_ps[m], kind="stable")[:3]].tolist():
            op = self.p.op_name(int(h.op[i]))
            out.append(
                Window(
                    int(h.start_ps[i]),
                    int(h.end_ps[i]),
                    f"{op} on the host ({h.dur_ps[i] / 1e9:.2f} ms)",
                    [op],
                    thread=self.thread_name(int(h.thread[i])),
                )
            )
        return out

    @cached
    def eager(self) -> dict:
        """Eager execution inside the steps: executions (nested markers of one execution counted once),
        host dispatch time (union), device time of eager kernels, per op type rows, and the busiest
        step's window."""
        h = self.host
        m = (h.kind == Kind.EAGER) & ((h.flags & Flag.FUNCTION) == 0) & (h.step >= 0)
        idx = np.flatnonzero(m)
        outer = np.zeros(len(idx), bool)
        # an execution is an eager marker not nested in another one on the same thread
        reach: dict[int, int] = {}
        for j, i in enumerate(idx.tolist()):
            t = int(h.thread[i])
            if int(h.start_ps[i]) >= reach.get(t, -(2**62)):
                outer[j] = True
            reach[t] = max(reach.get(t, -(2**62)), int(h.end_ps[i]))
        top = idx[outer]
        host_ps = iv.total(iv.union(h.start_ps[m], h.end_ps[m]))
        dev = 0.0
        for g in self.gpus:
            ev = g._events
            dev += float(ev.dur_ps[((ev.flags & Flag.EAGER) != 0) & (ev.op >= 0) & (ev.step >= 0)].sum())
        # label each execution by its op (the inner marker may carry it when the outer does not)
        labels = np.where(h.op[top] >= 0, -2 - h.op[top].astype(np.int64), h.name[top].astype(np.int64))
        keys, inv = unique_inverse(labels)
        sums = np.bincount(inv, weights=h.dur_ps[top].astype(float)) if len(keys) else np.zeros(0)
        counts = np.bincount(inv) if len(keys) else np.zeros(0, np.int64)
        rows: list[dict[str, Any]] = sorted(
            (
                {
                    "op_type": self.label_text(int(k)),
                    "executed": self.p.op_executed(-2 - int(k)) if k < -1 else self.label_text(int(k)),
                    "ps": float(s),
                    "count": int(c),
                }
                for k, s, c in zip(keys.tolist(), sums.tolist(), counts.tolist())
            ),
            key=lambda r: -r["ps"],
        )
        window = None
        if len(top):
            steps = h.step[top]
            busiest = int(np.bincount(steps).argmax())
            sel = top[steps == busiest]
            window = Window(
                int(h.start_ps[sel[0]]),
                int(h.end_ps[sel[-1]]),
                f"{len(sel)} eager ops in step {int(self.host_steps.number[busiest])}",
                [r["op_type"] for r in rows[:5]],
                thread=self.thread_name(int(h.thread[sel[0]])),
            )
        return {
            "executions": int(len(top)),
            "host_ps": float(host_ps),
            "device_ps": dev,
            "rows": rows,
            "window": window,
        }

    # -- input pipeline --------------------------------------------------------------------------

    @cached
    def stage_self_time(self) -> dict[str, float]:
        """Self time (ps) of each tf.data stage (`Iterator::...`) over the capture: a stage nested in
        another on the same thread is subtracted from its parent."""
        out: dict[str, float] = defaultdict(float)
        names = self.p.names
        for t in self.p.threads:
            ev = t.events.take(t.events.kind == Kind.INPUT_STAGE)
            stack: list[tuple[int, int]] = []  # (end, name id) of the enclosing stages
            for s, e, nm in zip(ev.start_ps.tolist(), ev.end_ps.tolist(), ev.name.tolist()):
                while stack and stack[-1][0] <= s:
                    stack.pop()
                out[names[nm]] += e - s
                if stack:
                    out[names[stack[-1][1]]] -= e - s
                stack.append((e, nm))
        return {k: v for k, v in out.items() if v > 0}

    @cached
    def launch_calls(self) -> dict:
        """The launch calls of the capture as the trace measures them: how many, their median duration
        (µs), and the host's time per launched kernel in the steps (mean step time over kernel launches
        per step: the pace of the host loop, of which the call itself is a part)."""
        h = self.host
        sel = h.kind == Kind.LAUNCH
        durs = h.dur_ps[sel]
        steps = self.host_steps
        in_steps = int((h.step[sel] >= 0).sum()) if "step" in h else 0
        per_step = in_steps / len(steps) if len(steps) else 0.0
        return {
            "count": int(sel.sum()),
            "median_us": float(np.median(durs)) / 1e6 if len(durs) else None,
            "per_step": per_step,
            "host_us_per_launch": steps.mean_ps / per_step / 1e6 if per_step > 0 and len(steps) else None,
        }

    @cached
    def input_stage_names(self) -> list[str]:
        """The names of the tf.data stages in the capture (`Iterator::Root::Prefetch::ParallelMapV2`)."""
        out: set[str] = set()
        for t in self.p.threads:
            k = t.events.kind == Kind.INPUT_STAGE
            if k.any():
                out.update(self.p.names[int(i)] for i in np.unique(t.events.name[k]).tolist())
        return sorted(out)

    def longest_input_wait(self, start: int, end: int) -> Window | None:
        """The longest wait for input that starts in [start, end)."""
        h = self.host
        sel = np.flatnonzero((h.kind == Kind.INPUT_WAIT) & (h.start_ps >= start) & (h.start_ps < end))
        if not len(sel):
            return None
        i = int(sel[np.argmax(h.dur_ps[sel])])
        return Window(
            int(h.start_ps[i]),
            int(h.end_ps[i]),
            "",
            [self.p.names[h.name[i]]],
            thread=self.thread_name(int(h.thread[i])),
        )

    @cached
    def host_input_wait_per_step(self) -> np.ndarray:
        """Without a GPU: the host waiting for input in each of its steps."""
        return self._a.host_breakdown_ps[:, CATEGORIES.index("host_input_wait")].astype(np.float64)

    @cached
    def input_source(self) -> str:
        """The input wait event that takes the most time (the iterator's get-next, the DataLoader's
        `__next__`), or "" when there is none."""
        h = self.host
        sel = h.kind == Kind.INPUT_WAIT
        if not sel.any():
            return ""
        u, inv = unique_inverse(h.name[sel])
        return self.p.names[int(u[np.argmax(np.bincount(inv, weights=h.dur_ps[sel].astype(float)))])]

    @property
    def gpu_private(self) -> bool:
        """Whether GPU work is launched from private threads (TF_GPU_THREAD_MODE=gpu_private)."""
        return any("gpu_private" in t.name for t in self.p.threads)

    # -- XLA, loss scaling, memory -------------------------------------------------------------------

    @cached
    def compilations(self) -> list[Window]:
        """XLA compilations: nested compile events on one thread count once."""
        h = self.host
        m = self.names.by_name(h.name, self.names.compile_name)
        out = []
        for t in distinct(h.thread[m]).tolist():
            sel = m & (h.thread == t)
            s, e = iv.union(h.start_ps[sel], h.end_ps[sel])
            out += [Window(int(a), int(b), "", [], thread=self.thread_name(t)) for a, b in zip(s.tolist(), e.tolist())]
        return sorted(out, key=lambda w: w.start_ps)

    def host_window(self, events: EventTable, start: int, end: int, label: str) -> Window | None:
        """The window from the first to the last of `events` (host events) starting in [start, end)."""
        sel = np.flatnonzero((events.start_ps >= start) & (events.start_ps < end))
        if not len(sel):
            return None
        names = sorted(
            {self.p.op_name(int(o)) or self.p.names[int(n)] for o, n in zip(events.op[sel], events.name[sel])}
        )
        return Window(
            int(events.start_ps[sel[0]]),
            int(events.end_ps[sel[-1]]),
            label,
            names[:5],
            thread=self.thread_name(int(events.thread[sel[0]])),
        )

    @cached
    def compile_in_steps_ps(self) -> float:
        """Compilation time inside the host's steps, per step."""
        st = self.host_steps
        return float(iv.measure_in(self.host_sets["compilation"], st.start_ps, st.end_ps).sum()) / max(len(st), 1)

    @cached
    def loss_scale_ops(self) -> EventTable:
        h = self.host
        return h.take((h.kind == Kind.FRAMEWORK_OP) & self.names.by_op(h.op, self.names.loss_scale_op))

    @cached
    def memory_peaks(self) -> list[dict]:
        """Per GPU with a memory size and allocator records: peak bytes in use against capacity. XSpace:
        the GPU's BFC allocator's `peak_bytes_in_use`; PyTorch: the largest `Total Allocated` of its
        `[memory]` records, or, in traces that do not record totals (PyTorch before 1.10), the largest
        running sum of their bytes, which leaves out what was allocated before the capture began
        (`from_capture`: the peak is then a lower bound)."""
        h = self.host
        mem = h.take(((h.kind == Kind.MEMORY_ALLOC) | (h.kind == Kind.MEMORY_FREE)) & (h.peak_bytes >= 0))
        records = self.p.memory
        rows = []
        for d in self.p.devices:
            if not d.memory_bytes:
                continue
            alloc = self.p.names.get(f"GPU_{d.id}_bfc")
            m = mem.allocator == alloc if alloc >= 0 else np.zeros(len(mem), bool)
            from_capture = False
            on_device = records.device == d.id
            if np.any(m):
                peak = int(mem.peak_bytes[m].max())
            elif np.any(on_device):
                totals = records.allocated[on_device]
                from_capture = not np.any(totals >= 0)
                peak = int(np.cumsum(records.bytes[on_device]).max()) if from_capture else int(totals.max())
            else:
                continue
            rows.append(
                {
                    "device_id": d.id,
                    "peak_gib": peak / 2**30,
                    "memory_gib": d.memory_bytes / 2**30,
                    "peak_pct": 100.0 * peak / d.memory_bytes,
                    "from_capture": from_capture,
                }
            )
        return rows

    @cached
    def odd_dim_ops(self) -> tuple[list[int], list[dict]]:
        """(16-bit matmul/conv ops with shapes, rows of those whose dimensions are not multiples of 8
        (16 for int8): op, type, shape, padded shape, ms per step per GPU, whether all its kernels use
        Tensor Cores)."""
        return _odd_dim_ops(self)

    def op_shape(self, op: int) -> str:
        return self.p.ops.shape[op] if 0 <= op < len(self.p.ops) else ""

    def op_name(self, op: int) -> str:
        return self.p.op_name(op)

    def op_type(self, op: int) -> str:
        return self.p.op_type(op)

    def name(self, name_id: int) -> str:
        return self.p.names[name_id]
