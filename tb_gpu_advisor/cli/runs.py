"""`runs` (what a logdir holds) and `job` (a run's ranks side by side)."""

from __future__ import annotations

import argparse

from tb_gpu_advisor.cli.common import EXIT_OK, RUN_HELP, keep_freed_memory, reports_of, write_json
from tb_gpu_advisor.formats.discovery import HostFile
from tb_gpu_advisor.serve.questions import DEFAULT_JOB_RANKS
from tb_gpu_advisor.serve.selection import select


def cmd_runs(args: argparse.Namespace) -> int:
    """What is in a logdir: runs, their hosts, file sizes; nothing is read but the listing. With
    --analyse, each run's worst finding, step time and largest saving (every file analysed)."""
    from tb_gpu_advisor.present import render

    files = select(args.logdir, None, None)
    if args.analyse:
        from tb_gpu_advisor.serve.questions import runs_answer, runs_lines

        keep_freed_memory()
        doc = runs_answer(reports_of(files))
        if args.json:
            write_json(doc)
        else:
            print(render.terminal_safe("\n".join(runs_lines(doc))))
        return EXIT_OK
    by_run: dict[str, list[HostFile]] = {}
    for f in files:
        by_run.setdefault(f.run, []).append(f)
    if args.json:
        write_json(
            {
                "runs": [
                    {"run": r, "hosts": [{"host": f.host, "bytes": f.size, "mtime": f.mtime} for f in fs]}
                    for r, fs in by_run.items()
                ]
            }
        )
        return EXIT_OK
    for r, fs in by_run.items():
        hosts = ", ".join(f"{render.name_safe(f.host)} ({f.size / 1e6:.2f} MB)" for f in fs)
        print(render.terminal_safe(f"{render.name_safe(r)}  {hosts}"))
    return EXIT_OK


def cmd_job(args: argparse.Namespace) -> int:
    """A run as a job: its ranks side by side in the picked profiling cycle, the straggler, the job
    checks."""
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.serve.questions import job_answer, job_files

    files = job_files(args.logdir, args.run)
    keep_freed_memory()
    doc = job_answer(reports_of(files), args.run, args.cycle, args.limit)
    if args.format == "json":
        write_json(doc)
    else:
        print(render.terminal_safe("\n".join(render.runs_summary([doc]))))
        if len(doc["ranks"]) < doc["ranks_captured"]:
            print(f"({len(doc['ranks'])} of {doc['ranks_captured']} ranks listed: stragglers and outliers first)")
    return EXIT_OK


def add(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("runs", help="list the runs and hosts under a logdir (nothing is analysed)")
    r.add_argument("logdir")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.add_argument(
        "--analyse",
        "--analyze",
        action="store_true",
        help="analyse every file: each run's worst finding, step time, largest saving and job (what the overview shows)",
    )
    r.set_defaults(func=cmd_runs)

    j = sub.add_parser("job", help="a run as a job: its ranks side by side, the straggler, the job checks")
    j.add_argument("logdir", help="a logdir, a run folder at any depth, or one profile file")
    j.add_argument("--run", required=True, help=RUN_HELP + "; a run folder with several sessions is one job")
    j.add_argument("--cycle", type=int, metavar="N", help="the profiling cycle to compare (0 the first, -1 the last)")
    j.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_JOB_RANKS,
        help="ranks listed, stragglers and outliers first (default: %(default)s)",
    )
    j.add_argument("--format", choices=("text", "json"), default="text")
    j.set_defaults(func=cmd_job)
