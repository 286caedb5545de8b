"""The facade the CLI and the plugin share: one host file in, one report out."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Callable

from tb_gpu_advisor import formats, tables
from tb_gpu_advisor.checks import Options, run_checks, tables_of, unjudged
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.settings import import_path_of, settings, use_threads
from tb_gpu_advisor.formats.base import LocalFile, Prefetched, head
from tb_gpu_advisor.formats.discovery import HostFile, logged_step_times, machine_of, read_bytes, worker_and_cycle
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.profile import Profile
from tb_gpu_advisor.report import ANALYSIS_FAILED, UNREADABLE, clean, report_json
from tb_gpu_advisor.report.whatif import step_model_json

log = logging.getLogger(__name__)

READ_TIMEOUT_S = 600.0  # a PyTorch trace still being read after this is given up (read_apart)
_ctx = None
_lock = threading.Lock()


class AnalysisFailed(Exception):
    """A bug in a process apart, re-raised in the parent by its type's name and message (no traceback
    crosses), so that the report says what an analysis in the parent's process would have said."""

    def __init__(self, kind: str, text: str):
        super().__init__(kind, text)
        self.kind, self.text = kind, text


def analyse_file(
    f: HostFile,
    options: Options | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int | None = None,
    prefetched: Prefetched | None = None,
    apart: bool = False,
) -> tuple[Measures, dict]:
    """Read, analyse, measure and check one host file: its measures (built once, the one hub every
    later step reads: tables, compare, the rank digest) and its report. Raises ProfileReadError.
    `apart`: a file of a format that holds the interpreter lock while it is read (a PyTorch trace) is
    read in another process (read_apart), as the plugin does."""
    profile = None
    if apart and formats.by_name(f.kind).reads_apart:
        try:
            profile = read_apart(f, max_bytes)
        except WorkerUnavailable:  # said once (_worker_failed); read here instead
            pass
    tag = (options or Options()).step_time_tag
    logged = logged_step_times(f, tag) if tag and settings().whatif else []
    m = Measures(
        analyse(profile if profile is not None else read_file(f, progress, max_bytes, prefetched)),
        (tag, logged) if tag and logged else None,
    )
    findings, errors = run_checks(m, options)
    summary = m.analysis.summary()
    # a headline number is judged only where the check that judges it applies (`@check(headline=...)`:
    # the 16-bit share not in a profile without matmul/convolution kernels)
    for key in unjudged(findings):
        summary["headline"]["judged"][key] = None
    tables.link(m, findings, tables_of())
    report = report_json(f.run, f.host, summary, findings, errors)
    report["step_model"] = step_model_json(m, findings)
    job, worker, cycle = worker_and_cycle(f)
    report["rank_measures"] = clean(m.rank_digest.named(job, worker, cycle, machine_of(f, worker)).to_dict())
    return m, report


def read_file(
    f: HostFile,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int | None = None,
    prefetched: Prefetched | None = None,
) -> Profile:
    """The file's `Profile`, by the reader of its format (`f.kind`). `prefetched`: its bytes already
    read and its format's work on them started (discovery.prefetch)."""
    taken = prefetched.take() if prefetched is not None and prefetched.path == f.path else None
    data, started = taken if taken is not None else (read_bytes(f.path, max_bytes), None)
    try:
        profile = formats.by_name(f.kind).read(data, f.path, f.host, progress, max_bytes, started)
        if isinstance(data, LocalFile):
            profile.source = data.identity
        return profile
    finally:
        if isinstance(data, LocalFile):
            data.close()


def source_of(m: Measures) -> tuple[int, ...] | None:
    """What identifies the bytes an analysis read (Profile.source): a cache checks it against the file
    on disk before it answers with the analysis."""
    return m.analysis.profile.source


def read_path(path: str, progress: Callable[[int, int], None] | None = None) -> Profile:
    """The `Profile` of a file named by its path (local, or remote through TensorBoard's file-system
    layer), read by the format that claims its name, else the one its first bytes look like."""
    data = read_bytes(path)
    try:
        fmt = formats.for_file(path) or formats.detect(head(data, 64))
        if fmt is None:
            raise ProfileReadError(
                path, f"not a profile: neither its name nor its bytes are those of {formats.described()}"
            )
        return fmt.read(data, path, formats.host_name(path), progress, None, None)
    finally:
        if isinstance(data, LocalFile):
            data.close()


def _context() -> Any:
    """Processes started from a fork server that has imported the reader (a fork of the server itself
    would copy its threads and memory). The fork server is started here, with an import path of its
    own (settings.import_path_of): the package's folder, not the caller's working directory."""
    import multiprocessing  # only where files are read or analysed apart: not by one file's command
    from multiprocessing import forkserver

    with _lock:
        global _ctx
        if _ctx is None:
            _ctx = multiprocessing.get_context("forkserver")
            # the readers, which the formats import when they first read; numpy.ma: np.median imports it
            _ctx.set_forkserver_preload(["tb_gpu_advisor.report.engine", *formats.reader_modules(), "numpy.ma"])
        with import_path_of(_package_folder()):
            forkserver.ensure_running()  # started now (or again, after it died) with that path
        return _ctx


def _package_folder() -> str | None:
    """The folder that holds this package, where a Python interpreter would not find it by itself (a
    checkout, an editable install); None where it is installed in site-packages."""
    import site
    import sysconfig

    folder = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    installed = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(site.getsitepackages())
    return None if any(os.path.realpath(folder) == os.path.realpath(p) for p in installed) else folder


class WorkerUnavailable(Exception):
    """A worker process could not start (its imports failed, the system gave no process): the work
    is done in the caller's process instead, and said so once."""


WORKER_START_S = 120.0  # a worker not ready after this (its imports) is taken for one that cannot start
RETRY_WORKERS_S = 60.0  # after a worker could not start, none is tried again for this long
_unavailable: tuple[float, str] | None = None  # (when, why) the last worker could not start


def _worker_failed(why: str) -> WorkerUnavailable:
    global _unavailable
    first = _unavailable is None
    _unavailable = (time.monotonic(), why)
    if first:
        log.warning("worker processes could not start (%s); the files are analysed in this process instead", why)
    return WorkerUnavailable(why)


def _do(conn: Any, work: str, f: HostFile, options: Options | None, max_bytes: int | None) -> tuple:
    """In a process apart: the Profile (`work` "read") or the report ("report"), or the error, as the
    message to send back; reading progress is sent meanwhile as ("progress", done, total), a few
    times a second."""
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.2 or done >= total:
            last[0] = now
            conn.send(("progress", done, total))

    try:
        if work == "read":
            return ("done", read_file(f, progress, max_bytes))
        m, report = analyse_file(f, options, progress, max_bytes)
        return ("done", report, source_of(m))
    except ProfileReadError as e:
        return ("error", e)
    except Exception as e:  # noqa: BLE001  a bug: re-raised in the parent as one (no traceback crosses)
        return ("error", AnalysisFailed(type(e).__name__, str(e)[:200]))


def _serve(conn: Any, threads: int) -> None:
    """A worker process: the files sent to it, one after the other, until it is sent None."""
    if threads:
        use_threads(threads)  # parallel.threads(): no more than the cores allow
    conn.send(("ready",))
    while True:
        try:
            job = conn.recv()
        except EOFError:  # the parent is gone
            return
        if job is None:
            return
        conn.send(_do(conn, *job))


class WorkerProcess:
    """A process, started from the fork server, that reads or analyses the files it is given one
    after the other (a process per file would pay the start of one, about 0.1 s of first calls and
    imports, per file: most of a small rank's time). It is started on first use, and stopped after a
    file of more than RECYCLE_BYTES (its memory goes back to the system with it), after a crash
    (the next file gets a new one) and by `close`."""

    RECYCLE_BYTES = 64 << 20

    def __init__(self, threads: int = 0, name: str = "gpu_advisor_worker"):
        self.threads, self.name = threads, name
        self._process: Any = None  # a multiprocessing Process of the fork-server context
        self._conn: Any = None
        self.source: tuple[int, ...] | None = None  # what identifies the bytes of the last file done (source_of)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def run(
        self,
        work: str,
        f: HostFile,
        options: Options | None = None,
        max_bytes: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        timeout_s: float = READ_TIMEOUT_S,
    ) -> Any:
        """The Profile ("read") or the report ("report") of `f`. Raises ProfileReadError, also when the
        process dies (a crash, out of memory, killed) or takes over `timeout_s` (then it is killed);
        AnalysisFailed for a bug; WorkerUnavailable when no process can start (the caller does the work)."""
        if self._process is None:
            self._start()
        assert self._conn is not None
        doing = "reading the trace" if work == "read" else "analysing the file"
        deadline = time.monotonic() + timeout_s
        try:
            self._conn.send((work, f, options, max_bytes))
            while True:
                if not self._conn.poll(max(0.0, deadline - time.monotonic())):
                    self.close(kill=True)
                    raise ProfileReadError(f.path, f"{doing} took over {timeout_s:.0f} s; given up")
                message = self._conn.recv()
                if message[0] != "progress":
                    break
                if progress is not None:
                    progress(message[1], message[2])
        except (EOFError, OSError):
            self.close(kill=True)
            raise ProfileReadError(
                f.path, f"the process {doing} stopped (out of memory, or killed) before it was done"
            ) from None
        if f.size > self.RECYCLE_BYTES:
            self.close()
        if message[0] == "done":
            self.source = message[2] if len(message) > 2 else getattr(message[1], "source", None)
            return message[1]
        raise message[1]

    def _start(self) -> None:
        """The process started and ready; raises WorkerUnavailable when it cannot start."""
        if _unavailable is not None and time.monotonic() - _unavailable[0] < RETRY_WORKERS_S:
            raise WorkerUnavailable(_unavailable[1])
        try:
            ctx = _context()
            self._conn, theirs = ctx.Pipe(duplex=True)
            process = ctx.Process(target=_serve, args=(theirs, self.threads), name=self.name, daemon=True)
            self._process = process
            process.start()
            theirs.close()
            if not self._conn.poll(WORKER_START_S):
                raise _worker_failed(f"not ready after {WORKER_START_S:.0f} s")
            if self._conn.recv() != ("ready",):
                raise _worker_failed("it answered something else than ready")
        except (OSError, EOFError, ValueError, RuntimeError) as e:
            self.close(kill=True)
            raise _worker_failed("it stopped while starting" if isinstance(e, EOFError) else str(e)[:200]) from None
        except WorkerUnavailable:
            self.close(kill=True)
            raise

    def close(self, kill: bool = False) -> None:
        p, conn = self._process, self._conn
        self._process = self._conn = None
        if p is None or conn is None:
            return
        if not kill:
            try:
                conn.send(None)
                p.join(5.0)
            except OSError:
                pass
        conn.close()
        if p.pid is None:  # never started
            return
        if p.is_alive():
            p.kill()
        p.join()


def read_apart(f: HostFile, max_bytes: int | None = None, timeout_s: float = READ_TIMEOUT_S) -> Profile:
    """A PyTorch trace's `Profile`, read in a process of its own: parsing JSON holds the interpreter
    lock for seconds (orjson does not release it), which in the server's process would hold up every
    request, a cached report's too. The Profile comes back pickled (its columns are NumPy arrays); the
    process exits after the one trace, its memory with it. Raises ProfileReadError, also when the
    reading process dies (out of memory) or takes over `timeout_s` (then it is killed)."""
    worker = WorkerProcess(name=f"gpu_advisor_read {f.host}"[:80])
    try:
        return worker.run("read", f, None, max_bytes, None, timeout_s)
    finally:
        worker.close()


def report_apart(
    f: HostFile,
    options: Options | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int | None = None,
    timeout_s: float = READ_TIMEOUT_S,
    worker: WorkerProcess | None = None,
) -> dict:
    """One file's report, read and analysed in another process (`worker`, else one of its own): only
    the report (tens of kB) comes back; the tables stay there. Raises as WorkerProcess.run does."""
    if worker is not None:
        return worker.run("report", f, options, max_bytes, progress, timeout_s)
    own = WorkerProcess(name=f"gpu_advisor_report {f.host}"[:80])
    try:
        return own.run("report", f, options, max_bytes, progress, timeout_s)
    finally:
        own.close()


def unreadable_report(f: HostFile, error: str, failure: str = UNREADABLE) -> dict:
    """The report of a file that could not be read (or analysed): its error and no checks."""
    return report_json(f.run, f.host, None, [], [error], failure)


def failure_message(e: Exception) -> str:
    """One line for an analysis that raised something other than ProfileReadError (a bug)."""
    kind, text = (e.kind, e.text) if isinstance(e, AnalysisFailed) else (type(e).__name__, str(e)[:200])
    return f"the analysis failed ({kind}: {text}); please report it"


def advise(
    f: HostFile,
    options: Options | None = None,
    progress: Callable[[int, int], None] | None = None,
    prefetched: Prefetched | None = None,
    max_bytes: int | None = None,
    worker: WorkerProcess | None = None,
) -> dict:
    """The report of one run and host; it never raises. An unreadable file gives a report with its
    error and no checks; so does a failed analysis, marked as such, so that one bad run does not
    hide the others. With a `worker`, analysed in that process (report_apart)."""
    try:
        if worker is not None:
            try:
                return report_apart(f, options, progress, max_bytes, worker=worker)
            except WorkerUnavailable:  # said once (_worker_failed); analysed here instead
                pass
        return analyse_file(f, options, progress, max_bytes, prefetched)[1]
    except ProfileReadError as e:
        return unreadable_report(f, str(e))
    except Exception as e:  # noqa: BLE001  reported for this run only
        log.debug("analysis of %s failed", f.path, exc_info=True)
        return unreadable_report(f, f"{f.path}: {failure_message(e)}", ANALYSIS_FAILED)
