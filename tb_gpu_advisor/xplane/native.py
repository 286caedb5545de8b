"""The native decoder (`_xdecode`, C, built by setup.py when a compiler is there) as a `RawSpace`.

`available()` says whether it was built; the reader falls back to raw.py's protobuf decoder without
it, or when TB_GPU_ADVISOR_PURE_PYTHON=1. Both must give identical tables (the tests compare them on
every profile they make, broken ones included).

The planes and line headers are decoded first; the lines' events then on a worker thread, line by
line in file order (so string ids are the same as in one pass), while the reader builds the lines
already decoded: the C scan holds no GIL, so the two overlap on two cores.
"""

from __future__ import annotations

import threading
import types
from typing import Sequence

import numpy as np

from tb_gpu_advisor.arrays import unique_inverse
from tb_gpu_advisor.parallel import threads
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


def _line(lid, lname, display, ts, mid, off, dur, stats_raw, plane: str, stat_names: dict[int, str]) -> RawLine:
    stats = {}
    for k, (kind_b, val_b) in stats_raw.items():
        kind = np.frombuffer(kind_b, np.int8)
        val = np.frombuffer(val_b, np.int64)
        refs = val[kind == K_REF]
        for ref in unique_inverse(refs)[0].tolist() if len(refs) else ():
            if ref not in stat_names:
                raise DanglingRef(plane, ref)
        stats[WANTED_STATS[k]] = RawStat(kind, val)
    return RawLine(lid, lname, display, ts, np.frombuffer(mid, np.int64), np.frombuffer(off, np.int64),
                   np.frombuffer(dur, np.int64), stats)  # fmt: skip


class _Texts(Sequence[str]):
    """The string values as text, decoded when first read (the worker appends while the reader reads)."""

    def __init__(self, raw: list[bytes]):
        self.raw = raw
        self.texts: list[str] = []

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, i):
        t = self.texts
        while len(t) < len(self.raw) and len(t) <= i:
            t.append(self.raw[len(t)].decode("utf-8", "replace"))
        return t[i]


class LazySpace(RawSpace):
    """A RawSpace whose lines' events are decoded on a worker thread, in file order."""

    def start(self, data: Buffer, strings: list[bytes], pending: list[tuple[RawLine, RawPlane, int, int]],
              background: bool) -> None:  # fmt: skip
        self._data = data
        self._pending = pending
        self._index = {id(line): k for k, (line, _, _, _) in enumerate(pending)}
        self._done = 0  # lines decoded, in order
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._table = _xdecode.strings_table(strings)  # type: ignore[union-attr]
        self._wanted: dict[int, tuple[tuple, tuple]] = {}
        if background and len(pending) > 1:
            self._thread: threading.Thread | None = threading.Thread(
                target=self._run, name="tb-gpu-advisor-decode", daemon=True
            )
            self._thread.start()
        else:
            self._thread = None
            self._run()

    def _wanted_of(self, plane: RawPlane) -> tuple[tuple, tuple]:
        w = self._wanted.get(id(plane))
        if w is None:
            pairs = sorted((sid, WANTED_STATS.index(n)) for sid, n in plane.stat_names.items() if n in WANTED_STATS)
            w = self._wanted[id(plane)] = (tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
        return w

    def _run(self) -> None:
        assert _xdecode is not None
        try:
            for line, plane, start, end in self._pending:
                ids, index = self._wanted_of(plane)
                mid, off, dur, stats_raw = _xdecode.decode_line(
                    self._data, start, end, len(line), ids, index, len(WANTED_STATS), self._table
                )
                full = _line(line.id, line.name, line.display_name, line.timestamp_ns, mid, off, dur, stats_raw,
                             plane.name, plane.stat_names)  # fmt: skip
                line.mid, line.off, line.dur, line.stats = full.mid, full.off, full.dur, full.stats
                with self._cond:
                    self._done += 1
                    self._cond.notify_all()
        except BaseException as e:  # noqa: BLE001  handed to the reader, which reports it
            with self._cond:
                self._error = e
                self._cond.notify_all()

    def ready(self, line: RawLine) -> RawLine:
        k = self._index.get(id(line))
        if k is None:
            return line
        with self._cond:
            while self._done <= k and self._error is None:
                self._cond.wait()
            if self._done <= k:
                assert self._error is not None
                raise self._error
        return line

    def finish(self) -> None:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error


def decode(data: Buffer) -> RawSpace:
    assert _xdecode is not None
    planes_raw, hostnames, errors, warnings, strings = _xdecode.decode(data, WANTED_STATS, True)
    planes = []
    pending: list[tuple[RawLine, RawPlane, int, int]] = []
    for pid, name, stat_names, event_meta, plane_stats, lines_raw in planes_raw:
        meta = {mid: RawEventMeta(mname, display, _stats(mstats, stat_names, name))
                for mid, mname, display, mstats in event_meta}  # fmt: skip
        plane = RawPlane(pid, name, stat_names, meta, _stats(plane_stats, stat_names, name), [])
        for lid, lname, display, ts, n, _, _, _, (start, end) in lines_raw:
            empty = np.zeros(0, np.int64)
            line = RawLine(lid, lname, display, ts, empty, empty, empty, {}, n)
            plane.lines.append(line)
            pending.append((line, plane, start, end))
        planes.append(plane)
    space = LazySpace(planes, hostnames, errors, warnings, _Texts(strings))
    space.start(data, strings, pending, background=threads() > 1)
    return space
