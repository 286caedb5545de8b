"""`diff`: a run (or a job) against the one before a change, and the CI gate on regressions."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, cast

from tb_gpu_advisor.cli.common import EXIT_FAILED, EXIT_FINDINGS, EXIT_OK, RUN_HELP, analysed, write_json
from tb_gpu_advisor.serve.selection import UsageError, pick

if TYPE_CHECKING:
    from tb_gpu_advisor.report.diff_doc import Diff, JobDiff


def cmd_diff(args: argparse.Namespace) -> int:
    from tb_gpu_advisor.checks import Options
    from tb_gpu_advisor.job.diff import job_regressions
    from tb_gpu_advisor.present import render, render_diff
    from tb_gpu_advisor.report.compare import regressions
    from tb_gpu_advisor.report.engine import failure_message
    from tb_gpu_advisor.serve.questions import diff_answer

    if args.fail_on_regression is not None and not args.fail_on_regression >= 0:
        raise UsageError("--fail-on-regression must be a percentage, 0 or more")
    base_files = pick(args.base, args.run, args.host, "before")
    new_files = pick(args.new, args.new_run or args.run, args.new_host or args.host, "after")
    options = Options()
    paths = (args.base, args.new)  # as the user typed them: two run folders are told apart by their names
    try:
        d = diff_answer(base_files, new_files, lambda f: analysed(f, options), args.cycle, options, args.all)
        if "median" in d:  # jobs of several ranks or profiling cycles (job/diff.py)
            job = cast("JobDiff", d)
            errors = job["errors"]
            text = {"markdown": render_diff.job_diff_markdown, "text": render_diff.job_diff_text}.get(args.format)
            out = text(job, paths) if text else None
            gate = job_regressions(job, args.fail_on_regression) if args.fail_on_regression is not None else []
        else:
            one = cast("Diff", d)
            errors = []
            if args.format == "markdown":
                out = render_diff.diff_markdown(one, paths)
            else:
                out = render_diff.diff_text(one, paths=paths) if args.format == "text" else None
            gate = regressions(one, args.fail_on_regression) if args.fail_on_regression is not None else []
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001  a bug (reading, comparing or rendering): one line, its own exit status
        print(render.terminal_safe(f"error: {failure_message(e)}"), file=sys.stderr)
        return EXIT_FAILED
    for message in errors:
        print(render.terminal_safe(f"error: {message}"), file=sys.stderr)
    if out is None:
        write_json(dict(d))
    else:
        print(render.terminal_safe(out))
    for line in gate:
        print(render.terminal_safe(f"regression: {line}"), file=sys.stderr)
    return EXIT_FINDINGS if gate else EXIT_OK


def add(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("diff", help="compare two runs: what got better, what got worse, by how much")
    d.add_argument("base", metavar="before", help="the run before the change: a logdir, a run folder or a profile file")
    d.add_argument("new", metavar="after", help="the run after the change: a logdir, a run folder or a profile file")
    d.add_argument("--run", help="the base run (and the new one, without --new-run); " + RUN_HELP)
    d.add_argument("--host", help="the base host (and the new one, without --new-host)")
    d.add_argument("--new-run", help="the new run, when it is named differently")
    d.add_argument("--new-host", help="the new host, when it is named differently")
    d.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    d.add_argument(
        "--all",
        action="store_true",
        help="list every check, the unchanged ones too (they are counted otherwise)",
    )
    d.add_argument(
        "--cycle",
        type=int,
        metavar="N",
        help="jobs: the profiling cycle to compare on both sides (default: the latest complete one)",
    )
    d.add_argument(
        "--fail-on-regression",
        "--fail-on",
        dest="fail_on_regression",
        type=float,
        metavar="PCT",
        help="exit 1 when the step is slower with the whole interval of its change (on the verdict's basis) above "
        "+PCT%% of the base's step, or, unless the step is faster, a check's own time grew beyond the noise by more "
        "than PCT%% of the base's step (a check exposed by another change never fails it)",
    )
    d.set_defaults(func=cmd_diff)
