"""The facade the CLI and the plugin share: one host file in, one report out."""

from __future__ import annotations

from typing import Callable

from tb_gpu_advisor.analysis import Analysis, analyse
from tb_gpu_advisor.checks import Options, run_checks
from tb_gpu_advisor.discovery import HostFile, read_bytes
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.report import report_json
from tb_gpu_advisor.xplane.reader import read_profile_bytes


def analyse_file(
    f: HostFile,
    options: Options | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_bytes: int | None = None,
) -> tuple[Analysis, dict]:
    """Read, analyse and check one host file: its analysis and its report. Raises ProfileReadError."""
    a = analyse(read_profile_bytes(read_bytes(f.path, max_bytes), f.path, f.host, progress))
    findings, errors = run_checks(a, options)
    return a, report_json(f.run, f.host, a.summary(), findings, errors)


def unreadable_report(f: HostFile, error: str) -> dict:
    """The report of a file that could not be read: its error and no checks."""
    return report_json(f.run, f.host, None, [], [error])


def advise(f: HostFile, options: Options | None = None, progress: Callable[[int, int], None] | None = None) -> dict:
    """The report of one run and host. An unreadable file gives a report with its error and no
    checks; it never raises."""
    try:
        return analyse_file(f, options, progress)[1]
    except ProfileReadError as e:
        return unreadable_report(f, str(e))
