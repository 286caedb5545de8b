"""Runs, hosts and analyses for the plugin: discovery with a short cache, and an analysis cache keyed
by (path, size, mtime, advisor version).

Analyses run on a small thread pool: concurrent requests for one host file share one computation,
a slow analysis does not hold up requests for other runs (they are answered from the cache or wait
their own turn), and progress is kept on the cache entry for the `runs` route to report.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tb_gpu_advisor import __version__, engine
from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.discovery import HostFile, LegacyRun, discover
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.timeline import Timeline

QUEUED, RUNNING, DONE, ERROR = "queued", "running", "done", "error"


class UnknownRun(LookupError):
    pass


@dataclasses.dataclass
class Entry:
    """One host file's analysis, shared by every request for it."""

    file: HostFile
    state: str = QUEUED
    progress: float = 0.0
    report: dict | None = None
    analysis: Analysis | None = None
    error: str | None = None
    seconds: float | None = None
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    _timeline: Timeline | None = None

    @property
    def timeline(self) -> Timeline:
        """The panel's timeline of a finished analysis (built once)."""
        if self._timeline is None:
            assert self.analysis is not None and self.report is not None
            self._timeline = Timeline(self.analysis, self.report)
        return self._timeline

    def to_json(self) -> dict:
        out = {"state": self.state, "progress": round(self.progress, 4)}
        if self.error:
            out["error"] = self.error
        if self.seconds is not None:
            out["seconds"] = round(self.seconds, 3)
        if self.report:
            worst = next((c for c in self.report["checks"] if c["status"] in ("critical", "warning")), None)
            out["worst"] = {"id": worst["id"], "status": worst["status"]} if worst else None
            counts = collections.Counter(c["status"] for c in self.report["checks"])
            out["counts"] = dict(counts)
        return out


class AdvisorService:
    def __init__(self, logdir: str, workers: int = 2, discovery_ttl_s: float = 5.0, max_entries: int = 16):
        self.logdir = logdir
        self.discovery_ttl_s = discovery_ttl_s
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._files: tuple[float, list[HostFile], list[LegacyRun]] | None = None
        self._entries: collections.OrderedDict[tuple, Entry] = collections.OrderedDict()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpu_advisor")

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

    def find(self, run: str, host: str | None = None) -> list[HostFile]:
        """Host files of a run (one host, or all), looked up among the discovered runs: request
        text is only ever compared with discovered names, never turned into a path."""
        files, _ = self.files()
        of_run = [f for f in files if f.run == run]
        if not of_run:
            raise UnknownRun(f"unknown run {run!r}")
        if host is None:
            return of_run
        match = [f for f in of_run if f.host == host]
        if not match:
            raise UnknownRun(f"unknown host {host!r} in run {run!r}")
        return match

    # -- analyses ----------------------------------------------------------------------------

    @staticmethod
    def key(f: HostFile) -> tuple:
        return (f.path, f.size, f.mtime, __version__)

    def peek(self, f: HostFile) -> Entry | None:
        with self._lock:
            return self._entries.get(self.key(f))

    def entry(self, f: HostFile) -> Entry:
        """The cache entry of a host file, starting its analysis if it has none."""
        k = self.key(f)
        with self._lock:
            e = self._entries.get(k)
            if e is not None:
                self._entries.move_to_end(k)
                return e
            e = Entry(f)
            self._entries[k] = e
            # evict the oldest finished entries beyond the cache size
            while len(self._entries) > self.max_entries:
                old_k, old = next(iter(self._entries.items()))
                if not old.done.is_set():
                    break
                del self._entries[old_k]
        self._pool.submit(self._compute, e)
        return e

    def _compute(self, e: Entry) -> None:
        t0 = time.perf_counter()
        e.state = RUNNING

        def progress(done: int, total: int) -> None:
            e.progress = 0.9 * done / max(total, 1)  # reading is most of the work

        try:
            e.analysis, e.report = engine.analyse_file(e.file, progress=progress)
            e.state = DONE
        except ProfileReadError as err:
            e.error = str(err)
            e.state = ERROR
        except Exception as err:  # a bug must not take the server down; it is shown for this run only
            e.error = f"{e.file.path}: analysis failed: {type(err).__name__}: {err}"
            e.state = ERROR
        finally:
            e.progress = 1.0
            e.seconds = time.perf_counter() - t0
            e.done.set()

    def get(self, f: HostFile, wait_s: float) -> Entry:
        e = self.entry(f)
        e.done.wait(wait_s)
        return e

    def state(self, f: HostFile) -> dict:
        e = self.peek(f)
        return e.to_json() if e else {"state": "new", "progress": 0.0}
