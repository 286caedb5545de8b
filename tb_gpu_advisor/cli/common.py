"""What the commands share: exit statuses, the progress line, writing JSON, the files a command names,
and analysing them here or in worker processes."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Callable

from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.parallel import processes_setting
from tb_gpu_advisor.common.settings import settings
from tb_gpu_advisor.formats.discovery import HostFile
from tb_gpu_advisor.serve.selection import UsageError, listing, select

if TYPE_CHECKING:
    from tb_gpu_advisor.checks import Options
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import Analysis

# The analysis (NumPy and the checks, about 0.1 s to import) is imported where a command needs it:
# `analyze` first starts reading its first file on another thread (xplane/scan.py), so the two overlap.

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_FAILED = 0, 1, 2, 3

RUN_HELP = "a run as the Profile tab names it (<folder>/<session>), or a run folder with one session"


def progress_line(label: str) -> Callable[[int, int], None] | None:
    """A reading-progress line on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    last = [-1]

    def report(done: int, total: int) -> None:
        pct = 100 * done // max(total, 1)
        if pct != last[0]:
            last[0] = pct
            end = "\n" if done >= total else ""
            sys.stderr.write(f"\rreading {label}: {pct}%{end}")
            sys.stderr.flush()

    return report


def load(f: HostFile) -> Analysis:
    from tb_gpu_advisor.model.analysis import analyse
    from tb_gpu_advisor.report.engine import read_file

    return analyse(read_file(f, progress=progress_line(f"{f.run} {f.host}")))


def parse_sets(items: list[str]) -> dict[str, float]:
    """`CHECK.THRESHOLD=VALUE` (check ids contain dots: the threshold is after the last one)."""
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or "." not in key:
            raise UsageError(f"--set {item!r}: expected CHECK.THRESHOLD=VALUE, e.g. input.bound.warning=10")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--set {item!r}: {value!r} is not a number") from None
    return out


def write_json(doc: dict) -> None:
    """Indented for a person at a terminal; compact (and several times faster to write) otherwise.
    One string, not json.dump, which encodes in pure Python chunk by chunk (the report of the 80 MB
    benchmark file: 30 ms against 8 ms)."""
    sys.stdout.write(json.dumps(doc, indent=2 if sys.stdout.isatty() else None) + "\n")


def keep_freed_memory() -> None:
    """The command lives for one analysis: glibc's malloc is told to keep the memory it frees for reuse
    (no trimming, no separate mappings up to 32 MB) instead of returning it and faulting it in again:
    the analysis of the 80 MB benchmark file faults 16,300 pages instead of 27,500. Not done in the
    plugin, whose memory goes back to the system after each analysis."""
    if not sys.platform.startswith("linux") or not settings().tune_malloc:
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: glibc's largest
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    mallopt(-2, 64 << 20)  # M_TOP_PAD
    # M_ARENA_MAX: one arena for every thread. The analysis and the checks run on threads, and each
    # thread's arena kept what it freed where no other thread could reuse it: the 265 MB benchmark
    # file peaked at 1,000 MB with them, 770 MB without
    mallopt(-8, 1)


def analyse_ranks(files: list[HostFile], options: Options | None, dask: str | None) -> list[dict]:
    """The files' reports, made in worker processes or on the Dask cluster at `dask` (job/ranks.py), with a
    progress line in ranks and bytes on a terminal."""
    from tb_gpu_advisor.job.ranks import ClusterError, Progress, advise_all

    shown = [0.0]

    def progress(p: Progress) -> None:
        now = time.monotonic()
        if now - shown[0] >= 0.25 or p.done_ranks == p.ranks:
            shown[0] = now
            sys.stderr.write(f"\ranalysing {p.line()}" + ("\n" if p.done_ranks == p.ranks else ""))
            sys.stderr.flush()

    try:
        return advise_all(files, options, dask=dask, on_progress=progress if sys.stderr.isatty() else None)
    except ClusterError as e:
        raise UsageError(str(e)) from None


def reports_of(files: list[HostFile], options: Options | None = None) -> list[dict]:
    """The files' reports, as `analyze` makes them: several in worker processes (job/ranks.py) unless
    TB_GPU_ADVISOR_PROCESSES=0, else here."""
    from tb_gpu_advisor.report.engine import advise

    if len(files) > 1 and processes_setting() != 0:
        return analyse_ranks(files, options, None)
    return [advise(f, options, progress=progress_line(f"{f.run} {f.host}")) for f in files]


def analysed(f: HostFile, options: Options | None = None) -> tuple[Measures, dict]:
    from tb_gpu_advisor.report.engine import analyse_file

    try:
        return analyse_file(f, options, progress_line(f"{f.run} {f.host}"))
    except ProfileReadError as e:
        raise UsageError(str(e)) from None


def one_host(logdir: str, run: str | None, host: str | None, what: str) -> HostFile:
    """The one file a run and host name, for what is of one host (a table, a finding's evidence)."""
    files = select(logdir, run, host)
    if len(files) > 1:
        hosts = sorted({f"{f.run} {f.host}" for f in files})
        raise UsageError(f"{what} is of one host: name it with --run and --host" + listing("hosts", hosts))
    return files[0]


def answer_one(
    f: HostFile, answer: Callable[[Measures, dict], dict], fmt: str, text: Callable[[dict], list[str]]
) -> int:
    """`answer` of one analysed host file, written as JSON or as `text`'s lines; a bug in it said in
    one line, not a traceback."""
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.report.engine import failure_message

    try:
        doc = answer(*analysed(f))
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001  a bug: said in one line, not a traceback
        print(render.terminal_safe(f"error: {f.path}: {failure_message(e)}"), file=sys.stderr)
        return EXIT_FAILED
    if fmt == "json":
        write_json(doc)
    else:
        print(render.terminal_safe("\n".join(text(doc))))
    return EXIT_OK
