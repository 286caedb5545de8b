"""Names → what they are, shared by every format: framework op types as a user knows them.

TensorFlow built with oneDNN (every x86 `tensorflow-cpu` wheel) rewrites ops before it runs them:
`MatMul` runs as `_MklMatMul`, `_FusedMatMul` as `_MklNativeFusedMatMul`, `Conv2D` as `_MklConv2D`
or `_MklNativeConv2D`, depending on the CPU's instructions and the TensorFlow version. The advisor
classifies and reports the op type the user wrote; the executed name is kept beside it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ONEDNN = re.compile(r"^_Mkl(?:Native)?([A-Z]\w*)$")
# oneDNN renames these without a type of their own: layout conversions, not the user's ops.
ONEDNN_RUNTIME_OPS = frozenset({"_MklToTf", "_MklInputConversion"})
# Ops whose public name starts with "Fused" (every other `Fused*` op is an internal `_Fused*` one).
_PUBLIC_FUSED = ("FusedBatchNorm", "FusedResizeAndPadConv2D", "FusedPadConv2D")


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
