"""Stat values of XSpace events, resolved once per distinct value: a string, a reference to a stat's
name, a number; integers kept in range."""

from __future__ import annotations

from typing import Callable

import numpy as np

from tb_gpu_advisor.formats.xplane import raw as rawmod
from tb_gpu_advisor.formats.xplane.raw import K_DOUBLE, K_INT, K_NONE, K_REF, K_STR, K_UINT, RawPlane, RawSpace
from tb_gpu_advisor.model.arrays import unique_inverse
from tb_gpu_advisor.model.profile import (
    StringTable,
)


class Values:
    """Per-distinct-value resolution of one raw stat column: the text of a string, reference or
    number, and in-range integers."""

    def __init__(self, space: RawSpace, plane: RawPlane, warn: Callable[[str], None]):
        self.space = space
        self.plane = plane
        self.warn = warn

    def ints(self, kind: np.ndarray, val: np.ndarray, name: str) -> np.ndarray:
        """int64 values, -1 where absent or not a representable integer (counted as a warning)."""
        out = np.full(len(kind), -1, np.int64)
        sel = (kind == K_INT) | ((kind == K_UINT) & (val >= 0))
        out[sel] = val[sel]
        bad = (kind == K_UINT) & (val < 0)
        d = kind == K_DOUBLE
        if d.any():
            f = val[d].view(np.float64)
            fine = np.isfinite(f) & (np.abs(f) < 2**62)
            out[d] = np.where(fine, f, -1).astype(np.int64)
            bad[np.flatnonzero(d)[~fine]] = True
        for k in (K_STR, K_REF):
            sel = kind == k
            if sel.any():
                u, inv = unique_inverse(val[sel])
                out[sel] = np.array([_to_int(self.text(k, int(x))) for x in u.tolist()], np.int64)[inv]
        if bad.any():
            self.warn(f"{int(bad.sum())} value(s) of {name!r} beyond the 64-bit signed range were skipped")
        return out

    def text(self, kind: int, val: int) -> str:
        if kind == K_STR:
            return self.space.strings[val]
        if kind == K_REF:
            name = self.plane.stat_names.get(val)
            if name is None:
                raise rawmod.DanglingRef(self.plane.name, val)
            return name
        if kind == K_INT:
            return str(val)
        if kind == K_UINT:
            return str(val & (2**64 - 1))
        if kind == K_DOUBLE:
            return repr(float(np.int64(val).view(np.float64)))
        return ""

    def text_ids(self, kind: np.ndarray, val: np.ndarray, names: StringTable) -> np.ndarray:
        """Name ids (interned into `names`) of each event's value, -1 where absent."""
        out = np.full(len(kind), -1, np.int32)
        present = kind != K_NONE
        if not present.any():
            return out
        key = val[present] * 8 + kind[present].astype(np.int64)  # STR/REF ids are small, so no overflow
        u, inv = unique_inverse(key)
        ids = np.array([names.intern(self.text(int(k & 7), int(k >> 3))) for k in u.tolist()], np.int32)
        out[present] = ids[inv]
        return out


def kind_counts(kind: np.ndarray) -> list[int]:
    """How many events carry each value kind (K_*) of a stat."""
    return np.bincount(kind.view(np.uint8), minlength=8).tolist()


def _to_int(text: str) -> int:
    try:
        x = int(text)
    except ValueError:
        return -1
    return x if -(2**63) <= x < 2**63 else -1


def meta_value_int(v: object) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else -1
    if isinstance(v, float) and np.isfinite(v) and abs(v) < 2**62:
        return int(v)
    if isinstance(v, str):
        return _to_int(v)
    return -1


def meta_text(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)
