"""Names → what they are, shared by every format: device work (kernels, copies, memsets,
collectives) and its precision, host work (launches, input, eager dispatch, the runtime's plumbing),
and framework op types as a user knows them. Readers decide by name here and only here, so that a
kernel is a collective, or a copy goes host to device, whichever format it came in.

TensorFlow built with oneDNN (every x86 `tensorflow-cpu` wheel) rewrites ops before it runs them:
`MatMul` runs as `_MklMatMul`, `_FusedMatMul` as `_MklNativeFusedMatMul`, `Conv2D` as `_MklConv2D`
or `_MklNativeConv2D`, depending on the CPU's instructions and the TensorFlow version. The advisor
classifies and reports the op type the user wrote; the executed name is kept beside it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tb_gpu_advisor.model import kernel_naming
from tb_gpu_advisor.model.kernel_naming import AMD_MATRIX as AMD_MATRIX, MATRIX_CORE_NAMES as MATRIX_CORE_NAMES
from tb_gpu_advisor.model.profile import Flag, Kind

_ONEDNN = re.compile(r"^_Mkl(?:Native)?([A-Z]\w*)$")
# oneDNN renames these without a type of their own: layout conversions, not the user's ops.
ONEDNN_RUNTIME_OPS = frozenset({"_MklToTf", "_MklInputConversion"})
# Ops whose public name starts with "Fused" (every other `Fused*` op is an internal `_Fused*` one).
_PUBLIC_FUSED = ("FusedBatchNorm", "FusedResizeAndPadConv2D", "FusedPadConv2D")

MEMCPY_NAME = (
    (re.compile(r"h2d|htod|hosttodevice", re.I), Kind.MEMCPY_H2D),
    (re.compile(r"d2h|dtoh|devicetohost", re.I), Kind.MEMCPY_D2H),
    (re.compile(r"d2d|dtod|devicetodevice", re.I), Kind.MEMCPY_D2D),
    (re.compile(r"p2p|ptop|peertopeer", re.I), Kind.MEMCPY_P2P),
)
# Copies XLA's ROCm backend records under their own names (`CopyDeviceToDevice`, `CopyHostToDevice`:
# AMD-AGI/TraceLens's JAX captures on MI300X, docs/corpus.md): copies, not kernels
XLA_COPY = re.compile(r"^Copy(?:Host|Device|Peer)To(?:Host|Device|Peer)", re.I)
# "f16" covers cuDNN/cuBLAS/CUTLASS names such as `..._f16f16_f16f32_...` (and bf16).
FP16_NAME_MARKERS = ("half", "fp16", "f16", "bfloat16")
FP16_DTYPES = frozenset({"half", "bfloat16", "bf16", "f16", "float16", "c10::half", "c10::bfloat16"})
_FIRST_DTYPE = re.compile(r"([A-Za-z_][\w:]*)\s*\[")
# Bytes of an element, by the type a trace's shapes name (`Input type`, PyTorch's scalar types; XLA's
# `float16`): what a collective moves (measures/collectives.py) and a matrix op reads (graph/roofline.py)
ELEMENT_BYTES = {
    "float": 4,
    "double": 8,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "long int": 8,
    "long": 8,
    "int": 4,
    "short int": 2,
    "short": 2,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "c10::complex<float>": 8,
    "c10::complex<double>": 16,
    "c10::float8_e4m3fn": 1,
    "c10::float8_e5m2": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
# 8-bit and narrower float types as a trace's shapes name them: PyTorch's (`c10::Float8_e4m3fn`,
# `Float8_e5m2fnuz`, `Float4_e2m1fn_x2`) and XLA's (`f8e4m3fn`, `f8e5m2`, `f4e2m1fn`)
FP8_DTYPE = re.compile(r"^(?:c10::)?(?:float8|float4|float6|f8e|f6e|f4e|fp8|fp4)", re.I)


def classify_device_event(name: str) -> Kind:
    """Kind of a device event from its name (copies by name, never as compute; the kernels that move
    data between GPUs, whatever their library, collectives: kernel_naming.COMMUNICATION)."""
    low = name.lower()
    if low.startswith("memcpy") or XLA_COPY.match(name):
        return classify_copy(name)
    if low.startswith("memset"):
        return Kind.MEMSET
    if low.startswith("nccl") or kernel_naming.is_communication(name):
        return Kind.COLLECTIVE
    return Kind.KERNEL


def classify_copy(name: str) -> Kind:
    """Kind of a copy from its name (`Memcpy HtoD (Pageable -> Device)`); without a direction in the
    name, device to device (an XSpace reader refines it from memcpy_details)."""
    for pattern, kind in MEMCPY_NAME:
        if pattern.search(name):
            return kind
    return Kind.MEMCPY_D2D


def copy_direction_named(name: str) -> bool:
    """Whether a copy's name says its direction (`Memcpy HtoD`); a bare `Memcpy` takes it from elsewhere."""
    return any(pattern.search(name) for pattern, _ in MEMCPY_NAME)


def uses_matrix_cores(kernel_name: str) -> bool:
    """An AMD kernel that says it runs on the matrix cores (kernel_naming.AMD_MATRIX, or its library's
    naming in kernel_naming's table)."""
    return (
        AMD_MATRIX.search(kernel_name) is not None or kernel_naming.identify(kernel_name).unit == kernel_naming.MATRIX
    )


def uses_tensor_cores(kernel_name: str) -> bool:
    """An NVIDIA kernel whose library's naming says it runs on Tensor Cores (kernel_naming.FAMILIES)."""
    return kernel_naming.identify(kernel_name).unit == kernel_naming.TENSOR


def kernel_flags(kernel_name: str) -> int:
    """The flags a kernel's name gives it, by the naming table: on Tensor Cores, FP8 (or narrower), a
    GEMM/convolution/attention kernel, or one nothing identifies."""
    i = kernel_naming.identify(kernel_name)
    flags = 0
    if i.unit == kernel_naming.TENSOR:
        flags |= Flag.TENSOR_CORE
    if i.precision == kernel_naming.FP8:
        flags |= Flag.FP8
    if i.unit == kernel_naming.UNKNOWN:
        flags |= Flag.UNIT_UNKNOWN
    if i.matrix_work:
        flags |= Flag.MATRIX_WORK
    return int(flags)


# cuBLAS's nvjet GEMMs name their types in three letters: `tst` bf16 in and out with fp32 compute (an
# H100's bf16 GEMMs under torch.autocast and in JAX, tests/data/gpu), `hsh` the same in fp16
_NVJET_16BIT = re.compile(r"^nvjet_(?:sm\d+_)?(?:tst|hsh)_")


def is_16bit_name(kernel_name: str) -> bool:
    low = kernel_name.lower()
    return any(m in low for m in FP16_NAME_MARKERS) or bool(_NVJET_16BIT.match(low))


def first_dtype(shape: str) -> str | None:
    """The first input's dtype of a shape annotation: `(half[4,384];float[])` -> "half"."""
    m = _FIRST_DTYPE.search(shape or "")
    return m.group(1).lower() if m else None


def is_16bit_shape(shape: str) -> bool:
    """The profile plugin's rule: an op is 16-bit when its (first) input is half or bfloat16."""
    return first_dtype(shape) in FP16_DTYPES


def is_fp8_dtype(dtype: str | None) -> bool:
    """An 8-bit (or narrower) float type name (FP8_DTYPE)."""
    return bool(dtype) and FP8_DTYPE.match(dtype or "") is not None


def shape_precision(shape: str) -> int:
    """2 when an op's (first) input is an 8-bit or narrower float, 1 when half or bfloat16, 0 otherwise."""
    dtype = first_dtype(shape)
    return 2 if is_fp8_dtype(dtype) else 1 if dtype in FP16_DTYPES else 0


# Eager markers that run a whole tf.function (a graph), not a single op.
FUNCTION_NAMES = ("__inference", "__forward", "__backward")
# Ops that are the runtime's own plumbing, or launch no kernel: not compute wherever they run.
RUNTIME_OPS = frozenset(
    {
        "_Arg",
        "_Retval",
        "_Recv",
        "_Send",
        "_HostRecv",
        "_HostSend",
        "_DeviceArg",
        "_DeviceRetval",
        "RemoteCall",
        "ReadVariableOp",
        "VarHandleOp",
        "VarIsInitializedOp",
        "DestroyResourceOp",
        "NoOp",
        "Const",
        "Identity",
        "IdentityN",
        "StatefulPartitionedCall",
        "PartitionedCall",
        "Placeholder",
        "_SwitchN",
        "Switch",
        "Merge",
        "Enter",
        "Exit",
        "NextIteration",
        "LoopCond",
        "ControlTrigger",
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "OptionalFromValue",
        "OptionalGetValue",
        "OptionalHasValue",
    }
    | ONEDNN_RUNTIME_OPS
)
PY_FUNCTION_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})
INPUT_OPS = ("Iterator", "AnonymousIterator", "MultiDeviceIterator", "OptionalGetValue")

# CUDA's launch calls (runtime and driver) and HIP's: `hipLaunchKernel`, `hipExtModuleLaunchKernel` and
# `hipModuleLaunchKernel` (Tensile's GEMMs, Triton's kernels), `hipExtLaunchKernel`, `hipGraphLaunch`,
# `hipMemcpyAsync`/`hipMemcpyWithStream`, `hipMemsetAsync` (ROCm traces of AMD-AGI/TraceLens and HTA's
# MI250 trace, docs/corpus.md): each shares its correlation id with the device work it launched
LAUNCH_API = re.compile(
    r"^(?:cu|cuda|hip)(?:Ext)?(?:Module)?(LaunchKernel|LaunchCooperativeKernel|LaunchKernelEx|GraphLaunch|Memcpy|Memset)"
)
# Host time inside ops that is not dispatch (issue 50: no compiler, CUDA graph or fusion removes it;
# graph/build.py keeps it apart, docs/whatif.md):
# - the allocator's calls, CUDA's runtime and driver and HIP's: device memory (`cudaMalloc`, `cudaFree`,
#   `cuMemAlloc_v2`, `hipMalloc`, `hipFree`) and pinned host memory (`cudaHostAlloc`, `cudaMallocHost`,
#   `cudaFreeHost`, `cuMemHostAlloc`, `hipHostMalloc`, `hipHostFree`). PyTorch's caching allocator makes
#   them while it fills its cache; with it off (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`) every tensor's
#   allocation and free is one (AMD-AGI/TraceLens ddp_resnet18_no_pool: 1,460 hipMalloc and 1,360 hipFree
#   in 5 steps). Not the stream-ordered allocator's pool calls (`cudaMallocAsync`, `cudaFreeAsync`).
ALLOC_CALL = re.compile(
    r"^(?:cu|cuda|hip)(?:Malloc|Free|MemAlloc|MemFree|HostAlloc|HostMalloc|HostFree|MallocHost|FreeHost"
    r"|MemHostAlloc|MemFreeHost|ExtMallocWithFlags)(?:_v2)?$"
)
# - the driver's start-up: context, stream and module creation and library loading, which a process does
#   once (cuDNN's and cuBLAS's handles create their streams in their first op: `cudaStreamCreateWithFlags`
#   732.7 ms inside the first `aten::cudnn_convolution` of HTA's A100 AlexNet trace)
STARTUP_CALL = re.compile(
    r"^(?:cu|cuda|hip)(?:Init|DevicePrimaryCtxRetain|CtxCreate|StreamCreate|ModuleLoad|LibraryLoad"
    r"|GraphInstantiate)"
)
# - any other call of the runtime that neither launches, copies, waits nor allocates, when it takes this
#   long: such a call returns in µs (in the public corpus's steady steps, docs/corpus.md, the longest is a
#   2.4 ms stall of one `cudaStreamGetPriority` among 951 under 17 µs), unless it is the process's first
#   and creates the context (`cudaDeviceGetStreamPriorityRange` 29,927 ms in the A100 AlexNet trace), or a
#   kernel's first launch that loads its module while the GPU idles (that trace's `cudaLaunchKernel` of
#   3,056 ms; the MI250 toy's `hipLaunchKernel` of 6.5 ms). graph/build.py tells such a launch from one
#   held by a full launch queue, which has work queued on the GPU.
STARTUP_CALL_PS = 5_000_000_000
RUNTIME_API = re.compile(r"^(?:cu|cuda|hip)[A-Z]")
# Launch calls of kernels and graphs (not copies nor memsets): a long one while the GPU idles loads its module
KERNEL_LAUNCH = re.compile(r"^(?:cu|cuda|hip)\w*(?:LaunchKernel|LaunchCooperativeKernel|LaunchKernelEx|GraphLaunch)")

# A TensorFlow op's host event, `name:Type` (`gradient_tape/model/dense/MatMul:MatMul`): the op's name and
# its type. The readers tell a framework op by it, the ops table names XSpace's runtime ops by it.
TF_OP = re.compile(r"^([^\s:]+):([A-Za-z_]\w*)$")


def is_launch(name: str) -> bool:
    """A CUDA or HIP API call that puts work on a GPU (its device work shares its correlation id)."""
    return LAUNCH_API.match(name) is not None


def classify_host_event(name: str) -> Kind:
    """Kind of a host event from its name (step markers are found by their `step_num` stat)."""
    if name.startswith(("IteratorGetNextOp::", "IteratorGetNextAsOptionalOp::")):
        return Kind.INPUT_WAIT
    if name.startswith("Iterator::") or name.endswith(("Produce", "Consume")):
        return Kind.INPUT_STAGE
    if is_launch(name):
        return Kind.LAUNCH
    if name == "MemoryAllocation":
        return Kind.MEMORY_ALLOC
    if name == "MemoryDeallocation":
        return Kind.MEMORY_FREE
    # Eager dispatch: `EagerExecute` (with an `eager_op` stat) and `EagerLocalExecute: <op>` mark one
    # op run eagerly (or a function call); nested, they are one execution (counted once downstream).
    if name == "EagerExecute" or name.startswith("EagerLocalExecute"):
        return Kind.EAGER
    tf_op = TF_OP.match(name)
    if tf_op:
        return op_kind(tf_op.group(2))
    return Kind.HOST_OTHER


def op_kind(op_type: str) -> Kind:
    """Kind of a TensorFlow op run on the host, by its type."""
    if op_type.startswith(INPUT_OPS):
        return Kind.INPUT_WAIT if "GetNext" in op_type or op_type == "OptionalGetValue" else Kind.INPUT_STAGE
    if op_type.startswith("_Xla") or op_type in RUNTIME_OPS:  # runtime work, not compute ops
        return Kind.HOST_OTHER
    return Kind.FRAMEWORK_OP


@lru_cache(maxsize=4096)
def framework_op_type(executed: str) -> str:
    """The op type a user recognises for the one the runtime executed: `_MklMatMul` → `MatMul`,
    `_MklNativeFusedMatMul` → `_FusedMatMul`, `_MklFusedBatchNormV3` → `FusedBatchNormV3`; any other
    name is its own type."""
    if executed in ONEDNN_RUNTIME_OPS:
        return executed
    m = _ONEDNN.match(executed)
    if not m:
        return executed
    base = m.group(1)
    if base.startswith("Fused") and not base.startswith(_PUBLIC_FUSED):
        return "_" + base
    return base


def op_type_label(op_type: str, executed: str) -> str:
    """`MatMul` or, where the runtime renamed it, `MatMul (ran as _MklMatMul)`."""
    return op_type if not executed or executed == op_type else f"{op_type} (ran as {executed})"


# JAX without its metadata (a capture whose metadata plane has no `jax*` stats: AMD-AGI/TraceLens's
# JAX captures on MI300X, docs/corpus.md): the threads its Python runs XLA executables and callbacks on,
# and the PjRt C API's execute call through which JAX's plugins (ROCm, CUDA) run every jitted function.
# TensorFlow runs neither.
JAX_THREADS = ("py_xla_execute", "py_xla_callback")
JAX_EVENTS = ("PJRT_LoadedExecutable_Execute", "PJRT_LoadedExecutable_Execute linkage")


# Long host events that only wait for a graph or a step to run (TensorFlow's executor and function calls,
# Keras's step functions, the step markers): not the host's own work, nor the dispatch of an op.
# measures/names.py's CONTAINERS adds what else only waits (JAX's jitted calls, syncs, the optimizer).
STEP_CONTAINER_NAMES = (
    r"FunctionRun",
    r"KernelAndDeviceFunc::Run",
    r"EagerKernelExecute",
    r"TFE_Py_Execute\w*",
    r"ExecutorState::\w+",
    r"ExecutorDoneCallback",
    r"__inference\w*",
    r"multi_step_on_iterator",
    r"one_step_on_iterator",
    r"multi_step_on_data",
    r"one_step_on_data",
    r"train_function",
    r"train_step",
    r"ProfilerStep#\d+",
    r"Profiled batch",
    r"ThreadpoolListener::\w+",
    r"block_until_ready",
)
STEP_CONTAINERS = re.compile(r"^(" + "|".join(STEP_CONTAINER_NAMES) + r")$")
