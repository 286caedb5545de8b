"""The text forms of XSpace stats: op names (`tf_op`, `annotation`), kernel and memcpy details. Each
is parsed once per distinct string and cached."""

from __future__ import annotations

import re
from functools import lru_cache

from tb_gpu_advisor.formats.base import INT32_MAX
from tb_gpu_advisor.model.profile import (
    Kind,
)

_SHAPE_ANNOTATION = re.compile(r"shape=(\([^)]*\)|[^#,]*)")


@lru_cache(maxsize=65536)
def parse_op(text: str) -> tuple[str, str, str]:
    """`name:Type` (tf_op) or `name:Type#shape=(...)#` (annotation) -> (name, type, shape)."""
    shape = ""
    if "#" in text:
        text, _, rest = text.partition("#")
        m = _SHAPE_ANNOTATION.search(rest)
        if m:
            shape = m.group(1).strip()
    if "::" in text:  # nested annotations: the innermost names the op
        text = text.rsplit("::", 1)[1]
    name, sep, op_type = text.rpartition(":")
    if not sep:
        name, op_type = text, text.rsplit("/", 1)[-1]
    return name, op_type, shape


def _int(v: str, hi: int = INT32_MAX) -> int:
    x = int(v)
    return max(0, min(x, hi))


def _ints(v: str, n: int) -> tuple[int, ...]:
    out = []
    for p in v.split(",")[:n]:
        try:
            out.append(_int(p))
        except ValueError:
            out.append(0)
    return tuple(out) + (0,) * (n - len(out))


@lru_cache(maxsize=65536)
def parse_kernel_details(text: str) -> tuple[float, ...]:
    """Both known forms -> (grid x,y,z, block x,y,z, regs, shared bytes, occupancy %).

    Older: `regs:38 shm:0 grid:160,1,1 block:1024,1,1`; newer: `regs:N static_shared:N
    dynamic_shared:N grid:x,y,z block:x,y,z occ_pct:F`. Unknown keys and bad values are ignored;
    values are clamped to 32 bits.
    """
    grid: tuple[int, ...] = (0, 0, 0)
    block: tuple[int, ...] = (0, 0, 0)
    regs = shm = 0
    occ = float("nan")
    for token in text.split():
        key, _, val = token.partition(":")
        try:
            if key == "grid":
                grid = _ints(val, 3)
            elif key == "block":
                block = _ints(val, 3)
            elif key in ("regs", "registers_per_thread"):
                regs = _int(val)
            elif key in ("shm", "static_shared", "dynamic_shared"):
                shm = min(shm + _int(val), INT32_MAX)
            elif key == "occ_pct":
                x = float(val)
                occ = x if 0.0 <= x <= 100.0 else occ
        except ValueError:
            continue
    return (*grid, *block, regs, shm, occ)


@lru_cache(maxsize=4096)
def parse_memcpy_details(text: str) -> tuple[int, Kind | None, bool]:
    """Both known forms -> (bytes, kind from kind_src/kind_dst or None, async)."""
    size, src, dst, is_async = 0, None, None, False
    for token in text.split():
        key, _, val = token.partition(":")
        if key == "size":
            try:
                size = _int(val, 2**62)
            except ValueError:
                pass
        elif key == "kind_src":
            src = val.lower()
        elif key == "kind_dst":
            dst = val.lower()
        elif key == "async":
            is_async = val.strip() not in ("0", "false", "")
    kind = None
    if src is not None and dst is not None:
        if "peer" in (src, dst):
            kind = Kind.MEMCPY_P2P
        else:
            kind = {
                (False, True): Kind.MEMCPY_H2D,
                (True, False): Kind.MEMCPY_D2H,
                (True, True): Kind.MEMCPY_D2D,
            }.get((src == "device", dst == "device"))
    return size, kind, is_async
