"""How names and ops are classified beyond what the readers decide (model/classify.py): Tensor-Core-
eligible, element-wise, softmax, loss scaling, compilation, the runtime's containers, collective calls
and all-reduces; each decision made once per distinct name or op. Every name rule a measure, a check,
a table or the rank digest applies is defined here or in model/classify.py, once
(tests/measures/test_name_rules.py)."""

from __future__ import annotations

import bisect
import re
from typing import Iterable

import numpy as np

from tb_gpu_advisor.common.parallel import cached
from tb_gpu_advisor.model.arrays import unique_inverse
from tb_gpu_advisor.model.classify import (
    ALLOC_CALL,
    AMD_MATRIX,
    KERNEL_LAUNCH,
    PY_FUNCTION_OPS,
    STARTUP_CALL,
    STEP_CONTAINER_NAMES,
)
from tb_gpu_advisor.model.profile import EventTable, Flag, Kind, Profile

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
GRAPH_LAUNCH = re.compile(r"^(?:cu(?:da)?|hip)GraphLaunch", re.I)
# The host waiting for the GPU to finish: the device, a stream or an event (CUDA's calls and HIP's)
HOST_SYNC = re.compile(r"^(?:cu(?:da)?|hip)(?:Device|Ctx|Stream|Event)Synchronize", re.I)
MEMSET_CALL = re.compile(r"^cu(?:da)?Memset")
# What the run already applies, by name (measures/applied.py):
# torch.compile: Inductor's Triton kernels and their launchers (`triton_poi_fused_add_0`), a compiled
# region's run (`Torch-Compiled Region: 0/0`), its autograd functions (`CompiledFunction`,
# `CompiledFunctionBackward`) and the guard check of every call (`TorchDynamo Cache Lookup`); a CPU
# build's compiled code runs no Triton kernel, only these (tests/data/pytorch_compile_cpu)
COMPILED = re.compile(r"^(?:triton_|Torch-Compiled Region|CompiledFunction|TorchDynamo Cache Lookup)")
# TorchScript: its graph executor's ops (`prim::`, `torch::jit::...::DifferentiableGraphBackward`)
TORCHSCRIPT = re.compile(r"^prim::|torch::jit::|DifferentiableGraph")
# an optimizer's update in few kernels: `fused=True` (`aten::_fused_adamw_`, FusedOptimizerTensorListMetadata
# kernels) or `foreach=True` (`aten::_foreach_mul_`, multi_tensor_apply_kernel)
FUSED_OPTIMIZER = re.compile(r"^aten::_fused_(?:adam|adamw|sgd|adagrad)_?$")
FOREACH_OPTIMIZER = re.compile(r"^aten::_foreach_")
# cuDNN converting a convolution's tensors between NCHW and NHWC: the model is not channels_last
LAYOUT_CONVERSION = re.compile(r"nchwToNhwc|nhwcToNchw")
# a convolution, by its op's type (`aten::cudnn_convolution`, `Conv2DBackpropFilter`) or, where no op
# says, its kernel's name (cuDNN's `..._fprop_...`, `..._dgrad_...`, `..._wgrad_...`); not XLA's
# `loop_convert_fusion`, a type conversion
CONVOLUTION = re.compile(r"conv(?!ert)|fprop|dgrad|wgrad", re.I)
# a JAX (or XLA) compiled program's run, named after its function (`CommonPjRtLoadedExecutable::Execute
# (jit_train_step)`): one a step when the whole step is jitted, one per op when it runs op by op
XLA_PROGRAM_RUN = re.compile(r"^CommonPjRtLoadedExecutable::Execute \((.+)\)$")
# Memory allocation calls (model/classify.py's ALLOC_CALL, CUDA's and HIP's) take the driver's lock,
# holding up every launch on other threads while they run: pinned host memory (a DataLoader's
# pin-memory thread growing its pool: 3-4 ms a call on an H100, tests/data/gpu) and device memory.

# Long host events that only wait for a graph or a step to run: not Python work.
CONTAINERS = re.compile(
    r"^("
    + "|".join(
        (
            *STEP_CONTAINER_NAMES,
            r"PjitFunction.*",
            r"Optimizer\.step#.*",
            r"cudaDeviceSynchronize",
            r"cudaStreamSynchronize",
            r"Synchronize",
        )
    )
    + r")$"
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
# A copy from page-locked memory, as CUPTI names it (`Memcpy HtoD (Pinned -> Device)`): the DataLoader
# pins its batches (`pin_memory=True`); from pageable memory the name says `Pageable`.
PINNED_COPY = "Pinned ->"
# The runtime calls of a thread that only pins host memory: a DataLoader's pin-memory thread runs no op
# the profiler records, only these (`cudaHostAlloc` growing the pinned pool, `cudaPointerGetAttributes`,
# `cudaEventQuery` on the blocks it reuses; tests/data/gpu torch_input_workers8, gpu_pairs loader_w4).
RUNTIME_CALL = re.compile(r"^(?:cu(?:da)?|hip)[A-Z]")
PIN_CALL = re.compile(r"^(?:cu|hip)(?:da)?(?:HostAlloc|MallocHost|MemHostAlloc|HostRegister|PointerGetAttributes)\b")


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


class NameRule:
    """A name rule: its pattern, applied by `match` or `search`, and what every name it accepts
    contains, `needs` (a leading NUL: at the name's start; in lower case where the pattern ignores
    case). A file's names are joined into one text, where the needs are found at C speed, and the
    pattern is tried only on the names that have one: on a file of 10,000 distinct op names a rule
    costs a scan of the text, not 10,000 regex searches (issue 42). tests/measures/test_name_rules.py
    draws names from each pattern and checks that its needs hold them."""

    __slots__ = ("pattern", "test", "needs", "fold")

    def __init__(self, pattern: re.Pattern[str], needs: tuple[str, ...], match: bool = False) -> None:
        self.pattern = pattern
        self.test = pattern.match if match else pattern.search
        self.fold = bool(pattern.flags & re.IGNORECASE)
        self.needs = needs  # none: every name is tried


# The rules on names as NameRules (the patterns above stay the rules' one definition).
COMPILE_RULE = NameRule(COMPILE, ("ompile",))
GRAPH_LAUNCH_RULE = NameRule(GRAPH_LAUNCH, ("\0cu", "\0hip"), match=True)
HOST_SYNC_RULE = NameRule(HOST_SYNC, ("\0cu", "\0hip"), match=True)
MEMSET_CALL_RULE = NameRule(MEMSET_CALL, ("\0cu",), match=True)
ALLOC_CALL_RULE = NameRule(ALLOC_CALL, ("\0cu", "\0hip"), match=True)
STARTUP_CALL_RULE = NameRule(STARTUP_CALL, ("\0cu", "\0hip"), match=True)
KERNEL_LAUNCH_RULE = NameRule(KERNEL_LAUNCH, ("\0cu", "\0hip"), match=True)
RUNTIME_CALL_RULE = NameRule(RUNTIME_CALL, ("\0cu", "\0hip"), match=True)
PIN_CALL_RULE = NameRule(PIN_CALL, ("\0cu", "\0hip"), match=True)
CONTAINERS_RULE = NameRule(
    CONTAINERS,
    tuple(
        "\0" + x
        for x in (
            *("FunctionRun", "KernelAndDeviceFunc::Run", "EagerKernelExecute", "TFE_Py_Execute", "Executor"),
            *("__inference", "multi_step_on_", "one_step_on_", "train_", "Profile", "PjitFunction"),
            *("ThreadpoolListener::", "Optimizer.step#", "cuda", "block_until_ready", "Synchronize"),
        )
    ),
    match=True,
)
GEMM_CONV_RULE = NameRule(
    GEMM_CONV_NAME, ("gemm", "conv", "scudnn", "hmma", "xmma", "cutlass", "wgrad", "dgrad", "fprop", "nvjet")
)
MATRIX_CORE_RULE = NameRule(AMD_MATRIX, ("mfma", "_mi", "_gtcx", "xdlops", "_xdl_", "wmma_"))
ELEMENTWISE_RULE = NameRule(
    ELEMENTWISE_NAME, ("eigenmetakernel", "elementwise", "scalar_", "biasnhwckernel", "vectorized_")
)
LOSS_SCALE_RULE = NameRule(LOSS_SCALE, ("scale",))
LOSS_RULE = NameRule(LOSS, ("loss", "cross"))
ALLREDUCE_RULE = NameRule(ALLREDUCE, ("reduce",))
COLLECTIVE_HOST_RULE = NameRule(
    COLLECTIVE_HOST, ("\0gloo:", "\0nccl:", "\0c10d::", "\0record_param_comms", ":Collective", ":NcclAllReduce")
)
CALL_HOST_RULE = NameRule(CALL_HOST, ("\0gloo:", "\0nccl:", ":Collective", ":NcclAllReduce"))
C10D_CALL_RULE = NameRule(CALL_C10D, ("\0c10d::",))
COMPILED_RULE = NameRule(
    COMPILED, ("\0triton_", "\0Torch-Compiled Region", "\0CompiledFunction", "\0TorchDynamo Cache Lookup"), match=True
)
TORCHSCRIPT_RULE = NameRule(TORCHSCRIPT, ("\0prim::", "torch::jit::", "DifferentiableGraph"))
FUSED_OPTIMIZER_RULE = NameRule(FUSED_OPTIMIZER, ("\0aten::_fused_",), match=True)
FOREACH_OPTIMIZER_RULE = NameRule(FOREACH_OPTIMIZER, ("\0aten::_foreach_",), match=True)
LAYOUT_CONVERSION_RULE = NameRule(LAYOUT_CONVERSION, ("nchwToNhwc", "nhwcToNchw"))
CONVOLUTION_RULE = NameRule(CONVOLUTION, ("conv", "fprop", "dgrad", "wgrad"))
XLA_PROGRAM_RUN_RULE = NameRule(XLA_PROGRAM_RUN, ("\0CommonPjRtLoadedExecutable::Execute (",), match=True)
# an input op: its type starts so, or its name says it
INPUT_OP_TYPE_RULE = NameRule(
    re.compile(r"IteratorGetNext|MultiDeviceIteratorGetNextFromShard"),
    ("\0IteratorGetNext", "\0MultiDeviceIteratorGetNextFromShard"),
    match=True,
)
INPUT_OP_NAME_RULE = NameRule(re.compile(r"IteratorGetNext"), ("IteratorGetNext",))


class JoinedNames:
    """A file's names as one text, NUL before each, and where each starts: a literal is found in all
    of them by one scan in C, and each place it is found gives the name it is in."""

    def __init__(self, strings: list[str], fold: bool) -> None:
        text = "\0" + "\0".join(strings)
        self.forced: list[int] = []  # names the text cannot judge: tried on the pattern whatever they hold
        if fold:
            low = text.lower()
            if not text.isascii():
                # Unicode's case rules are not str.lower's (re.IGNORECASE takes `ſ` for `s`), and a
                # lower case may be longer: the non-ASCII names are tried on the pattern itself
                self.forced = [i for i, s in enumerate(strings) if not s.isascii()]
                if len(low) != len(text):
                    low = "\0" + "\0".join(s.lower() if s.isascii() else "\1" * len(s) for s in strings)
            text = low
        self.text = text
        lengths = np.fromiter(map(len, strings), np.int64, len(strings))
        self.starts: list[int] = (np.cumsum(lengths + 1) - lengths).tolist()  # each name's first character

    def containing(self, needs: tuple[str, ...]) -> list[int]:
        """Sorted indices of the names that contain one of `needs` (a leading NUL: at their start)."""
        text, starts = self.text, self.starts
        found = set(self.forced)
        for need in needs:
            last = len(need) - 1  # a need's last character is in the name it was found in
            i = text.find(need)
            while i >= 0:
                j = bisect.bisect_right(starts, i + last) - 1
                found.add(j)
                i = text.find(need, starts[j + 1] - 1) if j + 1 < len(starts) else -1  # from the next name on
        return sorted(found)


def decide(rule: NameRule, strings: list[str], joined: JoinedNames) -> tuple[np.ndarray, int]:
    """(the rule's decision per string with a final False for index -1, how many strings its pattern
    was tried on): only those that hold what it needs (`joined`: the strings, folded if the rule
    ignores case)."""
    candidates: Iterable[int] = joined.containing(rule.needs) if rule.needs else range(len(strings))
    test = rule.test
    out = np.zeros(len(strings) + 1, bool)
    out[[i for i in candidates if test(strings[i])]] = True
    return out, len(candidates)  # type: ignore[arg-type]


class NameClasses:
    """Decisions made once per distinct name or op, looked up through the name-id and op-id columns.
    A rule on names (`NameRule`) tries its pattern only on the names that hold what it needs; a rule
    on ops decides by the op's type and name, each a name decided once: `tested` counts the names a
    pattern was tried on."""

    def __init__(self, p: Profile) -> None:
        self.p = p
        self.tested = 0

    def by_name(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        # id -1 (none, the least a reader writes): the mask's last entry; `take` wraps it there, a
        # third of the time of clamping the ids first and indexing
        return mask.take(ids, mode="wrap")

    def by_op(self, ops: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask.take(ops, mode="wrap")  # op -1 (none): the last entry, as above

    @cached
    def _joined(self) -> JoinedNames:
        return JoinedNames(self.p.names.strings, False)

    @cached
    def _joined_folded(self) -> JoinedNames:
        return JoinedNames(self.p.names.strings, True)

    def mask(self, rule: NameRule) -> np.ndarray:
        """The rule's decision per distinct name, with a final False for index -1."""
        out, tried = decide(rule, self.p.names.strings, self._joined_folded if rule.fold else self._joined)
        self.tested += tried
        return out

    def one_of(self, strings: Iterable[str]) -> np.ndarray:
        """Mask over the names: those among `strings`, with a final False for index -1."""
        names = self.p.names
        out = np.zeros(len(names) + 1, bool)
        ids = [i for i in map(names.get, strings) if i >= 0]
        out[ids] = True
        return out

    @cached
    def _op_name(self) -> np.ndarray:
        return np.asarray(self.p.ops.name, np.int64)

    @cached
    def _op_type(self) -> np.ndarray:
        return np.asarray(self.p.ops.type, np.int64)

    def _by_name(self, mask: np.ndarray) -> np.ndarray:
        """Mask over ops (and a final False for -1) by a mask over their names."""
        return np.r_[self.by_name(self._op_name, mask), False]

    def _by_type(self, mask: np.ndarray) -> np.ndarray:
        """Mask over ops (and a final False for -1) by a mask over their types' names."""
        return np.r_[self.by_name(self._op_type, mask), False]

    @cached
    def compile_name(self) -> np.ndarray:
        return self.mask(COMPILE_RULE)

    @cached
    def graph_launch_name(self) -> np.ndarray:
        return self.mask(GRAPH_LAUNCH_RULE)

    @cached
    def host_sync_name(self) -> np.ndarray:
        return self.mask(HOST_SYNC_RULE)

    @cached
    def memset_call_name(self) -> np.ndarray:
        return self.mask(MEMSET_CALL_RULE)

    @cached
    def alloc_call_name(self) -> np.ndarray:
        return self.mask(ALLOC_CALL_RULE)

    @cached
    def startup_call_name(self) -> np.ndarray:
        return self.mask(STARTUP_CALL_RULE)

    @cached
    def kernel_launch_name(self) -> np.ndarray:
        return self.mask(KERNEL_LAUNCH_RULE)

    @cached
    def runtime_call_name(self) -> np.ndarray:
        return self.mask(RUNTIME_CALL_RULE)

    @cached
    def pin_call_name(self) -> np.ndarray:
        return self.mask(PIN_CALL_RULE)

    @cached
    def container_name(self) -> np.ndarray:
        return self.mask(CONTAINERS_RULE)

    @cached
    def gemm_conv_name(self) -> np.ndarray:
        return self.mask(GEMM_CONV_RULE)

    @cached
    def matrix_core_name(self) -> np.ndarray:
        """AMD kernels that say they run on the matrix cores (classify.AMD_MATRIX)."""
        return self.mask(MATRIX_CORE_RULE)

    @cached
    def elementwise_name(self) -> np.ndarray:
        return self.mask(ELEMENTWISE_RULE)

    @cached
    def loss_scale_op(self) -> np.ndarray:
        return self._by_name(self.mask(LOSS_SCALE_RULE))

    @cached
    def tensor_core_op(self) -> np.ndarray:
        return self._by_type(self.one_of(TENSOR_CORE_ELIGIBLE))

    @cached
    def elementwise_op(self) -> np.ndarray:
        return self._by_type(self.one_of(ELEMENTWISE_OPS))

    @cached
    def softmax_outside_loss_op(self) -> np.ndarray:
        return self._by_type(self.one_of(SOFTMAX_OPS)) & ~self._by_name(self.mask(LOSS_RULE))

    @cached
    def input_op(self) -> np.ndarray:
        return self._by_type(self.mask(INPUT_OP_TYPE_RULE)) | self._by_name(self.mask(INPUT_OP_NAME_RULE))

    @cached
    def py_function_op(self) -> np.ndarray:
        return self._by_type(self.one_of(PY_FUNCTION_OPS))

    @cached
    def on_device_op(self) -> np.ndarray:
        return np.r_[self.p.ops.on_device, False]

    @cached
    def untyped_op(self) -> np.ndarray:
        """Ops without a type: containers such as JAX's `XlaModule:` that XLA's command buffers (CUDA
        graphs) give every kernel of a step (JAX 0.11 on an H100, tests/data/gpu)."""
        types = self._op_type
        untyped = (types < 0) | (types >= len(self.p.names))
        return np.r_[untyped | self.by_name(types, self.one_of(("",))), False]

    def eligible(self, ev: EventTable) -> np.ndarray:
        """Kernels of Tensor-Core-eligible ops (by op type, or by kernel name when no op, or an op
        without a type, claims it), and the GEMM, convolution and attention kernels the kernel naming
        table knows whatever op runs them (`bmm_MxE4m3_...`, `fmhaSm100a...`: Flag.MATRIX_WORK)."""
        by_op = self.by_op(ev.op, self.tensor_core_op)
        by_name = ((ev.op < 0) | self.by_op(ev.op, self.untyped_op)) & self.by_name(ev.name, self.gemm_conv_name)
        by_table = (ev.flags & Flag.MATRIX_WORK) != 0
        return (ev.kind == Kind.KERNEL) & (by_op | by_name | by_table)

    def elementwise(self, ev: EventTable) -> np.ndarray:
        return (ev.kind == Kind.KERNEL) & (
            self.by_op(ev.op, self.elementwise_op) | self.by_name(ev.name, self.elementwise_name)
        )

    @cached
    def allreduce_name(self) -> np.ndarray:
        return self.mask(ALLREDUCE_RULE)

    @cached
    def collective_host_name(self) -> np.ndarray:
        return self.mask(COLLECTIVE_HOST_RULE)

    @cached
    def collective_call_name(self) -> np.ndarray:
        return self.mask(CALL_HOST_RULE)

    @cached
    def c10d_call_name(self) -> np.ndarray:
        return self.mask(C10D_CALL_RULE)

    @cached
    def compiled_name(self) -> np.ndarray:
        return self.mask(COMPILED_RULE)

    @cached
    def torchscript_name(self) -> np.ndarray:
        return self.mask(TORCHSCRIPT_RULE)

    @cached
    def fused_optimizer_name(self) -> np.ndarray:
        return self.mask(FUSED_OPTIMIZER_RULE)

    @cached
    def foreach_optimizer_name(self) -> np.ndarray:
        return self.mask(FOREACH_OPTIMIZER_RULE)

    @cached
    def layout_conversion_name(self) -> np.ndarray:
        return self.mask(LAYOUT_CONVERSION_RULE)

    @cached
    def xla_program_run_name(self) -> np.ndarray:
        return self.mask(XLA_PROGRAM_RUN_RULE)

    @cached
    def convolution_name(self) -> np.ndarray:
        return self.mask(CONVOLUTION_RULE)

    @cached
    def convolution_op(self) -> np.ndarray:
        """Ops whose type is a convolution's."""
        return self._by_type(self.convolution_name)
