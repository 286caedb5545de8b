"""The native scanner (`_xdecode`) run over a file's bytes, line by line, on a worker thread.

It needs no NumPy (its results are bytes-like columns), so the command can start it before the
analysis modules are imported: the C scan holds no GIL, and the two overlap on two cores. The
planes and line headers come first; each line's events follow in file order, so string ids are the
ones a single pass gives. native.py turns the columns into arrays as the reader asks for each line.
"""

from __future__ import annotations

import copy
import mmap
import threading
import types
from typing import Callable, NoReturn

from tb_gpu_advisor.common.settings import settings
from tb_gpu_advisor.formats.base import Budget, Buffer, Data, check_lines, in_memory, too_many_lines
from tb_gpu_advisor.formats.xplane.raw import DESCRIBED, WANTED_STATS

_xdecode: types.ModuleType | None
try:
    from tb_gpu_advisor.formats.xplane import _xdecode
except ImportError:  # not built: the pure-Python decoder is used
    _xdecode = None


# Over this many distinct event descriptions in a line, the scanner stops numbering them and the
# reader groups the columns itself (the rows would cost more memory than they save time).
DESCRIPTION_LIMIT = 65536


def available() -> bool:
    return _xdecode is not None


def native_wanted() -> bool:
    """The native scanner is built and not turned off (TB_GPU_ADVISOR_PURE_PYTHON=1)."""
    return _xdecode is not None and not settings().pure_python


# What reading and analysing an XSpace file holds at its peak, beside the file's bytes (its snapshot),
# per thing the file holds, as the census counts them before anything is built. Measured (peaks over
# the imports') by benchmarks/refusal_benchmark.py --xspace-costs, each figure above what it measured
# (the pure-Python decoder's where it holds more): an event (the tables: about 40 bytes an event on
# the TensorFlow-shaped benchmark files, 120 on the real JAX capture; 5M empty events 268 MB native, 457
# pure), a line or a plane (a table, and a share of every pass over tables: 4.7 kB a line on a file of
# 200,000 empty lines), an event metadata entry (the header's objects: 1M distinct entries with their
# names, 495 MB native, 545 pure; issue 51's 15M cost 7.2 GB), one of its stats (250,000 entries of 4
# stats 230 MB native, 297 pure), a stat metadata entry, a plane stat, and a string (its object, and its
# text at up to 4 bytes a character).
BYTES_PER_EVENT = 80
BYTES_PER_EVENT_PURE = 120
BYTES_PER_LINE = 5000
BYTES_PER_METADATA = 500
BYTES_PER_METADATA_STAT = 96
BYTES_PER_METADATA_STAT_PURE = 192
BYTES_PER_STAT_METADATA = 200
BYTES_PER_PLANE_STAT = 128
BYTES_PER_STRING = 64
# Without the census (the native extension not built), the pure-Python decoder's cost projected from
# the file's size: its worst measured shape, 2-byte empty events, took 48 times the file (457 MB for
# 9.5 MB, --xspace-costs).
PURE_BYTES_PER_FILE_BYTE = 60.0
# An XSpace file's analysis may hold this many times its size on disk (base.Budget; real files take
# up to about 5: 40-120 bytes an event, 10-30 bytes on disk; 50M empty events in 96 MB projected 43).
MEMORY_PER_FILE_BYTE = 32.0

Admit = Callable[[dict], None]  # the census of a file: raises to refuse it


def census(data: Buffer) -> dict | None:
    """What the file holds (_xdecode.census: planes, lines, events, event metadata and their stats,
    stat metadata, plane stats, strings and their bytes), counted without building anything; None
    without the native extension."""
    return _xdecode.census(data) if _xdecode is not None else None


class Admission:
    """What refuses a file from its census (called with it), before its header is decoded: over
    MAX_LINES lines, or a projected cost over the budget (the size limit's share, the memory free,
    MEMORY_PER_FILE_BYTE times its size on disk). `pure`: the pure-Python decoder's costs."""

    def __init__(self, path: str, size: int, limit: int | None, pure: bool = False) -> None:
        self.path, self.size, self.limit, self.pure = path, size, limit, pure

    def __call__(self, n: dict) -> None:
        check_lines(self.path, n["lines"])
        pure = self.pure
        need = (
            self.size
            + n["events"] * (BYTES_PER_EVENT_PURE if pure else BYTES_PER_EVENT)
            + (n["lines"] + n["planes"]) * BYTES_PER_LINE
            + n["metadata"] * BYTES_PER_METADATA
            + n["metadata_stats"] * (BYTES_PER_METADATA_STAT_PURE if pure else BYTES_PER_METADATA_STAT)
            + n["stat_metadata"] * BYTES_PER_STAT_METADATA
            + n["plane_stats"] * BYTES_PER_PLANE_STAT
            + n["strings"] * BYTES_PER_STRING
            + n["string_bytes"] * 4
        )
        held = [f"{n['events']:,} events on {n['lines']:,} lines"]
        if n["metadata"] * BYTES_PER_METADATA > need / 4:
            held.append(f"{n['metadata']:,} event metadata entries")
        if n["planes"] * BYTES_PER_LINE > need / 4:
            held.append(f"{n['planes']:,} planes")
        Budget.of(self.limit, self.size, MEMORY_PER_FILE_BYTE).check(self.path, need, ", ".join(held))

    def without_census(self) -> None:
        """The pure-Python decoder's cost projected from the file's size alone (no native census to
        count what it holds), against the budget."""
        need = self.size * PURE_BYTES_PER_FILE_BYTE
        Budget.of(self.limit).check(self.path, need, f"{self.size / 2**20:,.0f} MB of XSpace, decoded in Python")


class Stopped(Exception):
    """The scan stopped before its lines: the file is refused from its header."""


class Scan:
    """The header (planes, line headers, hostnames, errors, warnings, the string list) and then each
    line's raw columns, in file order; on a worker thread when `background`, else at once. A local
    file is first read whole into memory of our own (`LocalFile.snapshot`, checked: the scanner never
    reads a file that can change under it), on the same thread."""

    def __init__(self, data: Data, background: bool, admit: Admit | None = None):
        """`admit`: may refuse the file from its census (what it holds, counted), before its header
        is decoded (the header builds an object per event metadata entry: 15M cost 7.2 GB)."""
        assert _xdecode is not None
        self.data = data
        self._admit = admit
        self.admitted = admit is not None  # its census is checked before its header is decoded
        self._mapped = False
        self.strings: list[bytes] = []
        self._header: tuple | None = None
        self._lines: list[tuple] = []  # decode_line's result per line, file order
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._run, name="tb-gpu-advisor-scan", daemon=True)
            self._thread.start()
        else:
            self._run()

    def _run(self) -> None:
        assert _xdecode is not None
        try:
            self.data = data = in_memory(self.data)
            self._mapped = isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED")
            if self._admit is not None:
                self._admit(_xdecode.census(data))
            header = _xdecode.decode(data, WANTED_STATS, True)
            with self._cond:
                self._header = header
                self._cond.notify_all()
            if too_many_lines(sum(len(plane[5]) for plane in header[0])):
                raise Stopped("too many lines")  # the reader refuses it from its header (check_lines)
            table = _xdecode.strings_table(self.strings)
            for _, _, stat_names, _, _, lines in header[0]:
                for *_, n, _, _, _, (start, end) in lines:
                    if self._stopped:
                        raise Stopped("the reader refused the file")
                    cols = _xdecode.decode_line(
                        data, start, end, n, stat_names, WANTED_STATS, table, DESCRIBED, DESCRIPTION_LIMIT
                    )
                    with self._cond:
                        self._lines.append(cols)
                        self._cond.notify_all()
                    self._unmap(start, end)
        except BaseException as e:  # noqa: BLE001  handed to the reader, which reports it
            with self._cond:
                self._error = e.with_traceback(None)  # see _raise
                self._cond.notify_all()

    def _unmap(self, start: int, end: int) -> None:
        """The snapshot's pages of a line scanned given back: they would count as the command's memory
        (the 265 MB benchmark file's whole size) until the end of the read. The scan reads each line
        once."""
        if self._mapped:
            lo, hi = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE, end // mmap.PAGESIZE * mmap.PAGESIZE
            if hi > lo:
                try:
                    self.data.madvise(mmap.MADV_DONTNEED, lo, hi - lo)  # type: ignore[union-attr]
                except (OSError, ValueError, AttributeError):
                    self._mapped = False

    def _raise(self) -> NoReturn:
        """The scan's error, raised as a copy: the error kept here holds no frame (a raise adds the
        raising frame, which holds this scan, which holds the file's bytes), so nothing keeps them in
        a cycle until a collection (TensorBoard held a refused file's 420 MB after answering)."""
        assert self._error is not None
        try:
            error: BaseException | None = copy.copy(self._error)
        except Exception:  # noqa: BLE001  an error that cannot be copied: raised itself
            error = self._error
        try:
            raise error  # type: ignore[misc]
        finally:
            error = None  # this frame, in the error's traceback, does not hold it: no cycle

    def header(self) -> tuple:
        """(planes, hostnames, errors, warnings, strings) of `_xdecode.decode(..., lazy=True)`."""
        with self._cond:
            while self._header is None and self._error is None:
                self._cond.wait()
            if self._header is None:
                self._raise()
            return self._header

    def stop(self) -> None:
        """The lines not scanned yet are left unscanned: the reader refused the file from its header.
        Each line's scan builds Python objects under the GIL, so a scan left running would slow the
        thread that reports the refusal (200,000 empty lines: 2.2 s of CPU)."""
        self._stopped = True

    def line(self, k: int) -> tuple:
        """The k-th line's (mid, off, dur, {wanted index: (kind, val)}, descriptions, their rows), in
        file order."""
        with self._cond:
            while len(self._lines) <= k and self._error is None:
                self._cond.wait()
            if len(self._lines) <= k:
                self._raise()
            return self._lines[k]

    def drop(self, k: int) -> None:
        """The k-th line's columns let go (read: the reader has built its table)."""
        with self._cond:
            self._lines[k] = ()

    def finish(self) -> None:
        """Waits for the scan to end; raises its error if it failed anywhere in the file."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            self._raise()
