"""The `tb-gpu-advisor` command: a module per command (or two akin), each adding its parser (`add`)."""

from __future__ import annotations

import argparse
import os
import sys

from tb_gpu_advisor import __version__
from tb_gpu_advisor.cli import analyze, answers, catalogue, diff, runs, summary, table
from tb_gpu_advisor.cli.common import EXIT_ERROR, EXIT_FAILED, EXIT_FINDINGS, EXIT_OK, keep_freed_memory
from tb_gpu_advisor.cli.table import TableNames, table_lines
from tb_gpu_advisor.common.settings import single_threaded_blas
from tb_gpu_advisor.serve.selection import UsageError

__all__ = ["EXIT_ERROR", "EXIT_FAILED", "EXIT_FINDINGS", "EXIT_OK", "TableNames", "keep_freed_memory", "main"]
__all__ += ["console", "build_parser", "table_lines"]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tb-gpu-advisor", description="Check GPU profiles against the GPU performance guide."
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    # in the order `--help` lists them
    summary.add(sub)
    analyze.add(sub)
    diff.add(sub)
    runs.add(sub)
    answers.add(sub)
    table.add(sub)
    catalogue.add(sub)
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
