"""The rules both Kineto readers apply to an event: its category, its step marker, its values read
the way the Python reader reads JSON (the native reader mirrors them on columns)."""

from __future__ import annotations

import json as _json
import math
import re
from typing import Any

from tb_gpu_advisor.model.classify import (
    FP16_DTYPES,
    is_fp8_dtype,
)

DEVICE_CATS = {
    "kernel": "kernel",
    "memcpy": "memcpy",
    "gpu_memcpy": "memcpy",
    "memset": "memset",
    "gpu_memset": "memset",
}
RUNTIME_CATS = frozenset({"runtime", "cuda_runtime", "cuda_driver"})
OP_CATS = frozenset({"operator", "cpu_op"})
ANNOTATION_CATS = frozenset({"user_annotation"})
PYTHON_CAT = "python_function"  # with_stack=True since PyTorch 1.10: a Python call, nesting the ops it runs
# CUPTI's range profiler (`experimental_config=_ExperimentalConfig(profiler_metrics=[...])`): one record a
# kernel with its counters, placed by Kineto one after the other on a span of its own, not when the kernel
# ran; the kernels themselves are not recorded, and each is replayed inside its launch call to count
PROFILER_RANGE_CAT = "cuda_profiler_range"
SKIPPED_CATS = frozenset({"gpu_user_annotation", "ac2g", "async", "overhead", "trace"})
STEP = re.compile(r"^ProfilerStep\s*#\s*(\d{1,18})$")  # a longer number is not a step of this trace
# torch.utils.data: the step asks the DataLoader for the next batch
DATALOADER_NEXT = re.compile(r"DataLoader.*__next__|_DataLoaderIter\.__next__")
# ROCm: HIP runtime calls, Tensile's GEMM kernels, ROCclr's copy and fill kernels
HIP_NAME = re.compile(r"^(hip[A-Z]|Cijk_|__amd_rocclr_)")
DTYPE = {"c10::half": "half", "c10::bfloat16": "bfloat16", "half": "half", "bfloat16": "bfloat16"}


def us(x: float) -> str:
    """A trace timestamp as the file writes it: µs, up to three decimals."""
    return f"{x:.3f}".rstrip("0").rstrip(".")


def number(v: Any) -> float | None:
    """A JSON number as float64 when it is one and finite, else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


UNNAMING = (list, dict)  # JSON values that cannot name a process or thread (nor be a dict key)


def shown(v: Any) -> str:
    """A value from the file, short, for a message."""
    text = _json.dumps(v, default=str) if not isinstance(v, str) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def obj(x: Any) -> dict:
    return x if isinstance(x, dict) else {}


def as_list(x: Any) -> list:
    return x if isinstance(x, list) else []


def as_int(v: Any, default: int = -1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if isinstance(v, str) and len(v) < 40 and v.strip().lstrip("-").isdigit():
            v = int(v)
        else:
            return default
    try:
        x = int(v)
    except (OverflowError, ValueError):
        return default
    return x if -(2**63) <= x < 2**63 else default


# Attention ops' causal argument, by its place among the op's inputs (PyTorch's native_functions.yaml;
# checked on the real captures of tests/data/gpu_pairs and gpu_validation): True where it is a mask
# type (xformers' custom_mask_type: 0 none, 1 and 2 causal), else a bool
ATTENTION_CAUSAL = {
    "aten::scaled_dot_product_attention": (5, False),
    "aten::_scaled_dot_product_efficient_attention": (6, False),
    "aten::_scaled_dot_product_efficient_attention_backward": (11, False),
    "aten::_efficient_attention_forward": (9, True),
    "aten::_efficient_attention_backward": (14, True),
    "aten::_scaled_dot_product_flash_attention": (4, False),
    "aten::_scaled_dot_product_flash_attention_backward": (11, False),
    "aten::_flash_attention_forward": (8, False),
    "aten::_flash_attention_backward": (11, False),
    "aten::_scaled_dot_product_cudnn_attention": (6, False),
    "aten::_scaled_dot_product_cudnn_attention_backward": (14, False),
    "aten::_cudnn_attention_forward": (10, False),
    "aten::_cudnn_attention_backward": (14, False),
}


def causal_of(name: str, args: dict) -> str:
    """`;is_causal=True` (or False) for an attention op whose recorded `Concrete Inputs` say, appended to
    its shape annotation (what its FLOPs depend on: graph/roofline.py); "" for any other op."""
    at = ATTENTION_CAUSAL.get(name)
    values = args.get("Concrete Inputs") if at is not None else None
    if at is None or not isinstance(values, list) or len(values) <= at[0]:
        return ""
    v = str(values[at[0]]).strip()
    if at[1]:
        if not v.lstrip("-").isdigit():
            return ""
        return f";is_causal={int(v) != 0}"
    return f";is_causal={v}" if v in ("True", "False") else ""


def shape_of(args: dict, name: str = "") -> str:
    """The op's inputs as a shape annotation, `half[64,3,224,224];float[]`, from its recorded input
    types and dims (empty when the trace has neither); an attention op's causal argument after them
    (`causal_of`)."""
    types = args.get("Input type") or []
    dims = args.get("Input Dims") or args.get("Input dims") or []
    if not isinstance(types, list) or not isinstance(dims, list):
        return ""
    parts = []
    for k in range(max(len(types), len(dims))):
        t = types[k] if k < len(types) and isinstance(types[k], str) else ""
        d = dims[k] if k < len(dims) and isinstance(dims[k], list) else []
        if not t and not d:
            continue
        dtype = DTYPE.get(t.lower(), t.lower().removeprefix("c10::") or "unknown")
        parts.append(f"{dtype}[{','.join(str(as_int(x, 0)) for x in d if not isinstance(x, list))}]")
    return ";".join(parts) + (causal_of(name, args) if parts and name else "")


MAX_BLOCKS_PER_SM = 1e9  # beyond any grid: a value past it is not one


def blocks_per_sm(v: Any) -> float:
    """A kernel's recorded `blocks per SM` (its grid's blocks over the GPU's SMs), NaN when the trace
    has none or a value that cannot be one (not a number, not positive, absurd)."""
    x = number(v)
    return x if x is not None and 0 < x < MAX_BLOCKS_PER_SM else float("nan")


def first_dtype_16bit(args: dict) -> int:
    """1 when the op's first typed input is half or bfloat16, 2 when it is an 8-bit (or narrower)
    float (`c10::Float8_e4m3fn`), 0 when it is another type, -1 when the trace recorded no types."""
    types = args.get("Input type")
    if not isinstance(types, list):
        return -1
    for t in types:
        if isinstance(t, str) and t:
            low = t.lower()
            return 2 if is_fp8_dtype(low) else 1 if DTYPE.get(low, low) in FP16_DTYPES else 0
    return -1
