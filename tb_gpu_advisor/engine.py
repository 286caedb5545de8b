"""The facade the CLI and the plugin share: one host file in, one report out."""

from __future__ import annotations

import logging
import multiprocessing
import threading
from typing import Callable

from tb_gpu_advisor.analysis import Analysis, analyse
from tb_gpu_advisor.checks import Options, run_checks
from tb_gpu_advisor.discovery import PYTORCH_TRACE, HostFile, read_bytes
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.job import rank_measures
from tb_gpu_advisor.pytorch_trace import MAX_INFLATED, read_pytorch_trace_bytes
from tb_gpu_advisor.report import ANALYSIS_FAILED, NOT_APPLICABLE, UNREADABLE, clean, report_json
from tb_gpu_advisor.tables import link_findings
from tb_gpu_advisor.xplane.reader import read_profile_bytes
from tb_gpu_advisor.xplane.scan import Prefetched

log = logging.getLogger(__name__)

READ_TIMEOUT_S = 600.0  # a PyTorch trace still being read after this is given up (read_apart)
_ctx = None
_lock = threading.Lock()


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
    link_findings(a, report)
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


def _read_child(conn, f: HostFile, max_bytes: int | None) -> None:
    """In the reading process: the Profile, or the error, sent back."""
    result: tuple[bool, object]
    try:
        result = (True, read_file(f, None, max_bytes))
    except ProfileReadError as e:
        result = (False, e)
    except Exception as e:  # noqa: BLE001  a bug: re-raised in the server as one (no traceback crosses)
        result = (False, RuntimeError(f"reading failed: {type(e).__name__}"))
    conn.send(result)
    conn.close()


def read_apart(f: HostFile, max_bytes: int | None = None, timeout_s: float = READ_TIMEOUT_S):
    """A PyTorch trace's `Profile`, read in a process of its own: parsing JSON holds the interpreter
    lock for seconds (orjson does not release it), which in the server's process would hold up every
    request, a cached report's too. The Profile comes back pickled (its columns are NumPy arrays); the
    process exits after the one trace, its memory with it. Raises ProfileReadError, also when the
    reading process dies (out of memory) or takes over `timeout_s` (then it is killed)."""
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_read_child, args=(send, f, max_bytes), name="gpu_advisor_read", daemon=True)
    p.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            raise ProfileReadError(f.path, f"reading the trace took over {timeout_s:.0f} s; given up")
        ok, value = receive.recv()
    except EOFError:
        raise ProfileReadError(f.path, "the process reading the trace stopped (out of memory?)") from None
    finally:
        receive.close()
        if p.is_alive():
            p.kill()
        p.join()
    if ok:
        return value
    raise value


def unreadable_report(f: HostFile, error: str, failure: str = UNREADABLE) -> dict:
    """The report of a file that could not be read (or analysed): its error and no checks."""
    return report_json(f.run, f.host, None, [], [error], failure)


def failure_message(e: Exception) -> str:
    """One line for an analysis that raised something other than ProfileReadError (a bug)."""
    return f"the analysis failed ({type(e).__name__}: {str(e)[:200]}); please report it"


def advise(
    f: HostFile,
    options: Options | None = None,
    progress: Callable[[int, int], None] | None = None,
    prefetched: Prefetched | None = None,
) -> dict:
    """The report of one run and host; it never raises. An unreadable file gives a report with its
    error and no checks; so does a failed analysis, marked as such, so that one bad run does not
    hide the others."""
    try:
        return analyse_file(f, options, progress, prefetched=prefetched)[1]
    except ProfileReadError as e:
        return unreadable_report(f, str(e))
    except Exception as e:  # noqa: BLE001  reported for this run only
        log.debug("analysis of %s failed", f.path, exc_info=True)
        return unreadable_report(f, f"{f.path}: {failure_message(e)}", ANALYSIS_FAILED)
