"""The native Kineto reader and the Python one on the same bytes: the same Profile, table by table, or
the same message (used by the reader's tests and the Python stacks' tests)."""

from __future__ import annotations

import os

import numpy as np

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import max_profile_bytes
from tb_gpu_advisor.formats.kineto import native as native_reader, text as kineto_text
from tb_gpu_advisor.model.profile import EventTable, Profile, StringTable


def _table(a: EventTable, b: EventTable, na: StringTable, nb: StringTable, what: str) -> None:
    assert len(a) == len(b), what
    assert sorted(a.keys()) == sorted(b.keys()), what
    for k in sorted(a.keys()):
        x, y = a.column(k), b.column(k)
        if k in ("name", "shape", "stack"):  # ids may differ: the names must not (-1: none)
            xs, ys = ([n[i] if i >= 0 else None for i in c.tolist()] for n, c in ((na, x), (nb, y)))
            assert xs == ys, (what, k)
            continue
        assert x.dtype == y.dtype, (what, k)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (what, k)


def assert_same(p: Profile, q: Profile) -> None:
    """Every column of every table, the ops, devices, memory records, warnings and the rest."""
    assert set(p.names.strings) == set(q.names.strings)
    for f in ("host", "path", "origin_ns", "end_ps", "framework", "time_base", "start_ns", "warnings"):
        assert getattr(p, f) == getattr(q, f), f
    for f in ("capture_errors", "has_xla", "rank", "world_size", "devices", "saved_steps"):
        assert getattr(p, f) == getattr(q, f), f
    for f in ("name", "type", "executed"):
        assert [p.names[i] for i in getattr(p.ops, f)] == [q.names[i] for i in getattr(q.ops, f)], f
    assert p.ops.shape == q.ops.shape
    assert np.array_equal(p.ops.on_device, q.ops.on_device)
    assert [(s.device_id, s.stream_id, s.name) for s in p.streams] == [
        (s.device_id, s.stream_id, s.name) for s in q.streams
    ]
    for s, t in zip(p.streams, q.streams):
        _table(s.events, t.events, p.names, q.names, s.name)
    assert [(t.thread_id, t.name) for t in p.threads] == [(t.thread_id, t.name) for t in q.threads]
    for s, t in zip(p.threads, q.threads):
        _table(s.events, t.events, p.names, q.names, s.name)
    for f in ("start_ps", "device", "bytes", "allocated", "reserved"):
        x, y = getattr(p.memory, f), getattr(q.memory, f)
        assert x.dtype == y.dtype and np.array_equal(x, y), f


def pure(data: bytes, path: str, **kw) -> Profile | ProfileReadError:
    os.environ["TB_GPU_ADVISOR_PURE_PYTHON"] = "1"
    try:
        return native_reader.read_pytorch_trace_bytes(data, path, "h", **kw)
    except ProfileReadError as e:
        return e
    finally:
        del os.environ["TB_GPU_ADVISOR_PURE_PYTHON"]


def native(data: bytes, path: str, **kw) -> Profile | ProfileReadError:
    try:
        return native_reader.read_pytorch_trace_bytes(data, path, "h", **kw)
    except ProfileReadError as e:
        return e


def compare(data: bytes, path: str = "t.pt.trace.json", **kw) -> str:
    """Both readers on `data`: the same Profile or the same message. Says how the native one read it."""
    p, q = pure(data, path, **kw), native(data, path, **kw)
    if isinstance(p, ProfileReadError) or isinstance(q, ProfileReadError):
        assert str(p) == str(q)
        return "refused"
    assert_same(p, q)
    kw.setdefault("limit", max_profile_bytes())
    kw.setdefault("max_seconds", kineto_text.MAX_INFLATE_S)
    own = native_reader.read(data, path, "h", None, kw["limit"], kw["max_seconds"])
    return "native" if own is not None else "fallback"
