"""The `tb-gpu-advisor` command."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Callable, Iterator

from tb_gpu_advisor import __version__
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.common.parallel import processes_setting
from tb_gpu_advisor.common.settings import settings, single_threaded_blas
from tb_gpu_advisor.formats.discovery import HostFile, prefetch
from tb_gpu_advisor.graph.changes import CHANGES
from tb_gpu_advisor.serve.questions import DEFAULT_ANSWER_KB, DEFAULT_EVENTS, DEFAULT_JOB_RANKS, analyze_answer
from tb_gpu_advisor.serve.selection import UsageError, listing, pick, select

if TYPE_CHECKING:
    from tb_gpu_advisor.checks import Options
    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.model.analysis import Analysis

# The analysis (NumPy and the checks, about 0.1 s to import) is imported where a command needs it:
# `analyze` first starts reading its first file on another thread (xplane/scan.py), so the two overlap.

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_FAILED = 0, 1, 2, 3


def _progress(label: str) -> Callable[[int, int], None] | None:
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

    return analyse(read_file(f, progress=_progress(f"{f.run} {f.host}")))


def summary_text(f: HostFile, a: Analysis) -> str:
    from tb_gpu_advisor.common.units import fmt_pct
    from tb_gpu_advisor.model.steps import CATEGORIES
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.present.render import kernel_figures

    lines = [f"run {f.run}  host {f.host}  ({f.size / 1e6:.2f} MB, {a.profile.event_count} events)"]
    if a.profile.devices:
        for d in a.profile.devices:
            lines.append(f"  {render.device_line(d.to_json())}")
    else:
        lines.append("  no GPU in this profile (host-side capture)")
    s = a.steps.summary()
    marker = f' ("{s["marker"]}")' if s["marker"] else ""
    lines.append(
        f"  steps: {s['count']} from {s['source']}{marker}; mean {s['mean_ms']:.3f} ms, "
        f"stdev {s['stdev_ms']:.3f}, min {s['min_ms']:.3f}, max {s['max_ms']:.3f}"
    )
    h = a.headline()
    lines.append(
        f"  device busy {fmt_pct(h['device_busy_pct'])} of step time | op time on device "
        f"{fmt_pct(h['device_op_time_pct'])} | 16-bit compute {fmt_pct(h['fp16_compute_pct'])} "
        f"({h['fp16_kernels']} of {h['kernels']} kernels)"
    )
    for g in h["per_gpu"] if len(h["per_gpu"]) > 1 else []:
        lines.append(
            f"    GPU {g['device_id']}: busy {fmt_pct(g['device_busy_pct'])}, "
            f"16-bit {fmt_pct(g['fp16_compute_pct'])}, {g['kernels']} kernels"
        )
    for g in h["per_gpu"]:
        lines.append(f"    GPU {g['device_id']}: {kernel_figures(g, a.profile.framework)}")
    b = a.breakdown_ms()
    lines.append("  per step (ms): " + ", ".join(f"{c.replace('_', ' ')} {b[c]:.3f}" for c in CATEGORIES))
    return "\n".join(lines)


def cmd_summary(args: argparse.Namespace) -> int:
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.report.engine import failure_message

    files = select(args.logdir, args.run, args.host)
    reports, status = [], EXIT_OK
    for f in files:
        try:
            a = load(f)
        except ProfileReadError as e:
            print(render.terminal_safe(f"error: {e}"), file=sys.stderr)
            status = max(status, EXIT_ERROR)
            continue
        except Exception as e:  # noqa: BLE001  a bug on one run: the others are still summarised
            print(render.terminal_safe(f"error: {f.path}: {failure_message(e)}"), file=sys.stderr)
            status = EXIT_FAILED
            continue
        if args.json:
            reports.append({"run": f.run, "host": f.host, **a.summary(), "errors": []})
        else:
            print(render.terminal_safe(summary_text(f, a)))
    if args.json:
        json.dump({"reports": reports}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return status


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


def cmd_analyze(args: argparse.Namespace) -> int:
    sets = parse_sets(args.set or [])
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

    options = Options(sets, params=args.params, bandwidth_gbps=args.bandwidth)
    try:
        options.validate()
    except ValueError as e:
        raise UsageError(str(e)) from None
    if apart:
        reports = analyse_ranks(files, options, args.dask)
    else:
        reports = [advise(f, options, progress=_progress(f"{f.run} {f.host}"), prefetched=first) for f in files]
    status = EXIT_OK
    for r in reports:
        if r["failure"]:  # the file could not be read, or the analysis failed on it
            from tb_gpu_advisor.present.render import terminal_safe

            for message in r["errors"]:
                print(terminal_safe(f"error: {message}"), file=sys.stderr)
            status = max(status, EXIT_FAILED if r["failure"] == ANALYSIS_FAILED else EXIT_ERROR)
    doc = analyze_answer(reports, args.cycle, args.rank, options, args.findings_only)
    reports, runs, rows = doc["reports"], doc["runs"], doc["overview"]
    if args.format == "json":
        write_json(doc)
        return _fail_on(status, reports, args.fail_on)
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
    return _fail_on(status, reports, args.fail_on)


def _fail_on(status: int, reports: list[dict], fail_on: str | None) -> int:
    """The exit status: EXIT_FINDINGS where the files were analysed and a check is at `fail_on` or worse."""
    from tb_gpu_advisor.checks.findings import at_least

    if status == EXIT_OK and fail_on:
        if any(at_least(c["status"], fail_on) for r in reports for c in r["checks"]):
            return EXIT_FINDINGS
    return status


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
    return [advise(f, options, progress=_progress(f"{f.run} {f.host}")) for f in files]


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


def analysed(f: HostFile, options: Options | None = None) -> tuple[Measures, dict]:
    from tb_gpu_advisor.report.engine import analyse_file

    try:
        return analyse_file(f, options, _progress(f"{f.run} {f.host}"))
    except ProfileReadError as e:
        raise UsageError(str(e)) from None


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
    jobs = len(base_files) > 1 or len(new_files) > 1  # jobs of several ranks or profiling cycles (job/diff.py)
    try:
        d = diff_answer(base_files, new_files, lambda f: analysed(f, options), args.cycle, options)
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001  a bug: one line, its own exit status
        print(render.terminal_safe(f"error: {failure_message(e)}"), file=sys.stderr)
        return EXIT_FAILED
    for message in d.get("errors", []) if jobs else []:
        print(render.terminal_safe(f"error: {message}"), file=sys.stderr)
    paths = (args.base, args.new)  # as the user typed them: two run folders are told apart by their names
    if args.format == "json":
        write_json(d)
    elif args.format == "markdown":
        md = render_diff.job_diff_markdown(d, paths) if jobs else render_diff.diff_markdown(d, paths)
        print(render.terminal_safe(md))
    else:
        print(render_diff.job_diff_text(d, paths) if jobs else render_diff.diff_text(d, paths=paths))
    if args.fail_on_regression is not None:
        found = (job_regressions if jobs else regressions)(d, args.fail_on_regression)
        for line in found:
            print(render.terminal_safe(f"regression: {line}"), file=sys.stderr)
        if found:
            return EXIT_FINDINGS
    return EXIT_OK


def cmd_checks(args: argparse.Namespace) -> int:
    from tb_gpu_advisor.checks import catalogue
    from tb_gpu_advisor.present import render

    cat = catalogue()
    if args.json or args.format == "json":
        write_json({"checks": cat})
    elif args.format == "markdown":
        print(render.catalogue_markdown(cat))
    else:
        print(render.catalogue_text(cat))
    return EXIT_OK


RUN_HELP = "a run as the Profile tab names it (<folder>/<session>), or a run folder with one session"


TABLE_TEXT_WIDTH = 60  # a text cell longer than this is cut (csv and json keep it whole)


def _cell(v: object, csv: bool = False) -> str:
    from tb_gpu_advisor.present import render

    if v is None:
        return "" if csv else "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}" if csv else f"{v:,.2f}".rstrip("0").rstrip(".")
    text = render.name_safe(str(v))  # names come from the profile: no control characters
    if csv and text[:1] in ("=", "+", "-", "@"):
        text = "'" + text  # not a formula in a spreadsheet
    if not csv and len(text) > TABLE_TEXT_WIDTH:  # cut in the middle: a kernel's distinctive end stays
        head = (TABLE_TEXT_WIDTH - 1) * 2 // 5
        text = text[:head] + "…" + text[len(text) - (TABLE_TEXT_WIDTH - 1 - head) :]
    return text


def table_lines(doc: dict) -> list[str]:
    """A table answer as aligned text: the columns people read (the full kernel name only in csv and json)."""
    cols = [c for c in doc["columns"] if c["key"] != "name" or doc["table"] != "kernels"]
    head = [c["label"] for c in cols]
    body = [[_cell(r.get(c["key"])) for c in cols] for r in doc["rows"]]
    width = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(x.rjust(w) if c["numeric"] else x.ljust(w) for x, w, c in zip(cells, width, cols)).rstrip()

    out = [line(head)] + [line(b) for b in body]
    shown = f"{len(doc['rows'])} of {doc['total']} rows"
    if doc["total"] != doc["all"]:
        shown += f", {doc['all']} before the filter"
    out.append(f"({shown}, by {doc['sort']} {doc['order']})")
    out += [f"note: {n}" for n in doc["notes"]]
    return out


class TableNames:
    """The tables' names for `table`'s choices, from the tables' registry, read when the command is
    parsed or its help shown: importing the tables at start would import NumPy and the analysis
    before `analyze` starts reading (see the top of this module)."""

    def _names(self) -> tuple[str, ...]:
        from tb_gpu_advisor.tables import names

        return names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()


def one_host(logdir: str, run: str | None, host: str | None, what: str) -> HostFile:
    """The one file a run and host name, for what is of one host (a table, a finding's evidence)."""
    files = select(logdir, run, host)
    if len(files) > 1:
        hosts = sorted({f"{f.run} {f.host}" for f in files})
        raise UsageError(f"{what} is of one host: name it with --run and --host" + listing("hosts", hosts))
    return files[0]


def cmd_table(args: argparse.Namespace) -> int:
    import csv

    from tb_gpu_advisor.measures import Measures
    from tb_gpu_advisor.present import render
    from tb_gpu_advisor.report.engine import failure_message
    from tb_gpu_advisor.serve.questions import table_answer

    f = one_host(args.logdir, args.run, args.host, "a table")
    try:
        from tb_gpu_advisor import tables

        tables.build_check(args.table, args.group, args.step)  # a wrong table or grouping before reading
        m = Measures(load(f))
        doc = table_answer(m, args.table, args.group, args.step, args.sort, args.order, args.limit, args.q, args.name)
    except tables.TableError as e:
        raise UsageError(str(e)) from None
    except ProfileReadError as e:
        print(render.terminal_safe(f"error: {e}"), file=sys.stderr)
        return EXIT_ERROR
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001  a bug: said in one line, not a traceback
        print(render.terminal_safe(f"error: {f.path}: {failure_message(e)}"), file=sys.stderr)
        return EXIT_FAILED
    if args.format == "json":
        write_json(doc)
    elif args.format == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        keys = [c["key"] for c in doc["columns"]]
        w.writerow(keys)
        for r in doc["rows"]:
            w.writerow([_cell(r.get(k), csv=True) for k in keys])
    else:
        print("\n".join(table_lines(doc)))
    return EXIT_OK


def _answer_one(
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


def cmd_evidence(args: argparse.Namespace) -> int:
    """A finding's evidence windows, the events in them and the source frames that ran them."""
    from tb_gpu_advisor.present.evidence import evidence_lines
    from tb_gpu_advisor.serve.questions import evidence_answer

    f = one_host(args.logdir, args.run, args.host, "a finding's evidence")
    return _answer_one(f, lambda m, r: evidence_answer(m, r, args.finding, args.limit), args.format, evidence_lines)


def cmd_whatif(args: argparse.Namespace) -> int:
    """The step without the profiler and with a change applied (docs/whatif.md)."""
    from tb_gpu_advisor.serve.questions import check_change, whatif_answer

    check_change(args.change)  # a wrong change before reading
    f = one_host(args.logdir, args.run, args.host, "a what-if")

    def text(doc: dict) -> list[str]:
        return [
            f"{doc['run']} {doc['host']}: {doc['change']}",
            f"  {doc['sentence']} (without the profiler): {doc['saving_ms']:.2f} ms a step less",
            f"  model: {doc['basis']}",
        ]

    return _answer_one(f, lambda m, r: whatif_answer(m, r, args.change), args.format, text)


def cmd_skill(args: argparse.Namespace) -> int:
    """The agent skill shipped with the package: how an agent uses the MCP server's tools."""
    from importlib import resources

    sys.stdout.write((resources.files("tb_gpu_advisor") / "skill" / "SKILL.md").read_text(encoding="utf-8"))
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """The MCP server for coding agents (serve/mcp.py), on stdio or, with --http, on 127.0.0.1."""
    from tb_gpu_advisor.serve import mcp

    return mcp.main(args.logdir, http_port=args.http, max_answer_kb=args.max_answer_kb)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tb-gpu-advisor", description="Check GPU profiles against the GPU performance guide."
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary", help="runs, hosts, GPUs, steps, breakdown and headline numbers")
    s.add_argument("logdir")
    s.add_argument("--run", help=RUN_HELP)
    s.add_argument("--host")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_summary)

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
    z.set_defaults(func=cmd_analyze)

    d = sub.add_parser("diff", help="compare two runs: what got better, what got worse, by how much")
    d.add_argument("base", metavar="before", help="the run before the change: a logdir, a run folder or a profile file")
    d.add_argument("new", metavar="after", help="the run after the change: a logdir, a run folder or a profile file")
    d.add_argument("--run", help="the base run (and the new one, without --new-run); " + RUN_HELP)
    d.add_argument("--host", help="the base host (and the new one, without --new-host)")
    d.add_argument("--new-run", help="the new run, when it is named differently")
    d.add_argument("--new-host", help="the new host, when it is named differently")
    d.add_argument("--format", choices=("text", "markdown", "json"), default="text")
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
        help="exit 1 when the mean step time grows by more than PCT percent beyond the noise (the whole 95%% "
        "interval of the change above +PCT%%), a check's saving grows by more than PCT percent, or a check fires "
        "anew beyond the noise",
    )
    d.set_defaults(func=cmd_diff)

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

    e = sub.add_parser(
        "evidence", help="a finding's evidence windows, the events in them and the source frames that ran them"
    )
    e.add_argument("logdir", help="a logdir, a run folder at any depth, or one profile file")
    e.add_argument("--run", help=RUN_HELP)
    e.add_argument("--host")
    e.add_argument("--finding", required=True, metavar="CHECK", help="the finding's check id, e.g. input.bound")
    e.add_argument("--limit", type=int, default=DEFAULT_EVENTS, help="events listed per window (default: %(default)s)")
    e.add_argument("--format", choices=("text", "json"), default="text")
    e.set_defaults(func=cmd_evidence)

    t = sub.add_parser("table", help="a table of one host (kernels, ops, memory, ...: `table --help` lists them)")
    t.add_argument("table", metavar="TABLE", choices=TableNames(), help="one of: %(choices)s")
    t.add_argument("logdir", help="a logdir, a run folder at any depth, or one profile file")
    t.add_argument("--run", help=RUN_HELP)
    t.add_argument("--host")
    t.add_argument("--group", help="how rows are grouped, one of the table's groupings (its first by default)")
    t.add_argument(
        "--step", type=int, metavar="N", help="only the step numbered N, as the report numbers steps (kernels)"
    )
    t.add_argument("--sort", metavar="COLUMN", help="the column to sort by (default: the table's main time)")
    t.add_argument("--order", choices=("asc", "desc"), help="default: desc for numbers, asc for names")
    t.add_argument("--limit", type=int, default=50, help="rows shown, at most 1000 (default: %(default)s)")
    t.add_argument("-q", "--filter", dest="q", metavar="TEXT", help="only rows whose name contains TEXT")
    t.add_argument(
        "--name",
        action="append",
        metavar="NAME",
        help="only the rows named exactly NAME (repeatable): a finding's rows",
    )
    t.add_argument("--format", choices=("text", "csv", "json"), default="text")
    t.set_defaults(func=cmd_table)

    w = sub.add_parser("whatif", help="the step without the profiler and with a change applied (docs/whatif.md)")
    w.add_argument("logdir", help="a logdir, a run folder at any depth, or one profile file")
    w.add_argument("--run", help=RUN_HELP)
    w.add_argument("--host")
    w.add_argument(
        "--change",
        required=True,
        metavar="CHANGE",
        help=f"one of {', '.join(CHANGES)}, or several joined by + (e.g. bf16+compile)",
    )
    w.add_argument("--format", choices=("text", "json"), default="text")
    w.set_defaults(func=cmd_whatif)

    c = sub.add_parser("checks", help="list every check with its thresholds")
    c.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    c.add_argument("--json", action="store_true", help="same as --format json")
    c.set_defaults(func=cmd_checks)

    m = sub.add_parser(
        "mcp",
        help="serve the advice to coding agents (Model Context Protocol, stdio): pip install 'tb_gpu_advisor[mcp]'",
    )
    m.add_argument("logdir", help="the logdir the server reads, and nothing outside it")
    m.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT instead of stdio")
    m.add_argument(
        "--max-answer-kb",
        type=float,
        default=DEFAULT_ANSWER_KB,
        help="the largest answer a tool gives, kB (default: %(default)s); a larger one is refused with what to narrow",
    )
    m.set_defaults(func=cmd_mcp)

    k = sub.add_parser(
        "skill", help="print the agent skill (SKILL.md): how a coding agent uses the mcp server's tools, in order"
    )
    k.set_defaults(func=cmd_skill)
    return ap


def main(argv: list[str] | None = None) -> int:
    if "numpy" not in sys.modules:
        # No command does linear algebra: NumPy's OpenBLAS need not start a worker thread, which spun
        # beside the scan and the analysis (5% of the samples of `perf record` on the 80 MB file).
        single_threaded_blas()
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # output piped into `head` and the like
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def console() -> None:
    """The `tb-gpu-advisor` command: `main`, then out at once. Everything is written and flushed by
    then; tearing down an analysis's arrays and objects only costs time (about 0.1 s on the 80 MB
    benchmark file: the command timed with and without leaving this way, three times each)."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # output piped into `head` and the like
        pass
    os._exit(code)


if __name__ == "__main__":
    console()
