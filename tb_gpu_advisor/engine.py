"""The facade the CLI and the plugin share: one host file in, one report out."""
from __future__ import annotations

from typing import Callable

from tb_gpu_advisor.analysis import analyse
from tb_gpu_advisor.checks import Options, run_checks
from tb_gpu_advisor.discovery import HostFile
from tb_gpu_advisor.errors import ProfileReadError
from tb_gpu_advisor.report import report_json
from tb_gpu_advisor.xplane.reader import read_profile


def advise(f: HostFile, options: Options | None = None, progress: Callable[[int, int], None] | None = None) -> dict:
    """The report of one run and host. An unreadable file gives a report with its error and no
    checks; it never raises."""
    try:
        profile = read_profile(f.path, f.host, progress=progress)
    except ProfileReadError as e:
        return report_json(f.run, f.host, None, [], [str(e)])
    a = analyse(profile)
    findings, errors = run_checks(a, options)
    return report_json(f.run, f.host, a.summary(), findings, errors)
