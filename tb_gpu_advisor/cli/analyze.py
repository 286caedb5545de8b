"""`analyze`: every run and host walked through the checklist, as text, markdown or JSON."""

from __future__ import annotations

import argparse
import sys

from tb_gpu_advisor.cli.common import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_FINDINGS,
    EXIT_OK,
    RUN_HELP,
    analyse_ranks,
    keep_freed_memory,
    parse_sets,
    progress_line,
    write_json,
)
from tb_gpu_advisor.common.parallel import processes_setting
from tb_gpu_advisor.formats.discovery import prefetch
from tb_gpu_advisor.serve.questions import BRIEF_PROBLEMS, analyze_answer, brief_answer, page_reports
from tb_gpu_advisor.serve.selection import UsageError, select


def cmd_analyze(args: argparse.Namespace) -> int:
    sets = parse_sets(args.set or [])
    if args.brief and args.format != "text":
        raise UsageError("--brief is JSON already: leave out --format")
    if args.params is not None and args.params <= 0:
        raise UsageError("--params must be a positive number of parameters")
    if args.bandwidth is not None and args.bandwidth <= 0:
        raise UsageError("--bandwidth must be a positive number of GB/s")
    files = select(args.logdir, args.run, args.host)
    keep_freed_memory()
    # several ranks and hosts: in worker processes (job/ranks.py) unless TB_GPU_ADVISOR_PROCESSES=0
    apart = args.dask is not None or (len(files) > 1 and processes_setting() != 0)
    first = prefetch(files[0]) if files and not apart else None  # read and scanned while the analysis is imported
    from tb_gpu_advisor.checks import Options
    from tb_gpu_advisor.report import ANALYSIS_FAILED
    from tb_gpu_advisor.report.engine import advise

    options = Options(sets, params=args.params, bandwidth_gbps=args.bandwidth, step_time_tag=args.step_time_tag or None)
    try:
        options.validate()
    except ValueError as e:
        raise UsageError(str(e)) from None
    if apart:
        reports = analyse_ranks(files, options, args.dask)
    else:
        reports = [advise(f, options, progress=progress_line(f"{f.run} {f.host}"), prefetched=first) for f in files]
    status = EXIT_OK
    for r in reports:
        if r["failure"]:  # the file could not be read, or the analysis failed on it
            from tb_gpu_advisor.present.render import terminal_safe

            for message in r["errors"]:
                print(terminal_safe(f"error: {message}"), file=sys.stderr)
            status = max(status, EXIT_FAILED if r["failure"] == ANALYSIS_FAILED else EXIT_ERROR)
    if args.brief:  # the ranked problems and their fixes first, as JSON (the MCP server's analyze)
        doc = analyze_answer(reports, args.cycle, args.rank, options)
        write_json(brief_answer(doc, args.offset or 0, args.limit or BRIEF_PROBLEMS, not args.findings_only))
        return fail_on(status, doc["reports"], args.fail_on)
    doc = analyze_answer(reports, args.cycle, args.rank, options, args.findings_only)
    reports, runs, rows = doc["reports"], doc["runs"], doc["overview"]
    if args.format == "json":
        paged = args.offset is not None or args.limit is not None
        write_json(page_reports(doc, args.offset or 0, args.limit) if paged else doc)
        return fail_on(status, reports, args.fail_on)
    if args.offset is not None or args.limit is not None:
        raise UsageError("--offset and --limit page the JSON (--format json or --brief)")
    from tb_gpu_advisor.present import render  # text and markdown only: JSON is written without it

    waits = render.straggler_waits(runs)
    if args.format == "markdown":
        head = [render.overview_markdown(rows, runs, args.logdir)] if len(reports) > 1 else []
        body = [render.markdown(r, waits.get((r["run"], r["host"])), args.logdir) for r in reports]
        print(render.terminal_safe("\n\n".join(head + body)))
    else:
        # the summary first: every run and host, worst first, and the comparison of hosts
        if len(reports) > 1:
            print(render.terminal_safe("\n".join(render.overview_lines(rows))))
            if runs:
                print(render.terminal_safe("\n" + "\n".join(render.runs_summary(runs))))
            print()
        print("\n\n".join(render.text(r, waiting=waits.get((r["run"], r["host"]))) for r in reports))
    return fail_on(status, reports, args.fail_on)


def fail_on(status: int, reports: list[dict], fail_on: str | None) -> int:
    """The exit status: EXIT_FINDINGS where the files were analysed and a check is at `fail_on` or worse."""
    from tb_gpu_advisor.checks.findings import at_least

    if status == EXIT_OK and fail_on:
        if any(at_least(c["status"], fail_on) for r in reports for c in r["checks"]):
            return EXIT_FINDINGS
    return status


def add(sub: argparse._SubParsersAction) -> None:
    z = sub.add_parser("analyze", help="walk each run and host through the checklist")
    z.add_argument("logdir", help="a logdir, a run folder at any depth, or one profile file")
    z.add_argument("--run", help=RUN_HELP)
    z.add_argument("--host")
    z.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    z.add_argument("--fail-on", choices=("warning", "critical"), help="exit 1 when a finding is at or above this level")
    z.add_argument("--set", action="append", metavar="CHECK.THRESHOLD=VALUE", help="override a threshold (repeatable)")
    z.add_argument("--params", type=int, help="the model's parameter count (for the all-reduce estimate)")
    z.add_argument("--bandwidth", type=float, metavar="GBPS", help="interconnect bandwidth, GB/s (all-reduce estimate)")
    z.add_argument(
        "--step-time-tag",
        default="step_time_ms",
        metavar="TAG",
        help="the TensorBoard scalar (ms) a run logs its step time in, beside its profile: the step without "
        "the profiler is scaled to meet it (default step_time_ms; '' reads none)",
    )
    z.add_argument(
        "--cycle",
        type=int,
        metavar="N",
        help="the profiling cycle the job view compares ranks in (0 the first, -1 the last; "
        "default: the latest in which every rank has a complete step)",
    )
    z.add_argument(
        "--rank",
        type=int,
        metavar="N",
        help="report only this rank's files (PyTorch distributedInfo.rank); the job summary still compares every rank",
    )
    z.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="analyse the files on this Dask cluster (tcp://host:8786; pip install 'tb_gpu_advisor[dask]'); "
        "its workers read the files themselves. Default: worker processes here (TB_GPU_ADVISOR_PROCESSES)",
    )
    z.add_argument(
        "--findings-only",
        action="store_true",
        help="leave out the checks that pass or do not apply: only the findings (critical, warning, info)",
    )
    z.add_argument(
        "--brief",
        action="store_true",
        help="JSON for an agent (the MCP server's analyze): the hosts in a line each and the problems ranked, "
        "each with its saving and fix, a page of --limit (default 5) from --offset; with the ids of the checks "
        "that pass unless --findings-only",
    )
    z.add_argument(
        "--offset", type=int, metavar="N", help="with --brief: the first problem; with JSON: the first report"
    )
    z.add_argument("--limit", type=int, metavar="N", help="with --brief: problems on the page; with JSON: reports")
    z.set_defaults(func=cmd_analyze)
