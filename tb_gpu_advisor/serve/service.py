"""Runs, hosts and analyses for the plugin: discovery with a short cache, and an analysis cache keyed
by the listed (path, size, mtime), each entry answering only while the file on disk is the one it read
(Entry.source), bounded by the memory its entries hold (or the process grew by making them).

Two kinds of work, on a few worker threads fed by a queue (a host the user opened first, then by file
size, so a small run is not held behind large ones): a host's **report** alone, made in the worker
thread's process (engine.WorkerProcess, stopped while idle) or on a Dask cluster, which is all the
all-hosts view and the overview need, so a job of 1,024 ranks costs the server their reports only;
and a host's **full analysis** (its tables, for the timeline, export, event and compare routes),
made here when the user opens the host, PyTorch traces read in another process so that parsing one
does not hold the interpreter lock every request needs. Concurrent requests for one host file share one computation; requests answered
from the cache never wait for a running analysis. Beyond the memory budget the least recent full
analyses are dropped with their reports; their summaries (report.host_summary) stay. An entry for a file that changed (new size or mtime)
replaces the old one. Errors name files relative to the logdir, never by server path.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import gzip
import heapq
import importlib
import itertools
import json
import logging
import os
import sys
import threading
import time
import types
from typing import Any, Callable

import numpy as np

from tb_gpu_advisor import formats
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.base import CHANGED, identity, max_profile_bytes
from tb_gpu_advisor.formats.discovery import HostFile, LegacyRun, discover
from tb_gpu_advisor.job import ranks
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.present.timeline import Timeline
from tb_gpu_advisor.report import (
    ANALYSIS_FAILED,
    CAPTURE_NOTES,
    UNREADABLE,
    engine,
    host_summary,
    worst_finding,
)
from tb_gpu_advisor.report.compare import compare
from tb_gpu_advisor.tables import Table, build, build_check

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, ERROR = "queued", "running", "done", "error"
DEFAULT_CACHE_MB = 1024  # memory the cached analyses may hold (--gpu_advisor_cache_mb)
DASK_WORKERS = 16  # threads waiting on the Dask cluster's reports
MAX_COMPARISONS = 32  # comparisons kept as JSON


PER_STEP_TABLES_KEPT = 8  # per-step tables kept per host (the whole-capture tables are all kept)
RETRY_CHANGED_S = 1.0  # a file that changed while it was read is read again when asked after this


class UnknownRun(LookupError):
    pass


@dataclasses.dataclass(eq=False)
class Entry:
    """One host file's analysis, shared by every request for it."""

    file: HostFile
    name: str  # the file as users see it: relative to the logdir
    state: str = QUEUED
    progress: float = 0.0
    summary: dict | None = None  # report.host_summary: what the all-hosts view and the overview read
    report: dict | None = None  # the whole report, with the full analysis
    measures: Measures | None = (
        None  # the full analysis, measured, once the host was opened (AdvisorService.get(full=True))
    )
    loading: bool = False  # its full analysis is queued or running
    error: str | None = None
    failure: str | None = None  # report.UNREADABLE or report.ANALYSIS_FAILED with `error`
    seconds: float | None = None
    nbytes: int = 0  # memory the full analysis holds: held_bytes, or the process's growth making it if more
    rss_growth: int = 0  # the process's resident memory grown while the full analysis was made (and kept)
    grown: bool = False  # a table or the timeline was built since nbytes was measured
    retry_after: float | None = None  # a file that changed while read: read again after this (monotonic)
    # what identifies the bytes analysed (formats.base.LocalFile.identity, taken from the file opened):
    # checked against the file on disk before the entry answers; None where unknown (a remote file)
    source: tuple[int, ...] | None = None
    done: threading.Event = dataclasses.field(default_factory=threading.Event)  # the report (or the error)
    loaded: threading.Event = dataclasses.field(default_factory=threading.Event)  # the full analysis (or the error)
    _timeline: Timeline | None = None
    _tables: dict = dataclasses.field(default_factory=dict)
    _report_bytes: tuple[bytes, bytes] | None = None

    @property
    def report_bytes(self) -> tuple[bytes, bytes]:
        """The report as JSON bytes and gzipped, made once: a repeated request costs no encoding."""
        if self._report_bytes is None:
            body = json.dumps(self.report, ensure_ascii=True, allow_nan=False).encode()
            self._report_bytes = (body, gzip.compress(body, compresslevel=3, mtime=0))
            self.grown = True
        return self._report_bytes

    @property
    def timeline(self) -> Timeline:
        """The panel's timeline of a finished analysis (built once)."""
        if self._timeline is None:
            assert self.measures is not None and self.report is not None
            self._timeline = Timeline(self.measures.analysis, self.report)
        self.grown = True  # its tracks are made as windows are asked
        return self._timeline

    def table(self, table: str, group: str | None, step: int | None = None) -> Table:
        """One table of a finished analysis, built once per table, grouping and step."""
        key = (table, build_check(table, group, step), step)
        if key not in self._tables:
            assert self.measures is not None
            per_step = [k for k in self._tables if k[2] is not None]
            if step is not None and len(per_step) >= PER_STEP_TABLES_KEPT:
                del self._tables[per_step[0]]  # the oldest: a client stepping through steps keeps memory bounded
            self._tables[key] = build(self.measures, table, group, step)
            self.grown = True
        return self._tables[key]

    def measure(self) -> None:
        """nbytes measured again: the analysis, its report and what was built of it since, or what the
        process grew by making it, if more (objects count less than the allocator keeps for them)."""
        self.grown = False
        if self.measures is not None:
            held = held_bytes(self.measures, self.report, self._timeline, self._tables, self._report_bytes)
            self.nbytes = max(held, self.rss_growth)

    def to_json(self) -> dict:
        out: dict = {"state": self.state, "progress": round(self.progress, 4)}
        if self.error:
            out["error"] = self.error
        if self.seconds is not None:
            out["seconds"] = round(self.seconds, 3)
        if self.summary:
            checks = self.summary["checks"]
            worst = worst_finding(checks)
            out["worst"] = (
                {
                    "id": worst["id"],
                    "status": worst["status"],
                    "title": worst["title"],
                    "note": worst["id"] in CAPTURE_NOTES and not worst.get("saving_ms"),
                }
                if worst
                else None
            )
            out["counts"] = dict(collections.Counter(c["status"] for c in checks))
            steps = self.summary.get("steps") or {}
            out["step_ms"] = steps.get("mean_ms")
            out["top_saving_ms"] = max(
                (c["saving_ms"] or 0 for c in checks if c["status"] in ("critical", "warning")), default=0
            )
            out["device_busy_pct"] = (self.summary.get("headline") or {}).get("device_busy_pct")
        return out


def resident_bytes() -> int | None:
    """This process's resident memory (Linux: /proc/self/statm), None where unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def give_back_memory() -> None:
    """Memory the allocator holds free, given back to the system (glibc's malloc_trim): a dropped
    analysis's memory otherwise stays the process's (TensorBoard kept 1.75 GB after a file it read,
    issue 51). Elsewhere nothing."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL(None).malloc_trim if sys.platform.startswith("linux") else False
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None  # glibc's malloc_trim once looked up, False where there is none


def _current(e: Entry) -> bool:
    """Whether the file on disk is still the one the entry analysed (or is analysing): the same
    device, inode, size, modification and change times. Discovery's (path, size, mtime) alone let a
    file replaced right after it was listed, then put back with its old size and time (`cp -p`, `mv`
    of a kept copy), answer with the other file's analysis indefinitely (issue 51)."""
    return e.source is None or identity(e.file.path) == e.source


# A Python object's own bytes beyond sys.getsizeof: its allocator's header and rounding.
_OBJECT_OVERHEAD = 16
_SHARED = (type(None), bool, type, types.ModuleType, types.CodeType, types.BuiltinFunctionType, enum.Enum)


def held_bytes(*roots: object) -> int:
    """Memory the objects reachable from `roots` hold, measured: each NumPy array's buffer once (a
    view's base), and every string, container and object of the advisor's own along the way (the
    tables, their columns, their lines, the names, the report), each counted once. Functions count by
    what their closures hold; modules, classes and shared constants not at all. An analysis of many
    small lines holds most of its memory in objects, not in arrays (issue 38: 200,000 empty lines
    were 948 MB that the count of columns said was 0)."""
    seen: set[int] = set()
    total = 0
    stack: list = list(roots)
    while stack:
        x = stack.pop()
        if id(x) in seen or isinstance(x, _SHARED):
            continue
        seen.add(id(x))
        if isinstance(x, np.ndarray):
            base = x
            while isinstance(base.base, np.ndarray):
                base = base.base
            if base is not x:
                stack.append(base)
                total += sys.getsizeof(x)
            elif isinstance(x.base, (bytes, bytearray)):  # made from a bytes object: that object holds it
                stack.append(x.base)
                total += sys.getsizeof(x)
            else:
                total += sys.getsizeof(x) + (x.nbytes if x.base is not None else 0)
                if x.dtype == object:
                    stack.extend(x.ravel().tolist())
            continue
        total += sys.getsizeof(x) + _OBJECT_OVERHEAD
        if isinstance(x, (str, bytes, bytearray, int, float, complex, memoryview)):
            continue
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset, collections.deque)):
            stack.extend(x)
        elif isinstance(x, types.FunctionType):
            stack.extend(c.cell_contents for c in x.__closure__ or () if _filled(c))
        elif isinstance(x, types.MethodType):
            stack.append(x.__self__)
        elif isinstance(x, functools.partial):
            stack.extend((x.func, x.args, x.keywords))
        else:
            stack.extend(_attributes(x))
    return total


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (an empty cell raises)
    except ValueError:
        return False
    return True


def _attributes(x: object) -> list:
    """An object's attribute values: its __dict__'s and its slots'."""
    out = list(getattr(x, "__dict__", {}).values())
    for cls in type(x).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(x, name):
                out.append(getattr(x, name))
    return out


class AdvisorService:
    def __init__(self, logdir: str, workers: int | None = None, discovery_ttl_s: float = 5.0, cache_mb: float = DEFAULT_CACHE_MB,
                 max_profile_mb: float | None = None, apart: bool = True, dask: str | None = None):  # fmt: skip
        """`workers`: analyses at once (default ranks.processes(): TB_GPU_ADVISOR_PROCESSES or the cores);
        `apart`: reports made in worker processes and PyTorch traces read in them (else all in this
        process); `dask`: a Dask scheduler's address, where reports are made instead (ranks.dask_client:
        raises ranks.ClusterError when it does not answer)."""
        self.logdir = logdir
        self.apart = apart
        self.reports_apart = apart and ranks.processes() > 0  # TB_GPU_ADVISOR_PROCESSES=0: reports made here
        self.dask = ranks.dask_client(dask) if dask else None
        if workers is None:
            workers = max(DASK_WORKERS, ranks.processes()) if self.dask is not None else max(2, ranks.processes())
        self.workers = workers
        # the flag, else TB_GPU_ADVISOR_MAX_PROFILE_MB: one limit for this process and its workers
        self.max_profile_bytes = max_profile_bytes(int(max_profile_mb * 2**20) if max_profile_mb else None)
        self.discovery_ttl_s = discovery_ttl_s
        self.cache_bytes = int(cache_mb * 2**20)
        self._lock = threading.Lock()
        self._files: tuple[float, list[HostFile], list[LegacyRun]] | None = None
        self._entries: collections.OrderedDict[str, Entry] = collections.OrderedDict()  # by path, least recent first
        self._queue: list[tuple[int, int, int, Entry, bool]] = []  # (not full, size, order, entry, full)
        self._order = itertools.count()
        self._wake = threading.Condition(self._lock)
        # comparisons as JSON bytes, by the two files (a changed file is a new key); a few are kept
        self._diffs: collections.OrderedDict[tuple, bytes] = collections.OrderedDict()
        for i in range(self.workers):
            threading.Thread(target=self._work, name=f"gpu_advisor_{i}", daemon=True).start()

    # -- discovery ---------------------------------------------------------------------------

    def files(self) -> tuple[list[HostFile], list[LegacyRun]]:
        now = time.monotonic()
        with self._lock:
            cached = self._files
        if cached is None or now - cached[0] > self.discovery_ttl_s:
            found, legacy = discover(self.logdir) if self.logdir else ([], [])
            cached = (now, found, legacy)
            with self._lock:
                self._files = cached
        return cached[1], cached[2]

    def runs(self) -> dict[str, list[HostFile]]:
        out: dict[str, list[HostFile]] = {}
        for f in self.files()[0]:
            out.setdefault(f.run, []).append(f)
        return out

    def find(self, run: str, host: str | None = None) -> list[HostFile]:
        """Host files of a run (one host, or all), looked up among the discovered runs: request
        text is only ever compared with discovered names, never turned into a path."""
        of_run = self.runs().get(run)
        if not of_run:
            raise UnknownRun(f"unknown run {run!r}")
        if host is None:
            return of_run
        match = [f for f in of_run if f.host == host]
        if not match:
            raise UnknownRun(f"unknown host {host!r} in run {run!r}")
        return match

    def display_name(self, f: HostFile) -> str:
        """A file as users see it: relative to the logdir."""
        if "://" in f.path or not self.logdir:
            root = self.logdir.rstrip("/")
            return f.path[len(root) :].lstrip("/") if f.path.startswith(root) else os.path.basename(f.path)
        return os.path.relpath(f.path, self.logdir)

    # -- analyses ----------------------------------------------------------------------------

    def peek(self, f: HostFile) -> Entry | None:
        with self._lock:
            e = self._entries.get(f.path)
        return e if e is not None and e.file == f and _current(e) else None

    def entry(self, f: HostFile, full: bool = False) -> Entry:
        """The cache entry of a host file, queueing its report if it has none (or the file changed: its
        listing, or the file on disk is not the one analysed), and with `full` its full analysis if it
        has none."""
        with self._lock:
            e = self._entries.get(f.path)
        current = e is not None and _current(e)  # a stat, outside the lock
        with self._lock:
            if self._entries.get(f.path) is not e:
                current = False
                e = self._entries.get(f.path)
            if e is not None and current and e.file == f and not (e.retry_after and time.monotonic() > e.retry_after):
                self._entries.move_to_end(f.path)
            else:
                e = Entry(f, self.display_name(f))
                self._entries[f.path] = e  # a changed file's old entry is dropped here
                e.loading = full
                self._push(e, full)
                return e
            if full and e.measures is None and not e.loading and e.state != ERROR:
                e.loading = True
                self._push(e, True)
            return e

    def _push(self, e: Entry, full: bool) -> None:
        heapq.heappush(self._queue, (0 if full else 1, e.file.size, next(self._order), e, full))
        self._wake.notify()

    def _work(self) -> None:
        worker = engine.WorkerProcess(self._threads(), name="gpu_advisor_report")
        while True:
            with self._lock:
                idle = not self._queue
            if idle:
                worker.close()  # no process (and its memory) kept while there is nothing to do
            with self._lock:
                while not self._queue:
                    self._wake.wait()
                _, _, _, e, full = heapq.heappop(self._queue)
                if self._entries.get(e.file.path) is not e:  # replaced by a newer version of the file
                    continue
                if (e.measures is not None or e.loaded.is_set()) if full else (e.done.is_set() or e.loading):
                    continue  # done meanwhile (a report-only job behind a full one)
                e.state = RUNNING if not e.done.is_set() else e.state
            self._compute(e, full, worker)

    def _compute(self, e: Entry, full: bool = True, worker: engine.WorkerProcess | None = None) -> None:
        t0 = time.perf_counter()
        if e.source is None and "://" not in e.file.path:
            e.source = identity(e.file.path)  # until the read says which bytes it read (an error says nothing)

        def progress(done: int, total: int) -> None:
            e.progress = max(e.progress, 0.9 * done / max(total, 1))  # reading is most of the work

        try:
            if full:
                for module in formats.by_name(e.file.kind).modules:  # imported once: no analysis's growth
                    importlib.import_module(module)
                before = resident_bytes()
                e.measures, e.report = engine.analyse_file(
                    e.file, progress=progress, max_bytes=self.max_profile_bytes, apart=self.apart
                )
                e.source = engine.source_of(e.measures)
                give_back_memory()  # what the analysis freed, back to the system: only what it keeps is growth
                after = resident_bytes()
                e.rss_growth = max(0, after - before) if before is not None and after is not None else 0
                e.measure()
                report = e.report
            elif self.dask is not None:
                report = self._cluster_report(e.file)
            elif self.reports_apart and (apart := self._report_apart(e, progress, worker)) is not None:
                report = apart
            else:
                m, report = engine.analyse_file(e.file, progress=progress, max_bytes=self.max_profile_bytes)
                e.source = engine.source_of(m)
            e.summary = host_summary(report)  # only this is kept of a report made for the all-hosts view
            e.state = DONE
        except ProfileReadError as err:
            e.error = f"{e.name}: {err.message}"
            e.failure = UNREADABLE
            e.state = ERROR
            if err.message == CHANGED:  # read again when asked again (a file system's times may be too coarse
                e.retry_after = time.monotonic() + RETRY_CHANGED_S  # to make it a new version of the file)
        except Exception as err:  # noqa: BLE001  a bug must not take the server down; shown for this run only
            # the exception's text is not shown: it may name the server's files
            log.warning("analysis of %s failed", e.name, exc_info=True)
            e.error = f"{e.name}: the analysis failed ({type(err).__name__}); please report it"
            e.failure = ANALYSIS_FAILED
            e.state = ERROR
        finally:
            e.progress = 1.0
            if e.seconds is None:
                e.seconds = time.perf_counter() - t0
            # within the memory budget before anyone waiting for this entry is answered: evicting after
            # (as the worker loop did) let a request see one analysis too many held
            self._evict()
            if full:
                e.loading = False
                e.loaded.set()
            if e.state == ERROR:
                e.loaded.set()  # a file that cannot be read has no full analysis to wait for
            e.done.set()

    def _report_apart(
        self, e: Entry, progress: Callable[[int, int], None], worker: engine.WorkerProcess | None
    ) -> dict | None:
        """The report made in a worker process; None when none can start (then it is made here)."""
        try:
            report = engine.report_apart(e.file, None, progress, self.max_profile_bytes, worker=worker)
        except engine.WorkerUnavailable:
            return None
        if worker is not None:
            e.source = worker.source
        return report

    def _threads(self) -> int:
        """Each worker process's own threads (parallel.py): the cores shared out."""
        return max(1, ranks.cores() // self.workers)

    def _cluster_report(self, f: HostFile) -> dict:
        """One report made on the Dask cluster; raises what the analysis raised there."""
        assert self.dask is not None
        return self.dask.submit(ranks.cluster_report, f, None, self.max_profile_bytes, pure=False).result()

    def _remeasure(self) -> None:
        """The entries grown by tables or a timeline since they were measured, measured again."""
        with self._lock:
            grown = [x for x in self._entries.values() if x.grown and x.loaded.is_set()]
        for x in grown:
            x.measure()

    def _evict(self) -> None:
        """Drop the least recently used full analyses beyond the memory budget (the newest one stays); their
        summaries stay, in a new entry (a request still holding the old one can finish with it)."""
        self._remeasure()
        with self._lock:
            held = sum(x.nbytes for x in self._entries.values())
            newest = next((x for x in reversed(self._entries.values()) if x.nbytes), None)  # the last one opened
            dropped = False
            for path in list(self._entries):
                if held <= self.cache_bytes:
                    break
                old = self._entries[path]
                if old.nbytes and old.loaded.is_set() and old is not newest:
                    held -= old.nbytes
                    kept = Entry(old.file, old.name, DONE, 1.0, old.summary, seconds=old.seconds, source=old.source)
                    kept.done.set()
                    self._entries[path] = kept
                    dropped = True
        if dropped:
            give_back_memory()

    def comparison(self, base: Entry, new: Entry, all_checks: bool = False) -> bytes:
        """The comparison of two finished analyses, as JSON bytes, made once per pair of files (`all_checks`:
        with the unchanged checks listed)."""
        key = (base.file, base.source, new.file, new.source, all_checks)  # the bytes each side analysed
        with self._lock:
            body = self._diffs.get(key)
            if body is not None:
                self._diffs.move_to_end(key)
                return body
        assert base.measures is not None and base.report is not None
        assert new.measures is not None and new.report is not None
        diff = compare((base.measures, base.report), (new.measures, new.report), all_checks)
        body = json.dumps(diff, allow_nan=False).encode()
        with self._lock:
            self._diffs[key] = body
            while len(self._diffs) > MAX_COMPARISONS:
                self._diffs.popitem(last=False)
        return body

    def held_bytes(self) -> int:
        """Memory the cached analyses hold, measured (held_bytes)."""
        self._remeasure()
        with self._lock:
            return sum(x.nbytes for x in self._entries.values())

    def get(self, f: HostFile, wait_s: float, full: bool = False) -> Entry:
        """The entry of a host file, after waiting up to `wait_s` for its report (`full`: its full analysis)."""
        e = self.entry(f, full)
        (e.loaded if full else e.done).wait(wait_s)
        return e

    def analyses_held(self) -> int:
        """Entries holding a full analysis (the all-hosts view should leave none)."""
        with self._lock:
            return sum(1 for x in self._entries.values() if x.measures is not None)

    def state(self, f: HostFile) -> dict:
        e = self.peek(f)
        return e.to_json() if e else {"state": "new", "progress": 0.0}
