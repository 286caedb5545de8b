"""The native decoder (`_xdecode`, C, built by setup.py when a compiler is there) as a `RawSpace`.

`available()` says whether it was built; the reader falls back to raw.py's protobuf decoder without
it, or when TB_GPU_ADVISOR_PURE_PYTHON=1. Both must give identical tables (the tests compare them on
every profile they make, broken ones included).
"""

from __future__ import annotations

import types

import numpy as np

from tb_gpu_advisor.arrays import unique_inverse
from tb_gpu_advisor.xplane.raw import (
    K_REF,
    WANTED_STATS,
    Buffer,
    DanglingRef,
    RawEventMeta,
    RawLine,
    RawPlane,
    RawSpace,
    RawStat,
)

_xdecode: types.ModuleType | None
try:
    from tb_gpu_advisor.xplane import _xdecode
except ImportError:  # not built: the pure-Python decoder is used
    _xdecode = None


def available() -> bool:
    return _xdecode is not None


def _value(kind: int, value, stat_names: dict[int, str], plane: str):
    """A metadata or plane stat's value, references resolved, bytes kept as bytes."""
    if kind == K_REF:
        if value not in stat_names:
            raise DanglingRef(plane, value)
        return stat_names[value]
    return value


def _stats(raw: list, stat_names: dict[int, str], plane: str) -> dict[str, object]:
    return {stat_names.get(sid, ""): _value(kind, v, stat_names, plane) for sid, kind, v in raw}


def decode(data: Buffer) -> RawSpace:
    assert _xdecode is not None
    planes_raw, hostnames, errors, warnings, strings = _xdecode.decode(data, WANTED_STATS)
    planes = []
    for pid, name, stat_names, event_meta, plane_stats, lines_raw in planes_raw:
        meta = {mid: RawEventMeta(mname, display, _stats(mstats, stat_names, name))
                for mid, mname, display, mstats in event_meta}  # fmt: skip
        lines = []
        for lid, lname, display, ts, _n, mid, off, dur, stats_raw in lines_raw:
            stats = {}
            for k, (kind_b, val_b) in stats_raw.items():
                kind = np.frombuffer(kind_b, np.int8)
                val = np.frombuffer(val_b, np.int64)
                refs = val[kind == K_REF]
                for ref in unique_inverse(refs)[0].tolist() if len(refs) else ():
                    if ref not in stat_names:
                        raise DanglingRef(name, ref)
                stats[WANTED_STATS[k]] = RawStat(kind, val)
            lines.append(RawLine(lid, lname, display, ts, np.frombuffer(mid, np.int64), np.frombuffer(off, np.int64),
                                 np.frombuffer(dur, np.int64), stats))  # fmt: skip
        planes.append(RawPlane(pid, name, stat_names, meta, _stats(plane_stats, stat_names, name), lines))
    texts = [s.decode("utf-8", "replace") for s in strings]
    return RawSpace(planes, hostnames, errors, warnings, texts)
