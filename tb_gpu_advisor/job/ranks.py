"""Ranks and hosts analysed side by side: in worker processes on this machine, or on a Dask cluster.

Files are read and analysed in `processes()` worker processes (engine.WorkerProcess, started from the
fork server: the plugin runs inside TensorBoard with threads, so no plain fork), each taking the next
file when done with one; only a file's report comes back (the job view needs nothing else: report.rank_measures travels in
it), so the parent's memory grows with the number of ranks by their reports only. A file that crashes
or hangs its process gets an error report, and a new process takes the next file; the other ranks go on.

With a Dask address (`analyze --dask`, the plugin's `--gpu_advisor_dask`) the same analyses run on
the cluster's workers, which read the files themselves (discovery.read_bytes: local paths they can
see, gs://, s3://); the reports are the same as the local run's.

TB_GPU_ADVISOR_PROCESSES sets the number of processes (default: the cores, fewer when the largest
file's analysis would not fit that many times in the available memory).
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from typing import Any, Callable, Sequence

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.parallel import processes_setting
from tb_gpu_advisor.formats.discovery import MEMORY_PER_FILE_BYTE, HostFile, available_memory
from tb_gpu_advisor.report import ANALYSIS_FAILED, engine

PROCESSES_ENV = "TB_GPU_ADVISOR_PROCESSES"  # read by parallel.processes_setting
DASK_CONNECT_S = 10.0  # a scheduler that does not answer in this time is reported as not answering
DASK_HINT = "pip install 'tb_gpu_advisor[dask]'"


class ClusterError(Exception):
    """Dask asked for but not installed, or its scheduler does not answer: a message for the user."""


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def processes(files: Sequence[HostFile] = ()) -> int:
    """How many files are analysed at once: TB_GPU_ADVISOR_PROCESSES (0: none, everything in this
    process), else the cores, fewer where the largest file's analysis (discovery.MEMORY_PER_FILE_BYTE
    times its size) fits fewer times in the available memory; never more than there are files."""
    n = processes_setting()
    if n == 0:
        return 0
    if n is None:
        n = cores()
        largest = max((f.size for f in files), default=0)
        free = available_memory()
        if largest and free is not None:
            n = min(n, max(1, int(free // (largest * MEMORY_PER_FILE_BYTE))))
    return max(1, min(n, len(files))) if files else max(1, n)


@dataclasses.dataclass
class Progress:
    """Ranks and bytes done across a job's files, for a progress line: a file being read counts with
    the share of it read so far."""

    ranks: int
    total_bytes: int
    done_ranks: int = 0
    done_bytes: float = 0.0
    _reading: dict[int, float] = dataclasses.field(default_factory=dict)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def reading(self, i: int, nbytes: float) -> None:
        with self._lock:
            self._reading[i] = nbytes

    def finished(self, i: int, nbytes: int) -> None:
        with self._lock:
            self._reading.pop(i, None)
            self.done_ranks += 1
            self.done_bytes += nbytes

    def bytes_so_far(self) -> float:
        with self._lock:
            return self.done_bytes + sum(self._reading.values())

    def line(self) -> str:
        return f"{self.done_ranks}/{self.ranks} ranks, {_size(self.bytes_so_far())}/{_size(self.total_bytes)}"

    def to_json(self) -> dict:
        return {
            "ranks_done": self.done_ranks,
            "ranks": self.ranks,
            "bytes_done": int(self.bytes_so_far()),
            "bytes": self.total_bytes,
        }


def _size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale or unit == "kB":
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"  # pragma: no cover


def advise_all(
    files: Sequence[HostFile],
    options: Any = None,
    n_processes: int | None = None,
    dask: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    max_bytes: int | None = None,
) -> list[dict]:
    """The reports of `files`, in their order, made in `n_processes` worker processes (default
    `processes(files)`) or on the Dask cluster at `dask`; never raises for one file (engine.advise).
    Raises ClusterError."""
    state = Progress(len(files), sum(f.size for f in files))
    if dask is not None:
        return _advise_on_cluster(files, options, dask, state, on_progress, max_bytes)
    n = processes(files) if n_processes is None else n_processes
    reports: list[dict] = [{}] * len(files)
    if n == 0:  # TB_GPU_ADVISOR_PROCESSES=0: one after the other, here
        for i, f in enumerate(files):
            reports[i] = engine.advise(f, options, max_bytes=max_bytes)
            state.finished(i, f.size)
            if on_progress is not None:
                on_progress(state)
        return reports
    threads = max(1, cores() // n)  # each analysis's own threads (parallel.py), the cores shared out
    todo: queue.SimpleQueue[tuple[int, HostFile]] = queue.SimpleQueue()
    for item in enumerate(files):
        todo.put(item)
    lock = threading.Lock()

    def told() -> None:
        if on_progress is not None:
            with lock:
                on_progress(state)

    def work() -> None:
        worker = engine.WorkerProcess(threads, name="gpu_advisor_rank")
        try:
            while True:
                try:
                    i, f = todo.get_nowait()
                except queue.Empty:
                    return

                def progress(done: int, total: int, i: int = i, f: HostFile = f) -> None:
                    state.reading(i, f.size * done / max(total, 1))
                    told()

                reports[i] = engine.advise(f, options, progress, max_bytes=max_bytes, worker=worker)
                state.finished(i, f.size)
                told()
        finally:
            worker.close()

    pool = [threading.Thread(target=work, name=f"gpu_advisor_rank_{k}", daemon=True) for k in range(n)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return reports


def dask_client(address: str) -> Any:  # distributed.Client
    """A client of the Dask scheduler at `address`. Raises ClusterError when Dask is not installed or
    nothing answers there."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(f"--dask needs Dask's distributed scheduler: {DASK_HINT}") from None
    try:
        return Client(address, timeout=DASK_CONNECT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        reason = str(e).split("\n", 1)[0][:200] or type(e).__name__
        raise ClusterError(f"no Dask scheduler answers at {address!r} ({reason})") from None


def cluster_report(f: HostFile, options: Any, max_bytes: int | None) -> dict:
    """On a Dask worker: one file's report, read by the worker itself (what `advise_all` submits).
    Raises as engine.analyse_file does; the client gets the same exception (Dask sends it back)."""
    return engine.analyse_file(f, options, max_bytes=max_bytes)[1]


def _advise_on_cluster(
    files: Sequence[HostFile],
    options: Any,
    address: str,
    state: Progress,
    on_progress: Callable[[Progress], None] | None,
    max_bytes: int | None,
) -> list[dict]:
    client = dask_client(address)
    from distributed import as_completed

    try:
        futures = [client.submit(cluster_report, f, options, max_bytes, pure=False) for f in files]
        index = {fut.key: i for i, fut in enumerate(futures)}
        reports: list[dict | None] = [None] * len(files)
        for fut in as_completed(futures, loop=client.loop):
            i = index[fut.key]
            reports[i] = cluster_outcome(files[i], fut)
            state.finished(i, files[i].size)
            if on_progress is not None:
                on_progress(state)
            fut.release()
        return [r for r in reports if r is not None]
    finally:
        client.close()


def cluster_outcome(f: HostFile, future: Any) -> dict:
    """A finished Dask future's report, or this file's error report as engine.advise makes it here; a
    task whose worker died every time it was tried (Dask's KilledWorker) is one too."""
    try:
        return future.result()
    except ProfileReadError as e:
        return engine.unreadable_report(f, str(e))
    except Exception as e:  # noqa: BLE001  one file's failure, reported for it only
        if type(e).__name__ == "KilledWorker":
            return engine.unreadable_report(f, f"{f.path}: the Dask worker analysing the file stopped (out of memory?)")
        return engine.unreadable_report(f, f"{f.path}: {engine.failure_message(e)}", ANALYSIS_FAILED)
