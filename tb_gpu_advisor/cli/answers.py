"""`evidence` (a finding's windows and events) and `whatif` (the step re-timed with a fix): questions
about one analysed host, answered as text or JSON."""

from __future__ import annotations

import argparse

from tb_gpu_advisor.cli.common import RUN_HELP, answer_one, one_host
from tb_gpu_advisor.graph.changes import CHANGES
from tb_gpu_advisor.serve.questions import DEFAULT_EVENTS


def cmd_evidence(args: argparse.Namespace) -> int:
    """A finding's evidence windows, the events in them and the source frames that ran them."""
    from tb_gpu_advisor.present.evidence import evidence_lines
    from tb_gpu_advisor.serve.questions import evidence_answer

    f = one_host(args.logdir, args.run, args.host, "a finding's evidence")
    return answer_one(f, lambda m, r: evidence_answer(m, r, args.finding, args.limit), args.format, evidence_lines)


def cmd_whatif(args: argparse.Namespace) -> int:
    """The step without the profiler and with a change applied (docs/whatif.md)."""
    from tb_gpu_advisor.serve.questions import check_change, whatif_answer

    check_change(args.change)  # a wrong change before reading
    f = one_host(args.logdir, args.run, args.host, "a what-if")

    def text(doc: dict) -> list[str]:
        if doc.get("withheld"):  # the simulated step is shown, but no saving is claimed from it
            saving = f"no saving stated: {doc['withheld']}"
        else:
            saving = (
                f"{doc['saving_ms']:.2f} ms a step less "
                f"(range {doc['saving_low_ms']:.2f} to {doc['saving_high_ms']:.2f} ms)"
            )
        return [
            f"{doc['run']} {doc['host']}: {doc['change']}",
            f"  {doc['sentence']} (without the profiler): {saving}",
            f"  model: {doc['basis']}",
        ]

    return answer_one(f, lambda m, r: whatif_answer(m, r, args.change), args.format, text)


def add(sub: argparse._SubParsersAction) -> None:
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
