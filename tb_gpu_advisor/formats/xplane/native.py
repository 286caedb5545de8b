"""The native decoder (`_xdecode`, C, built by setup.py when a compiler is there) as a `RawSpace`.

`scan.available()` says whether it was built; the reader falls back to raw.py's protobuf decoder without
it, or when TB_GPU_ADVISOR_PURE_PYTHON=1. Both must give identical tables (the tests compare them on
every profile they make, broken ones included).

The scan (scan.py: the planes and line headers first, then each line's events in file order, on a
worker thread) runs while the reader builds the lines already scanned: the C scan holds no GIL, so
the two overlap on two cores. The command starts the scan before it imports the analysis.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tb_gpu_advisor.common.parallel import threads
from tb_gpu_advisor.formats.base import Buffer, Data, in_memory
from tb_gpu_advisor.formats.xplane.raw import (
    DESCRIBED,
    K_REF,
    WANTED_STATS,
    DanglingRef,
    RawEventMeta,
    RawLine,
    RawPlane,
    RawSpace,
    RawStat,
)
from tb_gpu_advisor.formats.xplane.scan import Admit, Scan, census
from tb_gpu_advisor.model.arrays import unique_inverse


def _value(kind: int, value: Any, stat_names: dict[int, str], plane: str) -> object:
    """A metadata or plane stat's value, references resolved, bytes kept as bytes."""
    if kind == K_REF:
        if value not in stat_names:
            raise DanglingRef(plane, value)
        return stat_names[value]
    return value


def _stats(raw: list, stat_names: dict[int, str], plane: str) -> dict[str, object]:
    return {stat_names.get(sid, ""): _value(kind, v, stat_names, plane) for sid, kind, v in raw}


def _fill(
    line: RawLine,
    plane: RawPlane,
    mid: Buffer,
    off: Buffer,
    dur: Buffer,
    stats_raw: dict,
    desc: Any,
    desc_rows: Any,
) -> None:
    """A line's columns from the scanner's buffers; a stat that refers to missing stat metadata is
    an error, as in the pure-Python decoder. The described stats come in the descriptions' rows (one
    per distinct description), not as columns."""
    rows = None
    if desc is not None:
        rows = np.frombuffer(desc_rows, np.int64).reshape(-1, 1 + 2 * len(DESCRIBED))
    values: dict[int, tuple[np.ndarray, np.ndarray]] = {
        k: (np.frombuffer(kind_b, np.int8), np.frombuffer(val_b, np.int64)) for k, (kind_b, val_b) in stats_raw.items()
    }
    if rows is not None:
        for j, k in enumerate(DESCRIBED):
            values[k] = (rows[:, 1 + 2 * j], rows[:, 2 + 2 * j])
    for k in sorted(values):  # the references checked stat by stat, as the columns were
        kind, val = values[k]
        refs = val[kind == K_REF]
        for ref in unique_inverse(refs)[0].tolist() if len(refs) else ():
            if ref not in plane.stat_names:
                raise DanglingRef(plane.name, ref)
    line.stats = {WANTED_STATS[k]: RawStat(*values[k]) for k in stats_raw}
    line.mid, line.off, line.dur = (np.frombuffer(b, np.int64) for b in (mid, off, dur))
    if rows is not None:
        line.desc = np.frombuffer(desc, np.int32)
        line.desc_rows = rows


class _Texts(Sequence[str]):
    """The string values as text, decoded when first read (the worker appends while the reader reads)."""

    def __init__(self, raw: list[bytes]):
        self.raw = raw
        self.texts: list[str] = []

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, i: Any) -> Any:  # an index (the reader takes no slices)
        t = self.texts
        while len(t) < len(self.raw) and len(t) <= i:
            t.append(self.raw[len(t)].decode("utf-8", "replace"))
        return t[i]


class LazySpace(RawSpace):
    """A RawSpace whose lines' columns come from a `Scan` as the reader asks for each line."""

    def start(self, scan: Scan, pending: list[tuple[RawLine, RawPlane]]) -> None:
        self._scan = scan
        self._pending = pending
        self._index = {id(line): k for k, (line, _) in enumerate(pending)}
        self._filled = [False] * len(pending)

    def ready(self, line: RawLine) -> RawLine:
        k = self._index.get(id(line))
        if k is None or self._filled[k]:
            return line
        _fill(line, self._pending[k][1], *self._scan.line(k))
        self._filled[k] = True
        return line

    def release(self, line: RawLine) -> None:
        k = self._index.get(id(line))
        if k is not None and self._filled[k]:
            self._scan.drop(k)
            super().release(line)

    def finish(self) -> None:
        """The scan's error first (bytes the scanner refused anywhere), then each line's references."""
        self._scan.finish()
        for line, _ in self._pending:
            self.ready(line)


def decode(data: Data, scan: Scan | None = None, admit: Admit | None = None) -> RawSpace:
    """The file's planes, with lines filled as the reader asks; `scan` is one already started on
    these bytes, with its own admission (else one is started here, with `admit`, which may refuse the
    file from its census, before its header is decoded)."""
    if scan is None:
        scan = Scan(data, background=threads() > 1, admit=admit)
    planes_raw, hostnames, errors, warnings, _ = scan.header()
    if admit is not None and not scan.admitted:  # a scan started without admission: refused now, at least
        try:
            counted = census(in_memory(scan.data))  # in memory once the header is decoded
            assert counted is not None
            admit(counted)
        except BaseException:
            scan.stop()
            raise
    planes = []
    pending: list[tuple[RawLine, RawPlane]] = []
    for pid, name, stat_names, event_meta, plane_stats, lines_raw in planes_raw:
        meta = {mid: RawEventMeta(mname, display, _stats(mstats, stat_names, name))
                for mid, mname, display, mstats in event_meta}  # fmt: skip
        plane = RawPlane(pid, name, stat_names, meta, _stats(plane_stats, stat_names, name), [])
        for lid, lname, display, ts, n, *_ in lines_raw:
            empty = np.zeros(0, np.int64)
            line = RawLine(lid, lname, display, ts, empty, empty, empty, {}, n)
            plane.lines.append(line)
            pending.append((line, plane))
        planes.append(plane)
    space = LazySpace(planes, hostnames, errors, warnings, _Texts(scan.strings))
    space.start(scan, pending)
    return space
