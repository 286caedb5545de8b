"""How names and ops are classified beyond what the readers decide (model/classify.py): Tensor-Core-
eligible, element-wise, softmax, loss scaling, compilation, the runtime's containers, collective calls
and all-reduces; each decision made once per distinct name or op. Every name rule a measure, a check,
a table or the rank digest applies is defined here or in model/classify.py, once
(tests/measures/test_name_rules.py)."""

from __future__ import annotations

import re
from typing import Callable, Iterable

import numpy as np

from tb_gpu_advisor.common.parallel import cached
from tb_gpu_advisor.model.arrays import unique_inverse
from tb_gpu_advisor.model.classify import PY_FUNCTION_OPS, uses_matrix_cores
from tb_gpu_advisor.model.profile import EventTable, Kind, Profile

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
# Kernel names of GEMMs and convolutions, for kernels no op claims (XLA custom calls, cuBLAS direct);
# not XLA's `loop_convert_*` fusions, which are element-wise type conversions.
GEMM_CONV_NAME = re.compile(r"gemm|conv(?!ert)|scudnn|hmma|xmma|cutlass|wgrad|dgrad|fprop|nvjet", re.I)

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
# Host events of an XLA (or JAX) compilation, or of torch.compile's: `_compile.compile_inner
# (dynamo_timed)` once per (re)compilation, inside `entire_frame_compile` (torch 2.13,
# tests/data/pytorch_compile_cpu); not `TorchDynamo Cache Lookup`, the guard check of every call of a
# compiled function, nor `Torch-Compiled Region: 0/0`, its run.
COMPILE = re.compile(
    r"(:_XlaCompile$|^XlaCompilationCache::Compile|BackendCompile|^pjit.*[Cc]ompile|^jit_compile"
    r"|^PjitFunction.*[Cc]ompile|^_compile\.compile_inner|^entire_frame_compile|CompileFunction)"
)
# A whole CUDA graph launched in one call: PyTorch's CUDA graphs (`cudaGraphLaunch`), XLA's command
# buffers (`cuGraphLaunch (CudaGraph:36)`)
GRAPH_LAUNCH = re.compile(r"^cu(?:da)?GraphLaunch", re.I)
# The host waiting for the GPU to finish: the device, a stream or an event
HOST_SYNC = re.compile(r"^cu(?:da)?(?:Device|Ctx|Stream|Event)Synchronize", re.I)
MEMSET_CALL = re.compile(r"^cu(?:da)?Memset")
# Memory allocation calls that take the driver's lock, holding up every launch on other threads while
# they run: pinned host memory (a DataLoader's pin-memory thread growing its pool: 3-4 ms a call on
# an H100, tests/data/gpu) and device memory
ALLOC_CALL = re.compile(
    r"^cu(?:da)?(?:HostAlloc|MallocHost|FreeHost|MemHostAlloc|MemFreeHost|Malloc|Free|MemAlloc|MemFree)\b"
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

# An all-reduce, by name, on the GPU and on the host: NCCL's kernels (`ncclKernel_AllReduce_RING_LL_Sum_float`,
# `ncclAllReduceRingLLKernel`), the backends' spans (`nccl:all_reduce`, `gloo:all_reduce`), c10d's ops
# (`c10d::allreduce_`) and TensorFlow's collective ops (`sgd/CollectiveReduceV2:CollectiveReduceV2`;
# not `CollectiveReduceScatter`).
ALLREDUCE = re.compile(r"all_*reduce|CollectiveReduce(?!Scatter)", re.I)
# Host spans of collective communication: gloo's and NCCL's own annotations, c10d's ops, and
# record_param_comms (what PyTorch wraps every collective in); TensorFlow's collective ops as the
# host runs them (`name:Type`: MultiWorkerMirroredStrategy's `sgd/CollectiveReduceV2:CollectiveReduceV2`).
COLLECTIVE_HOST = re.compile(
    r"^(gloo:|nccl:|c10d::|record_param_comms$)"
    r"|:(Collective(Reduce|Gather|Bcast\w*|AllToAll|ReduceScatter|Assign\w*)(V\d)?|NcclAllReduce)$"
)
# One span per collective call: the backend's annotation (`gloo:all_reduce`, `nccl:all_to_all`), which
# c10d's op (`c10d::allreduce_`, on the calling thread) and record_param_comms wrap; TensorFlow's ops.
CALL_HOST = re.compile(
    r"^(gloo|nccl):|:(Collective(Reduce|Gather|Bcast\w*|AllToAll|ReduceScatter)(V\d)?|NcclAllReduce)$"
)
CALL_C10D = re.compile(r"^c10d::")  # the calls, in a file without the backends' annotations

# tf.data stages as the trace names them (`Iterator::Root::Prefetch::ParallelMapV2::...`) and the advice
# each makes moot; the DataLoader's iterator class says whether it has worker processes.
TF_DATA_STAGES = (
    ("Prefetch", "`prefetch`"),
    ("ParallelMap", "a parallel `map`"),
    ("MapAndBatch", "a parallel `map`"),
    ("ParallelInterleave", "parallel reads (`interleave`)"),
    ("ParallelBatch", "parallel batching"),
    ("Cache", "`cache`"),
)
MULTI_WORKER_LOADER = "_MultiProcessingDataLoaderIter"


def tf_data_present(stage_names: Iterable[str]) -> list[str]:
    """What the tf.data pipeline already does, from its stage names (each said once, in TF_DATA_STAGES' order)."""
    seen: list[str] = []
    for key, what in TF_DATA_STAGES:
        if what not in seen and any(key in n.split("::")[-1] or f"::{key}" in n for n in stage_names):
            seen.append(what)
    return seen


def sum_by(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, the int64 sum of the values of each): exact, unlike a float bincount."""
    u, inv = unique_inverse(keys)
    sums = np.zeros(len(u), np.int64)
    np.add.at(sums, inv, values.astype(np.int64, copy=False))
    return u, sums


def mask_of(strings: list[str], test: Callable[[str], object]) -> np.ndarray:
    """A decision per distinct string, with a final False for index -1."""
    return np.array([bool(test(s)) for s in strings] + [False], bool)


class NameClasses:
    """Decisions made once per distinct name or op, looked up through the name-id and op-id columns."""

    def __init__(self, p: Profile) -> None:
        self.p = p

    def by_name(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        # id -1 (none, the least a reader writes): the mask's last entry; `take` wraps it there, a
        # third of the time of clamping the ids first and indexing
        return mask.take(ids, mode="wrap")

    def by_op(self, ops: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask.take(ops, mode="wrap")  # op -1 (none): the last entry, as above

    @cached
    def compile_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, COMPILE.search)

    @cached
    def graph_launch_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, GRAPH_LAUNCH.match)

    @cached
    def host_sync_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, HOST_SYNC.match)

    @cached
    def memset_call_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, MEMSET_CALL.match)

    @cached
    def alloc_call_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, ALLOC_CALL.match)

    @cached
    def container_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, CONTAINERS.match)

    @cached
    def gemm_conv_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, GEMM_CONV_NAME.search)

    @cached
    def matrix_core_name(self) -> np.ndarray:
        """AMD kernels that say they run on the matrix cores (classify.AMD_MATRIX)."""
        return mask_of(self.p.names.strings, uses_matrix_cores)

    @cached
    def elementwise_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, ELEMENTWISE_NAME.search)

    def _op_mask(self, test: Callable[[str, str], object]) -> np.ndarray:
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

    @cached
    def untyped_op(self) -> np.ndarray:
        """Ops without a type: containers such as JAX's `XlaModule:` that XLA's command buffers (CUDA
        graphs) give every kernel of a step (JAX 0.11 on an H100, tests/data/gpu)."""
        return self._op_mask(lambda _n, t: not t)

    def eligible(self, ev: EventTable) -> np.ndarray:
        """Kernels of Tensor-Core-eligible ops (by op type, or by kernel name when no op, or an op
        without a type, claims it)."""
        by_op = self.by_op(ev.op, self.tensor_core_op)
        by_name = ((ev.op < 0) | self.by_op(ev.op, self.untyped_op)) & self.by_name(ev.name, self.gemm_conv_name)
        return (ev.kind == Kind.KERNEL) & (by_op | by_name)

    def elementwise(self, ev: EventTable) -> np.ndarray:
        return (ev.kind == Kind.KERNEL) & (
            self.by_op(ev.op, self.elementwise_op) | self.by_name(ev.name, self.elementwise_name)
        )

    @cached
    def allreduce_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, ALLREDUCE.search)

    @cached
    def collective_host_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, COLLECTIVE_HOST.search)

    @cached
    def collective_call_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, CALL_HOST.search)

    @cached
    def c10d_call_name(self) -> np.ndarray:
        return mask_of(self.p.names.strings, CALL_C10D.search)
