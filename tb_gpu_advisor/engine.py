"""The facade the CLI and the plugin share: one host file in, one report out."""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from typing import Callable

from tb_gpu_advisor.analysis import Analysis, analyse
from tb_gpu_advisor.checks import Options, run_checks
from tb_gpu_advisor.discovery import PYTORCH_TRACE, HostFile, read_bytes
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.job import rank_measures
from tb_gpu_advisor.pytorch_trace import MAX_INFLATED, read_pytorch_trace_bytes
from tb_gpu_advisor.report import ANALYSIS_FAILED, NOT_APPLICABLE, UNREADABLE, clean, report_json
from tb_gpu_advisor.xplane.reader import read_profile_bytes
from tb_gpu_advisor.xplane.scan import Prefetched

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
) -> tuple[Analysis, dict]:
    """Read, analyse and check one host file: its analysis and its report. Raises ProfileReadError.
    `apart`: a PyTorch trace is read in another process (read_apart), as the plugin does."""
    profile = read_apart(f, max_bytes) if apart and f.kind == PYTORCH_TRACE else None
    a = analyse(profile if profile is not None else read_file(f, progress, max_bytes, prefetched))
    findings, errors = run_checks(a, options)
    summary = a.summary()
    # the 16-bit share is judged only where the mixed-precision check is: not on a GPU without
    # Tensor Cores, nor in a profile without matmul/convolution kernels
    if any(x.id == "precision.mixed-off" and x.status == NOT_APPLICABLE for x in findings):
        summary["headline"]["judged"]["fp16_compute_pct"] = None
    report = report_json(f.run, f.host, summary, findings, errors)
    report["rank_measures"] = clean(rank_measures(a, f))
    return a, report


def read_file(
    f: HostFile,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int | None = None,
    prefetched: Prefetched | None = None,
):
    """The file's `Profile`, by the reader of its kind (XSpace or PyTorch trace). `prefetched`: its
    bytes already read and their scan started (scan.prefetch)."""
    taken = prefetched.take() if prefetched is not None and prefetched.path == f.path else None
    if taken is not None:
        return read_profile_bytes(taken[0], f.path, f.host, progress, taken[1])
    data = read_bytes(f.path, max_bytes)
    if f.kind == PYTORCH_TRACE:
        return read_pytorch_trace_bytes(data, f.path, f.host, progress, limit=max_bytes or MAX_INFLATED)
    return read_profile_bytes(data, f.path, f.host, progress)


def _context():
    """Processes started from a fork server that has imported the reader (a fork of the server itself
    would copy its threads and memory)."""
    with _lock:
        global _ctx
        if _ctx is None:
            _ctx = multiprocessing.get_context("forkserver")
            _ctx.set_forkserver_preload(["tb_gpu_advisor.engine"])
        return _ctx


def _child(conn, work: str, f: HostFile, options: Options | None, max_bytes: int | None, threads: int) -> None:
    """In the process apart: the Profile (`work` "read") or the report ("report") sent back, or the
    error; reading progress is sent along as ("progress", done, total), a few times a second."""
    if threads:
        os.environ["TB_GPU_ADVISOR_THREADS"] = str(threads)  # parallel.threads(): no more than the cores allow
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.2 or done >= total:
            last[0] = now
            conn.send(("progress", done, total))

    result: tuple
    try:
        if work == "read":
            result = ("done", read_file(f, progress, max_bytes))
        else:
            result = ("done", analyse_file(f, options, progress, max_bytes)[1])
    except ProfileReadError as e:
        result = ("error", e)
    except Exception as e:  # noqa: BLE001  a bug: re-raised in the parent as one (no traceback crosses)
        result = ("error", AnalysisFailed(type(e).__name__, str(e)[:200]))
    conn.send(result)
    conn.close()


def _apart(
    work: str,
    f: HostFile,
    options: Options | None,
    max_bytes: int | None,
    timeout_s: float,
    progress: Callable[[int, int], None] | None,
    threads: int = 0,
):
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    args = (send, work, f, options, max_bytes, threads)
    p = ctx.Process(target=_child, args=args, name=f"gpu_advisor_{work} {f.host}"[:80], daemon=True)
    p.start()
    send.close()
    doing = "reading the trace" if work == "read" else "analysing the file"
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            if not receive.poll(max(0.0, deadline - time.monotonic())):
                raise ProfileReadError(f.path, f"{doing} took over {timeout_s:.0f} s; given up")
            message = receive.recv()
            if message[0] != "progress":
                break
            if progress is not None:
                progress(message[1], message[2])
    except EOFError:
        raise ProfileReadError(
            f.path, f"the process {doing} stopped (out of memory, or killed) before it was done"
        ) from None
    finally:
        receive.close()
        if p.is_alive():
            p.kill()
        p.join()
    if message[0] == "done":
        return message[1]
    raise message[1]


def read_apart(f: HostFile, max_bytes: int | None = None, timeout_s: float = READ_TIMEOUT_S):
    """A PyTorch trace's `Profile`, read in a process of its own: parsing JSON holds the interpreter
    lock for seconds (orjson does not release it), which in the server's process would hold up every
    request, a cached report's too. The Profile comes back pickled (its columns are NumPy arrays); the
    process exits after the one trace, its memory with it. Raises ProfileReadError, also when the
    reading process dies (out of memory) or takes over `timeout_s` (then it is killed)."""
    return _apart("read", f, None, max_bytes, timeout_s, None)


def report_apart(
    f: HostFile,
    options: Options | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int | None = None,
    timeout_s: float = READ_TIMEOUT_S,
    threads: int = 0,
) -> dict:
    """One file's report, read and analysed in a process of its own (`ranks.py` runs several): only the
    report (tens of kB) comes back, the tables die with the process. Raises ProfileReadError, also when
    the process dies (a crash, out of memory, killed) or takes over `timeout_s`; AnalysisFailed for a bug.
    `threads`: TB_GPU_ADVISOR_THREADS in that process."""
    return _apart("report", f, options, max_bytes, timeout_s, progress, threads)


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
    apart: bool = False,
    max_bytes: int | None = None,
    threads: int = 0,
) -> dict:
    """The report of one run and host; it never raises. An unreadable file gives a report with its
    error and no checks; so does a failed analysis, marked as such, so that one bad run does not
    hide the others. `apart`: analysed in a process of its own (report_apart)."""
    try:
        if apart:
            return report_apart(f, options, progress, max_bytes, threads=threads)
        return analyse_file(f, options, progress, max_bytes, prefetched)[1]
    except ProfileReadError as e:
        return unreadable_report(f, str(e))
    except Exception as e:  # noqa: BLE001  reported for this run only
        log.debug("analysis of %s failed", f.path, exc_info=True)
        return unreadable_report(f, f"{f.path}: {failure_message(e)}", ANALYSIS_FAILED)
